"""Games and matches between players: the layer above ``gomoku.players`` (which it builds from
spec strings) and below training and the front ends.

- ``games``: one game (``play_game``), a match (``play_match``), random openings;
- ``records``: what a game and a match leave (``GameRecord``, ``MatchResult``), their tables and JSON lines;
- ``arena``: ``evaluate``, the matches of ``scripts/evaluate.py`` (seeds, worker processes, Ctrl-C);
- ``review``: where a lost game went wrong, as the threat search sees it;
- ``processes``: worker processes (the forkserver start, a pool of jobs);
- ``outputs``: a match script's output files.

Importing this package imports neither torch nor pygame.
"""
