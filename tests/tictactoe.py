"""Tic-tac-toe through the search's rules protocol (``mcts.game.Rules``): a second game, to show
that ``BatchedMCTS`` knows nothing of five in a row. Points 0..8, row by row; three in a row wins."""

from __future__ import annotations

import numpy as np

from mcts import FIRST, SECOND

SIDE = 3
SIZE = SIDE * SIDE
LINES = np.array([[0, 1, 2], [3, 4, 5], [6, 7, 8],  # rows
                  [0, 3, 6], [1, 4, 7], [2, 5, 8],  # columns
                  [0, 4, 8], [2, 4, 6]])  # diagonals
THROUGH = np.array([[point in line for line in LINES] for point in range(SIZE)])  # bool [point, line]
PLANES = 2  # the player to move's marks, the opponent's


class TicTacToe:
    """A position: the points taken, in order (the first player's are the even-numbered ones)."""

    def __init__(self, moves: tuple[int, ...] | list[int] = ()):
        self.moves = list(moves)

    def cells(self) -> np.ndarray:
        """int8 [SIZE + 1], as the search keeps a position (the last entry padding)."""
        cells = np.zeros(SIZE + 1, dtype=np.int8)
        cells[self.moves[0::2]], cells[self.moves[1::2]] = FIRST, SECOND
        return cells

    def winner(self) -> int:
        """FIRST or SECOND when one has three in a row, else 0."""
        board = self.cells()[LINES]
        for colour in (FIRST, SECOND):
            if (board == colour).all(axis=1).any():
                return colour
        return 0

    def over(self) -> bool:
        return self.winner() != 0 or len(self.moves) == SIZE


class TicTacToeRules:
    """The rules of tic-tac-toe as the search asks for them: no forced wins, every empty point."""

    size = SIZE
    root_differs = False
    stop = None

    def check(self, game) -> None:
        if not isinstance(game, TicTacToe):
            raise ValueError(f"tic-tac-toe rules cannot search a {type(game).__name__}")

    def wins(self, cells: np.ndarray, moves: np.ndarray, colours: np.ndarray) -> np.ndarray:
        full = (cells[:, LINES] == np.asarray(colours)[:, None, None]).all(axis=2)  # [k, lines]
        return (full & THROUGH[moves]).any(axis=1)

    def wins_one(self, cells: np.ndarray, move: int, colour: int) -> bool:
        return bool(self.wins(cells[None], np.array([move]), np.array([colour]))[0])

    def encode(self, cells: np.ndarray, to_move: np.ndarray, last: np.ndarray) -> np.ndarray:
        board = cells[:, :SIZE]
        planes = np.stack([board == to_move[:, None], board == (FIRST + SECOND - to_move)[:, None]], axis=1)
        return planes.astype(np.float32).reshape(len(cells), PLANES, SIDE, SIDE)

    def moves_to_search(self, cells: np.ndarray, to_move: np.ndarray, root: bool = False,
                        depth: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        return np.zeros(len(cells), dtype=bool), cells[:, :SIZE] == 0


class RolloutEvaluator:
    """Uniform priors and the result of one random playout from each position, for the player to
    move (the planes of ``TicTacToeRules.encode``)."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def evaluate_batch(self, planes: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        values = np.zeros(len(planes))
        for i, position in enumerate(planes.reshape(len(planes), PLANES, SIZE)):
            board = np.where(position[0] > 0, FIRST, np.where(position[1] > 0, SECOND, 0))  # FIRST: to move
            empty = np.flatnonzero(board == 0)
            for ply, point in enumerate(self.rng.permutation(empty)):
                colour = FIRST if ply % 2 == 0 else SECOND
                board[point] = colour
                if (board[LINES] == colour).all(axis=1).any():
                    values[i] = 1.0 if colour == FIRST else -1.0
                    break
        return legal / legal.sum(axis=1, keepdims=True), values
