"""The minimax player: alpha-beta (negamax) over nearby candidates with a window evaluation,
on the windows and shapes of ``gomoku.players.classical`` (from ``gomoku.tactics.geometry``)."""

from __future__ import annotations

import logging
import math
import time

import numpy as np

from gomoku.game.board import DRAW, EMPTY, Board, other
from gomoku.players.classical import (Player, _centre, _lines_of, _point_score, _require_moves, _window_counts,
                                      _winning_points)
from gomoku.tactics.geometry import FOUR, THREE

log = logging.getLogger(__name__)

# The search looks at only this many candidates per node, the best by the heuristic score.
MINIMAX_TOP_K = 12
# Static evaluation of the search: each window with k >= 1 stones of one colour only is worth
# EVAL_BASE**k to that colour.
EVAL_BASE = 10
# The deepest minimax search: each ply costs about 5x the one before (depth 6 takes about a second
# a move, depth 8 ten seconds and more), so deeper ones would not answer in any useful time.
MAX_MINIMAX_DEPTH = 8
# With a time limit, the clock is read every this many nodes.
CLOCK_NODES = 64


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
        self.last_depth = 0  # the depth of the search that chose the last move (0: none did)

    def get_action(self, board: Board) -> int:
        _require_moves(board)
        self.last_depth = 0  # a win in one or the one forced block: no search
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
