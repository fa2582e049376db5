"""The AI's search in a worker thread, and what the window shows of it (``Analysis``). No pygame.

The pygame event pump and all drawing stay on the main thread; the AI thinks in a daemon worker
thread (``SearchJob``) on a copy of the board, and writes only its latest ``Analysis`` and its
``Answer``, under a lock; the main thread polls them every frame. A search player is asked
through ``analyse(board, on_progress=..., should_stop=...)``, so a new game, undo, swap or
closing the window stop it within one round of playouts; any other player (minimax...) is left
to finish its ``get_action`` in the background (its answer is thrown away). ``Thinker`` starts a
new search only once the previous worker has ended: a player's search tree is not shared between
threads.

An ``Analysis`` is what the window shows of a search, read off its ``SearchResult`` alone: per
move the visits (this search's playouts and those kept from an earlier move's tree), the win rate
``(Q + 1) / 2`` and the prior, for the top moves the line the search expects (the most visited
replies), and the root value, always for the side to move in the searched position
(``to_move``). The one win estimate of a position is the win rate of the search's best move
(``Analysis.win_for``).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import threading
import time
from dataclasses import dataclass
from enum import Enum

import numpy as np

from gomoku.game.board import Board
from gomoku.players.forfeit import Forfeit, ForfeitReason
from gomoku.players import Player
from mcts import SearchResult

log = logging.getLogger(__name__)

TOP_MOVES = 5
LINE_PLIES = 8  # plies of the expected line kept per top move
NO_MOVE = -1

FORFEIT_WORDS = {ForfeitReason.LATE: "the engine answered too late", ForfeitReason.SILENT: "the engine did not answer",
                 ForfeitReason.CRASHED: "the engine crashed", ForfeitReason.ILLEGAL: "the engine's answer was not a legal move"}
FORFEIT_DETAIL_CHARS = 60  # of the engine's own account (its first line), in the window's status


def forfeit_text(forfeit: Forfeit) -> str:
    """What the window says of an external engine's forfeit: why in words, then the first line
    of the detail (its stderr is in the log)."""
    detail = forfeit.summary
    if len(detail) > FORFEIT_DETAIL_CHARS:
        detail = detail[: FORFEIT_DETAIL_CHARS - 3] + "..."
    return f"{FORFEIT_WORDS[forfeit.reason]}: {detail}" if detail else FORFEIT_WORDS[forfeit.reason]


def percent(fraction: float) -> int:
    """A chance as whole per cent, the same rounding everywhere the window shows one."""
    return round(100 * fraction)


# ------------------------------------------------------------------------------ analysis
class SearchState(str, Enum):
    LIVE = "live"  # the search is running
    DONE = "done"  # the search ended and the AI played
    STOPPED = "stopped"  # the search was stopped (undo, swap, new game...) before it ended


@dataclass(frozen=True)
class MoveStats:
    """One candidate move of a search, for the side to move."""

    move: int
    visits: int
    share: float  # of the root's visits
    win: float  # (Q + 1) / 2, NaN without a visit
    prior: float
    line: tuple[int, ...]  # this move, then the most visited replies


@dataclass(frozen=True)
class Analysis:
    """A search of the position after ``moves``, where ``to_move`` is to play."""

    moves: tuple[int, ...]
    to_move: int
    visits: np.ndarray
    value: float  # the root value for ``to_move``, in [-1, 1]
    playouts: int
    seconds: float
    top: tuple[MoveStats, ...]
    state: SearchState
    chosen: int = NO_MOVE

    def win_for(self, colour: int) -> float:
        """The estimated chance that ``colour`` wins (draws count half): the win rate of the
        search's best move (``top[0]``, the one it plays), the figure of the top-moves table; the
        root value when the tree gave no win rate."""
        best = self.top[0].win if self.top else math.nan
        mover = (self.value + 1.0) / 2.0 if math.isnan(best) else best
        return mover if colour == self.to_move else 1.0 - mover

    @property
    def reused(self) -> int:
        """Visits at the root kept from the search of an earlier move (the tree is reused), on top
        of this search's ``playouts``."""
        return max(0, int(round(float(self.visits.sum()))) - self.playouts)

    def shares(self) -> np.ndarray:
        total = float(self.visits.sum())
        return self.visits / total if total > 0 else np.zeros_like(self.visits)

    def stopped(self) -> "Analysis":
        return dataclasses.replace(self, state=SearchState.STOPPED)


def make_analysis(result: SearchResult, moves: tuple[int, ...], to_move: int, seconds: float, state: SearchState,
                  chosen: int = NO_MOVE) -> Analysis:
    """The window's record of a search's ``result`` from the position after ``moves``."""
    visits = np.asarray(result.visits, dtype=np.float64).copy()
    priors = np.asarray(result.priors, dtype=np.float64)
    total = float(visits.sum())
    top = []
    for move in (int(m) for m in result.ranked_moves()[:TOP_MOVES]):  # the order the move is chosen in
        if visits[move] <= 0:
            break
        q = float(result.q[move])
        top.append(MoveStats(move, int(visits[move]), visits[move] / total, (q + 1.0) / 2.0,
                             float(priors[move]), result.line(move)[:LINE_PLIES]))
    return Analysis(moves, to_move, visits, float(result.value), int(result.playouts), seconds, tuple(top), state,
                    chosen)


# ------------------------------------------------------------------------------ the worker
@dataclass(frozen=True)
class Answer:
    """How a search ended: the move (None on error), its analysis (search players), the error."""

    move: int | None
    analysis: Analysis | None
    error: str | None
    seconds: float


class SearchJob:
    """One AI move, searched in a daemon worker thread on a copy of the board."""

    def __init__(self, player: Player, board: Board):
        self.player = player
        self.moves = tuple(board.moves)
        self.to_move = board.current_player
        self.started = time.perf_counter()
        self._board = board.copy()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._live: Analysis | None = None
        self._answer: Answer | None = None
        self.thread = threading.Thread(target=self._work, name="gomoku-ai", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self._stop.set()

    def alive(self) -> bool:
        return self.thread.is_alive()

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def live(self) -> Analysis | None:
        with self._lock:
            return self._live

    def answer(self) -> Answer | None:
        with self._lock:
            return self._answer

    def target_playouts(self) -> int | None:
        """The playouts the search will make; None under a time limit (it ends when the time is up)."""
        if getattr(self.player, "seconds", None) is not None:
            return None
        return getattr(self.player, "n_playout", None)

    def _progress(self, result: SearchResult) -> None:  # worker thread, between two rounds of playouts
        analysis = make_analysis(result, self.moves, self.to_move, self.elapsed(), SearchState.LIVE)
        with self._lock:
            self._live = analysis

    def _work(self) -> None:
        try:
            analyse = getattr(self.player, "analyse", None)
            if callable(analyse):
                result = analyse(self._board, on_progress=self._progress, should_stop=self._stop.is_set)
                move = result.best_move()
                state = SearchState.STOPPED if self._stop.is_set() else SearchState.DONE
                analysis = make_analysis(result, self.moves, self.to_move, self.elapsed(), state, move)
            else:
                move, analysis = self.player.get_action(self._board), None
            if not self.moves:  # the game's first move is the centre on every size (flat priors: L13 on 15x15)
                move = self._board.centre
            answer = Answer(move, analysis, None, self.elapsed())
        except Forfeit as error:  # an external engine's misbehaviour: said in words, no traceback
            log.warning("the AI engine forfeited: %s", error)
            answer = Answer(None, None, forfeit_text(error), self.elapsed())
        except Exception as error:  # shown in the window; the window goes on
            log.exception("the AI failed")
            answer = Answer(None, None, f"{type(error).__name__}: {error}", self.elapsed())
        with self._lock:
            self._answer = answer


class Thinker:
    """The AI's searches, one at a time (main thread): start, take the answer, cancel, wait."""

    def __init__(self) -> None:
        self.job: SearchJob | None = None
        self.stopping: list[SearchJob] = []  # cancelled jobs whose thread has not ended yet

    def reap(self) -> None:
        self.stopping = [job for job in self.stopping if job.alive()]

    def can_start(self) -> bool:
        self.reap()
        return self.job is None and not self.stopping

    def start(self, player: Player, board: Board) -> SearchJob:
        if not self.can_start():
            raise RuntimeError("a search is still running")
        self.job = SearchJob(player, board)
        self.job.start()
        return self.job

    def take_answer(self) -> tuple[SearchJob, Answer] | None:
        """The finished job and its answer, once; None while it thinks (or when none runs)."""
        job = self.job
        answer = job.answer() if job is not None else None
        if answer is None:
            return None
        self.job = None
        return job, answer

    def cancel(self) -> Analysis | None:
        """Stop the running search (its answer will be ignored); its last analysis, marked stopped."""
        job, self.job = self.job, None
        if job is None:
            return None
        job.stop()
        self.stopping.append(job)
        live = job.live()
        return live.stopped() if live is not None else None

    def join(self, timeout: float) -> None:
        deadline = time.perf_counter() + timeout
        for job in self.stopping:
            job.thread.join(max(0.0, deadline - time.perf_counter()))
        self.reap()
