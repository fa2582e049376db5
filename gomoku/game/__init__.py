"""The game itself: the ``Board`` (rules, state planes), and nothing above it.

Imports nothing of the project outside ``gomoku.game``; never torch or pygame. Games and matches
between players are ``gomoku.matches``, a layer above the players.
"""

from gomoku.game.board import DRAW, EMPTY, Board, IllegalMoveError, other

__all__ = ["DRAW", "EMPTY", "Board", "IllegalMoveError", "other"]
