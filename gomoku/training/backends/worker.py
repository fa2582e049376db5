"""One self-play worker, the same in a worker process, a Ray actor or (its parts) the trainer.

``Worker(spec)`` is built once from a ``WorkerSpec``: a copy of the net (``WorkerNet``: torch, or
onnxruntime on a CPU) and a ``SelfPlayRunner`` whose unfinished games go on from task to task.
``load`` takes a version of the weights (once), ``run`` answers a ``SelfPlayTask`` or an ``EvalTask``.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from gomoku.training.backends.messages import EvalResult, Result, SelfPlayTask, Task, Weights, WorkerSpec
from gomoku.training.evaluation import EvalTask, play_eval_games
from gomoku.training.selfplay import SelfPlayRunner
from nets.onnx_export import onnx_available

def resolve_inference(selfplay) -> tuple[str, str]:
    """(device, inference) that a ``SelfPlaySection``'s "auto" values stand for on this machine."""
    import torch

    device = selfplay.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    inference = selfplay.inference
    if inference == "auto":
        inference = "server" if device == "cuda" else "worker"
    return device, inference

class WorkerNet:
    """A worker's copy of the net: new weights in, an evaluator out (torch, or on a CPU onnxruntime,
    which runs this small net about twice as fast on a core; the weights are exported on each load)."""

    def __init__(self, config, device: str = "cpu"):
        from nets import NetEvaluator, build_net

        self.net = build_net(config.net_config())
        self.torch_evaluator = NetEvaluator(self.net, device)
        runtime = config.selfplay.runtime
        self.onnx = device == "cpu" and (runtime == "onnx" or (runtime == "auto" and onnx_available()))
        self.evaluator = self.torch_evaluator

    def load(self, weights: dict):
        self.torch_evaluator.load_state_dict(weights)
        if self.onnx:  # exported in memory: no file to leave behind when the worker is killed
            from nets.onnx_evaluator import OnnxEvaluator
            from nets.onnx_export import onnx_bytes

            self.evaluator = OnnxEvaluator(onnx_bytes(self.net), threads=1)
        return self.evaluator

class Worker:
    """Self-play and evaluation games with a net of its own (see the module docstring). With
    ``spec.remote`` (an ``InferenceServer``'s queues), self-play leaves are evaluated there and
    only evaluation games use the local net, so self-play needs no weights."""

    def __init__(self, spec: WorkerSpec):
        self.config = spec.config
        self.net = WorkerNet(spec.config, "cpu" if spec.remote else spec.device)
        self.remote = None
        if spec.remote is not None:
            from gomoku.training.backends.inference import RemoteEvaluator

            self.remote = RemoteEvaluator(spec.worker_id, *spec.remote)
        self.runner = SelfPlayRunner(self.net.evaluator, spec.config.board, spec.config.search,
                                     spec.config.selfplay.parallel_games, np.random.default_rng(spec.worker_id))
        self.version = -1  # of the weights loaded

    def load(self, weights: Weights) -> None:
        if weights.version != self.version:
            self.net.load(weights.state)
            self.version = weights.version

    def run(self, task: Task, on_game: Callable[[], None] | None = None) -> Result:
        if isinstance(task, SelfPlayTask):
            self.runner.search.evaluator = self.remote if self.remote is not None else self.net.evaluator
            self.runner.set_rng(np.random.default_rng(task.seed))
            return self.runner.play(task.min_games, on_game=None if on_game is None else lambda g: on_game())
        if isinstance(task, EvalTask):
            return EvalResult(tuple(play_eval_games(self.net.evaluator, self.config, task, on_game=on_game)))
        raise TypeError(f"not a task: {task!r}")
