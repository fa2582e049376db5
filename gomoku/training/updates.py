"""The training stage of an iteration: how many KL-adaptive updates it earns, the updates on
minibatches of the replay buffer (``train_net``: a ``TrainStats``), and the rule that stops a run
whose training has blown up (``loss_problem``, ``net_problem_after``).

A loss (value MSE, at most 4, plus the policy's cross-entropy, ln(81) = 4.4 for a uniform policy
on 9x9, ln(1024) = 6.9 on 32x32) that is not finite or above MAX_LOSS after any update, or weights
or probe outputs (nets.probe) that are not finite and in range after an iteration's training:
nothing of the iteration is committed, the checkpoint, best.pt and current.pt stay those of the
last good iteration (``TrainingDiverged``, raised by the pipeline with the run's numbers).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
import torch

from gomoku.training.buffer import ReplayBuffer
from gomoku.training.config import TrainSection
from gomoku.training.metrics import TrainStats
from nets import Trainer, kl_adaptive_update
from nets.probe import net_problem

FLOAT_SLACK = 1e-9  # so that 0.29 updates a game over 100 games count 29 (0.29 * 100 is 28.999999999999996)
MAX_LOSS = 100.0


class TrainingDiverged(RuntimeError):
    """The loss stopped being finite or exploded (MAX_LOSS), or the weights or the net's outputs
    did (nets.probe); the run stays at its last good iteration."""


def updates_due(t: TrainSection, games_before: int, games_after: int, samples: int) -> int:
    """Updates after an iteration that took the run from ``games_before`` to ``games_after``
    games and added ``samples`` (augmented) to the buffer: ``updates_per_game`` per game (the
    classic; a fraction carries over, so 0.4 a game is 2 updates every 5 games), or with
    ``sample_reuse`` > 0 enough to train on each new sample that many times."""
    if t.sample_reuse > 0:
        return max(1, round(t.sample_reuse * samples / (t.batch_size * t.epochs)))
    due = lambda games: math.floor(t.updates_per_game * games + FLOAT_SLACK)  # noqa: E731
    return due(games_after) - due(games_before)


def loss_problem(loss: float, update: int, n_updates: int) -> str | None:
    """What is wrong with an update's loss (not finite, or above MAX_LOSS), or None."""
    if not math.isfinite(loss):
        return f"the loss is not finite ({loss}) at update {update}/{n_updates}"
    if loss > MAX_LOSS:
        return f"the loss exploded to {loss:.3g} at update {update}/{n_updates}, above the limit of {MAX_LOSS:g}"
    return None


def train_net(trainer: Trainer, buffer: ReplayBuffer, rng: np.random.Generator, t: TrainSection,
              multiplier: float, n_updates: int, on_update: Callable[[int], None],
              stopped: Callable[[str, float], Exception]) -> TrainStats:
    """``n_updates`` KL-adaptive updates from the learning-rate ``multiplier``, each on a minibatch
    drawn from ``buffer`` with ``rng``; ``on_update(i)`` before update i (from 1). An update whose
    loss has a ``loss_problem`` raises ``stopped(problem, multiplier before it)``."""
    updates = []
    for i in range(1, n_updates + 1):
        on_update(i)
        batch = buffer.sample(t.batch_size, rng)
        update = kl_adaptive_update(trainer, batch.states, batch.probs, batch.outcomes, lr=t.lr,
                                    lr_multiplier=multiplier, epochs=t.epochs, kl_targ=t.kl_targ,
                                    max_multiplier=t.lr_multiplier_max)
        if (problem := loss_problem(update.step.loss, i, n_updates)) is not None:
            raise stopped(problem, multiplier)
        multiplier = update.lr_multiplier
        updates.append(update)
    if not updates:
        return TrainStats(multiplier)
    last = updates[-1]
    return TrainStats(multiplier, len(updates), loss=float(np.mean([u.step.loss for u in updates])),
                      policy_loss=float(np.mean([u.step.policy_loss for u in updates])),
                      value_loss=float(np.mean([u.step.value_loss for u in updates])),
                      entropy=float(np.mean([u.step.entropy for u in updates])),
                      kl=float(np.mean([u.kl for u in updates])),
                      epochs=float(np.mean([u.epochs for u in updates])),
                      explained_var_old=last.explained_var_old, explained_var_new=last.explained_var_new)


def net_problem_after(net: torch.nn.Module, stats: TrainStats) -> str | None:
    """What is wrong after an iteration's training, or None: a loss that is not finite, a weight
    that is not finite, or the net's outputs on the probe positions (``nets.probe``)."""
    bad = [key for key in TrainStats.LOSSES if not math.isfinite(getattr(stats, key) or 0.0)]
    if bad:
        return f"the {bad[0]} ({getattr(stats, bad[0])}) is not finite after training"
    if not all(bool(torch.isfinite(p).all()) for p in net.parameters()):
        return "a weight of the net is not finite after training"
    problem = net_problem(net)
    if problem is not None:
        return f"the net's outputs are {problem} on the probe positions after training"
    return None
