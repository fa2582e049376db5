"""Self-play and evaluation games in worker processes on this machine: ``selfplay.backend: pool``.

``WorkerPool`` runs one ``Worker`` per process (started as ``gomoku.matches.processes`` says, one torch
thread each), built once from a ``WorkerSpec``. ``publish(weights)`` numbers a new version of the net's weights; a worker
is sent a version (on its task queue, before its next task that needs it) once. Each worker
evaluates its leaves with its own copy of the net, or (``selfplay.inference: server``) sends them
to one ``InferenceServer`` in the pool's process, which batches the leaves of all workers into
one network call; its self-play then needs no weights.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import signal
from typing import Callable

from gomoku.matches.processes import die_with_parent, start_quietly, worker_context
from gomoku.training.backends.messages import (Failure, Progress, Result, SelfPlayTask, Task, Weights, WorkerError,
                                               WorkerSpec)
from gomoku.training.backends.worker import resolve_inference
from gomoku.training.config import Config

log = logging.getLogger(__name__)

STOP = None  # on a worker's task queue: exit


def _worker_main(spec: WorkerSpec, tasks: mp.Queue, results) -> None:
    """Serve weights and tasks until told to stop (runs in a child process)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops us
    die_with_parent()  # a SIGKILLed trainer stops no one
    import torch

    from gomoku.training.backends.worker import Worker

    torch.set_num_threads(1)
    worker = Worker(spec)
    while (message := tasks.get()) is not STOP:
        try:
            if isinstance(message, Weights):
                worker.load(message)
            else:
                results.put(worker.run(message, on_game=lambda: results.put(Progress(1))))
        except Exception as error:  # report, keep serving
            log.exception("worker %d failed", spec.worker_id)
            results.put(Failure(repr(error)))


class _ResultSender:
    """A worker's end of its own result pipe, with the ``put`` of a queue: a message is written
    by the worker itself (no feeder thread), so what the pool reads is whole and a worker that
    dies can corrupt no one else's results."""

    def __init__(self, connection):
        self.connection = connection

    def put(self, message) -> None:
        self.connection.send(message)


class WorkerPool:
    """``n`` worker processes, each fed through its own task queue and answering on its own pipe.

    With ``server_evaluator`` (a ``nets.NetEvaluator``), the workers' self-play leaves are
    evaluated by an ``InferenceServer`` thread in this process with it: the caller keeps that
    evaluator's net up to date.

    A worker that dies (killed, out of memory) is started again and given its task again: the
    games of an unanswered task count only once its answer comes, so they are played again, not
    lost or counted twice (its unfinished games are dropped). More than ``MAX_RESTARTS`` deaths
    on one task raise ``WorkerError``, as does a task that fails with an exception.
    """

    MAX_RESTARTS = 3  # deaths of the worker of one task before run() gives up
    POLL_S = 5.0  # how often run() looks at the inference server while no worker says anything

    def __init__(self, n: int, config: Config, server_evaluator=None):
        self._ctx = worker_context()
        self._config = config
        self._device, _ = resolve_inference(config.selfplay)
        self.server = None
        if server_evaluator is not None:
            from gomoku.training.backends.inference import InferenceServer

            self.server = InferenceServer(server_evaluator, self._ctx.Queue(), [self._ctx.Queue() for _ in range(n)])
        self.processes: list = [None] * n
        self.tasks: list = [None] * n
        self._results: list = [None] * n
        self._loaded = [-1] * n  # the weights' version each worker was sent
        self._weights: Weights | None = None
        self._next_id = n  # a restarted worker gets a new id: the server's late answers to the dead one go nowhere
        self.restarts = 0
        try:
            for slot in range(n):
                self._start(slot, slot)
        except BaseException:  # the workers already started are not left running
            self.close()
            raise

    def _start(self, slot: int, worker_id: int) -> None:
        remote = None
        if self.server is not None:
            while len(self.server.answers) <= worker_id:
                self.server.answers.append(self._ctx.Queue())
            remote = (self.server.requests, self.server.answers[worker_id])
        spec = WorkerSpec(self._config, worker_id, self._device, remote)
        tasks = self._ctx.Queue()
        reader, writer = self._ctx.Pipe(duplex=False)
        process = self._ctx.Process(target=_worker_main, daemon=True, args=(spec, tasks, _ResultSender(writer)))
        start_quietly([process])  # a kill meanwhile is raised once it has started
        writer.close()  # the worker holds the only writer: its death reads as end-of-file here
        self.processes[slot], self.tasks[slot], self._results[slot] = process, tasks, reader
        self._loaded[slot] = -1

    def _restart(self, slot: int) -> None:
        old = self.processes[slot]
        log.warning("self-play worker %d (pid %s) died (exit code %s); starting it again", slot, old.pid,
                    old.exitcode)
        old.join(timeout=1.0)
        self._results[slot].close()
        self.tasks[slot].cancel_join_thread()  # what was queued for the dead worker is dropped
        self.tasks[slot].close()
        self.restarts += 1
        self._start(slot, self._next_id)
        self._next_id += 1

    def __len__(self) -> int:
        return len(self.processes)

    def publish(self, state: dict) -> None:
        """A new version of the net's weights, for the tasks from now on."""
        version = self._weights.version + 1 if self._weights is not None else 0
        self._weights = Weights(version, {k: v.detach().cpu() for k, v in state.items()})

    def _send(self, slot: int, task: Task) -> None:
        needs = not (self.server is not None and isinstance(task, SelfPlayTask))
        if needs and self._weights is None:
            raise WorkerError("no weights published for the workers' nets (publish them first)")
        if needs and self._loaded[slot] != self._weights.version:
            self.tasks[slot].put(self._weights)
            self._loaded[slot] = self._weights.version
        self.tasks[slot].put(task)

    def run(self, tasks: list[Task], on_progress: Callable[[int], None] | None = None) -> list[Result]:
        """Send task i to worker i; return the workers' answers in worker order."""
        from multiprocessing.connection import wait

        for slot, process in enumerate(self.processes):  # died while idle
            if not process.is_alive():
                self._restart(slot)
        for slot, task in enumerate(tasks):
            self._send(slot, task)
        answers: dict[int, Result] = {}
        progress = [0] * len(tasks)  # games reported by the task's current attempt
        deaths = [0] * len(tasks)
        while len(answers) < len(tasks):
            waiting = [slot for slot in range(len(tasks)) if slot not in answers]
            readers = {self._results[slot]: slot for slot in waiting}
            sentinels = {self.processes[slot].sentinel: slot for slot in waiting}
            ready = wait([*readers, *sentinels], timeout=self.POLL_S)
            if self.server is not None and self.server.error is not None:
                raise WorkerError(f"the inference server failed: {self.server.error!r}")
            for handle in ready:  # messages first: a worker may answer, then die
                if handle in readers:
                    self._receive(readers[handle], answers, progress, on_progress)
            for handle in ready:
                slot = sentinels.get(handle)
                if slot is None or slot in answers:
                    continue
                self._receive(slot, answers, progress, on_progress)  # what it sent before dying
                if slot in answers:
                    continue
                deaths[slot] += 1
                if deaths[slot] > self.MAX_RESTARTS:
                    raise WorkerError(f"self-play worker {slot} died {deaths[slot]} times on one task "
                                      f"(last exit code {self.processes[slot].exitcode})")
                if progress[slot] and on_progress is not None:
                    on_progress(-progress[slot])  # its games are played again
                progress[slot] = 0
                self._restart(slot)
                self._send(slot, tasks[slot])
        return [answers[slot] for slot in range(len(tasks))]

    def _receive(self, slot: int, answers: dict, progress: list[int],
                 on_progress: Callable[[int], None] | None) -> None:
        """Read every whole message waiting on ``slot``'s pipe."""
        reader = self._results[slot]
        try:
            while slot not in answers and reader.poll():
                message = reader.recv()
                if isinstance(message, Progress):
                    progress[slot] += message.games
                    if on_progress is not None:
                        on_progress(message.games)
                elif isinstance(message, Failure):
                    raise WorkerError(f"self-play worker {slot} failed: {message.error}")
                else:
                    answers[slot] = message
        except (EOFError, OSError):  # the worker is gone: its sentinel says so
            pass

    def close(self) -> None:
        started = [slot for slot, process in enumerate(self.processes) if process is not None]
        for slot in started:
            try:
                self.tasks[slot].put(STOP)
            except (ValueError, OSError):
                pass
        for slot in started:
            process = self.processes[slot]
            process.join(timeout=2.0)
            if process.is_alive():
                process.terminate()
                process.join(timeout=2.0)
        for slot in started:
            self._results[slot].close()
        if self.server is not None:
            self.server.close()
