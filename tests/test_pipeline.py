"""Self-play records and the training pipeline end to end on the tiny smoke config."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from gomoku import Board
from gomoku.training.config import load_config
from gomoku.training.pipeline import TrainPipeline
from gomoku.training.selfplay import SelfPlayRunner
from mcts import UniformEvaluator
from tests.fakes import load_script, metrics_records

ROOT = Path(__file__).resolve().parents[1]


def test_self_play_records_are_consistent():
    config = load_config("configs/smoke.yaml", ["search.vct=true"])  # the default rules (9x9.yaml's)
    runner = SelfPlayRunner(UniformEvaluator(), config.board, config.search, parallel_games=3,
                            rng=np.random.default_rng(0))
    assert runner.search.config.noise and runner.search.rules.settings.vct  # root noise, and the VCT rules
    games = runner.play(4).games
    assert len(games) >= 4
    for game in games:
        board = Board.from_moves(game.moves, 6, 6, 4)
        assert board.game_end() == (True, game.winner)
        assert len(game.states) == len(game.moves) == len(game.probs) == len(game.outcomes)
        np.testing.assert_allclose(game.probs.sum(1), 1.0, rtol=1e-5)
        replay = Board(6, 6, 4)
        for state, probs, outcome, move in zip(game.states, game.probs, game.outcomes, game.moves):
            np.testing.assert_array_equal(state, replay.current_state())
            assert probs[np.array(replay.moves, dtype=int)].sum() == 0  # no mass on stones
            expected = 0.0 if game.winner == -1 else (1.0 if replay.current_player == game.winner else -1.0)
            assert outcome == expected
            replay.do_move(move)


def test_the_fewest_fast_playouts_allowed_play_legal_games():
    """fast_playouts 1 is refused (a search of one playout only expands the root: no visits, and the
    move's probabilities were NaN); 2, the fewest allowed, visits a move in every fast search."""
    from gomoku.training.config import ConfigError

    with pytest.raises(ConfigError, match="search.fast_playouts: must be 0 .off. or in 2..n_playout - 1"):
        load_config("configs/smoke.yaml", ["search.fast_playouts=1"])
    config = load_config("configs/smoke.yaml", ["search.fast_playouts=2", "search.full_search_prob=0.2"])
    runner = SelfPlayRunner(UniformEvaluator(), config.board, config.search, parallel_games=3,
                            rng=np.random.default_rng(1))
    games = runner.play(6).games
    assert len(games) >= 6
    for game in games:
        board = Board.from_moves(game.moves, 6, 6, 4)  # every move legal
        assert board.game_end() == (True, game.winner)
        assert len(game.states) < len(game.moves)  # the fast searches' positions are not recorded
        assert np.isfinite(game.probs).all()


def test_smoke_run_then_resume(tmp_path):
    run = tmp_path / "run"
    config = load_config("configs/smoke.yaml", ["train.game_batch_num=8", "search.vct=true"])  # 9x9.yaml's rules
    assert config.search.vct == load_config("configs/9x9.yaml").search.vct
    pipeline = TrainPipeline(config, run, device="cpu", progress=False)
    pipeline.run()
    assert (run / "config.yaml").exists() and (run / "checkpoint.pt").exists()
    assert sorted(p.name for p in (run / "buffer").iterdir()) == ["000001.npz", "000002.npz"]
    assert (run / "current.pt").exists()  # evaluated at 8 games (check_freq 8)
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in records] == [1, 2]
    assert "eval" in records[-1] and records[-1]["eval"]["pure_playouts"] == 20
    for key in ("loss", "entropy", "kl", "lr_multiplier", "games", "positions", "wall_time",
                "explained_var_old", "explained_var_new"):
        assert key in records[-1]
    saved = torch.load(run / "checkpoint.pt", weights_only=True)
    assert saved["iteration"] == 2 and saved["games_played"] == 8

    with pytest.raises(FileExistsError):
        TrainPipeline(config, run, device="cpu", progress=False)
    resumed = TrainPipeline(config, run, device="cpu", resume=True, progress=False,
                            overrides=["train.game_batch_num=12"])
    assert resumed.iteration == 2 and len(resumed.buffer) == len(pipeline.buffer)
    for name in ("states", "probs", "outcomes", "next", "total"):  # the buffer the run had, slot for slot
        np.testing.assert_array_equal(getattr(resumed.buffer, name), getattr(pipeline.buffer, name))
    assert resumed.lr_multiplier == pipeline.lr_multiplier
    for key, value in pipeline.net.state_dict().items():
        torch.testing.assert_close(resumed.net.state_dict()[key], value)
    resumed.run()
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in records] == [1, 2, 3]
    assert records[-1]["games"] >= 12  # self-play stops once at least the games asked for have finished
    assert records[-1]["resumed"] == {"from_iteration": 2, "config_changes": {"train.game_batch_num": [8, 12]}}
    assert torch.load(run / "checkpoint.pt", weights_only=True)["config"]["train"]["game_batch_num"] == 12


def test_resume_rejects_another_net(tmp_path):
    config = load_config("configs/smoke.yaml", ["train.game_batch_num=4"])
    TrainPipeline(config, tmp_path, device="cpu", progress=False).run()
    other = load_config("configs/smoke.yaml", ["net.arch=resnet"])
    with pytest.raises(ValueError, match="net.arch: the run was trained with 'conv3'"):
        TrainPipeline(other, tmp_path, device="cpu", resume=True, progress=False)
    with pytest.raises(ValueError, match="board.n_in_row: the run was trained with 4, --set asks for 3"):
        TrainPipeline(None, tmp_path, device="cpu", resume=True, progress=False, overrides=["board.n_in_row=3"])


def test_ctrl_c_saves_the_run(tmp_path, monkeypatch):
    config = load_config("configs/smoke.yaml")
    pipeline = TrainPipeline(config, tmp_path, device="cpu", progress=False)
    calls = []
    real = pipeline.self_play

    def interrupted(games):
        calls.append(games)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(games)

    monkeypatch.setattr(pipeline, "self_play", interrupted)
    with pytest.raises(KeyboardInterrupt):
        pipeline.run()
    saved = torch.load(tmp_path / "checkpoint.pt", weights_only=True)
    assert saved["iteration"] == 1 and saved["games_played"] == 4  # the second iteration never finished
    resumed = TrainPipeline(config, tmp_path, device="cpu", resume=True, progress=False)
    assert resumed.games_played == 4
    resumed.run(max_iterations=1)
    records = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in records] == [1, 2]  # numbering goes on without a gap


@pytest.mark.parametrize("layout", ["runtime=torch", "runtime=onnx", "inference=server"])
def test_worker_processes(tmp_path, layout):
    """Worker processes with their own nets (torch, onnxruntime) or with one inference server."""
    if layout == "runtime=onnx":
        pytest.importorskip("onnxruntime")
        pytest.importorskip("onnx")
    config = load_config("configs/smoke.yaml", ["selfplay.workers=2", "train.game_batch_num=8",
                                                "selfplay.device=cpu", f"selfplay.{layout}"])
    pipeline = TrainPipeline(config, tmp_path, device="cpu", progress=False)
    pipeline.run()
    records = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert records[-1]["games"] >= 8 and "eval" in records[-1]
    assert records[-1]["eval"]["wins"] + records[-1]["eval"]["draws"] + records[-1]["eval"]["losses"] == 2


def test_train_script_and_evaluate_with_the_checkpoint(tmp_path):
    run = tmp_path / "r"
    command = [sys.executable, "scripts/train.py", "--config", "configs/smoke.yaml", "--run-dir", str(run),
               "--no-progress"]
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True, timeout=300)
    resumed = subprocess.run(command + ["--resume", "--set", "train.game_batch_num=16"], cwd=ROOT,
                             capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    bad = subprocess.run(command[:-1] + ["--set", "search.n_playouts=3"], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2 and "unknown key search.n_playouts" in bad.stderr
    result = subprocess.run([sys.executable, "scripts/evaluate.py", "--player", f"az:{run}/checkpoint.pt:50",
                             "--opponent", "random", "--games", "2", "--size", "6", "--n-in-row", "4"],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "random" in result.stdout


def _tensors(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors(item)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_a_run_trained_on_cuda_resumes_on_cuda_and_on_the_cpu(tmp_path):
    """Checkpoints hold CPU tensors only (the optimiser state and the RNG state too), so a run
    trained on a GPU resumes there and on a machine without one (a plain torch.load included)."""
    config = load_config("configs/smoke.yaml", ["train.game_batch_num=4"])
    TrainPipeline(config, tmp_path, device="cuda", progress=False).run()
    payload = torch.load(tmp_path / "checkpoint.pt", weights_only=True)  # no map_location
    assert payload["optimizer"]["state"] and all(t.device.type == "cpu" for t in _tensors(payload))
    for device, games in (("cuda", 8), ("cpu", 12)):
        resumed = TrainPipeline(None, tmp_path, device=device, resume=True, progress=False,
                                overrides=[f"train.game_batch_num={games}"])
        resumed.run()
        assert resumed.games_played >= games and next(resumed.net.parameters()).device.type == device


def test_kill_saves_and_resumes(tmp_path):
    """A plain `kill` (SIGTERM) stops train.py cleanly: checkpoint saved, exit 130, resumable."""
    import signal
    import time

    run = tmp_path / "r"
    process = subprocess.Popen([sys.executable, "scripts/train.py", "--config", "configs/smoke.yaml",
                                "--run-dir", str(run), "--no-progress", "--set", "train.game_batch_num=100000"],
                               cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (run / "metrics.jsonl").exists() and time.monotonic() < deadline:  # an iteration is done
        time.sleep(0.2)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    saved = torch.load(run / "checkpoint.pt", weights_only=True)
    lines = (run / "metrics.jsonl").read_text().splitlines()
    assert saved["iteration"] == len(lines) >= 1
    assert f"the run is saved in {run} at iteration {saved['iteration']} (continue with --resume)" in err
    assert not [p for p in run.rglob("*") if p.name.endswith(".tmp")]
    # And it resumes from there: the next record is the next iteration, its games counted on.
    resumed = TrainPipeline(None, run, resume=True, progress=False,
                            overrides=[f"train.game_batch_num={saved['games_played'] + 1}"])
    resumed.run()
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in records] == list(range(1, saved["iteration"] + 2))
    assert records[-1]["games"] > saved["games_played"] == records[-2]["games"]


# ---------------------------------------------------------------------------- a run loses nothing
def _snapshot(run: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()
            and p.name != "train.lock"}


def test_one_writer_per_run_dir(tmp_path):
    import os

    from gomoku.training.rundir import RunLockedError

    config = load_config("configs/smoke.yaml", ["train.game_batch_num=4"])
    first = TrainPipeline(config, tmp_path, device="cpu", progress=False)
    with pytest.raises(RunLockedError, match=f"in use by another trainer \\(pid {os.getpid()}\\)"):
        TrainPipeline(None, tmp_path, device="cpu", resume=True, progress=False)
    with pytest.raises(RunLockedError):  # a new run there waits for nothing either
        TrainPipeline(config, tmp_path, device="cpu", progress=False)
    first.run()  # releases the directory when it ends
    TrainPipeline(None, tmp_path, device="cpu", resume=True, progress=False).close()


def test_resume_continues_the_run_with_its_own_config(tmp_path, caplog):
    run = tmp_path / "run"
    TrainPipeline(load_config("configs/smoke.yaml", ["search.n_playout=8", "train.game_batch_num=4"]), run,
                  device="cpu", progress=False).run()
    before = _snapshot(run)
    # A plain resume with the file (no --set): the run's n_playout, not the file's; nothing changes on disk.
    plain = TrainPipeline(load_config("configs/smoke.yaml"), run, device="cpu", resume=True, progress=False)
    assert plain.config.search.n_playout == 8 and plain.config.train.game_batch_num == 4
    assert "search.n_playout (run 8, given 16)" in caplog.text
    plain.run(max_iterations=0)
    assert _snapshot(run) == before
    # A safe change applies, is logged and recorded in the next metrics record; a fixed key is refused.
    changed = TrainPipeline(None, run, device="cpu", resume=True, progress=False,
                            overrides=["train.lr=1e-3", "train.game_batch_num=8", "search.n_playout=8"])
    assert changed.config.train.lr == 1e-3 and "train.lr 0.002 -> 0.001" in caplog.text
    changed.run(max_iterations=0)
    assert _snapshot(run) == before  # not a side effect: only a completed iteration records it
    changed = TrainPipeline(None, run, device="cpu", resume=True, progress=False,
                            overrides=["train.lr=1e-3", "train.game_batch_num=8"])
    changed.run(max_iterations=1)
    assert metrics_records(run)[-1]["resumed"] == {"from_iteration": 1, "config_changes": {
        "train.lr": [0.002, 0.001], "train.game_batch_num": [4, 8]}}
    assert load_config(run / "config.yaml").train.lr == 1e-3
    for fixed in ("seed=1", "board.n_in_row=3", "net.arch=resnet"):
        with pytest.raises(ValueError, match=f"{fixed.split('=')[0]}: .*cannot change on resume"):
            TrainPipeline(None, run, device="cpu", resume=True, progress=False, overrides=[fixed])
    with pytest.raises(ValueError, match="train.lr: expected a finite number"):
        TrainPipeline(None, run, device="cpu", resume=True, progress=False, overrides=["train.lr=.inf"])


@pytest.mark.parametrize("select_by, promised", [("ladder", False), ("opponents", True)])
def test_new_eval_opponents_forget_the_best_score_against_the_old(tmp_path, caplog, select_by, promised):
    """The best score against the old opponents is forgotten; only under select_by: opponents does
    that make the next evaluation's model best.pt, and only then is it said."""
    from gomoku.training.evaluation import NO_SCORE

    config = load_config("configs/smoke.yaml", ["eval.opponents=[random]", f"eval.select_by={select_by}"])
    TrainPipeline(config, tmp_path, device="cpu", progress=False).close()  # a new run, at iteration 0
    payload = torch.load(tmp_path / "checkpoint.pt", weights_only=True)
    payload["ladder"]["best_opponent_score"] = 0.5  # as after an evaluation against [random]
    torch.save(payload, tmp_path / "checkpoint.pt")
    resumed = TrainPipeline(None, tmp_path, device="cpu", resume=True, progress=False,
                            overrides=["eval.opponents=[heuristic]"])
    resumed.close()
    assert resumed.state.ladder.best_opponent_score == NO_SCORE
    assert ("the next evaluation's model becomes best.pt" in caplog.text) == promised


def test_max_wall_time_counts_the_whole_run(tmp_path):
    run = tmp_path / "run"
    config = load_config("configs/smoke.yaml", ["search.n_playout=8", "train.game_batch_num=100"])
    first = TrainPipeline(config, run, device="cpu", progress=False)
    first.run(max_wall_s=1e-9)  # any iteration takes longer: exactly one is played
    assert [r["iteration"] for r in metrics_records(run)] == [1]
    # The limit is the run's time over all its sessions: a resume already past it plays nothing.
    before = _snapshot(run)
    TrainPipeline(None, run, device="cpu", resume=True, progress=False).run(max_wall_s=first.wall_time)
    assert _snapshot(run) == before
    TrainPipeline(None, run, device="cpu", resume=True, progress=False).run(max_wall_s=first.wall_time + 1e-9)
    assert [r["iteration"] for r in metrics_records(run)] == [1, 2]


def test_a_smaller_buffer_keeps_the_newest_positions_only_when_asked(tmp_path):
    config = load_config("configs/smoke.yaml", ["train.game_batch_num=8", "eval.check_freq=1000"])
    full = TrainPipeline(config, tmp_path, device="cpu", progress=False)
    full.run()
    order = (full.buffer.next - np.arange(1, len(full.buffer) + 1)) % full.buffer.capacity  # newest first
    newest = full.buffer.states[order[:100]]
    shards = sorted(p.name for p in (tmp_path / "buffer").iterdir())
    small = TrainPipeline(None, tmp_path, device="cpu", resume=True, progress=False,
                          overrides=["train.buffer_size=100", "train.batch_size=64"])
    order = (small.buffer.next - np.arange(1, 101)) % 100
    np.testing.assert_array_equal(small.buffer.states[order], newest)
    small.run(max_iterations=0)  # no iteration, no change: every shard is still there
    assert sorted(p.name for p in (tmp_path / "buffer").iterdir()) == shards
    assert torch.load(tmp_path / "checkpoint.pt", weights_only=True)["config"]["train"]["buffer_size"] == 2000
    # The same resume, one iteration on: the run now has the smaller buffer, the old shards go.
    small = TrainPipeline(None, tmp_path, device="cpu", resume=True, progress=False,
                          overrides=["train.buffer_size=100", "train.game_batch_num=12"])
    small.run(max_iterations=1)
    assert sorted(p.name for p in (tmp_path / "buffer").iterdir()) == ["000003.npz"]
    assert torch.load(tmp_path / "checkpoint.pt", weights_only=True)["config"]["train"]["buffer_size"] == 100


def test_non_finite_training_stops_at_the_last_good_checkpoint(tmp_path, monkeypatch):
    from gomoku.training.updates import TrainingDiverged

    config = load_config("configs/smoke.yaml")
    pipeline = TrainPipeline(config, tmp_path, device="cpu", progress=False)
    real = pipeline.train

    def diverging(n_updates):
        stats = real(n_updates)
        if pipeline.iteration == 2:
            with torch.no_grad():
                next(pipeline.net.parameters()).fill_(float("nan"))
        return stats

    monkeypatch.setattr(pipeline, "train", diverging)
    with pytest.raises(TrainingDiverged, match="iteration 2: a weight of the net is not finite.*stays at iteration 1"):
        pipeline.run()
    saved = torch.load(tmp_path / "checkpoint.pt", weights_only=True)
    assert saved["iteration"] == 1 and all(torch.isfinite(v).all() for v in saved["model"].values())
    assert [r["iteration"] for r in metrics_records(tmp_path)] == [1]
    assert [p.name for p in (tmp_path / "buffer").iterdir()] == ["000001.npz"]
    TrainPipeline(None, tmp_path, device="cpu", resume=True, progress=False).close()  # lock released


def test_a_dead_worker_is_restarted_and_its_task_played_again():
    import os
    import signal

    from gomoku.training.backends.messages import SelfPlayTask
    from gomoku.training.backends.pool import WorkerPool
    from nets import NetConfig, build_net

    config = load_config("configs/smoke.yaml", ["selfplay.workers=2", "selfplay.runtime=torch",
                                                "selfplay.device=cpu", "search.n_playout=8"])
    weights = build_net(NetConfig(6, 6)).state_dict()
    pool = WorkerPool(2, config)
    pool.publish(weights)
    progress = []
    killed = []

    def on_progress(n):
        progress.append(n)
        if not killed:  # the first game reported: kill worker 1 in the middle of its task
            killed.append(pool.processes[1].pid)
            os.kill(killed[0], signal.SIGKILL)

    try:
        answers = pool.run([SelfPlayTask(6, 1), SelfPlayTask(6, 2)], on_progress=on_progress)
        assert pool.restarts == 1 and pool.processes[1].pid != killed[0]
        for answer in answers:
            assert len(answer.games) >= 6 and answer.moves >= sum(len(g.moves) for g in answer.games)
        assert sum(progress) == sum(len(a.games) for a in answers)  # the killed attempt's games are not counted
        again = pool.run([SelfPlayTask(1, 3), SelfPlayTask(1, 4)])  # the new worker serves on
        assert all(len(answer.games) >= 1 for answer in again)
    finally:
        pool.close()


def test_train_script_errors_are_one_line(tmp_path, capsys):
    import os
    import signal

    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    main = load_script("train").main
    base = ["--config", "configs/smoke.yaml", "--no-progress", "--run-dir"]

    def error(argv: list[str], code: int = 2) -> str:
        assert main(argv) == code
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), lines
        return lines[0]

    try:
        run = tmp_path / "run"
        assert main(base + [str(run), "--set", "train.game_batch_num=4"]) == 0
        holder = TrainPipeline(None, run, device="cpu", resume=True, progress=False)
        assert f"pid {os.getpid()}" in error(base + [str(run), "--resume"])
        holder.close()
        assert "train.lr: expected a finite number" in error(base + [str(run), "--set", "train.lr=.inf"])
        assert "board.n_in_row" in error(base + [str(run), "--resume", "--set", "board.n_in_row=3"])
        assert "already holds a run" in error(base + [str(run)])
        if not torch.cuda.is_available():
            assert "CUDA is not available" in error(base + [str(run), "--resume", "--device", "cuda"])
        shard = next((run / "buffer").iterdir())
        shard.write_bytes(shard.read_bytes()[:100])  # a truncated file
        assert f"{shard} is not a readable replay-buffer shard" in error(base + [str(run), "--resume"])
        assert "no checkpoint" in error(["--run-dir", str(tmp_path / "none"), "--resume"])
    finally:
        for number, handler in handlers.items():
            signal.signal(number, handler)


def test_a_run_from_before_the_shards_resumes_with_its_buffer(tmp_path):
    """Old runs kept the buffer in one buffer.npz (a ring and its next slot) and no sample count."""
    import shutil

    config = load_config("configs/smoke.yaml", ["train.game_batch_num=8", "eval.check_freq=1000",
                                                "train.buffer_size=300"])
    old = TrainPipeline(config, tmp_path, device="cpu", progress=False)
    old.run()
    ring = old.buffer
    assert ring.size == ring.capacity and ring.next != 0  # a full ring that has wrapped
    np.savez(tmp_path / "buffer.npz", states=ring.states, probs=ring.probs, outcomes=ring.outcomes, next=ring.next)
    shutil.rmtree(tmp_path / "buffer")
    payload = torch.load(tmp_path / "checkpoint.pt", weights_only=True)
    del payload["buffer_total"]
    torch.save(payload, tmp_path / "checkpoint.pt")

    def newest_first(buffer):
        return buffer.states[(buffer.next - np.arange(1, buffer.size + 1)) % buffer.capacity]

    resumed = TrainPipeline(None, tmp_path, device="cpu", resume=True, progress=False,
                            overrides=["train.game_batch_num=12"])
    np.testing.assert_array_equal(newest_first(resumed.buffer), newest_first(ring))
    assert not (tmp_path / "buffer.npz").exists()
    assert [p.name for p in (tmp_path / "buffer").iterdir()] == ["000002.npz"]
    resumed.run(max_iterations=1)
    assert [r["iteration"] for r in metrics_records(tmp_path)] == [1, 2, 3]
