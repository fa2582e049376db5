"""The 8 symmetries of a square board (4 rotations x reflection), on planes and on move policies.

``move_permutations(width, height)[k]`` is transform ``k`` as an index permutation of the points
(the identity first); planes and policies are transformed with the same permutation, so they
stay consistent. A non-square board has
only the 4 symmetries that keep its shape (identity, the two flips, and the half turn).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np


@lru_cache(maxsize=None)
def move_permutations(width: int, height: int) -> tuple[np.ndarray, ...]:
    """For each symmetry, the gather ``source`` with ``new = old[..., source]``: ``source[i]`` is
    the old point that lands on the new point ``i``. The identity comes first."""
    index = np.arange(width * height).reshape(height, width)
    images = []
    for k in range(4):
        rotated = np.rot90(index, k)
        for flipped in (rotated, np.fliplr(rotated)):
            if flipped.shape == index.shape:
                images.append(flipped.ravel().copy())
    unique = []
    for image in images:
        if not any(np.array_equal(image, seen) for seen in unique):
            unique.append(image)
    return tuple(unique)


def augment(states: np.ndarray, probs: np.ndarray, outcomes: np.ndarray) -> tuple[np.ndarray, ...]:
    """All symmetric images of a batch: states [N,C,H,W], probs [N,H*W], outcomes [N]."""
    n, c, height, width = states.shape
    flat = states.reshape(n, c, height * width)
    out_states, out_probs = [], []
    for source in move_permutations(width, height):
        out_states.append(flat[:, :, source].reshape(n, c, height, width))
        out_probs.append(probs[:, source])
    k = len(out_states)
    return (np.concatenate(out_states), np.concatenate(out_probs), np.tile(outcomes, k))
