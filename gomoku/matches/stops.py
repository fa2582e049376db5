"""Ctrl-C and a plain ``kill`` as one stop for the scripts that run long (train, ablate,
evaluate, clock_match, play --web): ``stop_on_signals`` makes SIGINT raise KeyboardInterrupt and
SIGTERM ``Terminated`` (a KeyboardInterrupt too) in the main thread, where the script catches it
and keeps what it has finished.

A stop is never lost. Python drops an exception raised while an object's ``__del__`` runs: it
prints "Exception ignored" and goes on as if no signal had come (numba's compiler frees llvmlite
objects so, in the middle of a search: a match went on after its SIGTERM). ``sys.unraisablehook``
sees every such drop; when it is one of these stops, a thread of this module sends the signal
again, and the stop is raised once more, this time in the code that runs after the ``__del__``.
"""

from __future__ import annotations

import os
import queue
import signal
import sys
import threading

EXIT_INTERRUPTED = 128 + signal.SIGINT  # 130, as a shell reports a Ctrl-C
EXIT_TERMINATED = 128 + signal.SIGTERM  # 143, as a shell reports a plain kill
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Terminated(KeyboardInterrupt):
    """SIGTERM, turned into an interrupt: a script keeps its finished work as on Ctrl-C."""


def _raise_stop(signum: int, frame) -> None:
    raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


class _Resender:
    """The signals whose stop Python dropped, and the thread that sends them again: a thread, so
    that the signal arrives after the ``__del__`` and the hook have returned."""

    dropped: queue.SimpleQueue = queue.SimpleQueue()  # put() is safe in a hook, a __del__, a handler
    thread: threading.Thread | None = None
    next_hook = None  # the unraisable hook before ours (it prints the drop, as Python does)

    @classmethod
    def run(cls) -> None:
        while True:
            os.kill(os.getpid(), cls.dropped.get())


def _dropped(unraisable) -> None:
    """``sys.unraisablehook``: print the drop as before; if it was a stop this module raised,
    have it sent again."""
    _Resender.next_hook(unraisable)
    stop = unraisable.exc_value
    if isinstance(stop, KeyboardInterrupt):
        signum = signal.SIGTERM if isinstance(stop, Terminated) else signal.SIGINT
        if signal.getsignal(signum) is _raise_stop:
            _Resender.dropped.put(signum)


def stop_on_signals(signums: tuple[int, ...] = STOP_SIGNALS) -> dict[int, object]:
    """Make each of ``signums`` (SIGINT, SIGTERM) raise its stop in the main thread, sent again if
    Python drops it (a shell starts background jobs with SIGINT ignored: this replaces that).
    Returns the handlers it replaced, for ``processes.put_back_handler``."""
    if sys.unraisablehook is not _dropped:
        _Resender.next_hook = sys.unraisablehook
        sys.unraisablehook = _dropped
    if _Resender.thread is None or not _Resender.thread.is_alive():
        _Resender.thread = threading.Thread(target=_Resender.run, name="stop-resender", daemon=True)
        _Resender.thread.start()
    return {signum: signal.signal(signum, _raise_stop) for signum in signums}
