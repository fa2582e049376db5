"""The game itself: the ``Board`` (rules, state planes) and ``arena`` (games and matches between players).

Imports nothing of the project outside ``gomoku.game`` except the players for matches; never torch
or pygame.
"""

from gomoku.game.board import DRAW, EMPTY, Board, IllegalMoveError, other

__all__ = ["DRAW", "EMPTY", "Board", "IllegalMoveError", "other"]
