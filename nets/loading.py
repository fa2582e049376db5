"""From a model file to an evaluator the search can use: the one loader behind every player that
plays a model (``az:`` players, the window, the Gomocup engine).

A ``.onnx`` file runs on onnxruntime. A ``.pt`` model or training checkpoint runs where
``runtime`` says: "torch", "onnx" (exported in memory and checked against torch first; the
export of a file is kept for the next load of the same file), or "auto" = onnx on a CPU when
onnxruntime is installed (about twice as fast for one position at a time), torch otherwise.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from nets.model import NetConfig

log = logging.getLogger(__name__)

RUNTIMES = ("auto", "torch", "onnx")  # where a .pt net runs on the CPU

_exports: dict[tuple[Path, int], tuple[bytes, int]] = {}  # (file, mtime) -> (its ONNX export, n_in_row)


@dataclass(frozen=True)
class LoadedNet:
    """A model ready for the search: ``evaluator.evaluate_batch(planes, legal) -> (priors, values)``."""

    evaluator: object
    config: NetConfig | None  # None: an exported model that records no config
    n_in_row: int  # the rule the net was trained for (5 for files that record none)
    runtime: str  # "torch" or "onnx"


def load_evaluator(path: str | os.PathLike, runtime: str = "auto", device: str | None = None,
                   threads: int = 1) -> LoadedNet:
    """The model at ``path`` as an evaluator. ``threads``: onnxruntime's intra-op threads (1 where
    several searches share the cores). Raises ValueError for a bad runtime or a bad file
    (``CheckpointError``), ImportError when onnxruntime is asked for and missing."""
    if runtime not in RUNTIMES:
        raise ValueError(f"runtime must be one of {', '.join(RUNTIMES)}, got {runtime!r}")
    from nets.checkpoint import DEFAULT_N_IN_ROW

    path = Path(path)
    if path.suffix.lower() == ".onnx":
        from nets.checkpoint import CheckpointError
        from nets.onnx_export import require

        if not path.is_file():
            raise CheckpointError(f"no checkpoint at {path}")

        require("onnxruntime")
        from nets.onnx_evaluator import OnnxEvaluator

        evaluator = OnnxEvaluator(path, threads=threads)
        n_in_row = evaluator.n_in_row
        if n_in_row is None:
            log.info("%s records no n_in_row: assuming %d in a row", path, DEFAULT_N_IN_ROW)
            n_in_row = DEFAULT_N_IN_ROW
        return LoadedNet(evaluator, evaluator.config, n_in_row, "onnx")
    from nets.checkpoint import load_model
    from nets.model import default_device

    device = device or default_device()
    if _use_onnx(runtime, device):
        from nets.onnx_evaluator import OnnxEvaluator

        exported, n_in_row = _export(path)
        evaluator = OnnxEvaluator(exported, threads=threads)
        return LoadedNet(evaluator, evaluator.config, n_in_row, "onnx")
    from nets.evaluator import NetEvaluator

    net, n_in_row = load_model(path)
    return LoadedNet(NetEvaluator(net, device), net.config, n_in_row, "torch")


def forget_exports() -> None:
    """Drop the kept in-memory exports."""
    _exports.clear()


def _export(path: Path) -> tuple[bytes, int]:
    """The model's ONNX export (checked against torch) and its n_in_row, made once per file version;
    a failed check is a CheckpointError naming the file."""
    from nets.checkpoint import CheckpointError, first_line, load_model
    from nets.onnx_export import OnnxCheckError, export_in_memory, require

    require("onnx")
    require("onnxruntime")
    try:
        key = (path.resolve(), path.stat().st_mtime_ns)
    except OSError:  # load_model names what is wrong with the path
        key = None
    if key is None or key not in _exports:
        net, n_in_row = load_model(path)
        try:
            exported = export_in_memory(net, n_in_row), n_in_row
        except OnnxCheckError as error:  # extreme weights: torch's and onnxruntime's float rounding differ
            raise CheckpointError(f"{path}: the net does not compute the same on onnxruntime as on torch "
                                  f"({first_line(error)}): its weights are broken or extreme") from error
        if key is None:
            return exported
        _exports[key] = exported
    return _exports[key]


def _use_onnx(runtime: str, device: str) -> bool:
    if runtime == "torch" or not str(device).startswith("cpu"):
        return False
    if runtime == "onnx":
        return True
    from nets.onnx_export import onnx_available

    return onnx_available()
