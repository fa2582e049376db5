"""Play five in a row against the AI in a window.

    python scripts/play.py                      # you play Black against the shipped model, az:models/9x9.pt:400
    python scripts/play.py --first ai           # the AI plays Black and moves first
    python scripts/play.py --opponent minimax:2 # another AI (see the specs below)
    python scripts/play.py --load game.txt      # go on with a saved game (Ctrl+S in the window saves one)
    python scripts/play.py --web                # in the browser: the static page, served on localhost

Click an intersection to play. Keys (each also a button): N new game, U undo, S swap colours,
Left/Right step through the game, Home/End first/last position, Enter go on from the position shown,
+/- AI strength, V the line the AI expects, M move numbers, A analysis, Ctrl+S save, Esc quit.
Points are named in standard notation: column letter, row number counted from the bottom (A1 is
the bottom-left corner). Without a trained model at models/9x9.pt the AI falls back to pure MCTS
(pure:2000) and says so. Other boards: --size 15 plays models/15x15.pt, --size 13 models/9x9.pt
(its net plays any size; were it an fc net, pure:2000); a --model plays on its own board unless
--size says otherwise, and with the rule it was trained for (a smoke run's model: 6x6, four in a row).

    python scripts/play.py --moves E5,D4,F4,D6,D5,C6,C3 --seed 0 --screenshot /tmp/shot.png   # headless (docs/play.md)
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from gomoku.cli import REPO_ROOT, failed
from gomoku.matches.stops import EXIT_INTERRUPTED  # Ctrl-C, as the shell reports it
from gomoku.players import SHIPPED_MODEL, SHIPPED_PLAYOUTS, is_positive_number
from gomoku.ui.ai import AI_SPECS_HELP  # (no pygame: the window is imported in main)
from gomoku.ui.session import MAX_SIZE, MIN_N_IN_ROW, MIN_SIZE
from gomoku.ui.sizes import MAX_WINDOW, MIN_WINDOW, parse_window_size

DEFAULT_MODEL = Path(SHIPPED_MODEL)
DEFAULT_PLAYOUTS = SHIPPED_PLAYOUTS
EXIT_USAGE = 2
EXIT_NO_DISPLAY = 1


def window_size(text: str) -> tuple[int, int]:
    try:
        return parse_window_size(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def screenshot_problem(path: Path) -> str | None:
    """Why the screenshot could not be written to ``path`` (None: it can), checked before the game."""
    folder = path.parent
    while not folder.exists() and folder != folder.parent:  # the folders to make: the first that exists
        folder = folder.parent
    if path.is_dir():
        return f"--screenshot {path} is a folder, not a file"
    if not folder.is_dir():
        return f"--screenshot {path}: {folder} is not a folder"
    if not os.access(folder, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        return f"--screenshot {path}: not writable"
    return None


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"AI specs for --opponent:\n{AI_SPECS_HELP}")
    parser.add_argument("--model", type=Path, help=f"the AI's model; a missing file is an error "
                        f"(default: {DEFAULT_MODEL}, or pure MCTS while it does not exist)")
    parser.add_argument("--playouts", type=int, default=DEFAULT_PLAYOUTS,
                        help="MCTS playouts per AI move with the model (default: %(default)s; +/- in the window)")
    parser.add_argument("--opponent", metavar="SPEC", help="another AI instead of the model (specs below)")
    parser.add_argument("--first", choices=("human", "ai"),
                        help="who plays Black and moves first (default: human, or as in --load's file)")
    parser.add_argument("--ai-first", action="store_true", help="same as --first ai")
    parser.add_argument("--size", type=int, help=f"board width and height, {MIN_SIZE} to {MAX_SIZE}; the model "
                        "must play it (default: --load's, else the model's board, else 9)")
    parser.add_argument("--n-in-row", type=int, metavar="N",
                        help=f"stones in a row to win, {MIN_N_IN_ROW} to the board size; "
                        "the model must be trained for it (default: --load's, else the model's, else 5)")
    parser.add_argument("--seconds", type=float, help="cap the AI's thinking time per move (search players, minimax)")
    parser.add_argument("--seed", type=int, help="seed for the AI's random choices")
    parser.add_argument("--moves", metavar="E5,D4,...", help="start from the position after these moves "
                        "(column letter, row number from the bottom), or from those in a saved game's file")
    parser.add_argument("--load", type=Path, metavar="FILE", help="go on with a saved game (Ctrl+S saves one)")
    parser.add_argument("--save", type=Path, metavar="FILE",
                        help="where Ctrl+S saves the game (default: data/games/game-DATE-TIME.txt)")
    parser.add_argument("--numbers", action="store_true", help="show move numbers on the stones")
    parser.add_argument("--no-analysis", action="store_true", help="start with the analysis view hidden")
    parser.add_argument("--window", type=window_size, metavar="WxH",
                        help=f"the window's size in pixels, {MIN_WINDOW[0]}x{MIN_WINDOW[1]} to "
                        f"{MAX_WINDOW[0]}x{MAX_WINDOW[1]} (default: fitted to the screen; resizable)")
    parser.add_argument("--web", action="store_true", help="play in the browser instead: export the model's "
                        "page (gomoku/web) to a temp folder, serve it on localhost and open the browser")
    parser.add_argument("--screenshot", type=Path, metavar="PATH",
                        help="save the window as a PNG once the AI has answered (or at once when it is "
                        "your move), then exit; runs without a visible window")
    args = parser.parse_args(argv)
    if args.seed is not None and args.seed < 0:
        parser.error(f"--seed must be at least 0, got {args.seed}")
    if args.playouts < 1:
        parser.error("--playouts must be at least 1")
    if args.seconds is not None and not is_positive_number(args.seconds):
        parser.error(f"--seconds must be a positive number of seconds, got {args.seconds:g}")
    if args.screenshot is not None and (problem := screenshot_problem(args.screenshot)):
        parser.error(problem)
    if args.moves is not None and args.load is not None:
        parser.error("give --moves or --load, not both")
    if args.web and (window_only := [option for option, given in window_options(args) if given]):
        parser.error(f"{', '.join(window_only)} {'is a window option' if len(window_only) == 1 else 'are window options'}:"
                     " --web serves the page, which has its own settings (opponent, playouts, who plays first)")
    return args


def window_options(args: argparse.Namespace) -> list[tuple[str, bool]]:
    """Each window-only option and whether it was given (--web takes --model and --size only)."""
    return [("--opponent", args.opponent is not None), ("--playouts", args.playouts != DEFAULT_PLAYOUTS),
            ("--first", args.first is not None), ("--ai-first", args.ai_first),
            ("--n-in-row", args.n_in_row is not None), ("--seconds", args.seconds is not None),
            ("--seed", args.seed is not None), ("--moves", args.moves is not None), ("--load", args.load is not None),
            ("--save", args.save is not None), ("--numbers", args.numbers), ("--no-analysis", args.no_analysis),
            ("--window", args.window is not None), ("--screenshot", args.screenshot is not None)]


def web_model(args: argparse.Namespace) -> Path:
    """The model --web exports: --model, else the default model for --size (models/15x15.pt beside
    models/9x9.pt for --size 15, as the window picks it), else the default; an ExportError when
    none is a file."""
    from gomoku.players import sized_default
    from gomoku.web import ExportError

    if args.model is not None or args.size is None:
        return args.model or default_model()
    candidates = sized_default(default_model(), args.size)
    for path in candidates:
        if path.is_file():
            return path
    raise ExportError(f"no model for a {args.size}x{args.size} board at {candidates[0]}: give --model")


def default_model() -> Path:
    """models/9x9.pt of this checkout, shown relative when run from the repo root."""
    return DEFAULT_MODEL if Path.cwd().resolve() == REPO_ROOT else REPO_ROOT / DEFAULT_MODEL


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if args.web:  # the static page of gomoku/web, served until Ctrl-C
        from gomoku.web import ExportError
        from gomoku.web.browser import play_in_browser
        try:
            play_in_browser(web_model(args), size=args.size)
        except ExportError as error:
            return failed(error, EXIT_USAGE)
        return 0
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    if args.screenshot is not None:  # no window needed: render off screen, no sound either way
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    try:
        from gomoku.ui.app import NoDisplayError, PlayApp, SetupError
    except ImportError as error:
        print(f"error: the window needs pygame ({error}); install it with: python -m pip install pygame",
              file=sys.stderr)
        return EXIT_USAGE
    first = "ai" if args.ai_first else args.first
    try:
        app = PlayApp(args.opponent, model=args.model, default_model=default_model(), playouts=args.playouts,
                      size=args.size, n_in_row=args.n_in_row,
                      human_first=None if first is None else first == "human", seed=args.seed,
                      seconds=args.seconds, moves=args.moves, load=args.load, show_analysis=not args.no_analysis,
                      show_numbers=args.numbers, screenshot=args.screenshot, window_size=args.window,
                      save_path=args.save)
    except NoDisplayError as error:
        return failed(error, EXIT_NO_DISPLAY)
    except SetupError as error:
        return failed(error, EXIT_USAGE)
    try:
        app.run()
    except SetupError as error:  # the screenshot could not be saved
        return failed(error, EXIT_USAGE)
    except KeyboardInterrupt:  # Ctrl-C in the terminal: run() has closed the window
        print("interrupted: the window is closed (Ctrl+S in the window saves a game)", file=sys.stderr)
        return EXIT_INTERRUPTED
    return 0


def exit_now(code: int) -> None:
    """Exit without the interpreter's teardown, which takes seconds once torch is loaded (after
    the window has already closed); logs and output are flushed first."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def run() -> None:
    """The command: main() on the command line's arguments, then out at once (exit_now)."""
    exit_now(main())


if __name__ == "__main__":
    run()
