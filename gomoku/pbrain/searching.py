"""The engine's search of one move on a thread of its own, answered by a hard deadline.

The player searches in short rounds (``SearchPlayer.analyse``) until its planned time is up; should
a round still be running at the hard deadline (a machine so loaded that one round takes that
long), the answer is the statistics of the last round done, and the thread is told to stop: it
ends its round in the background (``TimedSearch.thread``), which the engine waits for before the
next command.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Callable

from gomoku.game.board import Board
from gomoku.players.search import TIMED_ROUND_MAX_PLAYOUTS  # the most playouts a search round under a clock
from mcts import SearchResult

log = logging.getLogger(__name__)


@dataclass
class TimedSearch:
    """How a search on a thread ended: its ``result`` (None when not even one round was done by the
    deadline), the ``thread`` still finishing its round (None once it ended), and the ``stop`` that
    tells it to end."""

    result: SearchResult | None
    thread: threading.Thread | None
    stop: threading.Event


def timed_search(player, board: Board, clock: Callable[[], float], soft: float | None, hard: float | None,
                 playouts: int | None = None, stop_event=None) -> TimedSearch:
    """``player.analyse`` of ``board`` on a thread, planned to end at ``soft`` and answered by
    ``hard`` (times on ``clock``; None: no limit), stopped early once ``stop_event`` (anything with
    ``is_set``) is set. An error of the search is raised here."""
    stop = threading.Event()
    rounds: list[SearchResult] = []  # the statistics after each finished round
    outcome: dict = {}

    def should_stop() -> bool:
        return stop.is_set() or (stop_event is not None and stop_event.is_set())

    time_left = None if soft is None else (lambda: soft - clock())

    def run() -> None:
        try:
            outcome["result"] = player.analyse(board.copy(), on_progress=rounds.append, should_stop=should_stop,
                                               time_left=time_left, playouts=playouts)
        except BaseException as error:  # handed to the engine's thread
            outcome["error"] = error

    if soft is not None:
        player.ROUND_PLAYOUTS = TIMED_ROUND_MAX_PLAYOUTS
    thread = threading.Thread(target=run, name="pbrain-search", daemon=True)
    thread.start()
    thread.join(None if hard is None else max(0.0, hard - clock()))
    if thread.is_alive():
        stop.set()
        log.info("the search round was still running at the deadline: answering with %d rounds done", len(rounds))
        return TimedSearch(rounds[-1] if rounds else None, thread, stop)
    if "error" in outcome:
        raise outcome["error"]
    return TimedSearch(outcome["result"], None, stop)
