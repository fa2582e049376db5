"""Play a player against one or more opponents and print wins, draws, losses, score and 95% CI.

    python scripts/evaluate.py --player minimax:2 --opponent random --opponent heuristic --games 10
    python scripts/evaluate.py            # the shipped model (az:models/9x9.pt:400) vs the pure-MCTS ladder

Player specs: see ``python scripts/evaluate.py --help``. Ctrl-C or a plain ``kill`` (SIGTERM), also
of a background job, stops at once and prints (and writes, with ``--json``) the results of the games
finished so far; the exit status is then 130 (143 for SIGTERM). With no game finished there is no
table and no file, only a line that says so. ``--games-out`` and ``--json`` are written a game at a
time (a line appended, the summary replaced, with "in_progress": true until the end), so that even a
SIGKILL loses only the game in flight; a file that another run is writing is refused.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gomoku.cli import REPO_ROOT, failed
from gomoku.matches.arena import (MAX_MATCH_GAMES, EvaluationInterrupted, evaluate, home_board, match_results,
                                  stop_reason)
from gomoku.matches.stops import stop_on_signals
from gomoku.matches.records import colours_note, format_match_stats, format_table, game_line, game_lines
from gomoku.matches.outputs import MatchOutputs, OutputError, OutputInUse, output_problem
from gomoku.players import (COLUMN_LETTERS, PLAYER_SPECS_HELP, SHIPPED_MODEL, SHIPPED_PLAYOUTS, is_timed,
                             is_positive_number, parse_spec, spec_kind)
from gomoku.players.search import PLAYER_C_PUCT
from gomoku.game.board import MAX_SIZE

DEFAULT_MODEL = Path(SHIPPED_MODEL)
DEFAULT_PLAYOUTS = SHIPPED_PLAYOUTS
# The pure-MCTS rows of the README's Results table (run first, so their seeds match that table's).
PURE_MCTS_LADDER = tuple(f"pure:{playouts}" for playouts in (1000, 3000, 5000, 10000))
DEFAULT_GAMES = 20
DEFAULT_SEED = 0
EXIT_USAGE = 2
EXIT_FAILED = 1


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"player specs:\n{PLAYER_SPECS_HELP}")
    parser.add_argument("--player", help=f"the player to rate (default: az:{DEFAULT_MODEL}:{DEFAULT_PLAYOUTS})")
    parser.add_argument("--opponent", action="append", dest="opponents", metavar="SPEC",
                        help=f"an opponent; repeat for several (default: {' '.join(PURE_MCTS_LADDER)})")
    parser.add_argument("--games", type=int, default=DEFAULT_GAMES,
                        help="games per opponent, colours alternating (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED,
                        help="seed for every player's random choices (default: %(default)s)")
    parser.add_argument("--size", type=int, help=f"board width and height, at most {MAX_SIZE} (default: the board "
                        "the player's net was trained on, else 9)")
    parser.add_argument("--n-in-row", type=int, help="stones in a row to win (default: the player's net's rule, "
                        "else 5)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the results to this JSON file")
    parser.add_argument("--games-out", type=Path, metavar="PATH", help="also write every game to this "
                        "JSON Lines file: colours, result and moves (standard notation, as play.py --moves takes them)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument("--workers", type=int, default=1, help="processes playing games in parallel "
                        "(the results do not depend on it; default: %(default)s)")
    parser.add_argument("--seconds", type=float, help="thinking time cap per move for pure/az players "
                        "(next to their playout count) and minimax (next to its depth)")
    parser.add_argument("--leaves", type=int, default=1, help="az players: leaves per network call "
                        "(virtual loss; faster, a slightly different search; default: %(default)s)")
    parser.add_argument("--no-forced-moves", action="store_true", help="az players: search without the "
                        "exact forced-move rules (take a five, block a four; VCF goes with them)")
    parser.add_argument("--no-vcf", action="store_true", help="az players: forced moves without the "
                        "continuous-four (VCF) solver")
    parser.add_argument("--check-nodes", type=int, metavar="N", help="az players: the VCT budget of "
                        "their deep checks (their own win, then the final threat check; 0: off; "
                        "default: the player's, docs/threats.md)")
    parser.add_argument("--c-puct", type=float, metavar="C", help="az players: PUCT's exploration weight "
                        f"(default: the player's, {PLAYER_C_PUCT:g}; docs/results/ladder.md measures 2.5)")
    args = parser.parse_args(argv)
    if args.c_puct is not None and not is_positive_number(args.c_puct):
        parser.error(f"--c-puct must be a positive number, got {args.c_puct:g}")
    if args.size is not None and args.size > MAX_SIZE:  # a typo (1000) would play for hours
        parser.error(f"--size must be at most {MAX_SIZE}, got {args.size}")
    if args.check_nodes is not None and args.check_nodes < 0:
        parser.error(f"--check-nodes must be at least 0, got {args.check_nodes}")
    if not 1 <= args.games <= MAX_MATCH_GAMES:
        parser.error(f"--games must be from 1 to {MAX_MATCH_GAMES:,}, got {args.games:,}")
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    if args.leaves < 1:
        parser.error(f"--leaves must be at least 1, got {args.leaves}")
    if args.seed < 0:
        parser.error(f"--seed must be at least 0, got {args.seed}")
    if args.seconds is not None and not is_positive_number(args.seconds):
        parser.error(f"--seconds must be a positive number of seconds, got {args.seconds:g}")
    return args


def _own_time(spec: str) -> bool:
    """Whether ``spec`` is an az or pure player given a time a move (az:PATH:1s), which --seconds
    would not change; a bad spec is not, here (evaluate() reports it)."""
    try:
        return parse_spec(spec).seconds is not None
    except ValueError:
        return False


def given_options(args: argparse.Namespace) -> list[str]:
    """The search options given on the command line, as typed (``--c-puct 2.5``, ``--no-vcf``)."""
    valued = (("--seconds", args.seconds), ("--leaves", None if args.leaves == 1 else args.leaves),
              ("--check-nodes", args.check_nodes), ("--c-puct", args.c_puct))
    switches = (("--no-forced-moves", args.no_forced_moves), ("--no-vcf", args.no_vcf))
    return [f"{name} {value}" for name, value in valued if value is not None] + [name for name, on in switches if on]


def search_options(args: argparse.Namespace) -> dict:
    """The search options of the command line, as the JSON records them (null: the player's own)."""
    return {"seconds": args.seconds, "leaves": args.leaves, "forced_moves": not args.no_forced_moves,
            "vcf": not args.no_vcf, "check_nodes": args.check_nodes, "c_puct": args.c_puct}


def default_player_spec() -> str | None:
    """The spec of the shipped model, or None when it is not there."""
    model = REPO_ROOT / DEFAULT_MODEL
    if not model.is_file():
        return None
    shown = DEFAULT_MODEL if Path.cwd().resolve() == REPO_ROOT else model
    return f"az:{shown}:{DEFAULT_PLAYOUTS}"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    stop_on_signals()  # Ctrl-C and a plain `kill` both stop the games and keep the finished ones
    player_spec = args.player or default_player_spec()
    if player_spec is None:
        print(f"no shipped model at {DEFAULT_MODEL} yet; train one with scripts/train.py or pass --player",
              file=sys.stderr)
        return EXIT_USAGE
    for option, path in (("--json", args.json), ("--games-out", args.games_out)):
        if path and (problem := output_problem(path, option)):
            return failed(problem, EXIT_USAGE)
    try:  # the rated net's own board unless --size / --n-in-row say otherwise, as play.py --model
        args.size, args.n_in_row = home_board(player_spec, args.size, args.n_in_row)
    except ValueError as error:
        return failed(error, EXIT_USAGE)
    if args.games_out and args.size > len(COLUMN_LETTERS):
        print(f"error: --games-out writes moves in standard notation, columns A to Z: --size {args.size} "
              f"is past {len(COLUMN_LETTERS)}", file=sys.stderr)
        return EXIT_USAGE
    opponents = args.opponents or list(PURE_MCTS_LADDER)
    if args.seconds is not None and (own := [spec for spec in (player_spec, *opponents) if _own_time(spec)]):
        print(f"error: --seconds caps the players given playouts (az:PATH:400 --seconds 1), not a spec's own "
              f"time a move: {', '.join(own)}", file=sys.stderr)
        return EXIT_USAGE
    az_options = [option.split()[0] for option in given_options(args) if not option.startswith("--seconds")]
    kinds = [spec_kind(spec) for spec in (player_spec, *opponents)]
    if az_options and None not in kinds and "az" not in kinds:  # (a bad spec is reported below)
        print(f"error: {' '.join(az_options)}: for az players, and none plays in this match", file=sys.stderr)
        return EXIT_USAGE
    try:  # held until the end: a second run given the same file is refused
        outputs = MatchOutputs(args.games_out, args.json)
    except OutputInUse as error:
        return failed(error, EXIT_USAGE)
    except OutputError as error:
        return failed(error, EXIT_FAILED)
    with outputs:
        return play(args, player_spec, opponents, outputs)


def summary(args: argparse.Namespace, player_spec: str, results: list, common: dict, played: int | None = None,
            planned: int | None = None, interrupted: bool = False) -> dict:
    """The --json payload: the matches' results; while they go on (``played`` of ``planned``
    games so far) or once interrupted, how far they got."""
    payload = {"player_spec": player_spec, "games": args.games, **common, "size": args.size,
               "n_in_row": args.n_in_row, "results": [r.to_dict(timing=True) for r in results]}
    if interrupted:
        payload.update(interrupted=True, games_played=played, games_planned=planned)
    elif played is not None:
        payload.update(in_progress=True, games_played=played, games_planned=planned)
    return payload


def play(args: argparse.Namespace, player_spec: str, opponents: list[str], outputs: MatchOutputs) -> int:
    """The matches, their table and their files (written a game at a time)."""
    common = {"seed": args.seed, "options": search_options(args)}  # in the JSON and every games line (to replay it)
    records = {}  # (match, index): the games finished so far
    planned = args.games * len(opponents)

    def on_game(match, index, record):
        records[match, index] = record
        result = match_results(player_spec, opponents, {(match, index): record})[match]
        outputs.add_game(game_line(result.player, result.opponent, index, record, result.own_stones[0], common))
        outputs.write_summary(summary(args, player_spec, match_results(player_spec, opponents, records), common,
                                      len(records), planned))

    interrupted = None
    try:
        results = evaluate(player_spec, opponents, args.games, seed=args.seed, width=args.size,
                           height=args.size, n_in_row=args.n_in_row, progress=not args.no_progress,
                           workers=args.workers, seconds=args.seconds, leaves_per_step=args.leaves,
                           forced_moves=not args.no_forced_moves, vcf=not args.no_vcf,
                           check_nodes=args.check_nodes, c_puct=args.c_puct, on_game=on_game)
    except ValueError as error:  # a bad spec, checkpoint or board size: say why, no traceback
        return failed(error, EXIT_USAGE)
    except EvaluationInterrupted as stop:
        reason, status = stop_reason(stop.cause)
        if not stop.played:
            print(f"{reason} before any game finished: no results", file=sys.stderr)
            return status
        results, interrupted = stop.results, stop
        print(f"{reason} after {stop.played} of {stop.planned} games: the results of the finished games "
              f"follow{colours_note(results)}", file=sys.stderr)
    except KeyboardInterrupt as stop:  # before the first game (loading the players)
        reason, status = stop_reason(stop)
        print(f"{reason} before any game was played", file=sys.stderr)
        return status
    except (RuntimeError, OSError) as error:  # a worker process died, a file could not be written...
        return failed(error, EXIT_FAILED)
    print(f"{args.games} game{'s' * (args.games != 1)} per opponent, {args.size}x{args.size}, "
          f"{args.n_in_row} in a row, seed {args.seed}" + "".join(f", {option}" for option in given_options(args))
          + (f"; {stop_reason(interrupted.cause)[0]} after {interrupted.played} of {interrupted.planned} games"
             if interrupted else ""))
    print(format_table(results))
    timed = args.seconds is not None or any(is_timed(spec) for spec in (player_spec, *opponents))  # (a cap too)
    if timed or any(r.side_stats().playouts or r.side_stats(opponent=True).playouts for r in results if r.games):
        print("moves: playouts reached" + (", thinking time" if timed else ""))
        print(format_match_stats(results, timing=timed))
    sys.stdout.flush()
    try:  # the files' final content, in match order
        outputs.write_games(game_lines(results, common))
        outputs.write_summary(summary(args, player_spec, results, common, interrupted.played, interrupted.planned,
                                      interrupted=True) if interrupted else summary(args, player_spec, results, common),
                              final=True)
    except OutputError as error:
        return failed(error, EXIT_FAILED)
    return stop_reason(interrupted.cause)[1] if interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
