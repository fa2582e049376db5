"""The network's input planes: the one encoding of a position, for the search's leaves
(``FreestyleRules.encode``) and for ``Board.current_state``."""

from __future__ import annotations

import numpy as np

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
