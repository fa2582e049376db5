"""The replay buffer, and its copy on disk: one shard per iteration.

``ReplayBuffer`` is a ring of the newest ``capacity`` samples; ``sample`` draws a uniform
minibatch. ``total`` counts every sample ever added in the run: sample ``g`` of the run sits in
slot ``g % capacity``, so a buffer rebuilt from the shards is the buffer the run had.

``ShardStore`` keeps, in a run's ``buffer/`` folder, ``NNNNNN.npz``: the samples iteration N
added to the buffer (already augmented), with ``start``, the run-wide index of its first sample.
A shard is written once, atomically, when its iteration completes, so a kill loses at most the
iteration in flight; shards whose samples the buffer no longer holds are deleted.
"""

from __future__ import annotations

import logging
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable

import numpy as np

from gomoku.training.samples import Samples
from nets.checkpoint import atomic_write

log = logging.getLogger(__name__)

SHARD_NAME = "{iteration:06d}.npz"
SHARD_PATTERN = re.compile(r"^(\d{6,})\.npz$")


class BufferFileError(ValueError):
    """A replay-buffer file that cannot be read, named with what to do about it."""


@dataclass(frozen=True, eq=False)
class Shard(Samples):
    """The samples one iteration added to the replay buffer."""

    iteration: int
    start: int  # run-wide index of the first sample (ReplayBuffer.total before they were added)

    @property
    def size(self) -> int:
        return len(self)

    @property
    def end(self) -> int:
        return self.start + self.size

    @classmethod
    def of(cls, samples: Samples, iteration: int, start: int) -> "Shard":
        """The shard of ``samples``, as float32 (a shard's file holds binary planes as uint8)."""
        return cls(samples.states.astype(np.float32), samples.probs.astype(np.float32),
                   samples.outcomes.astype(np.float32), iteration=iteration, start=start)


@dataclass(frozen=True)
class ShardInfo:
    iteration: int
    start: int
    size: int

    @property
    def end(self) -> int:
        return self.start + self.size


class ReplayBuffer:
    """A ring buffer: the newest ``capacity`` samples; ``sample`` draws a uniform minibatch."""

    def __init__(self, capacity: int, state_shape: tuple[int, ...], n_moves: int):
        self.capacity = capacity
        self.states = np.zeros((capacity, *state_shape), dtype=np.float32)
        self.probs = np.zeros((capacity, n_moves), dtype=np.float32)
        self.outcomes = np.zeros(capacity, dtype=np.float32)
        self.size = 0
        self.next = 0  # slot the next sample goes to
        self.total = 0  # samples ever added in the run (restored from the checkpoint on resume)

    def __len__(self) -> int:
        return self.size

    def add(self, samples: Samples) -> None:
        for start in range(0, len(samples), self.capacity):
            self._add(samples[start: start + self.capacity])
        self.total += len(samples)

    def _add(self, samples: Samples) -> None:
        n = len(samples)
        slots = (self.next + np.arange(n)) % self.capacity
        self.states[slots], self.probs[slots], self.outcomes[slots] = samples.states, samples.probs, samples.outcomes
        self.next = int((self.next + n) % self.capacity)
        self.size = min(self.capacity, self.size + n)

    def sample(self, batch_size: int, rng: np.random.Generator) -> Samples:
        index = rng.choice(self.size, size=min(batch_size, self.size), replace=False)
        return Samples(self.states[index], self.probs[index], self.outcomes[index])

    def restore(self, shards: list[Shard], total: int) -> None:
        """Refill from ``shards`` (oldest first): the newest ``capacity`` of their samples, in the
        slots the run had them in when the shards are the run's last samples without a gap (a
        smaller capacity keeps the newest); ``total`` is the run's count of samples."""
        self.size = self.next = 0
        contiguous = all(a.end == b.start for a, b in zip(shards, shards[1:])) and (
            not shards or shards[-1].end == total)
        if not contiguous:
            log.warning("replay buffer: the shards %s do not cover samples up to %d without a gap; "
                        "loading what there is", [s.iteration for s in shards], total)
        if shards and contiguous and (shards[0].start == 0 or total - shards[0].start >= self.capacity):
            self.next = shards[0].start % self.capacity
        for shard in shards:
            self.add(shard)
        self.total = total


class ShardStore:
    """The ``buffer/`` folder of a run: one shard per iteration, ``SHARD_NAME``."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)

    def path(self, iteration: int) -> Path:
        return self.folder / SHARD_NAME.format(iteration=iteration)

    def iterations(self) -> list[int]:
        if not self.folder.is_dir():
            return []
        found = (SHARD_PATTERN.match(p.name) for p in self.folder.iterdir())
        return sorted(int(m.group(1)) for m in found if m)

    def write(self, iteration: int, start: int, samples: Samples,
              before_replace: Callable[[], None] | None = None) -> None:
        """Atomically. Binary planes (all of the standard ones) are stored as uint8."""
        packed = samples.states.astype(np.uint8)
        if not np.array_equal(packed, samples.states):
            packed = samples.states.astype(np.float32)

        def write(handle: BinaryIO) -> None:
            np.savez(handle, iteration=np.int64(iteration), start=np.int64(start), states=packed,
                     probs=samples.probs.astype(np.float32), outcomes=samples.outcomes.astype(np.float32))

        atomic_write(self.path(iteration), write, before_replace)

    def _open(self, iteration: int, arrays: tuple[str, ...]) -> dict[str, np.ndarray]:
        path = self.path(iteration)
        try:
            with np.load(path) as data:
                return {name: data[name] for name in arrays}
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as error:
            raise BufferFileError(f"{path} is not a readable replay-buffer shard ({type(error).__name__}: "
                                  f"{error}); delete it to resume without its positions") from None

    def info(self, iteration: int) -> ShardInfo:
        data = self._open(iteration, ("start", "outcomes"))
        return ShardInfo(iteration, int(data["start"]), len(data["outcomes"]))

    def read(self, iteration: int) -> Shard:
        data = self._open(iteration, ("start", "states", "probs", "outcomes"))
        return Shard.of(Samples(data["states"], data["probs"], data["outcomes"]), iteration, int(data["start"]))

    def remove(self, iterations: list[int]) -> None:
        for iteration in iterations:
            self.path(iteration).unlink(missing_ok=True)

    def newest(self, upto: int, capacity: int) -> list[int]:
        """The newest shards up to iteration ``upto`` that hold the newest ``capacity`` samples,
        oldest first."""
        chosen, held = [], 0
        for iteration in reversed([i for i in self.iterations() if i <= upto]):
            if held >= capacity:
                break
            chosen.append(iteration)
            held += self.info(iteration).size
        return chosen[::-1]

    def obsolete(self, total: int, capacity: int) -> list[int]:
        """Shards none of whose samples a buffer of ``capacity`` holds after ``total`` samples."""
        return [i for i in self.iterations() if self.info(i).end <= total - capacity]


def read_legacy_buffer(path: str | Path, state_shape: tuple[int, ...]) -> Shard:
    """The single ``buffer.npz`` of runs from before the shards (a ring saved with its ``next``
    slot), as one shard in the order the samples were added."""
    try:
        with np.load(path) as data:
            states, probs, outcomes, next_slot = (data["states"], data["probs"], data["outcomes"],
                                                  int(data["next"]))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as error:
        raise BufferFileError(f"{path} is not a readable replay buffer ({type(error).__name__}: {error}); "
                              f"delete it to resume with an empty replay buffer") from None
    if states.shape[1:] != tuple(state_shape):
        raise BufferFileError(f"{path}: buffer states of shape {states.shape[1:]}, expected {tuple(state_shape)}")
    samples = Samples(states, probs, outcomes)
    if 0 < next_slot < len(samples):  # a full ring: the oldest sample is in slot `next`
        samples = samples[np.roll(np.arange(len(samples)), -next_slot)]
    return Shard.of(samples, 0, 0)
