"""Jobs in worker processes: how the processes start, and a pool that runs jobs in them (the
evaluation games of ``gomoku.matches.arena``; the self-play workers of ``gomoku.training.backends.pool``
start the same way).

``forkserver`` where the platform has it: one server process imports torch, onnxruntime and the
search once, and every worker is a fork of it, ready in milliseconds instead of the seconds a
``spawn`` takes to import them again (a restarted worker, each evaluation, each test). It is as
safe as ``spawn`` with threads: the server is a fresh process, not a fork of this one. Elsewhere
(Windows) ``spawn``.

A worker cannot outlive the process that started it (``die_with_parent``): killed with SIGKILL,
that process stops no one, and its workers, forked by the forkserver (not its children, so out of
reach of a parent-death signal), would wait for tasks forever, holding the forkserver and the
resource tracker alive with them.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import queue
import signal
import threading
import time
from multiprocessing.connection import wait
from typing import Callable, Iterable, Iterator

PRELOAD = ["numpy", "torch", "onnxruntime", "mcts", "nets"]  # a missing one is skipped
WORKER_POLL = 0.5  # seconds between checks that the worker processes are still alive
WORKER_STOP = 3.0  # seconds to wait for a terminated worker before killing it
EXIT_ORPHANED = 128 + signal.SIGTERM  # a worker's exit status once its parent is gone


def worker_context():
    """The multiprocessing context that worker processes are started from."""
    if "forkserver" not in mp.get_all_start_methods():
        return mp.get_context("spawn")
    context = mp.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context


def run_in_processes(function: Callable, jobs: list, workers: int, uses_torch: bool) -> Iterator:
    """``function(job)`` for each job, in up to ``workers`` processes, yielded as they finish
    (``function`` must be a module-level function). An exception in a job, or a dead worker,
    is raised here. Ends the workers when the caller stops early (Ctrl-C, an error): no queued
    job runs after that."""
    context = worker_context()
    job_queue, results = context.Queue(), context.Queue()
    job_queue.cancel_join_thread()  # jobs left when the workers are stopped are dropped at exit
    for job in jobs:
        job_queue.put(job)
    processes = [context.Process(target=_worker, args=(function, job_queue, results, uses_torch), daemon=True,
                                 name=f"worker-{n}") for n in range(min(workers, len(jobs)))]
    for _ in processes:
        job_queue.put(None)
    try:
        start_quietly(processes)
        for _ in jobs:
            while True:
                try:
                    kind, payload = results.get(timeout=WORKER_POLL)
                    break
                except queue.Empty:
                    dead = [p for p in processes if p.exitcode not in (None, 0)]
                    if dead:
                        raise RuntimeError(f"worker process {dead[0].name} died (exit code {dead[0].exitcode})")
            if kind == "error":
                raise pickle.loads(payload)
            yield pickle.loads(payload)
    finally:
        started = [process for process in processes if process.pid is not None]  # a start may have failed
        for process in started:
            if process.is_alive():
                process.terminate()
        for process in started:
            process.join(WORKER_STOP)
            if process.is_alive():
                process.kill()
                process.join()
        results.cancel_join_thread()


def die_with_parent() -> None:
    """In a worker process: end it once the process that started it has ended, however that
    ended. A thread waits on the parent's sentinel (the end of a pipe only the parent holds,
    which multiprocessing gives every child, forked by a forkserver or spawned), then sends this
    process SIGTERM, so that its finalizers run (an external engine's process group is killed),
    and ends it at once after ``WORKER_STOP`` seconds if that did not (the main thread in code that
    does not check signals, an exit that waits on a queue no one reads)."""
    parent = mp.parent_process()
    if parent is None:  # not a multiprocessing child
        return

    def watch() -> None:
        wait([parent.sentinel])
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(WORKER_STOP)
        os._exit(EXIT_ORPHANED)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _init_worker(uses_torch: bool) -> None:
    die_with_parent()
    # Ctrl-C is the parent's to handle: it stops the workers itself, with SIGTERM, which ends a
    # worker as an exit does, so that its finalizers run (an external engine's process group is
    # killed by its player's: gomoku.players.external).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    if uses_torch:
        import torch  # az players load a net: one thread per process, or they fight over the cores

        torch.set_num_threads(1)


def _exit_on_sigterm(signum, frame) -> None:
    raise SystemExit(128 + signum)


def _worker(function: Callable, jobs, results, uses_torch: bool) -> None:
    """A worker process: run the jobs until a None, put each outcome on ``results``."""
    _init_worker(uses_torch)
    while (job := jobs.get()) is not None:
        try:
            outcome = ("done", function(job))
        except Exception as error:  # handed to the parent, which stops everything
            outcome = ("error", error)
        results.put(_pickled(*outcome))


def _pickled(kind: str, payload) -> tuple[str, bytes]:
    """``(kind, pickled payload)``. Pickled here, not by ``Queue.put``, whose feeder thread would
    drop one that does not pickle and leave the parent waiting: that becomes an error."""
    try:
        return kind, pickle.dumps(payload)
    except Exception as error:
        what = f"{type(payload).__name__}: {payload}" if kind == "error" else f"a job's result ({error})"
        return "error", pickle.dumps(RuntimeError(f"{what} (does not pickle)"))


def start_quietly(processes: Iterable) -> None:
    """Start ``processes`` with SIGTERM (and, from a forkserver, SIGINT) held until they all have
    started, then raised again: a process whose start was cut short by this one's exit would
    find the semaphores of its queues gone and print a FileNotFoundError traceback. Spawned
    processes (no forkserver) start with SIGINT ignored instead, which they inherit from their
    first instruction, so that a Ctrl-C while they still import prints no traceback either. The
    parent's own handlers are put back after. Main thread only (elsewhere: a plain start)."""
    if threading.current_thread() is not threading.main_thread():
        for process in processes:
            process.start()
        return
    held: list[int] = []

    def hold(signum, frame) -> None:
        held.append(signum)

    forkserver = "forkserver" in mp.get_all_start_methods()
    previous = {signal.SIGTERM: signal.signal(signal.SIGTERM, hold),
                signal.SIGINT: signal.signal(signal.SIGINT, hold if forkserver else signal.SIG_IGN)}
    try:
        for process in processes:
            process.start()
    finally:
        for number, handler in previous.items():
            put_back_handler(number, handler)
        for number in dict.fromkeys(held):
            signal.raise_signal(number)


def put_back_handler(number: int, handler) -> None:
    """Install ``handler`` again for signal ``number``, as ``signal.signal`` or ``getsignal``
    returned it: None (a handler not set from Python, which Python cannot set back) becomes the
    default action instead of a TypeError. Main thread only."""
    signal.signal(number, handler if handler is not None else signal.SIG_DFL)
