"""The network as an evaluator for the search (see ``mcts.evaluators.Evaluator``)."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from nets.model import subnormals_as_zero

CPU_CHUNK = 16


def legal_priors(policy: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """The policy on the legal moves, renormalised (uniform when the net gives them no mass).
    A NaN or infinity on a legal move (broken weights) is a ValueError: renormalised, it made
    every prior NaN and the search played an occupied point."""
    priors = np.where(legal, policy, 0.0)  # not policy * legal: NaN * 0 is NaN
    if not np.isfinite(priors).all():
        raise ValueError("the net's policy is not finite (NaN or infinity) on a legal move: its weights are broken")
    totals = priors.sum(axis=1, keepdims=True)
    if totals.all():  # the usual case: some mass on a legal move in every row
        return priors / totals
    uniform = legal / np.maximum(legal.sum(axis=1, keepdims=True), 1)
    return np.where(totals > 0, priors / np.where(totals > 0, totals, 1.0), uniform)


class NetEvaluator:
    """Priors over legal moves and a value for the player to move, from a policy-value net.

    Runs under ``torch.inference_mode()`` in float32; illegal moves get prior 0 and the rest are
    renormalised (if the net puts all its mass on illegal moves, the legal ones share it evenly).
    """

    def __init__(self, net: nn.Module, device: torch.device | str = "cpu", chunk: int | None = None):
        self.device = torch.device(device)
        self.net = net.to(self.device).eval()
        # On a CPU the small net runs fastest per position in batches of about 16 (measured by
        # scripts/bench.py); larger batches are split. On a GPU the whole batch goes at once.
        self.chunk = chunk if chunk is not None else (CPU_CHUNK if self.device.type == "cpu" else None)

    def evaluate_batch(self, planes: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        policy, values = self.policy_value(planes)
        return legal_priors(policy, legal), values

    @torch.inference_mode()
    def policy_value(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The net's move probabilities (all moves, unmasked) and float64 values for ``planes``."""
        subnormals_as_zero()
        x = torch.from_numpy(np.ascontiguousarray(planes, dtype=np.float32)).to(self.device)
        if self.chunk and len(x) > self.chunk:
            outputs = [self.net(part) for part in torch.split(x, self.chunk)]
            log_policy = torch.cat([o[0] for o in outputs])
            value = torch.cat([o[1] for o in outputs])
        else:
            log_policy, value = self.net(x)
        return torch.exp(log_policy).cpu().numpy(), value.float().cpu().numpy().astype(np.float64)

    def load_state_dict(self, state_dict: dict) -> None:
        self.net.load_state_dict(state_dict)
        self.net.eval()
