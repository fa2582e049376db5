"""ONNX export and the onnxruntime evaluator (skipped without onnx / onnxruntime)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
torch = pytest.importorskip("torch")

from gomoku import Board  # noqa: E402
from gomoku.pbrain.engine import PbrainEngine  # noqa: E402
from gomoku.pbrain.loader import EngineOptions  # noqa: E402
from mcts import BatchedMCTS, SearchConfig  # noqa: E402
from nets import NetConfig, NetEvaluator, build_net, save_model  # noqa: E402
from nets.onnx_evaluator import OnnxEvaluator  # noqa: E402
from nets.onnx_export import (OnnxCheckError, check_onnx, export_onnx, random_planes,  # noqa: E402
                              read_net_config)

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    torch.manual_seed(0)
    net = build_net(NetConfig())
    folder = tmp_path_factory.mktemp("onnx")
    save_model(folder / "model.pt", net)
    return net, folder / "model.pt", export_onnx(net, folder / "model.onnx")


def test_round_trip_matches_torch(exported):
    net, _, path = exported
    report = check_onnx(net, path, batch_sizes=(1, 37, 5))
    assert report.ok and report.max_log_policy_diff < 1e-4 and report.max_value_diff < 1e-4
    assert read_net_config(path) == net.config


def test_check_fails_loudly_on_a_different_net(exported):
    net, _, path = exported
    other = build_net(NetConfig())
    with pytest.raises(OnnxCheckError):
        check_onnx(other, path)


def test_resnet_exports_too(tmp_path):
    net = build_net(NetConfig(width=7, height=6, arch="resnet", channels=8, blocks=1))
    for module in net.modules():  # non-trivial batch-norm statistics, used in eval mode
        if isinstance(module, torch.nn.BatchNorm2d):
            module.running_mean.normal_()
            module.running_var.uniform_(0.5, 2.0)
    path = export_onnx(net, tmp_path / "resnet.onnx")
    assert check_onnx(net, path).ok
    evaluator = OnnxEvaluator(path)
    assert (evaluator.width, evaluator.height) == (7, 6)


def test_onnx_evaluator_matches_net_evaluator(exported):
    net, _, path = exported
    torch_eval, onnx_eval = NetEvaluator(net, "cpu"), OnnxEvaluator(path)
    planes = random_planes(net.config, 40, np.random.default_rng(1))
    legal = (planes[:, 0] + planes[:, 1]).reshape(40, -1) == 0
    legal[0] = False  # a row with no legal move at all must not produce NaNs
    p_torch, v_torch = torch_eval.evaluate_batch(planes, legal)
    p_onnx, v_onnx = onnx_eval.evaluate_batch(planes, legal)
    np.testing.assert_allclose(p_onnx, p_torch, atol=1e-5)
    np.testing.assert_allclose(v_onnx, v_torch, atol=1e-5)
    assert v_onnx.dtype == np.float64 and not np.isnan(p_onnx).any()
    assert np.all(p_onnx[~legal] == 0)
    np.testing.assert_allclose(p_onnx[1:].sum(axis=1), 1.0, atol=1e-5)


def test_search_runs_on_the_onnx_evaluator(exported):
    _, _, path = exported
    board = Board.from_moves([40, 41])
    search = BatchedMCTS(OnnxEvaluator(path), 9, 9, 5, SearchConfig(n_playout=100),
                         rng=np.random.default_rng(0))
    result = search.search([board])[0]
    assert result.visits.sum() == 99  # the first playout expands the root
    assert board.stone(result.best_move()) == 0


def test_pbrain_engine_on_onnxruntime(exported):
    _, model_pt, model_onnx = exported
    for options in (EngineOptions(model=model_onnx, playouts=50), EngineOptions(model=model_pt, playouts=50,
                                                                                onnx=True)):
        out: list[str] = []
        engine = PbrainEngine(options, write=out.append)
        for line in ("START 9", "BEGIN", "TURN 0,0", "START 15"):
            engine.handle_line(line)
        assert out[0] == "OK" and "onnxruntime" in engine.player.name
        assert out[-1].startswith("ERROR")  # a 9x9 net
        assert all("," in line for line in out[1:3]), out


def test_export_script(exported, tmp_path):
    _, model_pt, _ = exported
    out = tmp_path / "script.onnx"
    done = subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "export_onnx.py"), str(model_pt), str(out)],
                          capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr
    assert out.is_file() and "check passed" in done.stdout
    missing = subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "export_onnx.py"),
                              str(tmp_path / "missing.pt"), str(tmp_path / "x.onnx")],
                             capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert missing.returncode != 0 and "no checkpoint" in missing.stderr


def test_az_spec_runs_an_exported_model(tmp_path):
    from gomoku.players import make_player
    from nets.onnx_export import export_onnx

    net = build_net(NetConfig())
    path = export_onnx(net, tmp_path / "m.onnx")
    board = Board.from_moves([36, 72, 37, 73, 38, 74, 39, 75])
    onnx_player = make_player(f"az:{path}:100", seed=0)
    torch_player = make_player(f"az:{save_model_to(tmp_path / 'm.pt', net)}:100", seed=0)
    # Same net, same search: the same move and (up to float32 noise) the same statistics.
    assert onnx_player.get_action(board) == torch_player.get_action(board)
    np.testing.assert_allclose(onnx_player.last_result.priors, torch_player.last_result.priors, atol=1e-5)
    with pytest.raises(ValueError, match="9x9 board, not 7x7"):
        onnx_player.get_action(Board(7, 7, 5))


def save_model_to(path, net):
    save_model(path, net)
    return path


def test_exported_model_keeps_its_rule(tmp_path):
    from gomoku.players import make_player
    from nets.onnx_export import export_onnx

    path = export_onnx(build_net(NetConfig()), tmp_path / "four.onnx", n_in_row=4)
    player = make_player(f"az:{path}:20", seed=0)
    assert player.n_in_row == 4
    with pytest.raises(ValueError, match="4 in a row"):
        player.get_action(Board(9, 9, 5))
