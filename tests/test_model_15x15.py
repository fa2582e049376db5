"""The shipped 15x15 model (issue 29) answers the continuous-four (VCF) wins and defences of
positions from one of its own games: az:models/15x15.pt:200 (Black) against minimax:2 (seed 1) at
15x15, which minimax:2 won at move 40 after an attack the VCF rules cannot stop (ply 36: no move
stops it)."""

from pathlib import Path

import numpy as np
import pytest

from gomoku.game.board import Board
from gomoku.players import make_player
from gomoku.tactics.geometry import Geometry
from gomoku.tactics.threats import ThreatStatus, VcfSolver

MODEL = Path(__file__).resolve().parents[1] / "models" / "15x15.pt"
pytestmark = pytest.mark.skipif(not MODEL.is_file(), reason="no 15x15 model")
SIZE = 15
GAME = [42, 70, 56, 54, 86, 71, 72, 69, 57, 68, 67, 87, 40, 24, 39, 41, 27, 12, 55, 58, 89, 88, 102, 73,
        103, 101, 115, 53, 85, 83, 98, 38, 23, 52, 66, 36, 100, 20, 4, 84]
PROOF_NODES = 20_000  # enough to settle every check below (the search's own budget is 200)


@pytest.fixture(scope="module")
def player():
    return make_player(f"az:{MODEL}:400", seed=0, check_nodes=0)  # the root's rules (final check: test_vct.py)


def position(plies: int) -> tuple[Board, np.ndarray]:
    board = Board(SIZE, SIZE, 5)
    cells = np.zeros(SIZE * SIZE + 1, dtype=np.int8)
    for move in GAME[:plies]:
        cells[move] = board.current_player
        board.do_move(move)
    return board, cells


@pytest.mark.parametrize("plies", [10, 24, 32])
def test_it_stops_the_opponents_vcf(player, plies):
    board, cells = position(plies)
    me, opponent = board.current_player, 3 - board.current_player
    solver = VcfSolver(Geometry(SIZE, SIZE, 5), max_nodes=PROOF_NODES)
    assert solver.solve(cells, opponent).win  # the opponent threatens a VCF
    stopping = set()
    for move in np.flatnonzero(cells[:-1] == 0):
        after = cells.copy()
        after[move] = me
        if solver.solve(after, opponent).status is ThreatStatus.NO_WIN:
            stopping.add(int(move))
    assert 0 < len(stopping) <= 3
    player.reset()
    assert player.get_action(board) in stopping


@pytest.mark.parametrize("plies", [37, 39])
def test_it_plays_a_vcf_win(player, plies):
    board, cells = position(plies)
    win = VcfSolver(Geometry(SIZE, SIZE, 5)).solve(cells, board.current_player)
    assert win.win
    player.reset()
    assert player.get_action(board) == win.move
