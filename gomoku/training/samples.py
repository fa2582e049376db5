"""``Samples``: training positions, as they go from self-play through the symmetries into the
replay buffer, its shards on disk and the minibatches.

N positions are three float32 arrays of length N: ``states`` [N, C, H, W], the input planes of
the position (``gomoku.game.board.Board.current_state``); ``probs`` [N, H*W], the search's
policy there (the training target of the policy head); ``outcomes`` [N], the game's result for
the player to move there, +1, -1 or 0 (the value head's target).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np


@dataclass(frozen=True, eq=False)
class Samples:
    states: np.ndarray  # float32 [N, C, H, W]
    probs: np.ndarray  # float32 [N, H*W]
    outcomes: np.ndarray  # float32 [N]

    def __len__(self) -> int:
        return len(self.outcomes)

    def __getitem__(self, index) -> Samples:
        """The samples at ``index`` (a slice or an array of indices)."""
        return Samples(self.states[index], self.probs[index], self.outcomes[index])

    @staticmethod
    def concatenate(parts: Iterable[Samples]) -> Samples:
        parts = list(parts)
        return Samples(np.concatenate([p.states for p in parts]), np.concatenate([p.probs for p in parts]),
                   np.concatenate([p.outcomes for p in parts]))
