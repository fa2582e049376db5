"""The one negamax of the classical players: alpha-beta over the windows of ``gomoku.players.classical``'s
line tables, with the window counts, fours and threes kept up to date move by move.

``minimax:DEPTH`` (``gomoku.players.minimax``) and ``ab:DEPTH`` (``gomoku.players.alphabeta``) are
two configurations of it, a ``NegamaxStyle`` each: the window values of the static evaluation and
of the move ordering, how many candidates an inner node searches, whether a forced block costs
a ply, and whether the horizon asks the VCF solver. What both share, at every node:

- a line just made loses for the side to move, a full board is a draw;
- a four of the side to move wins next move; two fours of the opponent's lose; a move that makes
  two different winning points (an open four, a double four) wins when the opponent has no four;
- otherwise the moves near the stones, best first by the ordering score (only the block when the
  opponent has a four), searched fail-soft with alpha-beta.

The search stops with ``OutOfBudget`` past its node budget (``max_nodes``) or its clock
(``deadline``, read every ``CLOCK_NODES`` nodes); which windows are fours and threes comes from
``gomoku.tactics.geometry.stones_short``, the one definition of the shapes.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from typing import Callable, Sequence

from gomoku.game.board import DRAW, Board, other
from gomoku.players.classical import board_cells, centre_point, line_table
from gomoku.tactics import solvers as tactics_solvers
from gomoku.tactics.geometry import FOUR, THREE, Geometry
from gomoku.tactics.threats import MIN_N_IN_ROW, VcfSolver

CLOCK_NODES = 64  # with a deadline, the clock is read every this many nodes


@dataclass(frozen=True)
class WindowTables:
    """Per (own stones, opponent stones) in a window: how many stones short of a line it is for
    its owner (0 when it holds both colours or none: no shape), its value to its owner in the
    static evaluation, and its part in the ordering score of a point in it for the player to move.
    A win scores ``10 * windows * win_unit + 10 * points`` less the plies to it."""

    missing: tuple[tuple[int, ...], ...]
    value: tuple[tuple[int, ...], ...]
    order: tuple[tuple[int, ...], ...]
    win_unit: int


@dataclass(frozen=True)
class NegamaxStyle:
    """What makes one classical negamax player differ from another (see the module docstring)."""

    tables: Callable[[int], WindowTables]  # by n_in_row
    top_k: int  # candidates searched per inner node, the best by the ordering score
    free_blocks: bool  # a forced block is searched at the same depth (True) or costs a ply
    horizon_nodes: int = 0  # > 0: at the horizon, a VCF solve of this budget where the mover has a three


class OutOfBudget(Exception):
    """The search passed its node budget or its deadline (the board copy is left mid-search)."""


@functools.lru_cache(maxsize=None)
def _horizon_solver(width: int, height: int, n_in_row: int, nodes: int) -> VcfSolver | None:
    if not nodes or n_in_row < MIN_N_IN_ROW:
        return None
    return tactics_solvers()[0](Geometry(width, height, n_in_row), nodes)


def _move_shape(window: int, before: int, after: int, fours: set[int], threes: set[int]) -> None:
    """A window's stones-short count went from ``before`` to ``after``: keep the shape sets."""
    if before == after:
        return
    if before == FOUR:
        fours.discard(window)
    elif before == THREE:
        threes.discard(window)
    if after == FOUR:
        fours.add(window)
    elif after == THREE:
        threes.add(window)


class NegamaxSearch:
    """A board copy with per-window counts, fours and threes kept up to date move by move, and
    the negamax over it in ``style``. ``max_nodes`` (None: no budget) and ``deadline`` (a
    ``time.perf_counter()`` value, or None) stop it with OutOfBudget; ``prune=False``: plain
    negamax, without alpha-beta cut-offs."""

    def __init__(self, board: Board, style: NegamaxStyle, max_nodes: int | None = None, prune: bool = True):
        self.style = style
        self.board = board.copy()
        self.cells = board_cells(board)  # the same position as the VCF solver takes it
        lines = line_table(board)
        self.windows, self.through, self.near_of = lines.windows, lines.through, lines.near
        self.tables = style.tables(lines.n_in_row)
        self.horizon = _horizon_solver(board.width, board.height, board.n_in_row, style.horizon_nodes)
        self.max_nodes, self.prune, self.nodes = max_nodes, prune, 0
        self.deadline: float | None = None
        counts = lines.geometry.window_counts(self.cells[None])[0]
        self.counts = [[], counts[0].tolist(), counts[1].tolist()]
        self.fours: list[set[int]] = [set(), set(), set()]  # per player: windows one stone short
        self.threes: list[set[int]] = [set(), set(), set()]  # per player: windows two stones short
        self.pattern = [0, 0, 0]  # per player: the evaluation's window sum
        for window in range(len(self.windows)):
            self._count(window, +1)
        self.near = [0] * board.size  # stones within the candidate distance of each point
        for move in self.board.moves:
            for point in self.near_of[move]:
                self.near[point] += 1
        self.win = 10 * len(self.windows) * self.tables.win_unit + 10 * board.size
        self.infinity = 2 * self.win

    def _count(self, window: int, sign: int) -> None:
        c1, c2 = self.counts[1][window], self.counts[2][window]
        for player, mine, theirs in ((1, c1, c2), (2, c2, c1)):
            missing = self.tables.missing[mine][theirs]
            if not missing:
                continue
            self.pattern[player] += sign * self.tables.value[mine][theirs]
            if missing in (FOUR, THREE):
                shapes = self.fours[player] if missing == FOUR else self.threes[player]
                if sign > 0:
                    shapes.add(window)
                else:
                    shapes.discard(window)

    def play(self, move: int) -> None:
        player = self.board.current_player
        self.board.do_move(move)
        self.cells[move] = player
        self._update(move, player, +1)

    def undo(self) -> None:
        move = self.board.last_move
        player = self.board.stone(move)
        self.board.undo_move()
        self.cells[move] = 0
        self._update(move, player, -1)

    def _update(self, move: int, player: int, step: int) -> None:
        """``player``'s stone at ``move`` added (step +1) or taken back (-1): the windows through it."""
        them = other(player)
        mine, theirs = self.counts[player], self.counts[them]
        missing, value = self.tables.missing, self.tables.value
        my_gain = their_gain = 0
        for window in self.through[move]:
            a, b = mine[window], theirs[window]
            after = mine[window] = a + step
            my_gain += value[after][b] - value[a][b]
            _move_shape(window, missing[a][b], missing[after][b], self.fours[player], self.threes[player])
            if not (a and after):  # the opponent's window is spoiled, or free again (or, empty, a shape)
                their_gain += value[b][after] - value[b][a]
                _move_shape(window, missing[b][a], missing[b][after], self.fours[them], self.threes[them])
        self.pattern[player] += my_gain
        self.pattern[them] += their_gain
        for point in self.near_of[move]:
            self.near[point] += step

    # ------------------------------------------------------------------ shapes
    def _empty(self, window: int) -> list[int]:
        stone = self.board.stone
        return [p for p in self.windows[window] if not stone(p)]

    def winning_points(self, player: int) -> list[int]:
        """The points where ``player`` would complete a line at once, ascending."""
        return sorted({self._empty(w)[0] for w in self.fours[player]})

    def four_moves(self, player: int) -> dict[int, set[int]]:
        """Points that make a four for ``player`` -> the winning points each would leave."""
        made: dict[int, set[int]] = {}
        for window in self.threes[player]:
            first, second = self._empty(window)
            made.setdefault(first, set()).add(second)
            made.setdefault(second, set()).add(first)
        return made

    def has_double_threat(self, player: int) -> bool:
        """A move making two different winning points (an open four, a double four)."""
        return any(len(points) > 1 for points in self.four_moves(player).values())

    # ------------------------------------------------------------------ search
    def point_score(self, point: int, me: int) -> int:
        """The ordering score of ``me`` playing ``point``: the style's window order values."""
        mine, theirs, order = self.counts[me], self.counts[other(me)], self.tables.order
        return sum(order[mine[w]][theirs[w]] for w in self.through[point])

    def best_first(self, points: Sequence[int], me: int) -> list[int]:
        """``points`` by their ordering score for ``me``, the best first (ties in their order)."""
        return sorted(points, key=lambda p: -self.point_score(p, me))

    def ordered_moves(self, me: int, top_k: int) -> list[int]:
        """The ``top_k`` best of the empty points near the stones (the centre on an empty board)."""
        board = self.board
        if not board.moves:
            return [centre_point(board)]
        candidates = [p for p in range(board.size) if self.near[p] and not board.stone(p)] or board.availables
        return self.best_first(candidates, me)[:top_k]

    def evaluate(self, me: int) -> int:
        """The static value for the side to move ``me``: own windows minus the opponent's."""
        return self.pattern[me] - self.pattern[other(me)]

    def _check_budget(self) -> None:
        self.nodes += 1
        if self.max_nodes is not None and self.nodes > self.max_nodes:
            raise OutOfBudget
        if self.deadline is not None and self.nodes % CLOCK_NODES == 0 and time.perf_counter() > self.deadline:
            raise OutOfBudget

    def negamax(self, depth: int, alpha: int, beta: int, ply: int) -> int:
        """Fail-soft alpha-beta value for the side to move (plain negamax when not ``prune``)."""
        self._check_budget()
        board = self.board
        if board.winner != DRAW:
            return -(self.win - ply)  # the previous move made a line
        if len(board.moves) == board.size:
            return 0
        me = board.current_player
        if self.fours[me]:
            return self.win - (ply + 1)  # a line to complete: wins with the next move
        blocks = self.winning_points(other(me))
        if len(blocks) > 1:
            return -(self.win - (ply + 2))  # two points to block: the opponent wins next move
        if not blocks and self.has_double_threat(me):
            return self.win - (ply + 3)  # an open four now, a line the move after
        free = bool(blocks) and self.style.free_blocks
        if depth <= 0 and not free:  # the horizon: a win by fours, else the static value
            if self.threes[me] and self.horizon is not None and \
                    self.horizon.solve(self.cells, me, self.style.horizon_nodes).win:
                return self.win - (ply + 3)
            return self.evaluate(me)
        moves, best = blocks or self.ordered_moves(me, self.style.top_k), -self.infinity
        for move in moves:
            self.play(move)
            score = -self.negamax(depth if free else depth - 1, -beta, -alpha, ply + 1)
            self.undo()
            if score > best:
                best = score
                alpha = max(alpha, score)
                if self.prune and alpha >= beta:
                    break
        return best

    def root_scores(self, moves: Sequence[int], depth: int, margin: int = 0) -> list[int]:
        """Each root move's value: exact for those within ``margin`` of the best (the window sits
        just below that), an upper bound for the others."""
        best, scores = -self.infinity, []
        for move in moves:
            self.play(move)
            try:
                low = -self.infinity if not self.prune else -(best - margin - 1)
                score = -self.negamax(depth - 1, -self.infinity, low, 1)
            finally:
                self.undo()
            scores.append(score)
            best = max(best, score)
        return scores

    def best_moves(self, moves: Sequence[int], depth: int, margin: int = 0) -> tuple[list[int], list[int]]:
        """(the moves valued within ``margin`` of the best, in the order of ``moves``; every
        move's score, as ``root_scores``), searched ``depth`` plies deep."""
        scores = self.root_scores(moves, depth, margin)
        best = max(scores)
        return [m for m, s in zip(moves, scores) if s >= best - margin], scores
