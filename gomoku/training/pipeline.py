"""The training run: self-play -> 8-fold augmentation -> replay buffer -> KL-adaptive updates ->
periodic evaluation against an escalating pure MCTS -> checkpoints.

A run directory holds ``config.yaml`` (the resolved config), ``metrics.jsonl`` (one record per
iteration), ``checkpoint.pt`` (everything needed to resume), ``buffer.npz`` (the replay buffer),
and the model files ``current.pt`` and ``best.pt`` written at each evaluation.
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from gomoku.training.buffer import ReplayBuffer
from gomoku.training.config import Config, save_config
from gomoku.training.selfplay import SelfPlayGame, SelfPlayRunner, WorkerPool, play_eval_games, resolve_inference
from gomoku.training.symmetry import augment, move_permutations
from nets import (NetConfig, NetEvaluator, Trainer, build_net, kl_adaptive_update, load_checkpoint,
                  save_checkpoint, save_model)

log = logging.getLogger(__name__)

CHECKPOINT = "checkpoint.pt"
BUFFER = "buffer.npz"
METRICS = "metrics.jsonl"
CONFIG = "config.yaml"
CURRENT_MODEL = "current.pt"
BEST_MODEL = "best.pt"
BUFFER_SAVE_EVERY = 5  # iterations between buffer saves (the checkpoint is saved every iteration)


@dataclass
class LadderState:
    """The evaluation ladder of the classic pipeline."""

    pure_playouts: int
    best_score: float = 0.0
    best_opponent_score: float = -1.0  # the best mean score against eval.opponents so far


def resolve_workers(requested: int) -> int:
    return requested if requested > 0 else (os.cpu_count() or 1)


class TrainPipeline:
    def __init__(self, config: Config, run_dir: str | Path, device: str | None = None,
                 resume: bool = False, progress: bool = True):
        self.config = config
        self.run_dir = Path(run_dir)
        self.progress = progress
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
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
        self.run_dir.mkdir(parents=True, exist_ok=True)
        if resume:
            self._load()
        elif (self.run_dir / CHECKPOINT).exists():
            raise FileExistsError(f"{self.run_dir} already holds a run; pass --resume to continue it "
                                  f"or choose another --run-dir")
        save_config(config, self.run_dir / CONFIG)
        self._pool: WorkerPool | None = None
        self._serve_net: torch.nn.Module | None = None  # the inference server's net (selfplay.inference)
        self._runner: SelfPlayRunner | None = None
        self.moves_played = 0  # self-play moves made in this session, unfinished games included

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
        }

    def save(self, with_buffer: bool = True) -> None:
        save_checkpoint(self.run_dir / CHECKPOINT, self._payload())
        if with_buffer:
            self.buffer.save(self.run_dir / BUFFER)

    def _load(self) -> None:
        path = self.run_dir / CHECKPOINT
        payload = load_checkpoint(path, map_location=self.device)
        if payload["net_config"] != self.net_config.to_dict():
            raise ValueError(f"{path} was trained with net {payload['net_config']}, the config asks for "
                             f"{self.net_config.to_dict()}")
        self.net.load_state_dict(payload["model"])
        self.trainer.optimizer.load_state_dict(payload["optimizer"])
        self.iteration = payload["iteration"]
        self.games_played = payload["games_played"]
        self.positions = payload["positions"]
        self.wall_time = payload["wall_time"]
        self.lr_multiplier = payload["lr_multiplier"]
        self.ladder = LadderState(**payload["ladder"])
        self.rng.bit_generator.state = payload["rng"]
        torch.set_rng_state(payload["torch_rng"])
        if (self.run_dir / BUFFER).exists():
            self.buffer.load(self.run_dir / BUFFER)
        log.info("resumed %s at iteration %d (%d games, buffer %d)", self.run_dir, self.iteration,
                 self.games_played, len(self.buffer))

    def _weights(self) -> dict:
        return {k: v.detach().cpu() for k, v in self.net.state_dict().items()}

    # ------------------------------------------------------------------ self-play
    def _start_workers(self) -> None:
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

    def self_play(self, games: int) -> list[SelfPlayGame]:
        bar = tqdm(total=games, desc=f"iter {self.iteration} self-play", unit="game", leave=False,
                   disable=not self.progress)
        try:
            if self._pool is None:
                self._runner.search.evaluator.net.eval()
                before = self._runner.moves_played
                games = self._runner.play(games, on_game=lambda g: bar.update(1))
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
                                     on_progress=bar.update)
            self.moves_played += sum(moves for _, moves in answers)
            return [game for games_, _ in answers for game in games_]
        finally:
            bar.close()

    # ------------------------------------------------------------------ training
    def _n_updates(self, games: int, positions: int) -> int:
        """Updates after an iteration: ``updates_per_game`` per game (the classic), or with
        ``sample_reuse`` > 0 enough to train on each new augmented sample that many times."""
        t = self.config.train
        if t.sample_reuse > 0:
            samples = positions * len(move_permutations(self.config.board.width, self.config.board.height))
            return max(1, round(t.sample_reuse * samples / (t.batch_size * t.epochs)))
        return round(t.updates_per_game * games)

    def train(self, n_updates: int) -> dict:
        t = self.config.train
        stats = []
        for _ in tqdm(range(n_updates), desc=f"iter {self.iteration} train", unit="update", leave=False,
                      disable=not self.progress or n_updates == 0):
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
        bar = tqdm(total=games, desc=f"eval vs {opponent}", unit="game", leave=False, disable=not self.progress)
        try:
            if self._pool is None:
                evaluator = NetEvaluator(self.net, self.device)
                results = play_eval_games(evaluator, self.config, list(range(games)), opponent, seed,
                                          on_game=lambda: bar.update(1))
            else:
                n = len(self._pool)
                weights = self._weights()
                chunks = [list(range(i, games, n)) for i in range(n)]
                tasks = [("eval", weights, chunk, opponent, seed) for chunk in chunks if chunk]
                results = [r for answer in self._pool.run(tasks, on_progress=bar.update) for r in answer]
        finally:
            bar.close()
        wins = sum(r == 1 for _, r in results)
        draws = sum(r == 0 for _, r in results)
        losses = sum(r == -1 for _, r in results)
        log.info("eval vs %s: +%d =%d -%d", opponent, wins, draws, losses)
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
        save_model(self.run_dir / CURRENT_MODEL, self.net, iteration=self.iteration, games=self.games_played)
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
            save_model(self.run_dir / BEST_MODEL, self.net, iteration=self.iteration, games=self.games_played,
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
        return record

    # ------------------------------------------------------------------ the loop
    def run(self, max_iterations: int | None = None) -> None:
        c = self.config
        self._start_workers()
        self._completed = self.iteration
        done = 0
        try:
            while self.games_played < c.train.game_batch_num and (max_iterations is None or done < max_iterations):
                self._iteration()
                done += 1
            self.save()
        except KeyboardInterrupt:
            log.warning("interrupted: saving %s", self.run_dir / CHECKPOINT)
            self.iteration = self._completed  # the unfinished iteration is played again on resume
            self.save()
            raise
        finally:
            if self._pool is not None:
                self._pool.close()
                self._pool = None

    def _iteration(self) -> None:
        c = self.config
        start = time.perf_counter()
        self.iteration += 1
        want = min(c.selfplay.games_per_iteration, c.train.game_batch_num - self.games_played)
        moves_before = self.moves_played
        games = self.self_play(want)
        selfplay_s = time.perf_counter() - start
        moves = self.moves_played - moves_before
        states = np.concatenate([g.states for g in games])
        probs = np.concatenate([g.probs for g in games])
        outcomes = np.concatenate([g.outcomes for g in games])
        self.buffer.add(*augment(states, probs, outcomes))
        before = self.games_played
        self.games_played += len(games)
        self.positions += len(states)
        n_updates = self._n_updates(len(games), len(states)) if len(self.buffer) >= c.train.batch_size else 0
        train_start = time.perf_counter()
        train_stats = self.train(n_updates)
        train_s = time.perf_counter() - train_start
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
        record["wall_time"] = self.wall_time
        with open(self.run_dir / METRICS, "a") as handle:
            handle.write(json.dumps(record) + "\n")
        self._completed = self.iteration
        self.save(with_buffer="eval" in record or self.iteration % BUFFER_SAVE_EVERY == 0)
        log.info("iter %d: %d games, %.1f positions/s in self-play, loss %.3f, entropy %.3f", self.iteration,
                 self.games_played, record["selfplay_positions_per_s"], train_stats.get("loss", float("nan")),
                 train_stats.get("entropy", float("nan")))

