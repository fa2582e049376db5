"""Array-based PUCT Monte Carlo tree search over many trees at once.

Value-sign convention (the one place it is stated):
    Every value is from the point of view of the player to move in the position it belongs to.
    An evaluator's value for a leaf is for the player to move at that leaf. The edge statistics
    ``W[s, a]`` (sum of backed-up values) and ``Q[s, a] = W / N`` of node ``s`` are from the point
    of view of the player to move at ``s``, the one choosing ``a``. Backing a leaf value ``v`` up
    the path therefore adds ``-v`` to the last edge, ``+v`` to the one before, and so on. A
    terminal position is valued exactly: -1 for the player to move when the previous move made a
    line (they have lost), 0 for a full board.

Layout: each of ``n_trees`` trees owns ``capacity`` node slots. Per node the arrays hold, over all
``H*W`` moves, the priors ``P``, visit counts ``N`` and value sums ``W`` of its edges, and the
child slot of each edge (-1 until expanded). Nodes hold statistics only; positions are rebuilt
during the descent by placing stones on a per-tree working copy of the root position, so no
board is ever deep-copied. Selection is one numpy expression over the children of the current
nodes of all trees at once, and the leaves of all trees go to the evaluator as one batch.

Selection (PUCT, as in the classic AlphaZero-Gomoku): ``argmax_a Q(s,a) + c_puct * P(s,a) *
sqrt(N(s)) / (1 + N(s,a))`` with ``Q = 0`` for unvisited edges, ``N(s)`` the visits of node ``s``
itself (1 for the visit that expanded it plus those of its edges) and ties going to the lowest
move index. A fresh root is expanded by the first playout, as in the classic implementation.

With ``leaves_per_step > 1`` each tree descends several times before the evaluator is called,
with a virtual loss on the edges taken so that later descents look elsewhere.

Forced moves (``forced_moves``, off by default and in the pure-MCTS baseline): two exact rules of
the game, no evaluation knowledge. A position whose player to move can complete a line is valued
+1 exactly, like a terminal position, and is not expanded; when that is the root, only the
winning moves are searched. Otherwise, when the opponent could complete a line, the node's moves
are only the points that stop it (every other move loses at once). The network then learns from
visit counts that take fives and block fours; the search spends no playouts refuting blunders.

VCF (``vcf``, needs ``forced_moves``; off by default and in the pure-MCTS baseline): an exact,
bounded threat search (``mcts.threats``: victory by continuous fours, at most ``vcf_nodes`` nodes
per call). A position whose player to move has a VCF is valued +1 exactly and not expanded, like a
win in one; at the root, only the first move of the line is searched. At the root, when the
opponent would have a VCF if it were their move, only the moves after which they have none are
searched (all moves when none does; a check that runs out of budget counts as no VCF). The solver
runs only where the player to move has a three (a window one stone short of a four), and its
answers are remembered per position, so a leaf revisited costs a dictionary look-up.

VCT (``vct``, needs ``vcf``; off by default): the root's rules above with the VCT solver
(``mcts.vct``: victory by continuous threats, fours and threes, at most ``vct_nodes`` nodes per
call) in place of the VCF solver: when the player to move has a VCT, only its first move is
searched; when the opponent would have one if it were their move, only the moves after which they
have none are searched (a check that runs out of budget counts as none; all moves when none
stops it). With ``vct_leaf_depth`` (0: off), below the root a leaf 2 to ``vct_leaf_depth`` moves
down whose player to move has a VCT within ``VCT_LEAF_NODES`` nodes is valued +1 and not
expanded. Not at depth 1: a stone never gives its opponent a VCT, so one the root's opponent lacks
(the root's check) it lacks after any root move. Budgets and depth chosen by measurement
(docs/threats.md: the az player uses depth 2, self-play none).

Gumbel root (``gumbel_k > 0``, self-play only; needs ``reuse_tree=False``): the root's playouts go
to ``gumbel_k`` moves sampled with Gumbel noise and narrowed by sequential halving (``mcts.gumbel``),
one leaf per tree per evaluator call; the result then carries the move to play and the improved
policy to train on. There is no Dirichlet noise; below the root the search is PUCT as above.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import Protocol, Sequence

import numpy as np

from mcts import gumbel
from mcts.evaluators import Evaluator
from mcts.geometry import Geometry, LineShapes
from mcts.threats import DEFAULT_MAX_NODES, MIN_N_IN_ROW, ThreatResult, VcfSolver
from mcts.vct import DEFAULT_VCT_NODES, VctSolver

log = logging.getLogger(__name__)

NO_CHILD = -1
NO_MOVE = -1
FIRST, SECOND = 1, 2  # stone colours inside the search: who moved first, who moved second
ILLEGAL_VALUE_SUM = -1e9  # the value sum of edges to occupied points, so selection never takes them
CAPACITY_PER_PLAYOUT = 3  # node slots per tree = this * n_playout + 2 (a reused subtree included)
DEFAULT_VCF_NODES = DEFAULT_MAX_NODES  # the VCF solver's node budget per call (see mcts.threats)
VCF_CACHE_SIZE = 50_000  # solver answers remembered per search (cleared when full)
VCT_LEAF_NODES = 200  # the VCT solver's budget at a leaf (``vct_leaf_depth``; docs/threats.md)


class GameLike(Protocol):
    """What the search needs of a position: its shape and its move history."""

    width: int
    height: int
    n_in_row: int
    moves: list[int]


@dataclass(frozen=True)
class SearchConfig:
    n_playout: int = 400
    c_puct: float = 5.0
    dirichlet_alpha: float = 0.3
    dirichlet_epsilon: float = 0.25
    noise: bool = False  # mix Dirichlet noise into the root priors (self-play only)
    reuse_tree: bool = True
    leaves_per_step: int = 1  # > 1: several leaves per tree and evaluator call, with virtual loss
    virtual_loss: float = 1.0
    forced_moves: bool = False  # value wins in one exactly, search only blocks of a four (see above)
    vcf: bool = False  # value a VCF exactly, defend the root (needs forced_moves; n_in_row >= 3)
    vcf_nodes: int = DEFAULT_VCF_NODES  # node budget of one VCF solver call
    vct: bool = False  # VCT at the root: play our win, stop the opponent's (needs vcf; see above)
    vct_nodes: int = DEFAULT_VCT_NODES  # node budget of one VCT solver call
    vct_leaf_depth: int = 0  # >= 2, with vct: leaves down to this depth are valued won on a VCT (see above)
    gumbel_k: int = 0  # > 0: Gumbel root search over this many sampled moves (see above)

    def __post_init__(self) -> None:
        if self.n_playout < 1:
            raise ValueError(f"n_playout must be >= 1, got {self.n_playout}")
        if self.c_puct <= 0:
            raise ValueError(f"c_puct must be > 0, got {self.c_puct}")
        if not 0 <= self.dirichlet_epsilon <= 1:
            raise ValueError(f"dirichlet_epsilon must be in [0, 1], got {self.dirichlet_epsilon}")
        if self.dirichlet_alpha <= 0:
            raise ValueError(f"dirichlet_alpha must be > 0, got {self.dirichlet_alpha}")
        if self.leaves_per_step < 1:
            raise ValueError(f"leaves_per_step must be >= 1, got {self.leaves_per_step}")
        if self.vcf and not self.forced_moves:
            raise ValueError("vcf needs forced_moves")
        if self.vcf_nodes < 1:
            raise ValueError(f"vcf_nodes must be >= 1, got {self.vcf_nodes}")
        if self.vct and not self.vcf:
            raise ValueError("vct needs vcf")
        if self.vct_nodes < 1:
            raise ValueError(f"vct_nodes must be >= 1, got {self.vct_nodes}")
        if self.vct_leaf_depth < 0 or (self.vct_leaf_depth and not self.vct):
            raise ValueError(f"vct_leaf_depth must be >= 0 and needs vct, got {self.vct_leaf_depth}")
        if not 0 <= self.gumbel_k <= self.n_playout // 2:  # so the playouts fit the tree's capacity
            raise ValueError(f"gumbel_k must be in 0..n_playout // 2, got {self.gumbel_k}")
        if self.gumbel_k and self.reuse_tree:
            raise ValueError("gumbel_k needs reuse_tree=False (each Gumbel search starts at a fresh root)")


@dataclass
class SearchResult:
    """The outcome of one search from one root position."""

    visits: np.ndarray  # float [H*W]: visit counts of the root's edges
    priors: np.ndarray  # float [H*W]: the root priors the search used (after noise, if any)
    value: float  # mean backed-up value of the root for the player to move there
    playouts: int  # playouts run in this search (a reused subtree's earlier visits not counted)
    selected: int = NO_MOVE  # Gumbel root: the move sequential halving chose (to play)
    improved: np.ndarray | None = None  # Gumbel root: float [H*W], the improved policy (to train on)

    def best_move(self) -> int:
        """The most visited move (lowest index on ties)."""
        return int(np.argmax(self.visits))

    def policy(self, temperature: float = 1.0) -> np.ndarray:
        return visit_policy(self.visits, temperature)


GREEDY_TEMPERATURE = 1e-2  # at or below this, the policy is uniform over the most visited moves


def visit_policy(visits: np.ndarray, temperature: float) -> np.ndarray:
    """Move probabilities proportional to ``visits ** (1 / temperature)``."""
    visits = np.asarray(visits, dtype=np.float64)
    if temperature <= GREEDY_TEMPERATURE:
        best = visits == visits.max()
        return best / best.sum()
    logits = np.log(np.maximum(visits, 1e-300)) / temperature
    logits[visits <= 0] = -np.inf
    logits -= logits.max()
    probs = np.exp(logits)
    return probs / probs.sum()


@dataclass
class _Descent:
    """One batch of descents: per level, which trees went down which edge of which node."""

    trees: np.ndarray  # [k] tree index per descent
    levels: list[tuple] = field(default_factory=list)
    # ^ per level: (positions in 0..k-1 still descending, node slots, moves), arrays; for a
    #   single tree (``_descend_one``) just (node slot, move), ints
    leaf_node: np.ndarray | None = None  # [k] node whose edge ends the descent
    leaf_move: np.ndarray | None = None  # [k] that edge's move
    depth: np.ndarray | None = None  # [k] number of edges taken
    cells: np.ndarray | None = None  # [k, size + 1] position at the leaf
    to_move: np.ndarray | None = None  # [k] colour to move at the leaf
    terminal_value: np.ndarray | None = None  # [k] exact value, NaN when not terminal


class BatchedMCTS:
    """PUCT search over ``n_trees`` independent games, batching their leaves for the evaluator."""

    def __init__(self, evaluator: Evaluator, width: int, height: int, n_in_row: int,
                 config: SearchConfig, n_trees: int = 1, rng: np.random.Generator | None = None):
        self.evaluator = evaluator
        self.config = config
        self.geometry = Geometry(width, height, n_in_row)
        self.n_trees = n_trees
        self.rng = rng if rng is not None else np.random.default_rng()
        size = self.geometry.size
        self.capacity = CAPACITY_PER_PLAYOUT * config.n_playout + 2
        shape = (n_trees, self.capacity, size)
        self.prior = np.zeros(shape, dtype=np.float64)
        self.visits = np.zeros(shape, dtype=np.float64)
        self.value_sum = np.zeros(shape, dtype=np.float64)
        self.children = np.full(shape, NO_CHILD, dtype=np.int32)
        self.node_visits = np.zeros((n_trees, self.capacity), dtype=np.float64)
        self.n_nodes = np.zeros(n_trees, dtype=np.int64)  # used slots; the root is slot 0
        # The root position of each tree.
        self.root_moves: list[list[int]] = [[] for _ in range(n_trees)]
        self.root_cells = np.zeros((n_trees, size + 1), dtype=np.int8)
        self.root_count = np.zeros(n_trees, dtype=np.int64)  # stones on the root board
        self.root_clean_prior = np.zeros((n_trees, size), dtype=np.float64)
        self.root_value = np.zeros(n_trees, dtype=np.float64)  # the evaluator's value of a fresh root
        use_vcf = config.vcf and n_in_row >= MIN_N_IN_ROW
        self.vcf_solver = VcfSolver(self.geometry, config.vcf_nodes) if use_vcf else None
        use_vct = config.vct and self.vcf_solver is not None
        self.vct_solver = VctSolver(self.geometry, config.vct_nodes, config.vcf_nodes) if use_vct else None
        self._vcf_cache: dict[bytes, ThreatResult] = {}
        self._vct_cache: dict[bytes, ThreatResult] = {}
        self.vct_leaf_solver = VctSolver(self.geometry, VCT_LEAF_NODES, config.vcf_nodes) if use_vct else None
        self._vct_leaf_cache: dict[bytes, ThreatResult] = {}
        self._defence_cache: dict[bytes, np.ndarray] = {}  # root position -> the moves that stop a VCF/VCT
        self.vcf_calls = 0  # solver runs (cache hits not counted), for speed figures
        self.vct_calls = 0  # likewise, the VCT solver's (the root's defence checks included)

    # ------------------------------------------------------------------ public API
    def search(self, boards: Sequence[GameLike], noise: bool | None = None, n_playout: int | None = None,
               keep_tree: bool = False) -> list[SearchResult]:
        """Run ``n_playout`` playouts (default: the config's) from each board (board i uses tree i).

        ``keep_tree`` keeps a tree searched from the same position even when the config does not
        reuse trees between moves (to search one position in several calls).
        """
        if len(boards) > self.n_trees:
            raise ValueError(f"{len(boards)} boards for {self.n_trees} trees")
        noise = self.config.noise if noise is None else noise
        trees = np.arange(len(boards))
        n_playout = self.config.n_playout if n_playout is None else n_playout
        if not 1 <= n_playout <= self.config.n_playout:
            raise ValueError(f"n_playout must be in 1..{self.config.n_playout}, got {n_playout}")
        remaining = np.full(len(boards), n_playout, dtype=np.int64)
        for tree, board in enumerate(boards):
            self._check_shape(board)
            self._set_root(tree, list(board.moves), keep_tree)
        if self.vcf_solver is not None:
            self._drop_roots_with_other_moves(trees[self.n_nodes[trees] > 0])
        fresh = trees[self.n_nodes[trees] == 0]
        if fresh.size:
            self._expand_roots(fresh)
            remaining[fresh] -= 1
        if self.config.gumbel_k:
            played, selected = self._gumbel_search(trees, remaining)
            playouts = n_playout - remaining + played
            return [self._gumbel_result(tree, int(p), int(m)) for tree, p, m in zip(trees, playouts, selected)]
        if noise:
            self._add_root_noise(trees)
        while True:
            running = trees[remaining > 0]
            if running.size == 0:
                break
            leaves = np.minimum(remaining[running], self.config.leaves_per_step)
            if running.size == 1 and leaves[0] == 1:
                self._step_one(int(running[0]))
            else:
                self._step(running, leaves)
            remaining[running] -= leaves
        return [self._result(tree, n_playout) for tree in trees]

    def reset(self, tree: int | None = None) -> None:
        """Forget the tree (or all trees): the next search starts fresh."""
        trees = range(self.n_trees) if tree is None else [tree]
        for t in trees:
            self.n_nodes[t] = 0
            self.root_moves[t] = []

    # ------------------------------------------------------------------ roots
    def _check_shape(self, board: GameLike) -> None:
        g = self.geometry
        if (board.width, board.height, board.n_in_row) != (g.width, g.height, g.n_in_row):
            raise ValueError(f"board {board.width}x{board.height}/{board.n_in_row} does not match the "
                             f"search's {g.width}x{g.height}/{g.n_in_row}")

    def _set_root(self, tree: int, moves: list[int], keep_tree: bool = False) -> None:
        """Point the tree at the position after ``moves``, keeping the matching subtree if any."""
        old = self.root_moves[tree]
        reuse = self.config.reuse_tree or (keep_tree and moves == old)
        node = 0 if self.n_nodes[tree] > 0 and reuse else NO_CHILD
        if node == 0 and moves[: len(old)] == old:
            for move in moves[len(old):]:
                node = int(self.children[tree, node, move])
                if node == NO_CHILD:
                    break
        else:
            node = NO_CHILD
        if node == NO_CHILD:
            self.n_nodes[tree] = 0
        elif moves != old:
            self._compact(tree, node)
            if self.n_nodes[tree] > 0:
                self.root_clean_prior[tree] = self.prior[tree, 0]  # a former inner node: no noise
        self.root_moves[tree] = moves
        self.root_count[tree] = len(moves)
        cells = self.root_cells[tree]
        cells[:] = 0
        cells[moves[0::2]] = FIRST
        cells[moves[1::2]] = SECOND
        if len(moves) == self.geometry.size or (moves and self._won(tree, moves)):
            raise ValueError("cannot search a position where the game has ended")

    def _won(self, tree: int, moves: list[int]) -> bool:
        colour = FIRST if len(moves) % 2 == 1 else SECOND
        return bool(self.geometry.wins(self.root_cells[tree: tree + 1], np.array([moves[-1]]),
                                       np.array([colour]))[0])

    def _compact(self, tree: int, new_root: int) -> None:
        """Keep only the subtree under ``new_root``, renumbered from slot 0."""
        levels = [np.array([new_root])]
        while True:
            children = self.children[tree, levels[-1]]
            children = children[children != NO_CHILD]
            if children.size == 0:
                break
            levels.append(children)
        old = np.concatenate(levels)
        if old.size + self.config.n_playout + 1 > self.capacity:
            log.debug("reused subtree of %d nodes does not fit; starting a fresh tree", old.size)
            self.n_nodes[tree] = 0
            return
        remap = np.full(self.capacity, NO_CHILD, dtype=np.int32)
        remap[old] = np.arange(old.size, dtype=np.int32)
        n = old.size
        for array in (self.prior, self.visits, self.value_sum):
            array[tree, :n] = array[tree, old]
        self.node_visits[tree, :n] = self.node_visits[tree, old]
        children = self.children[tree, old]
        self.children[tree, :n] = np.where(children == NO_CHILD, NO_CHILD, remap[children])
        self.n_nodes[tree] = n

    def _root_planes(self, trees: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cells = self.root_cells[trees]
        to_move = np.where(self.root_count[trees] % 2 == 0, FIRST, SECOND)
        last = np.array([self.root_moves[t][-1] if self.root_moves[t] else NO_MOVE for t in trees])
        return self._planes(cells, to_move, last), self._moves_to_search(cells, to_move, root=True)[1]

    def _drop_roots_with_other_moves(self, trees: np.ndarray) -> None:
        """Start afresh the reused roots whose moves to search differ as a root (the VCF rules of
        the root: a former inner node was expanded with every move)."""
        if trees.size == 0:
            return
        to_move = np.where(self.root_count[trees] % 2 == 0, FIRST, SECOND)
        legal = self._moves_to_search(self.root_cells[trees], to_move, root=True)[1]
        searched = self.value_sum[trees, 0] > ILLEGAL_VALUE_SUM / 2
        for tree in trees[(legal != searched).any(axis=1)]:
            log.debug("tree %d: the root's moves changed (VCF rules); starting a fresh tree", tree)
            self.n_nodes[tree] = 0

    def _moves_to_search(self, cells: np.ndarray, to_move: np.ndarray, root: bool = False,
                         depth: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """For positions ``cells`` [k, size + 1] with ``to_move`` [k]: (bool [k], whether the player
        to move wins by force: a line to complete or, with ``vcf``, a VCF; bool [k, size], the moves
        a node there searches, ``root`` adding the root's VCF rules). Without ``forced_moves`` that
        is (all False, every empty point)."""
        empty = cells[:, :-1] == 0
        can_win = np.zeros(len(cells), dtype=bool)
        if not self.config.forced_moves:
            return can_win, empty
        # A four needs n_in_row - 1 stones of one colour, a three (where a VCF starts) one fewer;
        # the first player has the most.
        least = self.geometry.n_in_row - (2 if self.vcf_solver is not None else 1)
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
        deepest = self.config.vct_leaf_depth
        if self.vct_solver is not None and depth is not None and deepest >= 2:
            for row in check[(depth[check] >= 2) & (depth[check] <= deepest) & ~can_win[check]].tolist():
                result = self._solve(self.vct_leaf_solver, self._vct_leaf_cache, cells[row], int(to_move[row]))
                can_win[row] = result.win
        return can_win, legal

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
            if len(cache) >= VCF_CACHE_SIZE:
                cache.clear()
            if solver is not self.vcf_solver:
                self.vct_calls += 1
            else:
                self.vcf_calls += 1
            result = cache[key] = solver.solve(cells, attacker)
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
            row = rows[i]
            opponent = FIRST + SECOND - int(to_move[row])
            if self.vct_solver is None:
                threat, solver, kind = self._vcf(cells[row], opponent), self.vcf_solver, "VCF"
            else:
                threat, solver, kind = self._vct(cells[row], opponent), self.vct_solver, "VCT"
            if not threat.win:
                continue
            key = cells[row].tobytes()
            stopping = self._defence_cache.get(key)
            if stopping is None:
                if len(self._defence_cache) >= VCF_CACHE_SIZE:
                    self._defence_cache.clear()
                moves = np.flatnonzero(legal[row])
                stops = solver.defences(cells[row], int(to_move[row]), moves)
                self.vct_calls += len(moves) if solver is self.vct_solver else 0
                stopping = self._defence_cache[key] = moves[stops]
                log.debug("the opponent threatens a %s: %d of %d moves stop it", kind, stopping.size, moves.size)
            if stopping.size:
                legal[row] = False
                legal[row, stopping] = True

    def _expand_roots(self, trees: np.ndarray) -> None:
        planes, legal = self._root_planes(trees)
        priors, values = self.evaluator.evaluate_batch(planes, legal)
        self._new_nodes(trees, np.zeros(len(trees), dtype=np.int64), priors, legal)
        self.root_clean_prior[trees] = self.prior[trees, 0]
        self.root_value[trees] = values

    def _add_root_noise(self, trees: np.ndarray) -> None:
        eps, alpha = self.config.dirichlet_epsilon, self.config.dirichlet_alpha
        for tree in trees:
            legal = np.flatnonzero(self.value_sum[tree, 0] > ILLEGAL_VALUE_SUM / 2)  # the root's moves
            noise = self.rng.dirichlet(np.full(legal.size, alpha))
            prior = self.root_clean_prior[tree].copy()
            prior[legal] = (1 - eps) * prior[legal] + eps * noise
            self.prior[tree, 0] = prior

    # ------------------------------------------------------------------ Gumbel root
    def _gumbel_search(self, trees: np.ndarray, budget: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Sequential halving over Gumbel-sampled root moves with ``budget[i]`` playouts in tree
        ``trees[i]``; returns the playouts run and the move chosen, per tree. Each round descends once in every tree
        that still has playouts to run in the phase, its root edge given, as one evaluator call."""
        legal = self.value_sum[trees, 0] > ILLEGAL_VALUE_SUM / 2
        logits = np.log(np.maximum(self.root_clean_prior[trees], gumbel.PRIOR_FLOOR))
        scores = np.where(legal, logits + self.rng.gumbel(size=logits.shape), -np.inf)
        candidates = [gumbel.top_k(row, self.config.gumbel_k) for row in scores]
        schedules = [gumbel.halving_schedule(len(c), int(b)) for c, b in zip(candidates, budget)]
        played = np.zeros(len(trees), dtype=np.int64)
        for phase in range(max(len(s) for s in schedules)):
            plans = [np.tile(c, s[phase]) if phase < len(s) else c[:0] for c, s in zip(candidates, schedules)]
            for round_ in range(max(len(plan) for plan in plans)):
                active = np.array([i for i, plan in enumerate(plans) if len(plan) > round_])
                if active.size == 0:
                    break
                root_move = np.array([plans[i][round_] for i in active])
                self._step(trees[active], np.ones(active.size, dtype=np.int64), root_move)
                played[active] += 1
            for i, tree in enumerate(trees):  # keep the better half of each tree's candidates
                c = candidates[i]
                if phase < len(schedules[i]) and len(c) > 1:
                    visits = self.visits[tree, 0]
                    q = gumbel.root_q(visits[c], self.value_sum[tree, 0, c])
                    ranked = np.argsort(-(scores[i, c] + gumbel.sigma(q, visits.max())), kind="stable")
                    candidates[i] = c[ranked[: (len(c) + 1) // 2]]
        return played, np.array([c[0] for c in candidates])

    def _gumbel_result(self, tree: int, playouts: int, selected: int) -> SearchResult:
        result = self._result(tree, playouts)
        legal = self.value_sum[tree, 0] > ILLEGAL_VALUE_SUM / 2
        q = gumbel.root_q(result.visits, self.value_sum[tree, 0])
        result.improved = gumbel.improved_policy(result.priors, legal, result.visits, q,
                                                 float(self.root_value[tree]))
        result.selected = selected
        return result

    # ------------------------------------------------------------------ playouts
    def _step(self, trees: np.ndarray, leaves: np.ndarray, root_move: np.ndarray | None = None) -> None:
        """Run ``leaves[i]`` playouts in tree ``trees[i]``, evaluating all their leaves in one batch
        (``root_move``: one playout per tree, through root edge ``root_move[i]``)."""
        vloss = self.config.virtual_loss if self.config.leaves_per_step > 1 and root_move is None else 0.0
        if root_move is not None:
            descents = [self._descend(trees, vloss, root_move)]
        else:
            descents = [self._descend(trees[leaves > round_], vloss) for round_ in range(int(leaves.max()))]
        # Evaluate every distinct non-terminal leaf once.
        trees_all = np.concatenate([d.trees for d in descents])
        nodes_all = np.concatenate([d.leaf_node for d in descents])
        moves_all = np.concatenate([d.leaf_move for d in descents])
        terminal_all = np.concatenate([d.terminal_value for d in descents])
        values = terminal_all.copy()
        open_ = np.flatnonzero(np.isnan(terminal_all))
        if open_.size:
            if len(descents) == 1:  # one descent per tree: the leaves are distinct
                unique, inverse = open_, np.arange(open_.size)
            else:  # descents of one tree may end on the same edge: evaluate it once
                key = (trees_all[open_] * self.capacity + nodes_all[open_]) * self.geometry.size + moves_all[open_]
                _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
                unique = open_[first]
            cells = np.concatenate([d.cells for d in descents])[unique]
            to_move = np.concatenate([d.to_move for d in descents])[unique]
            depth = np.concatenate([d.depth for d in descents])[unique]
            can_win, legal = self._moves_to_search(cells, to_move, depth=depth)
            leaf_values = np.ones(len(unique))  # a win in one is worth +1 to the player to move
            grow = np.flatnonzero(~can_win)
            if grow.size:
                planes = self._planes(cells[grow], to_move[grow], moves_all[unique[grow]])
                priors, net_values = self.evaluator.evaluate_batch(planes, legal[grow])
                leaf_values[grow] = net_values
                at = unique[grow]
                new_slots = self._new_nodes(trees_all[at], None, priors, legal[grow])
                self.children[trees_all[at], nodes_all[at], moves_all[at]] = new_slots
            values[open_] = leaf_values[inverse.ravel()]
        start = 0
        for descent in descents:
            k = len(descent.trees)
            self._backup(descent, values[start: start + k], vloss)
            start += k

    def _step_one(self, tree: int) -> None:
        """``_step`` for one playout in one tree (the players' single-game search): the same
        arithmetic without the batch bookkeeping."""
        d = self._descend_one(tree, 0.0)
        value = float(d.terminal_value[0])
        if np.isnan(value):
            can_win, legal = self._moves_to_search(d.cells, d.to_move, depth=d.depth)
            if can_win[0]:
                value = 1.0  # a win in one (or a VCF) for the player to move
            else:
                priors, values = self.evaluator.evaluate_batch(self._planes(d.cells, d.to_move, d.leaf_move), legal)
                value = float(values[0])
                slot = int(self.n_nodes[tree])
                self._init_nodes(tree, slot, priors, legal)
                self.n_nodes[tree] = slot + 1
                self.children[tree, int(d.leaf_node[0]), int(d.leaf_move[0])] = slot
        self._backup(d, np.array([value]), 0.0)

    def _descend(self, trees: np.ndarray, vloss: float, root_move: np.ndarray | None = None) -> _Descent:
        """Walk from the roots of ``trees`` to an unexpanded edge, one numpy step per level
        (through root edge ``root_move[i]`` when given)."""
        if len(trees) == 1:
            return self._descend_one(int(trees[0]), vloss, None if root_move is None else int(root_move[0]))
        size = self.geometry.size
        k = len(trees)
        d = _Descent(trees=trees)
        cells = self.root_cells[trees].copy()
        move_count = self.root_count[trees]
        node = np.zeros(k, dtype=np.int64)
        d.leaf_node = np.zeros(k, dtype=np.int64)
        d.leaf_move = np.zeros(k, dtype=np.int64)
        d.depth = np.zeros(k, dtype=np.int64)
        active = np.arange(k)
        c_puct = self.config.c_puct
        while active.size:
            t, n = trees[active], node[active]
            n_edge = self.visits[t, n]
            q = self.value_sum[t, n] / np.maximum(n_edge, 1.0)
            u = c_puct * self.prior[t, n] * (np.sqrt(self.node_visits[t, n])[:, None] / (1.0 + n_edge))
            move = (q + u).argmax(axis=1)  # occupied points hold ILLEGAL_VALUE_SUM: never chosen
            if root_move is not None and not d.levels:
                move = root_move
            # Count the visit now (and the virtual loss), so that later descents see it.
            self.visits[t, n, move] += 1.0
            self.node_visits[t, n] += 1.0
            if vloss:
                self.value_sum[t, n, move] -= vloss
            colour = np.where((move_count[active] + d.depth[active]) % 2 == 0, FIRST, SECOND)
            cells[active, move] = colour
            d.depth[active] += 1
            d.levels.append((active, n, move))
            child = self.children[t, n, move]
            stop = child == NO_CHILD
            d.leaf_node[active[stop]] = n[stop]
            d.leaf_move[active[stop]] = move[stop]
            node[active] = child
            active = active[~stop]
        d.cells = cells
        colour_moved = np.where((move_count + d.depth) % 2 == 1, FIRST, SECOND)
        d.to_move = FIRST + SECOND - colour_moved
        won = self.geometry.wins(cells, d.leaf_move, colour_moved)
        full = move_count + d.depth == size
        d.terminal_value = np.where(won, -1.0, np.where(full, 0.0, np.nan))
        return d

    def _descend_one(self, tree: int, vloss: float, root_move: int | None = None) -> _Descent:
        """``_descend`` for a single tree: the same arithmetic on views, without fancy indexing
        (the single-game search of the players spends most of its time here)."""
        prior, visits = self.prior[tree], self.visits[tree]
        value_sum, node_visits, children = self.value_sum[tree], self.node_visits[tree], self.children[tree]
        cells = self.root_cells[tree].copy()
        count = int(self.root_count[tree])
        c_puct = self.config.c_puct
        levels = []
        node = depth = 0
        while True:
            n_edge = visits[node]
            q = value_sum[node] / np.maximum(n_edge, 1.0)
            score = q + c_puct * prior[node] * (math.sqrt(node_visits[node]) / (1.0 + n_edge))
            move = int(score.argmax()) if root_move is None or levels else root_move
            visits[node, move] += 1.0
            node_visits[node] += 1.0
            if vloss:
                value_sum[node, move] -= vloss
            colour = FIRST if (count + depth) % 2 == 0 else SECOND
            cells[move] = colour
            depth += 1
            levels.append((node, move))
            child = int(children[node, move])
            if child == NO_CHILD:
                break
            node = child
        if self.geometry.wins_one(cells, move, colour):
            terminal = -1.0
        else:
            terminal = 0.0 if count + depth == self.geometry.size else np.nan
        return _Descent(trees=np.array([tree]), levels=levels, leaf_node=np.array([node]),
                        leaf_move=np.array([move]), depth=np.array([depth]), cells=cells[None],
                        to_move=np.array([FIRST + SECOND - colour]), terminal_value=np.array([terminal]))

    def _backup(self, d: _Descent, leaf_values: np.ndarray, vloss: float) -> None:
        """Add the leaf values along the paths (visits were counted on the way down)."""
        if len(d.trees) == 1:
            value_sum = self.value_sum[int(d.trees[0])]
            depth, value = int(d.depth[0]), float(leaf_values[0])
            for level, (n, move) in enumerate(d.levels):  # ints (see _descend_one)
                sign = -1.0 if (depth - level) % 2 == 1 else 1.0
                value_sum[n, move] += sign * value + vloss
            return
        for level, (active, n, move) in enumerate(d.levels):
            t = d.trees[active]
            sign = np.where((d.depth[active] - level) % 2 == 1, -1.0, 1.0)
            self.value_sum[t, n, move] += sign * leaf_values[active] + vloss

    def _new_nodes(self, trees: np.ndarray, slots: np.ndarray | None, priors: np.ndarray,
                   legal: np.ndarray) -> np.ndarray:
        """Initialise one node per entry of ``trees`` (at ``slots``, or the next free slots)."""
        if slots is None:
            # Several new nodes may belong to the same tree: number them in order.
            order = np.argsort(trees, kind="stable")
            sorted_trees = trees[order]
            starts = np.searchsorted(sorted_trees, sorted_trees, side="left")
            offset = np.empty_like(order)
            offset[order] = np.arange(len(trees)) - starts
            slots = self.n_nodes[trees] + offset
            np.add.at(self.n_nodes, trees, 1)
        else:
            self.n_nodes[trees] = slots + 1
        self._init_nodes(trees, slots, priors, legal)
        return slots

    def _init_nodes(self, trees, slots, priors: np.ndarray, legal: np.ndarray) -> None:
        """Fresh statistics in node ``slots`` of ``trees`` (arrays, or one tree and one slot)."""
        if np.any(np.asarray(slots) >= self.capacity):
            raise RuntimeError("search tree capacity exceeded")  # cannot happen: capacity covers n_playout
        self.prior[trees, slots] = priors
        self.visits[trees, slots] = 0.0
        self.value_sum[trees, slots] = np.where(legal, 0.0, ILLEGAL_VALUE_SUM)
        self.children[trees, slots] = NO_CHILD
        self.node_visits[trees, slots] = 1.0

    def _planes(self, cells: np.ndarray, to_move: np.ndarray, last: np.ndarray) -> np.ndarray:
        g = self.geometry
        k = len(cells)
        planes = np.zeros((k, 4, g.size), dtype=np.float32)
        board = cells[:, : g.size]
        planes[:, 0] = board == to_move[:, None]
        planes[:, 1] = board == (FIRST + SECOND - to_move)[:, None]
        has_last = last != NO_MOVE
        planes[np.flatnonzero(has_last), 2, last[has_last]] = 1.0
        planes[:, 3] = (to_move == FIRST)[:, None]
        return planes.reshape(k, 4, g.height, g.width)

    def _result(self, tree: int, n_playout: int) -> SearchResult:
        visits = self.visits[tree, 0].copy()
        total = visits.sum()
        value = float(self.value_sum[tree, 0][visits > 0].sum() / total) if total else 0.0
        return SearchResult(visits=visits, priors=self.prior[tree, 0].copy(), value=value,
                            playouts=n_playout)
