"""Review lost games with the exact threat search: the move after which the winner had a forced
win by fours and threes (VCT), and whether another move there kept it out.

    python scripts/evaluate.py --player az:models/9x9.pt:1s --opponent ab:4:vct --games-out games.jsonl
    python scripts/review.py games.jsonl                     # the games the player lost
    python scripts/review.py --moves E5,D4,... --loser white # one game

Verdicts (gomoku/matches/review.py): "let in" (another move there left no VCT: a threat search at this
budget would have avoided the loss), "unsettled" (no other move proved safe, some out of budget),
"lost before" (every move there gives a VCT: the attack began earlier, with a move that was not a
threat, or was longer than the budget saw), "lost in the opening" (a match's random opening left the
winner its line to make at once).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from gomoku.cli import failed
from gomoku.game.board import DEFAULT_SIZE, Board
from gomoku.matches.review import REVIEW_NODES, Review, Verdict, game_line_problem, review_loss
from gomoku.players import format_point
from gomoku.ui.session import N_IN_ROW, SetupError, parse_game  # (no pygame)

COLOURS = {"black": 1, "white": 2}
SHOWN_MOVES = 8  # safe moves named per game


def describe(review: Review, board: Board) -> str:
    """The review in one line, the points named on ``board``'s shape."""
    name = lambda move: format_point(board, move)  # noqa: E731
    where = f"ply {review.ply} {name(review.move)}"
    if review.verdict is Verdict.LOST_IN_OPENING:
        return f"lost in the opening: the start position ({review.ply} stones) let the winner make its line " \
               f"at once ({name(review.reply)})"
    if review.verdict is Verdict.LOST_BEFORE:
        return f"lost before {where}: every move there gives the winner a VCT (after {name(review.move)}: " \
               f"{name(review.reply)})"
    if review.verdict is Verdict.UNSETTLED:
        return f"unsettled at {where}: the winner has a VCT ({name(review.reply)}); no other move proved safe, " \
               f"{len(review.unsettled)} out of budget"
    text = f"{where} let in a VCT (the winner's {name(review.reply)})"
    if review.safe:
        shown = ", ".join(name(m) for m in review.safe[:SHOWN_MOVES])
        shown += " ..." if len(review.safe) > SHOWN_MOVES else ""
        text += f"; {len(review.safe)} other move(s) kept it out: {shown}"
    if review.unsettled:
        text += f"; {len(review.unsettled)} unsettled"
    return text


def own_estimate(review: Review, values: list | None) -> str:
    """What the loser thought of its game after the turning move (a search player's root value,
    the games file's ``values``), as a clause of the review's line; empty when the file has none."""
    if review.verdict is Verdict.LOST_IN_OPENING or not isinstance(values, list) or len(values) < review.ply:
        return ""
    value = values[review.ply - 1]
    return "" if not isinstance(value, (int, float)) else f"; its own estimate after that move: {value:+.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("games", nargs="?", type=Path, help="a JSON Lines file from evaluate.py --games-out")
    parser.add_argument("--opponent-losses", action="store_true", help="review the games the opponent lost")
    parser.add_argument("--moves", metavar="E5,D4,...", help="one game's moves (standard notation)")
    parser.add_argument("--loser", choices=sorted(COLOURS), help="with --moves: who lost")
    parser.add_argument("--size", type=int, help=f"with --moves: the board size (default {DEFAULT_SIZE})")
    parser.add_argument("--nodes", type=int, default=REVIEW_NODES,
                        help="node budget of each solve (default %(default)s)")
    args = parser.parse_args(argv)
    if args.games is None and args.moves is None:
        parser.error("give a games file or --moves")
    if args.games is not None and args.moves is not None:
        parser.error("give a games file or --moves, not both")
    if args.moves is not None and args.loser is None:
        parser.error("--moves needs --loser black or --loser white")
    if args.moves is None and (given := [option for option, value in (("--loser", args.loser), ("--size", args.size))
                                         if value is not None]):
        parser.error(f"{' and '.join(given)}: with --moves only (a games file names its losers and board)")
    if args.size is None:
        args.size = DEFAULT_SIZE
    if args.nodes < 1:
        parser.error("--nodes must be at least 1")
    if args.moves is not None:
        try:
            game = parse_game(args.moves, args.size)
            review = review_loss(game.moves, COLOURS[args.loser], game.size, game.size, N_IN_ROW, nodes=args.nodes)
        except (SetupError, ValueError) as error:  # a bad move or board size, a game not lost by --loser
            return failed(error, 2)
        print(describe(review, Board(game.size, game.size, N_IN_ROW)))
        return 0
    try:
        text = args.games.read_text()
    except (OSError, ValueError) as error:  # no file, a folder, not text
        print(f"error: cannot read {args.games}: {getattr(error, 'strerror', None) or error}", file=sys.stderr)
        return 2
    lines = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            lines.append(json.loads(line))
        except ValueError:
            print(f"error: {args.games}, line {number}: not a game of evaluate.py --games-out (not JSON)",
                  file=sys.stderr)
            return 2
    lost = "win" if args.opponent_losses else "loss"
    verdicts: Counter[str] = Counter()
    for number, line in enumerate(lines, 1):
        try:
            problem = game_line_problem(line)
            if problem:
                raise SetupError(problem)
            if line["result"] != lost or line.get("forfeit"):
                continue
            if line["width"] != line["height"] or line["n_in_row"] != N_IN_ROW:
                raise SetupError("review.py reads games of five in a row on a square board")
            shape = (line["width"], line["height"], line["n_in_row"])
            moves = parse_game(line["moves"], line["width"]).moves
            player = COLOURS[line["player_colour"]]
            title = f"game {line['game']} against {line['opponent']}"  # (the file's player is the same in every line)
            opening = line.get("opening", 0)
        except (KeyError, TypeError, AttributeError, SetupError) as error:
            print(f"error: {args.games}, line {number}: not a game of evaluate.py --games-out ({error})",
                  file=sys.stderr)
            return 2
        loser = player if lost == "loss" else 3 - player
        try:
            review = review_loss(moves, loser, *shape, nodes=args.nodes, opening=opening)
        except ValueError as error:
            print(f"error: {args.games}, line {number}: {error}", file=sys.stderr)
            return 2
        verdicts[review.verdict.value] += 1
        print(f"{title} ({'player' if loser == player else 'opponent'} "
              f"{'black' if loser == 1 else 'white'} lost, {len(moves)} plies): {describe(review, Board(*shape))}"
              f"{own_estimate(review, line.get('values'))}", flush=True)
    counts = "".join(f"; {verdict}: {count}" for verdict, count in sorted(verdicts.items()))
    if not verdicts:  # say what the file held, and where the other side's losses are
        results = Counter(line.get("result") if isinstance(line, dict) else None for line in lines)
        held = ", ".join(f"{results[r]} {name}" for r, name in (("win", "won"), ("draw", "drawn"), ("loss", "lost"))
                         if results[r]) or "none"
        other = ("without --opponent-losses it reviews the player's" if args.opponent_losses else
                 "--opponent-losses reviews the opponent's")
        counts = f" (the player's games in the file: {held}; {other} losses)"
    print(f"{sum(verdicts.values())} lost game(s) reviewed{counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
