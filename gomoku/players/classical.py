"""Players: anything that picks a move for a Board.

A player has a readable ``name``, ``get_action(board) -> move`` (it never changes the board it is
given) and ``reset()`` (called between games). ``make_player`` builds one from a spec string such as
``"minimax:2"``; ``PLAYER_SPECS_HELP`` lists the forms.

The classical players here score *windows*: every run of ``n_in_row`` consecutive points on the
board. A window holding only one colour's stones is a chance for that colour; the more stones in it,
the closer it is to a line. Shapes fall out of the counts: an open four is two windows of four that
need different points, an open three shows up as three windows of three, a closed three as one.
The windows themselves come from ``mcts.geometry.Geometry``, the one owner of line geometry.
"""

from __future__ import annotations

import functools
import logging
import math
import re
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from gomoku.game.board import DRAW, EMPTY, Board, other
from mcts.geometry import FOUR, THREE, Geometry, stones_short


log = logging.getLogger(__name__)

# Candidate moves for the search: empty points at most this far (king's moves) from a stone.
CANDIDATE_DISTANCE = 2
# The search looks at only this many candidates per node, the best by the heuristic score.
MINIMAX_TOP_K = 12
# Heuristic point score: a window with k own stones (and none of the opponent's) adds
# ATTACK_FACTOR * HEURISTIC_BASE**k, one with k opponent stones (and none of ours) adds
# HEURISTIC_BASE**k. With base 50 and at most 20 windows through a point (n_in_row 5), one window of
# a higher count outweighs any number of lower ones: own four >> opponent four >> own three >> ...
HEURISTIC_BASE = 50
ATTACK_FACTOR = 2
# Static evaluation of the search: each window with k >= 1 stones of one colour only is worth
# EVAL_BASE**k to that colour.
EVAL_BASE = 10
# The deepest minimax search: each ply costs about 5x the one before (depth 6 takes about a second
# a move, depth 8 ten seconds and more), so deeper ones would not answer in any useful time.
MAX_MINIMAX_DEPTH = 8
# With a time limit, the clock is read every this many nodes.
CLOCK_NODES = 64

COLUMN_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

class Player:
    """Base class. Subclasses set ``name`` and implement ``get_action``."""

    name: str = "player"

    def get_action(self, board: Board) -> int:
        """The move to play on ``board`` (which must not be changed)."""
        raise NotImplementedError

    def reset(self) -> None:
        """Forget anything kept from the last game."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def _require_moves(board: Board) -> None:
    if not board.legal_moves():
        raise ValueError(f"no legal move: the game has ended ({board!r})")


def _centrality(board: Board, move: int) -> float:
    """Squared distance of ``move`` from the centre of the board (smaller is more central)."""
    row, col = divmod(move, board.width)
    return (row - (board.height - 1) / 2) ** 2 + (col - (board.width - 1) / 2) ** 2


def _centre(board: Board) -> int:
    return board.location_to_move((board.height // 2, board.width // 2))


class RandomPlayer(Player):
    """Plays uniformly among the empty points."""

    def __init__(self, rng: np.random.Generator | None = None):
        self.rng = rng if rng is not None else np.random.default_rng()
        self.name = "random"

    def get_action(self, board: Board) -> int:
        _require_moves(board)
        moves = board.availables
        return moves[int(self.rng.integers(len(moves)))]


# ---------------------------------------------------------------------------- windows
@dataclass(frozen=True)
class _Lines:
    """Plain-Python copies of a shape's windows (from ``Geometry``), and each point's neighbours."""

    n_in_row: int
    geometry: Geometry
    windows: tuple[tuple[int, ...], ...]
    through: tuple[tuple[int, ...], ...]  # indices of the windows through each point
    near: tuple[tuple[int, ...], ...]  # points within CANDIDATE_DISTANCE of each point, itself not
    short: tuple[tuple[int, ...], ...]  # a window's stones short of a line, [mine][theirs] (mcts.geometry)


@functools.lru_cache(maxsize=None)
def _lines(width: int, height: int, n_in_row: int) -> _Lines:
    geometry = Geometry(width, height, n_in_row)
    windows, through = geometry.window_lists()
    near = []
    for row in range(height):
        for col in range(width):
            near.append(tuple(
                r * width + c
                for r in range(max(0, row - CANDIDATE_DISTANCE), min(height, row + CANDIDATE_DISTANCE + 1))
                for c in range(max(0, col - CANDIDATE_DISTANCE), min(width, col + CANDIDATE_DISTANCE + 1))
                if (r, c) != (row, col)))
    return _Lines(n_in_row, geometry, tuple(map(tuple, windows)), tuple(map(tuple, through)), tuple(near),
                  stones_short(n_in_row))


def _lines_of(board: Board) -> _Lines:
    return _lines(board.width, board.height, board.n_in_row)


def _cells(board: Board) -> np.ndarray:
    """The board as ``Geometry`` takes it: int8 [size + 1], each point's player (0 empty), padding."""
    cells = np.zeros(board.size + 1, dtype=np.int8)
    for move, player in board.states.items():
        cells[move] = player
    return cells


def _window_counts(board: Board, lines: _Lines) -> list[list[int]]:
    """counts[player][window] = that player's stones in the window (index 0 unused)."""
    counts = lines.geometry.window_counts(_cells(board)[None])[0]
    return [[], counts[0].tolist(), counts[1].tolist()]


def _point_score(point: int, me: int, lines: _Lines, counts: list[list[int]]) -> int:
    """Heuristic value of playing ``point`` for ``me``: lines it makes plus lines it blocks."""
    mine, theirs = counts[me], counts[other(me)]
    score = 0
    for window in lines.through[point]:
        if theirs[window] == 0:
            score += ATTACK_FACTOR * HEURISTIC_BASE ** mine[window]
        if mine[window] == 0:
            score += HEURISTIC_BASE ** theirs[window]
    return score


def _winning_points(board: Board, player: int, lines: _Lines, counts: list[list[int]]) -> list[int]:
    """Empty points where ``player`` would complete a line at once (the empty point of each of its
    fours), ascending."""
    short = lines.short
    mine, theirs = counts[player], counts[other(player)]
    points = set()
    for index, window in enumerate(lines.windows):
        if short[mine[index]][theirs[index]] == FOUR:
            points.update(p for p in window if board.stone(p) == EMPTY)
    return sorted(points)


def winning_points(board: Board, player: int) -> list[int]:
    """Empty points where ``player`` would complete a line of ``n_in_row`` (or more) at once, ascending."""
    lines = _lines_of(board)
    return _winning_points(board, player, lines, _window_counts(board, lines))


class HeuristicPlayer(Player):
    """One-ply player: takes a win, else blocks a four, else the point with the best window score.

    Ties go to a random one of them when ``rng`` is given, else to the most central (then lowest).
    """

    def __init__(self, rng: np.random.Generator | None = None):
        self.rng = rng
        self.name = "heuristic"

    def get_action(self, board: Board) -> int:
        _require_moves(board)
        me = board.current_player
        lines = _lines_of(board)
        counts = _window_counts(board, lines)
        wins = _winning_points(board, me, lines, counts)
        if wins:
            return self._pick(board, wins)
        blocks = _winning_points(board, other(me), lines, counts)
        candidates = blocks if blocks else board.availables
        scores = {p: _point_score(p, me, lines, counts) for p in candidates}
        best = max(scores.values())
        return self._pick(board, [p for p, s in scores.items() if s == best])

    def _pick(self, board: Board, moves: list[int]) -> int:
        if self.rng is not None:
            return moves[int(self.rng.integers(len(moves)))]
        return min(moves, key=lambda m: (_centrality(board, m), m))


# ---------------------------------------------------------------------------- minimax
class _OutOfTime(Exception):
    """The search's deadline passed (the board copy is left mid-search)."""


class _Search:
    """A board copy with window counts kept up to date move by move, for alpha-beta search.
    ``deadline`` (a ``time.perf_counter()`` value, or None) stops ``negamax`` with _OutOfTime."""

    def __init__(self, board: Board):
        self.deadline: float | None = None
        self.nodes = 0
        self.board = board.copy()
        self.lines = _lines_of(board)
        self.counts = _window_counts(self.board, self.lines)
        self.fours = [0, 0, 0]  # per player: windows one stone short of a line, free of the other
        self.threes = [0, 0, 0]  # per player: windows two stones short of a line, free of the other
        self.pattern = [0, 0, 0]  # per player: sum of EVAL_BASE**k over their open windows
        for window in range(len(self.lines.windows)):
            self._count_window(window, +1)
        self.near = [0] * board.size  # stones within CANDIDATE_DISTANCE of each point
        for move in self.board.moves:
            for point in self.lines.near[move]:
                self.near[point] += 1
        # Bigger than any pattern sum; a win found ``ply`` plies down scores win - ply.
        self.win = 10 * len(self.lines.windows) * EVAL_BASE ** board.n_in_row + 10 * board.size
        self.infinity = 2 * self.win

    def _count_window(self, window: int, sign: int) -> None:
        """Add (sign +1) or remove (-1) the window's terms in ``fours``, ``threes`` and ``pattern``."""
        c1, c2 = self.counts[1][window], self.counts[2][window]
        short = self.lines.short
        for player, mine, theirs in ((1, c1, c2), (2, c2, c1)):
            if theirs:
                continue
            if mine:
                self.pattern[player] += sign * EVAL_BASE ** mine
            shape = short[mine][theirs]
            if shape == FOUR:
                self.fours[player] += sign
            elif shape == THREE:
                self.threes[player] += sign

    def play(self, move: int) -> None:
        player = self.board.current_player
        self.board.do_move(move)
        self._update(move, player, +1)

    def undo(self) -> None:
        move = self.board.last_move
        player = self.board.stone(move)
        self.board.undo_move()
        self._update(move, player, -1)

    def _update(self, move: int, player: int, step: int) -> None:
        counts = self.counts[player]
        for window in self.lines.through[move]:
            self._count_window(window, -1)
            counts[window] += step
            self._count_window(window, +1)
        for point in self.lines.near[move]:
            self.near[point] += step

    def winning_points(self, player: int) -> list[int]:
        if not self.fours[player]:
            return []
        return _winning_points(self.board, player, self.lines, self.counts)

    def has_double_threat(self, player: int) -> bool:
        """Whether ``player`` has a move that makes two different winning points (an open four,
        or two fours at once). With the move and no four of the opponent's to answer, that wins."""
        if not self.threes[player]:
            return False
        short = self.lines.short
        mine, theirs = self.counts[player], self.counts[other(player)]
        threat_of: dict[int, int] = {}  # a point -> a winning point that playing it would make
        for index, window in enumerate(self.lines.windows):
            if short[mine[index]][theirs[index]] == THREE:
                first, second = (p for p in window if self.board.stone(p) == EMPTY)
                for move, threat in ((first, second), (second, first)):
                    if threat_of.setdefault(move, threat) != threat:
                        return True
        return False

    def ordered_moves(self, me: int) -> list[int]:
        """Moves worth searching, best first. Only the blocks when the opponent threatens a line."""
        board = self.board
        forced = self.winning_points(other(me))
        if forced:
            candidates = forced
        elif board.moves:
            candidates = [p for p in range(board.size) if self.near[p] and board.stone(p) == EMPTY]
            candidates = candidates or board.availables
        else:
            return [_centre(board)]
        scored = sorted(candidates, key=lambda p: -_point_score(p, me, self.lines, self.counts))
        return scored if forced else scored[:MINIMAX_TOP_K]

    def evaluate(self, me: int) -> int:
        """Static value for the side to move ``me``: own windows minus the opponent's."""
        return self.pattern[me] - self.pattern[other(me)]

    def negamax(self, depth: int, alpha: int, beta: int, ply: int) -> int:
        """Fail-soft alpha-beta value of the position for the side to move."""
        self.nodes += 1
        if self.deadline is not None and self.nodes % CLOCK_NODES == 0 and time.perf_counter() > self.deadline:
            raise _OutOfTime
        board = self.board
        if board.winner != DRAW:
            return -(self.win - ply)  # the previous move made a line
        if len(board.moves) == board.size:
            return 0
        me = board.current_player
        if self.fours[me]:
            return self.win - (ply + 1)  # a line to complete: wins with the next move
        # Sure results a few plies ahead, found without search:
        opponent_wins = self.winning_points(other(me))
        if len(opponent_wins) > 1:
            return -(self.win - (ply + 2))  # two points to block: the opponent wins next move
        if not opponent_wins and self.has_double_threat(me):
            return self.win - (ply + 3)  # an open four now, a line the move after
        if depth == 0:
            return self.evaluate(me)
        best = -self.infinity
        for move in self.ordered_moves(me):
            self.play(move)
            score = -self.negamax(depth - 1, -beta, -alpha, ply + 1)
            self.undo()
            if score > best:
                best = score
                alpha = max(alpha, score)
                if alpha >= beta:
                    break
        return best


class MinimaxPlayer(Player):
    """Alpha-beta (negamax) to ``depth`` plies over nearby candidates, with a window evaluation.

    Depth 1 looks at its own move only. Wins in one are taken and an opponent's four is blocked
    before any search. Moves of equal value go to a random one when ``rng`` is given, else to the
    one the heuristic orders first.

    ``seconds`` (optional) caps the thinking time per move: the search then deepens one ply at a
    time (1, 2, ... ``depth``) and plays the choice of the deepest search that ended in time
    (depth 1 always ends). A search that ends in time chooses as the one of a player without a cap.
    """

    def __init__(self, depth: int, rng: np.random.Generator | None = None, seconds: float | None = None):
        if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or not 1 <= depth <= MAX_MINIMAX_DEPTH:
            raise ValueError(f"minimax depth must be an integer from 1 to {MAX_MINIMAX_DEPTH}, got {depth!r}")
        if seconds is not None and not (math.isfinite(seconds) and seconds > 0):
            raise ValueError(f"minimax seconds must be a positive number, got {seconds!r}")
        self.depth = int(depth)
        self.rng = rng
        self.seconds = seconds
        self.name = f"minimax:{self.depth}"
        self.last_depth = 0  # the depth of the search that chose the last move

    def get_action(self, board: Board) -> int:
        _require_moves(board)
        search = _Search(board)
        me = board.current_player
        wins = search.winning_points(me)
        if wins:
            return self._pick(wins)
        moves = search.ordered_moves(me)
        if len(moves) == 1:
            return moves[0]
        if self.seconds is None:
            self.last_depth = self.depth
            return self._pick(self._best_moves(search, moves, self.depth))
        deadline = time.perf_counter() + self.seconds
        for depth in range(1, self.depth + 1):
            search.deadline = deadline if depth > 1 else None
            try:
                best_moves = self._best_moves(search, moves, depth)
            except _OutOfTime:  # the board copy is mid-search now: not used again
                break
            self.last_depth = depth
            if time.perf_counter() >= deadline:
                break
        return self._pick(best_moves)

    def _best_moves(self, search: _Search, moves: list[int], depth: int) -> list[int]:
        """The moves of the best value, searched ``depth`` plies deep, in the order of ``moves``."""
        best_score, best_moves = -search.infinity, []
        for move in moves:
            search.play(move)
            # A window just below the best so far, so that equal moves get exact scores too.
            score = -search.negamax(depth - 1, -search.infinity, -(best_score - 1), 1)
            search.undo()
            if score > best_score:
                best_score, best_moves = score, [move]
            elif score == best_score:
                best_moves.append(move)
        log.debug("%s at depth %d: best %s at %s", self.name, depth, best_score, best_moves)
        return best_moves

    def _pick(self, moves: list[int]) -> int:
        if self.rng is not None and len(moves) > 1:
            return moves[int(self.rng.integers(len(moves)))]
        return moves[0]


# ---------------------------------------------------------------------------- human
def format_point(board: Board, move: int) -> str:
    """Move -> its name in standard notation: column letter, row number counted from the bottom
    (row 1 is the last row of ``move = row * width + col``), e.g. 40 -> "E5" and 72 -> "A1" on 9x9."""
    row, col = board.move_to_location(move)
    return f"{COLUMN_LETTERS[col]}{board.height - row}"


def parse_point(board: Board, text: str) -> int:
    """ "E5" (standard notation: column letter, row number counted from the bottom) -> move.

    Raises ValueError with a readable reason when the text is not a point on this board.
    """
    match = re.fullmatch(r"\s*([A-Za-z])\s*(\d+)\s*", text)
    if not match:
        raise ValueError("expected a column letter and a row number, like E5")
    col = COLUMN_LETTERS.index(match.group(1).upper())
    row = board.height - int(match.group(2))
    if not (0 <= col < board.width and 0 <= row < board.height):
        last = f"{COLUMN_LETTERS[board.width - 1]}{board.height}"
        raise ValueError(f"off the board: columns A-{COLUMN_LETTERS[board.width - 1]}, "
                         f"rows 1-{board.height} (A1 to {last})")
    return board.location_to_move((row, col))


class InputEnded(KeyboardInterrupt):
    """The person's input ended (end of file) before they gave a move: the game stops as on Ctrl-C."""


class HumanPlayer(Player):
    """Asks at the terminal for a point like E5 (column letter, row number as printed); raises
    InputEnded (a KeyboardInterrupt) when the input ends."""

    def __init__(self, input_fn: Callable[[str], str] = input, output_fn: Callable[[str], None] = print,
                 name: str = "human"):
        self.input_fn = input_fn
        self.output_fn = output_fn
        self.name = name

    def get_action(self, board: Board) -> int:
        _require_moves(board)
        mark = "X" if board.current_player == board.start_player else "O"
        self.output_fn(str(board))
        if board.moves:
            self.output_fn(f"last move: {format_point(board, board.last_move)}")
        while True:
            try:
                text = self.input_fn(f"{self.name} ({mark}), your move (e.g. E5): ")
            except EOFError:
                self.output_fn("")  # end the prompt's line
                raise InputEnded(f"the input of {self.name} ended") from None
            try:
                move = parse_point(board, text)
            except ValueError as error:
                self.output_fn(f"bad input {text!r}: {error}")
                continue
            if board.stone(move) != EMPTY:
                self.output_fn(f"{format_point(board, move)} is already taken, pick an empty point")
                continue
            return move
