"""A move's time and the search tree's memory, from the manager's INFO values (``PbrainEngine``).

Time (all limits from the manager are in milliseconds): ``INFO timeout_turn`` / ``timeout_match``
/ ``time_left`` set each move's budget: ``min(turn, time_left / (moves left +
MOVES_LEFT_RESERVE))`` (``time_limit``), of which the search plans to use all but a margin for the
answer (``think_seconds``); the engine answers by ``answer_seconds`` whatever the search is doing.

Memory: the search tree is bounded by ``DEFAULT_TREE_BYTES``, or less under ``INFO max_memory``
(what is left of it once the player is loaded, ``TREE_SHARE`` of that: ``tree_bytes``); a playout
cap is lowered to fit. The evaluation cache gets at most ``CACHE_SHARE`` of the tree's budget.
"""

from __future__ import annotations

import math
import os

from gomoku.players.search import DEFAULT_TREE_BYTES  # the search tree's memory without INFO max_memory

MARGIN_SHARE = 0.1  # the search plans to end this share of the budget before it...
MIN_MARGIN = 0.05  # ...and at least this many seconds before (the reply, pipes, the manager)
HARD_SHARE = 0.05  # answer this share of the budget before it whatever the search is doing...
HARD_MIN = 0.03  # ...and at least this many seconds before
MIN_THINK = 0.01  # never plan fewer seconds than this (one search round still runs)
FAST_TURN = 0.1  # seconds a move for INFO timeout_turn 0 ("play as fast as possible")
MOVES_LEFT_MIN = 5  # time_left is shared over the moves left (half the empty points, in these
MOVES_LEFT_MAX = 25  # bounds) plus this reserve
MOVES_LEFT_RESERVE = 3
MAX_LIMIT = 86_400.0  # seconds: a larger limit (INFO timeout_turn 10**20) is read as this
# INFO numbers (ms, bytes) are stored within +-this: a larger one (10**400) overflows float maths.
MAX_INFO_NUMBER = 2**53
TREE_SHARE = 0.8  # of the memory INFO max_memory leaves once the player is loaded, for the search tree
MIN_TREE_BYTES = 8 * 2**20  # never less (a max_memory below what the process already takes)
CACHE_SHARE = 0.25  # the evaluation cache may take this share of the tree's budget on top of it


def time_limit(timeout_turn: int | None, timeout_match: int | None, time_left: int | None,
               empties: int) -> float | None:
    """The seconds a move with ``empties`` empty points may take by the manager's clock (the INFO
    values in ms, None: not sent), or None without a limit."""
    limits = []
    if timeout_turn is not None and timeout_turn >= 0:
        limits.append(timeout_turn / 1000 if timeout_turn > 0 else FAST_TURN)
    if time_left is not None and timeout_match != 0:  # timeout_match 0: no match limit
        moves_left = min(MOVES_LEFT_MAX, max(MOVES_LEFT_MIN, math.ceil(empties / 2)))
        limits.append(max(time_left, 0) / 1000 / (moves_left + MOVES_LEFT_RESERVE))
    return min(min(limits), MAX_LIMIT) if limits else None


def think_seconds(limit: float | None) -> float | None:
    """Seconds the search plans to spend on a move of ``limit`` seconds (None: no limit)."""
    return None if limit is None else max(MIN_THINK, limit - max(MIN_MARGIN, MARGIN_SHARE * limit))


def answer_seconds(limit: float | None) -> float | None:
    """Seconds after which the engine answers whatever the search is doing (None: no limit)."""
    return None if limit is None else max(MIN_THINK, limit - max(HARD_MIN, HARD_SHARE * limit))


def tree_bytes(max_memory: int | None, base_memory: int) -> int:
    """The search tree's memory budget: the default, lowered by INFO max_memory (None or 0: no
    limit; a larger one does not raise it: a tree past the machine's memory fails to allocate),
    of which the process took ``base_memory`` once the player was loaded."""
    if not max_memory or max_memory <= 0:
        return DEFAULT_TREE_BYTES
    return max(MIN_TREE_BYTES, min(DEFAULT_TREE_BYTES, int(TREE_SHARE * (max_memory - base_memory))))


def resident_bytes() -> int:
    """The process's resident memory now (its peak where /proc is missing)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
