"""``RunState``: a run's counters after its last committed iteration, checkpointed as one record.

The checkpoint (``checkpoint.pt``) holds the state's fields at its top level, as it always has (so
checkpoints of every earlier version load), next to the weights, the optimiser, the RNG states,
the config and the replay buffer's sample count (see ``TrainPipeline._payload``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from gomoku.training.evaluation import LadderState


@dataclass(frozen=True)
class RunState:
    iteration: int = 0  # iterations completed
    games_played: int = 0  # self-play games
    positions: int = 0  # positions self-play recorded (before augmentation)
    wall_time: float = 0.0  # seconds of the run, over all its sessions
    lr_multiplier: float = 1.0  # the KL-adaptive multiplier of train.lr
    ladder: LadderState = field(default_factory=lambda: LadderState(0))

    @classmethod
    def start(cls, pure_playouts: int) -> "RunState":
        """A new run's: nothing played, the ladder at ``eval.pure_playouts``."""
        return cls(ladder=LadderState(pure_playouts))

    def to_payload(self) -> dict:
        """The checkpoint's entries of the state (plain numbers and a dict: ``weights_only`` loads them)."""
        return {"iteration": self.iteration, "games_played": self.games_played, "positions": self.positions,
                "wall_time": self.wall_time, "lr_multiplier": float(self.lr_multiplier),
                "ladder": {k: float(v) if k != "pure_playouts" else v
                           for k, v in dataclasses.asdict(self.ladder).items()}}

    @classmethod
    def from_payload(cls, payload: dict) -> "RunState":
        return cls(payload["iteration"], payload["games_played"], payload["positions"], payload["wall_time"],
                   payload["lr_multiplier"], LadderState(**payload["ladder"]))
