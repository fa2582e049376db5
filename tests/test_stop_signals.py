"""The stop of a match script (``gomoku.matches.arena.stop_on_signals``): Ctrl-C and SIGTERM raise
in the main thread, and a stop that Python swallowed is sent again until the script catches it."""

from __future__ import annotations

import os
import signal
import time

import pytest

import gomoku.matches.arena as arena
from gomoku.matches.arena import EXIT_TERMINATED, Terminated, stop_on_signals, stop_reason


class SwallowsAStop:
    """An object whose ``__del__`` receives the signal: Python prints the handler's exception and
    ignores it, as it did when numba's compiler freed an object in a pure-MCTS search."""

    def __init__(self, signum: int):
        self.signum = signum

    def __del__(self):
        os.kill(os.getpid(), self.signum)
        for _ in range(10_000):  # the handler runs here, between two bytecodes of __del__
            pass


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the swallowed stop
@pytest.mark.parametrize("signum, stop", [(signal.SIGTERM, Terminated), (signal.SIGINT, KeyboardInterrupt)])
def test_a_swallowed_stop_is_sent_again_until_caught(monkeypatch, signum, stop):
    monkeypatch.setattr(arena, "REDELIVER_SECONDS", 0.05)
    stop_on_signals()
    try:
        with pytest.raises(stop):
            SwallowsAStop(signum)  # freed at once: its stop is ignored...
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:  # ...and comes again
                time.sleep(0.01)
        assert arena._Pending.signum == signum  # not caught yet: it would come again
        assert stop_reason(stop())[1] == (EXIT_TERMINATED if signum == signal.SIGTERM else arena.EXIT_INTERRUPTED)
        assert arena._Pending.signum is None
        time.sleep(0.2)  # caught: no more
    finally:
        arena.stop_caught()


def test_a_stop_caught_at_once_is_sent_once(monkeypatch):
    monkeypatch.setattr(arena, "REDELIVER_SECONDS", 0.05)
    stop_on_signals()
    try:
        with pytest.raises(Terminated):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        stop_reason(Terminated())
        time.sleep(0.3)  # a second delivery would raise here
    finally:
        arena.stop_caught()
