"""The compiled tactics (gomoku.tactics.compiled) answer exactly as the pure-Python reference
solvers and rules: status, first move and nodes of every solve, the defences, the moves a node
searches, and so the searches built on them."""

from __future__ import annotations

import numpy as np
import pytest

from gomoku.game.board import Board
from gomoku.players.classical import board_cells
from gomoku.tactics import TacticsConfig, make_rules
from gomoku.tactics import compiled
from gomoku.tactics.compiled import CompiledRules, CompiledVcfSolver, CompiledVctSolver
from gomoku.tactics.geometry import Geometry
from gomoku.tactics.rules import FreestyleRules
from gomoku.tactics.threats import Interrupted, ThreatStatus, VcfSolver
from gomoku.tactics.vct import VctSolver
from mcts import BatchedMCTS, SearchConfig
from tests.fakes import HashEvaluator
from tests.test_shipped_model import ISSUE_GAME
from tests.test_threats import COUNTER_FOUR, VCF_IN_TWO
from tests.test_vct import GAME_B4, GAME_D5, board_after, cells_after, parse_point

RANDOM_POSITIONS = 10_000  # seeded random 9x9 positions, each solved by both for each attacker
# (shape, positions, stones low..high, VCF budget, VCT budget): other boards and rules, budgets
# small enough to run out (UNKNOWN must agree too) and large enough to finish.
SHAPES = [((9, 9, 5), 300, 6, 40, 200, 4000), ((15, 15, 5), 200, 10, 70, 200, 1000),
          ((6, 6, 4), 800, 4, 20, 50, 300), ((7, 6, 4), 600, 4, 24, 200, 2000), ((5, 5, 3), 400, 2, 12, 100, 500)]


def random_cells(geometry: Geometry, rng: np.random.Generator, low: int, high: int) -> np.ndarray:
    """Stones placed alternately at random (colour 1 first), stopping before one completes a line."""
    cells = np.zeros(geometry.size + 1, dtype=np.int8)
    for i, point in enumerate(rng.permutation(geometry.size)[:int(rng.integers(low, high + 1))].tolist()):
        cells[point] = 1 + i % 2
        if geometry.wins_one(cells, point, 1 + i % 2):
            cells[point] = 0
            break
    return cells


def assert_same_solves(geometry: Geometry, positions, vcf_nodes: int, vct_nodes: int) -> int:
    """Both solvers of both kinds on each position, each colour attacking; returns the wins."""
    pairs = [(VcfSolver(geometry, vcf_nodes), CompiledVcfSolver(geometry, vcf_nodes)),
             (VctSolver(geometry, vct_nodes, vcf_nodes), CompiledVctSolver(geometry, vct_nodes, vcf_nodes))]
    wins = 0
    for cells in positions:
        for attacker in (1, 2):
            for reference, kernel in pairs:
                expected = reference.solve(cells, attacker)
                assert kernel.solve(cells, attacker) == expected, (cells[:-1].reshape(geometry.height, -1), attacker)
                wins += expected.win
    return wins


def test_the_kernel_answers_as_the_reference_on_10000_random_positions():
    geometry, rng = Geometry(9, 9, 5), np.random.default_rng(55)
    positions = [random_cells(geometry, rng, 4, 50) for _ in range(RANDOM_POSITIONS)]
    wins = assert_same_solves(geometry, positions, 200, 300)
    assert 0 < wins < 4 * RANDOM_POSITIONS


@pytest.mark.parametrize("shape, count, low, high, vcf_nodes, vct_nodes", SHAPES)
def test_the_kernel_answers_as_the_reference_on_other_boards_and_budgets(shape, count, low, high, vcf_nodes,
                                                                         vct_nodes):
    geometry, rng = Geometry(*shape), np.random.default_rng(sum(shape))
    positions = [random_cells(geometry, rng, low, high) for _ in range(count)]
    assert assert_same_solves(geometry, positions, vcf_nodes, vct_nodes) > 0


def game_positions() -> list[np.ndarray]:
    """Every position of the real games and test positions of tests/: the shipped model's lost
    games, the issue game, the VCF test positions."""
    positions = []
    for game in (GAME_B4, GAME_D5, ISSUE_GAME):
        positions += [board_cells(board_after(game, plies)).copy() for plies in range(len(game.split(",")))]
    for rows in (VCF_IN_TWO, COUNTER_FOUR):
        cells = np.zeros(82, dtype=np.int8)
        for r, row in enumerate(rows):
            for c, mark in enumerate(row):
                cells[r * 9 + c] = {"X": 1, "O": 2}.get(mark, 0)
        positions.append(cells)
    return positions


@pytest.mark.parametrize("vct_nodes", [1000, 20_000])
def test_the_kernel_answers_as_the_reference_on_the_real_game_positions(vct_nodes):
    assert assert_same_solves(Geometry(9, 9, 5), game_positions(), 200, vct_nodes) > 0


def test_the_defences_are_the_references():
    geometry, rng = Geometry(9, 9, 5), np.random.default_rng(7)
    kinds = [(VcfSolver(geometry, 200), CompiledVcfSolver(geometry, 200)),
             (VctSolver(geometry, 200), CompiledVctSolver(geometry, 200))]
    checked = 0
    for cells in game_positions()[::2] + [random_cells(geometry, rng, 8, 30) for _ in range(20)]:
        moves, before = np.flatnonzero(cells[:-1] == 0), cells.copy()
        for defender in (1, 2):
            for reference, kernel in kinds:
                expected = reference.defences(cells, defender, moves)
                assert np.array_equal(kernel.defences(cells, defender, moves), expected)
                checked += int((~expected).sum())
        assert np.array_equal(cells, before)  # the position is left as it was
    assert checked > 0  # some moves do not stop a threat


def test_a_vct_that_outgrows_the_workspace_is_solved_again_in_a_larger_one(monkeypatch):
    monkeypatch.setattr(compiled, "FULL_ROOM", 0)
    monkeypatch.setattr(compiled, "ROOM_PER_NODE", 1)
    geometry = Geometry(9, 9, 5)
    reference, kernel = VctSolver(geometry, 20_000), CompiledVctSolver(geometry, 20_000)
    for cells in game_positions():
        for attacker in (1, 2):
            assert kernel.solve(cells, attacker) == reference.solve(cells, attacker)
    assert kernel._room > 20_002  # it grew


def test_a_stopped_solve_is_interrupted_where_the_references_is():
    geometry = Geometry(9, 9, 5)
    board = board_after(GAME_D5, 12)
    cells = board_cells(board)
    for reference, kernel in ((VctSolver(geometry, 1000), CompiledVctSolver(geometry, 1000)),
                              (VcfSolver(geometry, 200), CompiledVcfSolver(geometry, 200))):
        expected = reference.solve(cells, board.current_player)
        for solver in (reference, kernel):
            solver.stop = lambda: True
            if expected.nodes:  # a solve with nodes is stopped at its first node, one without is not
                with pytest.raises(Interrupted):
                    solver.solve(cells, board.current_player)
            else:
                assert solver.solve(cells, board.current_player) == expected
            solver.stop = None
        assert kernel.solve(cells, board.current_player) == expected


def test_a_long_solve_is_stopped_while_it_runs():
    """The watcher sees ``stop`` turn true while the kernel runs (it must release the GIL): the
    solve of a position the reference cannot settle in 60,000 nodes is interrupted."""
    board = board_after(GAME_B4, 7)
    board.do_move(parse_point(board, "F8"))
    calls = []
    kernel = CompiledVctSolver(Geometry(9, 9, 5), 300_000)
    kernel.stop = lambda: calls.append(1) or len(calls) > 1  # false when the solve starts, true at the first look
    with pytest.raises(Interrupted):
        kernel.solve(board_cells(board), 1)
    assert len(calls) == 2


def random_batch(geometry: Geometry, rng: np.random.Generator, k: int) -> tuple[np.ndarray, np.ndarray]:
    cells = np.stack([random_cells(geometry, rng, 6, 40) for _ in range(k)])
    stones = (cells[:, :-1] != 0).sum(axis=1)
    return cells, (1 + stones % 2).astype(np.int8)


@pytest.mark.parametrize("settings", [dict(vcf=True), dict(vcf=True, vct=True),
                                      dict(vcf=True, vct=True, vct_leaf_depth=3)])
def test_the_compiled_rules_search_the_references_moves(settings):
    config = TacticsConfig(forced_moves=True, **settings)
    geometry, rng = Geometry(9, 9, 5), np.random.default_rng(3)
    reference, kernel = FreestyleRules(geometry, config), CompiledRules(geometry, config)
    for _ in range(40):
        cells, to_move = random_batch(geometry, rng, 8)
        depth = rng.integers(0, 5, size=len(cells))
        for root, depths in ((False, depth), (False, None), (True, None)):
            expected = reference.moves_to_search(cells, to_move, root, depths)
            got = kernel.moves_to_search(cells, to_move, root, depths)
            assert np.array_equal(got[0], expected[0]) and np.array_equal(got[1], expected[1])


def test_make_rules_takes_the_kind_from_the_settings():
    on = dict(forced_moves=True, vcf=True, vct=True)
    assert type(make_rules(9, 9, 5, TacticsConfig(**on))) is CompiledRules
    assert type(make_rules(9, 9, 5, TacticsConfig(**on, tactics="reference"))) is FreestyleRules
    with pytest.raises(ValueError, match="tactics must be one of compiled, reference"):
        TacticsConfig(tactics="fast")


@pytest.mark.parametrize("settings", [dict(vcf=True, vct=True), dict(vcf=True, vct=True, vct_leaf_depth=2)])
def test_a_search_on_the_compiled_rules_is_the_search_on_the_references(settings):
    boards = [board_after(game, plies) for game, plies in ((GAME_B4, 7), (GAME_B4, 11), (GAME_D5, 9), (ISSUE_GAME, 20))]
    results = []
    for kind in ("reference", "compiled"):
        rules = make_rules(9, 9, 5, TacticsConfig(forced_moves=True, tactics=kind, **settings))
        search = BatchedMCTS(HashEvaluator(), rules, SearchConfig(n_playout=200), n_trees=len(boards),
                             rng=np.random.default_rng(0))
        results.append([r.visits.tolist() for r in search.search(boards)])
    assert results[0] == results[1]


def test_a_solve_repeated_inside_the_kernels_answers_as_one_call():
    from gomoku.tactics.compiled import CompiledVcfSolver, CompiledVctSolver

    geometry = Geometry(9, 9, 5)
    cells = cells_after(GAME_D5, 10)
    for solver in (CompiledVcfSolver(geometry), CompiledVctSolver(geometry, 5000)):
        for attacker in (1, 2):
            for loaded in (False, True):  # a solve left the loaded position as it was: the same answer again
                answer, seconds = solver.seconds_in_kernel(cells, attacker, repeats=3, loaded=loaded)
                assert answer == solver.solve(cells, attacker) and seconds > 0


def test_a_solve_leaves_the_loaded_position_as_it_was_whatever_ended_it():
    """Solved again on the same loaded board (as ``kernel_rules`` solves an inner node on the
    position it loaded), each answer is a fresh load's: won, refuted or out of budget."""
    from gomoku.tactics.compiled import CompiledVctSolver

    geometry, rng = Geometry(9, 9, 5), np.random.default_rng(11)
    solver = CompiledVctSolver(geometry, 300)
    ended = set()
    for _ in range(150):
        cells = random_cells(geometry, rng, 8, 30)
        attacker = int(rng.integers(1, 3))
        answer, _ = solver.seconds_in_kernel(cells, attacker, repeats=2, loaded=True)
        ended.add(answer.status)
    assert ended == {ThreatStatus.WIN, ThreatStatus.NO_WIN, ThreatStatus.UNKNOWN}
