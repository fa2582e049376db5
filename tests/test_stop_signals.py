"""The scripts' stop (``gomoku.matches.stops.stop_on_signals``): Ctrl-C and SIGTERM raise in the
main thread, and a stop that Python dropped in an object's ``__del__`` is raised again."""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest

from gomoku.matches import stops
from gomoku.matches.arena import stop_reason
from gomoku.matches.processes import put_back_handler
from gomoku.matches.stops import EXIT_INTERRUPTED, EXIT_TERMINATED, Terminated, stop_on_signals

CASES = [(signal.SIGTERM, Terminated, EXIT_TERMINATED), (signal.SIGINT, KeyboardInterrupt, EXIT_INTERRUPTED)]


class DropsAStop:
    """An object whose ``__del__`` receives the signal: Python prints the handler's exception and
    drops it, as it did when numba's compiler freed an object in a pure-MCTS search."""

    def __init__(self, signum: int):
        self.signum = signum

    def __del__(self):
        os.kill(os.getpid(), self.signum)
        for _ in range(10_000):  # the handler runs here, between two bytecodes of __del__
            pass


@pytest.fixture
def handlers():
    """The test's handlers and unraisable hook are put back after it."""
    hook = sys.unraisablehook
    previous = {signum: signal.getsignal(signum) for signum in stops.STOP_SIGNALS}
    yield
    for signum, handler in previous.items():
        put_back_handler(signum, handler)
    sys.unraisablehook = hook


def recorded_drops() -> list[type]:
    """The types of the exceptions Python drops from now on (the hook before still runs)."""
    dropped = []
    hook = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: (dropped.append(type(unraisable.exc_value)), hook(unraisable))
    return dropped


def wait_for_a_stop(seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.01)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the dropped stop
@pytest.mark.parametrize("signum, stop, status", CASES)
def test_a_dropped_stop_is_raised_again(handlers, signum, stop, status):
    stop_on_signals()
    dropped = recorded_drops()
    with pytest.raises(stop) as raised:
        DropsAStop(signum)  # freed at once: its stop is dropped...
        wait_for_a_stop(10)  # ...and comes again
    assert dropped == [stop]  # it was dropped once, then raised here
    assert stop_reason(raised.value)[1] == status


@pytest.mark.parametrize("signum, stop, status", CASES)
def test_a_stop_is_raised_once(handlers, signum, stop, status):
    stop_on_signals()
    with pytest.raises(stop) as raised:
        os.kill(os.getpid(), signum)
        wait_for_a_stop(5)
    assert stop_reason(raised.value)[1] == status
    wait_for_a_stop(0.3)  # a second delivery would raise here


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_dropped_stop_of_another_handler_is_not_sent_again(handlers):
    """Only this module's stops are sent again: once SIGTERM has another handler, a dropped
    ``Terminated`` is just printed, as Python does."""
    stop_on_signals()
    received = []
    signal.signal(signal.SIGTERM, lambda signum, frame: received.append(signum))
    dropped = recorded_drops()

    class DropsATerminated:
        def __del__(self):
            raise Terminated()

    DropsATerminated()
    wait_for_a_stop(0.3)
    assert dropped == [Terminated] and received == []


def test_stop_on_signals_gives_the_handlers_it_replaced(handlers):
    mine = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    sigint = signal.getsignal(signal.SIGINT)
    assert stop_on_signals((signal.SIGTERM,)) == {signal.SIGTERM: signal.SIG_DFL}
    assert signal.getsignal(signal.SIGINT) is sigint  # not asked for: left as it was
    stop_on_signals()
    assert sys.unraisablehook is stops._dropped  # installed once, not wrapped in itself
    signal.signal(signal.SIGTERM, mine)
