"""Policy-value networks in PyTorch: the model, its evaluator for the search, training, checkpoints.

``nets.loading.load_evaluator`` is the one way from a model file to an evaluator (torch or onnxruntime).
Never imports gomoku/ or mcts/ code beyond what it is given; the search never imports this.
"""

from nets.checkpoint import CheckpointError, load_checkpoint, load_net, on_cpu, save_checkpoint, save_model
from nets.evaluator import NetEvaluator
from nets.model import NetConfig, build_net, count_parameters, default_device, flush_subnormals
from nets.training import StepStats, Trainer, UpdateStats, adjust_lr_multiplier, kl_adaptive_update

__all__ = ["CheckpointError", "NetConfig", "NetEvaluator", "StepStats", "Trainer", "UpdateStats",
           "adjust_lr_multiplier", "build_net", "count_parameters", "default_device", "flush_subnormals",
           "kl_adaptive_update", "load_checkpoint", "load_net", "on_cpu", "save_checkpoint", "save_model"]
