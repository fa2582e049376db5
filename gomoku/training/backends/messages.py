"""What the trainer and its workers say to each other: frozen records, the same for every backend.

The trainer builds each worker once from a ``WorkerSpec``, publishes the net's ``Weights`` once
per version, and sends tasks: ``SelfPlayTask`` (finish at least ``min_games`` games) answered by
a ``SelfPlayResult``, ``EvalTask`` (the evaluation games of the given indices against one
opponent) answered by an ``EvalResult``. A worker process also reports ``Progress`` (games
finished) and a ``Failure`` (an exception in a task) on its result pipe.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gomoku.training.config import Config


class WorkerError(RuntimeError):
    """A self-play worker failed, or kept dying."""


@dataclass(frozen=True)
class SelfPlayGame:
    moves: tuple[int, ...]
    winner: int  # 1, 2 or -1 (draw)
    states: np.ndarray  # float32 [T, 4, H, W], the recorded positions (every move's, unless
    #                     playout cap randomization records only the full searches)
    probs: np.ndarray  # float32 [T, H*W], the search's visit distribution there
    outcomes: np.ndarray  # float32 [T], +1 / -1 / 0 for the player to move there


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


@dataclass(frozen=True)
class EvalTask:
    """Evaluation games ``indices`` of the model against ``opponent`` (a player spec); game ``i``'s
    seeds derive from ``seed`` and ``i`` only, so it does not matter which worker plays it."""

    indices: tuple[int, ...]
    opponent: str
    seed: int


Task = SelfPlayTask | EvalTask


@dataclass(frozen=True)
class SelfPlayResult:
    """Finished games, and the moves made meanwhile in all games (unfinished ones included)."""

    games: tuple[SelfPlayGame, ...] = ()
    moves: int = 0

    def __add__(self, other: "SelfPlayResult") -> "SelfPlayResult":
        return SelfPlayResult(self.games + other.games, self.moves + other.moves)


@dataclass(frozen=True)
class EvalGame:
    index: int
    result: int  # for the model: 1 win, 0 draw, -1 loss


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
