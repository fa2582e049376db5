"""Stops and limits at a run's edges (issue 58, items 5, 8 and 14): a kill in train.py's first
seconds, a kill while worker processes start, worker counts beyond the cores, a Ray address
that is not Ray."""

import http.server
import importlib.util
import os
import signal
import sys
import threading
import types

import numpy as np
import pytest
import torch

from gomoku.matches import processes
from gomoku.matches.games import play_game
from gomoku.players.forfeit import ForfeitReason
from gomoku.players import RandomPlayer, external, make_player
from gomoku.training.backends import actors
from gomoku.training.backends.actors import PoolActors
from gomoku.training.config import ConfigError, load_config
from gomoku.training.backends.messages import SelfPlayResult
from tests.fakes import load_script


class _InterruptedImport(types.ModuleType):
    """A module whose import is cut by a Ctrl-C (or SIGTERM, which train.py makes one)."""

    def __getattr__(self, name):
        raise KeyboardInterrupt


def test_a_kill_inside_an_import_in_train_pys_first_seconds_is_one_line(tmp_path, monkeypatch, capsys):
    """A SIGTERM in the first second of train.py ended in a traceback from inside `import torch`."""
    train = load_script("train")
    monkeypatch.setitem(sys.modules, "gomoku.training.backends.actors", _InterruptedImport("gomoku.training.backends.actors"))
    previous = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        assert train.main(["--config", "configs/smoke.yaml", "--run-dir", str(tmp_path / "run")]) == 130
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    assert capsys.readouterr().err == "\ninterrupted before training started; nothing was written\n"
    assert not (tmp_path / "run").exists()


class _SlowStart:
    """A process whose start is interrupted by a kill of the parent (``signum`` arrives midway)."""

    def __init__(self, signum: int | None, started: list):
        self.signum, self.started = signum, started

    def start(self):
        if self.signum is not None:
            os.kill(os.getpid(), self.signum)
        self.started.append(self)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_kill_while_workers_start_waits_until_they_have_started(signum, monkeypatch):
    """A SIGTERM while the workers started left one half started: its queues' semaphores were gone
    by the time the forkserver forked it, and it printed a FileNotFoundError traceback."""
    def interrupt(number, frame):
        raise KeyboardInterrupt

    monkeypatch.setattr(processes.mp, "get_all_start_methods", lambda: ["fork", "spawn", "forkserver"])
    previous = {number: signal.signal(number, interrupt) for number in (signal.SIGINT, signal.SIGTERM)}
    started = []
    try:
        with pytest.raises(KeyboardInterrupt):
            processes.start_quietly([_SlowStart(signum, started), _SlowStart(None, started)])
        assert len(started) == 2  # both started before the kill was raised
        assert signal.getsignal(signal.SIGTERM) is interrupt and signal.getsignal(signal.SIGINT) is interrupt
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


needs_ray = pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                               reason='Ray is not installed (pip install -e ".[ray]")')


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@needs_ray
def test_a_ray_address_that_is_not_ray_is_a_one_line_error(tmp_path, capsys):
    """An http.server's port as selfplay.ray_address ran past 150 s with Ray's GCS warnings."""
    import ray

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _QuietHandler)
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    address = f"127.0.0.1:{server.server_address[1]}"
    train = load_script("train")
    previous = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        assert train.main(["--config", "configs/smoke.yaml", "--run-dir", str(tmp_path / "run"), "--no-progress",
                           "--set", "selfplay.backend=ray", "--set", f"selfplay.ray_address={address}"]) == 1
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        server.shutdown()
        server.server_close()
    assert capsys.readouterr().err == (
        f"error: selfplay.ray_address '{address}': no Ray cluster to join at {address} (something listens there, "
        "but it does not answer as Ray does (gRPC)); start one with `ray start --head`, or leave "
        "selfplay.ray_address empty for a local one\n")
    assert not ray.is_initialized()


@pytest.mark.parametrize("address, message", [
    ("127.0.0.1:99999", "the port must be from 1 to 65535, got 99999"),
    ("127.0.0.1:0", "the port must be from 1 to 65535, got 0"),
    ("127.0.0.1", "expected HOST:PORT (or auto, or empty for a local instance), got '127.0.0.1'")])
def test_a_ray_port_out_of_range_is_a_config_error_naming_the_key(address, message):
    """Port 99999 was reported as "Connection refused"."""
    with pytest.raises(ConfigError) as error:
        load_config("configs/smoke.yaml", [f"selfplay.ray_address={address}"])
    assert str(error.value) == f"selfplay.ray_address: {message}"


class _CountingPool:
    """A pool of ``n`` workers that records the tasks it is given and answers nothing."""

    server = None

    def __init__(self, n: int):
        self.n, self.tasks = n, []

    def __len__(self):
        return self.n

    def run(self, tasks, on_progress=None):
        self.tasks = tasks
        return [SelfPlayResult() for _ in tasks]


@pytest.mark.parametrize("workers, games, expected", [(64, 12, [1] * 12), (2, 16, [8, 8]), (3, 4, [2, 1, 1]),
                                                      (4, 4, [1, 1, 1, 1])])
def test_self_play_games_are_shared_out_without_a_game_for_every_worker(workers, games, expected):
    """selfplay.workers=64 played 78 games for a 12-game target: every worker played at least one."""
    pool = _CountingPool(workers)
    PoolActors(pool).self_play(games, np.random.default_rng(0))
    assert [task.min_games for task in pool.tasks] == expected


def test_more_workers_than_the_cores_hold_are_capped_and_said(monkeypatch):
    monkeypatch.setattr(actors.os, "cpu_count", lambda: 2)
    assert [actors.resolve_workers(n) for n in (0, 1, 3, 4, 64)] == [2, 1, 3, 4, 4]
    config = load_config("configs/smoke.yaml", ["selfplay.workers=64", "selfplay.runtime=torch",
                                                "selfplay.inference=worker", "selfplay.device=cpu"])
    assert actors.selfplay_description(config, torch.device("cpu")) == (
        "4 worker processes, 4 games at once each, nets on cpu (torch) (selfplay.workers=64 capped at 4, "
        "2 per CPU core (2 here))")


def test_an_engine_that_never_answers_start_costs_a_wait_that_follows_the_clock(tmp_path, monkeypatch):
    """An engine that never answered START cost 60 s a game at a 500 ms clock."""
    assert external.start_wait(500) == external.START_FLOOR_S  # 20 turns of 500 ms: the floor
    assert external.start_wait(2000) == external.START_TURNS * 2.0
    assert external.start_wait(external.MAX_TURN_MS) == external.START_TIMEOUT
    engine = tmp_path / "mute.py"
    engine.write_text("import sys\nfor line in sys.stdin:\n    pass\n")  # reads everything, answers nothing
    player = make_player(f"pbrain:{engine}:500")
    assert player.start_timeout == external.start_wait(500)
    monkeypatch.setattr(external, "START_FLOOR_S", 0.2)  # a quick test: the same rule, a shorter floor
    player = make_player(f"pbrain:{engine}:5")
    try:
        record = play_game(player, RandomPlayer())
    finally:
        player.close()
    assert record.forfeit.reason is ForfeitReason.SILENT and record.winner == 2
    assert record.forfeit.detail == "no answer to START within 0.2 s"
