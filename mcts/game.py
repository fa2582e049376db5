"""What the search needs of a game: a position (``GameLike``) and the game's rules (``Rules``),
which the caller injects into ``BatchedMCTS`` the way it injects the evaluator.

The search plays placement games: two players alternately put a stone of their colour on an empty
point of a board of ``size`` points (indexed 0..size - 1; a move is a point), and a game ends when
the stone just placed wins (the rules decide) or the board is full (a draw). Inside the search a
position is cells int8 [size + 1]: 0 empty, ``FIRST`` / ``SECOND`` the stones of the player who
moved first / second, the last entry padding, always empty; a batch of k positions is
[k, size + 1].
"""

from __future__ import annotations

from typing import Callable, Protocol

import numpy as np

FIRST, SECOND = 1, 2  # stone colours inside the search: who moved first, who moved second


class GameLike(Protocol):
    """What the search needs of a position: its move history (the points taken, in order; the
    first player's moves are the even-numbered ones). The rules check that it is theirs."""

    moves: list[int]


class Rules(Protocol):
    """The game's rules as the search calls them (shapes as in the module docstring). A rules object
    may remember answers between searches; it is the caller's, built for one board shape."""

    size: int  # the board's points: moves are 0..size - 1
    root_differs: bool  # a root may search other moves than the same position as an inner node
    stop: Callable[[], bool] | None  # set by the search for one call: once true, costly checks give up

    def check(self, game: GameLike) -> None:
        """Raise ValueError naming the mismatch when ``game`` is not played by these rules (its
        board shape, say)."""
        ...

    def wins(self, cells: np.ndarray, moves: np.ndarray, colours: np.ndarray) -> np.ndarray:
        """Whether the stone just placed wins: cells [k, size + 1], moves [k], colours [k] (the
        colour of the stone at each move) -> bool [k]."""
        ...

    def wins_one(self, cells: np.ndarray, move: int, colour: int) -> bool:
        """``wins`` for one position: cells [size + 1]."""
        ...

    def encode(self, cells: np.ndarray, to_move: np.ndarray, last: np.ndarray) -> np.ndarray:
        """The evaluator's input: cells [k, size + 1], to_move [k] (the colour to move), last [k]
        (the last move, negative for none) -> float32 [k, C, H, W]."""
        ...

    def moves_to_search(self, cells: np.ndarray, to_move: np.ndarray, root: bool = False,
                        depth: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """For positions cells [k, size + 1] with to_move [k]: (bool [k], whether the player to move
        wins by force: the search values the position +1 and does not expand it; bool [k, size],
        the moves a node there searches, a subset of the empty points). ``root``: the
        positions are roots (the rules may search other moves there: ``root_differs``); ``depth``
        [k], the moves from the root (None: not known)."""
        ...
