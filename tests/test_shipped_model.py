"""Tactics of the shipped model (models/9x9.pt) at 400 playouts: it must play sound tactics.

Taking a five and blocking a four are also the search's exact forced-move rules (on by default
for the az player); answering an open three is up to the net and the search together.
"""

from pathlib import Path

import pytest

from gomoku import Board
from gomoku.players import make_player

MODEL = Path(__file__).resolve().parents[1] / "models" / "9x9.pt"
pytestmark = pytest.mark.skipif(not MODEL.is_file(), reason="no shipped model yet")


@pytest.fixture(scope="module")
def model():
    return make_player(f"az:{MODEL}:400", seed=0)


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
