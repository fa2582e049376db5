"""Losing a game without playing it out: a player's ``get_action`` raises ``Forfeit`` (an external
engine that was late, said nothing, crashed or answered something that is not a legal move), and
``gomoku.matches.arena.play_game`` scores the game as lost by that player and records why."""

from __future__ import annotations

import enum
from dataclasses import dataclass


STDERR_MARK = "; stderr: "  # where a detail's copy of the engine's last stderr lines begins


class ForfeitReason(enum.Enum):
    """Why a player lost a game by forfeit."""

    LATE = "late"  # answered after its turn time
    SILENT = "silent"  # no answer at all (it was stopped)
    CRASHED = "crashed"  # the process ended or could not start
    ILLEGAL = "illegal"  # an answer that is not a legal move (ERROR, an occupied point, garbage)


class Forfeit(Exception):
    """Raised by a player's ``get_action``: the player loses the game for ``reason``."""

    def __init__(self, reason: ForfeitReason, detail: str):
        super().__init__(f"{reason.value}: {detail}")
        self.reason, self.detail = reason, detail

    @property
    def summary(self) -> str:
        """The detail's first line, without the engine's stderr lines (``STDERR_MARK``)."""
        head = self.detail.split(STDERR_MARK)[0]
        return head.splitlines()[0] if head else ""

    def __reduce__(self):  # so that a worker process can hand it over
        return type(self), (self.reason, self.detail)


@dataclass(frozen=True)
class ForfeitRecord:
    """Who forfeited a game (stones 1 or 2), why, and what happened."""

    stone: int
    reason: ForfeitReason
    detail: str
