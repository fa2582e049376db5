"""The 9x9 (or any size) five-in-a-row board.

Rules are freestyle: a line of ``n_in_row`` *or more* stones of one colour wins,
and a full board with no such line is a draw.

Coordinates: ``move = row * width + col``. ``current_state()`` returns planes
indexed ``[plane][row][col]`` with exactly that layout, so a policy over moves
and the planes always agree (no flipped axes).

Players are the integers 1 and 2; ``start_player`` says who moves first.
"""

from __future__ import annotations

import numbers
from typing import Iterable

import numpy as np

from gomoku.tactics.geometry import DIRECTIONS
from gomoku.tactics.planes import input_planes

PLAYERS = (1, 2)
DRAW = -1  # ``winner`` value of a drawn game (and of an unfinished one, as in the classic API)
EMPTY = 0
DEFAULT_SIZE = 9  # the board of this repository: 9x9, five in a row
DEFAULT_N_IN_ROW = 5
MAX_SIZE = 32  # the largest board side played: the Gomocup protocol's (nets.model.MAX_BOARD_SIDE agrees)


class IllegalMoveError(ValueError):
    """A move that is off the board, on an occupied point, or made after the game ended."""


def other(player: int) -> int:
    return 3 - player


class Board:
    """A game position with its move history. Cheap to copy: two flat lists."""

    def __init__(self, width: int = DEFAULT_SIZE, height: int = DEFAULT_SIZE, n_in_row: int = DEFAULT_N_IN_ROW,
                 start_player: int = 1):
        for name, value in (("width", width), ("height", height), ("n_in_row", n_in_row)):
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if n_in_row > max(width, height):
            raise ValueError(f"n_in_row={n_in_row} does not fit on a {width}x{height} board")
        if isinstance(start_player, bool) or not isinstance(start_player, numbers.Integral) \
                or start_player not in PLAYERS:  # not True, nor 1.0
            raise ValueError(f"start_player must be 1 or 2, got {start_player!r}")
        self.width = int(width)
        self.height = int(height)
        self.n_in_row = int(n_in_row)
        self.start_player = int(start_player)
        self._cells = [EMPTY] * (self.width * self.height)
        self.moves: list[int] = []
        self._winner = DRAW  # 1 or 2 once somebody has a line

    # ------------------------------------------------------------------ coordinates
    @property
    def size(self) -> int:
        return self.width * self.height

    @property
    def centre(self) -> int:
        """The centre point, column ``width // 2`` of row ``height // 2``: the opening move on an
        empty board (a net's priors are flat there on large boards: it opened near a corner)."""
        return (self.height // 2) * self.width + self.width // 2

    def location_to_move(self, location: Iterable[int]) -> int:
        """(row, col) -> move. Raises IllegalMoveError when off the board."""
        row, col = location
        if not (0 <= row < self.height and 0 <= col < self.width):
            raise IllegalMoveError(f"location {(row, col)} is off the {self.width}x{self.height} board")
        return row * self.width + col

    def move_to_location(self, move: int) -> tuple[int, int]:
        if not 0 <= move < self.size:
            raise IllegalMoveError(f"move {move} is off the {self.width}x{self.height} board")
        return divmod(move, self.width)

    # ------------------------------------------------------------------ state
    @property
    def current_player(self) -> int:
        return self.start_player if len(self.moves) % 2 == 0 else other(self.start_player)

    @property
    def last_move(self) -> int:
        """The last move played, or -1 on an empty board."""
        return self.moves[-1] if self.moves else -1

    @property
    def availables(self) -> list[int]:
        """The empty points, ascending (the classic API name)."""
        cells = self._cells
        return [m for m in range(len(cells)) if cells[m] == EMPTY]

    def legal_moves(self) -> list[int]:
        """Moves that may be played now: the empty points, or none once the game has ended."""
        return [] if self.game_end()[0] else self.availables

    @property
    def states(self) -> dict[int, int]:
        """move -> player for every stone (the classic API name)."""
        return {m: self._cells[m] for m in self.moves}

    def stone(self, move: int) -> int:
        """0 for an empty point, else the player whose stone is there."""
        return self._cells[move]

    @property
    def winner(self) -> int:
        """1 or 2 when somebody has a line, else -1."""
        return self._winner

    def game_end(self) -> tuple[bool, int]:
        """(ended, winner): winner is 1 or 2, or -1 for a draw (and while the game goes on)."""
        if self._winner != DRAW:
            return True, self._winner
        if len(self.moves) == self.size:
            return True, DRAW
        return False, DRAW

    # ------------------------------------------------------------------ moves
    def do_move(self, move: int) -> None:
        """Play ``move`` for the player to move. The board is unchanged when it raises."""
        if isinstance(move, bool) or not isinstance(move, (int, np.integer)):
            raise IllegalMoveError(f"move must be an integer, got {move!r}")
        move = int(move)
        if not 0 <= move < self.size:
            raise IllegalMoveError(f"move {move} is off the {self.width}x{self.height} board")
        if self.game_end()[0]:
            raise IllegalMoveError(f"move {move}: the game has already ended")
        if self._cells[move] != EMPTY:
            row, col = divmod(move, self.width)
            raise IllegalMoveError(f"move {move} (row {row}, col {col}) is already occupied")
        player = self.current_player
        self._cells[move] = player
        self.moves.append(move)
        if len(self._longest_run(move, player)) >= self.n_in_row:
            self._winner = player

    def undo_move(self) -> int:
        """Take back the last move and return it."""
        if not self.moves:
            raise IllegalMoveError("no move to undo")
        move = self.moves.pop()
        self._cells[move] = EMPTY
        self._winner = DRAW  # the game could not have gone on past a win
        return move

    def _longest_run(self, move: int, player: int) -> list[int]:
        """The longest run of ``player`` stones through ``move`` (only the four lines through it),
        as its points; ``move`` itself counts as ``player``'s."""
        width, height, cells = self.width, self.height, self._cells
        row, col = divmod(move, width)
        best: list[int] = []
        for dr, dc in DIRECTIONS:
            line = [move]
            for sign in (1, -1):
                r, c = row + sign * dr, col + sign * dc
                while 0 <= r < height and 0 <= c < width and cells[r * width + c] == player:
                    line.append(r * width + c)
                    r += sign * dr
                    c += sign * dc
            if len(line) > len(best):
                best = line
        return best

    def winning_line(self) -> list[int]:
        """The moves of the winning line (all stones of the run), or [] when nobody has won."""
        if self._winner == DRAW:
            return []
        # The winning line goes through the last move: the game stops at the first line.
        return sorted(self._longest_run(self.moves[-1], self._winner))

    # ------------------------------------------------------------------ encoding
    def current_state(self) -> np.ndarray:
        """float32 (4, height, width): own stones, opponent stones, last move, 1s if first player to
        move (``gomoku.tactics.planes.input_planes``, the encoding the search uses too)."""
        last = self.moves[-1] if self.moves else -1
        planes = input_planes(np.asarray(self._cells)[None], np.array([self.current_player]), np.array([last]),
                              np.array([len(self.moves) % 2 == 0]), self.height, self.width)
        return planes[0]

    def copy(self) -> "Board":
        new = Board.__new__(Board)
        new.width, new.height, new.n_in_row = self.width, self.height, self.n_in_row
        new.start_player = self.start_player
        new._cells = self._cells.copy()
        new.moves = self.moves.copy()
        new._winner = self._winner
        return new

    @classmethod
    def from_moves(cls, moves: Iterable[int], width: int = DEFAULT_SIZE, height: int = DEFAULT_SIZE,
                   n_in_row: int = DEFAULT_N_IN_ROW, start_player: int = 1) -> "Board":
        board = cls(width, height, n_in_row, start_player)
        for move in moves:
            board.do_move(move)
        return board

    def __eq__(self, other_board: object) -> bool:
        if not isinstance(other_board, Board):
            return NotImplemented
        return (self.width, self.height, self.n_in_row, self.start_player, self.moves) == (
            other_board.width, other_board.height, other_board.n_in_row, other_board.start_player,
            other_board.moves)

    def __str__(self) -> str:
        """Text picture: X for the first player, O for the second, columns A.., rows numbered as in
        standard notation (``gomoku.players.format_point``): row 1 is the bottom line."""
        marks = {EMPTY: ".", self.start_player: "X", other(self.start_player): "O"}
        letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
        if self.width <= len(letters):
            names, cell = [letters[c] for c in range(self.width)], 1
        else:  # past Z the columns are numbered
            names, cell = [str(c + 1) for c in range(self.width)], 2
        lines = ["   " + " ".join(f"{name:>{cell}}" for name in names)]
        for row in range(self.height):
            cells = " ".join(f"{marks[self._cells[row * self.width + col]]:>{cell}}" for col in range(self.width))
            lines.append(f"{self.height - row:>2} {cells}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"Board(width={self.width}, height={self.height}, n_in_row={self.n_in_row}, moves={self.moves})"
