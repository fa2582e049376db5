"""An exact, bounded VCF solver: can the player to move win by making fours only?

VCF (victory by continuous fours), freestyle rules (five or more in a row wins):
- the attacker to move wins at once when one stone completes a line;
- otherwise, if the defender could complete a line (the defender has a four), the attacker must
  block it, and the block must itself make a four (else the attack is over); two such points of
  the defender's cannot both be blocked;
- every attacking move makes a four: one stone leaving the attacker a winning point. When it
  leaves two or more different winning points (a double four, an open four) the defender, who has
  no line to complete (see above), cannot stop both: the attack wins. When it leaves exactly one,
  the defender's reply is forced (block it), and the attack goes on from the new position;
  a defender's block that makes a four of the defender's (a counter-four) is handled by the rule
  for the attacker's move above.

The search is depth first over the attacker's four-making moves in ascending point order (any
double four first), with a node budget: a *node* is one attacking move tried (the attacker's stone
and the forced reply). Positions shown not to be a VCF during one solve are remembered by a
Zobrist key of the stones placed since its start (63-bit: a collision, which would wrongly skip a
position, is negligible), since move orders transpose.
The solver keeps per-window stone counts and the sets of the attacker's threes and fours and the
defender's fours up to date as stones are placed and taken back; there is no board copy per node.
That bookkeeping (``ThreatBoard``) and the VCF search itself are shared with the VCT solver
(``gomoku.tactics.vct``), which also uses the VCF search as its fast check.

``solve(cells, attacker)`` answers for one position: cells int8 [size + 1] as in the search
(0 empty, 1 and 2 the colours, the last entry padding), ``attacker`` the colour to move.

``stop`` (a solver's attribute, default None): a callable checked every ``STOP_CHECK_NODES``
nodes (the first node included); once it is true the solve raises ``Interrupted`` (a caller with a
clock, such as the engine's search, must not wait for a pure-Python solve of 1000 nodes).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Callable

import numpy as np

from gomoku.tactics.geometry import FOUR, THREE, TWO, Geometry, stones_short

DEFAULT_MAX_NODES = 200  # node budget of one solve (see the module docstring for what a node is)
ZOBRIST_SEED = 20240914  # fixed: the transposition keys are the same in every process
NO_MOVE = -1
STOP_CHECK_NODES = 16  # a solver's ``stop`` is checked at its first node and every this many after
MIN_N_IN_ROW = 3  # below this a four is one stone or none: every position is a win in one or two

# Window classes tracked in sets (from the attacker's point of view): a four, a three or a two of
# a colour (gomoku.tactics.geometry's shapes). The VCT solver (gomoku.tactics.vct) also tracks the attacker's twos and
# the defender's threes. The compiled kernels (gomoku.tactics.kernel_board) number them the same: these.
NONE, ATTACKER_THREE, ATTACKER_FOUR, DEFENDER_FOUR, ATTACKER_TWO, DEFENDER_THREE = range(6)


class ThreatStatus(enum.Enum):
    WIN = "win"  # the attacker has a forced win of the solver's kind; ``move`` starts it
    NO_WIN = "no win"  # proved: no such win (the restricted threat tree is exhausted)
    UNKNOWN = "unknown"  # the node budget ran out first


@dataclass(frozen=True)
class ThreatResult:
    status: ThreatStatus
    move: int  # the first move of a winning line (a five, a four or a three), NO_MOVE unless WIN
    nodes: int  # moves tried

    @property
    def win(self) -> bool:
        return self.status is ThreatStatus.WIN


VcfStatus, VcfResult = ThreatStatus, ThreatResult  # the names of the VCF solver's first version


class BudgetExhausted(Exception):
    pass


class Interrupted(Exception):
    """A solve stopped by the solver's ``stop`` callable: no answer (raised to the caller, which
    must not remember it as one)."""


class ThreatBoard:
    """One position of a threat search on one board shape, kept incrementally: the cells, each
    window's code (attacker stones + (n + 1) * defender stones) and the set of windows of each
    tracked class (``sets[class]``), and a Zobrist key of the stones placed since ``load``.
    ``wide`` also tracks the attacker's twos and the defender's threes (the VCT solver)."""

    def __init__(self, geometry: Geometry, wide: bool = False):
        if geometry.n_in_row < MIN_N_IN_ROW:
            raise ValueError(f"the threat solvers need n_in_row >= {MIN_N_IN_ROW}, got {geometry.n_in_row}")
        self.geometry = geometry
        self.n = n = geometry.n_in_row
        self.windows, self.through = geometry.window_lists()
        self._window_points = geometry.windows[:-1]
        self._code_base = base = n + 1
        # Each window code's class, from the shapes of gomoku.tactics.geometry: (class, whose, shape).
        shapes = [(ATTACKER_THREE, 0, THREE), (ATTACKER_FOUR, 0, FOUR), (DEFENDER_FOUR, 1, FOUR)]
        if wide:
            shapes += [(ATTACKER_TWO, 0, TWO), (DEFENDER_THREE, 1, THREE)]  # n = 3: a two is an empty window
        self._tracked = tuple(c for c, _, _ in shapes)
        short = stones_short(n)
        classes = np.full(base ** 2, NONE, dtype=np.int64)
        for attackers in range(n + 1):
            for defenders in range(n + 1):
                counts = (attackers, defenders)
                for class_, whose, shape in shapes:
                    if short[counts[whose]][counts[1 - whose]] == shape:
                        classes[attackers + base * defenders] = class_
        self._class_array, self._class = classes, classes.tolist()
        # For each stone added or taken away (the change of a window's code), the change of class it
        # makes from each code: (class before, class after), or None when the class stays.
        self._changes = {}
        for delta in (1, -1, base, -base):
            self._changes[delta] = [
                (self._class[c], self._class[c + delta])
                if 0 <= c + delta < base ** 2 and self._class[c] != self._class[c + delta] else None
                for c in range(base ** 2)]
        # Keys of the stones placed during a search (positions are told apart relative to the root).
        keys = np.random.default_rng(ZOBRIST_SEED).integers(0, 2**63, size=(3, geometry.size), dtype=np.int64)
        self._keys = keys.tolist()
        self._window_sum = [sum(w) for w in self.windows]  # to find a four's empty point
        self.cells: list[int] = []
        self.attacker = 1
        self.code: list[int] = []
        self.sets: list[set[int]] = [set() for _ in range(len(self._tracked) + 1)]  # index 0 unused
        self.key = 0
        self._nodes = self._budget = 0
        self._vcf_refuted: set[int] = set()
        self.stop: Callable[[], bool] | None = None  # checked every STOP_CHECK_NODES nodes (Interrupted)

    def load(self, cells: np.ndarray, attacker: int) -> None:
        """Set up the position (vectorised counts) for ``attacker`` (1 or 2)."""
        if attacker not in (1, 2):
            raise ValueError(f"attacker must be 1 or 2, got {attacker!r}")
        cells = np.asarray(cells)
        weight = np.zeros(3, dtype=np.int64)
        weight[attacker], weight[3 - attacker] = 1, self._code_base
        code = weight[cells[self._window_points]].sum(axis=1)
        classes = self._class_array[code]
        self.attacker = attacker
        self.cells = cells.tolist()
        self.code = code.tolist()
        self.sets = [set()] + [set(np.flatnonzero(classes == c).tolist()) for c in self._tracked]
        self.key = 0

    def _place(self, point: int, colour: int) -> None:
        self._update(point, 1 if colour == self.attacker else self._code_base)
        self.cells[point] = colour
        self.key ^= self._keys[colour][point]

    def _remove(self, point: int, colour: int) -> None:
        self._update(point, -1 if colour == self.attacker else -self._code_base)
        self.cells[point] = 0
        self.key ^= self._keys[colour][point]

    def _update(self, point: int, delta: int) -> None:
        code, sets, changes = self.code, self.sets, self._changes[delta]
        for w in self.through[point]:
            before = code[w]
            code[w] = before + delta
            change = changes[before]
            if change:  # the window's class changes: move it between the sets
                if change[0]:
                    sets[change[0]].discard(w)
                if change[1]:
                    sets[change[1]].add(w)

    def _tick(self) -> None:
        """Count one node: BudgetExhausted past the budget, Interrupted once ``stop`` says so."""
        self._nodes += 1
        if self._nodes > self._budget:
            self._nodes -= 1
            raise BudgetExhausted
        if self.stop is not None and self._nodes % STOP_CHECK_NODES == 1 and self.stop():
            raise Interrupted

    def _empty_of_four(self, window: int) -> int:
        """The empty point of a window holding n - 1 stones."""
        cells = self.cells
        return self._window_sum[window] - sum(p for p in self.windows[window] if cells[p])

    def _four_moves(self) -> dict[int, set[int]]:
        """The attacker's four-making moves: each empty point of one of its threes, with the
        winning points a stone there makes (two or more: a double four or an open four)."""
        cells = self.cells
        fives: dict[int, set[int]] = {}
        for w in self.sets[ATTACKER_THREE]:
            first, second = [p for p in self.windows[w] if not cells[p]]
            fives.setdefault(first, set()).add(second)
            fives.setdefault(second, set()).add(first)
        return fives


    def _vcf(self) -> int:
        """The first move of a VCF for the attacker to move, or NO_MOVE. Counts its nodes in
        ``_nodes`` against ``_budget`` and remembers refuted positions in ``_vcf_refuted``."""
        sets = self.sets
        if sets[ATTACKER_FOUR]:
            return min(self._empty_of_four(w) for w in sets[ATTACKER_FOUR])
        threats = {self._empty_of_four(w) for w in sets[DEFENDER_FOUR]}
        if len(threats) > 1:
            return NO_MOVE  # two points to block and no five of our own
        fives = self._four_moves()
        if threats:
            (block,) = threats
            fives = {block: fives[block]} if block in fives else {}
        if not fives:
            return NO_MOVE
        singles = []
        for move in sorted(fives):
            points = fives[move]
            if len(points) > 1:
                return move  # a double four (or an open four): the defender cannot block both
            singles.append((move, next(iter(points))))
        attacker, defender = self.attacker, 3 - self.attacker
        for move, reply in singles:
            self._tick()
            self._place(move, attacker)
            self._place(reply, defender)
            won = False
            try:
                if self.key not in self._vcf_refuted:
                    won = self._vcf() != NO_MOVE
                    if not won:
                        self._vcf_refuted.add(self.key)
            finally:  # also when the budget runs out: the loaded position stays intact
                self._remove(reply, defender)
                self._remove(move, attacker)
            if won:
                return move
        return NO_MOVE


class VcfSolver(ThreatBoard):
    """VCF searches on one board shape; one instance serves any number of positions."""

    def __init__(self, geometry: Geometry, max_nodes: int = DEFAULT_MAX_NODES):
        if max_nodes < 1:
            raise ValueError(f"max_nodes must be >= 1, got {max_nodes}")
        super().__init__(geometry)
        self.max_nodes = max_nodes

    # ------------------------------------------------------------------ public API
    def solve(self, cells: np.ndarray, attacker: int, max_nodes: int | None = None) -> ThreatResult:
        """Whether ``attacker`` (1 or 2), to move in ``cells``, has a VCF."""
        self.load(cells, attacker)
        return self.solve_loaded(max_nodes)

    def defences(self, cells: np.ndarray, defender: int, moves: np.ndarray,
                 max_nodes: int | None = None) -> np.ndarray:
        """For ``defender`` to move in ``cells``: which of ``moves`` (empty points that do not
        complete a line) leave the opponent without a VCF, one bool per move. A move whose check
        runs out of budget counts as a defence. One set-up for all the moves."""
        self.load(cells, 3 - defender)
        stops = np.zeros(len(moves), dtype=bool)
        for i, move in enumerate(np.asarray(moves).tolist()):
            self._place(move, defender)
            stops[i] = self.solve_loaded(max_nodes).status is not ThreatStatus.WIN
            self._remove(move, defender)
        return stops

    def solve_loaded(self, max_nodes: int | None = None) -> ThreatResult:
        """Search the position set up by ``load`` (left as it was)."""
        self._budget = self.max_nodes if max_nodes is None else max_nodes
        self._nodes = 0
        self._vcf_refuted: set[int] = set()
        try:
            move = self._vcf()
        except BudgetExhausted:
            return ThreatResult(ThreatStatus.UNKNOWN, NO_MOVE, self._nodes)
        status = ThreatStatus.NO_WIN if move == NO_MOVE else ThreatStatus.WIN
        return ThreatResult(status, move, self._nodes)

