"""What the search calls to judge a position: the evaluator protocol, a torch-free evaluator and
a cache in front of any evaluator.

An evaluator takes a batch of positions encoded as the rules encode them (``Rules.encode``: C
planes of the board, the game's own encoding) with a mask of the moves to consider (those the
rules let a node search), and returns priors over moves and a value, both from the point of view
of the player to move. The network evaluator lives in ``nets/``; the search never sees torch.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np


class Evaluator(Protocol):
    def evaluate_batch(self, planes: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """planes: float32 [B, C, H, W] (the rules' encoding); legal: bool [B, H*W].

        Returns priors float [B, H*W] (zero on illegal moves, each row summing to 1) and
        values float [B] in [-1, 1] for the player to move.
        """
        ...


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


DEFAULT_CACHE_ENTRIES = 50_000  # positions a CachedEvaluator remembers (cleared when full)
CACHE_ENTRY_OVERHEAD = 250  # bytes of a cache entry besides its priors (key, tuple, dict slot), roughly


def cache_entry_bytes(size: int) -> int:
    """Rough bytes of one CachedEvaluator entry on a board of ``size`` points."""
    return 8 * size + CACHE_ENTRY_OVERHEAD


class CachedEvaluator:
    """Remembers another evaluator's answers by position, so that a position reached again (by
    another move order: transpositions are common in placement games, or in the next move's search)
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
        # The planes must be 0/1 (stones, marks): one bit each, then one bit per move of the mask.
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
