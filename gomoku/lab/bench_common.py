"""What the speed figures share (``gomoku.lab.bench`` and ``bench_threats``): the settings,
the median timer, the untrained net the search figures run on, the machine's description."""

from __future__ import annotations

import os
import platform
import statistics
import time
from dataclasses import dataclass

import torch

from nets import NetConfig, NetEvaluator, build_net
from nets.onnx_export import onnx_available

# The classic AlphaZero-Gomoku on a 2-core CPU with torch 2.13 (shared/REFERENCE.md).
CLASSIC = {"pure_mcts_playouts_per_s": 300.0, "az_mcts_playouts_per_s": 1300.0, "selfplay_positions_per_s": 3.2}


@dataclass
class BenchSettings:
    repeats: int = 3
    pure_playouts: int = 1000
    az_playouts: int = 400
    selfplay_games: int = 4  # finished games per worker and run (with parallel_games in flight)
    ray: bool = False  # also time self-play on Ray actors, beside the process pool (needs ray)
    vcf_games: int = 4  # seeded games whose positions the VCF solver is timed on
    device: str = "cpu"


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def az_evaluator(s: BenchSettings, onnx: bool | None = None, threads: int = 1, int8: bool = False):
    """An untrained default net on the runtime the az player uses by default (``onnx`` None:
    onnxruntime when installed on a CPU, as ``from_checkpoint``), or on the one asked for
    (``threads``: onnxruntime's; ``int8``: its int8 export, ``gomoku.lab.int8``, on onnxruntime)."""
    net = build_net(NetConfig())
    if onnx is None:
        onnx = int8 or (onnx_available() and str(s.device).startswith("cpu"))
    if not onnx:
        return NetEvaluator(net, s.device)
    from nets.onnx_evaluator import OnnxEvaluator
    from nets.onnx_export import onnx_bytes

    model = onnx_bytes(net)
    if int8:
        from gomoku.lab.int8 import int8_model

        model = int8_model(model, net.config.width, net.config.height)
    return OnnxEvaluator(model, threads=threads)


def machine() -> dict:
    return {"cores": os.cpu_count(), "cpu": platform.processor() or platform.machine(),
            "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu",
            "torch": torch.__version__, "python": platform.python_version()}
