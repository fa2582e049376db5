"""An evaluator for the search (``mcts.evaluators.Evaluator``) on onnxruntime.

Same contract and same output as ``nets.NetEvaluator`` on the torch net the model was exported
from (see ``nets.onnx_export``): priors over the legal moves, renormalised (uniform when the net
puts no mass on them), and values for the player to move. onnxruntime is imported on construction.
"""

from __future__ import annotations

import logging
import os

import numpy as np

from nets.checkpoint import first_line
from nets.evaluator import legal_priors
from nets.model import IN_PLANES, NetConfig, subnormals_as_zero
from nets.onnx_export import (INPUT_NAME, OUTPUT_NAMES, OnnxExportError, onnx_session, read_n_in_row,
                              read_net_config, verify_onnx)
from nets.probe import output_problem, probe_planes

log = logging.getLogger(__name__)


class OnnxEvaluator:
    """Evaluates batches with an exported model on the CPU (``threads`` intra-op threads).

    ``model`` is an ONNX file or the serialised model (``nets.onnx_export.export_in_memory``).
    Every load checks the model's checksum (``nets.onnx_export.verify_onnx``; a foreign file
    has none), that its weights are finite, and that its outputs on the probe positions
    (``nets.probe``) are finite and in range. A model that is not usable or fails a check
    raises ``nets.onnx_export.OnnxExportError`` (one line, naming the file)."""

    def __init__(self, model: str | os.PathLike | bytes, threads: int = 1):
        self.source = "an exported model in memory" if isinstance(model, bytes) else str(model)
        if not verify_onnx(model):
            log.info("%s records no checksum (not exported by this project): only its outputs are checked",
                     self.source)
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
        self._probe()

    def _probe(self) -> None:
        """OnnxExportError unless the outputs on the probe positions are finite and in range."""
        try:
            log_policy, value = self.session.run(list(OUTPUT_NAMES),
                                                 {INPUT_NAME: probe_planes(self.width, self.height)})
        except Exception as error:  # onnxruntime's own types: a graph that cannot run this board
            raise OnnxExportError(f"{self.source} cannot run a {self.width}x{self.height} board: "
                                  f"{first_line(error)}") from error
        problem = output_problem(log_policy, value)
        if problem is not None:
            raise OnnxExportError(f"{self.source}: the net's outputs are {problem} on the probe positions: "
                                  "its weights are broken")

    def evaluate_batch(self, planes: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        subnormals_as_zero()  # onnxruntime runs a 1-thread session on this thread
        x = np.ascontiguousarray(planes, dtype=np.float32)
        log_policy, value = self.session.run(list(OUTPUT_NAMES), {INPUT_NAME: x})
        return legal_priors(np.exp(log_policy), legal), value.astype(np.float64)
