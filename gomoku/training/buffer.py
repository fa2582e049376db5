"""A bounded replay buffer of (state, search policy, outcome) samples, saved as .npz."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np


class ReplayBuffer:
    """A ring buffer: the newest ``capacity`` samples; ``sample`` draws a uniform minibatch."""

    def __init__(self, capacity: int, state_shape: tuple[int, ...], n_moves: int):
        self.capacity = capacity
        self.states = np.zeros((capacity, *state_shape), dtype=np.float32)
        self.probs = np.zeros((capacity, n_moves), dtype=np.float32)
        self.outcomes = np.zeros(capacity, dtype=np.float32)
        self.size = 0
        self.next = 0  # slot the next sample goes to

    def __len__(self) -> int:
        return self.size

    def add(self, states: np.ndarray, probs: np.ndarray, outcomes: np.ndarray) -> None:
        for start in range(0, len(states), self.capacity):
            self._add(states[start: start + self.capacity], probs[start: start + self.capacity],
                      outcomes[start: start + self.capacity])

    def _add(self, states: np.ndarray, probs: np.ndarray, outcomes: np.ndarray) -> None:
        n = len(states)
        slots = (self.next + np.arange(n)) % self.capacity
        self.states[slots], self.probs[slots], self.outcomes[slots] = states, probs, outcomes
        self.next = int((self.next + n) % self.capacity)
        self.size = min(self.capacity, self.size + n)

    def sample(self, batch_size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        index = rng.choice(self.size, size=min(batch_size, self.size), replace=False)
        return self.states[index], self.probs[index], self.outcomes[index]

    def save(self, path: str | Path) -> None:
        """Atomically, like the checkpoints."""
        path = Path(path)
        tmp = path.with_name(f".{path.name}.tmp")
        with open(tmp, "wb") as handle:
            np.savez(handle, states=self.states[: self.size], probs=self.probs[: self.size],
                     outcomes=self.outcomes[: self.size], next=self.next)
        os.replace(tmp, path)

    def load(self, path: str | Path) -> None:
        with np.load(path) as data:
            n = min(len(data["states"]), self.capacity)
            if data["states"].shape[1:] != self.states.shape[1:]:
                raise ValueError(f"{path}: buffer states of shape {data['states'].shape[1:]}, "
                                 f"expected {self.states.shape[1:]}")
            self.states[:n], self.probs[:n], self.outcomes[:n] = (data["states"][:n], data["probs"][:n],
                                                                 data["outcomes"][:n])
            self.size = n
            self.next = int(data["next"]) % self.capacity if n == self.capacity else n
