"""Export a policy-value net to ONNX and check the export against torch.

The ONNX graph has one input and two outputs, with a dynamic batch dimension:

    planes      float32 [B, 4, H, W]   the planes of ``Board.current_state()``
    log_policy  float32 [B, H*W]       log-probabilities over moves (``move = row * W + col``)
    value       float32 [B]            in [-1, 1], for the player to move

The net's config is stored in the model's metadata (key ``gomoku_zero.net_config``, JSON) so that
``nets.onnx_evaluator.OnnxEvaluator`` knows the board size. ``onnx`` and ``onnxruntime`` are
optional dependencies (``pip install -e .[onnx]``) and are imported only when used.
"""

from __future__ import annotations

import importlib.util
import json
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from nets.model import IN_PLANES, NetConfig

INPUT_NAME = "planes"
OUTPUT_NAMES = ("log_policy", "value")
METADATA_KEY = "gomoku_zero.net_config"
N_IN_ROW_KEY = "gomoku_zero.n_in_row"
DEFAULT_OPSET = 17
CHECK_BATCH_SIZES = (1, 37)
CHECK_TOLERANCE = 1e-4  # float32 noise between two runtimes is ~1e-6; anything near this is a bug


class OnnxCheckError(RuntimeError):
    """The exported model does not compute what the torch net computes."""


@dataclass(frozen=True)
class CheckReport:
    batch_sizes: tuple[int, ...]
    max_log_policy_diff: float
    max_value_diff: float
    tolerance: float

    @property
    def ok(self) -> bool:
        return self.max_log_policy_diff <= self.tolerance and self.max_value_diff <= self.tolerance

    def __str__(self) -> str:
        return (f"batch sizes {list(self.batch_sizes)}: max |diff| log-policy {self.max_log_policy_diff:.2e}, "
                f"value {self.max_value_diff:.2e} (tolerance {self.tolerance:.0e})")


def require(module: str) -> None:
    """Raise a helpful ImportError when an optional dependency is missing."""
    if importlib.util.find_spec(module) is None:
        raise ImportError(f"{module} is not installed: pip install onnx onnxruntime "
                          "(or pip install -e '.[onnx]')")


def random_planes(config: NetConfig, batch: int, rng: np.random.Generator) -> np.ndarray:
    """Plausible input planes: random positions with 0..H*W-1 stones, the colours alternating."""
    size = config.width * config.height
    planes = np.zeros((batch, IN_PLANES, size), dtype=np.float32)
    for i in range(batch):
        n_moves = int(rng.integers(0, size))
        moves = rng.permutation(size)[:n_moves]
        to_move_is_first = n_moves % 2 == 0
        first, second = moves[0::2], moves[1::2]
        own, theirs = (first, second) if to_move_is_first else (second, first)
        planes[i, 0, own] = 1.0
        planes[i, 1, theirs] = 1.0
        if n_moves:
            planes[i, 2, moves[-1]] = 1.0
        planes[i, 3] = float(to_move_is_first)
    return planes.reshape(batch, IN_PLANES, config.height, config.width)


def _exporter(choice: str) -> str:
    if choice not in ("auto", "legacy", "dynamo"):
        raise ValueError(f"exporter must be auto, legacy or dynamo, got {choice!r}")
    if choice == "auto":
        return "dynamo" if importlib.util.find_spec("onnxscript") is not None else "legacy"
    return choice


def export_onnx(net: nn.Module, path: str | os.PathLike, opset: int = DEFAULT_OPSET,
                exporter: str = "auto", n_in_row: int | None = None) -> Path:
    """Write ``net`` (in eval mode, on the CPU) to ``path`` as ONNX with a dynamic batch size.

    ``n_in_row``, when given, is recorded in the metadata (``gomoku_zero.n_in_row``): the rule the
    net was trained for.

    ``exporter``: "dynamo" needs the onnxscript package; "legacy" (torch.onnx's TorchScript
    exporter, ``dynamo=False``) works without it; "auto" picks dynamo when onnxscript is there
    and falls back to legacy if the dynamo export fails.
    """
    require("onnx")
    import onnx

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    config: NetConfig = net.config
    net = net.to("cpu").eval()
    example = torch.from_numpy(random_planes(config, 2, np.random.default_rng(0)))
    kind = _exporter(exporter)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        if kind == "dynamo":
            try:
                torch.onnx.export(net, (example,), str(tmp), dynamo=True, opset_version=opset,
                                  input_names=[INPUT_NAME], output_names=list(OUTPUT_NAMES),
                                  dynamic_shapes={"x": {0: torch.export.Dim("batch")}},
                                  external_data=False)
            except Exception as error:
                if exporter != "auto":
                    raise
                warnings.warn(f"dynamo ONNX export failed ({error}); using the legacy exporter")
                kind = "legacy"
        if kind == "legacy":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # the legacy exporter's notice
                warnings.simplefilter("ignore", FutureWarning)
                torch.onnx.export(net, (example,), str(tmp), dynamo=False, opset_version=opset,
                                  input_names=[INPUT_NAME], output_names=list(OUTPUT_NAMES),
                                  dynamic_axes={INPUT_NAME: {0: "batch"}, OUTPUT_NAMES[0]: {0: "batch"},
                                                OUTPUT_NAMES[1]: {0: "batch"}})
        model = onnx.load(str(tmp))
        del model.metadata_props[:]
        entry = model.metadata_props.add()
        entry.key, entry.value = METADATA_KEY, json.dumps(config.to_dict())
        if n_in_row is not None:
            entry = model.metadata_props.add()
            entry.key, entry.value = N_IN_ROW_KEY, str(int(n_in_row))
        model.producer_name = "gomoku-zero"
        onnx.checker.check_model(model)
        onnx.save(model, str(tmp))
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def read_net_config(path: str | os.PathLike) -> NetConfig | None:
    """The net config stored in an exported model's metadata (None when absent)."""
    require("onnx")
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    for entry in model.metadata_props:
        if entry.key == METADATA_KEY:
            return NetConfig(**json.loads(entry.value))
    return None


def onnx_available() -> bool:
    """Whether onnx and onnxruntime are installed (core dependencies, but a user may lack them)."""
    return all(importlib.util.find_spec(m) is not None for m in ("onnx", "onnxruntime"))


def read_n_in_row(path: str | os.PathLike) -> int | None:
    """The ``n_in_row`` rule recorded in an exported model's metadata (None when absent)."""
    require("onnx")
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    for entry in model.metadata_props:
        if entry.key == N_IN_ROW_KEY and entry.value.isdigit():
            return int(entry.value)
    return None


_temporary_folders: list[str] = []


def remove_temporary_exports() -> None:
    """Delete the folders of ``export_temporary`` now (also done at exit)."""
    import shutil

    while _temporary_folders:
        shutil.rmtree(_temporary_folders.pop(), ignore_errors=True)


def export_temporary(net: nn.Module, n_in_row: int | None = None) -> Path:
    """Export ``net`` into a new temporary folder (deleted at exit) and check it against torch:
    how a ``.pt`` model runs on onnxruntime. Raises OnnxCheckError when the check fails."""
    import atexit
    import tempfile

    folder = tempfile.mkdtemp(prefix="gomoku-zero-onnx-")
    if not _temporary_folders:
        atexit.register(remove_temporary_exports)
    _temporary_folders.append(folder)
    path = export_onnx(net, Path(folder) / "model.onnx", n_in_row=n_in_row)
    check_onnx(net, path)
    return path


def onnx_session(path: str | os.PathLike, threads: int = 1):
    """An onnxruntime CPU session with ``threads`` intra-op threads (1: no thread pool overhead)."""
    require("onnxruntime")
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3  # errors only
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def check_onnx(net: nn.Module, path: str | os.PathLike, batch_sizes=CHECK_BATCH_SIZES,
               tolerance: float = CHECK_TOLERANCE, seed: int = 0) -> CheckReport:
    """Compare the exported model with ``net`` on random boards; raise OnnxCheckError past ``tolerance``."""
    session = onnx_session(path)
    net = net.to("cpu").eval()
    rng = np.random.default_rng(seed)
    policy_diff = value_diff = 0.0
    for batch in batch_sizes:
        planes = random_planes(net.config, batch, rng)
        with torch.inference_mode():
            log_policy, value = (t.numpy() for t in net(torch.from_numpy(planes)))
        onnx_log_policy, onnx_value = session.run(list(OUTPUT_NAMES), {INPUT_NAME: planes})
        if onnx_log_policy.shape != log_policy.shape or onnx_value.shape != value.shape:
            raise OnnxCheckError(f"batch {batch}: ONNX output shapes {onnx_log_policy.shape}, {onnx_value.shape} "
                                 f"differ from torch's {log_policy.shape}, {value.shape}")
        policy_diff = max(policy_diff, float(np.max(np.abs(onnx_log_policy - log_policy))))
        value_diff = max(value_diff, float(np.max(np.abs(onnx_value - value))))
    report = CheckReport(tuple(batch_sizes), policy_diff, value_diff, tolerance)
    if not report.ok:
        raise OnnxCheckError(f"{path} does not match the torch net: {report}")
    return report
