"""Play two players (pbrain engines, time-limited players, any spec) from random openings, each
opening twice with colours swapped, as a Gomocup manager does; print the score, the playouts and
the slowest answers, and optionally write them as JSON.

    python scripts/clock_match.py --player pbrain:scripts/pbrain-gomoku-zero:1000 \\
        --opponent pbrain:scripts/pbrain-gomoku-zero:200 --openings 10 --json models/clock-1000-vs-200.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from gomoku.game.arena import close_players, format_table, game_lines, play_openings, random_openings  # noqa: E402
from gomoku.players import PLAYER_SPECS_HELP, make_player  # noqa: E402

import numpy as np  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=f"player specs:\n{PLAYER_SPECS_HELP}",
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--player", required=True)
    parser.add_argument("--opponent", required=True)
    parser.add_argument("--openings", type=int, default=10, help="openings, each played twice (default 10)")
    parser.add_argument("--stones", type=int, default=2, help="random stones per opening (default 2)")
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, metavar="PATH")
    parser.add_argument("--games-out", type=Path, metavar="PATH", help="every game as a JSON line, as "
                        "evaluate.py --games-out writes them (scripts/review.py reads them)")
    args = parser.parse_args(argv)
    if args.openings < 1 or args.stones < 0:
        parser.error("--openings must be at least 1 and --stones at least 0")
    try:
        player, opponent = make_player(args.player, seed=args.seed), make_player(args.opponent, seed=args.seed + 1)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    openings = random_openings(args.openings, args.stones, np.random.default_rng(args.seed), args.size, args.size)
    started = time.time()

    def progress(index, record):
        winner = {1: record.players[0], 2: record.players[1]}.get(record.winner, "draw")
        note = f" ({record.forfeit.reason.value} forfeit)" if record.forfeit else ""
        print(f"game {index + 1}/{2 * len(openings)}: {len(record.moves)} moves, {winner}{note}", flush=True)

    try:
        result = play_openings(player, opponent, openings, on_game=progress)
    finally:
        close_players(player, opponent)
    print(format_table([result]))  # the player named above the row: its wins, draws, losses
    print(result.format_stats())
    answers = {name: getattr(p, "answer_times", None) for name, p in (("player", player), ("opponent", opponent))}
    answers = {name: times for name, times in answers.items() if times}
    for name, times in answers.items():
        print(f"answers through the protocol, {name}: median {np.median(times) * 1000:.0f} ms, "
              f"slowest {max(times) * 1000:.0f} ms over {len(times)}")
    if args.games_out:
        args.games_out.write_text("".join(json.dumps(line) + "\n" for line in game_lines([result])))
    if args.json:
        payload = {"player_spec": args.player, "opponent_spec": args.opponent, "openings": args.openings,
                   "stones": args.stones, "size": args.size, "seed": args.seed, "minutes": (time.time() - started) / 60,
                   "answers_ms": {name: {"count": len(times), "median": round(float(np.median(times)) * 1000, 1),
                                         "p95": round(float(np.percentile(times, 95)) * 1000, 1),
                                         "slowest": round(max(times) * 1000, 1)} for name, times in answers.items()},
                   "result": result.to_dict(timing=True)}
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
