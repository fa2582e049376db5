"""The Gomocup "pbrain" engine: the text protocol on stdin/stdout over any player.

- ``protocol``: the protocol as data, pure: raw lines (bytes or text) parsed into typed records
  (``parse_line`` never raises: undecodable bytes are a record too), answers formatted as ASCII
  lines, the stones of a BOARD block rebuilt into a Board;
- ``engine``: ``PbrainEngine``, the state machine that answers the records, with the search
  thread and the time management (``INFO timeout_turn``, ``time_left``);
- ``loader``: ``EngineOptions`` and which player plays which board (the model, a player spec, a
  fallback), the net's size and rule checked, torch limited to one thread by default;
- ``server``: ``serve``, the engine on stdin/stdout (what ``scripts/pbrain.py`` runs).

Imports ``gomoku.game`` and ``gomoku.players``; torch only when a net is loaded; never pygame.
"""
