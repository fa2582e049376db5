"""The pygame play window (``python scripts/play.py``). Each module, and the modules of this package
it imports (no cycles, not even under TYPE_CHECKING); the first five import no pygame:

- ``session``: the game, its commands (undo, swap, stepping back, resuming) and saved-game text; none.
- ``ai``: the opponent from a spec, its strengths, how the window names it; session.
- ``thinking``: the opponent's search in a worker thread, and the analysis of it (from its
  ``SearchResult``); none.
- ``sizes``: the window's smallest and largest size (``--window``); none.
- ``frame``: pure functions from a ``Scene`` (plain values the app gathers) to a ``Frame``; ai, session,
  thinking.
- ``look``: colours, fonts and the sprites; none.
- ``layout``: where everything goes at the window's size; session, sizes.
- ``paint``: the ``Painter`` (surface, sprites, text) and what it drew where (``Hit``); layout, look.
- ``panel``: paints a ``Frame``'s side panel with a painter; frame, look, paint, session, thinking.
- ``draw``: the ``Renderer``, a painter that paints a whole ``Frame``; frame, look, paint, panel.
- ``app``: ``PlayApp``: events in, commands to session and AI, Scene -> Frame -> Renderer; ai, draw,
  frame, layout, session, sizes, thinking.

``import gomoku`` (and this package) imports no pygame.
"""
