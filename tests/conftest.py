"""Shared pytest set-up. Shared helpers live in ``tests/boards.py`` (positions from stones) and
``tests/fakes.py`` (a deterministic evaluator, a run's metrics lines).

The suite runs in two processes (``-n 2`` in pyproject.toml's addopts): each keeps torch to one
thread, so that the two share a 2-core machine without oversubscribing it (tests that need more
threads set them and restore them)."""

import os
import signal

import pytest
import torch

if os.environ.get("PYTEST_XDIST_WORKER"):
    torch.set_num_threads(1)

HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def pytest_configure(config):
    """Compile the numba kernels (the tactics' and the search's) into numba's cache once, in the
    first process, before the test processes start: each would compile them (tens of seconds of
    both cores on a fresh clone); from the cache a process loads them in under a second."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    import gomoku.tactics.compiled as compiled

    compiled.warm_up()  # every kernel signature the players use (test_compiled_warm_up.py holds it so)


@pytest.fixture(autouse=True)
def _signal_handlers_as_they_were():
    """Each test starts with the SIGINT and SIGTERM handlers the one before it found: a script's
    ``main()`` run in this process, or ``ray.init``, installs its own, and a test that counts on
    Ctrl-C raising KeyboardInterrupt must not depend on which tests ran before it in its worker."""
    handlers = {number: signal.getsignal(number) for number in HANDLED_SIGNALS}
    yield
    for number, handler in handlers.items():
        if handler is not None and signal.getsignal(number) is not handler:
            signal.signal(number, handler)
