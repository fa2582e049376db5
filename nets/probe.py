"""The probe every model load runs: the net's outputs on a few seeded positions must be those a
sound policy-value net can give.

A sound net gives log-probabilities (each from LOG_PROBABILITY_FLOOR to 0, their exponentials
summing to 1 over the moves) and values in [-1, 1], all finite. Weights that are finite but
broken (a layer scaled by 1e30, a flipped exponent bit in a file without a checksum) can make
them NaN, infinite or out of range. ``output_problem`` says what is wrong with a batch of outputs,
``net_problem`` runs the probe batch through a torch net; the loaders (``nets.checkpoint``,
``nets.onnx_evaluator``), a resumed run and the training run's model files
(``gomoku.training.pipeline``) refuse a net with a problem.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from nets.model import IN_PLANES, NetConfig

PROBE_POSITIONS = 8  # the probe batch: the empty board and this many seeded random positions
PROBE_SEED = 0
# A log-probability below this (a probability under e^-10,000) is out of range: it needs logits on a
# scale no trained net reaches (the shipped nets' lowest on the probe: -63); a net whose first
# layer was scaled by 1e30 gives -1e28, with finite weights and a finite loss of 1e28.
LOG_PROBABILITY_FLOOR = -1e4
LOG_PROBABILITY_SLACK = 1e-3  # a log-probability above this is out of range (float32 noise is ~1e-6)
PROBABILITY_SUM_SLACK = 0.01  # |sum of the probabilities - 1| above this is out of range (float32: ~1e-7)
VALUE_SLACK = 1e-3  # a value beyond 1 + this (in size) is out of range


def random_planes(config: NetConfig | None, batch: int, rng: np.random.Generator,
                  size: tuple[int, int] | None = None) -> np.ndarray:
    """Plausible input planes: random positions with 0..H*W-1 stones, the colours alternating,
    on the config's board or on ``size`` = (width, height) (then ``config`` may be None)."""
    width, height = size or (config.width, config.height)
    points = width * height
    planes = np.zeros((batch, IN_PLANES, points), dtype=np.float32)
    for i in range(batch):
        n_moves = int(rng.integers(0, points))
        moves = rng.permutation(points)[:n_moves]
        to_move_is_first = n_moves % 2 == 0
        first, second = moves[0::2], moves[1::2]
        own, theirs = (first, second) if to_move_is_first else (second, first)
        planes[i, 0, own] = 1.0
        planes[i, 1, theirs] = 1.0
        if n_moves:
            planes[i, 2, moves[-1]] = 1.0
        planes[i, 3] = float(to_move_is_first)
    return planes.reshape(batch, IN_PLANES, height, width)


def probe_planes(width: int, height: int) -> np.ndarray:
    """The probe batch on a ``width`` x ``height`` board: the empty board (first player to move),
    then PROBE_POSITIONS seeded random positions."""
    empty = np.zeros((1, IN_PLANES, height, width), dtype=np.float32)
    empty[0, 3] = 1.0
    rng = np.random.default_rng(PROBE_SEED)
    return np.concatenate([empty, random_planes(None, PROBE_POSITIONS, rng, (width, height))])


def output_problem(log_policy: np.ndarray, value: np.ndarray) -> str | None:
    """What is wrong with a net's outputs (log-probabilities [B, moves], values [B]) as a phrase
    ("not finite (NaN or infinity)", "out of range: ..."); None when nothing is."""
    log_policy = np.asarray(log_policy, dtype=np.float64)
    value = np.asarray(value, dtype=np.float64)
    if not (np.isfinite(log_policy).all() and np.isfinite(value).all()):
        return "not finite (NaN or infinity)"
    if log_policy.size and log_policy.max() > LOG_PROBABILITY_SLACK:
        return f"out of range: a log-probability of {log_policy.max():.3g} (above 0)"
    if log_policy.size and log_policy.min() < LOG_PROBABILITY_FLOOR:
        return (f"out of range: a log-probability of {log_policy.min():.3g} (below {LOG_PROBABILITY_FLOOR:g}: "
                "the logits have exploded)")
    totals = np.exp(log_policy).sum(axis=-1)
    if totals.size and np.abs(totals - 1.0).max() > PROBABILITY_SUM_SLACK:
        worst = totals.flat[np.abs(totals - 1.0).argmax()]
        return f"out of range: move probabilities that sum to {worst:.3g} (not 1)"
    if value.size and np.abs(value).max() > 1.0 + VALUE_SLACK:
        return f"out of range: a value of {value.flat[np.abs(value).argmax()]:.3g} (outside [-1, 1])"
    return None


def net_problem(net: nn.Module) -> str | None:
    """``output_problem`` of a torch net on ``probe_planes`` of its config's board, run in eval
    mode on the net's own device (its training mode is put back after)."""
    config: NetConfig = net.config
    device = next(net.parameters()).device
    was_training = net.training
    net.eval()
    try:
        with torch.inference_mode():
            log_policy, value = net(torch.from_numpy(probe_planes(config.width, config.height)).to(device))
    finally:
        net.train(was_training)
    return output_problem(log_policy.float().cpu().numpy(), value.float().cpu().numpy())
