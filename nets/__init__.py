"""Policy-value networks in PyTorch: the model, its evaluator for the search, training, checkpoints.

``nets.loading.load_evaluator`` is the one way from a model file to an evaluator (torch or onnxruntime).
Never imports gomoku/ or mcts/ code beyond what it is given; the search never imports this.

Importing the package imports no torch: each name below loads its module on first use, so that
``nets.config`` (``NetConfig``, the nets' bounds) serves a run's config without torch.
"""

import importlib

_HOMES = {
    "nets.checkpoint": ("CheckpointError", "load_checkpoint", "load_net", "on_cpu", "save_checkpoint", "save_model"),
    "nets.config": ("NetConfig",),
    "nets.evaluator": ("NetEvaluator",),
    "nets.model": ("build_net", "count_parameters", "default_device", "flush_subnormals"),
    "nets.training": ("StepStats", "Trainer", "UpdateStats", "adjust_lr_multiplier", "kl_adaptive_update"),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str):
    if name not in _MODULE_OF:
        raise AttributeError(f"module 'nets' has no attribute {name!r}")
    value = getattr(importlib.import_module(_MODULE_OF[name]), name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
