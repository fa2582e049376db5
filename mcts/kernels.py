"""The search's hot loops as numba kernels: the descent from the roots to the leaves (PUCT
selection, the visits and virtual loss counted on the way), the backup of the leaf values, and
the expected lines a result carries (``mcts.result``).

The arithmetic is ``BatchedMCTS``'s, operation for operation (``Q = W / max(N, 1)``, ``U = c_puct
* P * (sqrt(N(s)) / (1 + N))``, the first of the largest ``Q + U``), so a search is the same
whichever way it runs; descending distinct trees one after the other is descending them together,
and a tree listed several times (several leaves a call) descends in that order. Arrays as in
``mcts.tree.TreeArrays``.
"""

from __future__ import annotations

import math

from numba import njit

NO_CHILD = -1  # mcts.tree's
NO_MOVE = -1  # mcts.result's


@njit(cache=True)
def descend(prior, visits, value_sum, node_visits, children, root_cells, root_count, trees, root_move, c_puct,
            vloss, first, second, cells, leaf_node, leaf_move, depth, path_nodes, path_moves):
    """Walk from the roots of ``trees`` [k] to an unexpanded edge, through root edge ``root_move[i]``
    when it is >= 0, counting each edge's visit (and ``vloss`` off its value sum) on the way; in
    the order of ``trees``, so that a tree listed again descends seeing the visits before it.
    Fills ``cells`` [k, size + 1] (the root position with the path's stones, colours
    ``first`` and ``second`` alternating from the root's ``root_count``), ``leaf_node``,
    ``leaf_move``, ``depth`` [k] and the path, ``path_nodes`` / ``path_moves`` [k, >= size]."""
    size = prior.shape[2]
    for i in range(trees.shape[0]):
        t = trees[i]
        cells[i, :] = root_cells[t, :]
        node = 0
        level = 0
        while True:
            s = math.sqrt(node_visits[t, node])
            move = root_move[i] if level == 0 and root_move[i] >= 0 else -1
            if move < 0:
                best = -math.inf
                for m in range(size):
                    n_edge = visits[t, node, m]
                    score = value_sum[t, node, m] / max(n_edge, 1.0) + c_puct * prior[t, node, m] * (s / (1.0 + n_edge))
                    if score > best:
                        best = score
                        move = m
            visits[t, node, move] += 1.0
            node_visits[t, node] += 1.0
            if vloss:
                value_sum[t, node, move] -= vloss
            cells[i, move] = first if (root_count[t] + level) % 2 == 0 else second
            path_nodes[i, level] = node
            path_moves[i, level] = move
            level += 1
            child = children[t, node, move]
            if child == NO_CHILD:
                break
            node = child
        leaf_node[i] = node
        leaf_move[i] = path_moves[i, level - 1]
        depth[i] = level


@njit(cache=True)
def backup(value_sum, trees, depth, path_nodes, path_moves, leaf_values, vloss):
    """Add each leaf value along its path: ``-v`` to the last edge, ``+v`` to the one before, and
    so on (each edge's statistics are for the player choosing it), giving back the virtual loss."""
    for i in range(trees.shape[0]):
        t = trees[i]
        for level in range(depth[i]):
            sign = -1.0 if (depth[i] - level) % 2 == 1 else 1.0
            value_sum[t, path_nodes[i, level], path_moves[i, level]] += sign * leaf_values[i] + vloss


@njit(cache=True)
def new_nodes(prior, visits, value_sum, children, node_visits, n_nodes, trees, slots, priors, legal,
              illegal_value_sum):
    """Fresh statistics in node ``slots[i]`` of tree ``trees[i]`` (a slot < 0: the tree's next
    free one, numbered in order, counted in ``n_nodes``); ``slots`` is filled in. False when a
    slot lies beyond the trees' capacity (nothing written then)."""
    capacity = prior.shape[1]
    for i in range(trees.shape[0]):
        t = trees[i]
        if slots[i] < 0:
            slots[i] = n_nodes[t]
            n_nodes[t] += 1
        else:
            n_nodes[t] = slots[i] + 1
        if slots[i] >= capacity:
            return False
    for i in range(trees.shape[0]):
        t, slot = trees[i], slots[i]
        for m in range(prior.shape[2]):
            prior[t, slot, m] = priors[i, m]
            visits[t, slot, m] = 0.0
            value_sum[t, slot, m] = 0.0 if legal[i, m] else illegal_value_sum
            children[t, slot, m] = NO_CHILD
        node_visits[t, slot] = 1.0
    return True


@njit(cache=True)
def lines(visits, prior, children, tree, first, out):
    """The expected line of each root move ``first[i]`` of tree ``tree`` into ``out[i]`` [plies]
    (NO_MOVE after its end): the move, then at each node reached the most visited edge (ties to
    the higher prior, then the lower move), until a node that is not expanded or has no visited
    edge, or ``plies`` moves."""
    size = visits.shape[2]
    for i in range(first.shape[0]):
        out[i, :] = NO_MOVE
        move = first[i]
        node = 0
        for ply in range(out.shape[1]):
            out[i, ply] = move
            node = children[tree, node, move]
            if node == NO_CHILD:
                break
            move = NO_MOVE
            for m in range(size):
                n_edge = visits[tree, node, m]
                if n_edge <= 0:
                    continue
                if move == NO_MOVE or n_edge > visits[tree, node, move] or (
                        n_edge == visits[tree, node, move] and prior[tree, node, m] > prior[tree, node, move]):
                    move = m
            if move == NO_MOVE:
                break
