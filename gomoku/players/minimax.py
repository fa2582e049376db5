"""The minimax player: alpha-beta (negamax) over nearby candidates with a window evaluation:
the one negamax of the classical players (``gomoku.players.negamax``) in the minimax style,
``MINIMAX_STYLE``, and ``DEPTH`` plies deep. Its windows and the ordering score are those of
``gomoku.players.classical`` (its shapes from ``gomoku.tactics.geometry``); no threat solver.
"""

from __future__ import annotations

import functools
import logging
import math
import time

import numpy as np

from gomoku.game.board import Board, other
from gomoku.players.classical import Player, require_moves, window_scores
from gomoku.players.negamax import NegamaxSearch, NegamaxStyle, OutOfBudget, WindowTables
from gomoku.tactics.geometry import stones_short

log = logging.getLogger(__name__)

# The search looks at only this many candidates per node, the best by the heuristic score.
MINIMAX_TOP_K = 12
# Static evaluation of the search: each window with k >= 1 stones of one colour only is worth
# EVAL_BASE**k to that colour.
EVAL_BASE = 10
# The deepest minimax search: each ply costs about 5x the one before (depth 6 takes about a second
# a move, depth 8 ten seconds and more), so deeper ones would not answer in any useful time.
MAX_MINIMAX_DEPTH = 8


@functools.lru_cache(maxsize=None)
def _tables(n: int) -> WindowTables:
    """The minimax windows: a window holding only one colour's stones, ``k`` of them (short of a
    line), is worth EVAL_BASE**k to that colour; the ordering is the heuristic point score of
    ``gomoku.players.classical`` (``window_scores``)."""
    short = stones_short(n)  # an empty window counts: with lines of 1 or 2 it is a four or a three already
    missing = tuple(tuple(max(short[a][b], 0) for b in range(n + 1)) for a in range(n + 1))
    value = tuple(tuple(EVAL_BASE ** a if a and missing[a][b] else 0 for b in range(n + 1)) for a in range(n + 1))
    return WindowTables(missing, value, window_scores(n), win_unit=EVAL_BASE ** n)


# Minimax's negamax: the window values above, MINIMAX_TOP_K candidates, a forced block costs a ply
# like any move, and the static value at the horizon (no threat solver).
MINIMAX_STYLE = NegamaxStyle(_tables, MINIMAX_TOP_K, free_blocks=False)


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
        self.last_depth = 0  # the depth of the search that chose the last move (0: none did)

    def get_action(self, board: Board) -> int:
        require_moves(board)
        self.last_depth = 0  # a win in one or the one forced block: no search
        search = NegamaxSearch(board, MINIMAX_STYLE)
        me = board.current_player
        wins = search.winning_points(me)
        if wins:
            return self._pick(wins)
        blocks = search.winning_points(other(me))
        moves = search.best_first(blocks, me) if blocks else search.ordered_moves(me, MINIMAX_TOP_K)
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
            except OutOfBudget:  # the board copy is mid-search now: not used again
                break
            self.last_depth = depth
            if time.perf_counter() >= deadline:
                break
        return self._pick(best_moves)

    def _best_moves(self, search: NegamaxSearch, moves: list[int], depth: int) -> list[int]:
        """The moves of the best value, searched ``depth`` plies deep, in the order of ``moves``."""
        best_moves, scores = search.best_moves(moves, depth)
        log.debug("%s at depth %d: best %s at %s", self.name, depth, max(scores), best_moves)
        return best_moves

    def _pick(self, moves: list[int]) -> int:
        if self.rng is not None and len(moves) > 1:
            return moves[int(self.rng.integers(len(moves)))]
        return moves[0]
