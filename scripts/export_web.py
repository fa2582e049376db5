"""Export the browser version: a static site that plays the model with no server beyond static files.

    python scripts/export_web.py                                  # models/9x9.pt -> data/web
    python scripts/export_web.py runs/9x9/best.pt --out site/     # any 9x9 model (conv3 or resnet), or a pooled one
    python scripts/export_web.py --out site/ --serve              # then serve it on localhost:8000
    python scripts/export_web.py --out /tmp/site --bench 5        # time 400-playout moves in headless Chromium
    python scripts/export_web.py --out /tmp/site --screenshot docs/web-screenshot.png

The folder holds index.html, style.css, the scripts, model.json and weights.bin: serve it with
`python -m http.server --bind 127.0.0.1 -d DIR` (without --bind it listens on every network
interface) or put it on any static host (GitHub Pages, a bucket). `site/` is ignored by git.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
try:
    import gomoku  # noqa: F401  (installed, or run from the repo root with it on the path)
except ImportError:
    sys.path.insert(0, str(REPO_ROOT))

from gomoku.players import SHIPPED_MODEL  # noqa: E402
from gomoku.web.export import ExportError, export_site  # noqa: E402

EXIT_ERROR = 2
MAX_PORT = 65535
SCREENSHOT_TURNS = 5  # the README picture: the person's moves (minimax depth 2 chooses them) before it


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


def bench(site: Path, moves: int, playouts: int, size: int = 9) -> dict:
    """AI move times in headless Chromium on a size x size board: the person clicks the first
    empty point of a fixed list near the centre after each AI move, the AI (the net + search in
    the Web Worker) answers."""
    from gomoku.web.browser import BrowserError, Chromium, Page, StaticServer

    # The clicks on 9x9; on another board the points as far from its centre.
    nine = [40, 30, 50, 32, 48, 31, 49, 39, 41, 22, 58, 23, 57, 21, 59, 24, 56]
    candidates = [(size // 2 + m // 9 - 4) * size + size // 2 + m % 9 - 4 for m in nine]
    with StaticServer(site) as server, Chromium() as browser:
        page = Page(browser, server.url)
        page.wait_state("human")
        page.select("size", str(size))
        if browser.evaluate("document.getElementById('size').value") != str(size):
            raise BrowserError(f"the page does not offer a {size}x{size} board for this model")
        page.select("opponent", "az")
        page.select("playouts", str(playouts))
        version = browser.evaluate("navigator.userAgent")
        for _ in range(moves):
            if page.wait_state("human", "over") == "over":
                break
            played = page.moves()
            page.click_point(next(m for m in candidates if m not in played))
            browser.wait_for(f"document.body.dataset.moves.split(',').length >= {len(played) + 2} "
                             "|| document.body.dataset.state === 'over'", timeout=600)
        timings = [t for t in page.timings() if t["playouts"] == playouts]
    times = [t["ms"] for t in timings]
    return {"size": size, "playouts": playouts, "user_agent": version, "ms_per_move": times,
            "median_ms": statistics.median(times) if times else None}


def screenshot(site: Path, path: Path) -> list[int]:
    """Play a few moves on the page (the person's chosen by minimax depth 2) and save a picture of
    it; returns the moves shown."""
    from gomoku import Board
    from gomoku.players import MinimaxPlayer
    from gomoku.web.browser import Chromium, Page, StaticServer

    with StaticServer(site) as server, Chromium(width=1100, height=780) as browser:
        page = Page(browser, server.url)
        page.select("numbers", "true")
        size = page.size()  # the model's board (a pooled net's page may open on 15x15)
        for _ in range(SCREENSHOT_TURNS):
            if page.wait_state("human", "over", timeout=600) == "over":
                break
            played = page.moves()
            page.click_point(MinimaxPlayer(2).get_action(Board.from_moves(played, size, size)))
            browser.wait_for(f"document.body.dataset.moves.split(',').length >= {len(played) + 2} "
                             "|| document.body.dataset.state === 'over'", timeout=600)
        page.wait_state("human", "over", timeout=600)
        browser.call("Input.dispatchMouseEvent", type="mouseMoved", x=1, y=1)  # no hover stone
        time.sleep(0.5)  # the bar's transition
        path.parent.mkdir(parents=True, exist_ok=True)
        browser.screenshot(path)
        return page.moves()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        site = export_site(args.model, args.out, args.force)
    except ExportError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_ERROR
    print(f"wrote the site for {args.model} to {site}")
    print(f"serve it with: python -m http.server --bind 127.0.0.1 -d {site} 8000   "
          "(then open http://127.0.0.1:8000/)")
    from gomoku.web.browser import BrowserError, serve_forever

    try:
        if args.bench:
            result = bench(site, args.bench, args.playouts, args.size)
            print(json.dumps(result, indent=1))
        if args.screenshot:
            screenshot(site, args.screenshot)
            print(f"saved {args.screenshot}")
    except (BrowserError, OSError) as error:  # no Chromium, or an unwritable picture
        print(f"error: {error}", file=sys.stderr)
        return EXIT_ERROR
    if args.serve is not None:
        serve_forever(site, args.serve)
    return 0


if __name__ == "__main__":
    sys.exit(main())
