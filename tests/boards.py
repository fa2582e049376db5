"""Positions for tests, written as points ("E5"), or of seeded random games: the helpers the
test files share for this."""

from __future__ import annotations

import numpy as np

from gomoku.game.board import Board


def at(board: Board, *points: str) -> list[int]:
    """The moves of ``points`` (column letter + row number from the bottom) on ``board``."""
    return [board.location_to_move(p) for p in points]


def position(xs, os_, width=9, height=9, n_in_row=5, start_player=1) -> Board:
    """A board with the first player's stones ``xs`` and the second's ``os_``, played alternately."""
    board = Board(width, height, n_in_row, start_player)
    first, second = at(board, *xs), at(board, *os_)
    assert len(first) - len(second) in (0, 1)
    for i, move in enumerate(first):
        board.do_move(move)
        if i < len(second):
            board.do_move(second[i])
    assert not board.game_end()[0]
    return board


def random_midgame(seed: int | np.random.Generator, moves: int, width=9, height=9, n_in_row=5) -> Board:
    """The position after up to ``moves`` seeded random moves, the game not over (it stops one
    move short of a line). ``seed``: a seed, or a generator to draw from (and advance)."""
    rng = np.random.default_rng(seed)
    board = Board(width, height, n_in_row)
    while len(board.moves) < moves:
        board.do_move(int(rng.choice(board.availables)))
        if board.game_end()[0]:
            board.undo_move()
            break
    return board
