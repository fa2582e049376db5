"""What a search returns (``mcts.result.SearchResult``): visits, priors, Q per root move and the
expected lines, exactly as the tree holds them, the same as the reference search's."""

import dataclasses

import numpy as np
import pytest

from gomoku import Board
from mcts import BatchedMCTS, SearchConfig, SearchResult, UniformEvaluator
from mcts.reference import ReferenceMCTS
from mcts.result import LINE_MOVES, LINE_PLIES
from mcts.tree import NO_CHILD
from tests.fakes import ConstantEvaluator, HashEvaluator, parts
from tests.tictactoe import TicTacToe, TicTacToeRules


def most_visited(visits: np.ndarray, priors: np.ndarray) -> int:
    """The most visited edge, ties to the higher prior, then the lower move (the test's own)."""
    return min(np.flatnonzero(visits > 0), key=lambda move: (-visits[move], -priors[move], move))


def walk(tree: BatchedMCTS, index: int, move: int) -> tuple[int, ...]:
    """The expected line from root move ``move``, read off the tree's arrays here."""
    line, node = [move], int(tree.children[index, 0, move])
    while node != NO_CHILD and len(line) < LINE_PLIES and tree.visits[index, node].any():
        move = most_visited(tree.visits[index, node], tree.prior[index, node])
        line.append(move)
        node = int(tree.children[index, node, move])
    return tuple(line)


def check_against_tree(tree: BatchedMCTS, index: int, result: SearchResult, moves: list[int]) -> None:
    visits, value_sum = tree.visits[index, 0], tree.value_sum[index, 0]
    np.testing.assert_array_equal(result.visits, visits)
    np.testing.assert_array_equal(result.priors, tree.prior[index, 0])
    visited = visits > 0
    np.testing.assert_array_equal(result.q[visited], value_sum[visited] / visits[visited])
    assert np.isnan(result.q[~visited]).all()
    ranked = [int(m) for m in result.ranked_moves() if visits[m] > 0][:LINE_MOVES]
    assert [line[0] for line in result.lines] == ranked and result.pv == result.lines[0]
    for line in result.lines:
        assert line == walk(tree, index, line[0])
        assert 1 <= len(line) <= LINE_PLIES and len(set(line) | set(moves)) == len(line) + len(moves)  # empty points


def test_two_playouts_known_exactly():
    """One playout expands the root, the next goes down the first move (uniform priors, all Q 0):
    the leaf's +0.5 is -0.5 for the root's player."""
    result = BatchedMCTS(ConstantEvaluator(0.5), *parts(9, 9, 5, n_playout=2)).search([Board.from_moves([40])])[0]
    assert result.visits[0] == 1 and result.visits.sum() == 1
    assert result.q[0] == pytest.approx(-0.5) and np.isnan(result.q[1:]).all()
    assert result.lines == ((0,),) and result.pv == (0,)


def test_three_playouts_known_exactly():
    """The third playout goes down move 0 again (its Q is +0.5), then the lowest free point, 1."""
    result = BatchedMCTS(ConstantEvaluator(-0.5), *parts(9, 9, 5, n_playout=3)).search([Board.from_moves([40])])[0]
    assert result.visits[0] == 2 and result.q[0] == pytest.approx(0.0)
    assert result.pv == (0, 1)


@pytest.mark.parametrize("options", [dict(n_playout=300), dict(n_playout=300, forced_moves=True, vcf=True),
                                     dict(n_playout=200, leaves_per_step=4, forced_moves=True)])
def test_q_and_lines_are_the_trees(options):
    moves = [40, 41, 31, 49]
    tree = BatchedMCTS(HashEvaluator(), *parts(9, 9, 5, **options), rng=np.random.default_rng(1))
    result = tree.search([Board.from_moves(moves)])[0]
    check_against_tree(tree, 0, result, moves)
    assert len(result.lines) == LINE_MOVES and len(result.pv) >= 2  # a deep enough search


def test_each_tree_has_its_own_result():
    histories = [[], [40], [40, 41, 30]]
    tree = BatchedMCTS(HashEvaluator(), *parts(9, 9, 5, n_playout=80), n_trees=3)
    for index, (result, moves) in enumerate(zip(tree.search([Board.from_moves(m) for m in histories]), histories)):
        check_against_tree(tree, index, result, moves)


def test_a_reused_tree_reports_its_kept_visits_too():
    tree = BatchedMCTS(HashEvaluator(), *parts(9, 9, 5, n_playout=200))
    board = Board()
    first = tree.search([board])[0]
    board.do_move(first.pv[0])
    board.do_move(first.pv[1])
    second = tree.search([board])[0]
    check_against_tree(tree, 0, second, board.moves)


def test_a_gumbel_root_reports_q_and_lines():
    rules, config = parts(9, 9, 5, n_playout=64, gumbel_k=8, reuse_tree=False)
    tree = BatchedMCTS(HashEvaluator(), rules, config, rng=np.random.default_rng(0))
    result = tree.search([Board.from_moves([40])])[0]
    check_against_tree(tree, 0, result, [40])
    assert result.improved is not None and result.visits[result.selected] > 0


@pytest.mark.parametrize("noise", [False, True])
@pytest.mark.parametrize("moves", [[], [40, 41, 31, 49]])
def test_the_reference_returns_the_same_result(noise, moves):
    board = Board.from_moves(moves)
    ref = ReferenceMCTS(HashEvaluator(), n_playout=200, noise=noise, rng=np.random.default_rng(3)).search(board)
    fast = BatchedMCTS(HashEvaluator(), *parts(9, 9, 5, n_playout=200, noise=noise),
                       rng=np.random.default_rng(3)).search([board])[0]
    np.testing.assert_array_equal(ref.visits, fast.visits)
    np.testing.assert_array_equal(ref.priors, fast.priors)
    np.testing.assert_allclose(ref.q, fast.q, rtol=0, atol=1e-12)
    assert ref.lines == fast.lines and len(ref.pv) >= 2
    assert ref.value == pytest.approx(fast.value, abs=1e-12) and ref.playouts == fast.playouts == 200


def test_the_line_of_a_won_tic_tac_toe():
    """X (first) has 0 and 1, O has 3 and 4: X wins at 2, and the search's line is that move alone
    (the game ends there, no node below it)."""
    game = TicTacToe([0, 3, 1, 4])
    result = BatchedMCTS(UniformEvaluator(), TicTacToeRules(), SearchConfig(n_playout=200)).search([game])[0]
    assert result.pv == (2,) and result.q[2] == 1.0 and result.best_move() == 2


def test_a_result_is_frozen_and_made_by_hand_has_no_statistics():
    result = SearchResult(visits=np.array([0.0, 3.0]), priors=np.array([0.5, 0.5]), value=0.2, playouts=4)
    assert np.isnan(result.q).all() and result.q.shape == (2,) and result.lines == () and result.pv == ()
    assert result.line(1) == (1,)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.playouts = 5  # type: ignore[misc]
    assert dataclasses.replace(result, playouts=5).playouts == 5
