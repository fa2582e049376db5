"""One line of ``metrics.jsonl``: ``IterationRecord``, written by the pipeline, read back by the
plots and the ablation through the same class.

``to_json`` writes the fields that are set (training figures only after an iteration that
trained, ``eval`` only after one that evaluated); ``from_json`` reads a line of any version of
the file: missing fields stay None, unknown keys are kept in ``extra`` and written back as they were.
The iteration's ``TrainStats`` (its updates) are a field of the record and keys of the line.
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
    the last one). An iteration without updates has only the multiplier; a record read from an
    early run's line may lack any field."""

    lr_multiplier: float | None = None  # after the updates
    updates: int | None = None  # None: no update
    loss: float | None = None
    policy_loss: float | None = None
    value_loss: float | None = None
    entropy: float | None = None
    kl: float | None = None
    epochs: float | None = None
    explained_var_old: float | None = None
    explained_var_new: float | None = None

    LOSSES = ("loss", "policy_loss", "value_loss")


TRAIN_KEYS = tuple(f.name for f in dataclasses.fields(TrainStats))


@dataclass(frozen=True)
class IterationRecord:
    """One completed iteration. Its JSON object is flat: the keys are the field names, in this
    order, with those of ``train`` (``TrainStats``) in its place."""

    iteration: int
    games: int  # self-play games of the run so far
    positions: int | None = None  # positions recorded by self-play so far (before augmentation)
    buffer: int | None = None  # samples in the replay buffer
    train: TrainStats = field(default_factory=TrainStats)  # the iteration's updates
    mean_game_length: float | None = None
    first_player_wins: int | None = None
    second_player_wins: int | None = None
    draws: int | None = None
    selfplay_s: float | None = None
    train_s: float | None = None
    selfplay_positions_per_s: float | None = None  # moves made per second of self-play
    eval: dict | list | None = None  # EvalReport.to_dict() (older runs: other shapes, kept as they are)
    eval_s: float | None = None
    wall_time: float | None = None  # the run's wall time at the end of the iteration, all sessions
    buffer_added: int | None = None  # samples this iteration added to the buffer (its shard's size)
    resumed: dict | None = None  # on the first record after a resume: from where, with what changes
    extra: dict[str, Any] = field(default_factory=dict)  # keys this class does not know

    def get(self, key: str, default: Any = None) -> Any:
        """The value of the key ``key`` of the line (a field, one of ``train``'s or an unknown key
        kept in ``extra``), or ``default``."""
        if key in TRAIN_KEYS:
            value = getattr(self.train, key)
        elif key in RECORD_KEYS:
            value = getattr(self, key)
        else:
            return self.extra.get(key, default)
        return default if value is None else value

    def to_dict(self) -> dict:
        data = {}
        for f in dataclasses.fields(self):
            if f.name == "train":
                data.update({key: getattr(self.train, key) for key in TRAIN_KEYS})
            elif f.name != "extra":
                data[f.name] = getattr(self, f.name)
        return {**{k: v for k, v in data.items() if v is not None}, **self.extra}

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, data: dict) -> "IterationRecord":
        """The record of a JSON object; KeyError without ``iteration`` and ``games``."""
        for key in ("iteration", "games"):
            if key not in data:
                raise KeyError(key)
        train = TrainStats(**{k: v for k, v in data.items() if k in TRAIN_KEYS})
        return cls(**{k: v for k, v in data.items() if k in RECORD_KEYS}, train=train,
                   extra={k: v for k, v in data.items() if k not in RECORD_KEYS and k not in TRAIN_KEYS})

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


RECORD_KEYS = tuple(f.name for f in dataclasses.fields(IterationRecord) if f.name not in ("train", "extra"))


def read_records(path) -> list[IterationRecord]:
    """The records of a metrics file written by the pipeline (every line a record)."""
    with open(path, encoding="utf-8") as handle:
        return [IterationRecord.from_json(line) for line in handle if line.strip()]
