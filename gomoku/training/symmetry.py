"""The 8 symmetries of a square board (4 rotations x reflection), on planes and on move policies.

``move_permutations(width, height)[k]`` is transform ``k`` as an index permutation of the points
(the identity first); planes and policies are transformed with the same permutation, so they
stay consistent. A non-square board has
only the 4 symmetries that keep its shape (identity, the two flips, and the half turn).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from gomoku.training.samples import Samples


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


def augment(samples: Samples) -> Samples:
    """All symmetric images of the samples, one symmetry after the other (the identity first)."""
    n, c, height, width = samples.states.shape
    flat = samples.states.reshape(n, c, height * width)
    images = [Samples(flat[:, :, source].reshape(n, c, height, width), samples.probs[:, source], samples.outcomes)
              for source in move_permutations(width, height)]
    return Samples.concatenate(images)
