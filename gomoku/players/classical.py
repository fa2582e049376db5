"""Players: anything that picks a move for a Board.

A player has a readable ``name``, ``get_action(board) -> move`` (it never changes the board it is
given) and ``reset()`` (called between games). ``make_player`` builds one from a spec string such as
``"minimax:2"``; ``PLAYER_SPECS_HELP`` lists the forms.

The classical players here (and the minimax player, ``gomoku.players.minimax``) score *windows*: every run of ``n_in_row`` consecutive points on the
board. A window holding only one colour's stones is a chance for that colour; the more stones in it,
the closer it is to a line. Shapes fall out of the counts: an open four is two windows of four that
need different points, an open three shows up as three windows of three, a closed three as one.
The windows themselves come from ``gomoku.tactics.geometry.Geometry``, the one owner of line geometry.
"""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import dataclass
from typing import Callable

import numpy as np

from gomoku.game.board import EMPTY, Board, other
from gomoku.tactics.geometry import FOUR, Geometry, stones_short


log = logging.getLogger(__name__)

# Candidate moves for the minimax search (gomoku.players.minimax): empty points at most this far
# (king's moves) from a stone.
CANDIDATE_DISTANCE = 2
# Heuristic point score: a window with k own stones (and none of the opponent's) adds
# ATTACK_FACTOR * HEURISTIC_BASE**k, one with k opponent stones (and none of ours) adds
# HEURISTIC_BASE**k. With base 50 and at most 20 windows through a point (n_in_row 5), one window of
# a higher count outweighs any number of lower ones: own four >> opponent four >> own three >> ...
HEURISTIC_BASE = 50
ATTACK_FACTOR = 2

COLUMN_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

class Player:
    """Base class. Subclasses set ``name`` and implement ``get_action``."""

    name: str = "player"
    starting: float | None = None  # an engine process still starting: the seconds it has to answer START

    def get_action(self, board: Board) -> int:
        """The move to play on ``board`` (which must not be changed)."""
        raise NotImplementedError

    def reset(self) -> None:
        """Forget anything kept from the last game."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def require_moves(board: Board) -> None:
    """Raise ValueError when ``board`` has no legal move (the game has ended): a player is never
    asked for a move there."""
    if not board.legal_moves():
        raise ValueError(f"no legal move: the game has ended ({board!r})")


def _centrality(board: Board, move: int) -> float:
    """Squared distance of ``move`` from the centre of the board (smaller is more central)."""
    row, col = divmod(move, board.width)
    return (row - (board.height - 1) / 2) ** 2 + (col - (board.width - 1) / 2) ** 2


def centre_point(board: Board) -> int:
    """The point at the middle of the board (the lower-right middle one on an even side)."""
    return board.location_to_move((board.height // 2, board.width // 2))


class RandomPlayer(Player):
    """Plays uniformly among the empty points."""

    def __init__(self, rng: np.random.Generator | None = None):
        self.rng = rng if rng is not None else np.random.default_rng()
        self.name = "random"

    def get_action(self, board: Board) -> int:
        require_moves(board)
        moves = board.availables
        return moves[int(self.rng.integers(len(moves)))]


# ---------------------------------------------------------------------------- windows
# The line tables: what the classical searches (heuristic, ``minimax``, ``alphabeta``) keep of
# a board shape, in plain Python for their move-by-move loops, and the counts they start from.
@dataclass(frozen=True)
class LineTable:
    """Plain-Python copies of a shape's windows (from ``Geometry``), each point's neighbours, and
    each window's part in a point's heuristic score (``point_score``)."""

    n_in_row: int
    geometry: Geometry
    windows: tuple[tuple[int, ...], ...]
    through: tuple[tuple[int, ...], ...]  # indices of the windows through each point
    near: tuple[tuple[int, ...], ...]  # points within CANDIDATE_DISTANCE of each point, itself not
    short: tuple[tuple[int, ...], ...]  # a window's stones short of a line, [mine][theirs] (gomoku.tactics.geometry)
    score: tuple[tuple[int, ...], ...]  # [mine][theirs]: what a window adds to the score of a point in it


def window_score(mine: int, theirs: int) -> int:
    """What a window holding ``mine`` stones of the player to move and ``theirs`` of the other adds
    to the heuristic score of playing a point in it: the line it makes plus the line it blocks."""
    return (ATTACK_FACTOR * HEURISTIC_BASE ** mine if not theirs else 0) + (HEURISTIC_BASE ** theirs if not mine else 0)


@functools.lru_cache(maxsize=None)
def window_scores(n_in_row: int) -> tuple[tuple[int, ...], ...]:
    """``window_score`` as a table, ``[mine][theirs]``, for windows of ``n_in_row`` points."""
    return tuple(tuple(window_score(mine, theirs) for theirs in range(n_in_row + 1)) for mine in range(n_in_row + 1))


@functools.lru_cache(maxsize=None)
def _lines(width: int, height: int, n_in_row: int) -> LineTable:
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
    return LineTable(n_in_row, geometry, tuple(map(tuple, windows)), tuple(map(tuple, through)), tuple(near),
                     stones_short(n_in_row), window_scores(n_in_row))


def line_table(board: Board) -> LineTable:
    """The line tables of ``board``'s shape (made once a shape)."""
    return _lines(board.width, board.height, board.n_in_row)


def board_cells(board: Board) -> np.ndarray:
    """The board as ``Geometry`` takes it: int8 [size + 1], each point's player (0 empty), padding."""
    cells = np.zeros(board.size + 1, dtype=np.int8)
    for move, player in board.states.items():
        cells[move] = player
    return cells


def window_counts(board: Board, lines: LineTable) -> list[list[int]]:
    """counts[player][window] = that player's stones in the window (index 0 unused)."""
    counts = lines.geometry.window_counts(board_cells(board)[None])[0]
    return [[], counts[0].tolist(), counts[1].tolist()]


def point_score(point: int, me: int, lines: LineTable, counts: list[list[int]]) -> int:
    """Heuristic value of playing ``point`` for ``me``: lines it makes plus lines it blocks
    (``window_score`` over the windows through it)."""
    mine, theirs, score = counts[me], counts[other(me)], lines.score
    return sum(score[mine[window]][theirs[window]] for window in lines.through[point])


def _winning_points(board: Board, player: int, lines: LineTable, counts: list[list[int]]) -> list[int]:
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
    lines = line_table(board)
    return _winning_points(board, player, lines, window_counts(board, lines))


class HeuristicPlayer(Player):
    """One-ply player: takes a win, else blocks a four, else the point with the best window score.

    Ties go to a random one of them when ``rng`` is given, else to the most central (then lowest).
    """

    def __init__(self, rng: np.random.Generator | None = None):
        self.rng = rng
        self.name = "heuristic"

    def get_action(self, board: Board) -> int:
        require_moves(board)
        me = board.current_player
        lines = line_table(board)
        counts = window_counts(board, lines)
        wins = _winning_points(board, me, lines, counts)
        if wins:
            return self._pick(board, wins)
        blocks = _winning_points(board, other(me), lines, counts)
        candidates = blocks if blocks else board.availables
        scores = {p: point_score(p, me, lines, counts) for p in candidates}
        best = max(scores.values())
        return self._pick(board, [p for p, s in scores.items() if s == best])

    def _pick(self, board: Board, moves: list[int]) -> int:
        if self.rng is not None:
            return moves[int(self.rng.integers(len(moves)))]
        return min(moves, key=lambda m: (_centrality(board, m), m))


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
        require_moves(board)
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
