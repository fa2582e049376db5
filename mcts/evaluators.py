"""What the search calls to judge a position: the evaluator protocol and two torch-free evaluators.

An evaluator takes a batch of positions encoded as the 4 planes of ``Board.current_state()``
(own stones, opponent stones, last move, ones when the first player is to move) with a mask of
the moves to consider (the legal moves, or only the forced ones when the search's forced-move
rules apply), and returns priors over moves and a value, both from the point of view of the
player to move. The network evaluator lives in ``nets/``; the search never sees torch.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from mcts.geometry import Geometry


class Evaluator(Protocol):
    def evaluate_batch(self, planes: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """planes: float32 [B, 4, H, W]; legal: bool [B, H*W].

        Returns priors float [B, H*W] (zero on illegal moves, each row summing to 1) and
        values float [B] in [-1, 1] for the player to move.
        """
        ...


PLANES = 4  # own stones, opponent stones, last move, ones when the first player is to move


def input_planes(cells: np.ndarray, to_move: np.ndarray, last: np.ndarray, first_to_move: np.ndarray,
                 height: int, width: int) -> np.ndarray:
    """The network's input, the one encoding of a position (the search's leaves, ``Board``):
    cells int [k, >= H*W] (0 empty, else the stone's colour, 1 or 2; columns past H*W ignored),
    to_move [k] the colour to move, last [k] the last move (negative: none), first_to_move bool
    [k] -> float32 [k, 4, H, W]."""
    size = height * width
    k = len(cells)
    planes = np.zeros((k, PLANES, size), dtype=np.float32)
    board = cells[:, :size]
    planes[:, 0] = board == to_move[:, None]
    planes[:, 1] = board == (3 - to_move)[:, None]
    has_last = last >= 0
    planes[np.flatnonzero(has_last), 2, last[has_last]] = 1.0
    planes[:, 3] = first_to_move[:, None]
    return planes.reshape(k, PLANES, height, width)


def evaluate(evaluator: Evaluator, board) -> tuple[np.ndarray, float]:
    """Evaluate one board (any object with ``current_state()`` and ``availables``)."""
    planes = board.current_state()[None]
    legal = np.zeros((1, planes.shape[2] * planes.shape[3]), dtype=bool)
    legal[0, list(board.availables)] = True
    priors, values = evaluator.evaluate_batch(planes, legal)
    return priors[0], float(values[0])


def uniform_priors(legal: np.ndarray) -> np.ndarray:
    counts = legal.sum(axis=1, keepdims=True)
    return legal / np.maximum(counts, 1)


class UniformEvaluator:
    """Uniform priors and value 0: a search guided by nothing but its own visits."""

    def evaluate_batch(self, planes: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return uniform_priors(legal), np.zeros(len(legal))


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


DEFAULT_CACHE_ENTRIES = 50_000  # positions a CachedEvaluator remembers (cleared when full)
CACHE_ENTRY_OVERHEAD = 250  # bytes of a cache entry besides its priors (key, tuple, dict slot), roughly


def cache_entry_bytes(size: int) -> int:
    """Rough bytes of one CachedEvaluator entry on a board of ``size`` points."""
    return 8 * size + CACHE_ENTRY_OVERHEAD


class CachedEvaluator:
    """Remembers another evaluator's answers by position, so that a position reached again (by
    another move order: transpositions are common in gomoku, or in the next move's search)
    costs a dictionary look-up instead of a net call. The key is the whole input (the planes,
    last move included, and the mask of moves), so the answers are exactly the evaluator's.
    ``hits`` and ``misses`` count positions; the memory is cleared when ``max_entries`` is reached.
    """

    def __init__(self, evaluator: Evaluator, max_entries: int = DEFAULT_CACHE_ENTRIES):
        self.evaluator = evaluator
        self.max_entries = max_entries
        self._memory: dict[bytes, tuple[np.ndarray, float]] = {}
        self.hits = 0
        self.misses = 0

    def __getattr__(self, name: str):  # the wrapped evaluator's attributes (config, width...)
        if name == "evaluator" or name.startswith("__"):  # not set yet (copy, pickle): no recursion
            raise AttributeError(name)
        return getattr(self.evaluator, name)

    def evaluate_batch(self, planes: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        batch = len(planes)
        # The planes are 0/1 (``Board.current_state``): one bit each, then one bit per move of the mask.
        bits = np.concatenate([planes.reshape(batch, -1) > 0, legal], axis=1)
        packed = np.packbits(bits, axis=1)
        board = bytes(planes.shape[2:])  # (height, width): a 6x10 and a 10x6 board have as many bits
        keys = [board + row.tobytes() for row in packed]
        found = [self._memory.get(key) for key in keys]
        missing = [i for i, hit in enumerate(found) if hit is None]
        self.hits += batch - len(missing)
        self.misses += len(missing)
        if missing:
            priors, values = self.evaluator.evaluate_batch(planes[missing], legal[missing])
            if len(self._memory) + len(missing) > self.max_entries:
                self._memory.clear()
            for row, i in enumerate(missing):
                found[i] = self._memory[keys[i]] = (priors[row].copy(), float(values[row]))
        return np.stack([prior for prior, _ in found]), np.array([value for _, value in found])
