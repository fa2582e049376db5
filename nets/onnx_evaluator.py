"""An evaluator for the search (``mcts.evaluators.Evaluator``) on onnxruntime.

Same contract and same output as ``nets.NetEvaluator`` on the torch net the model was exported
from (see ``nets.onnx_export``): priors over the legal moves, renormalised (uniform when the net
puts no mass on them), and values for the player to move. onnxruntime is imported on construction.
"""

from __future__ import annotations

import os

import numpy as np

from nets.evaluator import legal_priors
from nets.model import IN_PLANES, NetConfig, subnormals_as_zero
from nets.onnx_export import (INPUT_NAME, OUTPUT_NAMES, OnnxExportError, check_finite, onnx_session, read_n_in_row,
                              read_net_config)


class OnnxEvaluator:
    """Evaluates batches with an exported model on the CPU (``threads`` intra-op threads).

    ``model`` is an ONNX file or the serialised model (``nets.onnx_export.export_in_memory``).
    A file that is not a usable model, or holds NaN weights, raises ``nets.onnx_export.OnnxExportError`` (one line)."""

    def __init__(self, model: str | os.PathLike | bytes, threads: int = 1):
        self.source = "an exported model in memory" if isinstance(model, bytes) else str(model)
        if not isinstance(model, bytes):  # bytes come from a net checked on loading
            check_finite(model)
        self.config: NetConfig | None = read_net_config(model)
        self.n_in_row: int | None = read_n_in_row(model)  # the rule it was trained for, if recorded
        self.session = onnx_session(model, threads)
        inputs, outputs = self.session.get_inputs(), [o.name for o in self.session.get_outputs()]
        if ([i.name for i in inputs] != [INPUT_NAME] or len(inputs[0].shape) != 4 or inputs[0].shape[1] != IN_PLANES
                or outputs != list(OUTPUT_NAMES)):
            raise OnnxExportError(
                f"{self.source} is not a policy-value net of this project: expected the input {INPUT_NAME} "
                f"[batch, {IN_PLANES}, H, W] and the outputs {', '.join(OUTPUT_NAMES)}, got "
                f"{', '.join(f'{i.name} {i.shape}' for i in inputs)} -> {', '.join(outputs)}")
        # The board it was made for: its config's (a pooled net plays others too: config.plays),
        # else the input's fixed [batch, 4, H, W] shape.
        if self.config is not None:
            self.height, self.width = self.config.height, self.config.width
        else:
            shape = self.session.get_inputs()[0].shape  # batch is symbolic
            if not all(isinstance(n, int) for n in shape[2:4]):
                raise OnnxExportError(f"{self.source} records no net config and its board size is not fixed "
                                      f"({shape[2]}x{shape[3]}): export it with scripts/export_onnx.py")
            self.height, self.width = (int(n) for n in shape[2:4])

    def evaluate_batch(self, planes: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        subnormals_as_zero()  # onnxruntime runs a 1-thread session on this thread
        x = np.ascontiguousarray(planes, dtype=np.float32)
        log_policy, value = self.session.run(list(OUTPUT_NAMES), {INPUT_NAME: x})
        return legal_priors(np.exp(log_policy), legal), value.astype(np.float64)
