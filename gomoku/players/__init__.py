"""Players: anything that picks a move for a Board, and ``make_player`` to build one from a spec.

- ``classical``: random, heuristic (one-ply window scores), minimax (alpha-beta), human (terminal);
- ``alphabeta``: the ab yardstick (alpha-beta, threat extensions, threat solvers);
- ``search``: pure MCTS and the AlphaZero player, both on the array-based search of ``mcts``.

May import ``gomoku.game`` and ``mcts``; ``search`` loads ``nets`` (torch) only for the az player.
Importing this package imports neither torch nor pygame.
"""

from __future__ import annotations

import os

import numpy as np

from gomoku.players.classical import (COLUMN_LETTERS, HeuristicPlayer, HumanPlayer, MinimaxPlayer, Player,
                                      RandomPlayer, format_point, parse_point, winning_points)

SHIPPED_MODEL = "models/9x9.pt"  # the trained model in the repository (relative to its root)
SHIPPED_PLAYOUTS = 400  # its playouts a move in evaluate.py, the window and the engine
# The play window's az search: one game with the machine to itself, so 8 leaves per net call
# (virtual loss) and two onnxruntime threads; evaluate.py and the engine default to the exact
# search (one leaf per call, one thread), since they share the cores. README, Benchmarks.
WINDOW_LEAVES = 8
WINDOW_THREADS = min(2, os.cpu_count() or 1)

PLAYER_SPECS_HELP = """\
  random                   uniform random legal moves
  heuristic                one-ply window heuristic (takes wins, blocks fours)
  minimax:DEPTH            alpha-beta search, DEPTH >= 1 plies (2 is fast, 3 takes seconds)
  ab:DEPTH                 alpha-beta with threat extensions and the VCF solver, DEPTH >= 1 plies
                           (a classical yardstick; a node budget bounds every depth)
  pure:PLAYOUTS            pure MCTS with random rollouts
  az:CHECKPOINT:PLAYOUTS   AlphaZero net + MCTS from a checkpoint file
  human                    you, at the terminal"""


# ---------------------------------------------------------------------------- specs
def _bad_spec(spec: str, reason: str = "") -> ValueError:
    detail = f" ({reason})" if reason else ""
    return ValueError(f"bad player spec {spec!r}{detail}; valid forms:\n{PLAYER_SPECS_HELP}")


def _positive_int(text: str, spec: str, what: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise _bad_spec(spec, f"{what} must be a positive integer, got {text!r}")
    return int(text)


def make_player(spec: str, seed: int | None = None, seconds: float | None = None,
                leaves_per_step: int = 1, forced_moves: bool = True, vcf: bool = True, threads: int = 1,
                vct: bool = True) -> Player:
    """Build a player from a spec (see PLAYER_SPECS_HELP); ``seed`` makes its choices repeatable.

    ``seconds`` caps the thinking time per move of the search players (pure, az); the others
    ignore it. ``leaves_per_step`` > 1 lets the az player evaluate that many leaves per network
    call (virtual loss): faster, and a slightly different search. ``forced_moves=False`` turns off
    the az player's exact forced-move rules (take a five, block a four; see ``mcts.search``), and
    with them its VCF rules; ``vcf=False`` turns off only those (play and stop wins by continuous
    fours), ``vct=False`` only the root's VCT rules (play and stop wins by fours and threes).
    ``threads``: the az player's onnxruntime threads (1 where several players share the cores).
    """
    kind, _, rest = spec.strip().partition(":")
    if kind == "random" and not rest:
        return RandomPlayer(np.random.default_rng(seed))
    if kind == "heuristic" and not rest:
        return HeuristicPlayer(None if seed is None else np.random.default_rng(seed))
    if kind == "minimax":
        depth = _positive_int(rest, spec, "DEPTH")
        return MinimaxPlayer(depth, None if seed is None else np.random.default_rng(seed))
    if kind == "ab":
        depth = _positive_int(rest, spec, "DEPTH")
        from gomoku.players.alphabeta import AlphaBetaPlayer  # lazy: only the ab player needs it
        return AlphaBetaPlayer(depth, None if seed is None else np.random.default_rng(seed))
    if kind == "human" and not rest:
        return HumanPlayer()
    if kind == "pure":
        playouts = _positive_int(rest, spec, "PLAYOUTS")
        from gomoku.players.search import PureMCTSPlayer  # lazy: keeps search code out of light imports
        return PureMCTSPlayer(n_playout=playouts, seed=seed, seconds=seconds)
    if kind == "az":
        path, sep, playouts_text = rest.rpartition(":")
        if not sep or not path:
            raise _bad_spec(spec, "expected az:CHECKPOINT:PLAYOUTS")
        playouts = _positive_int(playouts_text, spec, "PLAYOUTS")
        from gomoku.players.search import AlphaZeroPlayer  # lazy: imports torch
        return AlphaZeroPlayer.from_checkpoint(path, n_playout=playouts, seed=seed, seconds=seconds,
                                               leaves_per_step=leaves_per_step, forced_moves=forced_moves,
                                               vcf=vcf, threads=threads, vct=vct)
    raise _bad_spec(spec)


__all__ = ["COLUMN_LETTERS", "PLAYER_SPECS_HELP", "SHIPPED_MODEL", "SHIPPED_PLAYOUTS", "WINDOW_LEAVES",
           "WINDOW_THREADS", "HeuristicPlayer",
           "HumanPlayer", "MinimaxPlayer", "Player", "RandomPlayer", "format_point", "make_player", "parse_point",
           "winning_points"]
