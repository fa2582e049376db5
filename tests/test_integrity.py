"""One integrity rule for every model file (issue 58): an ``.onnx`` file we write carries a checksum
that every load checks, a foreign one and every ``.pt`` model are probed for finite, in-range
outputs, a run whose net explodes stops before its best.pt changes, and the export refuses what it
cannot check or write soundly. Fault injection: flipped bits at seeded positions in the weights,
layers scaled by 1e30, huge finite weights, a rule that does not fit the board."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from nets import CheckpointError, NetConfig, build_net, load_checkpoint, save_checkpoint, save_model
from nets.checkpoint import load_model
from nets.loading import forget_exports, load_evaluator
from nets.onnx_export import DIGEST_KEY, OnnxExportError, export_onnx, model_proto, verify_onnx
from nets.onnx_evaluator import OnnxEvaluator
from tests.fakes import load_script
from tests.test_model_files import _member_data_offset

ROOT = Path(__file__).resolve().parents[1]
FLIPS = 24  # seeded bit positions per file in the property tests
HUGE_SCALE = 10.0  # every weight x10: finite outputs in range on torch, an export that onnxruntime rounds otherwise
EXPLODED_SCALE = 1e30  # conv1 x1e30: finite weights, logits on a 1e28 scale


def _net(width: int = 5, height: int = 5, scale: float | None = None, conv1: float | None = None):
    torch.manual_seed(0)
    net = build_net(NetConfig(width=width, height=height))
    with torch.no_grad():
        for parameter in net.parameters() if scale is not None else ():
            parameter.mul_(scale)
        if conv1 is not None:
            net.conv1.weight.mul_(conv1)
    return net


def _one_line(error: BaseException, path: Path) -> str:
    message = str(error)
    assert "\n" not in message and str(path) in message
    return message


def _flip_bit(path: Path, position: int) -> None:
    data = bytearray(path.read_bytes())
    data[position // 8] ^= 1 << (position % 8)
    path.write_bytes(bytes(data))


def _onnx_weight_bits(path: Path) -> list[int]:
    """The bit positions in the file of the raw bytes of every weight (initializer) of the model."""
    data = path.read_bytes()
    bits = []
    for tensor in model_proto(path).graph.initializer:
        if len(tensor.raw_data) >= 4:
            start = data.find(tensor.raw_data)
            assert start >= 0
            bits.extend(range(start * 8, (start + len(tensor.raw_data)) * 8))
    return bits


def _pt_weight_bits(path: Path) -> list[int]:
    """The bit positions in the file of the tensors' bytes (the archive's data/N members)."""
    with zipfile.ZipFile(path) as archive:
        members = [name for name in archive.namelist() if "/data/" in name]
    bits = []
    for member in members:
        offset, length = _member_data_offset(path, member)
        bits.extend(range(offset * 8, (offset + length) * 8))
    return bits


# ---------------------------------------------------------------------------- .onnx checksums
def test_the_shipped_onnx_files_carry_a_checksum_that_holds():
    shipped = sorted(ROOT.glob("models/**/*.onnx"))
    assert {p.name for p in shipped} >= {"9x9.onnx", "9x9-int8.onnx"}
    for path in shipped:
        assert verify_onnx(path), f"{path} records no {DIGEST_KEY}: export it again with scripts/export_onnx.py"
        OnnxEvaluator(path)


def test_a_flipped_bit_in_an_onnx_weight_is_refused_by_every_loader(tmp_path):
    """The issue's case: one bit of a weight flipped (0.003 became 1.07e36) loaded and played."""
    from gomoku.pbrain.loader import EngineOptions, Players
    from gomoku.pbrain.protocol import ProtocolError
    from gomoku.players import make_player

    path = export_onnx(_net(9, 9), tmp_path / "m.onnx", n_in_row=5)
    OnnxEvaluator(path)
    _flip_bit(path, _onnx_weight_bits(path)[1000])
    with pytest.raises(OnnxExportError, match="is corrupt: the checksum of its weights") as caught:
        OnnxEvaluator(path)
    _one_line(caught.value, path)
    with pytest.raises(ValueError, match="corrupt"):
        load_evaluator(path)
    with pytest.raises(ValueError, match="corrupt"):
        make_player(f"az:{path}:8")
    with pytest.raises(ProtocolError, match="corrupt"):
        Players(EngineOptions(model=path, playouts=8), message=lambda text: None).for_board(9, 9)


@pytest.mark.parametrize("int8", [False, True])
def test_a_flipped_bit_anywhere_in_the_weights_of_an_onnx_file_is_refused(tmp_path, int8):
    """Property test over seeded bit positions in the weights of a float32 and an int8 export."""
    from gomoku.lab.int8 import int8_model
    from nets.onnx_export import onnx_bytes, save_onnx

    model = onnx_bytes(_net(), n_in_row=5)
    if int8:
        model = int8_model(model, 5, 5, n_in_row=5, games=2)
    sound = save_onnx(model, tmp_path / "sound.onnx")
    bits = _onnx_weight_bits(sound)
    rng = np.random.default_rng(58)
    path = tmp_path / "flipped.onnx"
    for position in rng.choice(bits, FLIPS, replace=False):
        path.write_bytes(sound.read_bytes())
        _flip_bit(path, int(position))
        with pytest.raises(OnnxExportError, match="corrupt|non-finite|not an ONNX model") as caught:
            load_evaluator(path)
        _one_line(caught.value, path)


def test_a_flipped_bit_anywhere_in_the_weights_of_a_pt_file_is_refused(tmp_path):
    """Property test over seeded bit positions in the tensors of a model file, for each runtime."""
    sound = tmp_path / "sound.pt"
    save_model(sound, _net())
    bits = _pt_weight_bits(sound)
    rng = np.random.default_rng(58)
    path = tmp_path / "flipped.pt"
    for position in rng.choice(bits, FLIPS, replace=False):
        path.write_bytes(sound.read_bytes())
        _flip_bit(path, int(position))
        for runtime in ("torch", "onnx"):
            forget_exports()
            with pytest.raises(CheckpointError, match="corrupt") as caught:
                load_evaluator(path, runtime=runtime, device="cpu")
            _one_line(caught.value, path)


def _without_checksum(path: Path, scale_first_weight: float = 1.0) -> Path:
    """The ONNX file without its checksum (a foreign file), its first conv's weight scaled."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(path)
    kept = {entry.key: entry.value for entry in model.metadata_props if entry.key != DIGEST_KEY}
    del model.metadata_props[:]
    onnx.helper.set_model_props(model, kept)
    first = next(t for t in model.graph.initializer if t.name == "conv1.weight")
    first.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(first) * np.float32(scale_first_weight), first.name))
    onnx.save(model, path)
    return path


def test_a_foreign_onnx_file_is_probed_for_finite_outputs_in_range(tmp_path):
    foreign = _without_checksum(export_onnx(_net(), tmp_path / "foreign.onnx"))
    assert not verify_onnx(foreign)
    OnnxEvaluator(foreign)  # a foreign file that computes a sound net's outputs loads
    exploded = _without_checksum(export_onnx(_net(), tmp_path / "exploded.onnx"), EXPLODED_SCALE)
    with pytest.raises(OnnxExportError, match="the net's outputs are out of range") as caught:
        load_evaluator(exploded)
    _one_line(caught.value, exploded)


# ---------------------------------------------------------------------------- .pt probes
def test_a_pt_model_whose_outputs_explode_is_refused_on_load(tmp_path):
    """conv1 x1e30: every weight finite, every output on an empty board finite; the probe's
    log-probabilities (-1e28) are out of range."""
    path = tmp_path / "exploded.pt"
    save_model(path, _net(conv1=EXPLODED_SCALE))
    for runtime in ("torch", "onnx"):
        with pytest.raises(CheckpointError, match="outputs are out of range: a log-probability") as caught:
            load_evaluator(path, runtime=runtime, device="cpu")
        _one_line(caught.value, path)


def test_huge_finite_weights_are_a_one_line_error_in_evaluate_and_play(tmp_path, capsys, monkeypatch):
    """Torch plays such a net; its onnxruntime export rounds otherwise: evaluate.py and play.py
    ended in an OnnxCheckError traceback."""
    from gomoku.players import make_player

    huge = tmp_path / "huge.pt"
    save_model(huge, _net(9, 9, scale=HUGE_SCALE))
    load_model(huge)  # finite, in range on torch
    with pytest.raises(CheckpointError, match="does not compute the same on onnxruntime") as caught:
        make_player(f"az:{huge}:8")
    _one_line(caught.value, huge)
    evaluate = load_script("evaluate")
    assert evaluate.main(["--player", f"az:{huge}:8", "--opponent", "random", "--games", "2", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "does not compute the same on onnxruntime" in err and str(huge) in err
    pytest.importorskip("pygame")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("SDL_AUDIODRIVER", "dummy")
    assert load_script("play").main(["--model", str(huge)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "does not compute the same on onnxruntime" in err


# ---------------------------------------------------------------------------- training
def _smoke_run(tmp_path: Path):
    from gomoku.training.config import load_config
    from gomoku.training.pipeline import TrainPipeline
    from tests.test_crash import OVERRIDES

    evaluations = ["eval.check_freq=1", "eval.games=2", "eval.opponents=[]", "eval.select_by=ladder"]
    config = load_config(ROOT / "configs" / "smoke.yaml", OVERRIDES + evaluations)
    pipeline = TrainPipeline(config, tmp_path, device="cpu", progress=False)
    pipeline.run(max_iterations=2)
    assert (tmp_path / "best.pt").is_file()
    return TrainPipeline


def test_a_checkpoint_whose_conv1_is_scaled_by_1e30_is_refused_on_resume(tmp_path):
    """The issue's case: such a checkpoint (valid checksum) resumed, trained at a loss of 3.8e28
    with exit 0, and its net replaced best.pt."""
    pipeline_class = _smoke_run(tmp_path)
    payload = load_checkpoint(tmp_path / "checkpoint.pt", training=True)
    payload["model"]["conv1.weight"] = payload["model"]["conv1.weight"] * EXPLODED_SCALE
    save_checkpoint(tmp_path / "checkpoint.pt", {k: v for k, v in payload.items() if k != "format"})
    files = {name: (tmp_path / name).read_bytes() for name in ("checkpoint.pt", "best.pt", "current.pt")}
    with pytest.raises(CheckpointError, match="outputs are out of range.*cannot resume from it") as caught:
        pipeline_class(None, tmp_path, device="cpu", resume=True, progress=False)
    _one_line(caught.value, tmp_path / "checkpoint.pt")
    assert {name: (tmp_path / name).read_bytes() for name in files} == files


def test_an_exploding_loss_stops_the_run_and_keeps_its_best_model(tmp_path, monkeypatch):
    """conv1 scaled by 1e30 in the middle of an iteration's training: the loss (~1e28) is finite
    but above MAX_LOSS; the run stops with one line, at its last good checkpoint and best.pt."""
    from gomoku.training.updates import MAX_LOSS, TrainingDiverged

    pipeline_class = _smoke_run(tmp_path)
    files = {name: (tmp_path / name).read_bytes() for name in ("checkpoint.pt", "best.pt", "current.pt")}
    pipeline = pipeline_class(None, tmp_path, device="cpu", resume=True, progress=False)
    real_step = pipeline.trainer.train_step

    def exploding_step(*args, **kwargs):
        with torch.no_grad():
            pipeline.net.conv1.weight.mul_(EXPLODED_SCALE)
        return real_step(*args, **kwargs)

    monkeypatch.setattr(pipeline.trainer, "train_step", exploding_step)
    with pytest.raises(TrainingDiverged, match=f"iteration 3: the loss exploded to .* at update 1/1, above the "
                                               f"limit of {MAX_LOSS:g} .*stays at iteration 2") as caught:
        pipeline.run(max_iterations=1)
    assert "\n" not in str(caught.value)
    assert {name: (tmp_path / name).read_bytes() for name in files} == files
    assert not list(tmp_path.glob("*.pending-*"))


def test_a_net_with_outputs_out_of_range_is_never_written_as_best_pt(tmp_path):
    from gomoku.training.evaluation import EvalReport, MatchScore, write_model_files
    from gomoku.training.rundir import writing

    report = EvalReport(20, MatchScore("pure:20", 2, 0, 0, 1.0), (), new_best=True)
    with pytest.raises(ValueError, match="not written.*outputs are out of range"):
        write_model_files(tmp_path, _net(conv1=EXPLODED_SCALE), 4, report, 1, 4, writing)
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------- the export script
@pytest.mark.parametrize("int8", [False, True])
def test_the_export_scripts_batch_sizes_are_bounded(tmp_path, capsys, int8):
    from nets.onnx_export import MAX_CHECK_BATCH

    model = tmp_path / "m.pt"
    save_model(model, _net())
    script = load_script("export_onnx")
    with pytest.raises(SystemExit) as caught:
        script.main([str(model), str(tmp_path / "out.onnx"), "--batch-sizes", "100000000"] + ["--int8"] * int8)
    assert caught.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"--batch-sizes must be from 1 to {MAX_CHECK_BATCH}, got [100000000]" in err
    assert not (tmp_path / "out.onnx").exists()


def test_the_export_script_takes_its_output_as_out_too(tmp_path, capsys):
    model = tmp_path / "m.pt"
    save_model(model, _net())
    script = load_script("export_onnx")
    assert script.main([str(model), "--out", str(tmp_path / "option.onnx")]) == 0
    assert script.main([str(model), str(tmp_path / "positional.onnx")]) == 0
    assert OnnxEvaluator(tmp_path / "option.onnx").config == OnnxEvaluator(tmp_path / "positional.onnx").config
    with pytest.raises(SystemExit):
        script.main([str(model), str(tmp_path / "a.onnx"), "--out", str(tmp_path / "b.onnx")])
    assert "two outputs given" in capsys.readouterr().err
    assert not (tmp_path / "a.onnx").exists() and not (tmp_path / "b.onnx").exists()


def test_a_rule_that_does_not_fit_the_board_is_refused_at_save_and_export(tmp_path, capsys):
    """A model with n_in_row 99 exported with "check passed"; its loaders then cited ONNX metadata."""
    from nets.onnx_export import onnx_bytes

    with pytest.raises(ValueError, match=r"cannot write .*m99.pt: n_in_row must be a whole number from 1 to 5"):
        save_model(tmp_path / "m99.pt", _net(), n_in_row=99)
    assert not (tmp_path / "m99.pt").exists()
    with pytest.raises(OnnxExportError, match="n_in_row must be a whole number from 1 to 5"):
        onnx_bytes(_net(), n_in_row=99)
    path = tmp_path / "written-elsewhere.pt"  # a file written by something else
    save_checkpoint(path, {"net_config": NetConfig(width=5, height=5).to_dict(), "model": _net().state_dict(),
                           "n_in_row": 99})
    with pytest.raises(CheckpointError, match="has an invalid n_in_row: n_in_row must be") as caught:
        load_model(path)
    _one_line(caught.value, path)
    assert load_script("export_onnx").main([str(path), str(tmp_path / "out.onnx")]) == 2
    out = capsys.readouterr()
    assert "check passed" not in out.out and len(out.err.strip().splitlines()) == 1 and "n_in_row" in out.err
    assert not (tmp_path / "out.onnx").exists()
