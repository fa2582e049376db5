"""The storage of many search trees in arrays (``BatchedMCTS``'s tree; mcts/search.py).

Each of ``n_trees`` trees owns ``capacity`` node slots. Per node the arrays hold, over all
``H*W`` moves, the priors ``P``, visit counts ``N`` and value sums ``W`` of its edges, and the
child slot of each edge (-1 until expanded); edges to occupied points hold the value sum
``ILLEGAL_VALUE_SUM``, so selection never takes them. Nodes hold statistics only, no position.
"""

from __future__ import annotations

import logging

import numpy as np

import mcts.kernels as kernels
from mcts.result import LINE_PLIES, NO_MOVE

log = logging.getLogger(__name__)

NO_CHILD = -1
ILLEGAL_VALUE_SUM = -1e9  # the value sum of edges to occupied points, so selection never takes them


class TreeArrays:
    """``n_trees`` trees of ``capacity`` node slots over ``size`` moves; slot 0 is a tree's root."""

    def __init__(self, n_trees: int, capacity: int, size: int):
        self.capacity = capacity
        shape = (n_trees, capacity, size)
        self.prior = np.zeros(shape, dtype=np.float64)
        self.visits = np.zeros(shape, dtype=np.float64)
        self.value_sum = np.zeros(shape, dtype=np.float64)
        self.children = np.empty(shape, dtype=np.int32)  # each slot set to NO_CHILD when its node is made
        self.node_visits = np.zeros((n_trees, capacity), dtype=np.float64)
        self.n_nodes = np.zeros(n_trees, dtype=np.int64)  # used slots; the root is slot 0

    def lines(self, tree: int, first: np.ndarray) -> tuple[tuple[int, ...], ...]:
        """The expected lines (``mcts.result``) of the root moves ``first`` of ``tree`` that have a
        visit, in their order."""
        first = np.asarray(first, dtype=np.int64)
        first = first[self.visits[tree, 0, first] > 0]
        out = np.empty((first.size, LINE_PLIES), dtype=np.int64)
        kernels.lines(self.visits, self.prior, self.children, tree, first, out)
        return tuple(tuple(move for move in row if move != NO_MOVE) for row in out.tolist())

    def _new_nodes(self, trees: np.ndarray, slots: np.ndarray | None, priors: np.ndarray,
                   legal: np.ndarray) -> np.ndarray:
        """Initialise one node per entry of ``trees`` (at ``slots``, or the next free slots:
        several new nodes of one tree are numbered in order); returns the slots."""
        slots = np.full(len(trees), -1, dtype=np.int64) if slots is None else np.array(slots, dtype=np.int64)
        if not kernels.new_nodes(self.prior, self.visits, self.value_sum, self.children, self.node_visits, self.n_nodes,
                                 np.asarray(trees, dtype=np.int64), slots, np.asarray(priors).reshape(len(trees), -1),
                                 np.asarray(legal).reshape(len(trees), -1), ILLEGAL_VALUE_SUM):
            raise RuntimeError("search tree capacity exceeded")  # cannot happen: roots are kept only with room for the search's playouts
        return slots

    def _compact(self, tree: int, new_root: int, room: int) -> None:
        """Keep only the subtree under ``new_root``, renumbered from slot 0, when ``room`` more
        nodes fit beside it (else empty the tree)."""
        levels = [np.array([new_root])]
        while True:
            children = self.children[tree, levels[-1]]
            children = children[children != NO_CHILD]
            if children.size == 0:
                break
            levels.append(children)
        old = np.concatenate(levels)
        if old.size + room + 1 > self.capacity:
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
