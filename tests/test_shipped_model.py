"""Tactics of the shipped model (models/9x9.pt) at 400 playouts: it must play sound tactics.

Taking a five and blocking a four are also the search's exact forced-move rules (on by default
for the az player), as are playing a win by continuous fours (VCF) and stopping the opponent's;
answering an open three is up to the net and the search together.
"""

from pathlib import Path

import numpy as np
import pytest

from gomoku import Board
from gomoku.players import format_point, make_player, parse_point, winning_points
from gomoku.tactics.geometry import Geometry
from gomoku.tactics.threats import VcfSolver

MODEL = Path(__file__).resolve().parents[1] / "models" / "9x9.pt"
pytestmark = pytest.mark.skipif(not MODEL.is_file(), reason="no shipped model yet")


@pytest.fixture(scope="module")
def model():
    return make_player(f"az:{MODEL}:400", seed=0, check_nodes=0)  # the root's rules (final check: test_vct.py)


@pytest.mark.parametrize("moves, wins", [
    ([36, 72, 37, 73, 38, 74, 39, 75], {40}),  # both have fours: black (to move) takes the five
    ([10, 36, 20, 37, 60, 38, 70, 39, 64], {40}),  # white (to move) has a four on row 5
    ([40, 0, 41, 8, 42, 80, 43, 30], {39, 44}),  # black's open four on row 5: either end wins
])
def test_takes_a_five(model, moves, wins):
    assert model.get_action(Board.from_moves(moves)) in wins


@pytest.mark.parametrize("moves, blocks", [
    ([36, 0, 37, 8, 38, 72, 39], {40}),  # black's four on row 5, closed by the edge
    ([20, 40, 11, 50, 29, 60, 38], {2, 47}),  # black's four in column C; white has an open three
])
def test_blocks_a_four(model, moves, blocks):
    assert model.get_action(Board.from_moves(moves)) in blocks


def test_answers_an_open_three(model):
    # Black has an open three on row 5 (39, 40, 41; 37, 38, 42, 43 empty); white must close it
    # next to the stones, or black makes an open four.
    board = Board.from_moves([40, 10, 39, 70, 41])
    assert model.get_action(board) in {38, 42}


# The game of the VCF issue: the AI (Black, X) is to move, and White threatens a win by
# continuous fours; only these six moves stop it (the search's VCF rules find them).
ISSUE_GAME = "E5,D4,F4,D6,F6,F5,G5,E3,E7,H4,C5,D5,D7,F7,D8,C9,H5,E6,C4,E4,D3,C6,F3,G4,H2,G3,G6,B5"
ISSUE_DEFENCES = {"A6", "A8", "B4", "B6", "B7", "B8"}


def issue_board(extra: str = "") -> Board:
    board = Board()
    for name in (ISSUE_GAME + extra).split(","):
        board.do_move(parse_point(board, name))
    return board


def starts_a_vcf(board: Board, move: int) -> bool:
    """Whether the player to move wins by continuous fours starting with ``move`` (exactly, with a
    budget far beyond what these positions need)."""
    me = board.current_player
    after = board.copy()
    after.do_move(move)
    if after.game_end()[0]:
        return after.winner == me
    fives = winning_points(after, me)
    if len(fives) != 1:
        return len(fives) > 1 and not winning_points(after, 3 - me)
    after.do_move(fives[0])  # the forced block
    cells = np.zeros(after.size + 1, dtype=np.int8)
    for point, player in after.states.items():
        cells[point] = player
    return VcfSolver(Geometry(after.width, after.height, after.n_in_row), 10**5).solve(cells, me).win


def test_stops_the_opponents_vcf(model):
    board = issue_board()
    assert format_point(board, model.get_action(board)) in ISSUE_DEFENCES


# From a self-play game of the model without the VCF rules: Black (to move) has a VCF starting at
# D8 (a four on the diagonal D8-G5); without the rules the model played C5 instead.
OWN_VCF = [40, 77, 32, 70, 48, 56, 42, 0, 30, 16, 22, 52]


@pytest.mark.parametrize("make_board", [
    lambda: issue_board(",G9"),  # Black's G9 does not stop White's VCF: White plays it
    lambda: Board.from_moves(OWN_VCF),
], ids=["issue-game", "self-play"])
def test_plays_its_own_vcf(model, make_board):
    board = make_board()
    move = model.get_action(board)
    assert starts_a_vcf(board, move), format_point(board, move)


def noisy_heuristic_positions(games: int, seed: int = 500, noise: float = 0.3):
    """Every position (game not over) of ``games`` seeded games between heuristic players that
    play a random move instead with probability ``noise`` (so that threats are left unanswered)."""
    from gomoku.players import HeuristicPlayer

    for game in range(games):
        players = [HeuristicPlayer(np.random.default_rng(seed + 2 * game + i)) for i in range(2)]
        rng = np.random.default_rng(seed + 10_000 + game)
        board = Board()
        while not board.game_end()[0]:
            yield board.copy()
            player = players[len(board.moves) % 2]
            board.do_move(player.get_action(board) if rng.random() >= noise else int(rng.choice(board.availables)))


def has_vcf(board: Board, attacker: int) -> bool:
    cells = np.zeros(board.size + 1, dtype=np.int8)
    for point, player in board.states.items():
        cells[point] = player
    return VcfSolver(Geometry(board.width, board.height, board.n_in_row), 10**5).solve(cells, attacker).win


@pytest.fixture(scope="module")
def few_playouts():
    """The root's VCF rules decide these moves whatever the playouts: 50 keep the test fast."""
    return make_player(f"az:{MODEL}:50", seed=0, check_nodes=0)


def test_plays_every_vcf_and_stops_every_stoppable_one(few_playouts):
    """Over the positions of seeded games: whenever the player to move has a VCF (and no five to
    take or four to block), the model starts one; whenever the opponent has one and some move
    stops it, the model plays such a move. Checked with a solver budget far beyond the search's."""
    own = stopped = 0
    for board in noisy_heuristic_positions(12):
        me = board.current_player
        if winning_points(board, me) or winning_points(board, 3 - me):
            continue  # a five to take or a four to block: the other tests
        if has_vcf(board, me):
            move = few_playouts.get_action(board)
            assert starts_a_vcf(board, move), (board.moves, format_point(board, move))
            own += 1
        elif has_vcf(board, 3 - me):
            defences = set()
            for move in board.availables:
                after = board.copy()
                after.do_move(move)
                if not has_vcf(after, 3 - me):
                    defences.add(move)
            if defences:
                move = few_playouts.get_action(board)
                assert move in defences, (board.moves, format_point(board, move))
                stopped += 1
    assert own >= 5 and stopped >= 20  # the games hold such positions (8 and 32 with these seeds)
