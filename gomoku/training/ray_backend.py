"""Self-play and evaluation games on Ray actors: ``selfplay.backend: ray``.

``RayPool`` offers the pipeline what ``WorkerPool`` does (``run(tasks, on_progress)``, ``len``,
``close``, ``server``), with the workers as Ray actors, on this machine or on every node of a
cluster. Each actor runs the batched ``SelfPlayRunner`` with its own copy of the net (on a CPU, or
on a share of a GPU when the cluster has one) and also plays evaluation games.

How a ``run`` goes:
- The weights are put into the object store once per version (``ray.put``; the same weights sent
  again, as an evaluation's to the self-play of the next iteration, are not put again). Each call carries the version
  and a reference to it; an actor pulls and loads the weights only when the version is new.
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

Ray itself: with ``selfplay.ray_address`` empty, the pool starts a local Ray instance and stops
it in ``close``; its temp files and logs go to ``RUN_DIR/ray`` (a short temp folder, deleted at
``close``, when that path is too long for Ray's sockets), no dashboard, no usage statistics, and
nothing in the home folder (token authentication with a token held in this process's environment,
unless ``RAY_AUTH_MODE`` says otherwise). With an address (``auto`` for the cluster started on
this machine with ``ray start``), the pool joins that cluster and only disconnects at the end. A
process already connected to Ray (``ray.init`` before the pool) is used as it is. The caller's
SIGTERM handler survives ``ray.init``.
"""

from __future__ import annotations

import collections
import logging
import os
import secrets
import shutil
import signal
import socket
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from gomoku.training.config import config_from_dict
from gomoku.training.selfplay import SelfPlayGame, SelfPlayRunner, WorkerError, WorkerNet, play_eval_games

try:
    import ray
    import ray.exceptions
except ImportError as error:  # pragma: no cover - depends on the installation
    raise ImportError('selfplay.backend ray needs Ray: pip install -e ".[ray]"') from error

log = logging.getLogger(__name__)

RAY_DIR = "ray"  # Ray's temp files and logs in the run directory (of its last start)
# A Unix socket path has at most 107 bytes on Linux; Ray puts its sockets at
# TEMP/session_<date>_<time>_<micros>_<pid>/sockets/plasma_store.
SOCKET_PATH_LIMIT = 107
SESSION_SOCKET_SUFFIX = len("/session_2026-01-01_00-00-00_000000_4194304/sockets/plasma_store")
RAY_AUTH_VARIABLES = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")
RAY_AUTH_LOGGER = "ray._private.authentication.authentication_token_setup"
LOCAL_OBJECT_STORE_BYTES = 256 * 2**20  # weights and games are small; Ray's default is 30% of memory
GAMES_PER_CALL = 1  # finished self-play games an actor returns per call
CALLS_PER_ACTOR = 2  # calls queued on each actor, so that it never waits for the driver
MAX_RETRIES = 3  # failures (deaths of its actor) of one call before run() gives up
MAX_RESPAWNS = 3  # new actors started in one slot whose actor Ray could not restart
POLL_S = 5.0  # ray.wait's timeout; waits longer than WAIT_LOG_S without an answer are logged
WAIT_LOG_S = 60.0
PING_AGAIN_S = 0.5  # before asking a restarting actor again whether it is back
START_TIMEOUT_S = 600.0  # for the actors to start (torch imports, a node joining)
CONNECT_TIMEOUT_S = 5.0  # to open a TCP connection to a cluster's address before ray.init (which retries for minutes)


@dataclass
class SelfPlayChunk:
    """What one self-play call returns: the games that finished and the moves made in all games."""

    games: list[SelfPlayGame]
    moves: int


@dataclass
class ActorInfo:
    pid: int
    node_id: str
    device: str


class SelfPlayActor:
    """One Ray actor: a ``SelfPlayRunner`` with its own net (made a Ray actor by ``RayPool``)."""

    def __init__(self, config_dict: dict, actor_id: int):
        import torch

        torch.set_num_threads(1)
        self.config = config_from_dict(config_dict)
        self.device = "cuda" if ray.get_gpu_ids() else "cpu"
        self.net = WorkerNet(self.config, self.device)
        s = self.config.selfplay
        self.runner = SelfPlayRunner(self.net.evaluator, self.config.board, self.config.search, s.parallel_games,
                                     np.random.default_rng(actor_id))
        self.version = -1  # of the weights loaded

    def info(self) -> ActorInfo:
        return ActorInfo(os.getpid(), ray.get_runtime_context().get_node_id(), self.device)

    def _evaluator(self, box: list, version: int):
        if version != self.version:
            self.net.load(ray.get(box[0]))
            self.version = version
        return self.net.evaluator

    def play(self, box: list, version: int, min_games: int, seed: int) -> SelfPlayChunk:
        self.runner.search.evaluator = self._evaluator(box, version)
        self.runner.set_rng(np.random.default_rng(seed))
        before = self.runner.moves_played
        games = self.runner.play(min_games)
        return SelfPlayChunk(games, self.runner.moves_played - before)

    def evaluate(self, box: list, version: int, indices: list[int], opponent: str, seed: int) -> list:
        return play_eval_games(self._evaluator(box, version), self.config, indices, opponent, seed)


@dataclass
class _Call:
    """A piece of a task: ``games`` self-play games, or the evaluation game ``index``."""

    task: int
    kind: str  # "selfplay" or "eval"
    weights: int  # the task's weights, an index into run()'s published list
    seed: int
    games: int = 0
    index: int = -1
    opponent: str = ""
    failures: int = 0


@dataclass
class _Slot:
    actor: Any
    calls: set = field(default_factory=set)  # ObjectRefs of the calls it has not answered
    ready: bool = True  # False from its death until Ray has restarted it (its ping answered)
    respawns: int = 0
    dead: bool = False  # given up on: no actor in this slot any more


@dataclass
class _Weights:
    """Weights in the object store: ``box`` holds the reference (a list, so that Ray passes the
    reference to the actors instead of the weights); ``copy`` is what they were when put."""

    box: list
    version: int
    copy: dict


def _short_enough(folder: Path) -> bool:
    return len(str(folder).encode()) + SESSION_SOCKET_SUFFIX <= SOCKET_PATH_LIMIT


@dataclass
class _RaySession:
    """What the pool did to get Ray going, so that ``close`` undoes exactly that."""

    owned: bool  # ray.init was ours: ray.shutdown at close (stops a local instance, leaves a cluster)
    temp_dir: Path | None = None  # a temp folder of ours, deleted at close


def start_ray(address: str, run_dir: Path | None) -> _RaySession:
    """Connect this process to Ray: the instance it is already connected to, the cluster at
    ``address``, or (``address`` empty) a new local instance whose files stay in ``run_dir/ray``.

    ``ray.init`` sets a SIGTERM handler of its own (exit at once); the caller's is put back, so
    that `kill` still stops a training run the way it stops one on the process pool."""
    if ray.is_initialized():
        log.info("self-play on the Ray instance this process is connected to")
        return _RaySession(owned=False)
    main_thread = threading.current_thread() is threading.main_thread()
    sigterm = signal.getsignal(signal.SIGTERM) if main_thread else None
    try:
        return _connect(address, run_dir)
    finally:
        if main_thread and sigterm is not None:
            signal.signal(signal.SIGTERM, sigterm)


def _no_cluster(address: str, why: str) -> WorkerError:
    return WorkerError(f"selfplay.ray_address {address!r}: no Ray cluster to join at {address} ({why}); start one "
                       f"with `ray start --head`, or leave selfplay.ray_address empty for a local one")


def check_reachable(address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """WorkerError unless something listens at ``address`` (HOST:PORT, or ray://HOST:PORT): ray.init
    would retry a closed port for minutes. ``auto`` (the cluster of this machine) is Ray's to find."""
    if address == "auto":
        return
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit():
        raise WorkerError(f"selfplay.ray_address {address!r}: expected HOST:PORT (or auto)")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except (OSError, OverflowError) as error:
        raise _no_cluster(address, getattr(error, "strerror", None) or str(error) or type(error).__name__) from None


def _connect(address: str, run_dir: Path | None) -> _RaySession:
    quiet = {"log_to_driver": False, "logging_level": logging.WARNING}
    if address:
        check_reachable(address)
        try:
            ray.init(address=address, **quiet)
        except ConnectionError as error:
            raise _no_cluster(address, str(error)) from None
        log.info("self-play on the Ray cluster at %s: %s", address, ray.cluster_resources())
        return _RaySession(owned=True)
    session = _RaySession(owned=True)
    folder = (Path(run_dir) / RAY_DIR).resolve() if run_dir is not None else None
    if folder is not None and _short_enough(folder):
        shutil.rmtree(folder, ignore_errors=True)  # the files of the run's previous Ray start
        folder.mkdir(parents=True)
    else:
        folder = session.temp_dir = Path(tempfile.mkdtemp(prefix="gzray-"))
    if not any(name in os.environ for name in RAY_AUTH_VARIABLES):
        # Ray turns token authentication on for a new local instance and writes its token to
        # ~/.ray/auth_token unless one is given: give one, held in this process's environment.
        os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    auth_log = logging.getLogger(RAY_AUTH_LOGGER)  # it warns that it turned token authentication on
    level = auth_log.level
    auth_log.setLevel(logging.ERROR)
    try:
        ray.init(num_cpus=os.cpu_count() or 1, include_dashboard=False, _temp_dir=str(folder),
                 object_store_memory=LOCAL_OBJECT_STORE_BYTES, **quiet)
    except BaseException:  # Ctrl-C during the start included: leave nothing running
        if ray.is_initialized():
            ray.shutdown()
        if session.temp_dir is not None:
            shutil.rmtree(session.temp_dir, ignore_errors=True)
        raise
    finally:
        auth_log.setLevel(level)
    log.info("self-play on a local Ray instance (%d CPUs; its files in %s)", os.cpu_count() or 1, folder)
    return session


class RayPool:
    """``n`` self-play actors on Ray (``n`` 0: one per CPU of the cluster); see the module docstring.

    ``run(tasks)`` takes the ``WorkerPool``'s tasks, ``("selfplay", weights, min_games, seed)`` and
    ``("eval", weights, game_indices, opponent, seed)``, and returns one answer per task in task
    order: ``(games, moves)`` with at least ``min_games`` games, or ``[(index, result), ...]``.
    """

    server = None  # no inference server: every actor evaluates its own leaves

    def __init__(self, config_dict: dict, n: int = 0, address: str = "", run_dir: str | Path | None = None):
        self._config = config_dict
        self._session = start_ray(address, Path(run_dir) if run_dir is not None else None)
        self.restarts = 0  # actor deaths seen
        self._published: _Weights | None = None
        self._versions = 0
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
        device = config_from_dict(self._config).selfplay.device
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
    def _publish(self, weights: dict) -> _Weights:
        import torch

        old = self._published
        if old is not None and old.copy.keys() == weights.keys() and all(
                torch.equal(old.copy[k], v) for k, v in weights.items()):
            return old
        self._versions += 1
        copy = {k: v.detach().cpu().clone() for k, v in weights.items()}  # the caller's tensors may change
        self._published = _Weights([ray.put(copy)], self._versions, copy)
        return self._published

    # ------------------------------------------------------------------ running tasks
    @staticmethod
    def _split(tasks: list[tuple]) -> list[_Call]:
        """The calls of the tasks; a call's ``weights`` is its task's index."""
        calls: list[_Call] = []
        for t, task in enumerate(tasks):
            if task[0] == "selfplay":
                _, _, min_games, seed = task
                for part, start in enumerate(range(0, min_games, GAMES_PER_CALL)):
                    part_seed = int(np.random.SeedSequence([seed, part]).generate_state(1)[0])
                    calls.append(_Call(t, "selfplay", t, part_seed, games=min(GAMES_PER_CALL, min_games - start)))
            elif task[0] == "eval":
                _, _, indices, opponent, seed = task
                calls += [_Call(t, "eval", t, seed, index=i, opponent=opponent) for i in indices]
            else:
                raise ValueError(f"unknown task {task[0]!r}")
        return calls

    def run(self, tasks: list[tuple], on_progress: Callable[[int], None] | None = None) -> list:
        published = [self._publish(task[1]) for task in tasks]
        queue = collections.deque(self._split(tasks))
        answers: list = [([], 0) if task[0] == "selfplay" else [] for task in tasks]
        pending: dict = {}  # ObjectRef -> (slot index, _Call)
        last_answer = time.monotonic()
        while queue or pending:
            self._dispatch(queue, pending, published)
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

    def _dispatch(self, queue: collections.deque, pending: dict, published: list[_Weights]) -> None:
        """Queue calls on the actors that have room, round-robin."""
        while queue:
            room = [i for i, slot in enumerate(self._slots)
                    if slot.ready and not slot.dead and len(slot.calls) < CALLS_PER_ACTOR]
            if not room:
                return
            index = min(room, key=lambda i: len(self._slots[i].calls))
            call = queue.popleft()
            slot = self._slots[index]
            weights = published[call.weights]
            if call.kind == "selfplay":
                ref = slot.actor.play.remote(weights.box, weights.version, call.games, call.seed)
            else:
                ref = slot.actor.evaluate.remote(weights.box, weights.version, [call.index], call.opponent, call.seed)
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
        answer = answers[call.task]
        if call.kind == "selfplay":
            answer[0].extend(value.games)
            answers[call.task] = (answer[0], answer[1] + value.moves)
            return len(value.games)
        answer.extend(value)
        answer.sort()
        return len(value)

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
