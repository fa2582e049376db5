"""The Ray self-play backend (selfplay.backend: ray) on local Ray instances, and the renamed
selfplay.runtime key. The Ray tests skip when Ray is not installed (pip install -e ".[ray]")."""

import importlib.util
import os
import shutil
import signal
import tempfile
from pathlib import Path

import pytest
import torch
import yaml

from gomoku.training.config import Config, ConfigError, config_from_dict, load_config
from tests.fakes import metrics_records

ROOT = Path(__file__).resolve().parents[1]
needs_ray = pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                               reason='Ray is not installed (pip install -e ".[ray]")')
# One test process runs this file's tests one after the other: two local Ray instances at once on a
# 2-core machine starve each other's health checks.
pytestmark = pytest.mark.xdist_group("ray")


def test_old_configs_name_the_runtime_selfplay_backend(tmp_path):
    """Runs from before the Ray backend stored the net runtime as selfplay.backend."""
    stored = Config().to_dict()  # a config of that time: backend auto, no runtime, no ray_address
    stored["selfplay"] = {k: v for k, v in stored["selfplay"].items() if k not in ("runtime", "ray_address")}
    stored["selfplay"]["backend"] = "auto"
    path = tmp_path / "old.yaml"
    path.write_text(yaml.safe_dump(stored))
    selfplay = load_config(path).selfplay
    assert (selfplay.runtime, selfplay.backend) == ("auto", "pool")
    selfplay = config_from_dict(stored).selfplay  # as stored in an old checkpoint
    assert (selfplay.runtime, selfplay.backend) == ("auto", "pool")
    assert stored["selfplay"]["backend"] == "auto"  # the dict given is left as it was
    selfplay = load_config(None, ["selfplay.backend=torch"]).selfplay  # the old override still works
    assert (selfplay.runtime, selfplay.backend) == ("torch", "pool")
    selfplay = load_config(None, ["selfplay.backend=ray", "selfplay.runtime=onnx"]).selfplay
    assert (selfplay.runtime, selfplay.backend, selfplay.ray_address) == ("onnx", "ray", "")
    with pytest.raises(ConfigError, match="selfplay.backend: must be pool or ray"):
        load_config(None, ["selfplay.backend=mpi"])
    with pytest.raises(ConfigError, match="selfplay.runtime: must be auto, torch or onnx"):
        load_config(None, ["selfplay.runtime=tensorrt"])


@needs_ray
def test_smoke_run_on_ray_is_interrupted_and_resumed_across_backends(monkeypatch):
    """pool -> resumed on Ray (a local instance the run starts: two actors play self-play and the
    evaluation games), Ctrl-C in its second iteration -> resumed on the pool. Ray writes nothing
    to the home folder, keeps its files in the run directory and is stopped at the end."""
    import ray

    from gomoku.training.pipeline import TrainPipeline

    assert not ray.is_initialized()
    run = Path(tempfile.mkdtemp(prefix="gz"))  # short: Ray's socket paths under RUN/ray must fit
    home = run / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    try:
        config = load_config(ROOT / "configs/smoke.yaml", ["train.game_batch_num=4", "search.vct=false"])
        TrainPipeline(config, run / "r", device="cpu", progress=False).run()  # iteration 1 on the pool
        on_ray = TrainPipeline(None, run / "r", device="cpu", resume=True, progress=False, overrides=[
            "selfplay.backend=ray", "selfplay.workers=2", "selfplay.runtime=torch", "train.game_batch_num=12"])
        calls = []
        real = on_ray.self_play
        sigterm = signal.getsignal(signal.SIGTERM)

        def interrupted(games):
            calls.append(games)
            if len(calls) == 2:
                assert ray.is_initialized() and len(on_ray._actors.pool) == 2
                assert signal.getsignal(signal.SIGTERM) is sigterm  # ray.init's own handler is undone
                raise KeyboardInterrupt
            return real(games)

        monkeypatch.setattr(on_ray, "self_play", interrupted)
        with pytest.raises(KeyboardInterrupt):
            on_ray.run()
        assert not ray.is_initialized()  # the pool stopped the Ray instance it started
        saved = torch.load(run / "r/checkpoint.pt", weights_only=True)
        assert saved["iteration"] == 2 and saved["config"]["selfplay"]["backend"] == "ray"
        record = metrics_records(run / "r")[-1]
        assert record["games"] == saved["games_played"] >= 8
        assert record["eval"]["wins"] + record["eval"]["draws"] + record["eval"]["losses"] == 2  # on the actors
        assert list((run / "r/ray").glob("session_*/logs"))  # Ray's files stay in the run directory
        assert not list(home.iterdir())  # no ~/.ray/auth_token, nothing else

        pool = TrainPipeline(None, run / "r", device="cpu", resume=True, progress=False,
                             overrides=["selfplay.backend=pool", "selfplay.workers=1"])
        pool.run()
        records = metrics_records(run / "r")
        assert [r["iteration"] for r in records] == [1, 2, 3] and records[-1]["games"] >= 12
        assert records[-1]["resumed"]["config_changes"]["selfplay.backend"] == ["ray", "pool"]
    finally:
        shutil.rmtree(run, ignore_errors=True)


@needs_ray
def test_killed_actor_on_a_second_node_and_a_lost_node():
    """Two Ray nodes on this machine, one actor each: the actor of the second node is killed in
    the middle of self-play (Ray restarts it), later the node itself is lost; both times the
    run returns at least the games asked for, every game counted once."""
    import ray

    from gomoku.lab.bench import local_ray_cluster
    from gomoku.training.backends.messages import EvalTask, SelfPlayTask
    from gomoku.training.backends.ray_backend import RayPool
    from nets import NetConfig, build_net

    pool = None
    handlers = [signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)]
    with local_ray_cluster(2) as cluster:
        try:
            (second,) = cluster.worker_nodes
            # Every move sampled (temperature_moves 36): two games alike would be a game counted twice.
            config = load_config(ROOT / "configs/smoke.yaml", ["search.n_playout=8", "search.temperature_moves=36",
                                                               "selfplay.runtime=torch", "selfplay.device=cpu",
                                                               "search.vct=false"])  # faster games; not under test
            pool = RayPool(config, 2)  # joins the instance this process is connected to
            infos = ray.get([actor.info.remote() for actor in pool.actors()])
            assert {info.node_id for info in infos} == {cluster.head_node.node_id, second.node_id}
            victim = next(info for info in infos if info.node_id == second.node_id)
            pool.publish(build_net(NetConfig(6, 6)).state_dict())

            def play(on_first_game, seeds):
                progress = []

                def on_progress(n):
                    if not progress:
                        on_first_game()
                    progress.append(n)

                answers = pool.run([SelfPlayTask(5, seed) for seed in seeds], on_progress=on_progress)
                games = [game for answer in answers for game in answer.games]
                assert all(len(answer.games) >= 5 for answer in answers)
                assert sum(progress) == len(games)  # each game reported once
                assert len({tuple(game.moves) for game in games}) == len(games)  # no game twice
                return games

            play(lambda: os.kill(victim.pid, signal.SIGKILL), (1, 2))
            assert pool.restarts == 1 and pool.wait_for_actors(120) == 2  # back on its node
            infos = ray.get([actor.info.remote() for actor in pool.actors()])
            revived = next(info for info in infos if info.node_id == second.node_id)

            def lose_node():
                # A lost machine takes its processes with it. On one machine the actor's worker would
                # outlive its raylet for a moment and could answer every remaining call first (this
                # happened in CI), so it dies first and its node right after.
                os.kill(revived.pid, signal.SIGKILL)
                cluster.remove_node(second, allow_graceful=False)

            play(lose_node, (3, 4))
            assert pool.restarts == 2 and pool.wait_for_actors(0) == 1  # no node left to restart it on
            evaluation = pool.run([EvalTask((0, 2), "random", 7), EvalTask((1,), "random", 7)])
            assert [[game.index for game in answer.games] for answer in evaluation] == [[0, 2], [1]]
        finally:
            if pool is not None:
                pool.close()
    # ray.init's own handlers do not outlive the cluster (later tests here send signals)
    assert [signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)] == handlers


@needs_ray
def test_an_address_with_no_cluster_is_a_quick_error():
    """ray.init retries a closed port for minutes: the address is tried first (no timing asserted)."""
    import socket

    import ray

    from gomoku.training.backends.messages import WorkerError
    from gomoku.training.backends.ray_session import check_reachable, start_ray

    with socket.socket() as held:  # a port bound here but not listening: connections are refused
        held.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{held.getsockname()[1]}"
        with pytest.raises(WorkerError, match=f"selfplay.ray_address '{address}': no Ray cluster to join at "
                                              f"{address} \\(Connection refused\\)"):
            start_ray(address, None)
    assert not ray.is_initialized()
    for bad in ("nohost", "127.0.0.1:port", ":6379"):
        with pytest.raises(WorkerError, match="expected HOST:PORT"):
            check_reachable(bad)
    with socket.socket() as server:  # something listens, and says nothing: not Ray either
        server.bind(("127.0.0.1", 0))
        server.listen()
        address = f"127.0.0.1:{server.getsockname()[1]}"
        with pytest.raises(WorkerError, match=f"no Ray cluster to join at {address} \\(something listens there, "
                                              "but gave no answer within 0.5 s\\)"):
            check_reachable(address, timeout_s=0.5)
