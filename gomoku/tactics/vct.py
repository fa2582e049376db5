"""An exact, bounded VCT solver: can the player to move win by making fours and threes only?

VCT (victory by continuous threats), freestyle rules (five or more in a row wins), in the terms
of ``gomoku.tactics.geometry`` (a *five point* of a colour: an empty point where its stone completes a
line):
- the attacker to move wins at once when it has a five point;
- otherwise, when the defender has a five point, the attacker must take it (two different ones
  cannot both be taken: no VCT), and that block must itself be a threat (below);
- a *threat* is an attacking move judged by the position after it: a **four** leaves the attacker
  one five point (the defender's reply is forced: take it), a **double** leaves two or more (an
  open four or a double four: the defender, without a five point of its own, cannot stop both:
  the attack wins), a **three** leaves none but a *three point*: an empty point where the
  attacker's next stone would make a double (an open four or a double four);
- the defender answers a three with every reply that does not lose at once. A reply loses at
  once when it neither makes a four of the defender's (a *counter-four*: the attacker must then
  take its five point, with a threat) nor leaves the attacker without three points (then the
  attacker makes a double and wins). So the replies are: every *defence* (a point after which
  the attacker has no three point left) and every counter-four. The attack succeeds when it
  wins against each of them;
- every other move of the attacker (no four, no three) ends the attack.
A VCF is a VCT with no three. NO_WIN means the restricted tree (attacker: threats only) is
exhausted: there is no VCT, which does not mean there is no win at all.

The defences are exact, not patterns: with ``fives[p]`` the five points the attacker's stone at
``p`` would make (from its windows one stone short of a four), the three points are the ``p`` with
two or more; a defender's stone at ``r`` removes the windows through ``r``, so ``r`` stops three
point ``p`` exactly when ``r == p`` or fewer than two of ``fives[p]`` remain once ``r`` is taken
out. A defence stops every three point.

Search: the VCF search (``gomoku.tactics.threats``) first, as the fast check; then proof-number search
over the AND/OR tree (OR: the attacker to move, its children its threats; AND: the defender to
move, its children its replies). A new AND node starts with proof number = its number of replies
(a four: 1, a double: 0, so proved), disproof number 1; a new OR node is judged at once where it
can be: a five point of the attacker's (won), two to block (lost), a VCF within LEAF_VCF_NODES
nodes (won), no threat to make (lost). The search expands the nodes in the order of the
best-first search (from the root down to a most-proving node, expand it, numbers back up), but
stays below a node while the descent from the root would choose it again (df-pn's thresholds,
computed exactly, ties included): the same nodes, node for node, with far fewer stones placed
and taken back on the way (1.25x faster on 269 positions of real games, 1.8x on one).

Transpositions: the same position comes by many move orders (threats on different lines commute),
so the tree is a DAG. Every node is kept in a table under the Zobrist key of the stones placed
since the start of the solve, and a move to a position already in the table links to its node
instead of making a new one: a proof found along one path serves them all (a node's value depends
on its position only). The update on the way back reaches only the current path, so a descent
recomputes each node's numbers from its children before choosing among them. The sums count a
shared node once per path; they are capped just below INFINITE, so a large sum never reads as
solved. Measured against the same search as a tree: the same answers, a long VCT proved in 8x
fewer nodes (docs/threats.md).
Nodes: every attacking move judged and every defender's reply made into a node (a link to a node
in the table costs none); the VCF checks' nodes count too. The state (windows, their classes, the
key) is the incremental bookkeeping of ``gomoku.tactics.threats.ThreatBoard``, which also tracks the
attacker's twos (where a three can start) and the defender's threes (where a counter-four can
start).
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter

import numpy as np

from gomoku.tactics.geometry import Geometry
from gomoku.tactics.threats import (ATTACKER_FOUR, ATTACKER_TWO, DEFAULT_MAX_NODES, DEFENDER_FOUR, DEFENDER_THREE,
                                    NO_MOVE, BudgetExhausted, ThreatBoard, ThreatResult, ThreatStatus)

DEFAULT_VCT_NODES = 1000  # node budget of one solve (measured: docs/threats.md)


INFINITE = 1 << 40  # the proof or disproof number of a solved node
LARGEST = INFINITE - 1  # the cap of a sum of unsolved nodes' numbers
LEAF_VCF_NODES = 40  # the VCF check's budget at each new position of the attacker's to move


@dataclass(frozen=True)
class _Threat:
    """An attacking move and the defender's replies to search (one for a four, none for a double)."""

    move: int
    replies: list[int]


class _Node:
    """A node of the proof-number DAG. OR nodes (attacker to move, at even depths) are reached by
    defender's moves; AND nodes (defender to move) by attacking moves, with the ``replies`` to
    search. ``children`` is None until expanded; then ``moves[i]`` leads to ``children[i]`` (a
    child shared with other parents may be reached from them by other moves)."""

    __slots__ = ("replies", "pn", "dn", "children", "moves")

    def __init__(self, pn: int, dn: int, replies: list[int] | None = None):
        self.pn, self.dn, self.replies = pn, dn, replies
        self.children: list[_Node] | None = None
        self.moves: list[int] = []


class VctSolver(ThreatBoard):
    """VCT searches on one board shape; one instance serves any number of positions."""

    def __init__(self, geometry: Geometry, max_nodes: int = DEFAULT_VCT_NODES,
                 vcf_nodes: int = DEFAULT_MAX_NODES):
        if max_nodes < 1:
            raise ValueError(f"max_nodes must be >= 1, got {max_nodes}")
        super().__init__(geometry, wide=True)
        self.max_nodes = max_nodes
        self.vcf_nodes = vcf_nodes
        self._table: dict[int, _Node] = {}  # the nodes of the current solve, by position key

    # ------------------------------------------------------------------ public API
    def solve(self, cells: np.ndarray, attacker: int, max_nodes: int | None = None) -> ThreatResult:
        """Whether ``attacker`` (1 or 2), to move in ``cells`` (int8 [size + 1], 0 empty, the last
        entry padding), has a VCT; WIN comes with its first move."""
        self.load(cells, attacker)
        self._budget = self.max_nodes if max_nodes is None else max_nodes
        self._nodes = 0
        self._vcf_refuted = set()
        try:
            move = self._quick(min(self._budget, self.vcf_nodes))
            if move != NO_MOVE:
                return ThreatResult(ThreatStatus.WIN, move, self._nodes)
            root = _Node(1, 1)
            self._table = {self.key: root}
            self._prove(root)
        except BudgetExhausted:
            return ThreatResult(ThreatStatus.UNKNOWN, NO_MOVE, self._nodes)
        finally:
            self._table = {}
        if root.pn == 0:
            move = next(move for child, move in zip(root.children, root.moves) if child.pn == 0)
            return ThreatResult(ThreatStatus.WIN, move, self._nodes)
        return ThreatResult(ThreatStatus.NO_WIN, NO_MOVE, self._nodes)

    def defences(self, cells: np.ndarray, defender: int, moves: np.ndarray,
                 max_nodes: int | None = None) -> np.ndarray:
        """For ``defender`` to move in ``cells``: which of ``moves`` (empty points that do not
        complete a line) leave the opponent without a VCT, one bool per move. A move whose check
        runs out of budget counts as a defence."""
        cells = np.array(cells, dtype=np.int8)
        stops = np.zeros(len(moves), dtype=bool)
        for i, move in enumerate(np.asarray(moves).tolist()):
            stops[i] = self.after(cells, defender, move, max_nodes).status is not ThreatStatus.WIN
        return stops

    def after(self, cells: np.ndarray, defender: int, move: int, max_nodes: int | None = None) -> ThreatResult:
        """The opponent's VCT solve once ``defender`` has played ``move`` (an empty point) in
        ``cells``; the stone is there only while the solve runs."""
        cells[move] = defender
        try:
            return self.solve(cells, 3 - defender, max_nodes)
        finally:
            cells[move] = 0

    # ------------------------------------------------------------------ search
    def _quick(self, budget: int) -> int:
        """The first move of a VCF found within ``budget`` more nodes, else NO_MOVE."""
        total, self._budget = self._budget, min(self._budget, self._nodes + budget)
        try:
            return self._vcf()
        except BudgetExhausted:
            if self._budget == total:
                raise
            return NO_MOVE
        finally:
            self._budget = total

    def _prove(self, root: _Node) -> None:
        """Proof-number search from ``root`` (the loaded position, attacker to move) until it is
        proved or disproved, in the order of the best-first search (from the root, down to a
        most-proving node, expand it, numbers back up), but without going back to the root each
        time: each node on the path carries the limits of its numbers within which the descent
        from the root would choose it again (df-pn's thresholds, with ``min``'s choice of the
        first among equals), and the search stays below it while they hold. A node is brought up
        to date from its children each time it is reached (a shared child may have changed under
        another parent); the numbers of the nodes above are brought up to date on the way back."""
        attacker, defender = self.attacker, 3 - self.attacker
        path, moves = [root], [NO_MOVE]  # the nodes from the root down, and the moves to them
        limits = [(INFINITE, INFINITE)]  # each path node's: stay below it while pn, dn are under
        try:
            while True:
                node, depth = path[-1], len(path) - 1
                or_node = depth % 2 == 0
                if node.children is None:
                    if or_node:
                        self._expand_or(node)
                    else:
                        self._expand_and(node)
                proofs, disproofs = _update(node, or_node)
                pn_limit, dn_limit = limits[-1]
                if node.pn and node.dn and node.pn < pn_limit and node.dn < dn_limit:
                    if or_node:  # the child easiest to prove; the others' disproof numbers add up
                        index, chosen_limit = _choice(proofs)
                        dn_rest = sum(disproofs) - disproofs[index]
                        limits.append((min(pn_limit, chosen_limit),
                                       INFINITE if dn_limit == INFINITE else dn_limit - dn_rest))
                        self._place(node.moves[index], attacker)
                    else:
                        index, chosen_limit = _choice(disproofs)
                        pn_rest = sum(proofs) - proofs[index]
                        limits.append((INFINITE if pn_limit == INFINITE else pn_limit - pn_rest,
                                       min(dn_limit, chosen_limit)))
                        self._place(node.moves[index], defender)
                    child = node.children[index]
                    path.append(child)
                    moves.append(node.moves[index])
                elif depth == 0:
                    return  # solved
                else:  # back up: the parent is brought up to date and chooses again
                    path.pop()
                    limits.pop()
                    self._remove(moves.pop(), defender if or_node else attacker)
        finally:
            for depth in range(len(path) - 1, 0, -1):
                self._remove(moves[depth], defender if depth % 2 == 0 else attacker)

    def _expand_or(self, node: _Node) -> None:
        """Children of an OR node: the attacker's threats (an AND node each), judged without
        placing their stones (``_judge``); a position already in the table is linked, not judged."""
        sets = self.sets
        blocks = {self._empty_of_four(w) for w in sets[DEFENDER_FOUR]}
        if len(blocks) > 1:  # two cannot both be blocked
            node.children = []
            return
        fives = self._four_moves()
        threes = {p: points for p, points in fives.items() if len(points) > 1}
        pairs: dict[int, list[tuple[int, int]]] = {}  # a point: the other two empties of each two
        cells, windows = self.cells, self.windows
        for w in sets[ATTACKER_TWO]:
            first, second, third = [p for p in windows[w] if not cells[p]]
            for point, others in ((first, (second, third)), (second, (first, third)), (third, (first, second))):
                pairs.setdefault(point, []).append(others)
        candidates = sorted(blocks) if blocks else sorted(fives.keys() | pairs.keys())
        children = []
        table, keys, key = self._table, self._keys[self.attacker], self.key
        for move in candidates:
            child_key = key ^ keys[move]
            child = table.get(child_key)
            if child is None:
                self._tick()
                threat = self._judge(move, fives, threes, pairs.get(move, ()))
                if threat is None:
                    continue
                child = table[child_key] = _Node(len(threat.replies), 1, threat.replies)
            children.append(child)
            node.moves.append(move)
            if child.pn == 0:
                break  # proved
        node.children = children

    def _expand_and(self, node: _Node) -> None:
        """Children of an AND node (its attacking move placed): the defender's replies, each an
        OR node judged at once where it can be (a five point, two to block, a double, a VCF)."""
        defender = 3 - self.attacker
        children = []
        table, keys, key = self._table, self._keys[defender], self.key
        for reply in node.replies:
            child_key = key ^ keys[reply]
            child = table.get(child_key)
            if child is None:
                self._tick()
                self._place(reply, defender)
                try:
                    won = self._status()
                finally:
                    self._remove(reply, defender)
                child = table[child_key] = _Node(1, 1) if won is None else \
                    _Node(0, INFINITE) if won else _Node(INFINITE, 0)
            children.append(child)
            node.moves.append(reply)
            if child.dn == 0:
                break  # disproved
        node.children = children

    def _status(self) -> bool | None:
        """For the attacker to move here: True (a win found at once), False (lost), None."""
        sets = self.sets
        if sets[ATTACKER_FOUR]:
            return True
        blocks = {self._empty_of_four(w) for w in sets[DEFENDER_FOUR]}
        if len(blocks) > 1:
            return False
        if self._quick(LEAF_VCF_NODES) != NO_MOVE:
            return True
        if not blocks and not sets[ATTACKER_TWO] and not self._four_moves():
            return False  # no threat to make
        return None

    def _judge(self, move: int, fives: dict[int, set[int]], threes: dict[int, set[int]],
               pairs: list[tuple[int, int]]) -> _Threat | None:
        """The attacker's stone at ``move``, judged without placing it: a threat (with the replies
        to search), or None. The attacker has no four; ``fives`` is its ``_four_moves``,
        ``threes`` the three points among them (two five points or more) and ``pairs`` the other
        two empty points of each of its twos through ``move``. The stone makes a four from each
        of the attacker's threes it fills (the five points ``fives[move]``) and a three from each
        of its twos it fills; no other window of the attacker's changes."""
        made = fives.get(move)
        if made:  # a four (one five point: the reply is forced) or a double (the attack wins)
            return _Threat(move, [] if len(made) > 1 else list(made))
        three_points = dict(threes)
        for first, second in pairs:  # with the stone, each two is a three: its two empties are five points
            for point, other in ((first, second), (second, first)):
                points = three_points.get(point) or fives.get(point)
                if points is None:
                    three_points[point] = {other}
                elif other not in points:
                    three_points[point] = points | {other}
        three_points = {p: points for p, points in three_points.items() if len(points) > 1}
        if not three_points:
            return None
        return _Threat(move, self._replies(three_points, move))

    def _replies(self, three_points: dict[int, set[int]], move: int) -> list[int]:
        """The defender's replies to a three (the attacker's stone at ``move``): its defences
        (points that stop every three point) and its counter-fours (the empty points of its threes
        that ``move`` does not cut), ascending."""
        candidates = set(three_points)
        for points in three_points.values():
            candidates |= points
        replies = {r for r in candidates
                   if all(r == p or len(points - {r}) < 2 for p, points in three_points.items())}
        cells = self.cells
        for w in self.sets[DEFENDER_THREE]:
            if move not in self.windows[w]:
                replies.update(p for p in self.windows[w] if not cells[p])
        return sorted(replies)


_proof, _disproof = attrgetter("pn"), attrgetter("dn")  # a node's numbers (min's key, in C)


def _choice(numbers: list[int]) -> tuple[int, int]:
    """The index ``min`` would choose among ``numbers`` (the first of the smallest), and the limit
    below which that number keeps it chosen: under every earlier number, at most every later one."""
    smallest = min(numbers)
    index = numbers.index(smallest)
    earlier = min(numbers[:index], default=INFINITE + 1)
    later = min(numbers[index + 1:], default=INFINITE) + 1
    return index, min(earlier, later)


def _update(node: _Node, or_node: bool) -> tuple[list[int], list[int]]:
    """Proof and disproof numbers of an expanded node from its children's: exactly (0, INFINITE)
    or (INFINITE, 0) once solved; a sum otherwise capped at LARGEST, below INFINITE, so that a
    most-proving child is never a solved one. Returns the children's proof and disproof numbers."""
    children = node.children
    proofs, disproofs = list(map(_proof, children)), list(map(_disproof, children))
    if not children:
        node.pn, node.dn = (INFINITE, 0) if or_node else (0, INFINITE)
    elif or_node:
        pn = min(proofs)
        if pn == 0:
            node.pn, node.dn = 0, INFINITE
        else:
            dn = sum(disproofs)
            node.pn, node.dn = (pn, min(dn, LARGEST)) if dn else (INFINITE, 0)
    else:
        dn = min(disproofs)
        if dn == 0:
            node.pn, node.dn = INFINITE, 0
        else:
            pn = sum(proofs)
            node.pn, node.dn = (min(pn, LARGEST), dn) if pn else (0, INFINITE)
    return proofs, disproofs
