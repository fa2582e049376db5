"""Training curves as a PNG, drawn with pygame on an off-screen surface (no matplotlib).

    from gomoku.training.plot import plot_metrics
    plot_metrics("runs/9x9", "curves.png")      # or the metrics.jsonl itself; default out: <run dir>/curves.png

Six panels against self-play games: losses, policy entropy, the evaluation score against pure MCTS,
the learning-rate multiplier and KL, the value head's explained variance and the self-play speed.
This module imports pygame, so ``import gomoku`` does not import it; scripts/plot.py does.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

# Headless and silent; set before pygame is imported. Nothing here opens a window.
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
import pygame  # noqa: E402

METRICS = "metrics.jsonl"  # as gomoku.training.pipeline writes it (not imported from there: it imports torch)
CONFIG = "config.yaml"
DEFAULT_OUT = "curves.png"
DEFAULT_SIZE = (1200, 800)
SUPERSAMPLE = 2  # drawn at twice the size and scaled down: smooth lines and text

WHITE = (255, 255, 255)
TEXT = (40, 40, 40)
MUTED = (110, 110, 110)
FRAME = (170, 170, 170)
GRID = (234, 234, 234)
BLUE, ORANGE, GREEN, RED = (31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40)
PURPLE, BROWN, PINK, GREY = (148, 103, 189), (140, 86, 75), (227, 119, 194), (127, 127, 127)
OLIVE, CYAN = (188, 189, 34), (23, 190, 207)
LEVEL_COLOURS = (BLUE, ORANGE, GREEN, RED, PURPLE, BROWN, PINK, OLIVE, CYAN)

TITLE_PT, SUBTITLE_PT, PANEL_PT, TICK_PT, LABEL_PT, LEGEND_PT = 21, 14, 15, 12, 13, 12
SMOOTH_MIN_POINTS = 30  # from this many points on, noisy curves get a moving average over the faded raw line


# ---------------------------------------------------------------------------------------------- the data
def resolve_paths(source: str | os.PathLike, out: str | os.PathLike | None = None) -> tuple[Path, Path]:
    """(metrics file, output PNG) for a run directory or a metrics file; the PNG defaults to the run dir."""
    source = Path(source)
    metrics = source / METRICS if source.is_dir() else source
    return metrics, Path(out) if out is not None else metrics.parent / DEFAULT_OUT


def load_metrics(path: str | os.PathLike) -> list[dict]:
    """The records of a metrics JSONL, in file order; a torn (still being written) line is skipped.

    Raises ValueError when the file is missing or holds no record.
    """
    path, _ = resolve_paths(path)
    if not path.is_file():
        raise ValueError(f"no metrics file at {path}")
    records = []
    for line in path.read_text().splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and _finite(record.get("games")):
            records.append(record)
    if not records:
        raise ValueError(f"{path} holds no metrics records (has the first iteration finished?)")
    return records


def load_config(run_dir: Path) -> dict:
    """The run's config.yaml as a dict, or {} (it only adds reference lines)."""
    try:
        import yaml

        config = yaml.safe_load((run_dir / CONFIG).read_text())
    except Exception:  # no file, no yaml, not yaml: plot without the reference lines
        return {}
    return config if isinstance(config, dict) else {}


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def series(records: Iterable[dict], key: str) -> tuple[list[float], list[float]]:
    """(games, values) of one metric, skipping records without a finite value."""
    xs, ys = [], []
    for record in records:
        if _finite(record.get(key)):
            xs.append(float(record["games"]))
            ys.append(float(record[key]))
    return xs, ys


def moving_average(values: Sequence[float], window: int) -> list[float]:
    """Centred moving average; the window shrinks at the ends."""
    half = window // 2
    prefix = [0.0]
    for value in values:
        prefix.append(prefix[-1] + value)
    n = len(values)
    return [(prefix[min(n, i + half + 1)] - prefix[max(0, i - half)]) / (min(n, i + half + 1) - max(0, i - half))
            for i in range(n)]


def smoothing_window(n: int) -> int:
    """An odd window, about n/15 (at most 51); 1 (no smoothing) below SMOOTH_MIN_POINTS."""
    if n < SMOOTH_MIN_POINTS:
        return 1
    return min(51, max(3, n // 15) | 1)


# ---------------------------------------------------------------------------------------------- axes
def nice_step(span: float, target: int) -> float:
    """The 1, 2, 2.5 or 5 times a power of ten step giving closest to `target` intervals over `span`."""
    raw = span / max(1, target)
    magnitude = 10.0 ** math.floor(math.log10(raw))
    return min((m * magnitude for m in (1.0, 2.0, 2.5, 5.0, 10.0)), key=lambda step: abs(math.log(step / raw)))


def nice_ticks(lo: float, hi: float, target: int = 5) -> list[float]:
    """Round tick values covering [lo, hi] (the first at or below lo, the last at or above hi)."""
    if hi < lo:
        lo, hi = hi, lo
    if hi - lo <= 1e-12 * max(1.0, abs(lo), abs(hi)):
        pad = abs(lo) * 0.1 or 1.0
        lo, hi = lo - pad, hi + pad
    step = nice_step(hi - lo, target)
    first = math.floor(lo / step + 1e-9)
    last = math.ceil(hi / step - 1e-9)
    return [0.0 if i == 0 else i * step for i in range(first, last + 1)]


def log_ticks(lo: float, hi: float) -> list[float]:
    """Decades within [lo, hi]; 1-2-5 multiples when that gives fewer than 4; evenly spaced ones on a narrow axis."""
    decades = range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1)
    for mantissas, enough in (((1,), 4), ((1, 2, 5), 3)):
        ticks = [m * 10.0 ** e for e in decades for m in mantissas]
        ticks = [t for t in ticks if lo * (1 - 1e-9) <= t <= hi * (1 + 1e-9)]
        if len(ticks) >= enough:
            return ticks
    return [t for t in nice_ticks(lo, hi, 4) if lo <= t <= hi]


def tick_labels(ticks: Sequence[float], log: bool = False) -> list[str]:
    """Short labels: as many decimals as the step needs; 12k, 3.5M for large values; %g on log axes."""
    if not ticks:
        return []
    if log:
        return [f"{t:g}" for t in ticks]
    biggest = max(abs(t) for t in ticks)
    scale, suffix = (1e6, "M") if biggest >= 1e7 else (1e3, "k") if biggest >= 1e4 else (1.0, "")
    step = (ticks[1] - ticks[0]) / scale if len(ticks) > 1 else 1.0
    decimals = next((d for d in range(10) if abs(step * 10 ** d - round(step * 10 ** d)) < 1e-6), 10)
    return [f"{t / scale:.{decimals}f}{suffix}" if t else "0" for t in ticks]


@dataclass
class Axis:
    lo: float
    hi: float
    ticks: list[float]
    labels: list[str]
    log: bool = False

    def frac(self, value: float) -> float:
        """Where value lies along the axis, 0 at lo and 1 at hi."""
        if self.log:
            return (math.log10(value) - math.log10(self.lo)) / (math.log10(self.hi) - math.log10(self.lo))
        return (value - self.lo) / (self.hi - self.lo)

    def accepts(self, value: float) -> bool:
        return _finite(value) and (value > 0 or not self.log)


def make_axis(values: Iterable[float], *, log: bool = False, include: Iterable[float] = (),
              pad: tuple[float, float] = (0.06, 0.06), target: int = 5) -> Axis:
    """An axis over the values (and `include`), padded by a fraction of the span at each end."""
    values = [v for v in (*values, *include) if _finite(v) and (v > 0 or not log)]
    if log:
        values = [math.log10(v) for v in values]
    lo, hi = (min(values), max(values)) if values else (-1.0, 0.0) if log else (0.0, 1.0)
    if hi - lo <= 1e-12 * max(1.0, abs(lo), abs(hi)):
        half = 1.0 if log else abs(lo) * 0.1 or 0.5
        lo, hi = lo - half, hi + half
    span = hi - lo
    lo, hi = lo - pad[0] * span, hi + pad[1] * span
    if log:
        lo, hi = 10.0 ** lo, 10.0 ** hi
        ticks = log_ticks(lo, hi)
    else:
        ticks = [t for t in nice_ticks(lo, hi, target) if lo - 1e-9 * span <= t <= hi + 1e-9 * span]
    return Axis(lo, hi, ticks, tick_labels(ticks, log), log)


# ---------------------------------------------------------------------------------------------- drawing
def _fade(colour: tuple[int, int, int], amount: float = 0.62) -> tuple[int, int, int]:
    return tuple(round(c + (255 - c) * amount) for c in colour)


def _along(points: Sequence[tuple[float, float]], spacing: float) -> list[tuple[float, float]]:
    """The points of a polyline, plus points every `spacing` pixels along its segments."""
    out = list(points[:1])
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        steps = max(1, int(math.hypot(x1 - x0, y1 - y0) / spacing))
        out.extend((x0 + (x1 - x0) * i / steps, y0 + (y1 - y0) * i / steps) for i in range(1, steps + 1))
    return out


class Figure:
    """An off-screen canvas, `scale` times the output size; sizes below are in output pixels."""

    _font_paths: dict[bool, str | None] = {}

    def __init__(self, size: tuple[int, int], scale: int = SUPERSAMPLE):
        pygame.font.init()
        self.size = size
        self.k = scale
        self.surface = pygame.Surface((size[0] * scale, size[1] * scale))
        self.surface.fill(WHITE)
        self._fonts: dict[tuple[int, bool], pygame.font.Font] = {}

    def px(self, value: float) -> int:
        return round(value * self.k)

    def font(self, points: int, bold: bool = False) -> pygame.font.Font:
        key = (points, bold)
        if key not in self._fonts:
            if bold not in Figure._font_paths:  # DejaVu Sans where the system has it, else pygame's own font
                try:
                    Figure._font_paths[bold] = pygame.font.match_font("dejavusans", bold=bold)
                except Exception:
                    Figure._font_paths[bold] = None
            path = Figure._font_paths[bold]
            size = self.px(points) if path else self.px(points * 1.3)  # the default font renders small
            self._fonts[key] = pygame.font.Font(path, size)
            if path is None and bold:
                self._fonts[key].set_bold(False)  # freesansbold is bold already
        return self._fonts[key]

    def text_size(self, text: str, points: int, bold: bool = False) -> tuple[int, int]:
        return self.font(points, bold).size(text)

    def text(self, text: str, pos: tuple[float, float], points: int, colour=TEXT, anchor: str = "topleft",
             bold: bool = False) -> pygame.Rect:
        image = self.font(points, bold).render(text, True, colour)
        rect = image.get_rect(**{anchor: (round(pos[0]), round(pos[1]))})
        self.surface.blit(image, rect)
        return rect

    def image(self) -> pygame.Surface:
        """The figure at its output size."""
        return pygame.transform.smoothscale(self.surface, self.size)


class Panel:
    """One plot: title, frame, grid, ticks and x label drawn at once; then lines, points, a legend."""

    def __init__(self, fig: Figure, cell: pygame.Rect, title: str, x: Axis, y: Axis, xlabel: str = ""):
        self.fig, self.x, self.y = fig, x, y
        self.entries: list[tuple[str, tuple[int, int, int], str]] = []
        self.drawn: list[tuple[float, float]] = []  # data points in pixels, to keep the legend off them
        title_rect = fig.text(title, (cell.centerx, cell.top), PANEL_PT, anchor="midtop", bold=True)
        tick_w = max((fig.text_size(label, TICK_PT)[0] for label in y.labels), default=0)
        tick_h = fig.text_size("0", TICK_PT)[1]
        label_h = fig.text_size(xlabel, LABEL_PT)[1] + fig.px(2) if xlabel else 0
        left = cell.left + tick_w + fig.px(9)
        top = title_rect.bottom + fig.px(7)
        bottom = cell.bottom - tick_h - label_h - fig.px(6)
        self.rect = pygame.Rect(left, top, cell.right - fig.px(8) - left, bottom - top)
        self._draw_axes(xlabel, tick_h)

    def to_px(self, x: float, y: float) -> tuple[float, float]:
        return (self.rect.left + self.x.frac(x) * (self.rect.width - 1),
                self.rect.bottom - 1 - self.y.frac(y) * (self.rect.height - 1))

    def _draw_axes(self, xlabel: str, tick_h: int) -> None:
        fig, r, k = self.fig, self.rect, self.fig.k
        tick_len = fig.px(4)
        for value, label in zip(self.x.ticks, self.x.labels):
            px = self.to_px(value, self.y.ticks[0] if self.y.ticks else self.y.lo)[0]
            pygame.draw.line(fig.surface, GRID, (px, r.top), (px, r.bottom - 1), k)
            pygame.draw.line(fig.surface, FRAME, (px, r.bottom - 1), (px, r.bottom - 1 + tick_len), k)
            fig.text(label, (px, r.bottom + tick_len + fig.px(1)), TICK_PT, MUTED, "midtop")
        for value, label in zip(self.y.ticks, self.y.labels):
            py = self.to_px(self.x.lo, value)[1]
            pygame.draw.line(fig.surface, GRID, (r.left, py), (r.right - 1, py), k)
            pygame.draw.line(fig.surface, FRAME, (r.left - tick_len, py), (r.left, py), k)
            fig.text(label, (r.left - tick_len - fig.px(3), py), TICK_PT, MUTED, "midright")
        pygame.draw.rect(fig.surface, FRAME, r, k)
        if xlabel:
            fig.text(xlabel, (r.centerx, r.bottom + tick_len + tick_h + fig.px(2)), LABEL_PT, TEXT, "midtop")

    @contextlib.contextmanager
    def _clipped(self):
        """Drawing confined to the inside of the frame."""
        self.fig.surface.set_clip(self.rect.inflate(-2 * self.fig.k, -2 * self.fig.k))
        try:
            yield
        finally:
            self.fig.surface.set_clip(None)

    def _polyline(self, points: list[tuple[float, float]], colour, width: float) -> None:
        w = max(1, self.fig.px(width))
        with self._clipped():
            if len(points) > 1:
                pygame.draw.lines(self.fig.surface, colour, False, points, w)
            if w > 2:  # round joints (and a lone point stays visible)
                for p in points:
                    pygame.draw.circle(self.fig.surface, colour, p, w / 2)

    def line(self, xs: Sequence[float], ys: Sequence[float], colour, label: str, width: float = 2.0,
             smooth: bool = True) -> int:
        """A curve (skipping values the axis cannot show); returns the smoothing window used (1: none)."""
        pairs = [(x, y) for x, y in zip(xs, ys) if self.y.accepts(y)]
        if not pairs:
            return 1
        window = smoothing_window(len(pairs)) if smooth else 1
        points = [self.to_px(x, y) for x, y in pairs]
        if window > 1:
            self._polyline(points, _fade(colour), 1)
            smoothed = moving_average([y for _, y in pairs], window)
            if self.y.log:  # averaged in log space: a geometric mean keeps ratios honest
                smoothed = [10 ** v for v in moving_average([math.log10(y) for _, y in pairs], window)]
            points = [self.to_px(x, y) for (x, _), y in zip(pairs, smoothed)]
        self._polyline(points, colour, width if len(points) > 1 else width * 2)
        self.drawn.extend(_along(points, self.fig.px(8)))
        self.entries.append((label, colour, "line"))
        return window

    def hline(self, y: float, colour, label: str, width: float = 1.5) -> None:
        """A dashed horizontal reference line."""
        if not (self.y.accepts(y) and self.y.lo <= y <= self.y.hi):
            return
        py = self.to_px(self.x.lo, y)[1]
        dash, gap, w = self.fig.px(7), self.fig.px(5), max(1, self.fig.px(width))
        with self._clipped():
            for x0 in range(self.rect.left, self.rect.right, dash + gap):
                pygame.draw.line(self.fig.surface, colour, (x0, py), (min(x0 + dash, self.rect.right), py), w)
                self.drawn.append((x0, py))
        self.entries.append((label, colour, "dash"))

    def points(self, xs: Sequence[float], ys: Sequence[float], colour, label: str | None, radius: float = 4.5,
               ring: bool = False) -> None:
        """Markers: filled dots, or rings around (other) dots."""
        with self._clipped():
            for x, y in zip(xs, ys):
                if self.y.accepts(y):
                    p = self.to_px(x, y)
                    if ring:
                        pygame.draw.circle(self.fig.surface, colour, p, self.fig.px(radius), self.fig.px(1.5))
                    else:
                        pygame.draw.circle(self.fig.surface, colour, p, self.fig.px(radius))
                        pygame.draw.circle(self.fig.surface, WHITE, p, self.fig.px(radius), self.fig.k)
                    self.drawn.append(p)
        if label:
            self.entries.append((label, colour, "ring" if ring else "dot"))

    def note(self, text: str) -> None:
        """Grey text in the middle of the plot (no data yet)."""
        self.fig.text(text, self.rect.center, LABEL_PT, MUTED, "center")

    def legend(self) -> None:
        """The entries in a box, in whichever corner covers the fewest drawn points."""
        if not self.entries:
            return
        fig = self.fig
        row_h = fig.text_size("Ag", LEGEND_PT)[1] + fig.px(1)
        swatch, pad = fig.px(22), fig.px(6)
        width = swatch + fig.px(6) + max(fig.text_size(e[0], LEGEND_PT)[0] for e in self.entries) + 2 * pad
        height = row_h * len(self.entries) + 2 * pad - fig.px(2)
        inner = self.rect.inflate(-2 * fig.px(6), -2 * fig.px(6))
        corners = [pygame.Rect(0, 0, width, height) for _ in range(4)]
        corners[0].topright, corners[1].topleft = inner.topright, inner.topleft
        corners[2].bottomright, corners[3].bottomleft = inner.bottomright, inner.bottomleft
        box = min(corners, key=lambda c: sum(c.inflate(fig.px(8), fig.px(8)).collidepoint(p) for p in self.drawn))
        pygame.draw.rect(fig.surface, WHITE, box)
        pygame.draw.rect(fig.surface, FRAME, box, fig.k, border_radius=fig.px(3))
        for i, (label, colour, kind) in enumerate(self.entries):
            y = box.top + pad + i * row_h + row_h // 2 - fig.px(1)
            x0, x1 = box.left + pad, box.left + pad + swatch
            if kind == "line":
                pygame.draw.line(fig.surface, colour, (x0, y), (x1, y), fig.px(2.5))
            elif kind == "dash":
                for xa in (x0, x0 + fig.px(9) + fig.px(1)):
                    pygame.draw.line(fig.surface, colour, (xa, y), (xa + fig.px(8), y), fig.px(1.5))
            elif kind == "dot":
                pygame.draw.circle(fig.surface, colour, ((x0 + x1) / 2, y), fig.px(4.5))
            else:
                pygame.draw.circle(fig.surface, colour, ((x0 + x1) / 2, y), fig.px(6), fig.px(1.5))
            fig.text(label, (x1 + fig.px(6), y), LEGEND_PT, TEXT, "midleft")


# ---------------------------------------------------------------------------------------------- the figure
def _hours(seconds: float) -> str:
    hours = seconds / 3600
    return f"{hours:.2f} h" if hours < 10 else f"{hours:.1f} h"


def _grid(fig: Figure, top: int, cols: int, rows: int) -> list[pygame.Rect]:
    margin, gap_x, gap_y = fig.px(14), fig.px(22), fig.px(18)
    width, height = fig.surface.get_size()
    cell_w = (width - 2 * margin - (cols - 1) * gap_x) // cols
    cell_h = (height - top - margin - (rows - 1) * gap_y) // rows
    return [pygame.Rect(margin + c * (cell_w + gap_x), top + r * (cell_h + gap_y), cell_w, cell_h)
            for r in range(rows) for c in range(cols)]


def render(records: Sequence[dict], size: tuple[int, int] = DEFAULT_SIZE, title: str = "training curves",
           config: dict | None = None) -> pygame.Surface:
    """The six panels of a run's metrics as a surface of the given size."""
    if not records:
        raise ValueError("no metrics records to plot")
    config = config or {}
    fig = Figure(size)
    header = fig.px(12) + fig.text_size("Ag", TITLE_PT, True)[1] + fig.text_size("Ag", SUBTITLE_PT)[1] + fig.px(12)
    cells = _grid(fig, header, 3, 2)
    games = [float(r["games"]) for r in records]
    x = make_axis(games, include=(0,), pad=(0.0, 0.03), target=6)
    xlabel = "self-play games"
    windows = [1]

    def panel(i: int, name: str, y: Axis) -> Panel:
        return Panel(fig, cells[i], name, x, y, xlabel)

    # (1) losses
    curves = [("loss", "loss", BLUE), ("policy_loss", "policy loss", ORANGE), ("value_loss", "value loss", GREEN)]
    data = [(series(records, key), label, colour) for key, label, colour in curves]
    p = panel(0, "Loss", make_axis([v for (_, ys), _, _ in data for v in ys]))
    for (xs, ys), label, colour in data:
        windows.append(p.line(xs, ys, colour, label))
    _finish(p, any(ys for (_, ys), _, _ in data), "no training yet")

    # (2) policy entropy, against the entropy of a uniform policy over the board
    board = config.get("board") if isinstance(config.get("board"), dict) else {}
    cells_n = board.get("width", 0) * board.get("height", 0) if _finite(board.get("width")) else 0
    uniform = math.log(cells_n) if _finite(cells_n) and cells_n > 1 else None
    xs, ys = series(records, "entropy")
    p = panel(1, "Policy entropy (nats)", make_axis(ys, include=[uniform] if uniform and ys else []))
    windows.append(p.line(xs, ys, PURPLE, "entropy"))
    if uniform and ys:
        p.hline(uniform, GREY, f"uniform over {cells_n} moves")
    _finish(p, bool(ys), "no training yet")

    # (3) evaluation score against pure MCTS, a colour per playout level, rings on new bests
    evals = [(float(r["games"]), r["eval"]) for r in records if isinstance(r.get("eval"), dict)
             and _finite(r["eval"].get("score"))]
    p = panel(2, "Evaluation score vs pure MCTS", make_axis([0.0, 1.0], pad=(0.07, 0.07)))
    if evals:
        p._polyline([p.to_px(g, e["score"]) for g, e in evals], _fade(GREY, 0.45), 1)
        levels = sorted({e.get("pure_playouts") for _, e in evals}, key=lambda v: (not _finite(v), v or 0))
        for i, level in enumerate(levels):
            at = [(g, e["score"]) for g, e in evals if e.get("pure_playouts") == level]
            name = f"pure MCTS {level:g} playouts" if _finite(level) else "pure MCTS"
            p.points([g for g, _ in at], [s for _, s in at], LEVEL_COLOURS[i % len(LEVEL_COLOURS)], name)
        best = [(g, e["score"]) for g, e in evals if e.get("new_best")]
        if best:
            p.points([g for g, _ in best], [s for _, s in best], TEXT, "new best model", radius=7.5, ring=True)
        p.legend()
    else:
        p.note("no evaluation yet")

    # (4) learning-rate multiplier and KL, log scale, with the KL target
    kl_targ = (config.get("train") or {}).get("kl_targ") if isinstance(config.get("train"), dict) else None
    lr, kl = series(records, "lr_multiplier"), series(records, "kl")
    extra = [kl_targ] if _finite(kl_targ) and kl[1] else []
    p = panel(3, "LR multiplier and KL (log scale)", make_axis([*lr[1], *kl[1]], log=True, include=extra,
                                                                  pad=(0.08, 0.08)))
    p.line(*lr, RED, "lr multiplier", smooth=False)
    windows.append(p.line(*kl, BROWN, "KL(old || new)"))
    if extra:
        p.hline(kl_targ, GREY, f"KL target {kl_targ:g}")
    _finish(p, bool(lr[1] or kl[1]), "no training yet")

    # (5) explained variance of the value head, before and after the iteration's updates
    old, new = series(records, "explained_var_old"), series(records, "explained_var_new")
    p = panel(4, "Value explained variance", make_axis([*old[1], *new[1]]))
    windows.append(p.line(*old, CYAN, "before update"))
    windows.append(p.line(*new, BLUE, "after update"))
    _finish(p, bool(old[1] or new[1]), "no training yet")

    # (6) self-play speed
    speed = series(records, "selfplay_positions_per_s")
    p = panel(5, "Self-play speed (positions/s)", make_axis(speed[1], include=(0,), pad=(0.0, 0.08)))
    windows.append(p.line(*speed, OLIVE, "positions/s"))
    _finish(p, bool(speed[1]), "no data yet")

    # The header, written last: it mentions the smoothing the panels used.
    last = records[-1]
    facts = [f"{len(records)} iterations", f"{int(last['games']):,} games"]
    if _finite(last.get("positions")):
        facts.append(f"{int(last['positions']):,} positions")
    if _finite(last.get("wall_time")):
        facts.append(f"{_hours(last['wall_time'])} wall time")
    if evals:
        e = evals[-1][1]
        facts.append(f"last eval {e['score']:.2f} vs pure {e.get('pure_playouts', '?')}")
    if max(windows) > 1:
        facts.append(f"faint: raw, bold: moving average over {max(windows)} iterations")
    rect = fig.text(title, (fig.px(14), fig.px(10)), TITLE_PT, TEXT, bold=True)
    fig.text("   ·   ".join(facts), (fig.px(14), rect.bottom + fig.px(3)), SUBTITLE_PT, MUTED)
    return fig.image()


def _finish(p: Panel, has_data: bool, empty: str) -> None:
    """The legend, or a note when none of the panel's series has a value."""
    if has_data:
        p.legend()
    else:
        p.note(empty)


def plot_metrics(source: str | os.PathLike, out: str | os.PathLike | None = None,
                 size: tuple[int, int] = DEFAULT_SIZE, title: str | None = None) -> Path:
    """Render a run's metrics (a run directory or its metrics.jsonl) to a PNG; returns the PNG's path."""
    metrics, out = resolve_paths(source, out)
    records = load_metrics(metrics)
    if size[0] < 300 or size[1] < 200:
        raise ValueError(f"image size {size[0]}x{size[1]} is too small (at least 300x200)")
    name = metrics.parent.name if metrics.name == METRICS else metrics.name
    image = render(records, size, title or f"gomoku-zero training: {name}", load_config(metrics.parent))
    out.parent.mkdir(parents=True, exist_ok=True)
    pygame.image.save(image, str(out))
    return out
