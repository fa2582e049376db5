"""The Gomocup "pbrain" engine: the text protocol on stdin/stdout over any player (``engine``).

Imports ``gomoku.game`` and ``gomoku.players``; torch only when a net is loaded; never pygame.
"""
