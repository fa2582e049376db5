"""The training run: self-play -> 8-fold augmentation -> replay buffer -> KL-adaptive updates ->
periodic evaluation -> commit. ``TrainPipeline._iteration`` is that sequence of stages.

A run directory (one trainer at a time: ``train.lock``) holds ``checkpoint.pt``, the run after
its last completed iteration N and the one source of truth (a ``RunState``, the weights, the
optimiser, the RNG states, the run's config, the replay buffer's sample count);
``metrics.jsonl``, one ``IterationRecord`` per completed iteration 1..N; ``buffer/NNNNNN.npz``,
the samples each iteration added to the replay buffer (the newest shards that the buffer holds);
``config.yaml``, a readable copy of the run's config; and the model files ``current.pt`` and
``best.pt`` of the last evaluation (gomoku.training.evaluation).

Who plays the games is an ``Actors`` (gomoku.training.backends.actors: this process, worker processes or
Ray actors). An iteration is committed in this order: shard, metrics line, model files (pending),
checkpoint, the model files put in place (all atomic or flushed, with SIGINT/SIGTERM held off
until done). A resume trusts the
checkpoint and drops any shard or metrics record past its iteration, so a kill at any instant
loses at most the iteration in flight, which is played again (its evaluation and model files
too); see ``_commit`` and ``_load``.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from pathlib import Path

import numpy as np
import torch
import yaml

from gomoku.training.backends.actors import Actors, check_device, draw_seed, make_actors, selfplay_description
from gomoku.training.buffer import SHARD_PATTERN, ReplayBuffer, ShardStore, read_legacy_buffer
from gomoku.training.config import (Config, check_resume_changes, config_changes, config_from_dict, load_config,
                                    resume_config)
from gomoku.training.evaluation import (BEST_MODEL, MODEL_FILES, NO_SCORE, PENDING, EvalReport, evaluate,
                                        pending_model_files, promote_model_files, write_model_files)
from gomoku.training.metrics import METRICS, IterationRecord, TrainStats
from gomoku.training.progress import RunProgress, RunTarget, StopLimit, format_duration
from gomoku.training.rundir import (RunLock, append_line, fault_point, make_run_dir, remove_stale_temps,
                                    repair_metrics, writing)
from gomoku.training.samples import Samples
from gomoku.training.selfplay import SelfPlayGame, SelfPlayResult
from gomoku.training.state import RunState
from gomoku.training.symmetry import augment
from gomoku.training.updates import TrainingDiverged, net_problem_after, train_net, updates_due
from nets import CheckpointError, NetConfig, Trainer, build_net, load_checkpoint, on_cpu, save_checkpoint
from nets.checkpoint import atomic_write, deferred_signals
from nets.probe import net_problem

log = logging.getLogger(__name__)

CHECKPOINT = "checkpoint.pt"
BUFFER_DIR = "buffer"  # one shard per iteration (gomoku.training.buffer.ShardStore)
LEGACY_BUFFER = "buffer.npz"  # the whole buffer in one file, as runs before the shards kept it
CONFIG = "config.yaml"
RUN_FILES = (CHECKPOINT, METRICS, CONFIG, LEGACY_BUFFER, *MODEL_FILES)  # and NAME.pending-N of the models


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
            payload = (load_checkpoint(self.run_dir / CHECKPOINT, training=True)
                       if resume else None)
            if payload is not None:
                config = self._resume_config(payload, config, overrides or [])
            elif config is None:
                raise ValueError("a new run needs a config")
            else:
                self._check_empty()
            remove_stale_temps(self.run_dir, lambda name: name.partition(PENDING)[0] in RUN_FILES)
            remove_stale_temps(self.shards.folder, SHARD_PATTERN.fullmatch)
            self._setup(config)
            check_device(config)  # a resumed run's
            if payload is not None:
                self._load(payload)
                self.resumed_from = self.iteration
            else:
                with deferred_signals():  # iteration 0: a run that can be resumed from the start
                    self.save(self.state, resumable=False)
                    self._write_config(resumable=False)
        except BaseException:
            self._lock.release()
            raise
        self._actors: Actors | None = None  # who plays the games, while running
        self.stop_reason = ""  # why the last ``run`` stopped, e.g. "reached 1,200 games"
        self.stopped_by: StopLimit | None = None  # the limit that stopped it
        self._progress = RunProgress(self._where, self.config.eval.check_freq, self.target())

    def _setup(self, config: Config) -> None:
        self.config = config
        if config.train.torch_threads:
            torch.set_num_threads(config.train.torch_threads)
        b = config.board
        self.net_config = config.net_config()
        torch.manual_seed(config.seed)  # before the net is built: its first weights come from the seed too
        self.net = build_net(self.net_config)
        self.trainer = Trainer(self.net, config.train.lr, self.device)
        self.buffer = ReplayBuffer(config.train.buffer_size, (4, b.height, b.width), b.width * b.height)
        self.rng = np.random.default_rng(config.seed)
        self.state = RunState.start(config.eval.pure_playouts)  # as committed (checkpoint.pt)
        self._in_flight: int | None = None  # the iteration being played, until its commit
        self._stopped_mid_iteration = False

    # The run's state as committed, and the iteration in flight.
    iteration = property(lambda self: self._in_flight or self.state.iteration)
    committed_iteration = property(lambda self: self.state.iteration)
    games_played = property(lambda self: self.state.games_played)
    positions = property(lambda self: self.state.positions)
    wall_time = property(lambda self: self.state.wall_time)
    lr_multiplier = property(lambda self: self.state.lr_multiplier)

    def _where(self) -> tuple[float, int, int]:
        return self.state.wall_time, self.state.games_played, self.state.iteration

    def _check_empty(self) -> None:
        if (self.run_dir / CHECKPOINT).exists():
            raise FileExistsError(f"{self.run_dir} already holds a run; pass --resume to continue it "
                                  f"or choose another --run-dir")
        leftovers = [name for name in (METRICS, LEGACY_BUFFER, *MODEL_FILES) if (self.run_dir / name).exists()]
        leftovers += [path.name for path in pending_model_files(self.run_dir)]
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
    def _payload(self, state: RunState) -> dict:
        return {"net_config": self.net_config.to_dict(),
                "model": self._weights(),
                "optimizer": on_cpu(self.trainer.optimizer.state_dict()),
                **state.to_payload(),
                "rng": self.rng.bit_generator.state,
                "torch_rng": torch.get_rng_state(),
                "config": self.config.to_dict(),
                "buffer_total": int(self.buffer.total)}  # samples the run added to the buffer (shard starts)

    def save(self, state: RunState, resumable: bool = True) -> None:
        """Write the checkpoint of ``state`` and the rest in memory (atomically): the commit point
        of an iteration; ``state`` is then the run's (``resumable``: False for a new run's first)."""
        path = self.run_dir / CHECKPOINT
        with writing(path, resumable):
            save_checkpoint(path, self._payload(state), before_replace=lambda: fault_point("checkpoint.tmp"))
        self.state, self._in_flight = state, None
        fault_point("checkpoint")

    def _write_config(self, config: Config | None = None, resumable: bool = True) -> None:
        """config.yaml, a readable copy of the run's config, when it differs from the file's."""
        data = (config or self.config).to_dict()
        if data != self._config_on_disk:
            text = yaml.safe_dump(data, sort_keys=False).encode()
            with writing(self.run_dir / CONFIG, resumable):
                atomic_write(self.run_dir / CONFIG, lambda handle: handle.write(text))
            self._config_on_disk = data

    def _load(self, payload: dict) -> None:
        path = self.run_dir / CHECKPOINT
        if NetConfig(**payload["net_config"]) != self.net_config:  # (checkpoints before net.head hold no head)
            raise ValueError(f"{path} was trained with net {payload['net_config']}, the config asks for "
                             f"{self.net_config.to_dict()}")
        self.net.load_state_dict(payload["model"])
        problem = net_problem(self.net)
        if problem is not None:  # finite weights that are broken (a layer scaled by 1e30): never trained on
            raise CheckpointError(f"{path}: the net's outputs are {problem} on the probe positions: its weights "
                                  "are broken and the run cannot resume from it (its best.pt is kept)")
        self.trainer.optimizer.load_state_dict(payload["optimizer"])
        try:
            self.state = RunState.from_payload(payload)
        except (KeyError, TypeError) as error:  # a checkpoint written by something else, or cut short in a copy
            raise CheckpointError(f"{path} holds weights and an optimiser but not the run's counters "
                                  f"({type(error).__name__}: {error})") from error
        changes = (self._resume_note or {}).get("config_changes", {})
        if "eval.opponents" in changes and self.state.ladder.best_opponent_score != NO_SCORE:
            # Forgotten under either eval.select_by (a score against other opponents means nothing
            # now); only under "opponents" does it pick best.pt: the ladder's choice stays as it was.
            if self.config.eval.select_by == "opponents":
                log.warning("eval.opponents changed: the best score so far (against the old opponents) is "
                            "forgotten; the next evaluation's model becomes best.pt")
            self.state = dataclasses.replace(
                self.state, ladder=dataclasses.replace(self.state.ladder, best_opponent_score=NO_SCORE))
        self.rng.bit_generator.state = payload["rng"]
        torch.set_rng_state(payload["torch_rng"])
        # What a kill left past the checkpoint belongs to an iteration that is played again.
        later = [i for i in self.shards.iterations() if i > self.iteration]
        if later:
            log.warning("dropping replay-buffer shard(s) of iteration(s) %s, past the checkpoint's iteration %d",
                        ", ".join(map(str, later)), self.iteration)
            self.shards.remove(later)
        repair_metrics(self.run_dir / METRICS, self.iteration)
        promote_model_files(self.run_dir, self.iteration)
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
            self.shards.write(self.iteration, 0, shard)
            log.info("converted %s into %s/%s", legacy, BUFFER_DIR, self.shards.path(self.iteration).name)
        legacy.unlink(missing_ok=True)
        chosen = [self.shards.read(i) for i in self.shards.newest(self.iteration, self.buffer.capacity)]
        if total is None:  # no count in the checkpoint: the shards are all there is
            total = chosen[-1].end if chosen else 0
        self.buffer.restore(chosen, total)

    def _weights(self) -> dict:
        return on_cpu(self.net.state_dict())

    # ------------------------------------------------------------------ the stages
    def self_play(self, games: int) -> SelfPlayResult:
        return self._actors.self_play(games, self.rng, self._progress.games_done)

    def _to_buffer(self, games: tuple[SelfPlayGame, ...]) -> tuple[int, Samples]:
        """The games' positions in all 8 symmetries into the replay buffer: (buffer.total before, samples)."""
        samples = augment(Samples.concatenate(games))
        start = self.buffer.total
        self.buffer.add(samples)
        return start, samples

    def _n_updates(self, games_before: int, games_after: int, samples: int) -> int:
        return updates_due(self.config.train, games_before, games_after, samples)

    def train(self, n_updates: int) -> TrainStats:
        return train_net(self.trainer, self.buffer, self.rng, self.config.train, self.state.lr_multiplier, n_updates,
                         lambda i: self._progress.phase(f"training {i}/{n_updates}"), self._stopped)

    def _stopped(self, what: str, multiplier: float) -> TrainingDiverged:
        return TrainingDiverged(
            f"iteration {self.iteration}: {what} (train.lr {self.config.train.lr:g}, lr multiplier "
            f"{multiplier:.3g}); stopped: the run stays at iteration {self.committed_iteration}, its last good "
            f"checkpoint, with its best.pt (resume with a lower learning rate: --resume --set train.lr=...)")

    def evaluate(self) -> EvalReport:
        """The current net against the pure-MCTS ladder and ``eval.opponents`` (nothing written yet)."""
        return evaluate(self._actors, self.config.eval, self.state.ladder, draw_seed(self.rng), self._progress.phase)

    def _iteration(self) -> None:
        """Self-play, the buffer, training, evaluation when due, commit."""
        c, before = self.config, self.state
        start = self._progress.iteration_started = time.perf_counter()
        self._in_flight = before.iteration + 1
        played = self.self_play(min(c.selfplay.games_per_iteration, c.train.game_batch_num - before.games_played))
        fault_point("selfplay")
        selfplay_s = time.perf_counter() - start
        buffer_start, samples = self._to_buffer(played.games)
        games = before.games_played + len(played.games)
        train_start = time.perf_counter()
        enough = len(self.buffer) >= c.train.batch_size
        stats = self.train(self._n_updates(before.games_played, games, len(samples)) if enough else 0)
        train_s = time.perf_counter() - train_start
        if (problem := net_problem_after(self.net, stats)) is not None:
            raise self._stopped(problem, stats.lr_multiplier)
        fault_point("train")
        if stats.updates:
            self._actors.publish(self._weights())
        report = eval_s = None
        if games // c.eval.check_freq > before.games_played // c.eval.check_freq:
            eval_start = time.perf_counter()
            report = self.evaluate()
            eval_s = time.perf_counter() - eval_start
        after = RunState(self._in_flight, games, before.positions + sum(len(g.states) for g in played.games),
                         before.wall_time + time.perf_counter() - start, stats.lr_multiplier,
                         report.ladder_after if report is not None else before.ladder)
        winners = [g.winner for g in played.games]
        record = IterationRecord(
            after.iteration, games, after.positions, len(self.buffer), stats,
            mean_game_length=float(np.mean([len(g.moves) for g in played.games])),
            first_player_wins=winners.count(1), second_player_wins=winners.count(2), draws=winners.count(-1),
            selfplay_s=selfplay_s, train_s=train_s, selfplay_positions_per_s=played.moves / selfplay_s,
            eval=None if report is None else report.to_dict(), eval_s=eval_s, wall_time=after.wall_time,
            buffer_added=len(samples), resumed=self._resume_note)
        self._commit(after, record, buffer_start, samples, report)
        self._progress.after_iteration(record.selfplay_positions_per_s)
        if report is not None:
            self._log_evaluation(report)
        log.info("iter %d: %d/%d games, loss %.3f, entropy %.3f; %s", after.iteration, games,
                 self._progress.target.games, stats.loss if stats.updates else float("nan"),
                 stats.entropy if stats.updates else float("nan"), self._progress.text(record.selfplay_positions_per_s))

    def _commit(self, state: RunState, record: IterationRecord, start: int, samples: Samples,
                report: EvalReport | None) -> None:
        """Make the iteration durable, in an order that leaves the run resumable after a kill at
        any instant: its replay-buffer shard, its metrics line, the model files of its evaluation
        (pending), then the checkpoint (the commit point: a resume drops shards, records and
        pending model files past the checkpoint's iteration and plays the iteration again, its
        evaluation too), then the model files put in place and the clean-up (config.yaml, shards
        the buffer no longer holds). Signals wait until it is done."""
        with deferred_signals():
            fault_point("commit")
            if len(samples):
                with writing(self.shards.path(state.iteration)):
                    self.shards.write(state.iteration, start, samples, before_replace=lambda: fault_point("shard.tmp"))
                fault_point("shard")
            with writing(self.run_dir / METRICS):
                append_line(self.run_dir / METRICS, record.to_json())
            if report is not None:
                write_model_files(self.run_dir, self.net, self.config.board.n_in_row, report, state.iteration,
                                  state.games_played, writing)
            self.save(state)
            fault_point("models")
            promote_model_files(self.run_dir, state.iteration)
            self._resume_note = None
            with writing(self.run_dir / CONFIG):
                self._write_config()
            obsolete = self.shards.obsolete(self.buffer.total, self.buffer.capacity)
            for iteration in obsolete:
                self.shards.remove([iteration])
                fault_point("prune")

    def _log_evaluation(self, report: EvalReport) -> None:
        best = self.run_dir / BEST_MODEL
        verdict = (f"new best model: {best} written" if report.new_best else
                   f"{best} kept" if best.exists() else "no best.pt yet")
        log.info("evaluation at %d games: %s; %s", self.games_played, report.describe(), verdict)

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
                f"board: {b.width}x{b.height}, {b.n_in_row} in a row; net {c.net.arch}"
                f"{', pooled heads (plays any board size)' if c.net.head == 'pooled' else ''}; "
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
        target = self.target(max_iterations, max_wall_s)
        self._progress = RunProgress(self._where, self.config.eval.check_freq, target)
        self._progress.open(self.progress)
        done = 0
        try:
            self._actors = make_actors(self.config, self.net, self.device, self.rng, self.run_dir)
            while (limit := target.limit_met(self.games_played, self.wall_time, done)) is None:
                self._iteration()
                done += 1
            self.stopped_by, self.stop_reason = limit, target.describe_stop(limit, self.games_played, self.wall_time, done)
        except BaseException:
            if self._in_flight is not None:
                self._stopped_mid_iteration = True
                log.warning("stopped in iteration %d: the run stays at iteration %d (%s); the unfinished "
                            "iteration is played again on resume", self.iteration, self.committed_iteration,
                            self.run_dir / CHECKPOINT)
            raise
        finally:
            self._progress.close()
            if self._actors is not None:
                self._actors.close()
                self._actors = None
            self.close()

    def close(self) -> None:
        """Release the run directory to other trainers."""
        self._lock.release()
