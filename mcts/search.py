"""Array-based PUCT Monte Carlo tree search over many trees at once: tree storage, selection,
backup and tree reuse. The game's rules (terminal positions, the moves a node searches, the
evaluator's input planes) come from a rules object (``mcts.game.Rules``) and the judgement of
leaves from an evaluator (``mcts.evaluators``), both injected; the root's moves may be chosen by
a root selector in place of PUCT (the Gumbel root, ``mcts.gumbel``).

Value-sign convention (the one place it is stated):
    Every value is from the point of view of the player to move in the position it belongs to.
    An evaluator's value for a leaf is for the player to move at that leaf. The edge statistics
    ``W[s, a]`` (sum of backed-up values) and ``Q[s, a] = W / N`` of node ``s`` are from the point
    of view of the player to move at ``s``, the one choosing ``a``. Backing a leaf value ``v`` up
    the path therefore adds ``-v`` to the last edge, ``+v`` to the one before, and so on. A
    terminal position is valued exactly: -1 for the player to move when the previous move won
    (they have lost), 0 for a full board; a position the rules call won by force, +1.

Layout (``mcts.tree.TreeArrays``): per tree, node slots holding the statistics of their edges;
positions are rebuilt during the descent by placing stones on a per-tree working copy of the root
position, so no board is ever deep-copied. The descent (selection, counting the visits on the way)
and the backup are compiled loops over those arrays (``mcts.kernels``, numba), and the leaves of
all trees go to the evaluator as one batch. One playout in one tree (the players' single-game
search) skips the batch bookkeeping (``_step_one``), which would cost it about 60 us a playout.

Selection (PUCT, as in the classic AlphaZero-Gomoku): ``argmax_a Q(s,a) + c_puct * P(s,a) *
sqrt(N(s)) / (1 + N(s,a))`` with ``Q = 0`` for unvisited edges, ``N(s)`` the visits of node ``s``
itself (1 for the visit that expanded it plus those of its edges) and ties going to the lowest
move index. A fresh root is expanded by the first playout, as in the classic implementation.

With ``leaves_per_step > 1`` each tree descends several times before the evaluator is called,
with a virtual loss on the edges taken so that later descents look elsewhere.
With ``pipeline`` as well, the evaluator runs on a thread of its own while this one gathers the
next batch (``_pipelined``): one batch is gathered with the previous one still in flight (its
virtual loss in place), in a fixed order, so the search does not depend on the threads' timing.

Gumbel root (``gumbel_k > 0``, self-play only; needs ``reuse_tree=False``): the root's playouts go
to ``gumbel_k`` moves sampled with Gumbel noise and narrowed by sequential halving
(``mcts.gumbel.GumbelRoot``), one leaf per tree per evaluator call; the result then carries the
move to play and the improved policy to train on. There is no Dirichlet noise; below the root the
search is PUCT as above.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

import numpy as np

import mcts.kernels as kernels
from mcts.config import SearchConfig
from mcts.evaluators import Evaluator
from mcts.game import FIRST, SECOND, GameLike, Rules
from mcts.gumbel import GumbelRoot
from mcts.result import LINE_MOVES, NO_MOVE, SearchResult, edge_q, ranked, visit_policy
from mcts.tree import ILLEGAL_VALUE_SUM, NO_CHILD, TreeArrays

log = logging.getLogger(__name__)

CAPACITY_PER_PLAYOUT = 3  # node slots per tree = this * n_playout + 2 (a reused subtree included)

__all__ = ["CAPACITY_PER_PLAYOUT", "BatchedMCTS", "GameLike", "Rules", "SearchConfig", "SearchResult",
           "visit_policy"]


@dataclass
class _Descent:
    """One batch of descents: per level, which trees went down which edge of which node."""

    trees: np.ndarray  # [k] tree index per descent
    path_nodes: np.ndarray | None = None  # [k, size] the node slots on each path (the first depth[i])
    path_moves: np.ndarray | None = None  # [k, size] the edges taken from them
    leaf_node: np.ndarray | None = None  # [k] node whose edge ends the descent
    leaf_move: np.ndarray | None = None  # [k] that edge's move
    depth: np.ndarray | None = None  # [k] number of edges taken
    cells: np.ndarray | None = None  # [k, size + 1] position at the leaf
    to_move: np.ndarray | None = None  # [k] colour to move at the leaf
    terminal_value: np.ndarray | None = None  # [k] exact value, NaN when not terminal


def _none() -> np.ndarray:
    return np.zeros(0, dtype=np.int64)


@dataclass
class _Batch:
    """The leaves of one evaluator call (``BatchedMCTS._gather``), indices into ``d``'s leaves
    (``open_``: those not terminal) or into its distinct open leaves (``grow``, ``borrowed``)."""

    d: _Descent  # its descents (a tree's several in a row: ``_gather``)
    vloss: float  # the virtual loss they took
    values: np.ndarray  # [k] each leaf's value: exact where terminal, NaN until judged
    open_: np.ndarray | None = None  # leaves not terminal
    inverse: np.ndarray | None = None  # for each of those, its distinct leaf
    leaf_values: np.ndarray | None = None  # [distinct] +1 where the rules see a forced win, else NaN
    grow: np.ndarray = field(default_factory=_none)  # distinct leaves the evaluator judges and the search expands
    grow_keys: np.ndarray = field(default_factory=_none)  # their edges' keys (tree, node, move)
    grow_at: np.ndarray = field(default_factory=_none)  # their first leaf in ``d``
    grow_values: np.ndarray | None = None  # the evaluator's values for them, once finished
    planes: np.ndarray | None = None  # the evaluator's input for them
    legal: np.ndarray | None = None
    borrowed: np.ndarray = field(default_factory=_none)  # distinct leaves the previous batch (``lender``) was evaluating
    borrowed_keys: np.ndarray = field(default_factory=_none)
    lender: _Batch | None = None


class BatchedMCTS(TreeArrays):
    """PUCT search over ``n_trees`` independent games, batching their leaves for the evaluator.

    ``rules``: the game's (``mcts.game.Rules``), built by the caller for one board shape; the
    boards searched must be theirs (``Rules.check``)."""

    def __init__(self, evaluator: Evaluator, rules: Rules, config: SearchConfig, n_trees: int = 1,
                 rng: np.random.Generator | None = None):
        self.evaluator = evaluator
        self.config = config
        self.rules = rules
        self.size = rules.size
        self.root_selector = GumbelRoot(config.gumbel_k) if config.gumbel_k else None
        self.n_trees = n_trees
        self.rng = rng if rng is not None else np.random.default_rng()
        size = self.size
        super().__init__(n_trees, CAPACITY_PER_PLAYOUT * config.n_playout + 2, size)
        # The root position of each tree.
        self.root_moves: list[list[int]] = [[] for _ in range(n_trees)]
        self.root_cells = np.zeros((n_trees, size + 1), dtype=np.int8)
        self.root_count = np.zeros(n_trees, dtype=np.int64)  # stones on the root board
        self.root_clean_prior = np.zeros((n_trees, size), dtype=np.float64)
        self.root_value = np.zeros(n_trees, dtype=np.float64)  # the evaluator's value of a fresh root
        # Whether the root's moves are a root's (``Rules.root_differs``): it was expanded as a root,
        # or checked as one since the search moved to it, before the search's stop (whose checks
        # give up); the rounds of one move check it once.
        self.root_checked = np.zeros(n_trees, dtype=bool)
        self._executor: ThreadPoolExecutor | None = None  # the evaluator's thread (``pipeline``)

    # ------------------------------------------------------------------ public API
    def search(self, boards: Sequence[GameLike], noise: bool | None = None, n_playout: int | None = None,
               keep_tree: bool = False, stop: Callable[[], bool] | None = None) -> list[SearchResult]:
        """Run ``n_playout`` playouts (default: the config's) from each board (board i uses tree i).

        ``keep_tree`` keeps a tree searched from the same position even when the config does not
        reuse trees between moves (to search one position in several calls). ``stop`` is handed to
        the rules for this call (``Rules.stop``): once it is true, their costly checks give up, so
        that a caller with a clock is not held by them; the playouts themselves all run.
        """
        self.rules.stop = stop
        try:
            return self._search(boards, noise, n_playout, keep_tree)
        except BaseException:  # descents not backed up (an evaluator's error, an interrupt): start afresh
            self.reset()
            raise
        finally:
            self.rules.stop = None

    def _search(self, boards: Sequence[GameLike], noise: bool | None, n_playout: int | None,
                keep_tree: bool) -> list[SearchResult]:
        if len(boards) > self.n_trees:
            raise ValueError(f"{len(boards)} boards for {self.n_trees} trees")
        noise = self.config.noise if noise is None else noise
        trees = np.arange(len(boards))
        n_playout = self.config.n_playout if n_playout is None else n_playout
        if not 1 <= n_playout <= self.config.n_playout:
            raise ValueError(f"n_playout must be in 1..{self.config.n_playout}, got {n_playout}")
        remaining = np.full(len(boards), n_playout, dtype=np.int64)
        for tree, board in enumerate(boards):
            self.rules.check(board)
            self._set_root(tree, list(board.moves), keep_tree, n_playout)
        if self.rules.root_differs:
            self._drop_roots_with_other_moves(trees[(self.n_nodes[trees] > 0) & ~self.root_checked[trees]])
        fresh = trees[self.n_nodes[trees] == 0]
        if fresh.size:
            self._expand_roots(fresh)
            remaining[fresh] -= 1
        if self.root_selector is not None:
            played, selected = self.root_selector.run(self, trees, remaining, self.rng)
            playouts = n_playout - remaining + played
            return [self._selected_result(tree, int(p), int(m)) for tree, p, m in zip(trees, playouts, selected)]
        if noise:
            self._add_root_noise(trees)
        else:  # a kept root searched before with noise has it still
            self.prior[trees, 0] = self.root_clean_prior[trees]
        if self.config.pipeline:
            self._pipelined(trees, remaining)
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
            self.root_checked[t] = False

    # ------------------------------------------------------------------ roots
    def _set_root(self, tree: int, moves: list[int], keep_tree: bool = False, n_playout: int | None = None) -> None:
        """Point the tree at the position after ``moves``, keeping the matching subtree if any
        (the same position kept while this search's ``n_playout`` more nodes fit)."""
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
        elif moves == old:  # the same position again (a round of a timed search, or a search again)
            room = self.config.n_playout if n_playout is None else n_playout
            if self.n_nodes[tree] + room + 1 > self.capacity:  # its tree grows while this search fits
                self.n_nodes[tree] = 0
        else:
            self._compact(tree, node, self.config.n_playout)
            self.root_checked[tree] = False  # a former inner node
            if self.n_nodes[tree] > 0:
                self.root_clean_prior[tree] = self.prior[tree, 0]  # no noise
        if self.n_nodes[tree] == 0:
            self.root_checked[tree] = False
        self.root_moves[tree] = moves
        self.root_count[tree] = len(moves)
        cells = self.root_cells[tree]
        cells[:] = 0
        cells[moves[0::2]] = FIRST
        cells[moves[1::2]] = SECOND
        colour = FIRST if len(moves) % 2 == 1 else SECOND
        if len(moves) == self.size or (moves and self.rules.wins_one(cells, moves[-1], colour)):
            raise ValueError("cannot search a position where the game has ended")

    def _root_planes(self, trees: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cells = self.root_cells[trees]
        to_move = np.where(self.root_count[trees] % 2 == 0, FIRST, SECOND)
        last = np.array([self.root_moves[t][-1] if self.root_moves[t] else NO_MOVE for t in trees])
        return self.rules.encode(cells, to_move, last), self.rules.moves_to_search(cells, to_move, root=True)[1]

    def _drop_roots_with_other_moves(self, trees: np.ndarray) -> None:
        """Start afresh the reused roots whose moves to search differ as a root (``root_differs``:
        a former inner node was expanded with the moves of an inner node)."""
        if trees.size == 0:
            return
        to_move = np.where(self.root_count[trees] % 2 == 0, FIRST, SECOND)
        legal = self.rules.moves_to_search(self.root_cells[trees], to_move, root=True)[1]
        for tree in trees[(legal != self.root_searched(trees)).any(axis=1)]:
            log.debug("tree %d: the root's moves changed (the rules' root rules); starting a fresh tree", tree)
            self.n_nodes[tree] = 0
        self.root_checked[trees] = (self.n_nodes[trees] > 0) & self._not_stopped()

    def _expand_roots(self, trees: np.ndarray) -> None:
        planes, legal = self._root_planes(trees)
        priors, values = self.evaluator.evaluate_batch(planes, legal)
        self._new_nodes(trees, np.zeros(len(trees), dtype=np.int64), priors, legal)
        self.root_clean_prior[trees] = self.prior[trees, 0]
        self.root_value[trees] = values
        self.root_checked[trees] = self._not_stopped()

    def _not_stopped(self) -> bool:
        """Whether the rules' checks so far ran to their end: the search's stop (``search``) is not
        yet true."""
        stop = self.rules.stop
        return stop is None or not stop()

    def _add_root_noise(self, trees: np.ndarray) -> None:
        eps, alpha = self.config.dirichlet_epsilon, self.config.dirichlet_alpha
        for tree in trees:
            legal = np.flatnonzero(self.root_searched(np.array([tree]))[0])
            noise = self.rng.dirichlet(np.full(legal.size, alpha))
            prior = self.root_clean_prior[tree].copy()
            prior[legal] = (1 - eps) * prior[legal] + eps * noise
            self.prior[tree, 0] = prior

    # ------------------------------------------------------------------ a root selector's view (mcts.gumbel.Roots)
    def root_searched(self, trees: np.ndarray) -> np.ndarray:
        """bool [k, size]: the moves the roots of ``trees`` search (their edges' value sums are not
        ILLEGAL_VALUE_SUM)."""
        return self.value_sum[trees, 0] > ILLEGAL_VALUE_SUM / 2

    def root_prior(self, trees: np.ndarray) -> np.ndarray:
        return self.root_clean_prior[trees]

    def root_edges(self, tree: int) -> tuple[np.ndarray, np.ndarray]:
        return self.visits[tree, 0], self.value_sum[tree, 0]

    def playouts_through(self, trees: np.ndarray, moves: np.ndarray) -> None:
        self._step(trees, np.ones(len(trees), dtype=np.int64), moves)

    def _selected_result(self, tree: int, playouts: int, selected: int) -> SearchResult:
        result = self._result(tree, playouts)
        improved = self.root_selector.policy(self, tree, result.priors, float(self.root_value[tree]))
        return replace(result, improved=improved, selected=selected)

    # ------------------------------------------------------------------ playouts
    def _step(self, trees: np.ndarray, leaves: np.ndarray, root_move: np.ndarray | None = None) -> None:
        """Run ``leaves[i]`` playouts in tree ``trees[i]``, evaluating all their leaves in one batch
        (``root_move``: one playout per tree, through root edge ``root_move[i]``)."""
        batch = self._gather(trees, leaves, root_move)
        self._finish(batch, *self._evaluate(batch))

    def _pipelined(self, trees: np.ndarray, remaining: np.ndarray) -> None:
        """The playouts of ``_step`` with the evaluator running on another thread while this one
        gathers the next batch (``pipeline``): gather B; wait for A's evaluation; start B's; finish
        A (expand, back up); gather C ... At most one evaluation runs at a time, and the order of
        the tree work is fixed, so the search does not depend on the threads' timing: each batch
        is gathered with the previous one's descents counted (virtual loss) but not yet backed up.
        A leaf that the batch being evaluated already holds is not evaluated again: it takes that
        evaluation's value once it is in."""
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcts-evaluator")
        pending: tuple[_Batch, Future] | None = None
        nxt = None
        try:
            while True:
                running = trees[remaining > 0]
                batch = None
                if running.size:
                    leaves = np.minimum(remaining[running], self.config.leaves_per_step)
                    batch = self._gather(running, leaves, pending=None if pending is None else pending[0])
                    remaining[running] -= leaves
                evaluated = None if pending is None else pending[1].result()
                nxt = None if batch is None else (batch, self._executor.submit(self._evaluate, batch))
                if pending is not None:
                    self._finish(pending[0], *evaluated)
                pending = nxt
                if pending is None:
                    return
        except BaseException:  # the evaluation in flight ends before the caller may evaluate again
            wait([flight[1] for flight in (pending, nxt) if flight is not None])
            raise

    def _gather(self, trees: np.ndarray, leaves: np.ndarray, root_move: np.ndarray | None = None,
                pending: _Batch | None = None) -> _Batch:
        """Descend ``leaves[i]`` times in tree ``trees[i]`` and ask the rules about the leaves: the
        evaluator's input for those it must judge (``pending``: a batch gathered before, not yet
        finished, whose evaluated leaves this one borrows instead)."""
        vloss = self.config.virtual_loss if self.config.leaves_per_step > 1 and root_move is None else 0.0
        rounds = 1 if root_move is not None else int(leaves.max())
        if rounds > 1:  # round after round, each tree with leaves left: one kernel call takes them in this order
            trees = np.concatenate([trees[leaves > round_] for round_ in range(rounds)])
        d = self._descend(trees, vloss, root_move)
        batch = _Batch(d, vloss, values=d.terminal_value.copy())
        open_ = np.flatnonzero(np.isnan(batch.values))
        if open_.size == 0:
            return batch
        key = (d.trees[open_] * self.capacity + d.leaf_node[open_]) * self.size + d.leaf_move[open_]
        if rounds == 1:  # one descent per tree: the leaves are distinct
            first, inverse = np.arange(open_.size), np.arange(open_.size)
        else:  # descents of one tree may end on the same edge: evaluate it once
            _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        unique = open_[first]
        batch.open_, batch.inverse = open_, inverse.ravel()
        cells, to_move = d.cells[unique], d.to_move[unique]
        can_win, legal = self.rules.moves_to_search(cells, to_move, depth=d.depth[unique])
        batch.leaf_values = np.where(can_win, 1.0, np.nan)  # a win in one is worth +1 to the player to move
        grow = ~can_win
        if pending is not None and pending.grow_keys.size:  # being evaluated already: borrowed
            borrowed = grow & np.isin(key[first], pending.grow_keys)
            batch.borrowed, batch.borrowed_keys, batch.lender = np.flatnonzero(borrowed), key[first][borrowed], pending
            grow &= ~borrowed
        batch.grow = np.flatnonzero(grow)
        batch.grow_keys = key[first][batch.grow]
        if batch.grow.size:
            batch.grow_at = unique[batch.grow]
            batch.planes = self.rules.encode(cells[batch.grow], to_move[batch.grow], d.leaf_move[batch.grow_at])
            batch.legal = legal[batch.grow]
        return batch

    def _evaluate(self, batch: _Batch) -> tuple[np.ndarray | None, np.ndarray | None]:
        """(priors, values) of the evaluator for the leaves of ``batch`` to judge (None, None: none)."""
        if batch.grow.size == 0:
            return None, None
        return self.evaluator.evaluate_batch(batch.planes, batch.legal)

    def _finish(self, batch: _Batch, priors: np.ndarray | None, net_values: np.ndarray | None) -> None:
        """Expand the evaluated leaves of ``batch`` and back up all its values."""
        values, d = batch.values, batch.d
        if batch.open_ is not None:
            leaf_values = batch.leaf_values
            if batch.grow.size:
                leaf_values[batch.grow] = batch.grow_values = net_values
                at = batch.grow_at
                new_slots = self._new_nodes(d.trees[at], None, priors, batch.legal)
                self.children[d.trees[at], d.leaf_node[at], d.leaf_move[at]] = new_slots
            if batch.borrowed.size:  # the lender was finished first
                lent = dict(zip(batch.lender.grow_keys.tolist(), batch.lender.grow_values.tolist()))
                leaf_values[batch.borrowed] = [lent[key] for key in batch.borrowed_keys.tolist()]
                batch.lender = None
            values[batch.open_] = leaf_values[batch.inverse]
        self._backup(d, values, batch.vloss)

    def _step_one(self, tree: int) -> None:
        """``_step`` for one playout in one tree (the players' single-game search): the same
        arithmetic without the batch bookkeeping, which would cost it about 60 us a playout."""
        d = self._descend(np.array([tree]), 0.0)
        value = float(d.terminal_value[0])
        if np.isnan(value):
            can_win, legal = self.rules.moves_to_search(d.cells, d.to_move, depth=d.depth)
            if can_win[0]:
                value = 1.0  # a win by force for the player to move
            else:
                priors, values = self.evaluator.evaluate_batch(self.rules.encode(d.cells, d.to_move, d.leaf_move), legal)
                value = float(values[0])
                slot = self._new_nodes(d.trees, None, priors, legal)[0]
                self.children[tree, int(d.leaf_node[0]), int(d.leaf_move[0])] = slot
        self._backup(d, np.array([value]), 0.0)

    def _descend(self, trees: np.ndarray, vloss: float, root_move: np.ndarray | None = None) -> _Descent:
        """Walk from the roots of ``trees`` to an unexpanded edge (through root edge ``root_move[i]``
        when given), a tree listed several times once per listing, in order, each descent seeing
        the visits and virtual loss of those before it: the selection loop is ``mcts.kernels.descend``."""
        k = len(trees)
        d = _Descent(trees=trees, leaf_node=np.empty(k, dtype=np.int64), leaf_move=np.empty(k, dtype=np.int64),
                     depth=np.empty(k, dtype=np.int64), cells=np.empty((k, self.size + 1), dtype=self.root_cells.dtype),
                     path_nodes=np.empty((k, self.size), dtype=np.int64),
                     path_moves=np.empty((k, self.size), dtype=np.int64))
        through = np.full(k, NO_MOVE, dtype=np.int64) if root_move is None else np.asarray(root_move, dtype=np.int64)
        kernels.descend(self.prior, self.visits, self.value_sum, self.node_visits, self.children, self.root_cells,
                        self.root_count, np.asarray(trees, dtype=np.int64), through, self.config.c_puct, vloss,
                        FIRST, SECOND, d.cells, d.leaf_node, d.leaf_move, d.depth, d.path_nodes, d.path_moves)
        move_count = self.root_count[trees]
        colour_moved = np.where((move_count + d.depth) % 2 == 1, FIRST, SECOND)
        d.to_move = FIRST + SECOND - colour_moved
        if k == 1:  # the single-game search: one position, the rules' scalar check
            won = np.array([self.rules.wins_one(d.cells[0], int(d.leaf_move[0]), int(colour_moved[0]))])
        else:
            won = self.rules.wins(d.cells, d.leaf_move, colour_moved)
        full = move_count + d.depth == self.size
        d.terminal_value = np.where(won, -1.0, np.where(full, 0.0, np.nan))
        return d

    def _backup(self, d: _Descent, leaf_values: np.ndarray, vloss: float) -> None:
        """Add the leaf values along the paths (visits were counted on the way down)."""
        kernels.backup(self.value_sum, np.asarray(d.trees, dtype=np.int64), d.depth, d.path_nodes, d.path_moves,
                       np.asarray(leaf_values, dtype=np.float64), vloss)

    def _result(self, tree: int, n_playout: int) -> SearchResult:
        """The record of the root of ``tree`` (``mcts.result``), read off its arrays."""
        visits, priors, value_sum = self.visits[tree, 0].copy(), self.prior[tree, 0].copy(), self.value_sum[tree, 0]
        total = visits.sum()
        value = float(value_sum[visits > 0].sum() / total) if total else 0.0
        return SearchResult(visits=visits, priors=priors, value=value, playouts=n_playout, q=edge_q(visits, value_sum),
                            lines=self.lines(tree, ranked(visits, priors)[:LINE_MOVES]))
