"""gomoku-zero: the game, its five-in-a-row tactics, the players, and the wiring of search and nets into training.

Importing this package imports neither torch nor pygame.
"""

from gomoku.game.board import Board, IllegalMoveError

__all__ = ["Board", "IllegalMoveError"]
