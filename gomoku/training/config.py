"""Run configuration: dataclasses loaded from YAML, strict about keys, types and ranges.

``load_config(path, overrides=["search.n_playout=200", ...])`` returns a ``Config``; an unknown
key, a value of the wrong type or out of range raises ``ConfigError`` naming the key.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_type_hints

import yaml

from gomoku.game.board import DEFAULT_N_IN_ROW, DEFAULT_SIZE, MAX_SIZE
from gomoku.tactics.settings import TacticsSettings
from mcts.config import SearchSettings
from nets.config import ARCHITECTURES, HEADS, MAX_BLOCKS, MAX_CHANNELS, NetConfig, NetSettings


class ConfigError(ValueError):
    pass


def _check(condition: bool, key: str, message: str) -> None:
    if not condition:
        raise ConfigError(f"{key}: {message}")


def _check_range(value: float, low: float, high: float, key: str) -> None:
    _check(low <= value <= high, key, f"must be in {low}..{high}, got {value!r}")


# Upper bounds of the sizes: far past any useful run, low enough that a typo (an extra zero, 1e12)
# is an error naming the key instead of an allocation that fails (or a run that never ends).
MAX_SEED = 2**32 - 1
MAX_BOARD = MAX_SIZE  # the Gomocup protocol's largest board (the net's bounds are its own: nets.config)
MAX_PLAYOUTS = 100_000
MAX_PARALLEL = 4096  # workers, games a worker advances together
MAX_GAMES = 10**9
MAX_BUFFER_BYTES = 16 * 2**30  # the replay buffer's arrays (states, policies, outcomes)
MAX_LR = 1.0


@dataclass
class BoardConfig:
    width: int = DEFAULT_SIZE
    height: int = DEFAULT_SIZE
    n_in_row: int = DEFAULT_N_IN_ROW

    def validate(self, prefix: str) -> None:
        for name in ("width", "height", "n_in_row"):
            _check_range(getattr(self, name), 1, MAX_BOARD, f"{prefix}.{name}")
        _check(self.n_in_row <= max(self.width, self.height), f"{prefix}.n_in_row", "does not fit the board")


@dataclass(frozen=True)
class NetSection(NetSettings):
    """The net's settings (``nets.config.NetSettings``: conv3, the classic 3-conv net, or resnet;
    fc heads sized for the board, or pooled heads that play any board size), defined and bounded
    there, as a run sets them; the net's board is the run's ``board``."""

    def validate(self, prefix: str) -> None:
        _check(self.arch in ARCHITECTURES, f"{prefix}.arch", f"must be {' or '.join(ARCHITECTURES)}")
        _check(self.head in HEADS, f"{prefix}.head", f"must be {' or '.join(HEADS)}")
        _check_range(self.channels, 1, MAX_CHANNELS, f"{prefix}.channels")
        _check_range(self.blocks, 1, MAX_BLOCKS, f"{prefix}.blocks")


@dataclass(frozen=True)
class SearchSection(TacticsSettings, SearchSettings):
    """The search's settings (``mcts.config.SearchSettings``) and the rules' (forced moves, VCF,
    VCT: ``gomoku.tactics.settings.TacticsSettings``), defined, documented and checked there, as a
    run sets them, with the exact rules on, and the self-play settings on top."""

    forced_moves: bool = True  # a run searches with the exact rules (gomoku/tactics/rules.py)
    vcf: bool = True
    vct: bool = True
    temperature: float = 1.0  # for the first temperature_moves moves of a self-play game
    temperature_moves: int = 12  # after these, the most visited move is played
    # Playout cap randomization (KataGo): > 0 makes a self-play move a full search (n_playout,
    # root noise, recorded as a training sample) with probability full_search_prob, else a fast
    # search of fast_playouts without noise whose position is not recorded. 0 = every move full.
    fast_playouts: int = 0
    full_search_prob: float = 0.25

    def validate(self, prefix: str) -> None:
        _check_range(self.n_playout, 2, MAX_PLAYOUTS, f"{prefix}.n_playout")
        _check_range(self.leaves_per_step, 1, self.n_playout, f"{prefix}.leaves_per_step")
        _check_range(self.vcf_nodes, 1, MAX_PLAYOUTS, f"{prefix}.vcf_nodes")
        _check_range(self.vct_nodes, 1, MAX_PLAYOUTS, f"{prefix}.vct_nodes")
        for key, message in SearchSettings.problems(self) + TacticsSettings.problems(self):
            raise ConfigError(f"{prefix}.{key}: {message}")
        _check(self.temperature > 0, f"{prefix}.temperature", "must be > 0")
        _check(self.temperature_moves >= 0, f"{prefix}.temperature_moves", "must be >= 0")
        # One playout only expands the root: no move gets a visit to choose it by.
        _check(self.fast_playouts == 0 or 2 <= self.fast_playouts < self.n_playout, f"{prefix}.fast_playouts",
               f"must be 0 (off) or in 2..n_playout - 1 (one playout visits no move), got {self.fast_playouts}")
        _check(0 < self.full_search_prob <= 1, f"{prefix}.full_search_prob", "must be in (0, 1]")
        _check(self.gumbel_k == 0 or self.fast_playouts == 0, f"{prefix}.gumbel_k",
               "and fast_playouts cannot both be on (choose one way to spend fewer playouts)")


SELFPLAY_BACKENDS = ("pool", "ray")
# Before the Ray backend, `selfplay.backend` named the worker nets' runtime, which is now
# `selfplay.runtime`; configs that still use the old meaning are read by `upgrade_config_dict`.
LEGACY_RUNTIME_BACKENDS = ("auto", "torch", "onnx")
MAX_PORT = 65535  # TCP ports are 1..65535


def _check_ray_address(address: str, key: str) -> None:
    """``address`` empty, ``auto``, or [ray://]HOST:PORT with a port a TCP port can be."""
    if address in ("", "auto"):
        return
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    _check(bool(sep and host) and port.isascii() and port.isdigit(), key,
           f"expected HOST:PORT (or auto, or empty for a local instance), got {address!r}")
    _check(1 <= int(port) <= MAX_PORT, key, f"the port must be from 1 to {MAX_PORT}, got {int(port)}")


@dataclass
class SelfPlaySection:
    workers: int = 0  # processes playing self-play games; 0 = one per CPU core, 1 = in this process
    parallel_games: int = 16  # games each worker advances together (their leaves form one batch)
    games_per_iteration: int = 16  # finished games collected before each round of training
    runtime: str = "auto"  # a CPU worker net's runtime: torch, onnx (onnxruntime), auto = onnx if installed
    # Where the self-play workers run: "pool" (processes on this machine) or "ray" (`workers` Ray
    # actors, 0 = one per CPU of the cluster, on one machine or many: gomoku/training/backends/ray_backend.py;
    # pip install -e ".[ray]").
    backend: str = "pool"
    # With backend ray: "" starts a local Ray instance for the run (and stops it after), "auto"
    # joins the cluster running on this machine (`ray start`), HOST:PORT joins that cluster.
    ray_address: str = ""
    # With workers > 1, where the workers' leaves are evaluated: "worker" (each process runs its own
    # copy of the net on `device`), "server" (they send them to one net in the trainer's process,
    # which batches all workers' leaves together); auto = server when `device` is cuda, else worker.
    inference: str = "auto"
    device: str = "auto"  # the self-play net's device with workers > 1: cpu, cuda, auto = cuda if available

    def validate(self, prefix: str) -> None:
        _check(self.runtime in ("auto", "torch", "onnx"), f"{prefix}.runtime", "must be auto, torch or onnx")
        _check(self.backend in SELFPLAY_BACKENDS, f"{prefix}.backend", "must be pool or ray")
        _check(self.inference in ("auto", "worker", "server"), f"{prefix}.inference",
               "must be auto, worker or server")
        _check(self.device in ("auto", "cpu", "cuda"), f"{prefix}.device", "must be auto, cpu or cuda")
        _check_range(self.workers, 0, MAX_PARALLEL, f"{prefix}.workers")
        _check_ray_address(self.ray_address, f"{prefix}.ray_address")
        _check_range(self.parallel_games, 1, MAX_PARALLEL, f"{prefix}.parallel_games")
        _check_range(self.games_per_iteration, 1, MAX_GAMES, f"{prefix}.games_per_iteration")


@dataclass
class TrainSection:
    lr: float = 2e-3
    batch_size: int = 512
    epochs: int = 5
    kl_targ: float = 0.02
    buffer_size: int = 10000  # positions, after 8-fold augmentation
    updates_per_game: float = 1.0  # KL-adaptive updates per self-play game (the classic: 1)
    game_batch_num: int = 1500  # self-play games in the whole run: the run stops there
    max_minutes: float = 0.0  # > 0: the run also stops once its wall time (all sessions) reaches this
    torch_threads: int = 0  # threads for training in the main process; 0 = torch's default
    lr_multiplier_max: float = 10.0  # the KL-adaptive multiplier grows only while below this
    # > 0: instead of updates_per_game, run as many updates as make each new (augmented) sample
    # be trained on this many times on average, epochs included (the classic run: ~15)
    sample_reuse: float = 0.0

    def validate(self, prefix: str) -> None:
        _check(0 < self.lr <= MAX_LR, f"{prefix}.lr", f"must be in (0, {MAX_LR:g}], got {self.lr!r}")
        _check(self.batch_size >= 1, f"{prefix}.batch_size", "must be >= 1")
        _check_range(self.epochs, 1, 1000, f"{prefix}.epochs")
        _check(0 < self.kl_targ <= 1, f"{prefix}.kl_targ", f"must be in (0, 1], got {self.kl_targ!r}")
        _check(self.buffer_size >= self.batch_size, f"{prefix}.buffer_size", "must be >= batch_size")
        _check_range(self.updates_per_game, 0, 1000, f"{prefix}.updates_per_game")
        _check_range(self.game_batch_num, 1, MAX_GAMES, f"{prefix}.game_batch_num")
        _check(self.max_minutes >= 0, f"{prefix}.max_minutes", "must be >= 0 (0: no time limit)")
        _check_range(self.torch_threads, 0, MAX_PARALLEL, f"{prefix}.torch_threads")
        _check_range(self.lr_multiplier_max, 1, 1000, f"{prefix}.lr_multiplier_max")
        _check_range(self.sample_reuse, 0, 1000, f"{prefix}.sample_reuse")


EVAL_OPPONENT_KINDS = ("random", "heuristic", "minimax", "ab", "pure")  # the players an evaluation can build


@dataclass
class EvalSection:
    check_freq: int = 50  # evaluate every this many self-play games
    games: int = 10
    n_playout: int = 400  # the model's playouts in evaluation games
    pure_playouts: int = 1000  # the pure MCTS opponent's playouts at the start
    pure_step: int = 1000  # added each time the best model wins every game
    pure_cap: int = 5000
    # Player specs (gomoku.players.make_player) played `games` games each at every evaluation,
    # besides the pure-MCTS ladder, e.g. [minimax:2]; the games run on the self-play workers.
    opponents: list[str] = field(default_factory=list)
    # What picks best.pt: "ladder" (the classic: the pure-MCTS score beats the best so far) or
    # "opponents" (the mean score against `opponents` is at least the best so far)
    select_by: str = "ladder"

    def validate(self, prefix: str) -> None:
        for name in ("check_freq", "games"):
            _check_range(getattr(self, name), 1, MAX_GAMES, f"{prefix}.{name}")
        _check_range(self.n_playout, 2, MAX_PLAYOUTS, f"{prefix}.n_playout")  # one playout visits no move
        for name in ("pure_playouts", "pure_step", "pure_cap"):
            _check_range(getattr(self, name), 1, MAX_PLAYOUTS * 10, f"{prefix}.{name}")
        _check(self.pure_cap >= self.pure_playouts, f"{prefix}.pure_cap", "must be >= pure_playouts")
        _check(self.select_by in ("ladder", "opponents"), f"{prefix}.select_by", "must be ladder or opponents")
        _check(self.select_by == "ladder" or bool(self.opponents), f"{prefix}.select_by",
               "opponents needs a non-empty eval.opponents")
        from gomoku.players import SpecError, parse_spec  # light: builds no player, imports no torch

        for i, spec in enumerate(self.opponents):
            key = f"{prefix}.opponents[{i}]"
            kind = spec.partition(":")[0]
            _check(kind in EVAL_OPPONENT_KINDS, key, f"{spec!r}: expected random, heuristic, minimax:DEPTH, ab:DEPTH or "
                                                     f"pure:PLAYOUTS")
            try:
                parse_spec(spec)
            except SpecError as error:
                raise ConfigError(f"{key}: {error.problem}") from None


@dataclass
class Config:
    seed: int = 0
    board: BoardConfig = field(default_factory=BoardConfig)
    net: NetSection = field(default_factory=NetSection)
    search: SearchSection = field(default_factory=SearchSection)
    selfplay: SelfPlaySection = field(default_factory=SelfPlaySection)
    train: TrainSection = field(default_factory=TrainSection)
    eval: EvalSection = field(default_factory=EvalSection)

    def validate(self) -> None:
        _check_range(self.seed, 0, MAX_SEED, "seed")
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if dataclasses.is_dataclass(value):
                value.validate(f.name)
        b = self.board
        buffer_bytes = self.train.buffer_size * 4 * (5 * b.width * b.height + 1)  # float32 planes, policy, outcome
        _check(buffer_bytes <= MAX_BUFFER_BYTES, "train.buffer_size",
               f"{self.train.buffer_size} positions of {b.width}x{b.height} need {buffer_bytes / 2**30:.3g} GiB "
               f"of memory (at most {MAX_BUFFER_BYTES / 2**30:g} GiB)")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def net_config(self) -> NetConfig:
        """The ``nets.NetConfig`` of this run's net (its board and ``net`` section)."""
        return NetConfig.of(self.net, self.board.width, self.board.height)


def _convert(value: Any, expected: type, key: str) -> Any:
    if expected is bool:
        _check(isinstance(value, bool), key, f"expected true/false, got {value!r}")
        return value
    if expected is int:
        _check(isinstance(value, int) and not isinstance(value, bool), key, f"expected an integer, got {value!r}")
        return value
    if expected is float:
        if isinstance(value, str):  # YAML 1.1 reads 1e-3 (no dot) as a string
            try:
                value = float(value)
            except ValueError:
                pass
        _check(isinstance(value, (int, float)) and not isinstance(value, bool), key,
               f"expected a number, got {value!r}")
        try:
            number = float(value)
        except OverflowError:  # an integer past any float
            number = math.inf
        text = repr(value)
        text = text if len(text) <= 20 else text[:20] + "..."
        _check(math.isfinite(number), key, f"expected a finite number, got {text}")
        return number
    if expected is str:
        _check(isinstance(value, str), key, f"expected a string, got {value!r}")
        return value
    if typing.get_origin(expected) is list:
        _check(isinstance(value, list), key, f"expected a list, got {value!r}")
        (item,) = typing.get_args(expected)
        return [_convert(v, item, f"{key}[{i}]") for i, v in enumerate(value)]
    raise ConfigError(f"{key}: unsupported type {expected}")


def _build(cls: type, data: Any, prefix: str) -> Any:
    _check(isinstance(data, dict), prefix or "config", f"expected a mapping, got {type(data).__name__}")
    hints = get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        where = f"{prefix}." if prefix else ""
        raise ConfigError(f"unknown key {where}{unknown[0]} (valid keys: {', '.join(sorted(names))})")
    kwargs = {}
    for name, value in data.items():
        key = f"{prefix}.{name}" if prefix else name
        expected = hints[name]
        kwargs[name] = _build(expected, value, key) if dataclasses.is_dataclass(expected) else _convert(
            value, expected, key)
    return cls(**kwargs)


def upgrade_config_dict(data: Any) -> Any:
    """The one compatibility step for configs of older runs (their checkpoints, ``config.yaml``):
    a ``selfplay.backend`` of auto, torch or onnx is the old name of ``selfplay.runtime`` and moves
    there, with ``backend`` set to "pool", the only backend there was. Anything else is returned
    as it is (a new dict when it changes; ``data`` itself is never modified)."""
    selfplay = data.get("selfplay") if isinstance(data, dict) else None
    if not isinstance(selfplay, dict) or selfplay.get("backend") not in LEGACY_RUNTIME_BACKENDS:
        return data
    return {**data, "selfplay": {**selfplay, "runtime": selfplay["backend"], "backend": "pool"}}


def config_from_dict(data: dict) -> Config:
    """The config of a nested dict (as ``Config.to_dict`` writes it; older configs are upgraded
    first, see ``upgrade_config_dict``), validated."""
    config = _build(Config, upgrade_config_dict(data or {}), "")
    config.validate()
    return config


def apply_override(data: dict, override: str) -> None:
    """``section.key=value`` (value parsed as YAML) into a nested dict."""
    if "=" not in override:
        raise ConfigError(f"override {override!r} is not of the form section.key=value")
    key, raw = override.split("=", 1)
    parts = key.strip().split(".")
    target = data
    for part in parts[:-1]:
        target = target.setdefault(part, {})
        if not isinstance(target, dict):
            raise ConfigError(f"override {override!r}: {part} is not a section")
    try:
        target[parts[-1]] = yaml.safe_load(raw)
    except yaml.YAMLError as error:
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ConfigError(f"override {override!r}: the value is not valid YAML ({problem})") from None


def load_config(path: str | Path | None, overrides: list[str] | None = None) -> Config:
    """The config of a YAML file (None: the defaults) with ``section.key=value`` overrides applied.

    A file that cannot be read, is not valid YAML, is empty or holds no mapping raises ConfigError
    naming the file (and the line)."""
    data: dict = {}
    if path is not None:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except UnicodeDecodeError as error:
            raise ConfigError(f"{path}: not a UTF-8 text file ({error.reason} at byte {error.start})") from None
        except OSError as error:  # no such file, a folder, no permission: one line, not "[Errno 2] ..."
            raise ConfigError(f"cannot read the config {path}: {error.strerror or error}") from None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
            where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "somewhere"
            problem = getattr(error, "problem", None) or str(error).splitlines()[0]
            raise ConfigError(f"{path}: {where}: not valid YAML: {problem}") from None
        if data is None:  # an empty file (--config /dev/null) started a full default run
            raise ConfigError(f"{path}: the config is empty (expected a mapping of sections, as configs/9x9.yaml)")
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: expected a mapping of sections at the top level, got a YAML "
                              f"{type(data).__name__}")
    for override in overrides or []:
        apply_override(data, override)
    return config_from_dict(data)


def save_config(config: Config, path: str | Path) -> None:
    Path(path).write_text(yaml.safe_dump(config.to_dict(), sort_keys=False))


# ---------------------------------------------------------------------------- resuming a run
# What a resumed run may change. The board and the net define what the checkpoint's weights and
# replay buffer are about, and the seed only starts the RNG streams that the checkpoint restores:
# these keys (and every key under a section named here) are fixed for the life of a run. Every
# other key may change on resume with --set (train.game_batch_num, train.lr, train.buffer_size,
# search.*, selfplay.*, eval.*, ...); the change is logged and recorded in the metrics.
RESUME_FIXED = ("seed", "board", "net")


def flatten_config(config: Config) -> dict[str, Any]:
    """``{"seed": 0, "board.width": 9, ...}``: every key of a config with its value."""
    out: dict[str, Any] = {}
    for section, value in config.to_dict().items():
        if isinstance(value, dict):
            out.update({f"{section}.{key}": item for key, item in value.items()})
        else:
            out[section] = value
    return out


def config_changes(old: Config, new: Config) -> dict[str, tuple[Any, Any]]:
    """The keys whose values differ, as ``{"train.lr": (old, new)}``, in config order."""
    before, after = flatten_config(old), flatten_config(new)
    return {key: (before.get(key), after.get(key)) for key in after if before.get(key) != after.get(key)}


def is_fixed_on_resume(key: str) -> bool:
    return any(key == fixed or key.startswith(f"{fixed}.") for fixed in RESUME_FIXED)


def check_resume_changes(changes: dict[str, tuple[Any, Any]], what: str) -> None:
    """ConfigError naming the first key that a resumed run cannot change (``what`` says who asked)."""
    for key, (old, new) in changes.items():
        if is_fixed_on_resume(key):
            raise ConfigError(f"{key}: the run was trained with {old!r}, {what} asks for {new!r}; "
                              f"{', '.join(f'{k}.*' if k != 'seed' else k for k in RESUME_FIXED)} "
                              f"cannot change on resume (start a new run for that)")


def resume_config(stored: Config, overrides: list[str] | None = None) -> tuple[Config, dict[str, tuple[Any, Any]]]:
    """The config a resumed run continues with: the run's own ``stored`` config with the
    ``section.key=value`` overrides applied, and what they changed. A change to a key that is
    fixed for a run (``RESUME_FIXED``) raises ConfigError."""
    data = stored.to_dict()
    for override in overrides or []:
        apply_override(data, override)
    config = config_from_dict(data)
    changes = config_changes(stored, config)
    check_resume_changes(changes, "--set")
    return config, changes
