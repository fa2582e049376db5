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

ROOT = Path(__file__).resolve().parents[1]


def test_self_play_records_are_consistent():
    config = load_config("configs/smoke.yaml")
    runner = SelfPlayRunner(UniformEvaluator(), config.board, config.search, parallel_games=3,
                            rng=np.random.default_rng(0))
    assert runner.search.config.noise  # self-play searches with root noise
    games = runner.play(4)
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


def test_smoke_run_then_resume(tmp_path):
    run = tmp_path / "run"
    config = load_config("configs/smoke.yaml", ["train.game_batch_num=8"])
    pipeline = TrainPipeline(config, run, device="cpu", progress=False)
    pipeline.run()
    assert (run / "config.yaml").exists() and (run / "checkpoint.pt").exists() and (run / "buffer.npz").exists()
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
    more = load_config("configs/smoke.yaml", ["train.game_batch_num=12"])
    resumed = TrainPipeline(more, run, device="cpu", resume=True, progress=False)
    assert resumed.iteration == 2 and len(resumed.buffer) == len(pipeline.buffer)
    assert resumed.lr_multiplier == pipeline.lr_multiplier
    for key, value in pipeline.net.state_dict().items():
        torch.testing.assert_close(resumed.net.state_dict()[key], value)
    resumed.run()
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in records] == [1, 2, 3]
    assert records[-1]["games"] == 12


def test_resume_rejects_another_net(tmp_path):
    config = load_config("configs/smoke.yaml", ["train.game_batch_num=4"])
    TrainPipeline(config, tmp_path, device="cpu", progress=False).run()
    other = load_config("configs/smoke.yaml", ["net.arch=resnet"])
    with pytest.raises(ValueError, match="trained with net"):
        TrainPipeline(other, tmp_path, device="cpu", resume=True, progress=False)


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


@pytest.mark.parametrize("layout", ["backend=torch", "backend=onnx", "inference=server"])
def test_worker_processes(tmp_path, layout):
    """Worker processes with their own nets (torch, onnxruntime) or with one inference server."""
    if layout == "backend=onnx":
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


def test_kill_saves_and_resumes(tmp_path):
    """A plain `kill` (SIGTERM) stops train.py cleanly: checkpoint saved, exit 130, resumable."""
    import signal
    import time

    run = tmp_path / "r"
    process = subprocess.Popen([sys.executable, "scripts/train.py", "--config", "configs/smoke.yaml",
                                "--run-dir", str(run), "--no-progress", "--set", "train.game_batch_num=100000"],
                               cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (run / "checkpoint.pt").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "--resume" in err
    saved = torch.load(run / "checkpoint.pt", weights_only=True)
    lines = (run / "metrics.jsonl").read_text().splitlines()
    assert saved["iteration"] == len(lines) >= 1
