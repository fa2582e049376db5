"""Shared pytest set-up. Shared helpers live in ``tests/boards.py`` (positions from stones) and
``tests/fakes.py`` (a deterministic evaluator, a run's metrics lines).

The suite runs in two processes (``-n 2`` in pyproject.toml's addopts): each keeps torch to one
thread, so that the two share a 2-core machine without oversubscribing it (tests that need more
threads set them and restore them)."""

import os

import torch

if os.environ.get("PYTEST_XDIST_WORKER"):
    torch.set_num_threads(1)
