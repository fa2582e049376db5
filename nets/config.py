"""What a net is, without torch: ``NetConfig``, the board it is sized for and its ``NetSettings``.

``NetSettings`` is what a run's config file sets of its net (its YAML section ``net``:
``gomoku.training.config.NetSection`` extends it with the config's checks; the board is the
run's ``board``); ``NetConfig.of(settings, width, height)`` is the one translation. The bounds
below are the nets' own, checked by ``NetConfig`` and by the run's config alike.
"""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass

ARCHITECTURES = ("conv3", "resnet")
HEADS = ("fc", "pooled")  # fc: sized for width x height; pooled: any board (nets.model's docstring)
MIN_POOLED_SIDE = 5  # the smallest board a pooled net plays (five in a row needs five points)
# Upper bounds of a NetConfig: far above any net trained here (conv3; resnet 64x4), low enough
# that a config (or a model file declaring one) cannot ask for more than ~0.8 GB of weights.
MAX_BOARD_SIDE = 32  # the pbrain protocol's largest board
MAX_CHANNELS = 512
MAX_BLOCKS = 40


@dataclass(frozen=True)
class NetSettings:
    arch: str = "conv3"  # ARCHITECTURES
    channels: int = 64  # resnet only
    blocks: int = 4  # resnet only
    head: str = "fc"  # fc (one board size) or pooled (any size); HEADS


@dataclass(frozen=True)
class _BoardSize:
    width: int = 9
    height: int = 9


@dataclass(frozen=True)
class NetConfig(NetSettings, _BoardSize):
    """A net: ``width``, ``height`` (the board it is sized for; a pooled net's, the board it was
    trained on), then its settings: ``NetConfig(9, 9, "resnet", 64, 4, "pooled")``."""

    def __post_init__(self) -> None:
        for name, choices in (("arch", ARCHITECTURES), ("head", HEADS)):
            if getattr(self, name) not in choices:
                raise ValueError(f"net.{name} must be one of {choices}, got {getattr(self, name)!r}")
        for name, top in (("width", MAX_BOARD_SIDE), ("height", MAX_BOARD_SIDE), ("channels", MAX_CHANNELS),
                          ("blocks", MAX_BLOCKS)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
                raise ValueError(f"net.{name} must be an integer from 1 to {top}, got {value!r}")

    @classmethod
    def of(cls, settings: NetSettings, width: int, height: int) -> NetConfig:
        """The net of ``settings`` sized for a ``width`` x ``height`` board."""
        return cls(width, height, **{f.name: getattr(settings, f.name) for f in dataclasses.fields(NetSettings)})

    def to_dict(self) -> dict:
        return asdict(self)

    def plays(self, width: int, height: int) -> bool:
        """Whether a net of this config plays a ``width`` x ``height`` board: an fc net only its
        own size, a pooled net that and any size from MIN_POOLED_SIDE to MAX_BOARD_SIDE."""
        if (width, height) == (self.width, self.height):
            return True
        return self.head == "pooled" and all(MIN_POOLED_SIDE <= side <= MAX_BOARD_SIDE for side in (width, height))

    def sizes_played(self) -> str:
        """The boards it plays, in words for an error: "a 9x9 board", "boards from 5x5 to 32x32"."""
        if self.head == "fc":
            return f"a {self.width}x{self.height} board"
        return f"boards from {MIN_POOLED_SIDE}x{MIN_POOLED_SIDE} to {MAX_BOARD_SIDE}x{MAX_BOARD_SIDE}"
