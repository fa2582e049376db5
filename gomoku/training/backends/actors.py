"""Who plays the games of a run: ``Actors``, one interface over three backends.

- ``InProcessActors`` (``selfplay.workers: 1``): one ``SelfPlayRunner`` in the trainer's process,
  on the trainer's own net.
- ``PoolActors`` over a ``WorkerPool`` (worker processes here, gomoku.training.backends.pool) or a
  ``RayPool`` (Ray actors, gomoku.training.backends.ray_backend): the games are shared out as typed tasks.

Each does three things: ``publish(weights)`` once per version of the net, ``self_play(games, rng)``
(at least ``games`` finished games, a ``SelfPlayResult``) and ``evaluate(opponent, games, seed)``
(an ``EvalResult``); ``make_actors`` builds the one the config asks for.
"""

from __future__ import annotations

import logging
import os
from dataclasses import replace
from pathlib import Path
from typing import Callable, Protocol

import numpy as np
import torch

from gomoku.training.backends.messages import EvalResult, SelfPlayTask, WorkerError
from gomoku.training.backends.worker import resolve_inference
from gomoku.training.config import Config
from gomoku.training.evaluation import EvalTask, play_eval_games
from gomoku.training.selfplay import SelfPlayResult, SelfPlayRunner
from nets import NetEvaluator, build_net, on_cpu

log = logging.getLogger(__name__)

OnGames = Callable[[int], None]  # games finished (negative: games to be played again)


WORKERS_PER_CORE = 2  # worker processes a CPU core at most: more only share the cores (each holds a net)


def resolve_workers(requested: int) -> int:
    """The worker processes ``selfplay.workers`` stands for here: one per CPU core for 0, and at
    most ``WORKERS_PER_CORE`` a core (64 on 2 cores are 4)."""
    cores = os.cpu_count() or 1
    return cores if requested <= 0 else min(requested, WORKERS_PER_CORE * cores)


def capped_note(requested: int) -> str:
    """Words for a ``selfplay.workers`` that ``resolve_workers`` lowered, else ""."""
    n = resolve_workers(requested)
    if requested <= n:
        return ""
    return f"selfplay.workers={requested} capped at {n}, {WORKERS_PER_CORE} per CPU core ({os.cpu_count() or 1} here)"


def draw_seed(rng: np.random.Generator) -> int:
    return int(rng.integers(2**31))


class Actors(Protocol):
    def publish(self, weights: dict) -> None:
        """The net's weights (by name) from now on: one call per version."""

    def self_play(self, games: int, rng: np.random.Generator, on_games: OnGames | None = None) -> SelfPlayResult:
        """At least ``games`` finished self-play games; their seeds are drawn from ``rng``."""

    def evaluate(self, opponent: str, games: int, seed: int, on_games: OnGames | None = None) -> EvalResult:
        """Evaluation games 0..``games``-1 of the model against ``opponent`` (a player spec)."""

    def close(self) -> None:
        """Stop the workers."""


class InProcessActors:
    """The trainer's process plays every game with the trainer's net itself (nothing to publish)."""

    def __init__(self, config: Config, net: torch.nn.Module, device: torch.device, rng: np.random.Generator):
        self.config = config
        self.evaluator = NetEvaluator(net, device)
        self.runner = SelfPlayRunner(self.evaluator, config.board, config.search, config.selfplay.parallel_games, rng)

    def publish(self, weights: dict) -> None:
        pass

    def self_play(self, games: int, rng: np.random.Generator, on_games: OnGames | None = None) -> SelfPlayResult:
        self.evaluator.net.eval()
        return self.runner.play(games, on_game=None if on_games is None else lambda g: on_games(1))

    def evaluate(self, opponent: str, games: int, seed: int, on_games: OnGames | None = None) -> EvalResult:
        task = EvalTask(tuple(range(games)), opponent, seed)
        return EvalResult(tuple(play_eval_games(self.evaluator, self.config, task, on_game=on_games)))

    def close(self) -> None:
        pass


def shares(games: int, workers: int) -> list[int]:
    """``games`` shared out over at most ``workers``, as evenly as can be, none given 0 games (a
    worker plays at least one game a task: 64 workers for 12 games played 78)."""
    used = min(games, workers)
    base, extra = divmod(games, used)
    return [base + (i < extra) for i in range(used)]


class PoolActors:
    """The games shared out over a pool's workers: self-play ``shares`` (one seed each), evaluation
    games ``i, i + n, ...`` on worker ``i``. With an inference server, ``serve_net`` is the server's net when it is a copy of the trainer's (kept up to date here)."""

    def __init__(self, pool, serve_net: torch.nn.Module | None = None):
        self.pool = pool
        self.serve_net = serve_net

    def publish(self, weights: dict) -> None:
        if self.serve_net is not None:
            self.serve_net.load_state_dict(weights)
        self.pool.publish(weights)

    def self_play(self, games: int, rng: np.random.Generator, on_games: OnGames | None = None) -> SelfPlayResult:
        if self.pool.server is not None:
            self.pool.server.evaluator.net.eval()
        answers = self.pool.run([SelfPlayTask(share, draw_seed(rng)) for share in shares(games, len(self.pool))],
                                on_progress=on_games)
        return sum(answers, SelfPlayResult())

    def evaluate(self, opponent: str, games: int, seed: int, on_games: OnGames | None = None) -> EvalResult:
        n = len(self.pool)
        chunks = [tuple(range(i, games, n)) for i in range(n)]
        tasks = [EvalTask(chunk, opponent, seed) for chunk in chunks if chunk]
        return sum(self.pool.run(tasks, on_progress=on_games), EvalResult())

    def close(self) -> None:
        self.pool.close()


def make_actors(config: Config, net: torch.nn.Module, device: torch.device, rng: np.random.Generator,
                run_dir: Path | None = None) -> Actors:
    """The actors ``selfplay.backend`` and ``selfplay.workers`` ask for, the weights of ``net`` published."""
    s = config.selfplay
    if s.backend == "ray":  # actors with their own nets, here or on a cluster
        try:
            from gomoku.training.backends.ray_backend import RayPool
        except ImportError as error:  # Ray is an optional extra
            raise WorkerError(str(error)) from None
        actors: Actors = PoolActors(RayPool(config, s.workers, s.ray_address, run_dir))
    elif (n := resolve_workers(s.workers)) > 1:
        from gomoku.training.backends.pool import WorkerPool

        if note := capped_note(s.workers):
            log.warning("%s: more would only share the cores", note)

        net_device, inference = resolve_inference(s)
        server, serve_net = None, None
        if inference == "server":  # one net for all workers' leaves: ours, or a copy on its device
            shared = torch.device(net_device) == device
            serve_net = None if shared else build_net(net.config)
            server = NetEvaluator(net if shared else serve_net, net_device)
            log.info("self-play: %d workers, their leaves evaluated here on %s", n, net_device)
        actors = PoolActors(WorkerPool(n, config, server), serve_net)
    else:
        actors = InProcessActors(config, net, device, rng)
    try:
        actors.publish(on_cpu(net.state_dict()))
    except BaseException:
        actors.close()
        raise
    return actors


def check_device(config: Config) -> None:
    """ValueError when the config asks for a device this machine does not have."""
    if config.selfplay.device == "cuda" and not torch.cuda.is_available():
        raise ValueError("selfplay.device: cuda, but CUDA is not available here (use cpu or auto: "
                         "--set selfplay.device=auto)")


def device_error(name: str) -> str | None:
    """Why ``--device name`` cannot run here, or None (train.py and bench.py check it up front)."""
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError) as error:
        return f"--device {name}: not a device ({error})"
    if device.type == "cuda":
        if not torch.cuda.is_available():
            why = "this torch is built without CUDA" if torch.version.cuda is None else "no CUDA GPU is visible"
            return f"--device {name}: CUDA is not available here ({why}); use --device cpu"
        if device.index is not None and device.index >= torch.cuda.device_count():
            return f"--device {name}: there are {torch.cuda.device_count()} CUDA device(s)"
    elif device.type == "mps":
        if not torch.backends.mps.is_available():
            return f"--device {name}: MPS is not available here; use --device cpu"
    elif device.type != "cpu":
        return f"--device {name}: expected cpu, cuda, cuda:N or mps"
    return None


def selfplay_description(config: Config, device: torch.device) -> str:
    """Where and how self-play runs, in words: workers, their nets' device and runtime."""
    s = config.selfplay
    if s.backend == "ray":
        where = f"the Ray cluster at {s.ray_address}" if s.ray_address else "a local Ray instance"
        count = f"{s.workers} Ray actors" if s.workers else "one Ray actor per CPU"
        return f"{count} on {where}, {s.parallel_games} games at once each"
    n = resolve_workers(s.workers)
    if note := capped_note(s.workers):
        return f"{selfplay_description(replace(config, selfplay=replace(s, workers=n)), device)} ({note})"
    if n == 1:
        return f"1 worker (this process), torch on {device}, {s.parallel_games} games at once"
    net_device, inference = resolve_inference(s)
    if inference == "server":
        return f"{n} worker processes, {s.parallel_games} games at once each, their leaves evaluated here on {net_device}"
    from nets.onnx_export import onnx_available

    onnx = net_device == "cpu" and (s.runtime == "onnx" or (s.runtime == "auto" and onnx_available()))
    return (f"{n} worker processes, {s.parallel_games} games at once each, nets on {net_device} "
            f"({'onnxruntime' if onnx else 'torch'})")
