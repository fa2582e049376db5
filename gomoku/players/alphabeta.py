"""The ``ab:DEPTH`` player: a classical yardstick, alpha-beta over a pattern evaluation.

Before any search, exact rules and threat solvers: take a five; block the opponent's four; play a
win found by one of the threat solvers (VCF, and any other with the same ``solve`` call); when the
opponent threatens such a win, keep only the moves after which it has none (when some move does).
Then iterative deepening negamax with alpha-beta to ``depth`` plies over the candidates near the
stones, best first by a window score (the one negamax, ``gomoku.players.negamax``, in the ab style
``AB_STYLE``), with

- forced moves that cost no depth: an opponent's four is blocked (two of them lose), a move that
  makes two different winning points (an open four or a double four) wins when the opponent has
  no four to answer with;
- a threat extension at the horizon: where the side to move has a three, the VCF solver (a
  quiescence over its fours, each answered by the forced block, exact within a small budget)
  values a win by fours as a win; otherwise the static evaluation;
- a node budget per move: a depth that does not finish within it is dropped, and the move of the
  deepest finished depth is played (every depth is finite; ``minimax:50`` hangs, ``ab:50`` does not).

The evaluation weighs each window holding one colour only by how many stones it lacks; which
windows are fours and threes comes from ``gomoku.tactics.geometry.stones_short``, the one definition of the shapes.
Equal best moves go to ``rng``'s pick (without one, to the first in move order), so a game is
repeatable given the seed; the node budget counts nodes, not seconds, so that holds on any machine.
"""

from __future__ import annotations

import functools
import logging
from typing import Protocol, Sequence

import numpy as np

from gomoku.game.board import Board, other
from gomoku.players.classical import Player, board_cells, line_table, require_moves
from gomoku.players.negamax import NegamaxSearch, NegamaxStyle, OutOfBudget, WindowTables
from gomoku.tactics import solvers as tactics_solvers
from gomoku.tactics.geometry import Geometry, stones_short
from gomoku.tactics.threats import MIN_N_IN_ROW, ThreatResult

log = logging.getLogger(__name__)

DEFAULT_MAX_NODES = 10_000  # nodes (positions searched) per move; a depth past it is dropped
TOP_K = 10  # candidates searched per inner node, the best by the window score
ROOT_TOP_K = 20  # candidates at the root (and those checked against the opponent's threats)
VCF_NODES = 1_000  # the VCF solver's budget per call at the root
HORIZON_VCF_NODES = 100  # its budget at the horizon (every leaf where the side to move has a three)
VCT_NODES = 20_000  # ``ab:DEPTH:vct``: the VCT solver's budget per call at the root (docs/results/ladder.md)
# With a seed, while fewer than OPENING_STONES stones are on the board the player picks among
# the moves valued within OPENING_MARGIN of the best (and its first stone near the centre).
OPENING_STONES = 6
OPENING_MARGIN = 30
# Static evaluation: a window holding only one colour's stones, ``missing`` stones short of a
# line, is worth WINDOW_WEIGHT[missing] to that colour (an open three spans three such windows).
WINDOW_WEIGHT = {1: 600, 2: 60, 3: 6, 4: 1}
# Move ordering: playing a point scores ATTACK_ORDER[missing] for each own window it brings one
# closer, DEFENCE_ORDER[missing] for each of the opponent's it spoils.
ATTACK_ORDER = {1: 10 ** 7, 2: 10 ** 4, 3: 300, 4: 12, 5: 1}
DEFENCE_ORDER = {1: 10 ** 6, 2: 3000, 3: 100, 4: 6, 5: 1}


class ThreatSolver(Protocol):
    """The call shape of VcfSolver and VctSolver: may ``attacker`` (to move in ``cells``, int8
    [size + 1]) force a win?"""

    def solve(self, cells: np.ndarray, attacker: int) -> ThreatResult: ...


def default_solvers(geometry: Geometry, vct_nodes: int = 0) -> list[ThreatSolver]:
    """The threat solvers of the ab player, cheapest first: the VCF solver, and with ``vct_nodes``
    > 0 (``ab:DEPTH:vct``) the VCT solver at that budget, which adds wins and refutations with
    threes (docs/results/ladder.md). None for lines shorter than ``MIN_N_IN_ROW`` (no threats there)."""
    if geometry.n_in_row < MIN_N_IN_ROW:
        return []
    vcf_solver, vct_solver = tactics_solvers()  # the compiled ones (the reference's answers)
    found: list[ThreatSolver] = [vcf_solver(geometry, VCF_NODES)]
    if vct_nodes:
        found.append(vct_solver(geometry, vct_nodes))
    return found


@functools.lru_cache(maxsize=None)
def _tables(n: int) -> WindowTables:
    short = stones_short(n)  # the shapes of gomoku.tactics.geometry; BLOCKED (< 0) and a line (0) are no shape here
    table = lambda f: tuple(tuple(f(a, b) for b in range(n + 1)) for a in range(n + 1))
    return WindowTables(missing=table(lambda a, b: max(short[a][b], 0) if a else 0),
                        value=table(lambda a, b: WINDOW_WEIGHT.get(short[a][b], 0) if a else 0),
                        order=table(lambda a, b: ATTACK_ORDER.get(short[a][b], 0)
                                    + (DEFENCE_ORDER.get(short[b][a], 0) if b else 0)),
                        win_unit=max(WINDOW_WEIGHT.values()))


# The ab player's negamax: its pattern weights, TOP_K candidates, forced blocks at no depth, the
# VCF solver at the horizon.
AB_STYLE = NegamaxStyle(_tables, TOP_K, free_blocks=True, horizon_nodes=HORIZON_VCF_NODES)


def ab_search(board: Board, max_nodes: int = DEFAULT_MAX_NODES, prune: bool = True) -> NegamaxSearch:
    """The ab player's search over ``board``, within ``max_nodes`` nodes."""
    return NegamaxSearch(board, AB_STYLE, max_nodes, prune)


class AlphaBetaPlayer(Player):
    """``ab:DEPTH``: threat solvers, then alpha-beta to ``depth`` plies (see the module docstring).
    ``vct_nodes`` > 0 (``ab:DEPTH:vct``) adds the VCT solver to the default solvers."""

    def __init__(self, depth: int, rng: np.random.Generator | None = None, max_nodes: int = DEFAULT_MAX_NODES,
                 solvers: Sequence[ThreatSolver] | None = None, vct_nodes: int = 0):
        if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1:
            raise ValueError(f"ab depth must be an integer >= 1, got {depth!r}")
        if max_nodes < 1:
            raise ValueError(f"max_nodes must be >= 1, got {max_nodes!r}")
        if vct_nodes < 0:
            raise ValueError(f"vct_nodes must be >= 0, got {vct_nodes!r}")
        self.depth, self.max_nodes, self.vct_nodes = int(depth), int(max_nodes), int(vct_nodes)
        self.rng = rng
        self._given = None if solvers is None else list(solvers)
        self._solvers: list[ThreatSolver] = []
        self._solvers_for: tuple[int, int, int] | None = None  # the board shape of ``_solvers``
        self.name = f"ab:{self.depth}" + (":vct" if self.vct_nodes else "")
        self.last_depth = 0  # the deepest depth finished for the last move, 0 when no search ran
        self.out_of_nodes = False  # whether the last move's search stopped at the node budget

    def solvers(self, geometry: Geometry) -> list[ThreatSolver]:
        """The solvers given, else the default ones for this board shape."""
        if self._given is not None:
            return self._given
        shape = (geometry.width, geometry.height, geometry.n_in_row)
        if shape != self._solvers_for:
            self._solvers, self._solvers_for = default_solvers(geometry, self.vct_nodes), shape
        return self._solvers

    def get_action(self, board: Board) -> int:
        require_moves(board)
        self.last_depth, self.out_of_nodes = 0, False
        search = ab_search(board, self.max_nodes)
        me, them = board.current_player, other(board.current_player)
        wins = search.winning_points(me)
        if wins:
            return wins[0]
        blocks = search.winning_points(them)
        if blocks:
            return blocks[0]  # the only move (two blocks lose either way)
        if not board.moves and self.rng is not None:
            row, col = (min(max(int(self.rng.integers(-1, 2)) + side // 2, 0), side - 1)
                        for side in (board.height, board.width))
            return board.location_to_move((row, col))
        moves = search.ordered_moves(me, ROOT_TOP_K)
        cells = board_cells(board)
        solvers = self.solvers(line_table(board).geometry)
        for solver in solvers:
            result = solver.solve(cells, me)
            if result.win:
                return int(result.move)
        moves = self._refutations(solvers, cells, moves, me)
        if len(moves) == 1:
            return moves[0]
        return self._search(search, moves)

    @staticmethod
    def _refutations(solvers: list[ThreatSolver], cells: np.ndarray, moves: list[int], me: int) -> list[int]:
        """``moves`` less those after which the opponent has a solver's win, if it threatens one
        (all of them when none refutes: the search then picks the longest defence)."""
        them = other(me)
        for solver in solvers:
            if not solver.solve(cells, them).win:
                continue
            keep = []
            for move in moves:
                cells[move] = me
                if not solver.solve(cells, them).win:
                    keep.append(move)
                cells[move] = 0
            if keep:
                moves = keep
        return moves

    def _search(self, search: NegamaxSearch, moves: list[int]) -> int:
        best_moves = moves[:1]
        # In the opening, any move near the best value, so that seeded games differ.
        margin = OPENING_MARGIN if self.rng is not None and len(search.board.moves) < OPENING_STONES else 0
        for depth in range(1, self.depth + 1):
            try:
                best_moves, scores = search.best_moves(moves, depth, margin)
            except OutOfBudget:
                self.out_of_nodes = True
                break
            best = max(scores)
            self.last_depth = depth
            order = sorted(range(len(moves)), key=lambda i: -scores[i])  # stable: the best first next time
            moves = [moves[i] for i in order]
            if abs(best) >= search.win - search.board.size:
                break  # a sure result: deeper adds nothing
        log.debug("%s: depth %d, %d nodes, best %s", self.name, self.last_depth, search.nodes, best_moves)
        if self.rng is not None and len(best_moves) > 1:
            return best_moves[int(self.rng.integers(len(best_moves)))]
        return best_moves[0]
