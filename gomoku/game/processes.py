"""How worker processes start (self-play workers, evaluation games).

``forkserver`` where the platform has it: one server process imports torch, onnxruntime and the
search once, and every worker is a fork of it, ready in milliseconds instead of the seconds a
``spawn`` takes to import them again (a restarted worker, each evaluation, each test). It is as
safe as ``spawn`` with threads: the server is a fresh process, not a fork of this one. Elsewhere
(Windows) ``spawn``.
"""

from __future__ import annotations

import multiprocessing as mp

PRELOAD = ["numpy", "torch", "onnxruntime", "mcts", "nets"]  # a missing one is skipped


def worker_context():
    """The multiprocessing context that worker processes are started from."""
    if "forkserver" not in mp.get_all_start_methods():
        return mp.get_context("spawn")
    context = mp.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context
