"""Ablations at equal wall time: train each variant of a config for the same minutes, rate each.

    python scripts/ablate.py --config configs/9x9.yaml --minutes 60 --root runs/ablation \\
        --variant "no-vcf search.vcf=false" --variant "classic-reuse train.sample_reuse=0" \\
        --opponent pure:5000 --opponent minimax:3 --games 20 --workers 2

A variant is a name (its run directory under --root) and ``section.key=value`` overrides. Run it
again to go on after a stop: finished variants are kept, an unfinished run is resumed.
``ROOT/ablation.json`` holds the results; the table is printed at the end.
"""

from __future__ import annotations

import argparse
import logging
import sys

from gomoku.cli import REPO_ROOT, failed
from gomoku.matches.stops import EXIT_INTERRUPTED, stop_on_signals
from gomoku.players import PLAYER_SPECS_HELP
from gomoku.lab.ablation import Variant, format_ablation, run_ablation
from gomoku.training.rundir import RunLockedError


def main(argv: list[str] | None = None) -> int:
    first, _, rest = __doc__.strip().partition("\n")  # the first line is the description, the rest the epilog
    parser = argparse.ArgumentParser(description=first, formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=f"{rest}\n\nopponent specs:\n{PLAYER_SPECS_HELP}")
    parser.add_argument("--config", required=True, help="the YAML config every variant starts from")
    parser.add_argument("--variant", action="append", required=True, metavar='"NAME [SECTION.KEY=VALUE ...]"',
                        help="a variant (repeatable); a name alone is the config as it is")
    parser.add_argument("--minutes", type=float, required=True, help="run wall time of each variant")
    parser.add_argument("--root", default=str(REPO_ROOT / "runs" / "ablation"), help="folder of the variants' runs")
    parser.add_argument("--opponent", action="append", dest="opponents", required=True, metavar="SPEC",
                        help="an opponent of the rating (repeatable), e.g. minimax:3")
    parser.add_argument("--games", type=int, default=20, help="games per opponent, colours alternating")
    parser.add_argument("--seed", type=int, default=0, help="the rating games' seed")
    parser.add_argument("--workers", type=int, default=1, help="processes playing the rating games")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    stop_on_signals()  # as train.py: Ctrl-C and kill stop it cleanly
    try:
        variants = [Variant.parse(text) for text in args.variant]
        results = run_ablation(args.config, variants, args.root, args.minutes, args.opponents, args.games,
                               seed=args.seed, workers=args.workers, progress=not args.no_progress)
    except (ValueError, RunLockedError) as error:  # a bad variant, override or opponent, a run in use
        return failed(error, 2)
    except (RuntimeError, OSError) as error:  # training diverged, a worker died, a file vanished
        return failed(error, 1)
    except KeyboardInterrupt:
        print(f"\ninterrupted; run the same command to go on ({args.root})", file=sys.stderr)
        return EXIT_INTERRUPTED
    print(format_ablation(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
