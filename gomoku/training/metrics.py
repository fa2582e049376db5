"""One line of ``metrics.jsonl``: ``IterationRecord``, written by the pipeline, read back by the
plots and the ablation through the same class.

``to_json`` writes the fields that are set (training figures only after an iteration that
trained, ``eval`` only after one that evaluated); ``from_json`` reads a line of any version of
the file: missing fields stay None, unknown keys are kept in ``extra`` and written back as they were.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

METRICS = "metrics.jsonl"


@dataclass(frozen=True)
class TrainStats:
    """The KL-adaptive updates of one iteration (means over its updates; explained variances of
    the last one)."""

    lr_multiplier: float  # after the updates
    updates: int = 0
    loss: float | None = None
    policy_loss: float | None = None
    value_loss: float | None = None
    entropy: float | None = None
    kl: float | None = None
    epochs: float | None = None
    explained_var_old: float | None = None
    explained_var_new: float | None = None

    LOSSES = ("loss", "policy_loss", "value_loss")


@dataclass(frozen=True)
class IterationRecord:
    """One completed iteration (the JSON keys are the field names, in this order)."""

    iteration: int
    games: int  # self-play games of the run so far
    positions: int | None = None  # positions recorded by self-play so far (before augmentation)
    buffer: int | None = None  # samples in the replay buffer
    lr_multiplier: float | None = None
    mean_game_length: float | None = None
    first_player_wins: int | None = None
    second_player_wins: int | None = None
    draws: int | None = None
    selfplay_s: float | None = None
    train_s: float | None = None
    selfplay_positions_per_s: float | None = None  # moves made per second of self-play
    loss: float | None = None
    policy_loss: float | None = None
    value_loss: float | None = None
    entropy: float | None = None
    kl: float | None = None
    epochs: float | None = None
    explained_var_old: float | None = None
    explained_var_new: float | None = None
    updates: int | None = None
    eval: dict | list | None = None  # EvalReport.to_dict() (older runs: other shapes, kept as they are)
    eval_s: float | None = None
    wall_time: float | None = None  # the run's wall time at the end of the iteration, all sessions
    buffer_added: int | None = None  # samples this iteration added to the buffer (its shard's size)
    resumed: dict | None = None  # on the first record after a resume: from where, with what changes
    extra: dict[str, Any] = field(default_factory=dict)  # keys this class does not know

    def get(self, key: str, default: Any = None) -> Any:
        """The value of the field ``key`` (or of an unknown key kept in ``extra``), or ``default``."""
        if key != "extra" and key in self.__dataclass_fields__:
            value = getattr(self, key)
            return default if value is None else value
        return self.extra.get(key, default)

    def to_dict(self) -> dict:
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "extra"}
        return {**{k: v for k, v in data.items() if v is not None}, **self.extra}

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, data: dict) -> "IterationRecord":
        """The record of a JSON object; KeyError without ``iteration`` and ``games``."""
        names = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        known = {k: v for k, v in data.items() if k in names}
        for key in ("iteration", "games"):
            if key not in known:
                raise KeyError(key)
        return cls(**known, extra={k: v for k, v in data.items() if k not in names})

    @classmethod
    def from_json(cls, line: str | bytes) -> "IterationRecord":
        """ValueError when the line is not a JSON object with ``iteration`` and ``games``."""
        data = json.loads(line)
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        try:
            return cls.from_dict(data)
        except KeyError as missing:
            raise ValueError(f"no {missing}") from None


def read_records(path) -> list[IterationRecord]:
    """The records of a metrics file written by the pipeline (every line a record)."""
    with open(path, encoding="utf-8") as handle:
        return [IterationRecord.from_json(line) for line in handle if line.strip()]
