"""A Gomocup / Piskvork engine ("pbrain" protocol) on stdin/stdout.

    python scripts/pbrain.py                       # models/9x9.pt (pure MCTS if it is missing)
    python scripts/pbrain.py --model runs/9x9/best.pt --playouts 1600
    python scripts/pbrain.py --torch               # the same net on torch instead of onnxruntime
    python scripts/pbrain.py --opponent minimax:2  # any player spec plays instead of the net
    python scripts/pbrain.py --no-fallback         # refuse board sizes the model does not play

Managers that want a ``pbrain-*`` executable can run ``scripts/pbrain-gomoku-zero`` (same options).
Only protocol lines go to stdout; logs go to stderr. The engine searches for the time the manager
gives it (INFO timeout_turn / timeout_match / time_left), without a playout cap unless --playouts
asks for one, within INFO max_memory; docs/engine.md.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from gomoku.pbrain.engine import PbrainEngine
from gomoku.pbrain.loader import (AZ_PLAYOUTS, CLOCK_PURE, DEFAULT_MODEL, DEFAULT_THREADS,
                                  ENGINE_CACHE, ENGINE_LEAVES, PURE_PLAYOUTS, EngineOptions, remove_exports)
from gomoku.pbrain.server import configure_logging, serve
from gomoku.players import PLAYER_SPECS_HELP, SpecError, int8_export, parse_spec


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"player specs (--opponent, --fallback; not human):\n{PLAYER_SPECS_HELP}")
    parser.add_argument("--model", type=Path, metavar="PATH",
                        help=f"model or training checkpoint to play (default: {DEFAULT_MODEL} if it "
                             f"exists, played from its int8 export beside it, {int8_export(DEFAULT_MODEL).name}, "
                             f"on onnxruntime; else pure MCTS)")
    parser.add_argument("--playouts", type=int, metavar="N",
                        help=f"cap the search at N playouts a move (default: no cap under a clock, "
                             f"which then ends the search; without one {AZ_PLAYOUTS} with a model, "
                             f"{PURE_PLAYOUTS} for pure MCTS)")
    parser.add_argument("--opponent", "--player", dest="player_spec", metavar="SPEC",
                        help="play this player spec instead of the model (e.g. pure:1000, minimax:2)")
    parser.add_argument("--fallback", dest="fallback_spec", metavar="SPEC", default=CLOCK_PURE,
                        help=f"player for board sizes the model does not support (default: {CLOCK_PURE!r}, "
                             "pure MCTS for the clock's time, weak); e.g. pure:2000")
    parser.add_argument("--no-fallback", dest="fallback_spec", action="store_const", const=None,
                        help="answer START with ERROR for board sizes the model does not support")
    runtime = parser.add_mutually_exclusive_group()
    runtime.add_argument("--onnx", dest="onnx", action="store_true", default=True,
                         help="run the net with onnxruntime, as the players do (the default; a .pt model "
                              "is exported and checked at START). A --model ending in .onnx always runs this way")
    runtime.add_argument("--torch", dest="onnx", action="store_false",
                         help="run the net with torch instead of onnxruntime")
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS, metavar="N",
                        help=f"threads for the net (torch or onnxruntime; default {DEFAULT_THREADS}: more "
                             "only slow a one-position search down on a busy machine)")
    parser.add_argument("--leaves", type=int, default=ENGINE_LEAVES, metavar="N",
                        help=f"the model's search: leaves per net call (virtual loss; default {ENGINE_LEAVES}, "
                             "1 = the exact one-leaf search)")
    parser.add_argument("--cache", type=int, default=ENGINE_CACHE, metavar="N",
                        help=f"the model's search: positions whose net answers are remembered (default "
                             f"{ENGINE_CACHE}; 0 = none)")
    parser.add_argument("--pipeline", action=argparse.BooleanOptionalAction, default=False,
                        help="the model's search: run the net on a thread of its own beside the search (two "
                             "cores, with --leaves above 1) instead of on the search's thread (one core, the "
                             "default: faster here, docs/engine.md)")
    parser.add_argument("--seed", type=int, help="seed for the players' random choices")
    parser.add_argument("--no-shortcuts", action="store_true",
                        help="always search, even for a win in one or a forced block")
    parser.add_argument("--no-report", dest="report", action="store_false",
                        help="no MESSAGE line after each search (its playouts, time and value)")
    parser.add_argument("--verbose", action="store_true", help="debug logging on stderr")
    args = parser.parse_args(argv)
    if args.playouts is not None and args.playouts < 1:
        parser.error("--playouts must be at least 1")
    if args.threads < 1:
        parser.error("--threads must be at least 1")
    if args.seed is not None and args.seed < 0:
        parser.error(f"--seed must be at least 0, got {args.seed}")
    if args.leaves < 1 or args.cache < 0:
        parser.error("--leaves must be at least 1 and --cache at least 0")
    for spec in (args.player_spec, args.fallback_spec):
        if spec and spec.strip().startswith("human"):
            parser.error("the human player cannot run behind the protocol")
        if spec and spec.strip() != CLOCK_PURE:
            try:
                parse_spec(spec)
            except SpecError as error:  # its own line, not the list of valid forms
                parser.error(f"{error.problem} (see --help for the valid forms)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    configure_logging(args.verbose)
    if args.model is not None and not args.model.is_file():  # START will say so too, as the protocol wants
        logging.getLogger("pbrain").error("--model %s: no such file; START will be answered with ERROR", args.model)
    protocol_out = sys.stdout
    sys.stdout = sys.stderr  # a stray print from any library must not corrupt the protocol
    options = EngineOptions(model=args.model, playouts=args.playouts, player_spec=args.player_spec,
                            fallback_spec=args.fallback_spec, seed=args.seed,
                            shortcuts=not args.no_shortcuts, onnx=args.onnx, threads=args.threads,
                            report=args.report, leaves=args.leaves, cache=args.cache, pipeline=args.pipeline)
    try:
        serve(PbrainEngine(options), sys.stdin, protocol_out, hard_exit=True)
    except KeyboardInterrupt:  # Ctrl-C when run by hand: just go
        return 130
    return 0


def exit_now(code: int) -> None:
    """Exit without the interpreter's teardown: with torch loaded it takes a second or more (or
    aborts in a C++ destructor), and a manager waits for the engine to go after END."""
    remove_exports()
    logging.shutdown()
    for stream in (sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def run() -> None:
    """The command: main() on the command line's arguments, then out at once (exit_now)."""
    exit_now(main())


if __name__ == "__main__":
    run()
