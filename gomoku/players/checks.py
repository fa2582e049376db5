"""The az player's deep threat checks, before and after its search (docs/threats.md).

A VCT of its own found within CHECK_NODES nodes is played at once (``ThreatChecks.own_win``);
when the opponent, were it their move, has one (``threat_budget``: the final check), the most
visited moves (at most CHECK_CANDIDATES) are tried in turn and the first after which it has none
is played (``refuted``: the moves passed over); when all of them are lost, the other visited
moves are tried too, until these extra checks have spent one candidate's budget in all
(docs/threats.md, "Are 8 candidates enough?"). When that solve runs out of budget, the candidates
are still tried, at CHECK_NODES // UNSETTLED_CHECK_DIVISOR each: a move can make the opponent's
VCT short enough to find (docs/threats.md); likewise when the clock stops that solve.
Under a clock the two solves before the search may take CHECK_TIME_SHARE of the move's time (the
first half of it at most), and when the final check fires the search leaves that share to the
candidates' checks (``gomoku.players.search.SearchPlayer.analyse``).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from gomoku.game.board import Board, other
from gomoku.players.classical import board_cells, winning_points
from gomoku.tactics import Geometry, solvers
from gomoku.tactics.threats import MIN_N_IN_ROW, NO_MOVE, Interrupted, ThreatStatus
from gomoku.tactics.vct import VctSolver
from mcts import SearchResult

CHECK_NODES = 400_000  # chosen by measurement: docs/threats.md, "The check's budget"
CHECK_CANDIDATES = 8
UNSETTLED_CHECK_DIVISOR = 4
CHECK_TIME_SHARE = 0.25


class ThreatChecks:
    """The deep checks at ``nodes`` a solve (0: off), with the ``tactics`` solvers ("compiled" or
    "reference", ``gomoku.tactics``: the same answers); one solver, for boards of ``shape``."""

    def __init__(self, nodes: int, tactics: str):
        self.nodes = nodes
        self.tactics = tactics
        self.solver: VctSolver | None = None
        self.shape: tuple[int, int, int] | None = None

    def own_win(self, board: Board, stop: Callable[[], bool] | None) -> int:
        """The first check: the first move of a VCT of the player to move found within ``nodes``
        (NO_MOVE: none found, or stopped). The root's rules play a VCT found within their
        ``vct_nodes``; this one looks further, and a win found is played without a search."""
        return self.solve(stop, lambda solver, cells: solver.solve(cells, board.current_player).move, board, NO_MOVE)

    def threat_budget(self, board: Board, stop: Callable[[], bool] | None) -> int:
        """The final check's trigger: one solve, would the opponent have a VCT were it their
        move? Found within ``nodes``: the check runs at ``nodes`` a candidate; out of budget: at
        ``nodes // UNSETTLED_CHECK_DIVISOR`` (a move may leave it a VCT short enough to find);
        proved none: no check (0), as a stone never gives the opponent a VCT. The root's rules
        stop only VCTs found within their ``vct_nodes``. A solve that ``stop`` ends (under a
        clock: past its share of the time) is unsettled too: a threat that takes long to prove
        may still have a short refutation of the move played."""
        status = self.solve(stop, lambda solver, cells: solver.solve(cells, other(board.current_player)).status,
                            board, ThreatStatus.NO_WIN, stopped=ThreatStatus.UNKNOWN)
        if status is ThreatStatus.WIN:
            return self.nodes
        if status is ThreatStatus.UNKNOWN:
            return max(1, self.nodes // UNSETTLED_CHECK_DIVISOR)
        return 0

    def refuted(self, board: Board, result: SearchResult, stop: Callable[[], bool] | None,
                nodes: int) -> tuple[int, ...]:
        """The most visited moves of ``result`` after which the opponent has a VCT found within
        ``nodes``, up to the first after which it has none (a check out of budget counts as
        none): the moves to pass over. The first ``CHECK_CANDIDATES`` are checked; when all of
        them are lost, the other visited moves in turn, until these extra checks have spent
        ``nodes`` in all. None found: none passed over. An interrupted check keeps what it proved:
        the moves found lost are passed over, to the one it was checking (a move not proved lost)."""
        ranked = result.ranked_moves()  # in the order best_move takes them
        ranked = ranked[result.visits[ranked] > 0]
        me = board.current_player
        if ranked.size <= 1 or int(ranked[0]) in winning_points(board, me):
            return ()
        lost: list[int] = []  # the candidates checked so far, each leaving the opponent a VCT
        ended = False  # whether the checks ended by themselves (not interrupted)

        def first_safe(solver: VctSolver, cells: np.ndarray) -> int:
            nonlocal ended
            extra = 0  # the nodes of the checks past the first CHECK_CANDIDATES
            for index, move in enumerate(ranked.tolist()):
                if index >= CHECK_CANDIDATES and extra >= nodes:
                    break
                found = solver.after(cells, me, move, nodes)
                if index >= CHECK_CANDIDATES:
                    extra += found.nodes
                if found.status is not ThreatStatus.WIN:
                    return move
                lost.append(move)
            ended = True
            return NO_MOVE

        safe = self.solve(stop, first_safe, board, NO_MOVE)
        if safe == NO_MOVE and not ended:  # interrupted: the next candidate, unproved
            safe = int(ranked[len(lost)])
        return tuple(lost) if safe != NO_MOVE else ()

    def solve(self, stop, solve, board: Board, none, stopped=None):
        """``solve(solver, cells)`` with the checks' solver for this board, stopped by ``stop``;
        ``none`` is the answer when the checks are off (``nodes`` 0, or a rule shorter than
        ``MIN_N_IN_ROW``), ``stopped`` when ``stop`` ended the solve (None: ``none``)."""
        if not self.nodes or board.n_in_row < MIN_N_IN_ROW:
            return none
        shape = (board.width, board.height, board.n_in_row)
        if self.solver is None or self.shape != shape:
            vct_solver = solvers(self.tactics)[1]  # compiled or reference: the same answers
            self.solver, self.shape = vct_solver(Geometry(*shape), self.nodes), shape
        self.solver.stop = stop
        try:
            return solve(self.solver, board_cells(board))
        except Interrupted:
            return none if stopped is None else stopped
        finally:
            self.solver.stop = None
