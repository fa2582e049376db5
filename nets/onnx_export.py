"""Export a policy-value net to ONNX and check the export against torch.

The ONNX graph has one input and two outputs, with a dynamic batch dimension (and, for a net with
the pooled heads, which plays any board size, dynamic H and W: one file runs on 9x9 and 15x15):

    planes      float32 [B, 4, H, W]   the planes of ``Board.current_state()``
    log_policy  float32 [B, H*W]       log-probabilities over moves (``move = row * W + col``)
    value       float32 [B]            in [-1, 1], for the player to move

The net's config is stored in the model's metadata (key ``gomoku_zero.net_config``, JSON) so that
``nets.onnx_evaluator.OnnxEvaluator`` knows the board size, and a SHA-256 of the graph (its
weights and nodes) and of the rest of the metadata under ``gomoku_zero.sha256`` (``seal``): every
load checks it (``verify_onnx``), so that one changed byte in a weight is refused, not played. A
foreign file (without the key) is checked only by the load's probe of its outputs (``nets.probe``).
``onnx`` and ``onnxruntime`` are dependencies of the package, imported only when used.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import io
import json
import math
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from nets.checkpoint import atomic_write, first_line, n_in_row_problem
from nets.model import IN_PLANES, MAX_BOARD_SIDE, NetConfig
from nets.probe import random_planes  # the check's planes (long defined here: imported from here too)

INPUT_NAME = "planes"
OUTPUT_NAMES = ("log_policy", "value")
METADATA_KEY = "gomoku_zero.net_config"
N_IN_ROW_KEY = "gomoku_zero.n_in_row"
DIGEST_KEY = "gomoku_zero.sha256"  # of the graph and the other metadata (``seal``)
DEFAULT_OPSET = 17
OPSETS = range(7, 21)  # what the legacy (TorchScript) exporter writes and onnxruntime runs for these nets
CHECK_BATCH_SIZES = (1, 37)
MAX_CHECK_BATCH = 4096  # the largest batch of the check (4096 boards of 32x32 planes: 64 MiB)
CHECK_TOLERANCE = 1e-4  # float32 noise between two runtimes is ~1e-6; anything near this is a bug
CHECK_OTHER_SIDES = (9, 15)  # a pooled net is also checked on these square boards (beside its own)


class OnnxCheckError(RuntimeError):
    """The exported model does not compute what the torch net computes."""


class OnnxExportError(ValueError):
    """An export that cannot be made as asked (opset, exporter, output path), or a file that is
    not a usable ONNX model."""


def _name(model: str | os.PathLike | bytes) -> str:
    """How an error names a model: its path, or "the model" when it is in memory."""
    return "the model" if isinstance(model, bytes) else str(model)


@dataclass(frozen=True)
class CheckReport:
    batch_sizes: tuple[int, ...]
    max_log_policy_diff: float
    max_value_diff: float
    tolerance: float
    sizes: tuple[tuple[int, int], ...] = ()  # the (width, height) boards checked

    @property
    def ok(self) -> bool:
        return self.max_log_policy_diff <= self.tolerance and self.max_value_diff <= self.tolerance

    def __str__(self) -> str:
        boards = f" on {', '.join(f'{w}x{h}' for w, h in self.sizes)}" if self.sizes else ""
        return (f"batch sizes {list(self.batch_sizes)}{boards}: max |diff| log-policy {self.max_log_policy_diff:.2e}, "
                f"value {self.max_value_diff:.2e} (tolerance {self.tolerance:.0e})")


def require(module: str) -> None:
    """Raise a helpful ImportError when a dependency imported only on use is missing."""
    if importlib.util.find_spec(module) is None:
        raise ImportError(f"{module} is not installed: pip install onnx onnxruntime "
                          "(both are dependencies of the package: pip install -e .)")


def check_sizes(config: NetConfig) -> tuple[tuple[int, int], ...]:
    """The (width, height) boards an export of a net is checked on: its own, and for a net that
    plays any size CHECK_OTHER_SIDES too."""
    own = (config.width, config.height)
    others = [(side, side) for side in CHECK_OTHER_SIDES if config.head != "fc" and (side, side) != own]
    return (own, *others)


def _exporter(choice: str) -> str:
    if choice not in ("auto", "legacy", "dynamo"):
        raise ValueError(f"exporter must be auto, legacy or dynamo, got {choice!r}")
    has_onnxscript = importlib.util.find_spec("onnxscript") is not None
    if choice == "dynamo" and not has_onnxscript:
        raise OnnxExportError("the dynamo exporter needs the onnxscript package (pip install onnxscript); "
                              "the legacy exporter works without it")
    if choice == "auto":
        return "dynamo" if has_onnxscript else "legacy"
    return choice


def onnx_bytes(net: nn.Module, opset: int = DEFAULT_OPSET, exporter: str = "auto",
               n_in_row: int | None = None) -> bytes:
    """``net`` (in eval mode, on the CPU) as a serialised ONNX model with a dynamic batch size,
    its config (and ``n_in_row``, when given: the rule it was trained for) in the metadata.

    ``exporter``: "dynamo" needs the onnxscript package; "legacy" (torch.onnx's TorchScript
    exporter, ``dynamo=False``) works without it; "auto" picks dynamo when onnxscript is there
    and falls back to legacy if the dynamo export fails. Raises OnnxExportError for an opset
    outside OPSETS, a missing exporter, or an ``n_in_row`` that does not fit the net's board.
    Nothing is written to disk.
    """
    require("onnx")
    import onnx

    if isinstance(opset, bool) or not isinstance(opset, int) or opset not in OPSETS:
        raise OnnxExportError(f"opset must be from {OPSETS.start} to {OPSETS.stop - 1}, got {opset!r}")
    config: NetConfig = net.config
    problem = None if n_in_row is None else n_in_row_problem(n_in_row, config)
    if problem is not None:
        raise OnnxExportError(f"cannot export the net: {problem}")
    net = _cpu_copy(net)
    example = torch.from_numpy(random_planes(config, 2, np.random.default_rng(0)))
    kind = _exporter(exporter)
    model = None
    if kind == "dynamo":
        try:
            program = torch.onnx.export(net, (example,), dynamo=True, opset_version=opset, verbose=False,
                                        input_names=[INPUT_NAME], output_names=list(OUTPUT_NAMES),
                                        dynamic_shapes={"x": _dynamic_dims(config)})
            model = program.model_proto
        except Exception as error:
            if exporter != "auto":
                raise OnnxExportError(f"the dynamo ONNX export failed: {first_line(error)}") from error
            warnings.warn(f"dynamo ONNX export failed ({error}); using the legacy exporter")
    if model is None:
        buffer = io.BytesIO()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # the legacy exporter's notice
            warnings.simplefilter("ignore", FutureWarning)
            torch.onnx.export(net, (example,), buffer, dynamo=False, opset_version=opset, verbose=False,
                              input_names=[INPUT_NAME], output_names=list(OUTPUT_NAMES),
                              dynamic_axes=_dynamic_axes(config))
        model = onnx.load_model_from_string(buffer.getvalue())
    del model.metadata_props[:]
    entry = model.metadata_props.add()
    entry.key, entry.value = METADATA_KEY, json.dumps(config.to_dict())
    if n_in_row is not None:
        entry = model.metadata_props.add()
        entry.key, entry.value = N_IN_ROW_KEY, str(int(n_in_row))
    model.producer_name = "gomoku-zero"
    onnx.checker.check_model(model)
    return seal(model)


def model_digest(proto) -> str:
    """The SHA-256 (hex) of a ModelProto's graph (nodes and weights) and of its metadata other
    than DIGEST_KEY: what ``seal`` records under DIGEST_KEY."""
    digest = hashlib.sha256(proto.graph.SerializeToString(deterministic=True))
    for key, value in sorted((e.key, e.value) for e in proto.metadata_props if e.key != DIGEST_KEY):
        digest.update(f"\0{key}\0{value}".encode())
    return digest.hexdigest()


def seal(proto) -> bytes:
    """A ModelProto serialised with its ``model_digest`` under DIGEST_KEY (an older one replaced)."""
    kept = [(e.key, e.value) for e in proto.metadata_props if e.key != DIGEST_KEY]
    del proto.metadata_props[:]
    for key, value in kept:
        entry = proto.metadata_props.add()
        entry.key, entry.value = key, value
    digest = model_digest(proto)
    entry = proto.metadata_props.add()
    entry.key, entry.value = DIGEST_KEY, digest
    return proto.SerializeToString()


def verify_onnx(model: str | os.PathLike | bytes) -> bool:
    """Check an ONNX model's DIGEST_KEY against its content and that its weights are finite;
    OnnxExportError (one line, naming the file) when either fails. Returns whether the model
    records a digest (False: a foreign file, which only the load's probe of its outputs checks)."""
    proto = model_proto(model)
    recorded = {e.key: e.value for e in proto.metadata_props}.get(DIGEST_KEY)
    if recorded is not None and recorded != model_digest(proto):
        raise OnnxExportError(f"{_name(model)} is corrupt: the checksum of its weights ({DIGEST_KEY}) does not "
                              "match (a damaged or changed byte); use another copy or export it again")
    _check_finite_weights(proto, model)
    return recorded is not None


def _dynamic_axes(config: NetConfig) -> dict:
    """The legacy exporter's dynamic axes: the batch, and a pooled net's board (H, W, H*W)."""
    if config.head == "fc":
        return {INPUT_NAME: {0: "batch"}, OUTPUT_NAMES[0]: {0: "batch"}, OUTPUT_NAMES[1]: {0: "batch"}}
    return {INPUT_NAME: {0: "batch", 2: "height", 3: "width"}, OUTPUT_NAMES[0]: {0: "batch", 1: "moves"},
            OUTPUT_NAMES[1]: {0: "batch"}}


def _dynamic_dims(config: NetConfig) -> dict:
    """The dynamo exporter's dynamic dimensions of the input, as ``_dynamic_axes``."""
    from nets.model import MAX_BOARD_SIDE, MIN_POOLED_SIDE

    dims = {0: torch.export.Dim("batch")}
    if config.head != "fc":
        dims[2] = torch.export.Dim("height", min=MIN_POOLED_SIDE, max=MAX_BOARD_SIDE)
        dims[3] = torch.export.Dim("width", min=MIN_POOLED_SIDE, max=MAX_BOARD_SIDE)
    return dims


def export_onnx(net: nn.Module, path: str | os.PathLike, opset: int = DEFAULT_OPSET,
                exporter: str = "auto", n_in_row: int | None = None) -> Path:
    """Write ``onnx_bytes(net, ...)`` to ``path`` (``save_onnx``)."""
    path = Path(path)
    _check_output(path)
    return save_onnx(onnx_bytes(net, opset, exporter, n_in_row), path)


def _check_output(path: Path) -> None:
    if path.is_dir():
        raise OnnxExportError(f"{path} is a folder: give the file to write, e.g. {path / 'model.onnx'}")
    if path.exists() and not path.is_file():
        raise OnnxExportError(f"{path} is not a regular file (a device, a pipe): give the file to write")


def save_onnx(model: bytes, path: str | os.PathLike) -> Path:
    """Write a serialised model to ``path`` atomically (a temp file in its folder, then renamed:
    a file there is replaced whole or not at all). Raises OnnxExportError when ``path`` is a
    folder, OSError when it cannot be written."""
    path = Path(path)
    _check_output(path)
    atomic_write(path, lambda handle: handle.write(model))
    return path


def model_proto(model: str | os.PathLike | bytes):
    """The ModelProto of an ONNX file or of serialised bytes; OnnxExportError when it is not one."""
    require("onnx")
    import onnx

    try:
        if isinstance(model, bytes):
            return onnx.load_model_from_string(model)
        return onnx.load(str(model), load_external_data=False)
    except OSError:
        raise
    except Exception as error:  # protobuf's DecodeError and others
        raise OnnxExportError(f"{_name(model)} is not an ONNX model: "
                              f"{first_line(error)}") from error


def _metadata(model: str | os.PathLike | bytes) -> dict[str, str]:
    return {entry.key: entry.value for entry in model_proto(model).metadata_props}


def read_net_config(model: str | os.PathLike | bytes) -> NetConfig | None:
    """The net config stored in an exported model's metadata (None when absent); ``model`` is
    a path or the serialised model."""
    text = _metadata(model).get(METADATA_KEY)
    if text is None:
        return None
    try:
        return NetConfig(**json.loads(text))
    except (ValueError, TypeError) as error:
        raise OnnxExportError(f"{_name(model)} has an invalid "
                              f"{METADATA_KEY}: {first_line(error)}") from error


def onnx_available() -> bool:
    """Whether onnx and onnxruntime are installed (core dependencies, but a user may lack them)."""
    return all(importlib.util.find_spec(m) is not None for m in ("onnx", "onnxruntime"))


def read_n_in_row(model: str | os.PathLike | bytes) -> int | None:
    """The ``n_in_row`` rule recorded in an exported model's metadata (None when absent); a value
    that is not a number from 1 to the largest board side is an OnnxExportError."""
    text = _metadata(model).get(N_IN_ROW_KEY)
    if text is None:
        return None
    if not (text.isascii() and text.isdigit() and 1 <= int(text) <= MAX_BOARD_SIDE):
        raise OnnxExportError(f"{_name(model)} has an invalid {N_IN_ROW_KEY} {text!r} in its metadata "
                              f"(a number from 1 to {MAX_BOARD_SIDE})")
    return int(text)


def _check_finite_weights(proto, model: str | os.PathLike | bytes) -> None:
    """Raise OnnxExportError when a weight (an initializer) of ``proto``, the ModelProto of
    ``model``, is a NaN or an infinity."""
    from onnx import numpy_helper

    for tensor in proto.graph.initializer:
        array = numpy_helper.to_array(tensor)
        if array.dtype.kind == "f" and not np.isfinite(array).all():
            raise OnnxExportError(f"{_name(model)} holds non-finite "
                                  f"weights (NaN or infinity) in {tensor.name}: it cannot be used")


def export_in_memory(net: nn.Module, n_in_row: int | None = None) -> bytes:
    """``net`` exported to ONNX in memory and checked against torch: how a ``.pt`` model runs on
    onnxruntime (``onnxruntime.InferenceSession`` takes the bytes; no file is left behind, even
    by a killed process). Raises OnnxCheckError when the check fails."""
    model = onnx_bytes(net, n_in_row=n_in_row)
    check_onnx(net, model)
    return model


def onnx_session(model: str | os.PathLike | bytes, threads: int = 1):
    """An onnxruntime CPU session with ``threads`` intra-op threads (1: no thread pool overhead),
    for an ONNX file or a serialised model. OnnxExportError when onnxruntime cannot load it."""
    require("onnxruntime")
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3  # errors only
    try:
        return ort.InferenceSession(model if isinstance(model, bytes) else str(model), options,
                                    providers=["CPUExecutionProvider"])
    except Exception as error:  # onnxruntime raises its own types for a file it cannot run
        raise OnnxExportError(f"onnxruntime cannot run {_name(model)}: "
                              f"{first_line(error)}") from error


def _cpu_copy(net: nn.Module) -> nn.Module:
    """A copy of ``net`` on the CPU in eval mode: the caller's net (training, on a GPU) is left as it is."""
    return copy.deepcopy(net).to("cpu").eval()


def check_onnx(net: nn.Module, model: str | os.PathLike | bytes, batch_sizes=CHECK_BATCH_SIZES,
               tolerance: float = CHECK_TOLERANCE, seed: int = 0) -> CheckReport:
    """Compare the exported model (a path or the serialised bytes) with ``net`` on random boards
    (of each of ``check_sizes``); raise OnnxCheckError past ``tolerance``. A NaN or infinity on either side fails the check."""
    if not batch_sizes or any(isinstance(b, bool) or not isinstance(b, int) or not 1 <= b <= MAX_CHECK_BATCH
                              for b in batch_sizes):
        raise ValueError(f"the check's batch sizes must be whole numbers from 1 to {MAX_CHECK_BATCH}, "
                         f"got {list(batch_sizes)}")
    session = onnx_session(model)
    net = _cpu_copy(net)
    rng = np.random.default_rng(seed)
    policy_diffs, value_diffs = [], []
    for size in check_sizes(net.config):
        for batch in batch_sizes:
            planes = random_planes(net.config, batch, rng, size)
            with torch.inference_mode():
                log_policy, value = (t.numpy() for t in net(torch.from_numpy(planes)))
            try:
                onnx_log_policy, onnx_value = session.run(list(OUTPUT_NAMES), {INPUT_NAME: planes})
            except Exception as error:  # onnxruntime's own types: e.g. a board size the graph fixed
                raise OnnxCheckError(f"{_name(model)} cannot run a batch of {batch} on {size[0]}x{size[1]}: "
                                     f"{first_line(error)}") from error
            if onnx_log_policy.shape != log_policy.shape or onnx_value.shape != value.shape:
                raise OnnxCheckError(f"batch {batch}: ONNX output shapes {onnx_log_policy.shape}, "
                                     f"{onnx_value.shape} differ from torch's {log_policy.shape}, {value.shape}")
            policy_diffs.append(_max_abs_diff(onnx_log_policy, log_policy))
            value_diffs.append(_max_abs_diff(onnx_value, value))
    report = CheckReport(tuple(batch_sizes), max(policy_diffs), max(value_diffs), tolerance,
                         check_sizes(net.config))
    if not report.ok:
        raise OnnxCheckError(f"{_name(model)} does not match the torch net: {report}")
    return report


def _max_abs_diff(a: np.ndarray, b: np.ndarray) -> float:
    """The largest |a - b|; infinity when either holds a NaN or an infinity (never a pass)."""
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        return math.inf
    return float(np.max(np.abs(a - b), initial=0.0))
