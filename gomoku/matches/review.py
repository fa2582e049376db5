"""Where a lost game went wrong, as the exact threat search (``gomoku.tactics.vct``) sees it.

For each move of the loser, in order: would the winner, to move next, have a VCT (a forced win
by fours and threes)? The first move after which the solver proves one is the *turning point*.
Then every other move the loser had there is tried the same way:
- ``LET_IN``: some other move leaves the winner without a VCT (proved, or a line of the loser's
  own completed): the loss is a move that a threat search at this budget would have avoided;
- ``UNSETTLED``: no other move is proved safe, but the solver ran out of budget on some of them;
- ``LOST_BEFORE``: every move there gives the winner a proved VCT, so the game was lost earlier,
  to an attack that was not a VCT where it began (a quiet move first) or that was longer than the
  budget saw;
- ``LOST_IN_OPENING``: the loser never moved after the opening (the start position of a match's
  random opening let the side to move win at once): no move of the loser's to blame.
Otherwise a turning point always exists: at the latest, the loser's last move left the winner its five.

This is the in-house form of the judge of issue 25 (a strong engine replaying the loser's moves).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Sequence

from gomoku.game.board import DEFAULT_N_IN_ROW, DEFAULT_SIZE, Board, other
from gomoku.players.classical import board_cells, winning_points
from gomoku.tactics import solvers
from gomoku.tactics.geometry import Geometry
from gomoku.tactics.threats import ThreatStatus
from gomoku.tactics.vct import VctSolver

REVIEW_NODES = 200_000  # node budget of each solve: twice the az player's deep checks (docs/threats.md)
# The keys of a line of ``evaluate.py --games-out`` that a review reads, and their JSON types.
GAME_LINE_KEYS = {"game": int, "opponent": str, "result": str, "width": int, "height": int, "n_in_row": int,
                  "moves": str, "player_colour": str}
PLAYER_COLOURS = ("black", "white")
SHOWN_VALUE_CHARS = 40  # of a bad value, in the message that names its key


def game_line_problem(line: object) -> str | None:
    """What makes ``line`` (one decoded JSON line) not a game of ``evaluate.py --games-out``, naming
    the key (e.g. "'moves' is a list, not a string"); None when it is one."""
    if not isinstance(line, dict):
        return f"a JSON {type(line).__name__}, not an object"
    for key, kind in GAME_LINE_KEYS.items():
        if key not in line:
            return f"no {key!r}"
        value = line[key]
        if not isinstance(value, kind) or isinstance(value, bool):
            return f"{key!r} is {_json_type(value)}, not {_json_type(kind())}"
    if line["player_colour"] not in PLAYER_COLOURS:
        shown = repr(line["player_colour"])[:SHOWN_VALUE_CHARS]
        return f"'player_colour' is {shown}, not {' or '.join(PLAYER_COLOURS)}"
    return None


def _json_type(value: object) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list",
             dict: "an object", type(None): "null"}
    return names.get(type(value), type(value).__name__)


class Verdict(enum.Enum):
    LET_IN = "let in"
    UNSETTLED = "unsettled"
    LOST_BEFORE = "lost before"
    LOST_IN_OPENING = "lost in the opening"


@dataclass(frozen=True)
class Review:
    """The review of one lost game: the verdict, the turning point (``ply``, 1-based, and the
    loser's ``move``), the winner's first move of its VCT there (``reply``), the loser's other
    moves after which the winner has no proved VCT (``safe``) and those the solver left unsettled
    (``unsettled``), ascending. ``LOST_IN_OPENING``: ``ply`` and ``move`` are the opening's last,
    ``reply`` the winner's winning move."""

    verdict: Verdict
    ply: int
    move: int
    reply: int
    safe: tuple[int, ...] = ()
    unsettled: tuple[int, ...] = ()


def review_loss(moves: Sequence[int], loser: int, width: int = DEFAULT_SIZE, height: int = DEFAULT_SIZE,
                n_in_row: int = DEFAULT_N_IN_ROW, start_player: int = 1, nodes: int = REVIEW_NODES,
                opening: int = 0) -> Review:
    """Review a game that ``loser`` (1 or 2, the stones) lost, from its ``moves`` (ValueError
    when they do not end with the other side's line); the first ``opening`` moves were the start
    position's, played by neither side, so none of them is a turning point (and a game the loser
    never moved in after them is ``LOST_IN_OPENING``)."""
    if loser not in (1, 2):
        raise ValueError(f"loser must be 1 or 2, got {loser!r}")
    winner = other(loser)
    if Board.from_moves(moves, width, height, n_in_row, start_player).game_end() != (True, winner):
        colour = "black" if winner == start_player else "white"  # black moves first
        raise ValueError(f"the moves do not end in a win for {colour}")
    solver = solvers()[1](Geometry(width, height, n_in_row), nodes)  # compiled: the reference's answers
    board = Board(width, height, n_in_row, start_player)
    loser_moved = False
    for ply, move in enumerate(moves, 1):
        mover = board.current_player
        board.do_move(move)
        if mover != loser or ply <= opening or board.game_end()[0]:
            continue
        loser_moved = True
        found = solver.solve(board_cells(board), winner)
        if found.win:
            before = Board.from_moves(moves[:ply - 1], width, height, n_in_row, start_player)
            safe, unsettled = _other_moves(solver, before, move, loser)
            verdict = Verdict.LET_IN if safe else Verdict.UNSETTLED if unsettled else Verdict.LOST_BEFORE
            return Review(verdict, ply, move, found.move, safe, unsettled)
    if not loser_moved:  # the opening left the winner a five to make at once
        return Review(Verdict.LOST_IN_OPENING, opening, moves[opening - 1], moves[-1])
    raise AssertionError("the loser's last move left the winner its five")  # checked above: unreachable


def _other_moves(solver: VctSolver, before: Board, played: int, loser: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``loser``'s moves in ``before`` (but ``played``) after which the winner has no proved VCT
    (its own line among them), and those the solver leaves unsettled, ascending."""
    lines = set(winning_points(before, loser))  # the loser's own line: not lost
    cells, winner = board_cells(before), other(loser)
    safe, unsettled = [], []
    for move in before.availables:
        if move == played:
            continue
        if move in lines:
            safe.append(move)
            continue
        cells[move] = loser
        status = solver.solve(cells, winner).status
        cells[move] = 0
        if status is ThreatStatus.NO_WIN:
            safe.append(move)
        elif status is ThreatStatus.UNKNOWN:
            unsettled.append(move)
    return tuple(safe), tuple(unsettled)
