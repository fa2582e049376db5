"""gomoku.matches.review and scripts/review.py: where a lost game let in a VCT, checked move by move
with the solver itself."""

import json

import pytest

from gomoku.game.board import Board
from gomoku.matches.review import Review, Verdict, review_loss
from gomoku.players import format_point
from gomoku.players.classical import board_cells
from gomoku.tactics.geometry import Geometry
from gomoku.tactics.threats import ThreatStatus
from gomoku.tactics.vct import VctSolver
from gomoku.ui.session import parse_game
from tests.fakes import load_script

# Lost games (standard notation, Black first).
LET_IN_GAME = "F5,E5,F1,F4,A9,D6,D5,G3,B8,H2"  # random (Black) lost to the heuristic player
LOST_BEFORE_GAME = "E7,C5,D7,F5,F6,G5,E5,G7,E6,E8,B7,C7,E4,E3,C6,D6,D5,F3,A8"  # az:400 (White) lost to ab:4:vct


def _status_after(moves, ply, move, nodes, winner):
    """The winner's VCT status after the loser's ``move`` in place of move ``ply`` (None: a line)."""
    board = Board.from_moves([*moves[:ply - 1], move])
    if board.game_end()[0]:
        return None
    return VctSolver(Geometry(9, 9, 5), nodes).solve(board_cells(board), winner).status


def test_the_turning_point_is_the_first_move_after_which_the_winner_has_a_vct_and_the_others_are_sorted():
    moves = parse_game(LET_IN_GAME).moves
    review = review_loss(moves, loser=1, nodes=2000)
    assert review.verdict is Verdict.LET_IN and review.safe and review.ply % 2 == 1
    for ply in range(1, review.ply, 2):  # Black's earlier moves gave no proved VCT
        assert _status_after(moves, ply, moves[ply - 1], 2000, winner=2) is not ThreatStatus.WIN
    assert _status_after(moves, review.ply, review.move, 2000, winner=2) is ThreatStatus.WIN
    before = Board.from_moves(moves[:review.ply - 1])
    for move in before.availables:  # every other move, each in the one class its solve gives
        status = _status_after(moves, review.ply, move, 2000, winner=2)
        expected = "played" if move == review.move else \
            "safe" if status in (None, ThreatStatus.NO_WIN) else "unsettled" if status is ThreatStatus.UNKNOWN else "lost"
        got = "played" if move == review.move else \
            "safe" if move in review.safe else "unsettled" if move in review.unsettled else "lost"
        assert got == expected, format_point(before, move)


def test_a_game_lost_to_a_quiet_move_is_lost_before_its_turning_point():
    """After White's G7 (ply 8) Black has a VCT, and so after every other move of White's there:
    Black's E5 (ply 7) was a quiet move that no VCT search of Black's sees from ply 6 (docs/threats.md)."""
    moves = parse_game(LOST_BEFORE_GAME).moves
    review = review_loss(moves, loser=2, nodes=20_000)
    assert (review.verdict, review.ply, review.safe, review.unsettled) == (Verdict.LOST_BEFORE, 8, (), ())
    assert format_point(Board(), review.move) == "G7"
    before_e5 = Board.from_moves(moves[:6])
    assert VctSolver(Geometry(9, 9, 5), 40_000).solve(board_cells(before_e5), 1).status is ThreatStatus.NO_WIN


def test_an_openings_stones_are_never_the_turning_point():
    """clock_match's games begin with random stones played by neither side (``opening`` in their
    --games-out lines): the review starts after them."""
    moves = parse_game(LOST_BEFORE_GAME).moves
    assert review_loss(moves, loser=2, nodes=20_000, opening=7).ply == 8
    later = review_loss(moves, loser=2, nodes=20_000, opening=8)
    assert later.ply > 8 and later.ply % 2 == 0 and later.verdict is Verdict.LOST_BEFORE


OPENING_LOSS = "A9,A1,C9,B1,E9,C1,G9,D1,I9,E1"  # nine opening stones leave White's four: E1 at once


def test_a_game_the_loser_never_moved_in_after_the_opening_is_lost_in_the_opening(tmp_path, capsys):
    """A random opening may leave the side to move its five (clock_match's 21-stone openings do, in
    22 of 300): the review said "unreachable" with an AssertionError, and review.py stopped."""
    moves = parse_game(OPENING_LOSS).moves
    review = review_loss(moves, loser=1, opening=9)
    assert review == Review(Verdict.LOST_IN_OPENING, 9, moves[8], moves[9])
    assert review_loss(moves, loser=1, opening=8).verdict is not Verdict.LOST_IN_OPENING  # I9 was Black's
    line = {"player": "heuristic", "opponent": "heuristic", "game": 2, "width": 9, "height": 9, "n_in_row": 5,
            "player_colour": "black", "result": "loss", "plies": 10, "moves": OPENING_LOSS, "forfeit": None,
            "opening": 9}
    games = tmp_path / "games.jsonl"
    values = [None] * 6 + [0.25, None, None, None]  # the loser's estimate after ply 7 (evaluate's `values`)
    games.write_text(json.dumps(line) + "\n" + json.dumps({**line, "game": 4, "moves": LET_IN_GAME, "opening": 0,
                                                           "values": values}) + "\n")
    assert load_script("review").main([str(games), "--nodes", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ("game 2 against heuristic (player black lost, 10 plies): lost in the opening: the start position "
                      "(9 stones) let the winner make its line at once (E1)")
    unsettled = review_loss(parse_game(LET_IN_GAME).moves, loser=1, nodes=3)  # too small a budget to settle
    assert unsettled.verdict is Verdict.UNSETTLED and len(unsettled.unsettled) == 2
    assert out[1] == (f"game 4 against heuristic (player black lost, 10 plies): unsettled at ply 7 "
                      f"{format_point(Board(), unsettled.move)}: the winner has a VCT "
                      f"({format_point(Board(), unsettled.reply)}); no other move proved safe, 2 out of budget"
                      f"; its own estimate after that move: +0.25")
    assert out[2] == "2 lost game(s) reviewed; lost in the opening: 1; unsettled: 1"


def test_a_game_not_lost_by_the_loser_is_refused():
    moves = parse_game(LET_IN_GAME).moves
    with pytest.raises(ValueError, match="do not end in a win for black$"):  # was "for stones 1"
        review_loss(moves, loser=2)
    with pytest.raises(ValueError, match="do not end in a win for white$"):  # black won this one
        review_loss(parse_game(LOST_BEFORE_GAME).moves, loser=1)
    with pytest.raises(ValueError, match="do not end in a win"):
        review_loss(moves[:-1], loser=1)


def test_the_script_reviews_the_games_file_of_evaluate(tmp_path, capsys):
    script = load_script("review")
    line = {"player": "random", "opponent": "heuristic", "game": 1, "width": 9, "height": 9, "n_in_row": 5,
            "player_colour": "black", "result": "loss", "plies": 10, "moves": LET_IN_GAME, "forfeit": None}
    games = tmp_path / "games.jsonl"
    games.write_text(json.dumps(line) + "\n" + json.dumps({**line, "game": 3, "result": "draw"}) + "\n")
    assert script.main([str(games), "--nodes", "2000"]) == 0
    out = capsys.readouterr().out.splitlines()
    review = review_loss(parse_game(LET_IN_GAME).moves, 1, nodes=2000)
    assert out[0].startswith(f"game 1 against heuristic (player black lost, 10 plies): ply {review.ply} "
                             f"{format_point(Board(), review.move)} let in a VCT")
    assert out[1] == "1 lost game(s) reviewed; let in: 1"
    assert script.main([str(games), "--opponent-losses"]) == 0  # none: it says what the file held, and why
    assert capsys.readouterr().out == ("0 lost game(s) reviewed (the player's games in the file: 1 drawn, 1 lost; "
                                       "without --opponent-losses it reviews the player's losses)\n")
    games.write_text("# my notes\n")  # README.md said "Expecting value: line 1 column 1 (char 0)"
    assert script.main([str(games)]) == 2
    assert capsys.readouterr().err == f"error: {games}, line 1: not a game of evaluate.py --games-out (not JSON)\n"
    games.write_text(json.dumps({"moves": "E5"}) + "\n")
    assert script.main([str(games)]) == 2
    assert "line 1: not a game of evaluate.py --games-out" in capsys.readouterr().err
    for edited in ({k: v for k, v in line.items() if k != "game"}, {**line, "moves": 5}):  # by hand: no traceback
        games.write_text(json.dumps(edited) + "\n")
        assert script.main([str(games), "--nodes", "2000"]) == 2
        assert "line 1: not a game of evaluate.py --games-out" in capsys.readouterr().err
    assert script.main(["--moves", "E5,E5", "--loser", "white"]) == 2
    assert capsys.readouterr().err.strip() == "error: move 2, E5: that point is already taken"


def test_the_script_says_which_of_games_file_and_moves_is_wrong(tmp_path, capsys):
    script = load_script("review")
    for argv, message in (([], "give a games file or --moves"),
                          ([str(tmp_path / "games.jsonl"), "--moves", "E5", "--loser", "white"],
                           "give a games file or --moves, not both"),
                          ([str(tmp_path / "games.jsonl"), "--loser", "white", "--size", "15"],  # were ignored
                           "--loser and --size: with --moves only (a games file names its losers and board)")):
        with pytest.raises(SystemExit) as exit_:
            script.main(argv)
        assert exit_.value.code == 2 and capsys.readouterr().err.splitlines()[-1].endswith(f": error: {message}")


GAME_LINE = {"player": "random", "opponent": "heuristic", "game": 1, "width": 9, "height": 9, "n_in_row": 5,
             "player_colour": "black", "result": "loss", "plies": 10, "moves": LET_IN_GAME, "forfeit": None}


@pytest.mark.parametrize(("edited", "problem"), [
    ({**GAME_LINE, "moves": LET_IN_GAME.split(",")}, "'moves' is a list, not a string"),  # was "'list' object has
    ({**GAME_LINE, "player_colour": "purple"}, "'player_colour' is 'purple', not black or white"),  # no attribute..."
    ({k: v for k, v in GAME_LINE.items() if k != "moves"}, "no 'moves'"),  # was "('moves')"
    ({**GAME_LINE, "width": True}, "'width' is a boolean, not an integer"),
    ([GAME_LINE], "a JSON list, not an object"),
])
def test_a_bad_games_line_is_one_line_naming_its_key(tmp_path, capsys, edited, problem):
    games = tmp_path / "games.jsonl"
    games.write_text(json.dumps(edited) + "\n")
    assert load_script("review").main([str(games)]) == 2
    assert capsys.readouterr().err == f"error: {games}, line 1: not a game of evaluate.py --games-out ({problem})\n"
