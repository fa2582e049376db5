"""Ablations at equal wall time: the README's ablation table, reproducible in one command.

Each ``Variant`` is the config with a few ``section.key=value`` overrides (as ``train.py --set``),
trained from scratch in its own run directory until the run's wall time reaches the same number
of minutes. Its final checkpoint is then rated against the same opponents in the same seeded
games, searching as it was trained (a technique switched off is off in training and in play).

Runs are long, so nothing is lost when one stops: a variant whose run directory already holds a
run is resumed up to the minutes (losing at most the iteration in progress), and a variant already
rated with the same minutes, opponents, games and seed is not played again. ``ablation.json`` in
the root folder holds every rated variant, rewritten atomically after each one.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

from gomoku.training.config import MAX_SEED, Config, load_config
from gomoku.training.metrics import METRICS, IterationRecord, read_records

log = logging.getLogger(__name__)

RESULTS_FILE = "ablation.json"
VARIANT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")  # no "." or "..": it names a folder under the root


@dataclass(frozen=True)
class Variant:
    name: str
    overrides: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> "Variant":
        """``NAME`` (the config as it is) or ``NAME section.key=value [section.key=value ...]``."""
        name, *overrides = text.split() or [""]
        if not VARIANT_NAME.fullmatch(name):
            raise ValueError(f"variant {text!r}: the name must be a letter or digit, then letters, digits, '.', '_' or '-' "
                             f"(it names the run directory), then the overrides, space-separated")
        return cls(name, tuple(overrides))


@dataclass
class VariantResult:
    """A rated variant: where its run stopped and its matches (``MatchResult.to_dict()``)."""

    name: str
    overrides: list[str]
    minutes: float  # the minutes asked for
    wall_minutes: float  # the run's wall time at its final checkpoint (the iteration that crossed the mark)
    iteration: int
    games: int  # self-play games
    seed: int  # the evaluation's
    matches: list[dict] = field(default_factory=list)
    # The run's self-play speed (positions per second of self-play): the machine's pace, so that
    # rows trained on different days (a machine ~2x faster or slower) can be told apart. None:
    # unknown (the run's metrics predate the fields it is read from, or an older results file).
    positions_per_s: float | None = None

    def same_rating(self, minutes: float, opponents: Sequence[str], games: int, seed: int) -> bool:
        return (self.minutes == minutes and self.seed == seed
                and [m["opponent"] for m in self.matches] == list(opponents)
                and all(m["games"] == games for m in self.matches))


def variant_config(config_path: str | Path, variant: Variant) -> Config:
    """The variant's config; a bad override raises ``ConfigError`` naming the key."""
    return load_config(config_path, list(variant.overrides))


def check_opponents(opponents: Sequence[str]) -> None:
    """A ValueError for an opponent spec that is malformed or names a checkpoint that is not there:
    the rating comes after the training, so the specs are checked before it."""
    from gomoku.players import SpecError, parse_spec  # light: builds no player, imports no torch

    for spec in opponents:
        try:
            parsed = parse_spec(spec)
        except SpecError as error:  # its own line, not the list of valid forms
            raise ValueError(error.problem) from None
        if parsed.kind == "az" and not Path(parsed.path).is_file():
            raise ValueError(f"opponent {spec!r}: no checkpoint at {parsed.path}")


def run_records(run_dir: Path) -> list[IterationRecord]:
    """The metrics records of the run in ``run_dir``."""
    return read_records(run_dir / METRICS)


def selfplay_speed(records: Sequence[IterationRecord]) -> float | None:
    """Moves made per second of self-play over the whole run (each iteration's
    ``selfplay_positions_per_s`` weighted by its self-play time: the run's log and plot's figure);
    None when a record lacks them (metrics written before those fields were)."""
    pairs = [(r.selfplay_positions_per_s, r.selfplay_s) for r in records]
    if not pairs or any(rate is None or seconds is None for rate, seconds in pairs):
        return None
    seconds = sum(seconds for _, seconds in pairs)
    return sum(rate * seconds for rate, seconds in pairs) / seconds if seconds > 0 else None


def train_variant(config: Config, run_dir: Path, minutes: float, progress: bool = False) -> None:
    """Train (or resume) the run in ``run_dir`` until its wall time reaches ``minutes``. A run
    there of other settings (the variant's overrides or the config file changed since) is an
    error: resumed, it would keep its own settings and be rated under the new ones."""
    from gomoku.training.config import config_changes
    from gomoku.training.pipeline import CHECKPOINT, TrainPipeline

    resume = (run_dir / CHECKPOINT).is_file()
    pipeline = TrainPipeline(config, run_dir, resume=resume, progress=progress)
    if changes := config_changes(pipeline.config, config):
        pipeline.close()
        raise ValueError(f"{run_dir} holds a run of other settings ("
                         + ", ".join(f"{key}: run {old!r}, variant {new!r}" for key, (old, new) in changes.items())
                         + "): remove it, or give the variant another name")
    if pipeline.wall_time >= 60 * minutes:
        pipeline.close()
        return
    log.info("%s %s up to %.1f min of run wall time (now %.1f)", "resuming" if resume else "training",
             run_dir, minutes, pipeline.wall_time / 60)
    pipeline.run(max_wall_s=60 * minutes)


def rate_variant(config: Config, run_dir: Path, opponents: Sequence[str], games: int, seed: int,
                 workers: int = 1, progress: bool = False) -> list[dict]:
    """The run's final checkpoint against each opponent, with the search rules of the run's
    self-play (forced moves, VCF, VCT) and leaves a net call; the play's own budgets (c_puct 5,
    the solvers' node budgets, the deep checks) are the az player's."""
    from gomoku.matches.arena import evaluate
    from gomoku.training.pipeline import CHECKPOINT

    s, b = config.search, config.board
    spec = f"az:{run_dir / CHECKPOINT}:{config.eval.n_playout}"
    results = evaluate(spec, opponents, games, seed=seed, width=b.width, height=b.height, n_in_row=b.n_in_row,
                       progress=progress, workers=workers, leaves_per_step=s.leaves_per_step,
                       forced_moves=s.forced_moves, vcf=s.vcf, vct=s.vct)
    return [result.to_dict() for result in results]


def load_results(root: Path) -> dict[str, VariantResult]:
    path = root / RESULTS_FILE
    if not path.is_file():
        return {}
    return {item["name"]: VariantResult(**item) for item in json.loads(path.read_text())}


def save_results(root: Path, results: dict[str, VariantResult]) -> None:
    """Rewrite ``root/ablation.json`` atomically; an OSError naming it when that fails (a full disk)."""
    path = root / RESULTS_FILE
    temp = path.with_suffix(".json.tmp")
    try:
        temp.write_text(json.dumps([asdict(r) for r in results.values()], indent=2) + "\n")
        os.replace(temp, path)
    except OSError as error:
        temp.unlink(missing_ok=True)
        raise OSError(f"cannot write {path}: {error.strerror or error}") from None


def make_root(root: Path) -> None:
    """Create the ablation's folder; a ValueError naming it when it is a file or cannot be made."""
    if root.exists() and not root.is_dir():
        raise ValueError(f"--root {root} is a file, not a folder")
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ValueError(f"cannot create --root {root}: {error.strerror or error}") from None


def run_ablation(config_path: str | Path, variants: Sequence[Variant], root: str | Path, minutes: float,
                 opponents: Sequence[str], games: int, seed: int = 0, workers: int = 1,
                 progress: bool = False) -> list[VariantResult]:
    """Train and rate each variant in turn (see the module's docstring); returns their results in
    the order given. Every override and opponent spec is checked before anything runs."""
    if len({v.name for v in variants}) != len(variants):
        raise ValueError("two variants share a name")
    if not (math.isfinite(minutes) and minutes > 0) or games < 1:
        raise ValueError(f"minutes must be a finite number > 0 and games >= 1, got {minutes} and {games}")
    if not 0 <= seed <= MAX_SEED:
        raise ValueError(f"seed must be in 0..{MAX_SEED}, got {seed}")
    check_opponents(opponents)
    configs = {v.name: variant_config(config_path, v) for v in variants}
    root = Path(root)
    make_root(root)
    results = load_results(root)
    for variant in variants:
        done = results.get(variant.name)
        if done is not None and done.overrides == list(variant.overrides) and done.same_rating(
                minutes, opponents, games, seed):
            log.info("%s: already rated at %.1f min", variant.name, minutes)
            continue
        run_dir = root / variant.name
        config = configs[variant.name]
        train_variant(config, run_dir, minutes, progress)
        records = run_records(run_dir)
        record = records[-1]
        matches = rate_variant(config, run_dir, opponents, games, seed, workers, progress)
        results[variant.name] = VariantResult(variant.name, list(variant.overrides), minutes,
                                              record.wall_time / 60, record.iteration, record.games,
                                              seed, matches, selfplay_speed(records))
        save_results(root, results)
    return [results[v.name] for v in variants]


def _speed_text(positions_per_s: float | None) -> str:
    return "n/a" if positions_per_s is None else f"{positions_per_s:.1f}"


def format_ablation(results: Sequence[VariantResult]) -> str:
    """A Markdown table: one row per variant, W-D-L and score per opponent."""
    opponents = [m["opponent"] for m in results[0].matches] if results else []
    head = ["variant", "overrides", "wall min", "games", "self-play pos/s", *opponents]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        cells = [f"{m['wins']}-{m['draws']}-{m['losses']} ({m['score']:.2f})" for m in r.matches]
        rows.append("| " + " | ".join([r.name, " ".join(r.overrides) or "(none)", f"{r.wall_minutes:.1f}",
                                       str(r.games), _speed_text(r.positions_per_s), *cells]) + " |")
    return "\n".join(rows)
