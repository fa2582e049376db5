"""Stand-ins shared by the tests: a search's parts from flat options, a deterministic evaluator,
a run's metrics lines and the scripts as modules."""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
from pathlib import Path
from types import ModuleType

import numpy as np

from gomoku.tactics import FreestyleRules, TacticsConfig, make_rules
from mcts import SearchConfig

TACTICS_KEYS = {f.name for f in dataclasses.fields(TacticsConfig)}


def parts(width: int, height: int, n_in_row: int, **options) -> tuple[FreestyleRules, SearchConfig]:
    """The rules and the search config of one flat set of options (the search's keys and the
    rules' forced_moves, vcf, ..., as a run's ``search`` section holds them), for
    ``BatchedMCTS(evaluator, *parts(...))``."""
    tactics = {key: value for key, value in options.items() if key in TACTICS_KEYS}
    search = {key: value for key, value in options.items() if key not in TACTICS_KEYS}
    return make_rules(width, height, n_in_row, TacticsConfig(**tactics)), SearchConfig(**search)


class HashEvaluator:
    """Priors (and, unless ``value`` is given, the value) drawn from a hash of the input planes:
    deterministic and position-dependent. Counts its calls and the positions it was given."""

    def __init__(self, value: float | None = None):
        self.value = value
        self.calls = 0
        self.positions = 0

    def evaluate_batch(self, planes, legal):
        self.calls += 1
        self.positions += len(planes)
        priors, values = [], []
        for p, ok in zip(planes, legal):
            rng = np.random.default_rng(int.from_bytes(np.packbits(p > 0).tobytes(), "little") % 2**32)
            prior = rng.random(ok.size) * ok
            priors.append(prior / prior.sum())
            values.append(rng.uniform(-1, 1) if self.value is None else self.value)
        return np.array(priors, dtype=np.float32), np.array(values)


class ConstantEvaluator:
    """Uniform priors, and a fixed value for the player to move (to check the sign convention; 0:
    every value sum stays 0 unless a virtual loss is left over). ``fail_at``: the call that raises."""

    def __init__(self, value: float, fail_at: int | None = None):
        self.value, self.fail_at = value, fail_at
        self.calls = 0

    def evaluate_batch(self, planes, legal):
        self.calls += 1
        if self.calls == self.fail_at:
            raise RuntimeError("the net failed")
        return legal / legal.sum(1, keepdims=True), np.full(len(planes), self.value)


def metrics_records(run: Path) -> list[dict]:
    """The lines of a run's metrics.jsonl ([] when there is none yet)."""
    path = Path(run) / "metrics.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def load_script(name: str) -> ModuleType:
    """The code of ``scripts/NAME.py`` (the module ``gomoku.cli.NAME``), so that a test calls its
    ``main`` in this process."""
    return importlib.import_module(f"gomoku.cli.{name}")


def checkout_env(**variables: str) -> dict[str, str]:
    """The environment for a script run in a subprocess: this checkout's package on the path, as
    the README's install gives it (without it, an installed copy of another checkout would run),
    and nothing else of the caller's PYTHONPATH; ``variables`` on top."""
    return {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]), **variables}
