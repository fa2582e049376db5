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
from mcts import BatchedMCTS  # noqa: E402
from nets import NetConfig, NetEvaluator, build_net, save_model  # noqa: E402
from nets.onnx_evaluator import OnnxEvaluator  # noqa: E402
from nets.onnx_export import (OnnxCheckError, check_onnx, export_onnx, random_planes,  # noqa: E402
                              read_net_config)
from tests.fakes import load_script, parts  # noqa: E402

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
    search = BatchedMCTS(OnnxEvaluator(path), *parts(9, 9, 5, n_playout=100),
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


def _broken_net(bad: float):
    net = build_net(NetConfig(width=5, height=5))
    with torch.no_grad():
        net.heads.policy_fc.weight[0, 0] = bad
    return net


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_the_check_fails_on_non_finite_weights(tmp_path, bad):
    """max(0.0, nan) is 0.0: the check must not read a NaN as no difference."""
    from nets.onnx_export import OnnxExportError, onnx_bytes, save_onnx

    net = _broken_net(bad)
    model = onnx_bytes(net)
    with pytest.raises(OnnxCheckError, match="does not match"):
        check_onnx(net, model)
    path = save_onnx(model, tmp_path / "broken.onnx")  # such a file, made elsewhere, is refused
    with pytest.raises(OnnxExportError, match="non-finite weights") as caught:
        OnnxEvaluator(path)
    assert "\n" not in str(caught.value)


def test_a_file_that_is_not_onnx_is_refused_in_one_line(tmp_path):
    from nets.onnx_export import OnnxExportError

    path = tmp_path / "junk.onnx"
    path.write_bytes(b"\x08\x07 certainly not a model")
    with pytest.raises(OnnxExportError) as caught:
        OnnxEvaluator(path)
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)


def test_a_missing_onnx_model_is_the_checkpoint_error_of_a_missing_pt(tmp_path, capsys):
    """evaluate.py gave a missing .pt "no checkpoint at ..." and exit 2, a missing .onnx the raw
    errno and exit 1 (a run failure)."""
    from nets.checkpoint import CheckpointError
    from nets.loading import load_evaluator

    missing = tmp_path / "missing.onnx"
    with pytest.raises(CheckpointError, match=f"^no checkpoint at {missing}$"):
        load_evaluator(missing)
    script = load_script("evaluate")
    assert script.main(["--player", f"az:{missing}:20", "--opponent", "random", "--games", "1", "--no-progress"]) == 2
    assert capsys.readouterr().err.strip() == f"error: no checkpoint at {missing}"


def _without_checksum(model):
    """An ONNX ModelProto with its checksum taken out of its metadata: what a foreign file looks like."""
    from nets.onnx_export import DIGEST_KEY

    kept = {entry.key: entry.value for entry in model.metadata_props if entry.key != DIGEST_KEY}
    del model.metadata_props[:]
    __import__("onnx").helper.set_model_props(model, kept)
    return model


def test_a_foreign_onnx_model_or_a_bad_rule_in_its_metadata_is_refused_at_load(exported, tmp_path):
    """A model whose input is not ``planes`` loaded and failed at its first move with onnxruntime's
    error; an ``n_in_row`` of "0" or "²" in the metadata was read as a rule or raised a bare ValueError."""
    import onnx

    from nets.onnx_export import OnnxExportError

    _, _, path = exported
    foreign = _without_checksum(onnx.load(path))  # a file of ours changed would be refused as corrupt
    foreign.graph.input[0].name = "x"
    for node in foreign.graph.node:
        node.input[:] = ["x" if name == "planes" else name for name in node.input]
    onnx.save(foreign, tmp_path / "foreign.onnx")
    with pytest.raises(OnnxExportError, match=r"foreign.onnx is not a policy-value net of this project: "
                                              r"expected the input planes"):
        OnnxEvaluator(tmp_path / "foreign.onnx")
    for text in ("0", "\u00b2", "99"):
        model = onnx.load(path)
        del model.metadata_props[:]
        onnx.helper.set_model_props(model, {"gomoku_zero.n_in_row": text})
        onnx.save(model, tmp_path / "rule.onnx")
        with pytest.raises(OnnxExportError, match=f"rule.onnx has an invalid gomoku_zero.n_in_row {text!r}"):
            OnnxEvaluator(tmp_path / "rule.onnx")


def test_the_in_memory_export_runs_like_the_file(exported):
    from nets.onnx_export import export_in_memory

    net, _, path = exported
    model = export_in_memory(net, n_in_row=5)
    assert read_net_config(model) == net.config
    from_memory, from_file = OnnxEvaluator(model), OnnxEvaluator(path)
    planes = random_planes(net.config, 8, np.random.default_rng(2))
    legal = np.ones((8, 81), dtype=bool)
    np.testing.assert_allclose(from_memory.evaluate_batch(planes, legal)[0], from_file.evaluate_batch(planes, legal)[0],
                               atol=1e-6)
    assert from_memory.n_in_row == 5


ONNXRUNTIME_SESSION_FILE = ".ses"
KILLED_LOADER = """
import sys
from gomoku.players import make_player
from nets.loading import forget_exports, load_evaluator
player = make_player(f"az:{sys.argv[1]}:10", seed=0)
forget_exports()  # the engine's load below exports the file again
evaluator = load_evaluator(sys.argv[1], runtime="onnx", device="cpu").evaluator
print(type(player.evaluator).__name__, type(evaluator).__name__, flush=True)
sys.stdin.read()
"""


def test_no_temporary_files_survive_a_killed_process(exported, tmp_path):
    """A .pt model run on onnxruntime (the az player, the engine) is exported in memory: a
    SIGKILLed process leaves nothing in the temp folder."""
    import os

    _, model_pt, _ = exported
    temp = tmp_path / "temp"
    temp.mkdir()
    # No CUDA in there: on a GPU machine the az player's default is torch on CUDA, not onnxruntime.
    env = dict(os.environ, TMPDIR=str(temp), PYTHONPATH=str(REPO_ROOT), CUDA_VISIBLE_DEVICES="")
    process = subprocess.Popen([sys.executable, "-c", KILLED_LOADER, str(model_pt)], env=env, cwd=REPO_ROOT,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().split() == ["OnnxEvaluator", "OnnxEvaluator"]
    finally:
        process.kill()
        process.wait()
    # What our code would leave: tempfile's names (tmp..., or our gomoku-/gz prefixes) or a model file.
    # Libraries keep files of their own there: onnxruntime a 51-byte session id (".ses", rewritten by
    # each process), a GPU machine's CUDA stack a debug log (mat-debug-PID.log, seen on the lent H200).
    left = sorted(path.name for path in temp.iterdir())
    assert [name for name in left if name.startswith(("tmp", "gomoku", "gz")) or name.endswith((".onnx", ".pt"))] == []
    assert set(left) <= {ONNXRUNTIME_SESSION_FILE} or torch.cuda.is_available(), left  # a CPU machine: nothing else


def _one_line_error(capsys, usage: bool = False) -> str:
    """The error the script printed: one line (after argparse's usage lines for a bad option)."""
    err = capsys.readouterr().err.strip()
    if usage:
        assert err.startswith("usage:"), err
        err = err.splitlines()[-1]
    assert err and "\n" not in err and "Traceback" not in err, err
    return err


def test_export_script_never_writes_over_its_model(exported, tmp_path, capsys):
    import os

    _, model_pt, _ = exported
    model = tmp_path / "m.pt"
    model.write_bytes(model_pt.read_bytes())
    original = model.read_bytes()
    (tmp_path / "link.onnx").symlink_to(model)
    os.link(model, tmp_path / "hard.onnx")
    script = load_script("export_onnx")
    for out in (model, tmp_path / "link.onnx", tmp_path / "hard.onnx", tmp_path / "other.pt", tmp_path):
        assert script.main([str(model), str(out)]) == 2
        assert "error: the output" in _one_line_error(capsys)
    assert model.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hard.onnx", "link.onnx", "m.pt"]


@pytest.mark.parametrize("options", [["--opset", "1"], ["--opset", "99"], ["--batch-sizes", "0"],
                                     ["--batch-sizes", "1", "-3"], ["--tolerance", "nan"], ["--bench-moves", "0"]])
def test_export_script_refuses_bad_options_in_one_line(exported, tmp_path, capsys, options):
    _, model_pt, _ = exported
    with pytest.raises(SystemExit) as caught:
        load_script("export_onnx").main([str(model_pt), str(tmp_path / "x.onnx"), *options])
    assert caught.value.code == 2
    assert "error:" in _one_line_error(capsys, usage=True)
    assert not (tmp_path / "x.onnx").exists()


def test_export_script_reports_unwritable_outputs_in_one_line(exported, tmp_path, capsys, monkeypatch):
    import errno

    import nets.onnx_export

    _, model_pt, _ = exported
    script = load_script("export_onnx")
    (tmp_path / "file").write_text("a file, not a folder")
    assert script.main([str(model_pt), str(tmp_path / "file" / "x.onnx")]) == 2
    assert "cannot write" in _one_line_error(capsys)

    def full_disk(path, write, before_replace=None):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(nets.onnx_export, "atomic_write", full_disk)
    assert script.main([str(model_pt), str(tmp_path / "x.onnx")]) == 2
    assert "No space left on device" in _one_line_error(capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


@pytest.mark.skipif(__import__("importlib").util.find_spec("onnxscript") is not None,
                    reason="onnxscript is installed: the dynamo exporter is there")
def test_export_script_without_onnxscript_says_so(exported, tmp_path, capsys):
    _, model_pt, _ = exported
    assert load_script("export_onnx").main([str(model_pt), str(tmp_path / "x.onnx"), "--exporter", "dynamo"]) == 2
    assert "onnxscript" in _one_line_error(capsys)


def test_export_script_writes_nothing_when_the_check_fails(tmp_path, capsys):
    """A NaN in a weight: the model file is refused on load; the check would refuse it too."""
    save_model(tmp_path / "nan.pt", _broken_net(float("nan")))
    assert load_script("export_onnx").main([str(tmp_path / "nan.pt"), str(tmp_path / "nan.onnx")]) == 2
    assert "non-finite" in _one_line_error(capsys)
    assert not (tmp_path / "nan.onnx").exists()


def test_one_loader_keeps_a_files_export_until_the_file_changes(exported):
    """nets.loading is the one way from a model file to an evaluator (az players, the engine): a
    .pt file is exported once per version of the file; a bad runtime is a ValueError."""
    import os

    from nets import loading
    from nets.loading import forget_exports, load_evaluator

    _, model_pt, _ = exported
    forget_exports()
    first = load_evaluator(model_pt, runtime="onnx", device="cpu")
    again = load_evaluator(model_pt, runtime="onnx", device="cpu")
    assert (first.runtime, first.n_in_row, first.config) == ("onnx", 5, again.config)
    assert first.evaluator is not again.evaluator and len(loading._exports) == 1
    os.utime(model_pt, ns=(1, 1))  # another version of the file: exported again
    load_evaluator(model_pt, runtime="onnx", device="cpu")
    assert len(loading._exports) == 2
    assert load_evaluator(model_pt, runtime="torch").runtime == "torch"
    with pytest.raises(ValueError, match="runtime must be one of auto, torch, onnx"):
        load_evaluator(model_pt, runtime="tpu")
    forget_exports()


def test_export_and_check_leave_the_callers_net_as_it_was():
    from nets.onnx_export import onnx_bytes

    net = build_net(NetConfig())
    net.train()
    check_onnx(net, onnx_bytes(net))
    assert net.training  # a training net stays in training mode (and on its device)


def test_the_export_scripts_bench_runs_on_the_nets_own_board(tmp_path, capsys):
    model = tmp_path / "6.pt"  # a 6x6 net, four in a row: the 9x9 bench positions are off its board
    save_model(model, build_net(NetConfig(6, 6)), n_in_row=4)
    code = load_script("export_onnx").main([str(model), str(tmp_path / "x.onnx"), "--bench", "--bench-playouts", "8",
                                            "--bench-moves", "2"])
    out = capsys.readouterr().out
    assert code == 0 and "single-game search, 8 playouts/move, 2 moves" in out
    assert "int8" not in out and "us, onnxruntime " in out
    # The int8 file's times were labelled "onnxruntime" as if they were the float32 export's.
    code = load_script("export_onnx").main([str(model), str(tmp_path / "x8.onnx"), "--int8", "--bench",
                                            "--bench-playouts", "8", "--bench-moves", "2"])
    out = capsys.readouterr().out
    assert code == 0 and "us, onnxruntime int8 " in out and "playouts/s, onnxruntime int8 " in out
