"""Draw a training run's curves (losses, entropy, evaluation score, LR and KL, ...) into a PNG.

    python scripts/plot.py runs/9x9                     # writes runs/9x9/curves.png
    python scripts/plot.py runs/9x9/metrics.jsonl --out /tmp/curves.png
    python scripts/plot.py runs/9x9 --against minutes   # the panels against minutes of run time
    python scripts/plot.py runs/9x9 --table             # prints each evaluation: minute, games, W/D/L, 95% CI

Headless (matplotlib's Agg canvas); safe to run while the training job appends to the file (a torn last
line is skipped).
"""

from __future__ import annotations

import argparse
import logging
import sys


def parse_size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT, e.g. 1200x800, not {text!r}") from None
    return width, height


def main(argv: list[str] | None = None) -> int:
    first, _, rest = __doc__.strip().partition("\n")  # the first line is the description, the rest the epilog
    parser = argparse.ArgumentParser(description=first, formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=rest)
    parser.add_argument("source", metavar="RUN_DIR_OR_METRICS_JSONL", help="a run directory or its metrics.jsonl")
    parser.add_argument("--out", help="the PNG to write, or a folder for curves.png (default: curves.png "
                                                 "in the run directory); the path written is printed")
    parser.add_argument("--size", type=parse_size, default=(1200, 800), metavar="WxH",
                        help="image size in pixels (default: 1200x800)")
    parser.add_argument("--title", help="the figure's title (default: from the run directory's name)")
    parser.add_argument("--against", choices=("games", "minutes"), default="games",
                        help="the panels' x axis: self-play games (default) or minutes of run time")
    parser.add_argument("--table", action="store_true",
                        help="print the evaluations as a Markdown table (minutes of run time, games, and "
                             "against each opponent: wins, draws, losses, score, 95%% interval) instead of drawing")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="plot.py: warning: %(message)s")
    from gomoku.lab.plot import load_metrics, plot_metrics, rung_table  # imports matplotlib

    try:
        if args.table:
            print(rung_table(load_metrics(args.source)), end="")
            return 0
        out = plot_metrics(args.source, args.out, size=args.size, title=args.title, against=args.against)
    except (ValueError, OSError) as exc:
        print(f"plot.py: error: {exc}", file=sys.stderr)
        return 2  # as the other scripts: 2 for a bad input
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
