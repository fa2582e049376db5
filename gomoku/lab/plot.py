"""Training curves as a PNG, drawn with matplotlib (Agg, no pyplot: no global figure state).

    from gomoku.lab.plot import plot_metrics
    plot_metrics("runs/9x9", "curves.png")      # or the metrics.jsonl itself; default out: <run dir>/curves.png

Six panels against self-play games (or minutes of run time: ``against="minutes"``): losses,
policy entropy, evaluation scores (the pure-MCTS ladder and every other opponent found in the
records), the learning-rate multiplier and KL, the value head's explained variance, and the
self-play speed. ``rung_table`` gives the evaluations as a table: the minute of run time of each,
and its score against every opponent (wins, draws, losses, 95% interval), so that a run's own
metrics show when it first reached a score. Unknown keys are ignored, missing ones leave gaps, a
torn last line (a run still writing) is skipped, and so are other lines that are not records and
values too large to draw (each logged as a warning). ``import gomoku`` does not import this module.
"""

from __future__ import annotations

import contextlib
import io
import logging
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

from gomoku.matches.records import wilson_interval
from gomoku.training.metrics import METRICS, IterationRecord
CONFIG = "config.yaml"
DEFAULT_OUT = "curves.png"
DEFAULT_SIZE = (1200, 800)  # pixels, at DPI
DPI = 100
MIN_SIZE = (300, 200)  # pixels: the panels' text needs this much
MAX_SIZE = (10_000, 10_000)  # pixels: a larger canvas runs out of memory (99999x99999 did) and no screen needs it
SMOOTH_MIN_POINTS = 30  # from this many points on, noisy curves get a moving average over the faint raw line
TITLES = ("Loss", "Policy entropy (nats)", "Evaluation score", "LR multiplier and KL (log scale)",
          "Value explained variance", "Self-play speed (positions/s)")
LEVEL_COLOURS = ("C0", "C1", "C2", "C3", "C4", "C5", "C6", "C8", "C9")
AXES = {"games": "self-play games", "minutes": "minutes of run time"}  # what the panels are drawn against
PLOT_LIMIT = 1e15  # larger magnitudes are not drawn: no metric gets there, and axis ranges overflow near 1e308

log = logging.getLogger(__name__)


# ---------------------------------------------------------------------------------------------- the data
def resolve_paths(source: str | os.PathLike, out: str | os.PathLike | None = None) -> tuple[Path, Path]:
    """(metrics file, output PNG) for a run directory or a metrics file. The PNG defaults to
    curves.png in the run directory; an ``out`` that is a folder, or ends in a slash (a folder to
    make), gets curves.png in it, and one without a suffix gets ".png" (what matplotlib would add);
    another suffix is a ValueError."""
    source = Path(source)
    metrics = source / METRICS if source.is_dir() else source
    if out is None:
        return metrics, metrics.parent / DEFAULT_OUT
    folder = str(out).endswith(("/", os.sep))  # Path drops the trailing slash
    out = Path(out)
    _check_writable_target(out)
    if out.is_dir() or folder:
        return metrics, out / DEFAULT_OUT
    if not out.suffix:
        return metrics, out.with_name(out.name + ".png")
    if out.suffix.lower() != ".png":
        raise ValueError(f"{out}: the plot is a PNG; give a .png file or a folder")
    return metrics, out


def _check_writable_target(out: Path) -> None:
    """A ValueError for a path that is there but is neither a folder nor a regular file (/dev/null,
    a pipe): the PNG was written beside it (/dev/null.png)."""
    if out.exists() and not out.is_dir() and not out.is_file():
        raise ValueError(f"{out}: not a regular file or a folder; give a .png file or a folder")


def write_png(fig: Figure, out: Path) -> None:
    """Save ``fig`` as exactly ``out``: drawn in memory, written to a temp file beside it, renamed
    over it; an OSError naming ``out`` when that fails (a full disk), leaving no partial file."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, facecolor="white")
    temp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        temp.write_bytes(buffer.getvalue())
        os.replace(temp, out)
    except OSError as error:
        with contextlib.suppress(OSError):
            temp.unlink(missing_ok=True)
        raise OSError(f"cannot write {out}: {error.strerror or error}") from None


def load_metrics(source: str | os.PathLike) -> list[IterationRecord]:
    """The records (``IterationRecord`` with a drawable ``games``) of a metrics JSONL, in file order.

    Blank lines and a torn last line (no newline after it: a run still writing) are skipped;
    other lines that are not records are skipped with a warning naming them. ValueError when the
    file is missing or holds no record.
    """
    path, _ = resolve_paths(source)
    if not path.is_file():
        raise ValueError(f"no metrics file at {path}")
    text = path.read_text(errors="replace")
    lines = text.splitlines()
    if lines and not text.endswith("\n"):
        lines.pop()  # torn
    records, bad = [], []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = IterationRecord.from_json(line)
        except ValueError:  # not JSON, not an object, or no iteration or games
            record = None
        if record is not None and _finite(record.games):
            records.append(record)
        else:
            bad.append(number)
    if not records:
        raise ValueError(f"{path} holds no metrics records (has the first iteration finished?)")
    if bad:
        shown = ", ".join(map(str, bad[:10])) + (f" and {len(bad) - 10} more" if len(bad) > 10 else "")
        log.warning("%s: skipped line(s) %s: not metrics records (a damaged or edited file?)", path, shown)
    return records


def load_config(run_dir: Path) -> dict:
    """The run's config.yaml as a dict, or {} (it only adds reference lines)."""
    try:
        import yaml

        config = yaml.safe_load((run_dir / CONFIG).read_text())
    except Exception:  # no file, not yaml: plot without the reference lines
        return {}
    return config if isinstance(config, dict) else {}


def _finite(value) -> bool:
    """A number that can be drawn: finite and at most PLOT_LIMIT in magnitude."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            and abs(value) <= PLOT_LIMIT)


def as_records(records: Iterable[IterationRecord | dict]) -> list[IterationRecord]:
    """Records as they are, JSON objects (``IterationRecord.to_dict``'s shape) read into records."""
    return [r if isinstance(r, IterationRecord) else IterationRecord.from_dict(r) for r in records]


def position(record: IterationRecord, against: str = "games") -> float | None:
    """Where a record lies on the x axis ``against`` (``AXES``): its self-play games, or its minutes
    of run time (None when it has no drawable run time)."""
    if against not in AXES:
        raise ValueError(f"against must be one of {', '.join(AXES)}, got {against!r}")
    if against == "games":
        return float(record.games)
    return record.wall_time / 60 if _finite(record.wall_time) else None


def series(records: Iterable[IterationRecord], key: str, positive: bool = False,
           against: str = "games") -> tuple[list[float], list[float]]:
    """(x, values) of one metric (a field of ``IterationRecord``), x the records' ``position``,
    skipping records without a drawable (and, if asked, positive) value or x; a finite value too
    large to draw is logged."""
    pairs, huge = [], []
    for r in records:
        value, x = r.get(key), position(r, against)
        if _finite(value) and (value > 0 or not positive) and x is not None:
            pairs.append((x, float(value)))
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
                and abs(value) > PLOT_LIMIT:
            huge.append(r.games)
    if huge:
        log.warning("%s: %d value(s) beyond %g not drawn (first at %g games)", key, len(huge), PLOT_LIMIT, huge[0])
    return [x for x, _ in pairs], [y for _, y in pairs]


def _entries(record: IterationRecord) -> Iterable[tuple[dict | None, list[dict]]]:
    """Each evaluation object of a record: (its ladder object or None, its other opponents' objects).
    ``eval`` may be one object or a list; objects naming an ``opponent`` count as others, and so
    does each entry of an object's ``opponents`` list."""
    evals = record.eval
    for e in evals if isinstance(evals, list) else [evals]:
        if not isinstance(e, dict):
            continue
        listed = e.get("opponents") if isinstance(e.get("opponents"), list) else []
        entries = [o for o in listed if isinstance(o, dict)]
        ladder = None
        if "opponent" in e and "pure_playouts" not in e:
            entries.insert(0, e)
        elif _finite(e.get("score")):
            ladder = e
        yield ladder, entries


def eval_results(records: Iterable[IterationRecord | dict],
                 against: str = "games") -> tuple[list[tuple], dict[str, list[tuple[float, float]]]]:
    """(ladder, others): ladder holds (x, pure_playouts or None, score, new_best) of the pure-MCTS
    ladder; others maps each other opponent's name (``eval.opponents``: "minimax:2", ...) to its
    (x, score) points; x is the record's ``position`` (records without one are left out)."""
    ladder, others = [], {}
    for record in as_records(records):
        x = position(record, against)
        if x is None:
            continue
        for e, entries in _entries(record):
            if e is not None:
                level = e.get("pure_playouts") if _finite(e.get("pure_playouts")) else None
                ladder.append((x, level, float(e["score"]), bool(e.get("new_best"))))
            for o in entries:
                if _finite(o.get("score")):
                    others.setdefault(str(o.get("opponent", "?")), []).append((x, float(o["score"])))
    return ladder, others


@dataclass(frozen=True)
class Result:
    """One match of an evaluation: the opponent, the model's wins, draws and losses, its score
    (draws half) and the score's 95% (Wilson) interval."""

    opponent: str
    wins: int
    draws: int
    losses: int
    score: float
    ci95: tuple[float, float]

    def describe(self) -> str:
        return f"+{self.wins} ={self.draws} -{self.losses}, {self.score:.2f} [{self.ci95[0]:.2f}, {self.ci95[1]:.2f}]"


@dataclass(frozen=True)
class Rung:
    """One evaluation of a run: its minute of run time (None: not recorded), games, and matches
    (those with their wins, draws and losses recorded)."""

    minutes: float | None
    games: int
    results: tuple[Result, ...]

    def result(self, opponent: str) -> Result | None:
        return next((r for r in self.results if r.opponent == opponent), None)


def _result(entry: dict, opponent: str) -> Result | None:
    counts = [entry.get(k) for k in ("wins", "draws", "losses")]
    if not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts) or not sum(counts):
        return None
    wins, draws, losses = counts
    score = (wins + 0.5 * draws) / (wins + draws + losses)
    return Result(opponent, wins, draws, losses, score, wilson_interval(score, wins + draws + losses))


def rungs(records: Iterable[IterationRecord | dict]) -> list[Rung]:
    """The evaluations of a run, in order, with their matches (the pure-MCTS ladder's as
    ``pure:PLAYOUTS``)."""
    found = []
    for record in as_records(records):
        results = []
        for ladder, entries in _entries(record):
            if ladder is not None and _finite(ladder.get("pure_playouts")):
                results.append(_result(ladder, f"pure:{ladder['pure_playouts']:g}"))
            results.extend(_result(o, str(o.get("opponent", "?"))) for o in entries)
        results = tuple(r for r in results if r is not None)
        if results:
            found.append(Rung(position(record, "minutes"), int(record.games), results))
    return found


def first_reached(found: Sequence[Rung], opponent: str, score: float) -> Rung | None:
    """The first evaluation scoring at least ``score`` against ``opponent`` (None: none did)."""
    return next((r for r in found if (m := r.result(opponent)) is not None and m.score >= score), None)


def rung_table(records: Iterable[IterationRecord | dict], opponents: Sequence[str] | None = None) -> str:
    """A Markdown table of the evaluations: minutes of run time, games, then one column per
    opponent (default: every opponent but the pure-MCTS ladder, in order of first appearance) with
    the model's wins, draws, losses, score and 95% interval."""
    found = rungs(records)
    if opponents is None:
        opponents = list(dict.fromkeys(r.opponent for rung in found for r in rung.results
                                       if not r.opponent.startswith("pure:")))
    rows = ["| minutes | games | " + " | ".join(f"vs {o}" for o in opponents) + " |",
            "|---:|---:|" + "---|" * len(opponents)]
    for rung in found:
        cells = [(m.describe() if (m := rung.result(o)) is not None else "") for o in opponents]
        minutes = "" if rung.minutes is None else f"{rung.minutes:.1f}"
        rows.append(f"| {minutes} | {rung.games:,} | " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


def moving_average(values: Sequence[float], window: int) -> np.ndarray:
    """Centred moving average; the window shrinks at the ends."""
    values = np.asarray(values, dtype=float)
    if window <= 1:
        return values
    csum = np.concatenate([[0.0], np.cumsum(values)])
    i = np.arange(len(values))
    lo, hi = np.maximum(0, i - window // 2), np.minimum(len(values), i + window // 2 + 1)
    return (csum[hi] - csum[lo]) / (hi - lo)


def smoothing_window(n: int) -> int:
    """An odd window, about n/15 (at most 51); 1 (no smoothing) below SMOOTH_MIN_POINTS."""
    return 1 if n < SMOOTH_MIN_POINTS else min(51, max(3, n // 15) | 1)


# ---------------------------------------------------------------------------------------------- the figure
def _curve(ax, xs, ys, colour, label: str, smooth: bool = True, log: bool = False) -> int:
    """A line; past SMOOTH_MIN_POINTS a faint raw line under a bold moving average. Returns the window."""
    if not xs:
        return 1
    window = smoothing_window(len(xs)) if smooth else 1
    if window > 1:
        ax.plot(xs, ys, color=colour, lw=0.8, alpha=0.4, label=f"_raw {label}")
        ys = 10 ** moving_average(np.log10(ys), window) if log else moving_average(ys, window)
    ax.plot(xs, ys, color=colour, lw=2, label=label)
    return window


def _finish(ax, empty: str) -> None:
    """The legend, or a note when the panel has nothing drawn."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="best", fontsize=9)
    else:
        ax.text(0.5, 0.5, empty, transform=ax.transAxes, ha="center", va="center", color="0.45")


def build_figure(records: Sequence[IterationRecord | dict], title: str = "training curves",
                 config: dict | None = None, size: tuple[int, int] = DEFAULT_SIZE, against: str = "games") -> Figure:
    """The six panels of a run's metrics, as a matplotlib Figure of `size` pixels (on an Agg canvas),
    drawn against ``against`` (``AXES``)."""
    if not records:
        raise ValueError("no metrics records to plot")
    records = as_records(records)
    xs = [x for r in records if (x := position(r, against)) is not None]
    if not xs:
        raise ValueError(f"no record has its {AXES[against]} to plot against")
    config = config or {}
    fig = Figure(figsize=(size[0] / DPI, size[1] / DPI), dpi=DPI, facecolor="white")
    FigureCanvasAgg(fig)
    header = min(0.2, 62 / size[1])  # the title and facts above the panels, ~62 px
    fig.set_layout_engine("constrained", rect=(0, 0, 1, 1 - header), h_pad=0.08, w_pad=0.08)
    axes = fig.subplots(2, 3).ravel()
    for ax, name in zip(axes, TITLES):
        ax.set_title(name, fontweight="bold")
        ax.set_xlabel(AXES[against])
        ax.set_xlim(0, max(xs) * 1.03 or 1)
        ax.grid(True, color="0.92")
        ax.set_axisbelow(True)
        ax.tick_params(colors="0.35", labelsize=9)
    loss_ax, entropy_ax, eval_ax, lr_ax, ev_ax, speed_ax = axes
    windows = [1]

    for key, label, colour in (("loss", "loss", "C0"), ("policy_loss", "policy loss", "C1"),
                               ("value_loss", "value loss", "C2")):
        windows.append(_curve(loss_ax, *series(records, key, against=against), colour, label))
    _finish(loss_ax, "no training yet")

    windows.append(_curve(entropy_ax, *series(records, "entropy", against=against), "C4", "entropy"))
    board = config.get("board") if isinstance(config.get("board"), dict) else {}
    moves = board.get("width", 0) * board.get("height", 0) if _finite(board.get("width")) else 0
    if _finite(moves) and moves > 1 and entropy_ax.lines:
        entropy_ax.axhline(math.log(moves), color="0.5", ls="--", lw=1.2, label=f"uniform over {moves} moves")
    _finish(entropy_ax, "no training yet")

    # Evaluation: ladder dots coloured by playout level (joined by a grey line), rings on new bests,
    # and a line per other opponent.
    ladder, others = eval_results(records, against)
    if ladder:
        eval_ax.plot([g for g, *_ in ladder], [s for _, _, s, _ in ladder], color="0.7", lw=1, label="_ladder")
        levels = sorted({lv for _, lv, _, _ in ladder}, key=lambda v: (v is None, v or 0))
        for i, level in enumerate(levels):
            at = [(g, s) for g, lv, s, _ in ladder if lv == level]
            eval_ax.scatter(*zip(*at), s=22, color=LEVEL_COLOURS[i % len(LEVEL_COLOURS)], zorder=3,
                            label=f"pure MCTS {level:g} playouts" if level is not None else "pure MCTS")
        best = [(g, s) for g, _, s, new_best in ladder if new_best]
        if best:
            eval_ax.scatter(*zip(*best), s=110, facecolors="none", edgecolors="0.1", lw=1.4, zorder=4,
                            label="new best model")
    for i, (name, points) in enumerate(sorted(others.items())):  # dark, distinct from the ladder's dots
        eval_ax.plot(*zip(*points), color=("0.15", "C6", "C9", "C7")[i % 4], ls=("-", "--", ":", "-.")[i // 4 % 4],
                     lw=1.6, marker="s", ms=4, label=f"vs {name}")
    eval_ax.set_ylim(-0.07, 1.07)
    eval_ax.set_yticks([0, 0.25, 0.5, 0.75, 1])
    _finish(eval_ax, "no evaluation yet")

    lr_ax.set_yscale("log")
    _curve(lr_ax, *series(records, "lr_multiplier", positive=True, against=against), "C3", "lr multiplier",
           smooth=False)
    windows.append(_curve(lr_ax, *series(records, "kl", positive=True, against=against), "C5", "KL(old || new)",
                          log=True))
    train = config.get("train") if isinstance(config.get("train"), dict) else {}
    if _finite(train.get("kl_targ")) and train["kl_targ"] > 0 and lr_ax.lines:
        lr_ax.axhline(train["kl_targ"], color="0.5", ls="--", lw=1.2, label=f"KL target {train['kl_targ']:g}")
    lr_ax.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
    lr_ax.yaxis.set_minor_locator(NullLocator())
    lr_ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    _finish(lr_ax, "no training yet")

    windows.append(_curve(ev_ax, *series(records, "explained_var_old", against=against), "C9", "before update"))
    windows.append(_curve(ev_ax, *series(records, "explained_var_new", against=against), "C0", "after update"))
    _finish(ev_ax, "no training yet")

    windows.append(_curve(speed_ax, *series(records, "selfplay_positions_per_s", against=against), "C8", "positions/s"))
    speed_ax.set_ylim(bottom=0)
    _finish(speed_ax, "no data yet")

    last = records[-1]
    facts = [f"{len(records)} iterations", f"{int(last.games):,} games"]
    if _finite(last.positions):
        facts.append(f"{int(last.positions):,} positions")
    if _finite(last.wall_time):
        facts.append(f"{last.wall_time / 3600:.2f} h wall time")
    if ladder:
        _, level, score, _ = ladder[-1]
        facts.append(f"last eval {score:.2f} vs pure {level:g}" if level is not None else f"last eval {score:.2f}")
    if max(windows) > 1:
        facts.append(f"faint: raw, bold: moving average over {max(windows)} iterations")
    top = 1 - 10 / size[1]
    fig.text(0.012, top, title, ha="left", va="top", fontsize=15, fontweight="bold")
    fig.text(0.012, top - 27 / size[1], "   ·   ".join(facts), ha="left", va="top", fontsize=10, color="0.4")
    return fig


def plot_metrics(source: str | os.PathLike, out: str | os.PathLike | None = None,
                 size: tuple[int, int] = DEFAULT_SIZE, title: str | None = None, against: str = "games") -> Path:
    """Render a run's metrics (a run directory or its metrics.jsonl) to a PNG, drawn against
    ``against`` (``AXES``); returns the PNG's path."""
    metrics, out = resolve_paths(source, out)
    if size[0] < MIN_SIZE[0] or size[1] < MIN_SIZE[1]:
        raise ValueError(f"image size {size[0]}x{size[1]} is too small (at least {MIN_SIZE[0]}x{MIN_SIZE[1]})")
    if size[0] > MAX_SIZE[0] or size[1] > MAX_SIZE[1]:
        raise ValueError(f"image size {size[0]}x{size[1]} is too large (at most {MAX_SIZE[0]}x{MAX_SIZE[1]})")
    records = load_metrics(metrics)
    name = metrics.parent.name if metrics.name == METRICS else metrics.name
    fig = build_figure(records, title or f"gomoku-zero training: {name}", load_config(metrics.parent), size, against)
    _check_writable_target(out)
    write_png(fig, out)
    return out
