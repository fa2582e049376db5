"""The pygame play window (``python scripts/play.py``), in parts:

- ``session``: the game and its commands (moves, who played them, undo, swap, stepping back and
  forth, resuming from any point) and the saved-game text format. No pygame.
- ``ai``: the opponent (from a spec, its strength presets) and its search in a worker thread, with
  the analysis the window shows (visits, win rate and prior per move, the expected line). No pygame.
- ``layout``, ``sprites``, ``draw``, ``panel``: where everything goes at the window's size, and
  the drawing of one frame (board and status line; the side panel).
- ``app``: ``PlayApp``, the window: events in, commands to the session and the AI, frames out.

Only ``layout``, ``sprites``, ``draw``, ``panel`` and ``app`` import pygame; ``import gomoku`` (and
this package) does not.
"""
