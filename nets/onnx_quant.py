"""Static int8 quantisation of an exported model (``nets.onnx_export``) for onnxruntime on a CPU.

Weights are int8 per output channel; activations uint8 with one scale per tensor, set from the
value ranges (min-max) the model reaches on calibration planes that the caller gives, planes of
real positions (``Board.current_state()``) and of the board the net was made for. The graph is QDQ
(QuantizeLinear/DequantizeLinear pairs that onnxruntime fuses into integer kernels): uint8
activations with int8 weights is the pair that runs fast on AVX2 without VNNI (int8 activations run
slower than float32 there). The value head (the nodes that only the value output depends on) stays
float32: a small share of the work, and on a residual tower with pooled heads quantising it moved
some values by 0.17 where the rest of the net moves them by 0.08 at most. The result is serialised
bytes, with the model's metadata (net config, ``n_in_row``) kept and its checksum made anew
(``nets.onnx_export.seal``), that
``nets.onnx_evaluator.OnnxEvaluator`` runs. docs/engine.md has the speed and the agreement with
float32.
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

import numpy as np

from nets.checkpoint import first_line
from nets.model import IN_PLANES
from nets.onnx_export import INPUT_NAME, OUTPUT_NAMES, OnnxExportError, model_proto, require, seal

CALIBRATION_BATCH = 32  # planes per calibration run (the ranges are the same whatever the split)


def _no_preprocessing_advice(record: logging.LogRecord) -> bool:
    """Drops quantize_static's advice (on the root logger) to pre-process the model first: on these
    nets the pre-processed graph runs no faster."""
    return "pre-process" not in record.getMessage()


class _Planes:
    """onnxruntime's CalibrationDataReader protocol: the calibration planes, a batch at a time."""

    def __init__(self, planes: np.ndarray):
        self._batches = iter(np.array_split(planes, -(-len(planes) // CALIBRATION_BATCH)))

    def get_next(self) -> dict | None:
        batch = next(self._batches, None)
        return None if batch is None else {INPUT_NAME: np.ascontiguousarray(batch, dtype=np.float32)}


def value_head_nodes(graph) -> list[str]:
    """The names of the nodes of ``graph`` (an ONNX GraphProto) that the value output depends on and
    the policy output does not: the value head."""
    producer = {output: node for node in graph.node for output in node.output}

    def ancestors(tensor: str) -> set[str]:
        found, stack = set(), [tensor]
        while stack:
            node = producer.get(stack.pop())
            if node is not None and node.name not in found:
                found.add(node.name)
                stack.extend(node.input)
        return found

    policy, value = OUTPUT_NAMES
    return sorted(ancestors(value) - ancestors(policy))


def quantize_int8(model: bytes, calibration: np.ndarray) -> bytes:
    """``model`` (serialised ONNX, float32) statically quantised to int8 (see the module
    docstring), calibrated on ``calibration``: float planes [N, 4, H, W] of real positions, N >= 1.
    Raises ValueError for planes of the wrong shape, OnnxExportError when the model cannot be
    quantised."""
    require("onnxruntime")
    from onnxruntime.quantization import CalibrationMethod, QuantFormat, QuantType, quantize_static

    calibration = np.asarray(calibration)
    if calibration.ndim != 4 or calibration.shape[1] != IN_PLANES or len(calibration) == 0:
        raise ValueError(f"calibration planes must be an array [N, {IN_PLANES}, H, W] with N >= 1, "
                         f"got shape {calibration.shape}")
    source = model_proto(model)
    with tempfile.TemporaryDirectory(prefix="gomoku-int8-") as folder:
        float_path, int8_path = Path(folder, "float.onnx"), Path(folder, "int8.onnx")
        float_path.write_bytes(model)
        root = logging.getLogger()
        root.addFilter(_no_preprocessing_advice)
        try:
            quantize_static(str(float_path), str(int8_path), _Planes(calibration),
                            quant_format=QuantFormat.QDQ, per_channel=True,
                            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                            calibrate_method=CalibrationMethod.MinMax,
                            nodes_to_exclude=value_head_nodes(source.graph))
        except Exception as error:  # onnxruntime's and onnx's own types
            raise OnnxExportError(f"the model cannot be quantised to int8: {first_line(error)}") from error
        finally:
            root.removeFilter(_no_preprocessing_advice)
        quantised = model_proto(int8_path.read_bytes())
    del quantised.metadata_props[:]
    quantised.metadata_props.extend(source.metadata_props)
    quantised.producer_name = source.producer_name
    return seal(quantised)  # the checksum of the int8 graph, not the float one's
