"""A straightforward PUCT search: one node object per position, a board copy per playout.

It computes what ``BatchedMCTS`` computes with one tree and one leaf per step, in the plainest
form, and exists to be read and to check the fast search against (the tests compare their visit
counts on the same evaluator and seed). The value-sign convention is the one in ``mcts.search``.
Works on any board with ``copy``, ``do_move``, ``game_end``, ``current_state``, ``availables``
and ``current_player``.
"""

from __future__ import annotations

import math

import numpy as np

from mcts.evaluators import Evaluator, evaluate


class Node:
    """Statistics of one position: its edges' priors, visits and value sums, and its children."""

    def __init__(self) -> None:
        self.visits = 0  # N(s): 1 for the expanding visit, plus one per playout through it
        self.edges: dict[int, list[float]] = {}  # move -> [prior, N(s,a), W(s,a)]
        self.children: dict[int, Node] = {}

    def expanded(self) -> bool:
        return bool(self.edges)


class ReferenceMCTS:
    def __init__(self, evaluator: Evaluator, n_playout: int = 400, c_puct: float = 5.0,
                 noise: bool = False, dirichlet_alpha: float = 0.3, dirichlet_epsilon: float = 0.25,
                 rng: np.random.Generator | None = None):
        self.evaluator = evaluator
        self.n_playout = n_playout
        self.c_puct = c_puct
        self.noise = noise
        self.alpha = dirichlet_alpha
        self.epsilon = dirichlet_epsilon
        self.rng = rng if rng is not None else np.random.default_rng()

    def search(self, board) -> np.ndarray:
        """Visit counts of the root's moves after ``n_playout`` playouts from a fresh root."""
        root = Node()
        self._playout(root, board.copy())
        if self.noise:
            moves = sorted(root.edges)
            noise = self.rng.dirichlet(np.full(len(moves), self.alpha))
            for move, eta in zip(moves, noise):
                edge = root.edges[move]
                edge[0] = (1 - self.epsilon) * edge[0] + self.epsilon * eta
        for _ in range(self.n_playout - 1):
            self._playout(root, board.copy())
        visits = np.zeros(board.width * board.height)
        for move, (_, n, _) in root.edges.items():
            visits[move] = n
        return visits

    def _playout(self, node: Node, board) -> None:
        path = []
        while node.expanded():
            move = self._select(node)
            path.append((node, move))
            board.do_move(move)
            if move not in node.children:
                break
            node = node.children[move]
        ended, winner = board.game_end()
        if ended:
            value = 0.0 if winner == -1 else (1.0 if winner == board.current_player else -1.0)
        else:
            priors, value = evaluate(self.evaluator, board)
            leaf = Node()
            leaf.visits = 1
            leaf.edges = {m: [float(priors[m]), 0, 0.0] for m in sorted(board.availables)}
            if path:
                parent, move = path[-1]
                parent.children[move] = leaf
            else:
                node.visits, node.edges = leaf.visits, leaf.edges  # the root's own first playout
        # Back up: the last edge gets -value, the one before +value, ...
        sign = -1.0
        for parent, move in reversed(path):
            edge = parent.edges[move]
            edge[1] += 1
            edge[2] += sign * value
            parent.visits += 1
            sign = -sign

    def _select(self, node: Node) -> int:
        sqrt_n = math.sqrt(node.visits)
        best_move, best_score = -1, -math.inf
        for move, (prior, n, w) in node.edges.items():
            q = w / max(n, 1.0)
            score = q + self.c_puct * prior * (sqrt_n / (1.0 + n))
            if score > best_score:
                best_move, best_score = move, score
        return best_move
