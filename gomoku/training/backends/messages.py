"""What the trainer and its workers say to each other: frozen records, the same for every backend.

The trainer builds each worker once from a ``WorkerSpec``, publishes the net's ``Weights`` once
per version, and sends tasks: ``SelfPlayTask`` (finish at least ``min_games`` games) answered by
a ``SelfPlayResult`` (gomoku.training.selfplay), ``EvalTask`` (the evaluation games of the given
indices against one opponent, gomoku.training.evaluation) answered by an ``EvalResult``. A worker
process also reports ``Progress`` (games finished) and a ``Failure`` (an exception in a task) on
its result pipe.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gomoku.training.config import Config
from gomoku.training.evaluation import EvalGame, EvalTask
from gomoku.training.selfplay import SelfPlayResult


class WorkerError(RuntimeError):
    """A self-play worker failed, or kept dying."""


@dataclass(frozen=True)
class WorkerSpec:
    """What a worker is built from, once: the run's config, its id (its first games' seed) and its
    net's device. ``remote``: the queues of an ``InferenceServer`` that evaluates its self-play leaves."""

    config: Config
    worker_id: int
    device: str = "cpu"
    remote: tuple | None = None


@dataclass(frozen=True)
class Weights:
    """The net's weights (CPU tensors by name), numbered: a worker loads a version once."""

    version: int
    state: dict[str, Any]


@dataclass(frozen=True)
class SelfPlayTask:
    """Play until at least ``min_games`` games have finished; the games' moves are drawn from ``seed``."""

    min_games: int
    seed: int


Task = SelfPlayTask | EvalTask


@dataclass(frozen=True)
class EvalResult:
    games: tuple[EvalGame, ...] = ()

    def __add__(self, other: "EvalResult") -> "EvalResult":
        return EvalResult(tuple(sorted(self.games + other.games, key=lambda g: g.index)))


Result = SelfPlayResult | EvalResult


def empty_result(task: Task) -> Result:
    return SelfPlayResult() if isinstance(task, SelfPlayTask) else EvalResult()


@dataclass(frozen=True)
class Progress:
    """A worker finished ``games`` games of its current task."""

    games: int


@dataclass(frozen=True)
class Failure:
    """A worker's task raised; ``error`` is its repr."""

    error: str
