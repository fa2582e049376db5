"""What stops a run (``RunTarget``, ``StopLimit``) and how far it is: the progress bar, its speed and ETAs."""

from __future__ import annotations

import datetime
import enum
import math
import sys
import threading
import time
from dataclasses import dataclass
from typing import Callable

from tqdm import tqdm

CLOCK_S = 1.0  # how often the bar's run time moves on between its other updates (on a terminal only:
# a log file or pipe gets the bar at each phase, not each second)


def format_duration(seconds: float) -> str:
    """``1:02:03`` (hours:minutes:seconds), or ``?`` when not known."""
    if seconds is None or not math.isfinite(seconds):
        return "?"
    return str(datetime.timedelta(seconds=round(max(0.0, seconds))))


class StopLimit(enum.Enum):
    """The limit that ended a run (``TrainPipeline.stopped_by``)."""

    GAMES = "train.game_batch_num"
    WALL_TIME = "run time (--max-minutes, train.max_minutes)"
    ITERATIONS = "--max-iterations"


@dataclass(frozen=True)
class RunTarget:
    """What stops a run: ``games`` (train.game_batch_num), the run's wall time ``wall_s`` (over all
    its sessions: --max-minutes or train.max_minutes, the smaller), ``iterations`` in this session."""

    games: int
    wall_s: float | None = None
    iterations: int | None = None

    def describe(self) -> str:
        parts = [f"{self.games:,} games (train.game_batch_num)"]
        if self.wall_s is not None:
            parts.append(f"{self.wall_s / 60:g} min of run time")
        if self.iterations is not None:
            parts.append(f"{self.iterations} iteration(s) of this session (--max-iterations)")
        return " or ".join(parts)

    def limit_met(self, games: int, wall_s: float, iterations: int) -> StopLimit | None:
        """The limit a run has met at ``games`` games and ``wall_s`` of run time after ``iterations``
        iterations of this session, if any."""
        if games >= self.games:
            return StopLimit.GAMES
        if self.wall_s is not None and wall_s >= self.wall_s:
            return StopLimit.WALL_TIME
        if self.iterations is not None and iterations >= self.iterations:
            return StopLimit.ITERATIONS
        return None

    def describe_stop(self, limit: StopLimit, games: int, wall_s: float, iterations: int) -> str:
        """Why the run stopped, in words, e.g. "reached 1,200 games (target 1,200, train.game_batch_num)"."""
        if limit is StopLimit.GAMES:
            return f"reached {games:,} games (target {self.games:,}, train.game_batch_num)"
        if limit is StopLimit.WALL_TIME:
            return f"reached {format_duration(wall_s)} of run time (limit {self.wall_s / 60:g} min)"
        return f"played {iterations} iteration(s) (--max-iterations)"


class RunProgress:
    """The pace of this session and, when ``enabled``, a bar of the games of the target whose text
    says the run time, the speed, the ETAs and the phase (self-play, training i/n, evaluation ...).
    ``where()`` gives the run's (wall time, games, iteration) as committed."""

    def __init__(self, where: Callable[[], tuple[float, int, int]], check_freq: int, target: RunTarget):
        self.where = where
        self.check_freq = check_freq
        self.target = target
        self.start = where()  # (run wall time, games, iteration) when this session began
        self.iteration_started: float | None = None  # perf_counter() at the start of the iteration in flight
        self._bar: tqdm | None = None
        self._text = ""  # speed and ETAs, after each iteration
        self._phase = "self-play"
        self._clock: threading.Thread | None = None
        self._ticking = threading.Event()

    def open(self, enabled: bool) -> None:
        """Show the bar (on a terminal, with a clock thread that moves its run time on)."""
        self.start = self.where()
        games = self.start[1]
        self._bar = tqdm(total=self.target.games, initial=min(games, self.target.games), unit="game",
                         disable=not enabled, dynamic_ncols=True, bar_format="{n_fmt}/{total_fmt} games |{bar}| {desc}")
        self.after_iteration()
        if enabled and sys.stderr.isatty():  # tqdm's stream; a nohup'd run's log is not filled each second
            self._clock = threading.Thread(target=self._tick, daemon=True, name="progress-clock")
            self._clock.start()

    def close(self) -> None:
        self._ticking.set()
        if self._clock is not None and self._clock.is_alive():
            self._clock.join()
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def eta(self) -> tuple[float | None, float | None]:
        """Seconds (estimated) to the next evaluation and to the end of the run, at the run's pace
        so far (its wall time over all its sessions, per game and per iteration: self-play, training
        and evaluations together); None before its first iteration. The run's pace, not this
        session's: one iteration after a resume, with an evaluation in it, made the estimate jump
        (3:10 h at 144 games, 4:34 h at 160 at the same speed)."""
        wall, played, iteration = self.where()
        iterations = iteration - self.start[2]  # this session's, for --max-iterations
        if played <= 0 or wall <= 0:
            return None, None
        per_game = wall / played
        next_eval = (played // self.check_freq + 1) * self.check_freq
        per_iteration = wall / iteration if iteration > 0 else None
        to_end = max(0, self.target.games - played) * per_game
        if self.target.wall_s is not None:  # checked after each iteration: the run ends with the first
            left = max(0.0, self.target.wall_s - wall)  # iteration that ends past the limit
            to_end = min(to_end, math.ceil(left / per_iteration) * per_iteration if per_iteration else left)
        if self.target.iterations is not None and per_iteration:
            to_end = min(to_end, max(0, self.target.iterations - iterations) * per_iteration)
        to_eval = (next_eval - played) * per_game if next_eval <= self.target.games else None
        return to_eval, to_end

    def text(self, positions_per_s: float | None = None) -> str:
        """``run 0:12:03, 41.7 positions/s, evaluation in ~0:08:10, end in ~0:44:00``."""
        return f"run {format_duration(self.where()[0])}, {self._speed_and_eta(positions_per_s)}"

    def _speed_and_eta(self, positions_per_s: float | None = None) -> str:
        to_eval, to_end = self.eta()
        parts = []
        if positions_per_s is not None:
            parts.append(f"{positions_per_s:.1f} positions/s")
        if to_eval is not None:
            parts.append(f"evaluation in ~{format_duration(to_eval)}")
        parts.append(f"end in ~{format_duration(to_end)}" if to_end is not None else "end in ? (timing the first "
                                                                                       "iteration)")
        return ", ".join(parts)

    def games_done(self, n: int) -> None:
        """Self-play games finished (negative: to be played again): the bar counts them as they come."""
        if self._bar is not None:
            self._bar.update(n)

    def after_iteration(self, positions_per_s: float | None = None) -> None:
        """The bar's games and its text after an iteration (the phase is self-play until the next one)."""
        self.iteration_started = None
        if self._bar is not None:
            self._bar.n = min(self.where()[1], self._bar.total)
            self._text = self._speed_and_eta(positions_per_s)
            self.phase("self-play")

    def phase(self, text: str) -> None:
        self._phase = text
        self._render()

    def _render(self) -> None:
        """The bar's text: the run time now, the speed and ETAs of the last iteration, the phase."""
        bar, started = self._bar, self.iteration_started
        if bar is not None:
            now = self.where()[0] + (time.perf_counter() - started if started is not None else 0.0)
            bar.set_description_str(f"run {format_duration(now)}, {self._text} | {self._phase}", refresh=True)

    def _tick(self) -> None:
        while not self._ticking.wait(CLOCK_S):
            self._render()
