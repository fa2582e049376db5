"""Play two players (pbrain engines, time-limited players, any spec) from random openings, each
opening twice with colours swapped, as a Gomocup manager does; print the score, the playouts and
the slowest answers, and optionally write them as JSON.

    python scripts/clock_match.py --player pbrain:scripts/pbrain-gomoku-zero:1000 \\
        --opponent pbrain:scripts/pbrain-gomoku-zero:200 --openings 10 --json docs/results/clock/clock-1000-vs-200.json
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from gomoku.cli import failed
from gomoku.matches.arena import MAX_MATCH_GAMES, close_players, home_board, stop_reason
from gomoku.matches.stops import stop_on_signals
from gomoku.matches.games import play_openings, player_name, random_openings
from gomoku.matches.records import MatchResult, colours_note, format_table, game_line, game_lines
from gomoku.matches.outputs import MatchOutputs, OutputError, output_problem
from gomoku.players import (COLUMN_LETTERS, PLAYER_SPECS_HELP, is_positive_number, make_player,
                            spec_kind)
from gomoku.players.search import PLAYER_C_PUCT
from gomoku.game.board import DEFAULT_N_IN_ROW

import numpy as np

N_IN_ROW = DEFAULT_N_IN_ROW  # the rule of the games
MAX_SIZE = len(COLUMN_LETTERS)  # the games' moves are written in standard notation, columns A to Z


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=f"player specs:\n{PLAYER_SPECS_HELP}",
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--player", required=True, metavar="SPEC",
                        help="the player whose wins, draws and losses are printed (specs below)")
    parser.add_argument("--opponent", required=True, metavar="SPEC", help="its opponent (specs below)")
    parser.add_argument("--openings", type=int, default=10, help="openings, each played twice (default 10)")
    parser.add_argument("--stones", type=int, default=2, help="random stones per opening, fewer than the board's "
                        "points (default 2)")
    parser.add_argument("--centre", type=int, metavar="R", help="the opening stones within R points of the "
                        "centre in each direction (2: the central 5x5 of 9x9, where a Gomocup manager would "
                        "place them; default: anywhere on the board)")
    parser.add_argument("--size", type=int,
                        help=f"board width and height, {N_IN_ROW} to {MAX_SIZE}; five in a row wins (default: the "
                        "board the player's net was trained on, else 9)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the openings and of the players' random "
                        "choices (default 0)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the score, the playouts and the "
                        "answer times to this JSON file")
    parser.add_argument("--games-out", type=Path, metavar="PATH", help="every game as a JSON line, as "
                        "evaluate.py --games-out writes them (scripts/review.py reads them)")
    parser.add_argument("--player-c-puct", type=float, metavar="C", help="an az --player's PUCT exploration "
                        f"weight (default: the player's, {PLAYER_C_PUCT:g}); the opponent keeps its own, so that "
                        "az against az measures a setting head to head")
    parser.add_argument("--check-nodes", type=int, metavar="N", help="az players: the VCT budget of their deep "
                        "checks (0: off, much faster for short trial matches; default: the player's, docs/threats.md)")
    args = parser.parse_args(argv)
    if args.check_nodes is not None and args.check_nodes < 0:
        parser.error(f"--check-nodes must be at least 0, got {args.check_nodes}")
    if args.player_c_puct is not None:
        if not is_positive_number(args.player_c_puct):
            parser.error(f"--player-c-puct must be a positive number, got {args.player_c_puct:g}")
        if spec_kind(args.player) not in ("az", None):
            parser.error(f"--player-c-puct is for an az player, not {args.player!r}")
    if not 1 <= args.openings <= MAX_MATCH_GAMES // 2:  # each played twice
        parser.error(f"--openings must be from 1 to {MAX_MATCH_GAMES // 2:,}, got {args.openings:,}")
    if args.seed < 0:
        parser.error(f"--seed must be at least 0, got {args.seed}")
    if args.centre is not None and args.centre < 0:
        parser.error(f"--centre must be at least 0, got {args.centre}")
    for option, path in (("--json", args.json), ("--games-out", args.games_out)):
        if path and (problem := output_problem(path, option)):  # before the games, not after them
            parser.error(problem)
    try:  # the player's net's board unless --size says otherwise, as evaluate.py
        args.size = home_board(args.player, args.size, N_IN_ROW)[0]
    except ValueError as error:
        return failed(error, 2)
    if not N_IN_ROW <= args.size <= MAX_SIZE:
        parser.error(f"--size must be from {N_IN_ROW} to {MAX_SIZE}, got {args.size}")
    if not 0 <= args.stones < args.size ** 2:
        parser.error(f"--stones must be from 0 to {args.size ** 2 - 1} on a {args.size}x{args.size} board "
                     f"(a move left), got {args.stones}")
    try:
        openings = random_openings(args.openings, args.stones, np.random.default_rng(args.seed), args.size,
                                   args.size, N_IN_ROW, centre=args.centre)
    except ValueError as error:  # more openings than the stones can make
        where = "" if args.centre is None else f" --centre {args.centre}"
        parser.error(f"--openings {args.openings} --stones {args.stones}{where}: {error}")
    try:  # held until the end: a second run given the same file is refused
        outputs = MatchOutputs(args.games_out, args.json)
    except OutputError as error:
        return failed(error, 2)
    with outputs:
        return play(args, openings, outputs)


def play(args: argparse.Namespace, openings: list, outputs: MatchOutputs) -> int:
    """The match, its table and its files (written a game at a time)."""
    stop_on_signals()  # Ctrl-C and a plain `kill` both stop the games and keep the finished ones
    player = opponent = None
    try:
        player = make_player(args.player, seed=args.seed, c_puct=args.player_c_puct, check_nodes=args.check_nodes)
        if args.player_c_puct is not None:  # named apart from an opponent of the same spec
            player.name = f"{player.name} (c_puct {args.player_c_puct:g})"
        opponent = make_player(args.opponent, seed=args.seed + 1, check_nodes=args.check_nodes)
        for side in (player, opponent):  # a net for another board or rule: before the games
            if hasattr(side, "check_board"):
                side.check_board(openings[0])
    except ValueError as error:
        close_players(player, opponent)  # (None: not built yet)
        return failed(error, 2)
    except KeyboardInterrupt as stop:  # while loading the players
        close_players(player, opponent)  # (None: not built yet)
        reason, status = stop_reason(stop)
        print(f"{reason} before any game was played", file=sys.stderr)
        return status
    where = "anywhere" if args.centre is None else f"within {args.centre} of the centre"
    print(f"{len(openings)} openings of {args.stones} stones {where}, each twice with colours swapped, "
          f"{args.size}x{args.size}, {N_IN_ROW} in a row, seed {args.seed}", flush=True)
    started = time.time()
    finished = []  # (game index, record) of the games played so far
    # In the JSON and in every games line:
    common = {"seed": args.seed, "player_c_puct": args.player_c_puct, "check_nodes": args.check_nodes}

    def so_far() -> MatchResult:
        result = MatchResult(player_name(player), player_name(opponent))
        for index, record in finished:
            result.add(record, player_first=index % 2 == 0, index=index)
        return result

    def progress(index, record):
        finished.append((index, record))
        winner = {1: record.players[0], 2: record.players[1]}.get(record.winner, "draw")
        note = f" ({record.forfeit.reason.value} forfeit)" if record.forfeit else ""
        print(f"game {index + 1}/{2 * len(openings)}: {len(record.moves)} moves, {winner}{note}", flush=True)
        outputs.add_game(game_line(player_name(player), player_name(opponent), index, record,
                                   1 if index % 2 == 0 else 2, common))
        outputs.write_summary(payload(args, so_far(), started, answer_times(player, opponent), common,
                                      len(finished), 2 * len(openings)))

    interrupted = None
    try:
        result = play_openings(player, opponent, openings, on_game=progress)
    except KeyboardInterrupt as stop:  # Ctrl-C or SIGTERM: the engines are closed below
        reason, status = stop_reason(stop)
        if not finished:
            print(f"{reason} before any game finished: no results", file=sys.stderr)
            return status
        interrupted = stop
        result = so_far()
        print(f"{reason} after {len(finished)} of {2 * len(openings)} games: the results of the finished "
              f"games follow{colours_note([result])}", file=sys.stderr)
    except OSError as error:  # a file could not be written
        return failed(error, 1)
    finally:
        close_players(player, opponent)
    print(format_table([result]))  # the player named above the row: its wins, draws, losses
    print(result.format_stats())
    answers = answer_times(player, opponent)
    for name, times in answers.items():
        print(f"answers through the protocol, {name}: median {np.median(times) * 1000:.0f} ms, "
              f"slowest {max(times) * 1000:.0f} ms over {len(times)}")
    try:  # the files' final content
        outputs.write_games(game_lines([result], common))
        outputs.write_summary(payload(args, result, started, answers, common, len(finished), 2 * len(openings),
                                      interrupted=interrupted is not None), final=True)
    except OutputError as error:
        return failed(error, 1)
    return stop_reason(interrupted)[1] if interrupted else 0


def answer_times(player, opponent) -> dict[str, list[float]]:
    """The answer times through the protocol of the players that have them (pbrain engines)."""
    answers = {name: getattr(p, "answer_times", None) for name, p in (("player", player), ("opponent", opponent))}
    return {name: times for name, times in answers.items() if times}


def payload(args: argparse.Namespace, result: MatchResult, started: float, answers: dict, common: dict,
            played: int, planned: int, interrupted: bool = False) -> dict:
    """The --json payload; while the match goes on (``played`` of ``planned`` games so far) or once
    interrupted, how far it got."""
    data = {"player_spec": args.player, "opponent_spec": args.opponent, "openings": args.openings,
            "stones": args.stones, "centre": args.centre, "size": args.size, **common,
            "minutes": (time.time() - started) / 60,
            "answers_ms": {name: {"count": len(times), "median": round(float(np.median(times)) * 1000, 1),
                                  "p95": round(float(np.percentile(times, 95)) * 1000, 1),
                                  "slowest": round(max(times) * 1000, 1)} for name, times in answers.items()},
            "result": result.to_dict(timing=True)}
    if interrupted:
        data.update(interrupted=True, games_played=played, games_planned=planned)
    elif played < planned:
        data.update(in_progress=True, games_played=played, games_planned=planned)
    return data

if __name__ == "__main__":
    sys.exit(main())
