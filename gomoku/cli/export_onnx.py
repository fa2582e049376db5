"""Export a model to ONNX, check it against torch, and optionally time both on the CPU.

    python scripts/export_onnx.py                          # models/9x9.pt -> models/9x9.onnx
    python scripts/export_onnx.py runs/9x9/best.pt /tmp/best.onnx
    python scripts/export_onnx.py runs/9x9/best.pt --out /tmp/best.onnx   # the same (as export_web.py --out)
    python scripts/export_onnx.py --bench                  # also: the file against torch, 1 thread (bench.py --onnx's figures)
    python scripts/export_onnx.py --int8                   # models/9x9.pt -> models/9x9-int8.onnx

The check runs the exported model (onnxruntime) and the torch net on random boards (batch sizes
1 and 37) before anything is written, and exits with status 1 (writing nothing) if the
log-policy or the value differ by more than the tolerance, or either is not finite. ``--int8``
then quantises the checked export (gomoku.lab.int8: faster on a CPU, not exact; docs/engine.md).
Needs onnx and onnxruntime. The output is never the model itself, a .pt path or a folder.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

from gomoku.cli import failed
from gomoku.players import SHIPPED_MODEL, int8_export

DEFAULT_MODEL = Path(SHIPPED_MODEL)
DEFAULT_OUT = Path("models/9x9.onnx")
EXIT_MISMATCH = 1
EXIT_USAGE = 2


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from nets.onnx_export import CHECK_TOLERANCE, DEFAULT_OPSET, MAX_CHECK_BATCH, OPSETS

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", nargs="?", type=Path, default=DEFAULT_MODEL,
                        help=f"model or training checkpoint (default {DEFAULT_MODEL})")
    parser.add_argument("out", nargs="?", type=Path, help="ONNX file to write (default: the model's "
                        f"path with .onnx, i.e. {DEFAULT_OUT} for the default model)")
    parser.add_argument("--out", dest="out_option", type=Path, metavar="OUT",
                        help="the ONNX file to write, as the positional OUT (export_web.py takes --out too)")
    parser.add_argument("--opset", type=int, default=DEFAULT_OPSET, help="ONNX opset version")
    parser.add_argument("--exporter", choices=("auto", "legacy", "dynamo"), default="auto",
                        help="torch.onnx exporter: dynamo needs onnxscript; auto uses it when present")
    parser.add_argument("--tolerance", type=float, default=CHECK_TOLERANCE,
                        help="largest max-abs difference of log-policy and value accepted")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 37], metavar="B",
                        help=f"batch sizes of the check (1 to {MAX_CHECK_BATCH})")
    parser.add_argument("--bench", action="store_true",
                        help="time single-position evaluation and a 400-playout search, torch vs the file written "
                             "(the figures of scripts/bench.py --onnx, gomoku.lab.bench_export)")
    parser.add_argument("--bench-playouts", type=int, default=400, help="playouts per move in the search bench")
    parser.add_argument("--bench-moves", type=int, default=12, help="moves searched in the search bench")
    parser.add_argument("--int8", action="store_true", help="write the int8 quantisation of the checked export, "
                        "calibrated on positions of seeded games (default output: the model's path with -int8.onnx)")
    args = parser.parse_args(argv)
    if args.out_option is not None:
        if args.out is not None and args.out != args.out_option:
            parser.error(f"two outputs given: {args.out} and --out {args.out_option}; give one")
        args.out = args.out_option
    if args.out is None:
        args.out = int8_export(args.model) if args.int8 else args.model.with_suffix(".onnx")
    if args.opset not in OPSETS:
        parser.error(f"--opset must be from {OPSETS.start} to {OPSETS.stop - 1}, got {args.opset}")
    if not all(1 <= batch <= MAX_CHECK_BATCH for batch in args.batch_sizes):
        parser.error(f"--batch-sizes must be from 1 to {MAX_CHECK_BATCH}, got {args.batch_sizes}")
    if not math.isfinite(args.tolerance) or args.tolerance < 0:
        parser.error(f"--tolerance must be a finite number >= 0, got {args.tolerance}")
    if args.bench_playouts < 1 or args.bench_moves < 1:
        parser.error("--bench-playouts and --bench-moves must be positive")
    return args


def output_problem(model: Path, out: Path) -> str | None:
    """Why ``out`` must not be written for ``model`` (it is the model itself, or a checkpoint's
    name, or a folder); None when it may."""
    if out.suffix.lower() == ".pt":
        return f"the output {out} ends in .pt, a checkpoint's name: give a .onnx path"
    if out.is_dir():
        return f"the output {out} is a folder: give the file to write, e.g. {out / 'model.onnx'}"
    if out.exists() and not out.is_file():
        return f"the output {out} is not a regular file (a device, a pipe): give the file to write"
    if out.exists() and model.exists() and os.path.samefile(model, out):
        return f"the output {out} is the model file itself: give another path"
    return None


# ---------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    problem = output_problem(args.model, args.out)
    if problem:
        return failed(problem, EXIT_USAGE)
    try:
        from nets import CheckpointError
        from nets.checkpoint import load_model
        from nets.onnx_export import OnnxCheckError, OnnxExportError, check_onnx, onnx_bytes, require, save_onnx
        require("onnx")
        require("onnxruntime")
    except ImportError as error:
        return failed(error, EXIT_USAGE)
    try:
        net, n_in_row = load_model(args.model)
        model = onnx_bytes(net, opset=args.opset, exporter=args.exporter, n_in_row=n_in_row)
    except (CheckpointError, OnnxExportError) as error:
        return failed(error, EXIT_USAGE)
    try:  # checked in memory first: a model that fails the check is not written
        report = check_onnx(net, model, batch_sizes=args.batch_sizes, tolerance=args.tolerance)
    except OnnxCheckError as error:
        print(f"CHECK FAILED (nothing written): {error}", file=sys.stderr)
        return EXIT_MISMATCH
    if args.int8:
        from gomoku.lab.int8 import int8_model

        try:
            model = int8_model(model, net.config.width, net.config.height, n_in_row)
        except OnnxExportError as error:
            return failed(error, EXIT_USAGE)
    try:
        save_onnx(model, args.out)
    except (OSError, OnnxExportError) as error:
        print(f"error: cannot write {args.out}: {getattr(error, 'strerror', None) or error}", file=sys.stderr)
        return EXIT_USAGE
    print(f"wrote {args.out} ({len(model) / 1024:.0f} KiB, {net.config.arch} "
          f"{net.config.width}x{net.config.height}, opset {args.opset}{', int8' if args.int8 else ''})")
    print(f"check passed{' (the float32 export, before int8)' if args.int8 else ''}: {report}")
    if args.bench:  # the file written is what is timed
        from gomoku.lab.bench_export import onnx_figures, onnx_lines

        runtime = "onnxruntime int8" if args.int8 else "onnxruntime"
        figures = onnx_figures(net, {runtime: args.out}, args.bench_playouts, args.bench_moves, n_in_row or 5)
        print("\n".join(onnx_lines(figures, args.bench_playouts, args.bench_moves)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
