"""Self-play and evaluation games on Ray actors: ``selfplay.backend: ray``.

``RayPool`` offers what ``WorkerPool`` does (``publish(weights)``, ``run(tasks, on_progress)``,
``len``, ``close``, ``server``), with the workers as Ray actors, on this machine or on every node of a
cluster. Each actor is a ``Worker`` (gomoku.training.backends.worker) with its own copy of the net (on a
CPU, or on a share of a GPU when the cluster has one): self-play and evaluation games.

How a ``run`` goes:
- ``publish`` puts each version of the weights into the object store once (``ray.put``). Each
  call carries the version and a reference to it; an actor pulls and loads the weights only when
  the version is new.
- The tasks are cut into small calls: self-play into calls of ``GAMES_PER_CALL`` finished games
  (the actor's unfinished games go on in its next call, as in a worker process), evaluation into
  one call per game (a game's seeds depend on its index only, so it does not matter who plays
  it). Every actor has ``CALLS_PER_ACTOR`` calls queued, and the answers are collected as they
  come (``ray.wait``): a fast actor takes more calls, a slow one fewer, and none waits for another.
- A game counts when the answer of its call has reached the driver, and every answer is read
  once. An actor (or its node) that dies loses only the calls it had not answered: they go back
  to the queue and are played again by the other actors, while Ray restarts the dead one
  (``max_restarts``); a log line says so. More than ``MAX_RETRIES`` failures of one call raise
  ``WorkerError``, as does an exception inside a call.

Ray itself is started or joined by gomoku.training.backends.ray_session (``start_ray``).
"""

from __future__ import annotations

import collections
import logging
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from gomoku.training.backends.messages import (Result, SelfPlayTask, Task, Weights, WorkerError, WorkerSpec,
                                               empty_result)
from gomoku.training.backends.ray_session import start_ray
from gomoku.training.backends.worker import Worker
from gomoku.training.config import Config
from gomoku.training.evaluation import EvalTask

try:
    import ray
    import ray.exceptions
except ImportError as error:  # pragma: no cover - depends on the installation
    raise ImportError('selfplay.backend ray needs Ray: pip install -e ".[ray]"') from error

log = logging.getLogger(__name__)

GAMES_PER_CALL = 1  # finished self-play games an actor returns per call
CALLS_PER_ACTOR = 2  # calls queued on each actor, so that it never waits for the driver
MAX_RETRIES = 3  # failures (deaths of its actor) of one call before run() gives up
MAX_RESPAWNS = 3  # new actors started in one slot whose actor Ray could not restart
POLL_S = 5.0  # ray.wait's timeout; waits longer than WAIT_LOG_S without an answer are logged
WAIT_LOG_S = 60.0
PING_AGAIN_S = 0.5  # before asking a restarting actor again whether it is back
START_TIMEOUT_S = 600.0  # for the actors to start (torch imports, a node joining)


@dataclass(frozen=True)
class ActorInfo:
    pid: int
    node_id: str
    device: str


class SelfPlayActor:
    """One Ray actor: a ``Worker`` with its own net (made a Ray actor by ``RayPool``)."""

    def __init__(self, config: Config, actor_id: int):
        import torch

        torch.set_num_threads(1)
        self.device = "cuda" if ray.get_gpu_ids() else "cpu"
        self.worker = Worker(WorkerSpec(config, actor_id, self.device))

    def info(self) -> ActorInfo:
        return ActorInfo(os.getpid(), ray.get_runtime_context().get_node_id(), self.device)

    def run(self, box: list, version: int, task: Task) -> Result:
        """Answer ``task`` with the weights of ``version`` (pulled from ``box[0]`` when new here)."""
        if version != self.worker.version:
            self.worker.load(Weights(version, ray.get(box[0])))
        return self.worker.run(task)


@dataclass
class _Call:
    """A piece of a task: ``games`` self-play games, or one evaluation game."""

    task: int  # the task's index in run()'s list
    piece: Task
    failures: int = 0


@dataclass
class _Slot:
    actor: Any
    calls: set = field(default_factory=set)  # ObjectRefs of the calls it has not answered
    ready: bool = True  # False from its death until Ray has restarted it (its ping answered)
    respawns: int = 0
    dead: bool = False  # given up on: no actor in this slot any more


@dataclass(frozen=True)
class _Published:
    """Weights in the object store: ``box`` holds the reference (a list, so that Ray passes the
    reference to the actors instead of the weights)."""

    box: list
    version: int


class RayPool:
    """``n`` self-play actors on Ray (``n`` 0: one per CPU of the cluster); see the module docstring.

    ``run(tasks)`` takes the ``WorkerPool``'s tasks (``SelfPlayTask``, ``EvalTask``) and returns
    one answer per task in task order (``SelfPlayResult``, ``EvalResult``).
    """

    server = None  # no inference server: every actor evaluates its own leaves

    def __init__(self, config: Config, n: int = 0, address: str = "", run_dir: str | Path | None = None):
        self._config = config
        self._session = start_ray(address, Path(run_dir) if run_dir is not None else None)
        self.restarts = 0  # actor deaths seen
        self._published: _Published | None = None
        self._pings: dict = {}  # ObjectRef of a restarted actor's info() -> its slot
        self._slots: list[_Slot] = []
        try:
            self._start_actors(n)
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ actors
    def _start_actors(self, n: int) -> None:
        resources = ray.cluster_resources()
        cpus, gpus = resources.get("CPU", 1.0), resources.get("GPU", 0.0)
        n = n if n > 0 else max(1, int(cpus))
        device = self._config.selfplay.device
        if device == "cuda" and not gpus:
            raise WorkerError("selfplay.device is cuda, but the Ray cluster has no GPU")
        use_gpu = gpus > 0 and device != "cpu"
        self._options = {"num_cpus": min(1.0, cpus / n), "num_gpus": min(1.0, gpus / n) if use_gpu else 0,
                         "max_restarts": -1, "max_task_retries": 0, "scheduling_strategy": "SPREAD"}
        self._actor_class = ray.remote(SelfPlayActor)
        self._slots = [_Slot(self._new_actor(i)) for i in range(n)]
        try:
            infos = ray.get([slot.actor.info.remote() for slot in self._slots], timeout=START_TIMEOUT_S)
        except ray.exceptions.GetTimeoutError:
            raise WorkerError(f"the {n} self-play actors did not start within {START_TIMEOUT_S:.0f} s "
                              f"(Ray resources: {resources})") from None
        except ray.exceptions.RayError as error:
            raise WorkerError(f"a self-play actor failed to start: {error}") from None
        nodes = len({info.node_id for info in infos})
        log.info("self-play: %d Ray actors on %d node(s), nets on %s", n, nodes,
                 ", ".join(sorted({info.device for info in infos})))

    def _new_actor(self, slot: int):
        return self._actor_class.options(**self._options).remote(self._config, slot)

    def actors(self) -> list:
        """The actor handles, slot by slot (for tests and tools)."""
        return [slot.actor for slot in self._slots]

    def __len__(self) -> int:
        return len(self._slots)

    def wait_for_actors(self, timeout_s: float) -> int:
        """Wait up to ``timeout_s`` for the actors that Ray is restarting; returns how many
        actors are ready. (``run`` does not wait: it plays on the actors it has.)"""
        deadline = time.monotonic() + timeout_s
        while self._pings and time.monotonic() < deadline:
            ready, _ = ray.wait(list(self._pings), num_returns=1, timeout=max(0.0, deadline - time.monotonic()))
            for ref in ready:
                self._revive(ref)
        return sum(slot.ready and not slot.dead for slot in self._slots)

    # ------------------------------------------------------------------ weights
    def publish(self, state: dict) -> None:
        """A new version of the net's weights, put into the object store once for all actors."""
        version = self._published.version + 1 if self._published is not None else 0
        copy = {k: v.detach().cpu().clone() for k, v in state.items()}  # the caller's tensors may change
        self._published = _Published([ray.put(copy)], version)

    # ------------------------------------------------------------------ running tasks
    @staticmethod
    def _split(tasks: list[Task]) -> list[_Call]:
        """The calls of the tasks: self-play in pieces of ``GAMES_PER_CALL`` games (each with a
        seed of its own drawn from the task's), evaluation one game per call."""
        calls: list[_Call] = []
        for t, task in enumerate(tasks):
            if isinstance(task, SelfPlayTask):
                for part, start in enumerate(range(0, task.min_games, GAMES_PER_CALL)):
                    part_seed = int(np.random.SeedSequence([task.seed, part]).generate_state(1)[0])
                    games = min(GAMES_PER_CALL, task.min_games - start)
                    calls.append(_Call(t, SelfPlayTask(games, part_seed)))
            elif isinstance(task, EvalTask):
                calls += [_Call(t, EvalTask((i,), task.opponent, task.seed)) for i in task.indices]
            else:
                raise TypeError(f"not a task: {task!r}")
        return calls

    def run(self, tasks: list[Task], on_progress: Callable[[int], None] | None = None) -> list[Result]:
        """One answer per task, in task order: a ``SelfPlayResult`` with at least the games asked
        for, or an ``EvalResult`` with the task's games."""
        queue = collections.deque(self._split(tasks))
        answers: list[Result] = [empty_result(task) for task in tasks]
        pending: dict = {}  # ObjectRef -> (slot index, _Call)
        last_answer = time.monotonic()
        while queue or pending:
            self._dispatch(queue, pending)
            waitables = [*pending, *self._pings]
            if not waitables:
                raise WorkerError("no self-play actor is left to play the games")
            ready, _ = ray.wait(waitables, num_returns=1, timeout=POLL_S)
            if not ready and time.monotonic() - last_answer > WAIT_LOG_S:
                log.warning("no answer from the self-play actors for %.0f s (%d calls waiting, %d actors "
                            "restarting)", time.monotonic() - last_answer, len(queue) + len(pending), len(self._pings))
                last_answer = time.monotonic()
            for ref in ready:
                if ref in self._pings:
                    self._revive(ref)
                    continue
                index, call = pending.pop(ref)
                self._slots[index].calls.discard(ref)
                last_answer = time.monotonic()
                games = self._receive(ref, index, call, queue, answers)
                if games and on_progress is not None:
                    on_progress(games)
        return answers

    def _dispatch(self, queue: collections.deque, pending: dict) -> None:
        """Queue calls on the actors that have room, round-robin."""
        weights = self._published
        while queue:
            room = [i for i, slot in enumerate(self._slots)
                    if slot.ready and not slot.dead and len(slot.calls) < CALLS_PER_ACTOR]
            if not room:
                return
            index = min(room, key=lambda i: len(self._slots[i].calls))
            call = queue.popleft()
            slot = self._slots[index]
            ref = slot.actor.run.remote(weights.box, weights.version, call.piece)
            slot.calls.add(ref)
            pending[ref] = (index, call)

    def _receive(self, ref, index: int, call: _Call, queue: collections.deque, answers: list) -> int:
        """Take one call's answer into ``answers``; returns the games it finished (0 when the call
        is to be played again)."""
        try:
            value = ray.get(ref)
        except ray.exceptions.RayTaskError as error:  # an exception inside the call: a bug, not a death
            raise WorkerError(f"self-play actor {index} failed: {error}") from None
        except ray.exceptions.RayError as error:  # the actor, its node or the answer was lost
            call.failures += 1
            if call.failures > MAX_RETRIES:
                raise WorkerError(f"a self-play call failed {call.failures} times (last on actor {index}: "
                                  f"{type(error).__name__})") from None
            queue.appendleft(call)
            self._lost(index, error)
            return 0
        answers[call.task] = answers[call.task] + value
        return len(value.games)

    def _lost(self, index: int, error: Exception) -> None:
        slot = self._slots[index]
        if not slot.ready or slot.dead:  # already known: another of its calls
            return
        slot.ready = False
        self.restarts += 1
        log.warning("self-play actor %d died (%s); its unanswered calls are played again on the other actors "
                    "while Ray restarts it", index, type(error).__name__)
        self._pings[slot.actor.info.remote()] = index

    def _revive(self, ref) -> None:
        index = self._pings.pop(ref)
        slot = self._slots[index]
        try:
            info = ray.get(ref)
        except ray.exceptions.ActorUnavailableError:  # still restarting: ask again
            time.sleep(PING_AGAIN_S)
            self._pings[slot.actor.info.remote()] = index
            return
        except ray.exceptions.RayError as error:  # Ray gave up on it: start a new one in its place
            if slot.respawns >= MAX_RESPAWNS:
                slot.dead = True
                log.error("self-play actor %d could not be restarted (%s); going on without it", index,
                          type(error).__name__)
                return
            slot.respawns += 1
            log.warning("self-play actor %d could not be restarted (%s); starting a new one", index,
                        type(error).__name__)
            slot.actor = self._new_actor(index)
            slot.calls.clear()
            self._pings[slot.actor.info.remote()] = index
            return
        slot.ready = True
        log.info("self-play actor %d is back (pid %d)", index, info.pid)

    # ------------------------------------------------------------------ the end
    def close(self) -> None:
        """Stop the actors, then Ray if the pool started it (or disconnect from the cluster)."""
        if ray.is_initialized():
            for slot in self._slots:
                try:
                    ray.kill(slot.actor, no_restart=True)
                except (ray.exceptions.RayError, ValueError):
                    pass
            if self._session.owned:
                ray.shutdown()
        self._slots = []
        self._pings = {}
        self._published = None
        if self._session.temp_dir is not None:
            shutil.rmtree(self._session.temp_dir, ignore_errors=True)
            self._session.temp_dir = None
