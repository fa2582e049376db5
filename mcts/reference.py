"""A straightforward PUCT search: one node object per position, a board copy per playout.

It computes what ``BatchedMCTS`` computes with one tree and one leaf per step, in the plainest
form, and exists to be read and to check the fast search against (the tests compare their
results, visits, Q and lines, on the same evaluator and seed). The value-sign convention is the
one in ``mcts.search``, the result's fields those of ``mcts.result``. Works on any board with
``copy``, ``do_move``, ``game_end``, ``current_state``, ``availables``, ``current_player``,
``width`` and ``height``.
"""

from __future__ import annotations

import math

import numpy as np

from mcts.config import SearchConfig
from mcts.evaluators import Evaluator, evaluate
from mcts.result import LINE_MOVES, LINE_PLIES, SearchResult


class Node:
    """Statistics of one position: its edges' priors, visits and value sums, and its children."""

    def __init__(self) -> None:
        self.visits = 0  # N(s): 1 for the expanding visit, plus one per playout through it
        self.edges: dict[int, list[float]] = {}  # move -> [prior, N(s,a), W(s,a)]
        self.children: dict[int, Node] = {}

    def expanded(self) -> bool:
        return bool(self.edges)


class ReferenceMCTS:
    """``settings``: those of ``SearchConfig`` (n_playout, c_puct, noise and its alpha and
    epsilon are the ones it plays by); a fresh root every search."""

    def __init__(self, evaluator: Evaluator, rng: np.random.Generator | None = None, **settings):
        self.evaluator = evaluator
        self.config = SearchConfig(reuse_tree=False, **settings)
        self.rng = rng if rng is not None else np.random.default_rng()

    def search(self, board) -> SearchResult:
        """The result of ``n_playout`` playouts from a fresh root."""
        config, root = self.config, Node()
        self._playout(root, board.copy())
        if config.noise:
            moves = sorted(root.edges)
            noise = self.rng.dirichlet(np.full(len(moves), config.dirichlet_alpha))
            for move, eta in zip(moves, noise):
                edge = root.edges[move]
                edge[0] = (1 - config.dirichlet_epsilon) * edge[0] + config.dirichlet_epsilon * eta
        for _ in range(config.n_playout - 1):
            self._playout(root, board.copy())
        size = board.width * board.height
        visits, priors, q = np.zeros(size), np.zeros(size), np.full(size, np.nan)
        for move, (prior, n, w) in root.edges.items():
            visits[move], priors[move] = n, prior
            if n > 0:
                q[move] = w / n
        total = visits.sum()
        value = sum(w for _, n, w in root.edges.values() if n > 0) / total if total else 0.0
        return SearchResult(visits=visits, priors=priors, value=float(value), playouts=config.n_playout, q=q,
                            lines=tuple(self._line(root, move) for move in _most_visited(root)[:LINE_MOVES]))

    @staticmethod
    def _line(root: Node, move: int) -> tuple[int, ...]:
        """The move, then the most visited reply at each node, while there is one."""
        line, node = [move], root.children.get(move)
        while node is not None and len(line) < LINE_PLIES:
            replies = _most_visited(node)
            if not replies:
                break
            line.append(replies[0])
            node = node.children.get(replies[0])
        return tuple(line)

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
            score = q + self.config.c_puct * prior * (sqrt_n / (1.0 + n))
            if score > best_score:
                best_move, best_score = move, score
        return best_move


def _most_visited(node: Node) -> list[int]:
    """The node's visited edges, most visited first; ties to the higher prior, then the lower move."""
    visited = [(-n, -prior, move) for move, (prior, n, _) in node.edges.items() if n > 0]
    return [move for _, _, move in sorted(visited)]
