"""Train an AlphaZero gomoku player: python scripts/train.py --config configs/9x9.yaml"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gomoku.training.config import ConfigError, load_config  # noqa: E402


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--config", required=True, help="YAML config, e.g. configs/9x9.yaml")
    parser.add_argument("--run-dir", help="run directory (default runs/<config name>)")
    parser.add_argument("--resume", action="store_true", help="continue the run in --run-dir")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override a config value (repeatable), e.g. --set search.n_playout=200")
    parser.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: cuda when available)")
    parser.add_argument("--max-iterations", type=int, help="stop after this many iterations")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # Ctrl-C and a plain `kill` both stop the run cleanly after saving it (a shell starts background
    # jobs with SIGINT ignored, so put Python's handler back).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        config = load_config(args.config, args.set)
    except (ConfigError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    from gomoku.training.pipeline import TrainPipeline

    run_dir = args.run_dir or str(ROOT / "runs" / Path(args.config).stem)
    try:
        pipeline = TrainPipeline(config, run_dir, device=args.device, resume=args.resume,
                                 progress=not args.no_progress)
        pipeline.run(max_iterations=args.max_iterations)
    except KeyboardInterrupt:
        print(f"\ninterrupted; the run is saved in {run_dir} (continue with --resume)", file=sys.stderr)
        return 130
    except (FileExistsError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"done: {pipeline.games_played} games, run directory {run_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
