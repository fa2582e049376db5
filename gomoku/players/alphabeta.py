"""The ``ab:DEPTH`` player: a classical yardstick, alpha-beta over a pattern evaluation.

Before any search, exact rules and threat solvers: take a five; block the opponent's four; play a
win found by one of the threat solvers (VCF, and any other with the same ``solve`` call); when the
opponent threatens such a win, keep only the moves after which it has none (when some move does).
Then iterative deepening negamax with alpha-beta to ``depth`` plies over the candidates near the
stones, best first by a window score, with

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
from dataclasses import dataclass
from typing import Protocol, Sequence

import numpy as np

from gomoku.game.board import DRAW, Board, other
from gomoku.players.classical import Player, _centre, _cells, _lines_of, _require_moves
from gomoku.tactics import solvers as tactics_solvers
from gomoku.tactics.geometry import FOUR, THREE, Geometry, stones_short
from gomoku.tactics.threats import MIN_N_IN_ROW, ThreatResult, VcfSolver

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


@dataclass(frozen=True)
class _Tables:
    """Per (own stones, opponent stones) in a window: how many stones short of a line it is for
    its owner (0 when it holds both colours or none), and the window's weights."""

    missing: tuple[tuple[int, ...], ...]
    value: tuple[tuple[int, ...], ...]
    attack: tuple[tuple[int, ...], ...]  # ordering score of adding an own stone
    defence: tuple[tuple[int, ...], ...]  # ordering score of spoiling the opponent's window


@functools.lru_cache(maxsize=None)
def _tables(n: int) -> _Tables:
    short = stones_short(n)  # the shapes of gomoku.tactics.geometry; BLOCKED (< 0) and a line (0) are no shape here
    table = lambda f: tuple(tuple(f(a, b) for b in range(n + 1)) for a in range(n + 1))
    return _Tables(missing=table(lambda a, b: max(short[a][b], 0) if a else 0),
                   value=table(lambda a, b: WINDOW_WEIGHT.get(short[a][b], 0) if a else 0),
                   attack=table(lambda a, b: ATTACK_ORDER.get(short[a][b], 0)),
                   defence=table(lambda a, b: DEFENCE_ORDER.get(short[b][a], 0) if b else 0))


@functools.lru_cache(maxsize=None)
def _horizon_solver(width: int, height: int, n_in_row: int) -> VcfSolver | None:
    if n_in_row < MIN_N_IN_ROW:
        return None
    return tactics_solvers()[0](Geometry(width, height, n_in_row), HORIZON_VCF_NODES)


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


class _OutOfNodes(Exception):
    pass


class _Search:
    """A board copy with per-window counts, fours and threes kept up to date move by move."""

    def __init__(self, board: Board, max_nodes: int, prune: bool = True):
        self.board = board.copy()
        self.cells = _cells(board)  # the same position as the VCF solver takes it
        lines = _lines_of(board)
        self.windows, self.through, self.near_of = lines.windows, lines.through, lines.near
        self.tables = _tables(lines.n_in_row)
        self.horizon = _horizon_solver(board.width, board.height, board.n_in_row)
        self.max_nodes, self.prune, self.nodes = max_nodes, prune, 0
        counts = lines.geometry.window_counts(_cells(board)[None])[0]
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
        self.win = 10 * len(self.windows) * max(WINDOW_WEIGHT.values()) + 10 * board.size
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
            if b and not (a and after):  # the opponent's window is spoiled, or free again
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
        mine, theirs = self.counts[me], self.counts[other(me)]
        attack, defence = self.tables.attack, self.tables.defence
        return sum(attack[mine[w]][theirs[w]] + defence[mine[w]][theirs[w]] for w in self.through[point])

    def ordered_moves(self, me: int, top_k: int) -> list[int]:
        board = self.board
        if not board.moves:
            return [_centre(board)]
        candidates = [p for p in range(board.size) if self.near[p] and not board.stone(p)] or board.availables
        candidates.sort(key=lambda p: -self.point_score(p, me))
        return candidates[:top_k]

    def evaluate(self, me: int) -> int:
        return self.pattern[me] - self.pattern[other(me)]

    def negamax(self, depth: int, alpha: int, beta: int, ply: int) -> int:
        """Fail-soft alpha-beta value for the side to move (plain negamax when not ``prune``)."""
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise _OutOfNodes
        board = self.board
        if board.winner != DRAW:
            return -(self.win - ply)  # the previous move made a line
        if len(board.moves) == board.size:
            return 0
        me = board.current_player
        if self.fours[me]:
            return self.win - (ply + 1)
        blocks = self.winning_points(other(me))
        if len(blocks) > 1:
            return -(self.win - (ply + 2))
        if not blocks and self.has_double_threat(me):
            return self.win - (ply + 3)
        if blocks:  # forced: no depth spent
            moves, best = blocks, -self.infinity
        elif depth <= 0:  # the horizon: a win by fours, else the static value
            if self.threes[me] and self.horizon is not None and self.horizon.solve(self.cells, me, HORIZON_VCF_NODES).win:
                return self.win - (ply + 3)
            return self.evaluate(me)
        else:
            moves, best = self.ordered_moves(me, TOP_K), -self.infinity
        for move in moves:
            self.play(move)
            score = -self.negamax(depth if blocks else depth - 1, -beta, -alpha, ply + 1)
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
        _require_moves(board)
        self.last_depth, self.out_of_nodes = 0, False
        search = _Search(board, self.max_nodes)
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
        cells = _cells(board)
        solvers = self.solvers(_lines_of(board).geometry)
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

    def _search(self, search: _Search, moves: list[int]) -> int:
        best_moves = moves[:1]
        # In the opening, any move near the best value, so that seeded games differ.
        margin = OPENING_MARGIN if self.rng is not None and len(search.board.moves) < OPENING_STONES else 0
        for depth in range(1, self.depth + 1):
            try:
                scores = search.root_scores(moves, depth, margin)
            except _OutOfNodes:
                self.out_of_nodes = True
                break
            best = max(scores)
            best_moves = [m for m, s in zip(moves, scores) if s >= best - margin]
            self.last_depth = depth
            order = sorted(range(len(moves)), key=lambda i: -scores[i])  # stable: the best first next time
            moves = [moves[i] for i in order]
            if abs(best) >= search.win - search.board.size:
                break  # a sure result: deeper adds nothing
        log.debug("%s: depth %d, %d nodes, best %s", self.name, self.last_depth, search.nodes, best_moves)
        if self.rng is not None and len(best_moves) > 1:
            return best_moves[int(self.rng.integers(len(best_moves)))]
        return best_moves[0]
