"""Players: anything that picks a move for a Board, and ``make_player`` to build one from a spec.

- ``classical``: random, heuristic (one-ply window scores), human (terminal), the line tables
  (``line_table``, ``board_cells``, ``window_counts``, ``point_score``);
- ``negamax``: the one negamax of the classical searches, over the line tables, in a style each;
- ``minimax``: the minimax player (its style: the classical window evaluation, no solver);
- ``alphabeta``: the ab yardstick (its style: threat extensions; threat solvers at the root);
- ``search``: pure MCTS and the AlphaZero player, both on the array-based search of ``mcts``;
- ``external``: a Gomocup engine as a player (``gomocup``: the protocol facts it shares with
  ``gomoku.pbrain``); ``forfeit``: a game lost by forfeit, which a player raises.

May import ``gomoku.game``, ``gomoku.tactics`` and ``mcts``; ``search`` loads ``nets`` (torch) only
for the az player. Nothing here imports the layers above (matches, training, the front ends).
Importing this package imports neither torch nor pygame.
"""

from __future__ import annotations

import math
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gomoku.players.classical import (COLUMN_LETTERS, HeuristicPlayer, HumanPlayer, Player, RandomPlayer, format_point,
                                      parse_point, winning_points)
from gomoku.players.minimax import MAX_MINIMAX_DEPTH, MinimaxPlayer
from gomoku.players.external import DEFAULT_TURN_MS, MAX_TURN_MS

SHIPPED_MODEL = "models/9x9.pt"  # the trained model in the repository (relative to its root)
SHIPPED_PLAYOUTS = 400  # its playouts a move in evaluate.py, the window and the engine
# The play window's az search: one game with the machine to itself, so 8 leaves per net call
# (virtual loss) and two onnxruntime threads. evaluate.py defaults to the exact search (one leaf
# per call, one thread), since its games share the cores; the engine (gomoku.pbrain) searches
# ENGINE_LEAVES a call on one thread. docs/benchmarks.md, docs/engine.md.
WINDOW_LEAVES = 8
ENGINE_LEAVES = 8  # leaves per net call of the engine's search (virtual loss; docs/engine.md)
WINDOW_THREADS = min(2, os.cpu_count() or 1)
# A training run's model files, by name (gomoku.training's BEST_MODEL and CHECKPOINT: a test checks
# they match): best.pt comes at the run's first evaluation, checkpoint.pt at its first iteration.
RUN_BEST_MODEL, RUN_CHECKPOINT = "best.pt", "checkpoint.pt"


def int8_export(model: Path) -> Path:
    """Where ``scripts/export_onnx.py --int8`` writes ``model``'s int8 export by default, and
    where the engine looks for it: beside it, models/9x9.pt -> models/9x9-int8.onnx."""
    return model.with_name(f"{model.stem}-int8.onnx")


def sized_default(default_model: Path, size: int) -> list[Path]:
    """The default models for an n x n board, first choice first: the model named for the size
    beside the default one (models/15x15.pt), then the default itself when it is not that one.
    The window, its page and the engine pick their model this way."""
    named = default_model.with_name(f"{size}x{size}{default_model.suffix}")
    return [named] if named == default_model else [named, default_model]


PLAYER_SPECS_HELP = """\
  random                   uniform random legal moves
  heuristic                one-ply window heuristic (takes wins, blocks fours)
  minimax:DEPTH            alpha-beta search, DEPTH 1 to 8 plies (3: milliseconds a move, 6: about a second)
  ab:DEPTH                 alpha-beta with threat extensions and the VCF solver, DEPTH >= 1 plies
                           (the classical yardstick, docs/results/ladder.md; a node budget bounds every depth)
  ab:DEPTH:vct             the same with the VCT solver too: attacks and defends with threes
  pure:PLAYOUTS            pure MCTS with random rollouts
  pure:TIME                pure MCTS for TIME a move (e.g. 1s, 500ms; no playout cap)
  az:CHECKPOINT:PLAYOUTS   AlphaZero net + MCTS from a checkpoint file
  az:CHECKPOINT:TIME       the same for TIME a move (e.g. az:models/9x9.pt:1s)
  pbrain:PATH[:MS]         an external Gomocup (pbrain protocol) engine, MS a turn (default 1000)
  human                    you, at the terminal"""


# ---------------------------------------------------------------------------- specs
TIME_UNITS = {"ms": 0.001, "s": 1.0}
MAX_MOVE_SECONDS = MAX_TURN_MS / 1000  # the longest time a move a spec may ask for: a day, as a pbrain turn
_TIME = re.compile(r"(\d+(?:\.\d+)?)(ms|s)")


@dataclass(frozen=True)
class PlayerSpec:
    """A player spec, parsed (``parse_spec``): what ``make_player`` builds, nothing loaded yet."""

    kind: str  # random, heuristic, minimax, ab, pure, az, pbrain, human
    depth: int | None = None  # minimax, ab: plies
    vct: bool = False  # ab: with the VCT solver (``ab:DEPTH:vct``)
    playouts: int | None = None  # pure, az: playouts a move (None: search for ``seconds``)
    seconds: float | None = None  # pure, az: time a move instead of playouts
    path: str | None = None  # az: the model file; pbrain: the engine
    turn_ms: int | None = None  # pbrain: the engine's turn time

    @property
    def timed(self) -> bool:
        """Plays under a clock (a search for a time, an external engine): its games differ from
        run to run."""
        return self.kind == "pbrain" or self.seconds is not None


class SpecError(ValueError):
    """A bad player spec: ``problem`` says what is wrong in one line; the message goes on with the
    valid forms (``PLAYER_SPECS_HELP``)."""

    def __init__(self, problem: str):
        super().__init__(f"{problem}; valid forms:\n{PLAYER_SPECS_HELP}")
        self.problem = problem


def _bad_spec(spec: str, reason: str = "") -> SpecError:
    detail = f" ({reason})" if reason else ""
    return SpecError(f"bad player spec {spec!r}{detail}")


def is_positive_number(value: float) -> bool:
    """Whether ``value`` is a finite number > 0, as the scripts' ``--seconds`` and ``--c-puct`` must be."""
    return math.isfinite(value) and value > 0


def _positive_int(text: str, spec: str, what: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) < 1:  # not "²", which isdigit takes
        raise _bad_spec(spec, f"{what} must be a positive integer, got {text!r}")
    return int(text)


def _amount(text: str, spec: str) -> tuple[int | None, float | None]:
    """A search player's playouts (``400``) or time a move (``1s``, ``500ms``): (playouts, seconds)."""
    match = _TIME.fullmatch(text)
    if match:
        seconds = float(match.group(1)) * TIME_UNITS[match.group(2)]
        if seconds <= 0:
            raise _bad_spec(spec, f"the time must be positive, got {text!r}")
        if seconds > MAX_MOVE_SECONDS:
            raise _bad_spec(spec, f"the time must be at most {MAX_MOVE_SECONDS:g} s (a day), got {text!r}")
        return None, seconds
    return _positive_int(text, spec, "PLAYOUTS"), None


def parse_spec(spec: str) -> PlayerSpec:
    """The one parser of player specs (PLAYER_SPECS_HELP): a ValueError naming the valid forms for
    a malformed one. Reads no file and builds nothing, so configs check their specs up front."""
    kind, sep, rest = spec.strip().partition(":")
    if kind in ("random", "heuristic", "human") and not sep:
        return PlayerSpec(kind)
    if kind == "ab" and rest.endswith(":vct"):
        return PlayerSpec(kind, depth=_positive_int(rest[:-len(":vct")], spec, "DEPTH"), vct=True)
    if kind == "ab" and ":" in rest:
        raise _bad_spec(spec, f"expected ab:DEPTH or ab:DEPTH:vct, got the suffix {rest.partition(':')[2]!r}")
    if kind in ("minimax", "ab"):
        depth = _positive_int(rest, spec, "DEPTH")
        if kind == "minimax" and depth > MAX_MINIMAX_DEPTH:
            raise _bad_spec(spec, f"DEPTH must be from 1 to {MAX_MINIMAX_DEPTH}, got {depth}")
        return PlayerSpec(kind, depth=depth)
    if kind == "pure":
        playouts, seconds = _amount(rest, spec)
        return PlayerSpec(kind, playouts=playouts, seconds=seconds)
    if kind == "az":
        path, sep, amount = rest.rpartition(":")
        if not sep or not path:
            raise _bad_spec(spec, "expected az:CHECKPOINT:PLAYOUTS or az:CHECKPOINT:TIME")
        playouts, seconds = _amount(amount, spec)
        return PlayerSpec(kind, playouts=playouts, seconds=seconds, path=path)
    if kind == "pbrain":
        path, sep, turn = rest.rpartition(":")
        if not sep or not (turn.isascii() and turn.isdigit()):  # no :MS (a path may hold colons of its own)
            path, turn = rest, str(DEFAULT_TURN_MS)
        if not path:
            raise _bad_spec(spec, "expected pbrain:PATH[:MS]")
        if int(turn) < 1:
            raise _bad_spec(spec, f"the turn time must be at least 1 ms, got {turn!r}")
        if int(turn) > MAX_TURN_MS:
            raise _bad_spec(spec, f"the turn time must be at most {MAX_TURN_MS} ms (a day), got {turn!r}")
        return PlayerSpec(kind, path=path, turn_ms=int(turn))
    raise _bad_spec(spec)


def spec_kind(spec: str) -> str | None:
    """The kind of player ``spec`` names (az, pbrain, ...); None for a bad spec (``parse_spec``
    says why)."""
    try:
        return parse_spec(spec).kind
    except ValueError:
        return None


def is_timed(spec: str) -> bool:
    """Whether ``spec`` plays under a clock (see ``PlayerSpec.timed``)."""
    return parse_spec(spec).timed


def trained_size(player: Player | None) -> int | None:
    """The board a net player was trained on, when square (its default board); else None."""
    config = getattr(player, "net_config", None)
    return config.width if config is not None and config.width == config.height else None


def trained_n_in_row(player: Player | None) -> int | None:
    """The rule (stones in a row) a net player was trained for, its default; else None."""
    return getattr(player, "n_in_row", None)


def make_player(spec: str, seed: int | None = None, seconds: float | None = None,
                leaves_per_step: int = 1, forced_moves: bool = True, vcf: bool = True, threads: int = 1,
                vct: bool = True, check_nodes: int | None = None, pipeline: bool = False,
                c_puct: float | None = None) -> Player:
    """Build a player from a spec (see PLAYER_SPECS_HELP); ``seed`` makes its choices repeatable.

    ``seconds`` caps the thinking time per move of the search players (pure, az) and minimax;
    the others ignore it (a spec's own time, ``az:PATH:1s``, comes first). ``leaves_per_step`` > 1
    lets the az player evaluate that many leaves per network call (virtual loss): faster, and a
    slightly different search. ``forced_moves=False`` turns off the az player's exact forced-move
    rules (take a five, block a four; see ``gomoku.tactics.rules``), and with them its VCF rules;
    ``vcf=False`` turns off only those (play and stop wins by continuous fours), ``vct=False``
    only the root's VCT rules (play and stop wins by fours and threes); ``check_nodes``: the az
    player's deep checks' budget (its own VCT, the final threat check; 0 off; None the player's
    default). ``c_puct``: the az player's PUCT exploration weight (None: the player's default,
    ``AlphaZeroPlayer``'s). ``threads``: the az
    player's onnxruntime threads (1 where several players share the cores). ``pipeline`` (with
    ``leaves_per_step`` > 1): the az player's net runs on a thread of its own beside its search.
    """
    parsed = parse_spec(spec)
    rng = None if seed is None else np.random.default_rng(seed)
    if parsed.kind == "random":
        return RandomPlayer(np.random.default_rng(seed))
    if parsed.kind == "heuristic":
        return HeuristicPlayer(rng)
    if parsed.kind == "human":
        return HumanPlayer()
    if parsed.kind == "minimax":
        return MinimaxPlayer(parsed.depth, rng, seconds=seconds)
    if parsed.kind == "ab":
        from gomoku.players.alphabeta import VCT_NODES, AlphaBetaPlayer  # lazy: only the ab player needs it
        return AlphaBetaPlayer(parsed.depth, rng, vct_nodes=VCT_NODES if parsed.vct else 0)
    if parsed.kind == "pure":
        from gomoku.players.search import PureMCTSPlayer  # lazy: keeps search code out of light imports
        return PureMCTSPlayer(n_playout=parsed.playouts, seed=seed, seconds=parsed.seconds or seconds)
    if parsed.kind == "az":
        best = Path(parsed.path)
        if best.name == RUN_BEST_MODEL and not best.exists() and (latest := best.with_name(RUN_CHECKPOINT)).is_file():
            raise ValueError(f"no checkpoint at {best} yet: a run writes it at its first evaluation (every "
                             f"eval.check_freq games); until then play its latest model, "
                             f"az:{latest}:{spec.strip().rpartition(':')[2]}")
        from gomoku.players.search import AlphaZeroPlayer  # lazy: imports torch
        return AlphaZeroPlayer.from_checkpoint(parsed.path, n_playout=parsed.playouts, seed=seed,
                                               seconds=parsed.seconds or seconds, leaves_per_step=leaves_per_step,
                                               forced_moves=forced_moves, vcf=vcf, threads=threads, vct=vct,
                                               pipeline=pipeline, **({} if check_nodes is None else {"check_nodes": check_nodes}),
                                               **({} if c_puct is None else {"c_puct": c_puct}))
    from gomoku.players.external import PbrainPlayer, engine_command  # pbrain; lazy: subprocess plumbing
    if not Path(parsed.path).is_file() and shutil.which(parsed.path) is None:
        hint = " (MS after the last ':' is a whole number of milliseconds)" if ":" in parsed.path else ""
        raise _bad_spec(spec, f"no engine at {parsed.path!r}{hint}")
    if engine_command(parsed.path)[0] == parsed.path and shutil.which(parsed.path) is None:
        raise _bad_spec(spec, f"{parsed.path!r} is not executable (nor a .py script)")
    return PbrainPlayer(parsed.path, parsed.turn_ms)


__all__ = ["COLUMN_LETTERS", "PLAYER_SPECS_HELP", "SHIPPED_MODEL", "SHIPPED_PLAYOUTS", "WINDOW_LEAVES",
           "WINDOW_THREADS", "HeuristicPlayer", "PlayerSpec", "is_timed", "parse_spec",
           "HumanPlayer", "MinimaxPlayer", "Player", "RandomPlayer", "SpecError", "format_point", "make_player",
           "parse_point", "spec_kind", "trained_n_in_row", "trained_size",
           "winning_points"]
