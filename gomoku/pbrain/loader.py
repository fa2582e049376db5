"""Who plays behind the pbrain protocol: the options, loading players, board sizes and rules.

``Players.for_board(width, height)`` gives the player for a board: without a model or a player
spec asked for, the model named for the size beside the default one when there is one
(``models/15x15.pt`` for ``START 15``, as the window picks it); else the main one (the model, a
player spec, or pure MCTS when there is no model) when it can play that size and rule, else the
fallback spec when there is one; otherwise a ProtocolError says why. Nets run on onnxruntime
(the players' runtime; a .pt model is exported at START) or, with ``onnx=False`` or without
onnxruntime, on torch, with ``threads`` threads (one by default). The model's player has no
playout cap unless ``playouts`` asks for one: under a clock the time ends its search, and
without one it runs ``untimed_playouts``.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import gomoku.tactics.compiled as compiled
from gomoku.game.board import MAX_SIZE, Board  # MAX_SIZE: the search's per-node arrays grow with the board
from gomoku.pbrain.protocol import MIN_SIZE, N_IN_ROW, ProtocolError
from gomoku.players import (ENGINE_LEAVES, SHIPPED_MODEL,  # ENGINE_LEAVES: scripts/pbrain.py's too
                            int8_export, sized_default)

log = logging.getLogger(__name__)

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
DEFAULT_MODEL = REPO_ROOT / SHIPPED_MODEL
AZ_PLAYOUTS = 800  # per move for the model without a clock when --playouts is not given
PURE_PLAYOUTS = 2000  # per move for pure MCTS (no model) without a clock when --playouts is not given
ENGINE_CACHE = 50_000  # positions the engine's net answers are remembered for (CachedEvaluator)
CLOCK_PURE = "pure"  # the fallback spec of pure MCTS searching for the clock's time (scripts/pbrain.py's default)
DEFAULT_THREADS = 1  # torch / onnxruntime threads: one is fastest for batch-1 searches


@dataclass
class EngineOptions:
    """What to play with. ``player_spec`` wins over ``model``; ``fallback_spec`` plays board
    sizes the main player cannot (None: answer START with ERROR for them)."""

    model: Path | None = None  # None: DEFAULT_MODEL if it exists (``default_net``), else pure MCTS
    playouts: int | None = None  # cap per move for the model / pure MCTS (None: the clock decides)
    player_spec: str | None = None
    fallback_spec: str | None = None
    seed: int | None = None
    shortcuts: bool = True  # play a win in one / block the opponent's line at once, without search
    onnx: bool = True  # run the net with onnxruntime (a .pt model is exported at START); False: torch
    threads: int = DEFAULT_THREADS  # torch / onnxruntime intra-op threads
    report: bool = False  # say each search's playouts in a MESSAGE line
    leaves: int = ENGINE_LEAVES  # the model's search: leaves per net call
    cache: int = ENGINE_CACHE  # the model's search: positions remembered (0: no cache)
    pipeline: bool = False  # the model's search: the net on a thread of its own (with leaves > 1)


@dataclass
class Loaded:
    player: object
    description: str
    sizes: tuple[tuple[int, int], ...] | None  # (width, height) it plays, None for any size
    message: str | None = None  # said at START (e.g. "no model, playing pure MCTS")
    n_in_row: int | None = None  # the rule its net was trained for (None: any)
    warmed: bool = False
    untimed_playouts: int | None = None  # playouts a move without a clock (None: the player's own)

    def cannot_play(self, width: int, height: int) -> str | None:
        """Why this player cannot play a ``width`` x ``height`` board of the protocol (None: it can)."""
        if self.sizes is not None and (width, height) not in self.sizes:
            shown = ", ".join(f"{w}x{h}" for w, h in self.sizes)
            return f"board {width}x{height} not supported: {self.description} plays {shown} only"
        if self.n_in_row is not None and self.n_in_row != N_IN_ROW:
            return (f"{self.description} was trained for {self.n_in_row} in a row; "
                    f"this protocol plays {N_IN_ROW} in a row")
        return None

    def warm_up(self, width: int, height: int) -> None:
        """One short search round, so that the first move does not pay for the net's first call
        nor for compiling the search's loops; the tactics kernels, when this machine has not
        compiled them yet (some 20 s, once), compile in another process while the reference
        solvers answer (the same answers: ``gomoku.tactics.compiled.compile_elsewhere``)."""
        analyse = getattr(self.player, "analyse", None)
        if self.warmed or analyse is None:
            return
        self.warmed = True
        if compiled.cached():
            compiled.warm_up()  # every kernel loaded now (under a second), not on a move's clock
        else:
            compiled.compile_elsewhere()
        try:
            analyse(Board(width, height, N_IN_ROW), should_stop=lambda: True)
        except Exception:  # the real move will meet the same problem and report it
            log.debug("warm-up search failed", exc_info=True)


def default_net(model: Path, onnx: bool) -> Path:
    """The file the engine plays the default ``model`` from: on onnxruntime its int8 export beside
    it when there is one (``gomoku.players.int8_export``: 2.8x the float32 export's positions a
    second, the engine's playouts 1.8x; docs/engine.md), else ``model`` itself."""
    int8 = int8_export(model)
    return int8 if onnx and int8.is_file() else model


def net_sizes(config, fixed: tuple[int, int] | None = None) -> tuple[tuple[int, int], ...] | None:
    """The protocol's board sizes (width, height) a net of ``config`` (a ``nets.NetConfig``) plays:
    None when it plays all of them (a pooled net), else those it does (an fc net: its own).
    ``fixed``: the size of an exported net that records no config."""
    if config is None:
        return (fixed,)
    sides = range(MIN_SIZE, MAX_SIZE + 1)
    sizes = tuple((width, height) for width in sides for height in sides if config.plays(width, height))
    return None if len(sizes) == len(sides) ** 2 else sizes


def limit_threads(threads: int) -> None:
    """Give torch (and the OpenMP/BLAS pools, when torch is not loaded yet) ``threads`` threads."""
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, str(threads))
    torch = sys.modules.get("torch")
    if torch is not None and torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


class Players:
    """Loads the players of ``options`` on first use; ``message`` says things to the manager."""

    def __init__(self, options: EngineOptions, message: Callable[[str], None]):
        self.options = options
        self.message = message
        self._main: Loaded | None = None
        self._fallbacks: dict[tuple[int, int], Loaded] = {}
        self._sized: dict[int, Loaded | None] = {}  # by board side

    def main(self) -> Loaded:
        if self._main is not None:
            return self._main
        options = self.options
        if options.player_spec:
            self._main = self.load(options.player_spec)
        else:
            model = options.model
            if model is None and DEFAULT_MODEL.is_file():
                model = default_net(DEFAULT_MODEL, options.onnx)
            if model is not None:
                if not Path(model).is_file():
                    raise ProtocolError(f"no model file at {model}")
                self._main = self.load_model(Path(model))
            else:
                from gomoku.players.search import PureMCTSPlayer

                player = PureMCTSPlayer(n_playout=options.playouts, seed=options.seed)
                self._main = Loaded(player, player.name, None, untimed_playouts=options.playouts or PURE_PLAYOUTS)
                self._main.message = (f"no model at {DEFAULT_MODEL}: playing pure MCTS (weak); pass "
                                      "--model PATH to use a trained net")
        return self._main

    def for_board(self, width: int, height: int) -> Loaded:
        sized = self.sized_model(width, height)
        if sized is not None:
            return sized
        main = self.main()
        problem = main.cannot_play(width, height)
        if problem is None:
            return main
        if not self.options.fallback_spec:
            raise ProtocolError(problem)
        if (width, height) not in self._fallbacks:
            fallback = self.load(self.options.fallback_spec)
            also = fallback.cannot_play(width, height)
            if also:
                raise ProtocolError(f"{problem}, nor by the fallback: {also}")
            fallback.message = f"{problem}: playing {width}x{height} with {fallback.description}"
            self._fallbacks[(width, height)] = fallback
        return self._fallbacks[(width, height)]

    def sized_model(self, width: int, height: int) -> Loaded | None:
        """The model named for a square board beside the default one (``sized_default``), when
        neither a model nor a player spec was asked for and that file is there; else None."""
        if self.options.model is not None or self.options.player_spec or width != height:
            return None
        path = sized_default(DEFAULT_MODEL, width)[0]
        if path == DEFAULT_MODEL or not path.is_file():
            return None
        if width not in self._sized:
            loaded = self.load_model(path)
            if loaded.cannot_play(width, height):  # misnamed: the main player or the fallback plays
                loaded = None
            else:
                loaded.message = f"playing {width}x{height} with {path.name}, the model for that board"
            self._sized[width] = loaded
        return self._sized[width]

    def load(self, spec: str) -> Loaded:
        from gomoku.players import make_player  # lazy: keeps START cheap to reach

        if spec.strip() == CLOCK_PURE:  # pure MCTS without a playout cap: the clock ends its search
            from gomoku.players.search import PureMCTSPlayer

            player = PureMCTSPlayer(n_playout=None, seed=self.options.seed)
            return Loaded(player, "pure MCTS", None, untimed_playouts=PURE_PLAYOUTS)
        kind, _, rest = spec.strip().partition(":")
        if kind == "human":
            raise ProtocolError("the human player cannot run behind the protocol")
        limit_threads(self.options.threads)
        if kind == "az":
            path, _, playouts = rest.rpartition(":")
            if path and playouts.isdigit() and int(playouts) > 0 and (
                    self.options.onnx or path.lower().endswith(".onnx")):
                loaded = self._load_onnx(Path(path), int(playouts))
                if loaded is not None:
                    loaded.untimed_playouts = None
                    return loaded
        try:
            player = make_player(spec, seed=self.options.seed)
        except ValueError as error:  # bad spec or CheckpointError (a ValueError)
            raise ProtocolError(f"cannot load player {spec!r}: {error}") from error
        limit_threads(self.options.threads)  # torch may have been imported just now
        config = getattr(player, "net_config", None)
        sizes = None if config is None else net_sizes(config)
        return Loaded(player, getattr(player, "name", spec), sizes, n_in_row=getattr(player, "n_in_row", None))

    def load_model(self, path: Path) -> Loaded:
        """The model's AlphaZero player: on onnxruntime unless ``onnx`` is off (or it cannot run),
        capped at ``playouts`` when given."""
        limit_threads(self.options.threads)
        playouts = self.options.playouts
        if self.options.onnx or path.suffix.lower() == ".onnx":
            loaded = self._load_onnx(path, playouts)
            if loaded is not None:
                return loaded
        from gomoku.players.search import AlphaZeroPlayer

        try:
            player = AlphaZeroPlayer.from_checkpoint(str(path), n_playout=playouts, seed=self.options.seed,
                                                     runtime="torch", leaves_per_step=self.options.leaves,
                                                     cache_entries=self.options.cache, pipeline=self.options.pipeline)
        except ValueError as error:  # CheckpointError (a ValueError)
            raise ProtocolError(f"cannot load {path}: {error}") from error
        limit_threads(self.options.threads)  # torch was imported just now
        player.name = f"az:{path} (torch)"
        return Loaded(player, player.name, net_sizes(player.net_config), n_in_row=player.n_in_row,
                      untimed_playouts=playouts or AZ_PLAYOUTS)

    def _load_onnx(self, path: Path, playouts: int | None) -> Loaded | None:
        """An AlphaZero player on onnxruntime; None (and a MESSAGE) when it cannot run, so that a
        .pt model falls back to torch."""
        from nets.loading import load_evaluator

        try:
            loaded = load_evaluator(path, runtime="onnx", device="cpu", threads=self.options.threads)
        except ImportError as error:
            if path.suffix.lower() == ".onnx":
                raise ProtocolError(f"cannot run {path}: {error}") from error
            self.message(f"{error}; running the net with torch")
            return None
        except Exception as error:  # a bad file, a failed export check
            raise ProtocolError(f"cannot run {path} with onnxruntime: {error}") from error
        from gomoku.players.search import AlphaZeroPlayer

        evaluator = loaded.evaluator
        player = AlphaZeroPlayer(evaluator, n_playout=playouts, seed=self.options.seed,
                                 name=f"az:{path}" + (f":{playouts}" if playouts else "") + " (onnxruntime)",
                                 leaves_per_step=self.options.leaves, cache_entries=self.options.cache,
                                 pipeline=self.options.pipeline)
        player.net_config = loaded.config
        return Loaded(player, player.name, net_sizes(loaded.config, (evaluator.width, evaluator.height)),
                      n_in_row=loaded.n_in_row, untimed_playouts=playouts or AZ_PLAYOUTS)


def remove_exports() -> None:
    """Forget the in-memory exports of .pt models, if a net was loaded (importing nets.loading
    just for this would import torch: most of a second at exit for a player without a net)."""
    loading = sys.modules.get("nets.loading")
    if loading is not None:
        loading.forget_exports()
