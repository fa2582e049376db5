"""Export the browser version: a static site that plays the model with no server beyond static files.

    python scripts/export_web.py                                  # models/9x9.pt -> data/web
    python scripts/export_web.py runs/9x9/best.pt --out site/     # any 9x9 model (conv3 or resnet), or a pooled one
    python scripts/export_web.py --out site/ --serve              # then serve it on localhost:8000
    python scripts/export_web.py --out /tmp/site --bench 5        # time 400-playout moves in headless Chromium (bench.py --web)
    python scripts/export_web.py --out /tmp/site --screenshot docs/web-screenshot.png

The folder holds index.html, style.css, the scripts, model.json and weights.bin: serve it with
`python -m http.server --bind 127.0.0.1 -d DIR` (without --bind it listens on every network
interface) or put it on any static host (GitHub Pages, a bucket). `site/` is ignored by git.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from gomoku.cli import REPO_ROOT, failed
from gomoku.players import SHIPPED_MODEL
from gomoku.web.export import ExportError, export_site

EXIT_ERROR = 2
MAX_PORT = 65535


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("model", nargs="?", type=Path, default=REPO_ROOT / SHIPPED_MODEL,
                        help="model or training checkpoint (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "data" / "web",
                        help="folder to write the site into: new, empty, or holding an earlier export "
                             "(default: %(default)s)")
    parser.add_argument("--force", action="store_true",
                        help="write into a folder that holds other files (index.html... there are replaced)")
    parser.add_argument("--serve", nargs="?", type=int, const=8000, metavar="PORT",
                        help="serve the site on localhost after the export (default port 8000) and open a browser")
    parser.add_argument("--bench", type=int, metavar="MOVES",
                        help="time MOVES AI moves in headless Chromium (AlphaZero, --playouts) and print them")
    parser.add_argument("--playouts", type=int, default=400, help="playouts per move for --bench (default: 400)")
    parser.add_argument("--size", type=int, default=9, help="the board of --bench (default: 9; another size "
                        "needs a model with pooled heads)")
    parser.add_argument("--screenshot", type=Path, metavar="PNG",
                        help="play a few moves in headless Chromium and save a picture of the page")
    args = parser.parse_args(argv)
    if args.bench is not None and args.bench < 1:
        parser.error("--bench needs at least 1 move")
    if args.serve is not None and not 0 <= args.serve <= MAX_PORT:
        parser.error(f"--serve needs a port from 0 (any free port) to {MAX_PORT}, got {args.serve}")
    if args.playouts < 1:
        parser.error(f"--playouts must be positive, got {args.playouts}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        site = export_site(args.model, args.out, args.force)
    except ExportError as error:
        return failed(error, EXIT_ERROR)
    print(f"wrote the site for {args.model} to {site}")
    print(f"serve it with: python -m http.server --bind 127.0.0.1 -d {site} 8000   "
          "(then open http://127.0.0.1:8000/)")
    from gomoku.web.browser import BrowserError, serve_forever

    try:
        if args.bench:
            from gomoku.lab.bench_export import web_figures

            print(json.dumps(web_figures(site, args.bench, args.playouts, args.size), indent=1))
        if args.screenshot:
            from gomoku.web.screenshot import screenshot

            screenshot(site, args.screenshot)
            print(f"saved {args.screenshot}")
    except (BrowserError, OSError) as error:  # no Chromium, or an unwritable picture
        return failed(error, EXIT_ERROR)
    if args.serve is not None:
        serve_forever(site, args.serve)
    return 0


if __name__ == "__main__":
    sys.exit(main())
