"""The classic pure-MCTS evaluation of a five-in-a-row position: uniform priors and one random
playout to the end of the game (``gomoku.players.search.PureMCTSPlayer``)."""

from __future__ import annotations

import numpy as np

from gomoku.tactics.geometry import Geometry
from mcts.evaluators import uniform_priors


class RolloutEvaluator:
    """Uniform priors and the result of one uniformly random playout to the end of the game.

    This is the classic pure-MCTS evaluation: from the position, the players alternately place
    stones on uniformly random empty points until somebody completes a line or the board is
    full. A random playout is a uniformly random order of the empty points, so instead of
    playing it move by move we draw the order at once and find, over all line windows, the
    first one completed by a single colour (numpy, no per-move win scan). The outcome has the
    same distribution as the move-by-move playout.
    """

    def __init__(self, width: int, height: int, n_in_row: int, rng: np.random.Generator):
        self.geometry = Geometry(width, height, n_in_row)
        self.rng = rng
        self._windows = self.geometry.windows[:-1]  # no dummy row

    def evaluate_batch(self, planes: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        batch = len(planes)
        size = self.geometry.size
        own = planes[:, 0].reshape(batch, size) > 0
        opponent = planes[:, 1].reshape(batch, size) > 0
        empty = ~(own | opponent)
        # Rank every point: stones first (rank < n_stones), then the empties in random order.
        keys = self.rng.random((batch, size))
        keys[~empty] = -1.0
        order = np.argsort(keys, axis=1)
        rank = np.empty_like(order)
        np.put_along_axis(rank, order, np.arange(size)[None, :].repeat(batch, 0), axis=1)
        n_stones = (~empty).sum(axis=1, keepdims=True)
        # Colour: 1 = player to move, 2 = opponent. The player to move places the first empty.
        colour = np.where(own, 1, 2)
        colour = np.where(empty, 1 + (rank - n_stones) % 2, colour)
        window_colour = colour[:, self._windows]  # [B, n_windows, n]
        uniform = (window_colour == window_colour[:, :, :1]).all(axis=2)
        finish = rank[:, self._windows].max(axis=2)  # the step at which the window fills up
        finish = np.where(uniform, finish, size + 1)
        first = finish.argmin(axis=1)
        decided = finish[np.arange(batch), first] <= size
        winner_colour = window_colour[np.arange(batch), first, 0]
        values = np.where(decided, np.where(winner_colour == 1, 1.0, -1.0), 0.0)
        return uniform_priors(legal), values
