"""Line geometry of a board shape: the one place that enumerates line windows and names their
shapes.

A *window* is ``n_in_row`` consecutive points on one line (row, column or diagonal).
Under freestyle rules a player has won exactly when one window holds only their stones,
since any run of five or more contains a window of five. Shapes follow from window counts: a
window holding ``mine`` stones of one colour and none of the other is ``n_in_row - mine`` stones
short of a line for that colour (``stones_short``, ``short_of``): 1 short is a *four* (its empty
point is a winning point, a *five point*), 2 short a *three* (a stone on either of its two empty
points makes a four), 3 short a *two*; an open four is two fours with different winning points.

Every consumer takes its windows and shapes from here: the search's rules (vectorised win checks
and forced moves, ``gomoku.tactics.rules``), the threat solvers (``gomoku.tactics.threats``,
``gomoku.tactics.vct``: their window classes), the classical players (``gomoku.players.classical``,
``gomoku.players.alphabeta``) and the engine's forced moves. Only ``Board`` keeps its own small
pure-Python win check (on the same ``DIRECTIONS``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

# The four line directions as (d_row, d_col): horizontal, vertical, two diagonals (``Board`` too).
DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))

# A window's shape for a colour, by the stones it lacks of a line (``stones_short``).
FOUR, THREE, TWO = 1, 2, 3
BLOCKED = -1  # the window holds stones of the other colour: no line for this one


@functools.lru_cache(maxsize=None)
def stones_short(n_in_row: int) -> tuple[tuple[int, ...], ...]:
    """``[mine][theirs]``: how many stones a window holding ``mine`` stones of one colour and
    ``theirs`` of the other lacks of a line for the first colour: ``n_in_row - mine`` (FOUR,
    THREE, TWO, ...; 0 for a line), or BLOCKED when ``theirs > 0``. The scalar form of ``short_of``
    for code that counts stones move by move."""
    return tuple(tuple(n_in_row - mine if theirs == 0 else BLOCKED for theirs in range(n_in_row + 1))
                 for mine in range(n_in_row + 1))


@dataclass(frozen=True)
class Geometry:
    width: int
    height: int
    n_in_row: int
    windows: np.ndarray = field(init=False, repr=False)
    """int64 [n_windows + 1, n_in_row]: point indices; the last row is a dummy that points at
    the padding point ``size`` (always empty), so padded look-ups never match a player."""
    point_windows: np.ndarray = field(init=False, repr=False)
    """int64 [size, max_per_point]: indices into ``windows`` of the windows through each point,
    padded with the dummy window."""

    def __post_init__(self) -> None:
        width, height, n = self.width, self.height, self.n_in_row
        windows = []
        for row in range(height):
            for col in range(width):
                for dr, dc in DIRECTIONS:
                    end_r, end_c = row + dr * (n - 1), col + dc * (n - 1)
                    if 0 <= end_r < height and 0 <= end_c < width:
                        windows.append([(row + dr * i) * width + col + dc * i for i in range(n)])
        size = width * height
        windows.append([size] * n)
        windows_arr = np.asarray(windows, dtype=np.int64).reshape(-1, n)
        dummy = len(windows) - 1
        through = [[] for _ in range(size)]
        for index, window in enumerate(windows[:-1]):
            for point in window:
                through[point].append(index)
        widest = max((len(w) for w in through), default=0)
        point_windows = np.full((size, max(widest, 1)), dummy, dtype=np.int64)
        for point, indices in enumerate(through):
            point_windows[point, : len(indices)] = indices
        object.__setattr__(self, "windows", windows_arr)
        object.__setattr__(self, "point_windows", point_windows)

    @property
    def size(self) -> int:
        return self.width * self.height

    @property
    def n_windows(self) -> int:
        """The number of real windows (the dummy row of ``windows`` not counted)."""
        return len(self.windows) - 1

    def window_lists(self) -> tuple[list[list[int]], list[list[int]]]:
        """Plain-Python copies for per-move code: (points of each window, windows through each
        point), both without the dummy window."""
        dummy = self.n_windows
        through = [[w for w in row if w != dummy] for row in self.point_windows.tolist()]
        return self.windows[:-1].tolist(), through

    def window_counts(self, cells: np.ndarray) -> np.ndarray:
        """Stones of each colour in each window: cells int8 [k, size + 1] (colours 1 and 2) ->
        int [k, 2, n_windows], ``[:, colour - 1, window]``."""
        stones = cells[:, self.windows[:-1]]  # [k, n_windows, n]
        return np.stack([(stones == 1).sum(axis=2), (stones == 2).sum(axis=2)], axis=1)

    def short_of(self, counts: np.ndarray, missing: int) -> np.ndarray:
        """Windows ``missing`` stones short of a line for one colour and holding none of the other:
        counts [k, 2, n_windows] (``window_counts``) -> bool [k, 2, n_windows], ``[:, colour - 1]``.
        ``missing`` FOUR (1) is a four, THREE (2) a three (``stones_short`` one window at a time)."""
        return (counts == self.n_in_row - missing) & (counts[:, ::-1] == 0)

    def line_shapes(self, cells: np.ndarray, colours: np.ndarray) -> "LineShapes":
        """The fours and threes of ``colours[i]`` ("mine") and of the other colour in position ``i``.

        cells: int8 [k, size + 1] as in ``wins``; colours: [k], 1 or 2. One pass over the windows.
        """
        counts = self.window_counts(cells)
        fours, threes = self.short_of(counts, FOUR), self.short_of(counts, THREE).any(axis=2)
        rows, mine, theirs = np.arange(len(cells)), colours - 1, 2 - colours
        return LineShapes(my_fours=fours[rows, mine], their_fours=fours[rows, theirs],
                          my_three=threes[rows, mine], their_three=threes[rows, theirs])

    def four_points(self, cells: np.ndarray, fours: np.ndarray) -> np.ndarray:
        """The winning points of the four windows flagged in ``fours`` (bool [n_windows]) in one
        position ``cells`` [size + 1]: each window's one empty point."""
        points = self.windows[np.flatnonzero(fours)]
        return points[cells[points] == 0]

    def wins(self, cells: np.ndarray, moves: np.ndarray, colours: np.ndarray) -> np.ndarray:
        """Whether the stone just placed at ``moves`` completes a line.

        cells: int8 [k, size + 1] (0 empty, else a colour; the last column is padding, always 0);
        moves: [k] point indices; colours: [k] the colour of the stone at each move.
        """
        points = self.windows[self.point_windows[moves]]  # [k, per_point, n]
        stones = np.take_along_axis(cells, points.reshape(len(moves), -1), axis=1)
        stones = stones.reshape(points.shape)
        return (stones == colours[:, None, None]).all(axis=2).any(axis=1)

    def wins_one(self, cells: np.ndarray, move: int, colour: int) -> bool:
        """``wins`` for one position: cells [size + 1], the move just played, its colour."""
        stones = cells[self.windows[self.point_windows[move]]]
        return bool((stones == colour).all(axis=1).any())

    def winning_points(self, cells: np.ndarray) -> np.ndarray:
        """Where one more stone of either colour would complete a line, for each position.

        cells: int8 [k, size + 1] as in ``wins``, colours 1 and 2. Returns bool [k, 2, size]:
        ``[:, colour - 1]`` holds the empty points that complete a window holding ``n_in_row - 1``
        stones of that colour and one empty point.
        """
        points = np.zeros((len(cells), 2, self.size + 1), dtype=bool)
        at, index, window = np.nonzero(self.short_of(self.window_counts(cells), FOUR))
        if at.size:
            window_points = self.windows[window]  # [m, n]: each four has exactly one empty point
            points[at, index, window_points[cells[at[:, None], window_points] == 0]] = True
        return points[:, :, : self.size]


@dataclass(frozen=True)
class LineShapes:
    """Per position, the shapes of the player to move ("mine") and of the other ("theirs"): a
    four is a window with ``n_in_row - 1`` stones of one colour and none of the other (its empty
    point wins), a three one with ``n_in_row - 2`` (a stone on it makes a four)."""

    my_fours: np.ndarray  # bool [k, n_windows]
    their_fours: np.ndarray  # bool [k, n_windows]
    my_three: np.ndarray  # bool [k]: at least one three
    their_three: np.ndarray  # bool [k]
