"""The int8 export (nets.onnx_quant, gomoku.lab.int8) on the shipped model: the evaluator's
contract, the metadata kept, and the float32 net's top move wherever that move is clear."""

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime.quantization")

from gomoku.players import SHIPPED_MODEL  # noqa: E402
from gomoku.lab.int8 import calibration_planes, int8_model  # noqa: E402
from nets.checkpoint import load_model  # noqa: E402
from nets.loading import load_evaluator  # noqa: E402
from nets.onnx_evaluator import OnnxEvaluator  # noqa: E402
from nets.onnx_export import export_in_memory, model_proto, save_onnx  # noqa: E402
from nets.onnx_quant import quantize_int8, value_head_nodes  # noqa: E402
from tests.fakes import load_script  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
CLEAR_MARGIN = 0.1  # the float32 top prior leads the second by this much: int8 must pick it too
VALUE_TOLERANCE = 0.1  # int8 values on the shipped model: mean |diff| ~0.004, max ~0.08 over 5,800 positions
MEAN_VALUE_TOLERANCE = 0.02


@pytest.fixture(scope="module")
def models():
    net, n_in_row = load_model(SHIPPED_MODEL)
    float_model = export_in_memory(net, n_in_row)
    return net, n_in_row, float_model, int8_model(float_model, 9, 9, n_in_row)


@pytest.fixture(scope="module")
def positions():
    planes = calibration_planes(games=4, seed=1)
    legal = (planes[:, 0] + planes[:, 1]).reshape(len(planes), -1) == 0
    return planes, legal


def test_calibration_planes_are_positions_of_games():
    planes = calibration_planes(games=2, seed=3)
    assert planes.dtype == np.float32 and planes.shape[1:] == (4, 9, 9)
    stones = planes[:, 0].sum(axis=(1, 2)) + planes[:, 1].sum(axis=(1, 2))
    assert stones.min() == 2  # each game starts from a two-stone opening
    assert set(np.diff(stones)) <= {1, 2 - stones.max()}  # one stone a move; a drop at a new game
    assert np.array_equal(planes, calibration_planes(games=2, seed=3))


def test_int8_keeps_the_metadata_and_the_contract(models, positions):
    net, n_in_row, _, quantised = models
    evaluator = OnnxEvaluator(quantised)
    assert evaluator.config == net.config and evaluator.n_in_row == n_in_row
    planes, legal = positions
    priors, values = evaluator.evaluate_batch(planes, legal)
    assert priors.shape == legal.shape and values.shape == (len(planes),)
    assert np.all(priors[~legal] == 0) and np.all(priors >= 0)
    np.testing.assert_allclose(priors.sum(axis=1), 1.0, atol=1e-5)
    assert np.all(np.abs(values) <= 1)


def test_int8_agrees_with_float32_where_the_move_is_clear(models, positions):
    _, _, float_model, quantised = models
    planes, legal = positions
    float_priors, float_values = OnnxEvaluator(float_model).evaluate_batch(planes, legal)
    int8_priors, int8_values = OnnxEvaluator(quantised).evaluate_batch(planes, legal)
    ordered = np.sort(float_priors, axis=1)
    clear = ordered[:, -1] - ordered[:, -2] > CLEAR_MARGIN
    assert clear.sum() >= 20
    assert np.array_equal(float_priors[clear].argmax(axis=1), int8_priors[clear].argmax(axis=1))
    assert np.max(np.abs(float_values - int8_values)) < VALUE_TOLERANCE
    assert np.mean(np.abs(float_values - int8_values)) < MEAN_VALUE_TOLERANCE
    assert not np.array_equal(float_priors, int8_priors)  # it is another model, not a copy


def test_the_value_head_stays_float32(models):
    """Only the trunk and the policy head are quantised: the weights of the nodes that only the
    value depends on are float32 initialisers, the others' come out of DequantizeLinear."""
    _, _, float_model, quantised = models
    head = set(value_head_nodes(model_proto(float_model).graph))
    assert {"/heads/value_conv/Conv", "/heads/value_fc1/Gemm", "/heads/value_fc2/Gemm"} <= head
    assert not any("policy" in name or "tower" in name for name in head)
    graph = model_proto(quantised).graph
    floats = {tensor.name for tensor in graph.initializer if tensor.data_type == 1}  # TensorProto.FLOAT
    weighted = [node for node in graph.node if node.op_type in ("Conv", "Gemm")]
    assert {node.name for node in weighted if node.input[1] in floats} == {node.name for node in weighted} & head
    assert all(node.input[1].endswith("DequantizeLinear_Output") for node in weighted if node.name not in head)


def test_an_int8_file_loads_as_a_model(models, tmp_path):
    _, n_in_row, _, quantised = models
    loaded = load_evaluator(save_onnx(quantised, tmp_path / "int8.onnx"))
    assert loaded.runtime == "onnx" and loaded.n_in_row == n_in_row and loaded.config.width == 9


@pytest.mark.parametrize("shape", [(0, 4, 9, 9), (5, 3, 9, 9), (5, 4, 81)])
def test_bad_calibration_planes_are_refused(models, shape):
    with pytest.raises(ValueError, match="calibration planes"):
        quantize_int8(models[2], np.zeros(shape, dtype=np.float32))


def test_the_export_script_writes_the_int8_model(models, tmp_path, capsys):
    script = load_script("export_onnx")
    assert script.parse_args(["--int8"]).out == Path("models/9x9-int8.onnx")
    out = tmp_path / "9x9-int8.onnx"
    assert script.main(["--int8", SHIPPED_MODEL, str(out)]) == 0
    assert "int8" in capsys.readouterr().out
    assert out.read_bytes() == models[3]  # the same calibration: the same model


def test_the_committed_int8_file_is_the_shipped_model_quantised(models, positions):
    """models/9x9-int8.onnx (README: the window's search at 6.5x on it) belongs to models/9x9.pt:
    the same net config and rule, and the float32 net's top move wherever that move is clear."""
    net, n_in_row, float_model, _ = models
    committed = OnnxEvaluator(REPO_ROOT / "models" / "9x9-int8.onnx")
    assert committed.config == net.config and committed.n_in_row == n_in_row
    planes, legal = positions
    float_priors, _ = OnnxEvaluator(float_model).evaluate_batch(planes, legal)
    int8_priors, _ = committed.evaluate_batch(planes, legal)
    ordered = np.sort(float_priors, axis=1)
    clear = ordered[:, -1] - ordered[:, -2] > CLEAR_MARGIN
    assert clear.sum() >= 20
    assert np.array_equal(float_priors[clear].argmax(axis=1), int8_priors[clear].argmax(axis=1))
