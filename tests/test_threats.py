"""The VCF solver (gomoku/tactics/threats.py): against a plain brute force, known positions, its budget."""

import numpy as np
import pytest

from gomoku.tactics.geometry import Geometry
from gomoku.tactics.threats import VcfSolver, VcfStatus

BIG_BUDGET = 10**6  # enough for any position of the small boards here: the answers are exact


# ---------------------------------------------------------------- a plain brute force
class Brute:
    """VCF by trying every move, with its own line check (no windows): plain, no pruning. It
    remembers the answers of positions already solved (move orders transpose), nothing else."""

    def __init__(self, width: int, height: int, n_in_row: int):
        self.width, self.height, self.n = width, height, n_in_row
        self.memo: dict[tuple[bytes, int], bool] = {}

    def makes_line(self, cells: np.ndarray, point: int, colour: int) -> bool:
        row, col = divmod(point, self.width)
        for d_row, d_col in ((0, 1), (1, 0), (1, 1), (1, -1)):
            run = 1
            for sign in (1, -1):
                r, c = row + sign * d_row, col + sign * d_col
                while 0 <= r < self.height and 0 <= c < self.width and cells[r * self.width + c] == colour:
                    run += 1
                    r, c = r + sign * d_row, c + sign * d_col
            if run >= self.n:
                return True
        return False

    def five_points(self, cells: np.ndarray, colour: int) -> set[int]:
        """Empty points where a stone of ``colour`` completes a line."""
        return {p for p in range(self.width * self.height) if cells[p] == 0 and self.makes_line(cells, p, colour)}

    def wins_after(self, cells: np.ndarray, attacker: int, move: int) -> bool:
        """Whether ``attacker``'s stone at ``move`` wins by VCF: a five, or a four whose forced
        answer leaves a VCF (two winning points win: the defender has no five to make)."""
        defender = 3 - attacker
        if self.makes_line(cells, move, attacker):
            return True
        cells[move] = attacker
        try:
            if self.five_points(cells, defender):
                return False  # the defender makes a line first (the move did not block it)
            fives = self.five_points(cells, attacker)
            if len(fives) >= 2:
                return True
            if len(fives) == 0:
                return False  # not a four: not a move of a VCF
            (reply,) = fives
            cells[reply] = defender
            try:
                return self.vcf(cells, attacker)
            finally:
                cells[reply] = 0
        finally:
            cells[move] = 0

    def vcf(self, cells: np.ndarray, attacker: int) -> bool:
        """The attacker (to move) has a VCF: some empty point starts one."""
        key = (cells.tobytes(), attacker)
        if key not in self.memo:
            empty = [p for p in range(self.width * self.height) if cells[p] == 0]
            self.memo[key] = any(self.wins_after(cells, attacker, move) for move in empty)
        return self.memo[key]


def random_position(geometry: Geometry, stones: int, rng: np.random.Generator) -> np.ndarray | None:
    """Stones placed alternately at random (colour 1 first); None when a line appeared."""
    cells = np.zeros(geometry.size + 1, dtype=np.int8)
    points = rng.permutation(geometry.size)[:stones]
    for i, point in enumerate(points.tolist()):
        colour = 1 + i % 2
        cells[point] = colour
        if geometry.wins_one(cells, point, colour):
            return None
    return cells


SHAPES = [(7, 7, 5, 18, 28), (8, 8, 5, 22, 34), (6, 6, 4, 10, 18), (7, 6, 4, 12, 20)]


@pytest.mark.parametrize("width, height, n, low, high", SHAPES)
def test_matches_brute_force_on_random_positions(width, height, n, low, high):
    geometry = Geometry(width, height, n)
    solver, brute = VcfSolver(geometry, max_nodes=BIG_BUDGET), Brute(width, height, n)
    rng = np.random.default_rng(width * 100 + height * 10 + n)
    checked = wins = 0
    while checked < 80:
        stones = int(rng.integers(low, high + 1))
        cells = random_position(geometry, stones, rng)
        if cells is None:
            continue
        attacker = 1 + stones % 2  # the side to move
        expected = brute.vcf(cells, attacker)
        result = solver.solve(cells.copy(), attacker)
        assert result.status is not VcfStatus.UNKNOWN
        assert result.win == expected, (cells[:-1].reshape(height, width), attacker)
        if result.win:
            assert cells[result.move] == 0
            assert brute.wins_after(cells, attacker, result.move)
            wins += 1
        checked += 1
    assert 10 <= wins <= 70  # both answers are well represented


def test_defences_match_brute_force():
    """Which moves stop the opponent's VCF: each one checked by the brute force."""
    geometry = Geometry(6, 6, 4)
    solver, brute = VcfSolver(geometry, max_nodes=BIG_BUDGET), Brute(6, 6, 4)
    rng = np.random.default_rng(3)
    tested = stopping = 0
    while tested < 8:
        stones = int(rng.integers(8, 14))
        cells = random_position(geometry, stones, rng)
        if cells is None or brute.five_points(cells, 1) or brute.five_points(cells, 2):
            continue
        defender = 1 + stones % 2
        attacker = 3 - defender
        if not brute.vcf(cells, attacker):
            continue
        moves = np.flatnonzero(cells[:-1] == 0)
        stops = solver.defences(cells.copy(), defender, moves)
        for move, stop in zip(moves.tolist(), stops):
            cells[move] = defender
            assert stop == (not brute.vcf(cells, attacker))
            cells[move] = 0
        assert (solver.solve(cells, attacker).win)  # the loaded position was left as it was
        tested += 1
        stopping += int(stops.any())
    assert 0 < stopping


# ---------------------------------------------------------------- known positions
def board(width: int, height: int, rows: list[str]) -> np.ndarray:
    """Cells from a picture: X colour 1, O colour 2, '.' empty."""
    cells = np.zeros(width * height + 1, dtype=np.int8)
    for r, row in enumerate(rows):
        for c, mark in enumerate(row.replace(" ", "")):
            cells[r * width + c] = {"X": 1, "O": 2, ".": 0}[mark]
    return cells


def at(width: int, row: int, col: int) -> int:
    return row * width + col


def test_five_in_one_is_a_vcf_of_length_zero():
    cells = board(9, 9, [".........", ".XXXX....", ".........", "OOO......", "O........",
                         ".........", ".........", ".........", "........."])
    result = VcfSolver(Geometry(9, 9, 5)).solve(cells, 1)
    assert result.win and result.move in {at(9, 1, 0), at(9, 1, 5)} and result.nodes == 0


def test_open_three_makes_an_open_four():
    cells = board(9, 9, [".........", ".........", ".........", "...XXX...", ".........",
                         "O........", "O........", "........O", "........."])
    result = VcfSolver(Geometry(9, 9, 5)).solve(cells, 1)
    assert result.win and result.move in {at(9, 3, 2), at(9, 3, 6)}


def test_double_four():
    # Two closed threes, row 4 and column 4, whose fours need the same empty point (4, 4).
    cells = board(9, 9, [".........", ".........", ".........", ".........", "OXXX.....",
                         "....X....", "....X....", "....X....", "O...O...."])
    result = VcfSolver(Geometry(9, 9, 5)).solve(cells, 1)
    assert result.win and result.move == at(9, 4, 4) and result.nodes == 0
    assert VcfSolver(Geometry(9, 9, 5)).solve(cells, 2).status is VcfStatus.NO_WIN


# X: a closed three on row 4 and two stones in column 4 below (4, 4). X (4, 4) makes a four (O
# must block at (4, 5)) and an open three in column 4; X (3, 4) or (7, 4) then makes an open four.
VCF_IN_TWO = [".........", ".........", ".........", ".........", "OXXX.....",
              "....X....", "....X....", ".........", "O.......O"]
# The same, with O's three in column 5 instead of two of O's corner stones: O's forced block at
# (4, 5) makes an open four of O's, which X cannot answer with a four.
COUNTER_FOUR = [".........", ".....O...", ".....O...", ".....O...", "OXXX.....",
                "....X....", "....X....", ".........", "........O"]


def test_a_vcf_of_two_fours():
    geometry = Geometry(9, 9, 5)
    cells = board(9, 9, VCF_IN_TWO)
    assert Brute(9, 9, 5).vcf(cells, 1)
    result = VcfSolver(geometry).solve(cells, 1)
    assert result.win and result.move == at(9, 4, 4) and result.nodes >= 1


def test_counter_four_refutes_the_attack():
    cells = board(9, 9, COUNTER_FOUR)
    assert not Brute(9, 9, 5).vcf(cells, 1)
    assert VcfSolver(Geometry(9, 9, 5)).solve(cells, 1).status is VcfStatus.NO_WIN


def test_the_budget_is_respected():
    geometry = Geometry(8, 8, 5)
    rng = np.random.default_rng(11)
    big, small = VcfSolver(geometry, max_nodes=BIG_BUDGET), VcfSolver(geometry, max_nodes=3)
    unknown = 0
    for _ in range(200):
        cells = random_position(geometry, 30, rng)
        if cells is None:
            continue
        full = big.solve(cells, 1)
        capped = small.solve(cells, 1)
        assert capped.nodes <= 3
        if full.nodes <= 3:
            assert capped.status is full.status
        elif capped.status is VcfStatus.UNKNOWN:
            unknown += 1
        else:  # answered within the budget: the same answer (it searches in the same order)
            assert capped.win == full.win and capped.move == full.move
        assert small.solve(cells, 1, max_nodes=0).nodes == 0
    assert unknown > 0
