"""The window's opponent: which player, at what strength, and its search in a worker thread.

No pygame. The pygame event pump and all drawing stay on the main thread; the AI thinks in a
daemon worker thread (``SearchJob``) on a copy of the board, and writes only its latest
``Analysis`` and its ``Answer``, under a lock; the main thread polls them every frame. A search
player is asked through ``analyse(board, on_progress=..., should_stop=...)``, so a new game, undo,
swap or closing the window stop it within one round of playouts; any other player (minimax...) is
left to finish its ``get_action`` in the background (its answer is thrown away). ``Thinker`` starts
a new search only once the previous worker has ended: a player's search tree is not shared
between threads.

An ``Analysis`` is what the window shows of a search: per move the visits (this search's playouts
and those kept from an earlier move's tree), the win rate ``(Q + 1) / 2`` and the prior, for the top
moves the line the search expects (the most visited replies), and the root value, always for the
side to move in the searched position (``to_move``). The one win estimate of a position is the win
rate of the search's best move (``Analysis.win_for``).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import sys
import threading
import time
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import numpy as np

from gomoku.game.board import Board
from gomoku.players.forfeit import Forfeit, ForfeitReason
from gomoku.players import (SHIPPED_MODEL, SHIPPED_PLAYOUTS, WINDOW_LEAVES, WINDOW_THREADS, Player, SpecError,
                            make_player, parse_spec, sized_default, trained_n_in_row)
from gomoku.ui.session import DEFAULT_SIZE, N_IN_ROW, SetupError, new_board

log = logging.getLogger(__name__)

DEFAULT_MODEL = Path(SHIPPED_MODEL)
DEFAULT_PLAYOUTS = SHIPPED_PLAYOUTS
FALLBACK_SPEC = "pure:2000"  # the AI when no model has been trained yet
SECONDS_PLAYOUT_CAP = 20_000  # the most playouts of a time-limited strength preset
TOP_MOVES = 5
LINE_PLIES = 8  # plies of the expected line kept per top move
NO_MOVE = -1
NO_CHILD = -1  # mcts.search's marker of an edge without a child node

AI_SPECS_HELP = """\
  az:CHECKPOINT:PLAYOUTS   the network + MCTS from a checkpoint (default az:models/9x9.pt:400)
  az:CHECKPOINT:TIME       the same for TIME a move (az:models/9x9.pt:1s, 500ms)
  pure:PLAYOUTS            pure MCTS with random rollouts (pure:3000)
  pure:TIME                pure MCTS for TIME a move (pure:1s)
  minimax:DEPTH            alpha-beta to DEPTH plies, 1 to 8 (minimax:3: milliseconds a move)
  ab:DEPTH                 alpha-beta with threat extensions and the VCF solver, DEPTH >= 1 (ab:4)
  ab:DEPTH:vct             the same with the VCT solver: attacks and defends with threes too
  heuristic                one ply: takes a win, blocks a four, else the best window score
  random                   uniform random legal moves
  pbrain:PATH[:MS]         a Gomocup engine (pbrain protocol) at PATH, MS a move (default 1000)"""


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


# ------------------------------------------------------------------------------ strength
@dataclass(frozen=True)
class Strength:
    """How long a search player thinks: ``playouts`` a move, and at most ``seconds`` when set."""

    playouts: int
    seconds: float | None = None

    @property
    def timed(self) -> bool:
        """A time a move: ``seconds``, the playouts (SECONDS_PLAYOUT_CAP and up) only bound the tree."""
        return self.seconds is not None and self.playouts >= SECONDS_PLAYOUT_CAP

    @property
    def label(self) -> str:
        if self.seconds is None:
            return f"{self.playouts} playouts"
        if self.timed:
            return f"{self.seconds:g} s a move"
        return f"{self.playouts} playouts, at most {self.seconds:g} s"

    def order(self) -> tuple[int, float, float]:
        """Weakest first: by playouts (a time cap below none, a shorter cap below a longer one),
        then the times a move, shortest first."""
        if self.timed:
            return (1, self.seconds, 0.0)
        return (0, self.playouts, math.inf if self.seconds is None else self.seconds)


PLAYOUT_PRESETS = (100, 400, 1600, 6400)
TIME_PRESETS = (1.0, 3.0, 10.0)  # seconds a move
STRENGTH_PRESETS = (tuple(Strength(playouts) for playouts in PLAYOUT_PRESETS)
                    + tuple(Strength(SECONDS_PLAYOUT_CAP, seconds) for seconds in TIME_PRESETS))


def spec_strength(spec: str, seconds: float | None = None) -> Strength | None:
    """The strength of a search spec: az:PATH:N and pure:N capped at ``seconds`` when given,
    az:PATH:TIME and pure:TIME (1s, 500ms) a time a move; None for the other players."""
    try:
        parsed = parse_spec(spec)
    except ValueError:
        return None
    if parsed.kind not in ("az", "pure"):
        return None
    if parsed.seconds is not None:  # the spec's own time comes first (make_player)
        return Strength(SECONDS_PLAYOUT_CAP, parsed.seconds)
    return Strength(parsed.playouts, seconds)


def with_strength(spec: str, strength: Strength) -> str:
    """The spec with the playouts of ``strength`` (the seconds go to make_player)."""
    head, _, _ = spec.strip().rpartition(":")
    return f"{head}:{strength.playouts}"


def strength_ladder(current: Strength, cap: float | None = None) -> list[Strength]:
    """The steps of + and -, with ``current``, weakest first: the playout presets, then the times
    a move; under a time ``cap`` (--seconds) the playout presets each capped at it, then the cap
    itself a move, so that no step goes past it."""
    presets = STRENGTH_PRESETS if cap is None else (
        *(Strength(playouts, cap) for playouts in PLAYOUT_PRESETS), Strength(SECONDS_PLAYOUT_CAP, cap))
    return sorted({*presets, current}, key=Strength.order)


# ------------------------------------------------------------------------------ the opponent
def choose_opponent(opponent: str | None, model: str | Path | None = None, playouts: int = DEFAULT_PLAYOUTS,
                    default_model: str | Path = DEFAULT_MODEL, size: int = DEFAULT_SIZE,
                    n_in_row: int = N_IN_ROW) -> tuple[str, str]:
    """(spec, note): ``opponent`` if given, else ``model`` through the net MCTS, else the default
    model for an n x n board and the rule ``n_in_row`` (``sized_default``), else the pure-MCTS
    fallback. A ``model`` that is not a file is a SetupError; the note is empty unless the fallback
    is used, and then says why."""
    if opponent:
        return opponent, ""
    if model is not None:
        if not Path(model).is_file():
            raise SetupError(f"no model file at {model}")
        return f"az:{model}:{playouts}", ""
    for path in sized_default(Path(default_model), size):
        if path.is_file() and model_plays(path, size, n_in_row):
            return f"az:{path}:{playouts}", ""
    missing = sized_default(Path(default_model), size)[0]
    wanted = f"{size}x{size} at {missing}" if n_in_row == N_IN_ROW else f"{n_in_row} in a row on {size}x{size}"
    return FALLBACK_SPEC, f"No model for {wanted} yet: playing {FALLBACK_SPEC} (pure MCTS) instead."


def model_plays(path: Path, size: int, n_in_row: int = N_IN_ROW) -> bool:
    """Whether the model file at ``path`` plays a size x size board with the rule ``n_in_row``
    (False when it cannot be read)."""
    from nets import checkpoint  # torch, only when a model is asked about

    try:  # load_model refuses a board its net does not play (NetConfig.plays)
        return checkpoint.load_model(path, size, size)[1] == n_in_row
    except (ValueError, OSError):
        return False


def make_opponent(spec: str, seed: int | None = None, seconds: float | None = None) -> Player:
    """The player for ``spec``, for any board; a bad spec (or unreadable model) is a SetupError."""
    if spec.strip() == "human":
        raise SetupError("the opponent must be an AI: 'human' is you, at the board")
    try:
        return make_player(spec, seed, seconds=seconds, leaves_per_step=WINDOW_LEAVES, threads=WINDOW_THREADS)
    except SpecError as error:  # list the forms the window takes ("human" is not one)
        raise SetupError(f"{error.problem.replace('player spec', 'AI spec')}; valid forms:\n{AI_SPECS_HELP}") from error
    except (ValueError, OSError) as error:  # unreadable or foreign checkpoint
        raise SetupError(str(error)) from error


def check_opponent(player: Player, spec: str, size: int, n_in_row: int = N_IN_ROW) -> Player:
    """``player`` if it plays a size x size board with the rule ``n_in_row``; a SetupError for a
    net that does not (another board size, or another rule)."""
    config = getattr(player, "net_config", None)
    if config is not None and not config.plays(size, size):
        hint = f" (pass --size {config.width} to play on its board)" if config.width == config.height else ""
        raise SetupError(f"the model in {spec!r} is for a {config.width}x{config.height} board, "
                         f"not {size}x{size}{hint}")
    check_board = getattr(player, "check_board", None)
    if check_board is not None:  # a net trained for another rule: now, not at the AI's first move
        try:
            check_board(new_board(size, n_in_row))
        except ValueError as error:
            rule = trained_n_in_row(player)
            hint = f" (pass --n-in-row {rule} to play its rule)" if rule not in (None, n_in_row) else ""
            raise SetupError(f"{error}{hint}") from error
    return player


def build_opponent(spec: str, size: int, seed: int | None = None, seconds: float | None = None,
                   n_in_row: int = N_IN_ROW) -> Player:
    """The player for ``spec`` on a size x size board with the rule ``n_in_row``; a net that does
    not play it (or any bad spec) is a SetupError."""
    return check_opponent(make_opponent(spec, seed, seconds), spec, size, n_in_row)


def player_setting(player: Player) -> str:
    """The player and its strength as a spec, with its time cap: "az:models/9x9.pt:1600, at most 3 s a move"."""
    seconds = getattr(player, "seconds", None)
    return player.name + (f", at most {seconds:g} s a move" if seconds is not None else "")


def short_spec(spec: str) -> str:
    """The spec with only the file name of a checkpoint: "az:9x9.pt:400"."""
    kind, _, rest = spec.partition(":")
    if kind == "az":
        path, _, playouts = rest.rpartition(":")
        return f"az:{Path(path).name}:{playouts}"
    return spec


def describe_spec(spec: str) -> str:
    """The player in words, without its strength: "AlphaZero net 9x9.pt", "minimax, depth 2"."""
    kind, _, rest = spec.partition(":")
    if kind == "az":
        return f"AlphaZero net {Path(rest.rpartition(':')[0]).name}"
    if kind == "pure":
        return "pure MCTS"
    if kind == "minimax":
        return f"minimax, depth {rest}"
    if kind == "ab":
        depth, _, vct = rest.partition(":")
        return f"alpha-beta, depth {depth}" + (", VCT" if vct else "")
    return spec


class OneTorchThread:
    """One torch intra-op thread while any window with a net is open; the old count back after the
    last. The net is small and runs batch 1: more threads only fight the window for the cores."""

    users = 0
    saved: int | None = None

    @classmethod
    def acquire(cls) -> bool:
        torch = sys.modules.get("torch")
        if torch is None:
            return False
        if cls.users == 0:
            cls.saved = torch.get_num_threads()
            torch.set_num_threads(1)
        cls.users += 1
        return True

    @classmethod
    def release(cls) -> None:
        cls.users -= 1
        torch = sys.modules.get("torch")
        if cls.users == 0 and torch is not None and cls.saved is not None:
            torch.set_num_threads(cls.saved)


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
    win: float  # (Q + 1) / 2, NaN without a visit (or when the tree could not be read)
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


def _tree_of(player: Player, moves: tuple[int, ...]):
    """The player's search tree (``mcts.BatchedMCTS``) when its root is the position ``moves``."""
    search = getattr(player, "_search", None)  # SearchPlayer keeps it there; no public accessor yet
    roots = getattr(search, "root_moves", None)
    if not roots or list(roots[0]) != list(moves) or search.n_nodes[0] == 0:
        return None
    return search


def _edge(tree, move: int) -> tuple[float, tuple[int, ...]]:
    """(Q of the root's edge ``move`` for the player to move there, the line starting with it)."""
    visits = float(tree.visits[0, 0, move])
    q = float(tree.value_sum[0, 0, move]) / visits if visits > 0 else math.nan
    line, node = [move], int(tree.children[0, 0, move])
    while node != NO_CHILD and len(line) < LINE_PLIES:
        child_visits = tree.visits[0, node]
        if child_visits.max() <= 0:
            break
        best = int(np.argmax(child_visits))
        line.append(best)
        node = int(tree.children[0, node, best])
    return q, tuple(line)


def make_analysis(player: Player, result, moves: tuple[int, ...], to_move: int, playouts: int, seconds: float,
                  state: SearchState, chosen: int = NO_MOVE) -> Analysis:
    """The window's record of a SearchResult; Q and lines from the player's tree when it can be
    read (call it in the thread that searched, between rounds)."""
    visits = np.asarray(result.visits, dtype=np.float64).copy()
    priors = np.asarray(result.priors, dtype=np.float64)
    total = float(visits.sum())
    tree = _tree_of(player, moves)
    top = []
    for move in (int(m) for m in result.ranked_moves()[:TOP_MOVES]):  # the order the move is chosen in
        if visits[move] <= 0:
            break
        q, line = _edge(tree, move) if tree is not None else (math.nan, (move,))
        top.append(MoveStats(move, int(visits[move]), visits[move] / total, (q + 1.0) / 2.0,
                             float(priors[move]), line))
    return Analysis(moves, to_move, visits, float(result.value), playouts, seconds, tuple(top), state, chosen)


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

    def _progress(self, result) -> None:  # worker thread, between two rounds of playouts
        analysis = make_analysis(self.player, result, self.moves, self.to_move, int(result.playouts),
                                 self.elapsed(), SearchState.LIVE)
        with self._lock:
            self._live = analysis

    def _work(self) -> None:
        try:
            analyse = getattr(self.player, "analyse", None)
            if callable(analyse):
                result = analyse(self._board, on_progress=self._progress, should_stop=self._stop.is_set)
                move = result.best_move()
                state = SearchState.STOPPED if self._stop.is_set() else SearchState.DONE
                analysis = make_analysis(self.player, result, self.moves, self.to_move, int(result.playouts),
                                         self.elapsed(), state, move)
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
