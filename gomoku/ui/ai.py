"""The window's opponent: which player (a spec, a model for the board), at what strength, and how
the window names it. Its search runs in a worker thread: ``gomoku.ui.thinking``. No pygame.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path

from gomoku.players import (SHIPPED_MODEL, SHIPPED_PLAYOUTS, WINDOW_LEAVES, WINDOW_THREADS, Player, SpecError,
                            make_player, parse_spec, sized_default, trained_n_in_row)
from gomoku.ui.session import DEFAULT_SIZE, N_IN_ROW, SetupError, new_board

DEFAULT_MODEL = Path(SHIPPED_MODEL)
DEFAULT_PLAYOUTS = SHIPPED_PLAYOUTS
FALLBACK_SPEC = "pure:2000"  # the AI when no model has been trained yet
SECONDS_PLAYOUT_CAP = 20_000  # the most playouts of a time-limited strength preset

AI_SPECS_HELP = """\
  az:CHECKPOINT:PLAYOUTS   the network + MCTS from a checkpoint (default az:models/9x9.pt:400)
  az:CHECKPOINT:TIME       the same for TIME a move (az:models/9x9.pt:1s, 500ms)
  pure:PLAYOUTS            pure MCTS with random rollouts (pure:3000)
  pure:TIME                pure MCTS for TIME a move (pure:1s)
  minimax:DEPTH            alpha-beta to DEPTH plies, 1 to 8 (minimax:3: milliseconds a move)
  ab:DEPTH                 alpha-beta with threat extensions and the VCF solver, DEPTH >= 1 (ab:4)
  ab:DEPTH:vct             the same with the VCT solver: attacks and defends with threes too
  heuristic                one ply: takes a win, blocks a four, else the best window score
  random                   uniform random legal moves
  pbrain:PATH[:MS]         a Gomocup engine (pbrain protocol) at PATH, MS a move (default 1000)"""


# ------------------------------------------------------------------------------ strength
@dataclass(frozen=True)
class Strength:
    """How long a search player thinks: ``playouts`` a move, and at most ``seconds`` when set."""

    playouts: int
    seconds: float | None = None

    @property
    def timed(self) -> bool:
        """A time a move: ``seconds``, the playouts (SECONDS_PLAYOUT_CAP and up) only bound the tree."""
        return self.seconds is not None and self.playouts >= SECONDS_PLAYOUT_CAP

    @property
    def label(self) -> str:
        if self.seconds is None:
            return f"{self.playouts} playouts"
        if self.timed:
            return f"{self.seconds:g} s a move"
        return f"{self.playouts} playouts, at most {self.seconds:g} s"

    def order(self) -> tuple[int, float, float]:
        """Weakest first: by playouts (a time cap below none, a shorter cap below a longer one),
        then the times a move, shortest first."""
        if self.timed:
            return (1, self.seconds, 0.0)
        return (0, self.playouts, math.inf if self.seconds is None else self.seconds)


PLAYOUT_PRESETS = (100, 400, 1600, 6400)
TIME_PRESETS = (1.0, 3.0, 10.0)  # seconds a move
STRENGTH_PRESETS = (tuple(Strength(playouts) for playouts in PLAYOUT_PRESETS)
                    + tuple(Strength(SECONDS_PLAYOUT_CAP, seconds) for seconds in TIME_PRESETS))


def spec_strength(spec: str, seconds: float | None = None) -> Strength | None:
    """The strength of a search spec: az:PATH:N and pure:N capped at ``seconds`` when given,
    az:PATH:TIME and pure:TIME (1s, 500ms) a time a move; None for the other players."""
    try:
        parsed = parse_spec(spec)
    except ValueError:
        return None
    if parsed.kind not in ("az", "pure"):
        return None
    if parsed.seconds is not None:  # the spec's own time comes first (make_player)
        return Strength(SECONDS_PLAYOUT_CAP, parsed.seconds)
    return Strength(parsed.playouts, seconds)


def with_strength(spec: str, strength: Strength) -> str:
    """The spec with the playouts of ``strength`` (the seconds go to make_player)."""
    head, _, _ = spec.strip().rpartition(":")
    return f"{head}:{strength.playouts}"


def strength_ladder(current: Strength, cap: float | None = None) -> list[Strength]:
    """The steps of + and -, with ``current``, weakest first: the playout presets, then the times
    a move; under a time ``cap`` (--seconds) the playout presets each capped at it, then the cap
    itself a move, so that no step goes past it."""
    presets = STRENGTH_PRESETS if cap is None else (
        *(Strength(playouts, cap) for playouts in PLAYOUT_PRESETS), Strength(SECONDS_PLAYOUT_CAP, cap))
    return sorted({*presets, current}, key=Strength.order)


# ------------------------------------------------------------------------------ the opponent
def choose_opponent(opponent: str | None, model: str | Path | None = None, playouts: int = DEFAULT_PLAYOUTS,
                    default_model: str | Path = DEFAULT_MODEL, size: int = DEFAULT_SIZE,
                    n_in_row: int = N_IN_ROW) -> tuple[str, str]:
    """(spec, note): ``opponent`` if given, else ``model`` through the net MCTS, else the default
    model for an n x n board and the rule ``n_in_row`` (``sized_default``), else the pure-MCTS
    fallback. A ``model`` that is not a file is a SetupError; the note is empty unless the fallback
    is used, and then says why."""
    if opponent:
        return opponent, ""
    if model is not None:
        if not Path(model).is_file():
            raise SetupError(f"no model file at {model}")
        return f"az:{model}:{playouts}", ""
    for path in sized_default(Path(default_model), size):
        if path.is_file() and model_plays(path, size, n_in_row):
            return f"az:{path}:{playouts}", ""
    missing = sized_default(Path(default_model), size)[0]
    wanted = f"{size}x{size} at {missing}" if n_in_row == N_IN_ROW else f"{n_in_row} in a row on {size}x{size}"
    return FALLBACK_SPEC, f"No model for {wanted} yet: playing {FALLBACK_SPEC} (pure MCTS) instead."


def model_plays(path: Path, size: int, n_in_row: int = N_IN_ROW) -> bool:
    """Whether the model file at ``path`` plays a size x size board with the rule ``n_in_row``
    (False when it cannot be read)."""
    from nets import checkpoint  # torch, only when a model is asked about

    try:  # load_model refuses a board its net does not play (NetConfig.plays)
        return checkpoint.load_model(path, size, size)[1] == n_in_row
    except (ValueError, OSError):
        return False


def make_opponent(spec: str, seed: int | None = None, seconds: float | None = None) -> Player:
    """The player for ``spec``, for any board; a bad spec (or unreadable model) is a SetupError."""
    if spec.strip() == "human":
        raise SetupError("the opponent must be an AI: 'human' is you, at the board")
    try:
        return make_player(spec, seed, seconds=seconds, leaves_per_step=WINDOW_LEAVES, threads=WINDOW_THREADS)
    except SpecError as error:  # list the forms the window takes ("human" is not one)
        raise SetupError(f"{error.problem.replace('player spec', 'AI spec')}; valid forms:\n{AI_SPECS_HELP}") from error
    except (ValueError, OSError) as error:  # unreadable or foreign checkpoint
        raise SetupError(str(error)) from error


def check_opponent(player: Player, spec: str, size: int, n_in_row: int = N_IN_ROW) -> Player:
    """``player`` if it plays a size x size board with the rule ``n_in_row``; a SetupError for a
    net that does not (another board size, or another rule)."""
    config = getattr(player, "net_config", None)
    if config is not None and not config.plays(size, size):
        hint = f" (pass --size {config.width} to play on its board)" if config.width == config.height else ""
        raise SetupError(f"the model in {spec!r} is for a {config.width}x{config.height} board, "
                         f"not {size}x{size}{hint}")
    check_board = getattr(player, "check_board", None)
    if check_board is not None:  # a net trained for another rule: now, not at the AI's first move
        try:
            check_board(new_board(size, n_in_row))
        except ValueError as error:
            rule = trained_n_in_row(player)
            hint = f" (pass --n-in-row {rule} to play its rule)" if rule not in (None, n_in_row) else ""
            raise SetupError(f"{error}{hint}") from error
    return player


def build_opponent(spec: str, size: int, seed: int | None = None, seconds: float | None = None,
                   n_in_row: int = N_IN_ROW) -> Player:
    """The player for ``spec`` on a size x size board with the rule ``n_in_row``; a net that does
    not play it (or any bad spec) is a SetupError."""
    return check_opponent(make_opponent(spec, seed, seconds), spec, size, n_in_row)


def player_setting(player: Player) -> str:
    """The player and its strength as a spec, with its time cap: "az:models/9x9.pt:1600, at most 3 s a move"."""
    seconds = getattr(player, "seconds", None)
    return player.name + (f", at most {seconds:g} s a move" if seconds is not None else "")


def short_spec(spec: str) -> str:
    """The spec with only the file name of a checkpoint: "az:9x9.pt:400"."""
    kind, _, rest = spec.partition(":")
    if kind == "az":
        path, _, playouts = rest.rpartition(":")
        return f"az:{Path(path).name}:{playouts}"
    return spec


def describe_spec(spec: str) -> str:
    """The player in words, without its strength: "AlphaZero net 9x9.pt", "minimax, depth 2"."""
    kind, _, rest = spec.partition(":")
    if kind == "az":
        return f"AlphaZero net {Path(rest.rpartition(':')[0]).name}"
    if kind == "pure":
        return "pure MCTS"
    if kind == "minimax":
        return f"minimax, depth {rest}"
    if kind == "ab":
        depth, _, vct = rest.partition(":")
        return f"alpha-beta, depth {depth}" + (", VCT" if vct else "")
    return spec


class OneTorchThread:
    """One torch intra-op thread while any window with a net is open; the old count back after the
    last. The net is small and runs batch 1: more threads only fight the window for the cores."""

    users = 0
    saved: int | None = None

    @classmethod
    def acquire(cls) -> bool:
        torch = sys.modules.get("torch")
        if torch is None:
            return False
        if cls.users == 0:
            cls.saved = torch.get_num_threads()
            torch.set_num_threads(1)
        cls.users += 1
        return True

    @classmethod
    def release(cls) -> None:
        cls.users -= 1
        torch = sys.modules.get("torch")
        if cls.users == 0 and torch is not None and cls.saved is not None:
            torch.set_num_threads(cls.saved)
