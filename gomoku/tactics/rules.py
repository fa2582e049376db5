"""The game's rules as the search sees them: freestyle five in a row, injected into ``BatchedMCTS``
the way the evaluator is (``mcts.game.Rules``, the protocol this object implements).

The search keeps positions as cells int8 [size + 1] (0 empty, ``FIRST`` / ``SECOND`` the stones of
the player who moved first / second, the last entry padding, always empty) and asks the rules:
- ``wins`` / ``wins_one``: does the stone just placed complete a line (the position is terminal);
- ``moves_to_search``: does the player to move win by force (valued +1 exactly, not expanded), and
  which moves does a node there search;
- ``encode``: the network's input planes (``gomoku.tactics.planes.input_planes``);
- ``check``: is a board of this shape and rule.

Forced moves (``forced_moves``, off by default and in the pure-MCTS baseline): two exact rules of
the game, no evaluation knowledge. A position whose player to move can complete a line is valued
+1 exactly, like a terminal position, and is not expanded; when that is the root, only the
winning moves are searched. Otherwise, when the opponent could complete a line, the node's moves
are only the points that stop it (every other move loses at once). The network then learns from
visit counts that take fives and block fours; the search spends no playouts refuting blunders.

VCF (``vcf``, needs ``forced_moves``; off by default and in the pure-MCTS baseline): an exact,
bounded threat search (``gomoku.tactics.threats``: victory by continuous fours, at most ``vcf_nodes`` nodes
per call). A position whose player to move has a VCF is valued +1 exactly and not expanded, like a
win in one; at the root, only the first move of the line is searched. At the root, when the
opponent would have a VCF if it were their move, only the moves after which they have none are
searched (all moves when none does; a check that runs out of budget counts as no VCF). The solver
runs only where the player to move has a three (a window one stone short of a four), and its
answers are remembered per position, so a leaf revisited costs a dictionary look-up.

VCT (``vct``, needs ``vcf``; off by default): the root's rules above with the VCT solver
(``gomoku.tactics.vct``: victory by continuous threats, fours and threes, at most ``vct_nodes`` nodes per
call) in place of the VCF solver: when the player to move has a VCT, only its first move is
searched; when the opponent would have one if it were their move, only the moves after which they
have none are searched (a check that runs out of budget counts as none; all moves when none
stops it). With ``vct_leaf_depth`` (0: off), below the root a leaf 2 to ``vct_leaf_depth`` moves
down whose player to move has a VCT within ``VCT_LEAF_NODES`` nodes is valued +1 and not
expanded. Not at depth 1: a stone never gives its opponent a VCT, so one the root's opponent lacks
(the root's check) it lacks after any root move. Budgets and depth chosen by measurement
(docs/threats.md: the az player uses depth 2, self-play none).

Stopping (``stop``, set by the search for the length of one call): the solvers check it every few
nodes, and a check it interrupts counts as out of budget (no VCF or VCT; at the root no moves
taken away) and is not remembered, so a later search runs it again. A search under a clock uses
it: the root's defence check alone runs a VCT solve per move, which can take most of a second in
pure Python.
"""

from __future__ import annotations

import logging
from typing import Callable

import numpy as np

from gomoku.tactics.geometry import Geometry, LineShapes
from gomoku.tactics.planes import input_planes
from gomoku.tactics.settings import TacticsConfig
from gomoku.tactics.threats import MIN_N_IN_ROW, NO_MOVE, Interrupted, ThreatResult, ThreatStatus, VcfSolver
from gomoku.tactics.vct import VctSolver
from mcts.game import FIRST, SECOND

log = logging.getLogger(__name__)

VCF_CACHE_SIZE = 50_000  # solver answers remembered by one rules object, across searches (cleared when full)
VCT_LEAF_NODES = 200  # the VCT solver's budget at a leaf (``vct_leaf_depth``; docs/threats.md)


class FreestyleRules:
    """Freestyle five in a row on one board shape, with the forced-move and threat rules that
    ``config`` turns on (see the module docstring). Remembers solver answers between searches.
    ``solvers``: the VCF and VCT solver classes (the reference's here; ``gomoku.tactics.compiled``
    passes its own, which answer the same)."""

    def __init__(self, geometry: Geometry, config: TacticsConfig,
                 solvers: tuple[type, type] = (VcfSolver, VctSolver)):
        vcf_solver, vct_solver = solvers
        self.geometry = geometry
        self.settings = config
        self.size = geometry.size
        self.forced_moves = config.forced_moves
        self.vct_leaf_depth = config.vct_leaf_depth
        use_vcf = config.vcf and geometry.n_in_row >= MIN_N_IN_ROW
        self.vcf_solver = vcf_solver(geometry, config.vcf_nodes) if use_vcf else None
        use_vct = config.vct and use_vcf
        self.vct_solver = vct_solver(geometry, config.vct_nodes, config.vcf_nodes) if use_vct else None
        self.vct_leaf_solver = vct_solver(geometry, VCT_LEAF_NODES, config.vcf_nodes) if use_vct else None
        self._stop: Callable[[], bool] | None = None
        self._vcf_cache: dict[bytes, ThreatResult] = {}
        self._vct_cache: dict[bytes, ThreatResult] = {}
        self._vct_leaf_cache: dict[bytes, ThreatResult] = {}
        self._defence_cache: dict[bytes, np.ndarray] = {}  # root position -> the moves that stop a VCF/VCT
        self.vcf_calls = 0  # solver runs (cache hits not counted), for speed figures
        self.vct_calls = 0  # likewise, the VCT solver's (the root's defence checks included)
        # Whether the stone just placed completes a line: ``wins`` (cells [k, size + 1], moves [k],
        # colours [k] -> bool [k]) and ``wins_one`` (one position), the geometry's own methods
        # (bound here: the single-game search calls wins_one once a playout).
        self.wins, self.wins_one = geometry.wins, geometry.wins_one

    def check(self, game) -> None:
        """Raise ValueError unless ``game`` (``width``, ``height``, ``n_in_row``) is of this shape."""
        g = self.geometry
        if (game.width, game.height, game.n_in_row) != (g.width, g.height, g.n_in_row):
            raise ValueError(f"board {game.width}x{game.height}/{game.n_in_row} does not match the "
                             f"rules' {g.width}x{g.height}/{g.n_in_row}")

    @property
    def stop(self) -> Callable[[], bool] | None:
        """Checked by the solvers every few nodes: once true, the checks running or to come
        answer "out of budget" without being remembered (None: never)."""
        return self._stop

    @stop.setter
    def stop(self, stop: Callable[[], bool] | None) -> None:
        self._stop = stop
        for solver in (self.vcf_solver, self.vct_solver, self.vct_leaf_solver):
            if solver is not None:
                solver.stop = stop

    @property
    def root_differs(self) -> bool:
        """Whether a root may search other moves than the same position as an inner node (the
        root's VCF and VCT rules): a reused subtree's root must then be checked."""
        return self.vcf_solver is not None

    # ------------------------------------------------------------------ planes
    def encode(self, cells: np.ndarray, to_move: np.ndarray, last: np.ndarray) -> np.ndarray:
        """The network's input planes of positions ``cells`` [k, size + 1]."""
        g = self.geometry
        return input_planes(cells, to_move, last, to_move == FIRST, g.height, g.width)

    # ------------------------------------------------------------------ moves to search
    def moves_to_search(self, cells: np.ndarray, to_move: np.ndarray, root: bool = False,
                        depth: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """For positions ``cells`` [k, size + 1] with ``to_move`` [k]: (bool [k], whether the player
        to move wins by force: a line to complete or, with ``vcf``, a VCF; bool [k, size], the moves
        a node there searches, ``root`` adding the root's VCF rules; ``depth`` [k], the moves from
        the root, for the VCT leaf checks). Without ``forced_moves`` that is (all False, every
        empty point)."""
        empty = cells[:, :-1] == 0
        can_win = np.zeros(len(cells), dtype=bool)
        if not self.forced_moves:
            return can_win, empty
        least = self.least_stones()
        stones = self.geometry.size - empty.sum(axis=1)
        check = ((stones + 1) // 2 >= least).nonzero()[0]
        if check.size == 0:
            return can_win, empty
        shapes = self.geometry.line_shapes(cells[check], to_move[check])
        mine, theirs = shapes.my_fours.any(axis=1), shapes.their_fours.any(axis=1)
        can_win[check] = mine
        legal = empty
        forced = (mine | theirs).nonzero()[0]
        if forced.size:  # complete my line, or else block theirs: only those points
            legal = empty.copy()
            for i in forced.tolist():
                fours = shapes.my_fours[i] if mine[i] else shapes.their_fours[i]
                legal[check[i]] = False
                legal[check[i], self.geometry.four_points(cells[check[i]], fours)] = True
        if self.vcf_solver is not None:
            self._apply_vcf(cells, to_move, check, shapes, can_win, legal, root)  # changes both in place
        deepest = self.vct_leaf_depth
        if self.vct_solver is not None and depth is not None and deepest >= 2:
            for row in check[(depth[check] >= 2) & (depth[check] <= deepest) & ~can_win[check]].tolist():
                result = self._solve(self.vct_leaf_solver, self._vct_leaf_cache, cells[row], int(to_move[row]))
                can_win[row] = result.win
        return can_win, legal

    def least_stones(self) -> int:
        """The first player's stones below which no position has a line to complete or block, nor
        a VCF or VCT (checked by the threat rules): a four needs n_in_row - 1 stones of one colour,
        a three (where a VCF starts) one fewer, and a VCT may start one fewer still (its first move
        makes a three of a two: on 7x7, four in a row, X to move with one stone has one); the first
        player has the most."""
        return self.geometry.n_in_row - (3 if self.vct_solver is not None else 2 if self.vcf_solver is not None else 1)

    def _vcf(self, cells: np.ndarray, attacker: int) -> ThreatResult:
        """The solver's answer for ``attacker`` to move in ``cells`` [size + 1], remembered."""
        return self._solve(self.vcf_solver, self._vcf_cache, cells, attacker)

    def _vct(self, cells: np.ndarray, attacker: int) -> ThreatResult:
        """The VCT solver's answer, remembered (a VCF is a VCT: its win is taken first)."""
        return self._solve(self.vct_solver, self._vct_cache, cells, attacker)

    def _solve(self, solver, cache: dict, cells: np.ndarray, attacker: int) -> ThreatResult:
        key = cells.tobytes() + bytes((attacker,))
        result = cache.get(key)
        if result is None:
            if solver is not self.vcf_solver:
                self.vct_calls += 1
            else:
                self.vcf_calls += 1
            try:
                result = solver.solve(cells, attacker)
            except Interrupted:  # as out of budget, and not remembered
                return ThreatResult(ThreatStatus.UNKNOWN, NO_MOVE, 0)
            if len(cache) >= VCF_CACHE_SIZE:
                cache.clear()
            cache[key] = result
        return result

    def _apply_vcf(self, cells: np.ndarray, to_move: np.ndarray, rows: np.ndarray, shapes: LineShapes,
                   can_win: np.ndarray, legal: np.ndarray, root: bool) -> None:
        """The VCF rules for positions ``rows`` (their ``shapes``): mark those where the player to
        move has a VCF in ``can_win`` (at the root: search its first move only); at the root,
        restrict ``legal`` to the defences against the opponent's VCF. A VCF starts with a four,
        so only a player with a three can have one. With ``vct``, the root's rules take VCTs
        (threes too) instead: our VCT is played, the opponent's is stopped."""
        for i in (shapes.my_three & ~can_win[rows]).nonzero()[0].tolist():
            row = rows[i]
            result = self._vcf(cells[row], int(to_move[row]))
            if result.win:
                can_win[row] = True
                if root:
                    legal[row] = False
                    legal[row, result.move] = True
        if not root:
            return
        if self.vct_solver is not None:
            for row in rows[~can_win[rows]].tolist():
                result = self._vct(cells[row], int(to_move[row]))
                if result.win:
                    can_win[row] = True
                    legal[row] = False
                    legal[row, result.move] = True
        # Not when we win, nor when they have a four (blocking it is already the only move).
        threatening = ~can_win[rows] & ~shapes.their_fours.any(axis=1)
        if self.vct_solver is None:
            threatening &= shapes.their_three
        for i in threatening.nonzero()[0].tolist():
            self._defend(cells, to_move, rows[i], legal)

    def _defend(self, cells: np.ndarray, to_move: np.ndarray, row: int, legal: np.ndarray) -> None:
        """At a root: when the opponent would have a VCF (a VCT, with ``vct``) were it their move,
        keep in ``legal[row]`` only the moves that stop it (all of them when none does)."""
        opponent = FIRST + SECOND - int(to_move[row])
        if self.vct_solver is None:
            threat, solver, kind = self._vcf(cells[row], opponent), self.vcf_solver, "VCF"
        else:
            threat, solver, kind = self._vct(cells[row], opponent), self.vct_solver, "VCT"
        if not threat.win:
            return
        key = cells[row].tobytes()
        stopping = self._defence_cache.get(key)
        if stopping is None:
            moves = np.flatnonzero(legal[row])
            self.vct_calls += len(moves) if solver is self.vct_solver else 0
            try:
                stops = solver.defences(cells[row], int(to_move[row]), moves)
            except Interrupted:  # as when no move stops it: every move stays, nothing remembered
                log.debug("the %s defence check was interrupted: all %d moves searched", kind, moves.size)
                return
            if len(self._defence_cache) >= VCF_CACHE_SIZE:
                self._defence_cache.clear()
            stopping = self._defence_cache[key] = moves[stops]
            log.debug("the opponent threatens a %s: %d of %d moves stop it", kind, stopping.size, moves.size)
        if stopping.size:
            legal[row] = False
            legal[row, stopping] = True
