"""The training run: self-play -> 8-fold augmentation -> replay buffer -> KL-adaptive updates ->
periodic evaluation against an escalating pure MCTS -> checkpoints.

A run directory (one trainer at a time: ``train.lock``) holds ``checkpoint.pt``, the run after
its last completed iteration N and the one source of truth (weights, optimiser, counters, ladder,
RNG states, the run's config, the replay buffer's sample count); ``metrics.jsonl``, one record per
completed iteration 1..N; ``buffer/NNNNNN.npz``, the samples each iteration added to the replay
buffer (the newest shards that the buffer holds); ``config.yaml``, a readable copy of the run's
config; and the model files ``current.pt`` and ``best.pt`` written at each evaluation.

An iteration is committed in this order: shard, metrics line, checkpoint (all atomic or flushed,
with SIGINT/SIGTERM held off until done). A resume trusts the checkpoint and drops any shard or
metrics record past its iteration, so a kill at any instant loses at most the iteration in
flight, which is played again; see ``_commit`` and ``_load``.
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import json
import logging
import math
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import yaml
from tqdm import tqdm

from gomoku.training.buffer import ReplayBuffer, ShardStore, read_legacy_buffer
from gomoku.training.config import (Config, check_resume_changes, config_changes, config_from_dict, load_config,
                                    resume_config)
from gomoku.training.rundir import (RunLock, append_line, fault_point, make_run_dir, remove_stale_temps,
                                    repair_metrics)
from gomoku.training.selfplay import (SelfPlayGame, SelfPlayRunner, WorkerError, WorkerPool, play_eval_games,
                                     resolve_inference)
from gomoku.training.symmetry import augment
from nets import (CheckpointError, NetConfig, NetEvaluator, Trainer, build_net, kl_adaptive_update,
                  load_checkpoint, save_checkpoint, save_model)
from nets.checkpoint import atomic_write, deferred_signals

log = logging.getLogger(__name__)

CHECKPOINT = "checkpoint.pt"
BUFFER_DIR = "buffer"  # one shard per iteration (gomoku.training.buffer.ShardStore)
LEGACY_BUFFER = "buffer.npz"  # the whole buffer in one file, as runs before the shards kept it
METRICS = "metrics.jsonl"
CONFIG = "config.yaml"
CURRENT_MODEL = "current.pt"
BEST_MODEL = "best.pt"


class TrainingDiverged(RuntimeError):
    """The loss or the weights stopped being finite; the run stays at its last good iteration."""


class RunWriteError(OSError):
    """A file of the run could not be written (a full disk, a folder gone read-only): the run stays
    at its last committed iteration, and the file's previous version is intact."""


def _os_error_in(error: BaseException) -> OSError | None:
    """The OSError behind ``error``: itself, or one it was raised from or during (torch.save raises
    a RuntimeError while handling the OSError of a full disk)."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, OSError):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


@contextlib.contextmanager
def writing(path: Path):
    """Turn a failed write of ``path`` (an OSError, or torch's RuntimeError over one) into a
    ``RunWriteError`` naming the file."""
    try:
        yield
    except (OSError, RuntimeError) as error:
        cause = _os_error_in(error)
        if cause is None or isinstance(error, RunWriteError):
            raise
        reason = cause.strerror or str(cause)
        fix = "free some space, then --resume" if cause.errno == errno.ENOSPC else "then --resume"
        failure = RunWriteError(f"cannot write {path}: {reason}; the run stays at its last saved iteration ({fix})")
        failure.errno = cause.errno
        raise failure from error


def format_duration(seconds: float) -> str:
    """``1:02:03`` (hours:minutes:seconds), or ``?`` when not known."""
    if seconds is None or not math.isfinite(seconds):
        return "?"
    return str(datetime.timedelta(seconds=round(max(0.0, seconds))))


@dataclass(frozen=True)
class RunTarget:
    """What stops a run: ``games`` (train.game_batch_num), the run's wall time ``wall_s`` (over all
    its sessions: --max-minutes or train.max_minutes, the smaller), ``iterations`` in this session."""

    games: int
    wall_s: float | None = None
    iterations: int | None = None

    def describe(self) -> str:
        parts = [f"{self.games:,} games (train.game_batch_num)"]
        if self.wall_s is not None:
            parts.append(f"{self.wall_s / 60:g} min of run time")
        if self.iterations is not None:
            parts.append(f"{self.iterations} iteration(s) of this session (--max-iterations)")
        return " or ".join(parts)


@dataclass
class LadderState:
    """The evaluation ladder of the classic pipeline."""

    pure_playouts: int
    best_score: float = 0.0
    best_opponent_score: float = -1.0  # the best mean score against eval.opponents so far


def resolve_workers(requested: int) -> int:
    return requested if requested > 0 else (os.cpu_count() or 1)


def check_device(config: Config) -> None:
    """ValueError when the config asks for a device this machine does not have."""
    if config.selfplay.device == "cuda" and not torch.cuda.is_available():
        raise ValueError("selfplay.device: cuda, but CUDA is not available here (use cpu or auto: "
                         "--set selfplay.device=auto)")


def selfplay_description(config: Config, device: torch.device) -> str:
    """Where and how self-play runs, in words: workers, their nets' device and runtime."""
    s = config.selfplay
    if s.backend == "ray":
        where = f"the Ray cluster at {s.ray_address}" if s.ray_address else "a local Ray instance"
        count = f"{s.workers} Ray actors" if s.workers else "one Ray actor per CPU"
        return f"{count} on {where}, {s.parallel_games} games each"
    n = resolve_workers(s.workers)
    if n == 1:
        return f"1 worker (this process), torch on {device}, {s.parallel_games} games at once"
    net_device, inference = resolve_inference(s)
    if inference == "server":
        return f"{n} worker processes, {s.parallel_games} games each, their leaves evaluated here on {net_device}"
    from nets.onnx_export import onnx_available

    onnx = net_device == "cpu" and (s.runtime == "onnx" or (s.runtime == "auto" and onnx_available()))
    return (f"{n} worker processes, {s.parallel_games} games each, nets on {net_device} "
            f"({'onnxruntime' if onnx else 'torch'})")


class TrainPipeline:
    def __init__(self, config: Config | None, run_dir: str | Path, device: str | None = None,
                 resume: bool = False, progress: bool = True, overrides: list[str] | None = None):
        """A new run in ``run_dir`` with ``config``; or, with ``resume``, the run there, continued
        with its own config (the checkpoint's): ``overrides`` (``section.key=value``) change keys
        that a resumed run may change (not ``config.RESUME_FIXED``); a ``config`` given on resume
        must agree with the run's on those fixed keys, and its other differences are ignored.

        Holds the run directory's lock from here until ``run`` ends (or ``close``)."""
        self.run_dir = Path(run_dir)
        self.progress = progress
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        if resume and not (self.run_dir / CHECKPOINT).is_file():
            raise CheckpointError(f"no checkpoint at {self.run_dir / CHECKPOINT}: there is no run to resume")
        if config is not None and not resume:
            check_device(config)  # before the run directory is made
        make_run_dir(self.run_dir)
        self.resumed_from: int | None = None  # the iteration a resume started at (None: a new run)
        self._lock = RunLock(self.run_dir)
        self._lock.acquire()
        self.shards = ShardStore(self.run_dir / BUFFER_DIR)
        self._resume_note: dict | None = None  # recorded in the first metrics record after a resume
        self._config_on_disk: dict | None = None  # what config.yaml holds
        try:
            remove_stale_temps(self.run_dir, self.shards.folder)
            payload = (load_checkpoint(self.run_dir / CHECKPOINT, map_location=self.device, training=True)
                       if resume else None)
            if payload is not None:
                config = self._resume_config(payload, config, overrides or [])
            elif config is None:
                raise ValueError("a new run needs a config")
            else:
                self._check_empty()
            self._setup(config)
            check_device(config)  # a resumed run's
            if payload is not None:
                self._load(payload)
                self.resumed_from = self.iteration
            else:
                with deferred_signals():  # iteration 0: a run that can be resumed from the start
                    self.save()
                    self._write_config()
        except BaseException:
            self._lock.release()
            raise
        self._pool: WorkerPool | None = None
        self._serve_net: torch.nn.Module | None = None  # the inference server's net (selfplay.inference)
        self._runner: SelfPlayRunner | None = None
        self.moves_played = 0  # self-play moves made in this session, unfinished games included
        self.stop_reason = ""  # why the last ``run`` stopped, e.g. "reached 1,200 games"
        self._bar: tqdm | None = None  # the run's progress bar (games of the target), while running
        self._progress = ""  # its text: speed and ETAs (after each iteration)
        self._phase = "self-play"  # what the run is doing now, at the end of the bar
        self._iteration_started: float | None = None  # perf_counter() at the start of the iteration in flight
        self._target = RunTarget(self.config.train.game_batch_num)
        self._session_start = (0.0, 0)  # (run wall time, games) when this session's run began

    def _setup(self, config: Config) -> None:
        self.config = config
        if config.train.torch_threads:
            torch.set_num_threads(config.train.torch_threads)
        b = config.board
        self.net_config = NetConfig(b.width, b.height, config.net.arch, config.net.channels, config.net.blocks)
        self.net = build_net(self.net_config)
        self.trainer = Trainer(self.net, config.train.lr, self.device)
        self.buffer = ReplayBuffer(config.train.buffer_size, (4, b.height, b.width), b.width * b.height)
        self.rng = np.random.default_rng(config.seed)
        torch.manual_seed(config.seed)
        self.iteration = 0
        self.games_played = 0
        self.positions = 0
        self.wall_time = 0.0
        self.lr_multiplier = 1.0
        self.ladder = LadderState(config.eval.pure_playouts)
        self.committed_iteration = 0  # the iteration checkpoint.pt holds
        self._stopped_mid_iteration = False

    def _check_empty(self) -> None:
        if (self.run_dir / CHECKPOINT).exists():
            raise FileExistsError(f"{self.run_dir} already holds a run; pass --resume to continue it "
                                  f"or choose another --run-dir")
        leftovers = [name for name in (METRICS, LEGACY_BUFFER) if (self.run_dir / name).exists()]
        leftovers += [f"{BUFFER_DIR}/{self.shards.path(i).name}" for i in self.shards.iterations()]
        if leftovers:
            raise FileExistsError(f"{self.run_dir} holds files of a run but no {CHECKPOINT} "
                                  f"({', '.join(leftovers[:3])}); choose another --run-dir")

    def _resume_config(self, payload: dict, requested: Config | None, overrides: list[str]) -> Config:
        """The run's config (stored in its checkpoint) with the resume-safe ``overrides`` applied."""
        if isinstance(payload.get("config"), dict):
            stored = config_from_dict(payload["config"])
        elif (self.run_dir / CONFIG).exists():  # checkpoints from before the config was stored in them
            stored = load_config(self.run_dir / CONFIG)
        elif requested is not None:
            stored = requested
        else:
            raise ValueError(f"{self.run_dir / CHECKPOINT} holds no config and there is no {CONFIG}: "
                             f"pass the run's config")
        self._stored_config = stored
        config, changes = resume_config(stored, overrides)
        if requested is not None:
            # ``requested`` is the config the command line gives (its file with the same --set
            # applied, as when the run started): compared with the run's config after the --set,
            # only what the file says and no --set says is reported, and nothing when they agree.
            ignored = config_changes(config, requested)
            check_resume_changes(ignored, "the config given")
            if ignored:
                log.warning("the config given differs from the run's in %s: the run's values are kept "
                            "(change a key on resume with --set section.key=value)",
                            ", ".join(f"{k} (run {a!r}, given {b!r})" for k, (a, b) in ignored.items()))
        if changes:
            log.warning("resuming with changes: %s",
                        ", ".join(f"{k} {a!r} -> {b!r}" for k, (a, b) in changes.items()))
        self._resume_note = {"from_iteration": int(payload["iteration"]),
                             "config_changes": {k: [a, b] for k, (a, b) in changes.items()}}
        return config

    # ------------------------------------------------------------------ state
    def _payload(self) -> dict:
        return {
            "net_config": self.net_config.to_dict(),
            "model": {k: v.detach().cpu() for k, v in self.net.state_dict().items()},
            "optimizer": self.trainer.optimizer.state_dict(),
            "iteration": self.iteration,
            "games_played": self.games_played,
            "positions": self.positions,
            "wall_time": self.wall_time,
            "lr_multiplier": float(self.lr_multiplier),
            "ladder": {"pure_playouts": self.ladder.pure_playouts, "best_score": float(self.ladder.best_score),
                       "best_opponent_score": float(self.ladder.best_opponent_score)},
            "rng": self.rng.bit_generator.state,
            "torch_rng": torch.get_rng_state(),
            "config": self.config.to_dict(),
            "buffer_total": int(self.buffer.total),  # samples the run added to the buffer (shard starts)
        }

    def save(self) -> None:
        """Write the checkpoint of the state in memory (atomically): the commit point of an iteration."""
        path = self.run_dir / CHECKPOINT
        with writing(path):
            save_checkpoint(path, self._payload(), before_replace=lambda: fault_point("checkpoint.tmp"))
        self.committed_iteration = self.iteration
        fault_point("checkpoint")

    def _write_config(self, config: Config | None = None) -> None:
        """config.yaml, a readable copy of the run's config, when it differs from the file's."""
        data = (config or self.config).to_dict()
        if data != self._config_on_disk:
            text = yaml.safe_dump(data, sort_keys=False).encode()
            atomic_write(self.run_dir / CONFIG, lambda handle: handle.write(text))
            self._config_on_disk = data

    def _load(self, payload: dict) -> None:
        path = self.run_dir / CHECKPOINT
        if payload["net_config"] != self.net_config.to_dict():
            raise ValueError(f"{path} was trained with net {payload['net_config']}, the config asks for "
                             f"{self.net_config.to_dict()}")
        self.net.load_state_dict(payload["model"])
        self.trainer.optimizer.load_state_dict(payload["optimizer"])
        self.iteration = self.committed_iteration = payload["iteration"]
        self.games_played = payload["games_played"]
        self.positions = payload["positions"]
        self.wall_time = payload["wall_time"]
        self.lr_multiplier = payload["lr_multiplier"]
        self.ladder = LadderState(**payload["ladder"])
        self.rng.bit_generator.state = payload["rng"]
        torch.set_rng_state(payload["torch_rng"])
        # What a kill left past the checkpoint belongs to an iteration that is played again.
        later = [i for i in self.shards.iterations() if i > self.iteration]
        if later:
            log.warning("dropping replay-buffer shard(s) of iteration(s) %s, past the checkpoint's iteration %d",
                        ", ".join(map(str, later)), self.iteration)
            self.shards.remove(later)
        repair_metrics(self.run_dir / METRICS, self.iteration)
        self._load_buffer(payload.get("buffer_total"))
        if (self.run_dir / CONFIG).exists():
            try:
                self._config_on_disk = yaml.safe_load((self.run_dir / CONFIG).read_text())
            except (yaml.YAMLError, UnicodeDecodeError):
                self._config_on_disk = None
        self._write_config(self._stored_config)  # the run's config as committed (repairs a missing or stale copy)
        log.info("resumed %s at iteration %d (%d games, buffer %d)", self.run_dir, self.iteration,
                 self.games_played, len(self.buffer))

    def _load_buffer(self, total: int | None) -> None:
        """Rebuild the replay buffer from the newest shards up to the checkpoint's iteration."""
        legacy = self.run_dir / LEGACY_BUFFER
        if legacy.exists() and not self.shards.iterations():  # a run from before the shards: convert it
            shard = read_legacy_buffer(legacy, self.buffer.states.shape[1:])
            self.shards.write(self.iteration, 0, shard.states, shard.probs, shard.outcomes)
            log.info("converted %s into %s/%s", legacy, BUFFER_DIR, self.shards.path(self.iteration).name)
        legacy.unlink(missing_ok=True)
        chosen = [self.shards.read(i) for i in self.shards.newest(self.iteration, self.buffer.capacity)]
        if total is None:  # no count in the checkpoint: the shards are all there is
            total = chosen[-1].end if chosen else 0
        self.buffer.restore(chosen, total)

    def _weights(self) -> dict:
        return {k: v.detach().cpu() for k, v in self.net.state_dict().items()}

    # ------------------------------------------------------------------ self-play
    def _start_workers(self) -> None:
        if self.config.selfplay.backend == "ray":  # actors with their own nets, here or on a cluster
            try:
                from gomoku.training.ray_backend import RayPool
            except ImportError as error:  # Ray is an optional extra
                raise WorkerError(str(error)) from None
            s = self.config.selfplay
            self._pool = RayPool(self.config.to_dict(), s.workers, s.ray_address, self.run_dir)
            return
        n = resolve_workers(self.config.selfplay.workers)
        if n > 1:
            device, inference = resolve_inference(self.config.selfplay)
            server = None
            if inference == "server":  # one net for all workers' leaves: ours, or a copy on its device
                self._serve_net = self.net if torch.device(device) == self.device else build_net(self.net_config)
                server = NetEvaluator(self._serve_net, device)
                log.info("self-play: %d workers, their leaves evaluated here on %s", n, device)
            self._pool = WorkerPool(n, self.config.to_dict(), server)
        else:
            evaluator = NetEvaluator(self.net, self.device)
            self._runner = SelfPlayRunner(evaluator, self.config.board, self.config.search,
                                          self.config.selfplay.parallel_games, self.rng)

    def _seed(self) -> int:
        return int(self.rng.integers(2**31))

    def _on_games(self, n: int) -> None:
        """Self-play games finished: the run's progress bar counts them as they come."""
        if self._bar is not None:
            self._bar.update(n)

    def self_play(self, games: int) -> list[SelfPlayGame]:
        if self._pool is None:
            self._runner.search.evaluator.net.eval()
            before = self._runner.moves_played
            games = self._runner.play(games, on_game=lambda g: self._on_games(1))
            self.moves_played += self._runner.moves_played - before
            return games
        share = math.ceil(games / len(self._pool))
        if self._pool.server is None:
            weights = self._weights()
        else:  # the workers' leaves come to the server's net: no weights to send them
            weights = None
            if self._serve_net is not self.net:
                self._serve_net.load_state_dict(self.net.state_dict())
            self._serve_net.eval()
        answers = self._pool.run([("selfplay", weights, share, self._seed()) for _ in range(len(self._pool))],
                                 on_progress=self._on_games)
        self.moves_played += sum(moves for _, moves in answers)
        return [game for games_, _ in answers for game in games_]

    # ------------------------------------------------------------------ training
    def _n_updates(self, games: int, samples: int) -> int:
        """Updates after an iteration that added ``samples`` (augmented) to the buffer:
        ``updates_per_game`` per game (the classic), or with ``sample_reuse`` > 0 enough to train
        on each new sample that many times."""
        t = self.config.train
        if t.sample_reuse > 0:
            return max(1, round(t.sample_reuse * samples / (t.batch_size * t.epochs)))
        return round(t.updates_per_game * games)

    def train(self, n_updates: int) -> dict:
        t = self.config.train
        stats = []
        for i in range(n_updates):
            self._set_phase(f"training {i + 1}/{n_updates}")
            batch = self.buffer.sample(t.batch_size, self.rng)
            update = kl_adaptive_update(self.trainer, *batch, lr=t.lr, lr_multiplier=self.lr_multiplier,
                                        epochs=t.epochs, kl_targ=t.kl_targ, max_multiplier=t.lr_multiplier_max)
            self.lr_multiplier = update.lr_multiplier
            stats.append(update)
        if not stats:
            return {}
        last = stats[-1]
        return {"loss": float(np.mean([s.step.loss for s in stats])),
                "policy_loss": float(np.mean([s.step.policy_loss for s in stats])),
                "value_loss": float(np.mean([s.step.value_loss for s in stats])),
                "entropy": float(np.mean([s.step.entropy for s in stats])),
                "kl": float(np.mean([s.kl for s in stats])),
                "epochs": float(np.mean([s.epochs for s in stats])),
                "explained_var_old": last.explained_var_old, "explained_var_new": last.explained_var_new,
                "updates": len(stats)}

    # ------------------------------------------------------------------ evaluation
    def _play_eval(self, opponent: str, seed: int) -> dict:
        """``eval.games`` games of the current net against ``opponent``, spread over the workers."""
        games = self.config.eval.games
        played = 0

        def on_games(n: int = 1) -> None:
            nonlocal played
            played += n
            self._set_phase(f"evaluation vs {opponent} {played}/{games}")

        on_games(0)
        if self._pool is None:
            evaluator = NetEvaluator(self.net, self.device)
            results = play_eval_games(evaluator, self.config, list(range(games)), opponent, seed, on_game=on_games)
        else:
            n = len(self._pool)
            weights = self._weights()
            chunks = [list(range(i, games, n)) for i in range(n)]
            tasks = [("eval", weights, chunk, opponent, seed) for chunk in chunks if chunk]
            results = [r for answer in self._pool.run(tasks, on_progress=on_games) for r in answer]
        wins = sum(r == 1 for _, r in results)
        draws = sum(r == 0 for _, r in results)
        losses = sum(r == -1 for _, r in results)
        return {"opponent": opponent, "wins": wins, "draws": draws, "losses": losses,
                "score": (wins + 0.5 * draws) / games}

    def evaluate(self) -> dict:
        """Play the current net against the pure-MCTS ladder and ``eval.opponents``; save current.pt,
        and best.pt when the model beats the best so far (``eval.select_by``); escalate the ladder."""
        e = self.config.eval
        playouts = self.ladder.pure_playouts
        seed = self._seed()
        ladder = self._play_eval(f"pure:{playouts}", seed)
        others = [self._play_eval(spec, seed) for spec in e.opponents]
        score = ladder["score"]
        with writing(self.run_dir / CURRENT_MODEL):
            save_model(self.run_dir / CURRENT_MODEL, self.net, n_in_row=self.config.board.n_in_row,
                       iteration=self.iteration, games=self.games_played)
        record = {"pure_playouts": playouts, **{k: ladder[k] for k in ("wins", "draws", "losses", "score")},
                  "new_best": False}
        if others:
            record["opponents"] = others
            record["opponents_score"] = float(np.mean([o["score"] for o in others]))
        if e.select_by == "opponents":
            new_best = record["opponents_score"] >= self.ladder.best_opponent_score
        else:
            new_best = score > self.ladder.best_score
        if new_best:
            record["new_best"] = True
            with writing(self.run_dir / BEST_MODEL):
                save_model(self.run_dir / BEST_MODEL, self.net, n_in_row=self.config.board.n_in_row,
                           iteration=self.iteration, games=self.games_played,
                           eval_pure_playouts=playouts, eval_score=score,
                           eval_opponents_score=record.get("opponents_score", -1.0))
            self.ladder.best_opponent_score = max(self.ladder.best_opponent_score,
                                                  record.get("opponents_score", -1.0))
        # The classic ladder: the best pure-MCTS score so far; a clean sweep raises the playouts.
        if score > self.ladder.best_score:
            self.ladder.best_score = score
            if score == 1.0 and playouts < e.pure_cap:
                self.ladder.pure_playouts = min(playouts + e.pure_step, e.pure_cap)
                self.ladder.best_score = 0.0
        results = [ladder, *others]
        scores = ", ".join(f"{r['opponent']} +{r['wins']}={r['draws']}-{r['losses']} ({r['score']:.2f})"
                           for r in results)
        best = self.run_dir / BEST_MODEL
        verdict = (f"new best model: {best} written" if new_best else
                   f"{best} kept" if best.exists() else "no best.pt yet")
        log.info("evaluation at %d games: %s; %s", self.games_played, scores, verdict)
        return record

    # ------------------------------------------------------------------ the loop
    def target(self, max_iterations: int | None = None, max_wall_s: float | None = None) -> RunTarget:
        """What stops ``run(max_iterations, max_wall_s)``: ``train.game_batch_num`` games, the
        smaller of ``max_wall_s`` and ``train.max_minutes`` (when > 0) of run time, ``max_iterations``."""
        t = self.config.train
        limits = [w for w in (max_wall_s, 60 * t.max_minutes if t.max_minutes > 0 else None) if w is not None]
        return RunTarget(t.game_batch_num, min(limits) if limits else None, max_iterations)

    def describe(self, target: RunTarget | None = None, config_path: str | Path | None = None) -> list[str]:
        """The run in a few lines, for a start banner: where, what, on what, until when."""
        c, target = self.config, target or self.target()
        b = c.board
        state = ("a new run" if self.resumed_from is None else
                 f"resumed at iteration {self.resumed_from}, {self.games_played:,} games, "
                 f"{format_duration(self.wall_time)} run time")
        if self.resumed_from is None:
            given = str(config_path) if config_path is not None else "given in code"
        else:
            own = f"the run's own ({self.run_dir / CONFIG})"
            given = own if config_path is None else f"{own}; {config_path} checked against it"
        first_eval = (self.games_played // c.eval.check_freq + 1) * c.eval.check_freq
        return [f"run directory: {self.run_dir} ({state})",
                f"config: {given}",
                f"board: {b.width}x{b.height}, {b.n_in_row} in a row; net {c.net.arch}; "
                f"{c.search.n_playout} playouts a move",
                f"training on {self.device}; self-play: {selfplay_description(c, self.device)}",
                f"stops at {target.describe()}; Ctrl-C stops it too (the finished iterations are saved; "
                f"continue with --resume)",
                f"evaluation every {c.eval.check_freq:,} games (next at {first_eval:,}): writes current.pt, and "
                f"best.pt when the model scores the best so far against "
                f"{', '.join(c.eval.opponents) if c.eval.select_by == 'opponents' else 'the pure-MCTS ladder'}"]

    def run(self, max_iterations: int | None = None, max_wall_s: float | None = None) -> None:
        """Play iterations until ``train.game_batch_num`` games (or ``max_iterations``, or until the
        run's wall time, counted over all its sessions, reaches ``max_wall_s`` or
        ``train.max_minutes``), committing each to the run directory; ``stop_reason`` then says
        which. On any exception (Ctrl-C included) the run stays at its last committed iteration,
        ``committed_iteration``; the unfinished one is played again on resume (with a new
        pipeline: this one refuses to run again). Releases the lock at the end."""
        if self._stopped_mid_iteration:
            raise RuntimeError("this pipeline stopped in the middle of an iteration; resume the run with a "
                               "new TrainPipeline(..., resume=True)")
        self._lock.acquire()
        target = self._target = self.target(max_iterations, max_wall_s)
        self._session_start = (self.wall_time, self.games_played)
        done = 0
        self._bar = tqdm(total=target.games, initial=min(self.games_played, target.games), unit="game",
                         disable=not self.progress, dynamic_ncols=True,
                         bar_format="{n_fmt}/{total_fmt} games |{bar}| {desc}")
        self._update_bar()
        ticking = threading.Event()
        clock = threading.Thread(target=self._tick, args=(ticking,), daemon=True, name="progress-clock")
        if self.progress:  # the run time on the bar moves on between the bar's other updates
            clock.start()
        try:
            self._start_workers()
            while (reason := self._stop_reason(target, done)) is None:
                self._iteration()
                done += 1
            self.stop_reason = reason
        except BaseException:
            if self.iteration != self.committed_iteration:
                self._stopped_mid_iteration = True
                log.warning("stopped in iteration %d: the run stays at iteration %d (%s); the unfinished "
                            "iteration is played again on resume", self.iteration, self.committed_iteration,
                            self.run_dir / CHECKPOINT)
            raise
        finally:
            ticking.set()
            if clock.is_alive():
                clock.join()
            self._bar.close()
            self._bar = None
            if self._pool is not None:
                self._pool.close()
                self._pool = None
            self.close()

    def _stop_reason(self, target: RunTarget, done: int) -> str | None:
        if self.games_played >= target.games:
            return f"reached {self.games_played:,} games (target {target.games:,}, train.game_batch_num)"
        if target.wall_s is not None and self.wall_time >= target.wall_s:
            return f"reached {format_duration(self.wall_time)} of run time (limit {target.wall_s / 60:g} min)"
        if target.iterations is not None and done >= target.iterations:
            return f"played {done} iteration(s) (--max-iterations)"
        return None

    def eta(self) -> tuple[float | None, float | None]:
        """Seconds (estimated) to the next evaluation and to the end of the run, at this session's
        pace so far (self-play, training and evaluations together); None before it has one."""
        wall0, games0 = self._session_start
        seconds, games = self.wall_time - wall0, self.games_played - games0
        if games <= 0 or seconds <= 0:
            return None, None
        per_game = seconds / games
        check = self.config.eval.check_freq
        next_eval = (self.games_played // check + 1) * check
        to_end = max(0, self._target.games - self.games_played) * per_game
        if self._target.wall_s is not None:
            to_end = min(to_end, max(0.0, self._target.wall_s - self.wall_time))
        to_eval = (next_eval - self.games_played) * per_game if next_eval <= self._target.games else None
        return to_eval, to_end

    def progress_text(self, positions_per_s: float | None = None) -> str:
        """``run 0:12:03, 41.7 positions/s, evaluation in ~0:08:10, end in ~0:44:00``."""
        return f"run {format_duration(self.wall_time)}, {self._speed_and_eta(positions_per_s)}"

    def _speed_and_eta(self, positions_per_s: float | None = None) -> str:
        to_eval, to_end = self.eta()
        parts = []
        if positions_per_s is not None:
            parts.append(f"{positions_per_s:.1f} positions/s")
        if to_eval is not None:
            parts.append(f"evaluation in ~{format_duration(to_eval)}")
        parts.append(f"end in ~{format_duration(to_end)}" if to_end is not None else "end in ? (timing the first "
                                                                                       "iteration)")
        return ", ".join(parts)

    def _update_bar(self, positions_per_s: float | None = None) -> None:
        """The bar's games and its text after an iteration (the phase is self-play until the next one)."""
        if self._bar is not None:
            self._bar.n = min(self.games_played, self._bar.total)
            self._progress = self._speed_and_eta(positions_per_s)
            self._set_phase("self-play")

    def _set_phase(self, phase: str) -> None:
        self._phase = phase
        self._render()

    def _render(self) -> None:
        """The bar's text: the run time now, the speed and ETAs of the last iteration, the phase."""
        bar, started = self._bar, self._iteration_started
        if bar is not None:
            now = self.wall_time + (time.perf_counter() - started if started is not None else 0.0)
            bar.set_description_str(f"run {format_duration(now)}, {self._progress} | {self._phase}", refresh=True)

    def _tick(self, stop: threading.Event) -> None:
        while not stop.wait(1.0):
            self._render()

    def close(self) -> None:
        """Release the run directory to other trainers."""
        self._lock.release()

    def _check_finite(self, stats: dict) -> None:
        bad = [key for key in ("loss", "policy_loss", "value_loss") if not math.isfinite(stats.get(key, 0.0))]
        if not bad and all(bool(torch.isfinite(p).all()) for p in self.net.parameters()):
            return
        what = f"the {bad[0]} ({stats[bad[0]]})" if bad else "a weight of the net"
        raise TrainingDiverged(
            f"iteration {self.iteration}: {what} is not finite after training (train.lr {self.config.train.lr:g}, "
            f"lr multiplier {self.lr_multiplier:.3g}); stopped: the run stays at iteration "
            f"{self.committed_iteration}, its last good checkpoint (resume with a lower learning rate: "
            f"--resume --set train.lr=...)")

    def _commit(self, record: dict, start: int, samples: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        """Make the iteration durable, in an order that leaves the run resumable after a kill at
        any instant: its replay-buffer shard, its metrics line, then the checkpoint (the commit
        point: a resume drops shards and records past the checkpoint's iteration), then the
        clean-up (config.yaml, shards the buffer no longer holds). Signals wait until it is done."""
        record["buffer_added"] = len(samples[2])
        if self._resume_note is not None:
            record["resumed"] = self._resume_note
        with deferred_signals():
            fault_point("commit")
            if len(samples[2]):
                with writing(self.shards.path(self.iteration)):
                    self.shards.write(self.iteration, start, *samples,
                                      before_replace=lambda: fault_point("shard.tmp"))
                fault_point("shard")
            with writing(self.run_dir / METRICS):
                append_line(self.run_dir / METRICS, json.dumps(record))
            self.save()
            self._resume_note = None
            with writing(self.run_dir / CONFIG):
                self._write_config()
            obsolete = self.shards.obsolete(self.buffer.total, self.buffer.capacity)
            for iteration in obsolete:
                self.shards.remove([iteration])
                fault_point("prune")

    def _iteration(self) -> None:
        c = self.config
        start = self._iteration_started = time.perf_counter()
        self.iteration += 1
        want = min(c.selfplay.games_per_iteration, c.train.game_batch_num - self.games_played)
        moves_before = self.moves_played
        games = self.self_play(want)
        fault_point("selfplay")
        selfplay_s = time.perf_counter() - start
        moves = self.moves_played - moves_before
        states = np.concatenate([g.states for g in games])
        probs = np.concatenate([g.probs for g in games])
        outcomes = np.concatenate([g.outcomes for g in games])
        samples = augment(states, probs, outcomes)
        buffer_start = self.buffer.total
        self.buffer.add(*samples)
        before = self.games_played
        self.games_played += len(games)
        self.positions += len(states)
        n_updates = self._n_updates(len(games), len(samples[2])) if len(self.buffer) >= c.train.batch_size else 0
        train_start = time.perf_counter()
        train_stats = self.train(n_updates)
        train_s = time.perf_counter() - train_start
        self._check_finite(train_stats)
        fault_point("train")
        record = {"iteration": self.iteration, "games": self.games_played, "positions": self.positions,
                  "buffer": len(self.buffer), "lr_multiplier": self.lr_multiplier,
                  "mean_game_length": float(np.mean([len(g.moves) for g in games])),
                  "first_player_wins": sum(g.winner == 1 for g in games),
                  "second_player_wins": sum(g.winner == 2 for g in games),
                  "draws": sum(g.winner == -1 for g in games),
                  "selfplay_s": selfplay_s, "train_s": train_s,
                  "selfplay_positions_per_s": moves / selfplay_s, **train_stats}
        if self.games_played // c.eval.check_freq > before // c.eval.check_freq:
            eval_start = time.perf_counter()
            record["eval"] = self.evaluate()
            record["eval_s"] = time.perf_counter() - eval_start
        self.wall_time += time.perf_counter() - start
        self._iteration_started = None
        record["wall_time"] = self.wall_time
        self._commit(record, buffer_start, samples)
        speed = record["selfplay_positions_per_s"]
        self._update_bar(speed)
        log.info("iter %d: %d/%d games, loss %.3f, entropy %.3f; %s", self.iteration, self.games_played,
                 self._target.games, train_stats.get("loss", float("nan")), train_stats.get("entropy", float("nan")),
                 self.progress_text(speed))

