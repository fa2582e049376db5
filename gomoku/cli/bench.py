"""Benchmark the hot paths: python scripts/bench.py [--json PATH] [--quick] [--search] [--variants] [--no-ray] [--vct [--model PATH]]
[--selfplay [--config PATH] [--set SECTION.KEY=VALUE] [--ray-nodes N | --variants]] [--tactics [--model PATH]]
[--onnx [--model PATH]] [--web MOVES [--model PATH]] [--engine COMMAND ... [--turn MS]]"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from gomoku.cli import REPO_ROOT, failed
from gomoku.players import SHIPPED_MODEL

EXIT_FAILED = 1  # a figure that could not be made (--onnx, --web)
RAY_NODES = 2  # --ray-nodes: the local Ray cluster of --selfplay, as the tests start it
ENGINE_TURN_MS = 1000  # --engine: the turn time, as the clock matches play
DEFAULT_MODEL = REPO_ROOT / SHIPPED_MODEL  # --tactics: the net of its self-play figures; --onnx, --web: the model exported


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", help="also write the figures to this JSON file")
    parser.add_argument("--quick", action="store_true", help="fewer repeats and self-play games (the search and VCF/VCT figures still run in full: "
                        "minutes, not seconds)")
    parser.add_argument("--device", default=None,
                        help="device for the net figures and in-process self-play (cpu, cuda; "
                             "default: cuda when available)")
    parser.add_argument("--repeats", type=int, default=None, metavar="N",
                        help="runs of each figure, the median kept (default 3, 1 with --quick); with --search, "
                             "N rounds of every figure in turn: more on a machine whose speed wanders")
    parser.add_argument("--search", action="store_true",
                        help="only the single-game search figures (one lever at a time, beside the classic's "
                             "search structure)")
    parser.add_argument("--variants", action="store_true",
                        help="also compare self-play layouts (one process or one per core; torch, onnx, "
                             "an inference server; on CUDA also per-worker CUDA nets); with --selfplay, only them")
    parser.add_argument("--ray", action=argparse.BooleanOptionalAction, default=None,
                        help="also time self-play on Ray actors beside the process pool, same config "
                             "(default: on, off with --quick; needs pip install -e \".[ray]\")")
    parser.add_argument("--vct", action="store_true",
                        help="only the VCT solver's figures: per call at several budgets, per move, per self-play position")
    parser.add_argument("--model", default=None, help="with --vct: also time moves with this model's net; with "
                        "--tactics: the net of the self-play figures; with --onnx or --web: the model exported "
                        "(default models/9x9.pt)")
    parser.add_argument("--tactics", action="store_true",
                        help="only the compiled tactics against the reference: per solver call on the calls self-play "
                        "makes, and self-play positions/s with each, with the net and with a free constant evaluator")
    parser.add_argument("--onnx", action="store_true",
                        help="only the ONNX export's figures: the model on torch, on onnxruntime and as its int8 "
                             "export, one thread (a position's latency, a 400-playout single-game search of 12 "
                             "moves, 2 with --quick)")
    parser.add_argument("--web", type=int, metavar="MOVES",
                        help="only the browser page's figures: MOVES moves of its AI at 400 playouts in headless "
                             "Chromium (needs chromium)")
    parser.add_argument("--engine", action="append", default=[], metavar="COMMAND",
                        help="only the engine's playouts/s under its clock, through the protocol, on middle-game "
                             "positions of real games; repeatable, the engines take turns (e.g. --engine "
                             "scripts/pbrain.py --engine 'scripts/pbrain.py --pipeline'); --repeats rounds")
    parser.add_argument("--turn", type=int, default=None, metavar="MS",
                        help=f"with --engine: the turn time (default {ENGINE_TURN_MS} ms)")
    parser.add_argument("--selfplay", action="store_true",
                        help="only the self-play figures of --config: the process pool, then Ray actors")
    parser.add_argument("--config", default=None, help="with --selfplay: the run config (default: the defaults, 9x9)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="with --selfplay: override a key of that config (repeatable), e.g. --set "
                             "search.n_playout=100; with --variants too, every layout plays that config")
    parser.add_argument("--ray-nodes", type=int, default=RAY_NODES,
                        help="with --selfplay: Ray actors on a local cluster of this many one-CPU nodes, as the "
                             "tests start it (0: no Ray figure; default 2)")
    args = parser.parse_args(argv)
    if args.repeats is not None and args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")
    if args.set and not args.selfplay:
        parser.error("--set needs --selfplay (it changes the config of the self-play figures)")
    if args.ray_nodes < 0:
        parser.error(f"--ray-nodes must be 0 (no Ray figure) or more, got {args.ray_nodes}")
    exports = args.onnx or args.web is not None
    if args.model is not None and not (args.vct or args.tactics or exports):
        parser.error("--model needs --vct, --tactics, --onnx or --web (it times their moves with its net)")
    if args.web is not None and args.web < 1:
        parser.error(f"--web needs at least 1 move, got {args.web}")
    alone = [name for name, given in (("--tactics", args.tactics), ("--onnx", args.onnx), ("--web", args.web is not None),
                                      ("--engine", bool(args.engine))) if given]
    if alone and (len(alone) > 1 or args.search or args.vct or args.selfplay or args.variants or args.ray is not None):
        parser.error(f"{alone[0]} goes alone (with " + ("--turn, --repeats" if alone[0] == "--engine" else "--model, --quick")
                     + ", --json)")
    if args.turn is not None and not args.engine:
        parser.error("--turn needs --engine (the turn time of its engines)")
    if args.turn is not None and args.turn < 1:
        parser.error(f"--turn must be at least 1 ms, got {args.turn}")
    if args.engine and (problem := next((f"--engine {c!r}: not an engine command" for c in args.engine
                                         if not c.split()), None)):
        parser.error(problem)
    if alone and args.model is None and not args.engine:
        args.model = str(DEFAULT_MODEL)
    if not args.selfplay and (args.config is not None or args.ray_nodes != RAY_NODES):
        parser.error("--config and --ray-nodes need --selfplay (the figures of one run config)")
    if (args.search or args.vct) and (args.variants or args.ray is not None):
        parser.error("--variants and --ray go with the full bench or --selfplay, not --search or --vct")
    from gomoku.matches.outputs import output_problem
    from gomoku.training.backends.actors import device_error
    from gomoku.lab.bench import BenchSettings, machine, run_all, run_search
    from gomoku.lab.bench_threats import model_evaluator, run_vct
    from nets import default_device
    from nets.checkpoint import first_line

    if args.device is not None and (problem := device_error(args.device)):
        parser.error(problem)
    if args.json and (problem := output_problem(Path(args.json))):  # before the figures, not after them
        parser.error(problem)
    evaluator = None
    if args.model is not None and not exports:  # loaded before any figure: a bad file fails at once
        try:
            evaluator = model_evaluator(args.model)
        except (ValueError, ImportError) as error:
            parser.error(f"--model: {first_line(error)}")

    args.device = args.device or str(default_device())

    ray = not args.quick if args.ray is None else args.ray
    settings = BenchSettings(device=args.device, ray=ray)
    if args.quick:
        settings = BenchSettings(repeats=1, selfplay_games=1, device=args.device, ray=ray)
    if args.repeats is not None:
        settings = dataclasses.replace(settings, repeats=args.repeats)
    if args.search:
        results = {"machine": machine(), "settings": settings.__dict__.copy(), **run_search(settings)}
    elif args.engine:
        from gomoku.lab.bench_engine import POSITIONS_FILE, middle_game_positions, run_engines

        positions = middle_game_positions(REPO_ROOT / POSITIONS_FILE)
        results = {"machine": machine(), "positions_file": str(POSITIONS_FILE),
                   **run_engines(args.engine, positions, args.turn or ENGINE_TURN_MS, settings.repeats)}
    elif args.selfplay:
        from gomoku.lab.bench import bench_selfplay_variants, run_selfplay
        from gomoku.training.config import ConfigError, load_config

        try:
            config = load_config(args.config, args.set)
        except ConfigError as error:  # an unreadable file too
            parser.error(str(error))
        settings = dataclasses.replace(settings, ray=args.ray is not False and args.ray_nodes > 0 and not args.variants)
        results = {"machine": machine(), "settings": settings.__dict__.copy(), "config": args.config,
                   "overrides": args.set}
        if args.variants:  # only the layouts, each on this config
            results["selfplay_variants_positions_per_s"] = bench_selfplay_variants(settings, config_path=args.config,
                                                                                   overrides=args.set)
        else:
            results.update(run_selfplay(settings, config, 0 if args.ray is False else args.ray_nodes))
    elif args.vct:
        results = run_vct(settings, model=args.model, evaluator=evaluator)
    elif args.tactics:
        from gomoku.lab.bench_tactics import run_tactics

        results = run_tactics(settings, evaluator, args.model)
    elif exports:
        from gomoku.lab.bench_export import QUICK_MOVES, SEARCH_MOVES, run_onnx, run_web
        from gomoku.web.browser import BrowserError

        try:  # a model the export refuses (ValueError), no Chromium for the page
            results = (run_onnx(args.model, QUICK_MOVES if args.quick else SEARCH_MOVES) if args.onnx
                       else run_web(args.model, args.web))
        except (ValueError, BrowserError) as error:
            return failed(first_line(error), EXIT_FAILED)
    else:
        results = run_all(settings, variants=args.variants)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
