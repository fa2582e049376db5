"""One gradient step, and the KL-adaptive update of the classic AlphaZero-Gomoku."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from nets.model import flush_subnormals, subnormals_as_zero

WEIGHT_DECAY = 1e-4  # L2 through Adam's weight decay, as in the classic implementation
KL_EPSILON = 1e-10
LR_MULTIPLIER_MIN = 0.1
LR_MULTIPLIER_MAX = 10.0
LR_MULTIPLIER_STEP = 1.5


@dataclass(frozen=True)
class StepStats:
    loss: float  # value_loss + policy_loss (the L2 term is applied by the optimiser)
    policy_loss: float  # cross-entropy of the net's policy against the search's visit distribution
    value_loss: float  # mean squared error of the value against the game outcome
    entropy: float  # mean entropy of the net's policy


@dataclass(frozen=True)
class UpdateStats:
    """One KL-adaptive update on one minibatch (several epochs)."""

    step: StepStats  # of the last epoch run
    epochs: int  # epochs run (fewer than asked when the KL blew past 4 * kl_targ)
    kl: float
    lr_multiplier: float  # after the adjustment
    explained_var_old: float
    explained_var_new: float


class Trainer:
    """Owns the optimiser of a net, which it moves to ``device`` (default the CPU). Inputs are
    numpy arrays."""

    def __init__(self, net: nn.Module, lr: float, device: torch.device | str = "cpu",
                 weight_decay: float = WEIGHT_DECAY):
        self.device = torch.device(device)
        self.net = net.to(self.device)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=lr, weight_decay=weight_decay)

    def _tensor(self, array: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(np.ascontiguousarray(array, dtype=np.float32)).to(self.device)

    def train_step(self, states: np.ndarray, probs: np.ndarray, outcomes: np.ndarray, lr: float) -> StepStats:
        """states [B,4,H,W], probs [B,H*W] (search visit distributions), outcomes [B] in {-1,0,1}."""
        subnormals_as_zero()
        self.net.train()
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        x, pi, z = self._tensor(states), self._tensor(probs), self._tensor(outcomes)
        log_policy, value = self.net(x)
        value_loss = torch.mean((value - z) ** 2)
        policy_loss = -torch.mean(torch.sum(pi * log_policy, dim=1))
        loss = value_loss + policy_loss
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        flush_subnormals(self.tensors())
        with torch.no_grad():
            entropy = -torch.mean(torch.sum(torch.exp(log_policy) * log_policy, dim=1))
        return StepStats(loss.item(), policy_loss.item(), value_loss.item(), entropy.item())

    def tensors(self):
        """The weights and the optimiser's state (what a step changes)."""
        yield from self.net.state_dict().values()
        for state in self.optimizer.state.values():
            yield from (value for value in state.values() if torch.is_tensor(value))

    @torch.inference_mode()
    def predict(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.net.eval()
        log_policy, value = self.net(self._tensor(states))
        return torch.exp(log_policy).cpu().numpy(), value.cpu().numpy()


def adjust_lr_multiplier(kl: float, multiplier: float, kl_targ: float,
                         max_multiplier: float = LR_MULTIPLIER_MAX) -> float:
    """The classic rule: slow down when the policy moved too far, speed up when it barely moved
    (the multiplier stays below ``max_multiplier`` * 1.5, as the classic's below 10 * 1.5; one
    from a run resumed with a lower ``max_multiplier`` is brought under it)."""
    if kl > 2 * kl_targ and multiplier > LR_MULTIPLIER_MIN:
        multiplier /= LR_MULTIPLIER_STEP
    elif kl < kl_targ / 2 and multiplier < max_multiplier:
        multiplier *= LR_MULTIPLIER_STEP
    return min(multiplier, max_multiplier * LR_MULTIPLIER_STEP)


def kl_divergence(old: np.ndarray, new: np.ndarray) -> float:
    """Mean over the batch of KL(old || new) between policies."""
    return float(np.mean(np.sum(old * (np.log(old + KL_EPSILON) - np.log(new + KL_EPSILON)), axis=1)))


def explained_variance(outcomes: np.ndarray, values: np.ndarray) -> float:
    var = np.var(outcomes)
    return float(1.0 - np.var(outcomes - values) / var) if var > 0 else 0.0


def kl_adaptive_update(trainer: Trainer, states: np.ndarray, probs: np.ndarray, outcomes: np.ndarray,
                       lr: float, lr_multiplier: float, epochs: int, kl_targ: float,
                       max_multiplier: float = LR_MULTIPLIER_MAX) -> UpdateStats:
    """Up to ``epochs`` steps on one minibatch; stop early when KL(old||new) > 4 * kl_targ."""
    old_probs, old_values = trainer.predict(states)
    kl, ran, step = 0.0, 0, None
    for _ in range(epochs):
        step = trainer.train_step(states, probs, outcomes, lr * lr_multiplier)
        ran += 1
        new_probs, new_values = trainer.predict(states)
        kl = kl_divergence(old_probs, new_probs)
        if kl > 4 * kl_targ:
            break
    return UpdateStats(step=step, epochs=ran, kl=kl,
                       lr_multiplier=adjust_lr_multiplier(kl, lr_multiplier, kl_targ, max_multiplier),
                       explained_var_old=explained_variance(outcomes, old_values),
                       explained_var_new=explained_variance(outcomes, new_values))
