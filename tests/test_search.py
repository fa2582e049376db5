"""The array-based search: value signs, tactics, equivalence with the reference, reuse, batching."""

import numpy as np
import pytest

from gomoku import Board
from gomoku.players import winning_points
from gomoku.tactics import DEFAULT_VCF_NODES, RolloutEvaluator, TacticsConfig
from gomoku.tactics.geometry import Geometry
from gomoku.tactics.threats import VcfSolver
from gomoku.tactics.vct import VctSolver
from mcts import BatchedMCTS, UniformEvaluator, visit_policy
from mcts.reference import ReferenceMCTS
from tests.fakes import ConstantEvaluator, HashEvaluator, parts


def search(board, evaluator=None, n=200, **kwargs):
    evaluator = evaluator or UniformEvaluator()
    mcts = BatchedMCTS(evaluator, *parts(board.width, board.height, board.n_in_row, n_playout=n, **kwargs),
                       rng=np.random.default_rng(0))
    return mcts.search([board])[0]


def test_visits_sum_to_playouts_minus_root_expansion():
    result = search(Board(), n=100)
    assert result.visits.sum() == 99  # the first playout expands the root, as in the classic
    assert result.playouts == 100


def test_value_sign_convention():
    """Evaluator values are for the player to move; root statistics are for the root's player."""
    board = Board.from_moves([40])
    # One playout below the root: the leaf's +0.5 (good for the opponent) is -0.5 for us.
    assert search(board, ConstantEvaluator(0.5), n=2).value == pytest.approx(-0.5)
    assert search(board, ConstantEvaluator(-0.5), n=2).value == pytest.approx(0.5)
    # Two playouts: the second goes back down the same (good-looking) edge to depth 2, where the
    # leaf's -0.5 is for the root's player (two plies down): the edge's sum is +0.5 - 0.5 = 0.
    result = search(board, ConstantEvaluator(-0.5), n=3)
    assert result.visits.max() == 2 and result.visits.sum() == 2
    assert result.value == pytest.approx(0.0)


# Both sides have a four (black on row 4, white on row 8); black to move wins at 40.
BOTH_FOUR = [36, 72, 37, 73, 38, 74, 39, 75]
# Black has a four on row 4 (cols 0-3, closed by the edge); white to move must block at 40.
BLACK_FOUR = [36, 0, 37, 8, 38, 72, 39]


def test_takes_a_win_in_one_with_a_stub_evaluator():
    assert search(Board.from_moves(BOTH_FOUR), UniformEvaluator(), n=300).best_move() == 40


def test_pure_mcts_takes_a_win_in_one():
    rollouts = RolloutEvaluator(9, 9, 5, np.random.default_rng(1))
    assert search(Board.from_moves(BOTH_FOUR), rollouts, n=1000).best_move() == 40


def test_blocks_a_four_with_a_stub_evaluator():
    # Every non-blocking reply loses to 40 two plies down; uniform priors need a few thousand
    # playouts to see that for all 72 replies (cheap with a stub evaluator).
    assert search(Board.from_moves(BLACK_FOUR), UniformEvaluator(), n=4000).best_move() == 40


def test_terminal_win_valued_exactly():
    board = Board.from_moves(BOTH_FOUR)
    result = search(board, ConstantEvaluator(0.0), n=100)
    # Every other edge is worth 0; the winning one is worth exactly +1 on each visit.
    assert result.visits[40] > 50
    assert result.value == pytest.approx(result.visits[40] / result.visits.sum())


@pytest.mark.parametrize("noise", [False, True])
@pytest.mark.parametrize("moves", [[], [40, 41, 31, 49], BLACK_FOUR])
def test_matches_reference_search(noise, moves):
    board = Board.from_moves(moves)
    ref = ReferenceMCTS(HashEvaluator(), n_playout=150, noise=noise, rng=np.random.default_rng(3))
    fast = BatchedMCTS(HashEvaluator(), *parts(9, 9, 5, n_playout=150, noise=noise),
                       rng=np.random.default_rng(3))
    np.testing.assert_array_equal(ref.search(board).visits, fast.search([board])[0].visits)


def test_matches_reference_on_other_shapes():
    for width, height, n in ((6, 6, 4), (7, 5, 4)):
        board = Board(width, height, n)
        ref = ReferenceMCTS(HashEvaluator(), n_playout=120, rng=np.random.default_rng(0))
        fast = BatchedMCTS(HashEvaluator(), *parts(width, height, n, n_playout=120))
        np.testing.assert_array_equal(ref.search(board).visits, fast.search([board])[0].visits)


def test_batched_trees_match_single_trees():
    boards = [Board.from_moves(m) for m in ([], [40], [40, 41, 30])]
    together = BatchedMCTS(HashEvaluator(), *parts(9, 9, 5, n_playout=80), n_trees=3).search(boards)
    for board, result in zip(boards, together):
        alone = BatchedMCTS(HashEvaluator(), *parts(9, 9, 5, n_playout=80)).search([board])[0]
        np.testing.assert_array_equal(alone.visits, result.visits)


def test_one_evaluator_call_per_step_for_all_trees():
    evaluator = HashEvaluator()
    boards = [Board.from_moves([m]) for m in range(8)]
    BatchedMCTS(evaluator, *parts(9, 9, 5, n_playout=20), n_trees=8).search(boards)
    assert evaluator.calls <= 20  # one call for the roots, then at most one per playout step
    assert evaluator.positions <= 8 * 20


def test_tree_reuse_keeps_the_subtree():
    mcts = BatchedMCTS(HashEvaluator(), *parts(9, 9, 5, n_playout=200))
    board = Board()
    first = mcts.search([board])[0]
    move = first.best_move()
    kept = first.visits[move]
    board.do_move(move)
    second = mcts.search([board])[0]
    assert second.visits.sum() == pytest.approx(kept - 1 + 200)  # old visits below + new playouts


def test_searching_one_position_again_and_again_stays_within_the_tree():
    mcts = BatchedMCTS(HashEvaluator(), *parts(9, 9, 5, n_playout=50))
    board = Board.from_moves([40])
    totals = [mcts.search([board])[0].visits.sum() for _ in range(6)]
    assert totals[:2] == [49, 99]  # the kept tree grows by a search's playouts
    assert all(total < 3 * 50 + 2 for total in totals)  # and starts afresh before it would overflow


class _Peaked:
    """Sharp priors (a trained net's are): the tree below the chosen move is big."""

    def __init__(self):
        self.logits = np.random.default_rng(1).normal(size=81) * 4

    def evaluate_batch(self, planes, legal):
        priors = np.where(legal, np.exp(self.logits), 0.0)
        return priors / priors.sum(axis=1, keepdims=True), np.zeros(len(legal))


def test_the_rounds_of_a_move_keep_growing_one_tree():
    """A timed search runs rounds of a few playouts on one position: each round adds its playouts
    to the tree the move started with (a big reused subtree included), none starts it afresh."""
    mcts = BatchedMCTS(_Peaked(), *parts(9, 9, 5, n_playout=100))
    board = Board()
    for _ in range(4):
        totals = [mcts.search([board], n_playout=20, keep_tree=True)[0].visits.sum() for _ in range(5)]
        assert np.diff(totals).tolist() == [20] * 4, totals
        board.do_move(mcts.search([board], n_playout=1, keep_tree=True)[0].best_move())


def test_no_reuse_matches_fresh_search():
    board = Board.from_moves([40])
    mcts = BatchedMCTS(HashEvaluator(), *parts(9, 9, 5, n_playout=60, reuse_tree=False))
    mcts.search([Board()])
    again = mcts.search([board])[0].visits
    fresh = BatchedMCTS(HashEvaluator(), *parts(9, 9, 5, n_playout=60)).search([board])[0].visits
    np.testing.assert_array_equal(again, fresh)


def test_noise_only_changes_root_priors_when_asked():
    board = Board.from_moves([40])
    plain = search(board, HashEvaluator(), n=10)
    noisy = search(board, HashEvaluator(), n=10, noise=True)
    assert not np.allclose(plain.priors, noisy.priors)
    assert noisy.priors.sum() == pytest.approx(1.0)
    assert noisy.priors[40] == 0.0  # occupied point gets no noise
    again = search(board, HashEvaluator(), n=10)
    np.testing.assert_array_equal(plain.priors, again.priors)


def test_virtual_loss_batching_counts_every_playout():
    evaluator = HashEvaluator()
    result = search(Board.from_moves([40]), evaluator, n=200, leaves_per_step=8)
    assert result.visits.sum() == 199
    assert evaluator.calls < 60
    blocked = search(Board.from_moves(BLACK_FOUR), UniformEvaluator(), n=4000, leaves_per_step=8)
    assert blocked.best_move() == 40


def test_ended_position_is_refused():
    board = Board.from_moves([36, 0, 37, 8, 38, 72, 39, 80, 40])
    with pytest.raises(ValueError, match="ended"):
        search(board)


def test_visit_policy_temperatures():
    visits = np.array([0.0, 10.0, 30.0, 30.0])
    np.testing.assert_allclose(visit_policy(visits, 1.0), [0, 1 / 7, 3 / 7, 3 / 7])
    np.testing.assert_allclose(visit_policy(visits, 0.0), [0, 0, 0.5, 0.5])
    sharp = visit_policy(np.array([1.0, 2.0]), 0.5)
    np.testing.assert_allclose(sharp, [0.2, 0.8])


def test_geometry_win_check_matches_board():
    rng = np.random.default_rng(0)
    for width, height, n in ((9, 9, 5), (6, 6, 4), (10, 7, 5)):
        g = Geometry(width, height, n)
        for _ in range(20):
            board = Board(width, height, n)
            cells = np.zeros((1, width * height + 1), dtype=np.int8)
            while not board.game_end()[0]:
                move = int(rng.choice(board.availables))
                colour = 1 if len(board.moves) % 2 == 0 else 2
                board.do_move(move)
                cells[0, move] = colour
                assert g.wins(cells, np.array([move]), np.array([colour]))[0] == (board.winner != -1)


def test_rollouts_are_unbiased_random_playouts():
    """Outcome frequencies of the vectorised rollout match move-by-move random playouts."""
    board = Board(5, 5, 4)
    for move in (12, 6):
        board.do_move(move)
    rollout = RolloutEvaluator(5, 5, 4, np.random.default_rng(0))
    planes = np.repeat(board.current_state()[None], 4000, axis=0)
    legal = np.repeat((board.current_state()[:2].sum(0).ravel() == 0)[None], 4000, axis=0)
    _, values = rollout.evaluate_batch(planes, legal)
    rng = np.random.default_rng(1)
    slow = []
    for _ in range(4000):
        b = board.copy()
        while not b.game_end()[0]:
            b.do_move(int(rng.choice(b.availables)))
        winner = b.game_end()[1]
        slow.append(0.0 if winner == -1 else (1.0 if winner == board.current_player else -1.0))
    slow = np.array(slow)
    for outcome in (-1.0, 0.0, 1.0):
        assert abs(np.mean(values == outcome) - np.mean(slow == outcome)) < 0.04


def test_pure_mcts_matches_the_reference_rollout_search():
    """Pure MCTS = the search with a rollout evaluator; the fast one computes the same as the plain one."""
    board = Board.from_moves([40, 41, 31])
    ref = ReferenceMCTS(RolloutEvaluator(9, 9, 5, np.random.default_rng(7)), n_playout=300)
    fast = BatchedMCTS(RolloutEvaluator(9, 9, 5, np.random.default_rng(7)), *parts(9, 9, 5, n_playout=300))
    np.testing.assert_array_equal(ref.search(board).visits, fast.search([board])[0].visits)


# ---------------------------------------------------------------- forced moves (exact rules)

def board_cells(board: Board) -> np.ndarray:
    """The search's cells of a board: int8 [size + 1], 1 first player, 2 second, padding 0."""
    cells = np.zeros(board.width * board.height + 1, dtype=np.int8)
    cells[board.moves[0::2]] = 1
    cells[board.moves[1::2]] = 2
    return cells


def brute_force_winning_points(board: Board, colour: int) -> set[int]:
    """Empty points where a stone of ``colour`` would complete a line, by trying each one."""
    geometry = Geometry(board.width, board.height, board.n_in_row)
    cells = board_cells(board)
    points = set()
    for move in board.availables:
        cells[move] = colour
        if geometry.wins_one(cells, move, colour):
            points.add(move)
        cells[move] = 0
    return points


def test_winning_points_match_brute_force():
    """Both implementations: the search's (all positions at once) and the players' (one board)."""
    rng = np.random.default_rng(5)
    found = 0
    for width, height, n in ((9, 9, 5), (6, 6, 4), (10, 7, 5), (7, 5, 3)):
        g = Geometry(width, height, n)
        for _ in range(15):
            board = Board(width, height, n)
            while not board.game_end()[0]:
                got = g.winning_points(board_cells(board)[None])
                for colour in (1, 2):
                    expected = brute_force_winning_points(board, colour)
                    assert set(np.flatnonzero(got[0, colour - 1])) == expected
                    assert winning_points(board, colour) == sorted(expected)
                    found += len(expected)
                board.do_move(int(rng.choice(board.availables)))
    assert found > 0  # the games did reach positions with winning points


def test_forced_moves_take_the_five():
    # Both sides have a four; the player to move searches only its winning point, worth +1.
    result = search(Board.from_moves(BOTH_FOUR), ConstantEvaluator(0.0), n=50, forced_moves=True)
    assert set(np.flatnonzero(result.visits)) == {40}
    assert result.value == 1.0


def test_forced_moves_block_the_four():
    # White to move, black threatens 40: only the block is searched, even with priors elsewhere.
    result = search(Board.from_moves(BLACK_FOUR), HashEvaluator(), n=50, forced_moves=True)
    assert set(np.flatnonzero(result.visits)) == {40}
    assert set(np.flatnonzero(result.priors)) == {40}


def test_forced_moves_see_an_open_four_is_lost():
    # Black has an open four (38-41, with 37 and 42 empty). White to move searches only the two
    # blocks, each answered by black's five: the root is lost, whatever the evaluator says.
    board = Board.from_moves([38, 0, 39, 8, 40, 72, 41])
    result = search(board, ConstantEvaluator(0.9), n=30, forced_moves=True)
    assert set(np.flatnonzero(result.visits)) == {37, 42}
    assert result.value == -1.0


def test_win_in_one_leaf_is_not_expanded_nor_evaluated():
    # Black has an open three; leaves where the player to move can make five are valued +1
    # without a network call: the evaluator never sees a position with a win in one.
    class Recording(ConstantEvaluator):
        def __init__(self):
            super().__init__(0.0)
            self.geometry = Geometry(9, 9, 5)

        def evaluate_batch(self, planes, legal):
            own, other = planes[:, 0].reshape(len(planes), -1), planes[:, 1].reshape(len(planes), -1)
            cells = np.zeros((len(planes), 82), dtype=np.int8)
            cells[:, :81] = own + 2 * other
            assert not self.geometry.winning_points(cells)[:, 0].any()  # own stones are colour 1 here
            return super().evaluate_batch(planes, legal)

    board = Board.from_moves([38, 0, 39, 8, 40, 72])  # white to move; black has three in a row
    result = search(board, Recording(), n=300, forced_moves=True)
    assert result.visits.sum() == 299


def test_forced_moves_noise_stays_on_the_forced_moves():
    result = search(Board.from_moves(BLACK_FOUR), UniformEvaluator(), n=20, forced_moves=True, noise=True)
    assert set(np.flatnonzero(result.priors)) == {40}


def test_forced_moves_off_is_the_plain_search():
    board = Board.from_moves(BLACK_FOUR)
    plain = search(board, HashEvaluator(), n=200)
    assert (np.flatnonzero(plain.visits) != 40).any()  # the plain search spends visits elsewhere


# ---------------------------------------------------------------- VCF (exact threat search)
# X: a closed three on row 4 (O at its left end) and two stones in column 4 below (4, 4). X to
# move wins by VCF: (4, 4) makes a four (O must block at (4, 5)) and an open three in column 4,
# which X makes an open four. O's stones are out of the way, in the corners.
VCF_IN_TWO = [37, 36, 38, 72, 39, 80, 49, 0, 58, 8]
VCF_START = 40  # (4, 4)


def test_vcf_at_the_root_plays_its_first_move():
    result = search(Board.from_moves(VCF_IN_TWO), HashEvaluator(), n=30, forced_moves=True, vcf=True)
    assert set(np.flatnonzero(result.visits)) == {VCF_START}
    assert result.best_move() == VCF_START


def test_vcf_node_is_valued_won_and_not_expanded():
    # Below the root's only move, O's only move is the block; the position after it has X's VCF
    # (an open three to make an open four): it is valued +1 without the evaluator. So the
    # evaluator sees two positions (the root, O after the four); every later playout ends at +1.
    class Counting(ConstantEvaluator):
        def __init__(self):
            super().__init__(0.0)
            self.positions = 0

        def evaluate_batch(self, planes, legal):
            self.positions += len(planes)
            return super().evaluate_batch(planes, legal)

    evaluator, n = Counting(), 30
    result = search(Board.from_moves(VCF_IN_TWO), evaluator, n=n, forced_moves=True, vcf=True)
    assert evaluator.positions == 2
    assert result.value == pytest.approx((n - 2) / (n - 1))  # one 0 (O's node), then n - 2 wins
    plain = search(Board.from_moves(VCF_IN_TWO), Counting(), n=n, forced_moves=True)
    assert plain.value < 0.5  # without the VCF rules the same evaluator sees nothing won


def test_search_never_evaluates_a_position_with_a_vcf_for_the_player_to_move():
    solver = VcfSolver(Geometry(9, 9, 5), DEFAULT_VCF_NODES)

    class Checking(HashEvaluator):
        def evaluate_batch(self, planes, legal):
            own, other = planes[:, 0].reshape(len(planes), -1), planes[:, 1].reshape(len(planes), -1)
            for o, t in zip(own, other):
                cells = np.zeros(82, dtype=np.int8)
                cells[:81] = o + 2 * t  # own stones are colour 1 here
                assert not solver.solve(cells, 1).win
            return super().evaluate_batch(planes, legal)

    board = Board.from_moves([40, 10, 41, 70, 31, 20])  # X to move, with stones to make threats with
    result = search(board, Checking(), n=200, forced_moves=True, vcf=True)
    assert result.visits.sum() == 199


def test_root_searches_only_the_moves_that_stop_the_opponents_vcf():
    # O to move; X threatens the VCF of VCF_IN_TWO. Only four moves stop it: the four's two points
    # (4, 4) and (4, 5), and the ends of column 4's three-to-be, (3, 4) and (7, 4).
    board = Board.from_moves(VCF_IN_TWO[:-1])
    defences = {31, 40, 41, 67}
    solver = VcfSolver(Geometry(9, 9, 5), 10**5)
    for move in board.availables:  # the solver agrees move by move (it is tested against brute force)
        after = Board.from_moves(VCF_IN_TWO[:-1] + [move])
        cells = board_cells(after)
        assert solver.solve(cells, 1).win == (move not in defences)
    result = search(board, HashEvaluator(), n=100, forced_moves=True, vcf=True)
    assert set(np.flatnonzero(result.priors)) == defences
    assert set(np.flatnonzero(result.visits)) <= defences
    plain = search(board, HashEvaluator(), n=100, forced_moves=True)
    assert not set(np.flatnonzero(plain.visits)) <= defences


def test_reused_tree_is_restarted_when_the_root_must_defend(caplog):
    # Search from one move earlier with tree reuse: the subtree of X's move (6, 4) was expanded as
    # an inner node (with every move); as the root it must search only the defences.
    class Prefers(ConstantEvaluator):
        def evaluate_batch(self, planes, legal):
            priors, values = super().evaluate_batch(planes, legal)
            priors[:, 58] += 10.0 * legal[:, 58]
            return priors / priors.sum(axis=1, keepdims=True), values

    mcts = BatchedMCTS(Prefers(0.0), *parts(9, 9, 5, n_playout=100, forced_moves=True, vcf=True),
                       rng=np.random.default_rng(0))
    mcts.search([Board.from_moves(VCF_IN_TWO[:-2])])
    assert mcts.children[0, 0, 58] != -1  # the subtree to reuse exists
    with caplog.at_level("DEBUG", logger="mcts.search"):
        result = mcts.search([Board.from_moves(VCF_IN_TWO[:-1])])[0]
    assert "starting a fresh tree" in caplog.text
    assert set(np.flatnonzero(result.visits)) <= {31, 40, 41, 67} and result.visits.sum() == 99
    caplog.clear()
    with caplog.at_level("DEBUG", logger="mcts.search"):
        again = mcts.search([Board.from_moves(VCF_IN_TWO[:-1])], n_playout=50, keep_tree=True)[0]
    assert "starting a fresh tree" not in caplog.text  # the same root, already searched as a root
    assert again.visits.sum() == 149


def test_the_rounds_of_one_position_check_its_root_once():
    """A timed search runs many rounds from one root: the root's moves (its VCF and VCT rules) are
    worked out once, when the tree is expanded or reused there, not again every round (unless the
    search's stop cut that check short)."""
    mcts = BatchedMCTS(HashEvaluator(), *parts(9, 9, 5, n_playout=200, forced_moves=True, vcf=True, vct=True),
                       rng=np.random.default_rng(0))
    root_calls = []
    moves_to_search = mcts.rules.moves_to_search

    def counted(cells, to_move, root=False, depth=None):
        root_calls.extend([root] * root)
        return moves_to_search(cells, to_move, root=root, depth=depth)

    mcts.rules.moves_to_search = counted
    board = Board.from_moves(VCF_IN_TWO[:-2])
    for _ in range(4):
        result = mcts.search([board], n_playout=20, keep_tree=True)[0]
    assert len(root_calls) == 1 and result.visits.sum() == 79  # one tree, four rounds
    board.do_move(result.best_move())
    for _ in range(3):
        mcts.search([board], n_playout=20, keep_tree=True)
    assert len(root_calls) == 2  # the kept subtree, checked once as a root
    mcts.reset()
    mcts.search([board], n_playout=20, keep_tree=True, stop=lambda: True)  # its checks cut short...
    mcts.search([board], n_playout=20, keep_tree=True)
    mcts.search([board], n_playout=20, keep_tree=True)
    assert len(root_calls) == 4  # ...are made again the next round, and then no more


def test_vcf_needs_forced_moves():
    with pytest.raises(ValueError, match="forced_moves"):
        TacticsConfig(vcf=True)
    with pytest.raises(ValueError, match="vcf_nodes"):
        TacticsConfig(forced_moves=True, vcf=True, vcf_nodes=0)


# ---------------------------------------------------------------- VCT (threes too), at the root
# X: two stones in column 5 and two in row 4; X (4, 5) makes two open threes at once: a VCT, no VCF.
VCT_DOUBLE_THREE = [23, 63, 32, 72, 39, 71, 40, 80]


def test_vct_at_the_root_plays_its_first_move():
    board = Board.from_moves(VCT_DOUBLE_THREE)
    cells = board_cells(board)
    assert not VcfSolver(Geometry(9, 9, 5)).solve(cells, 1).win
    win = VctSolver(Geometry(9, 9, 5)).solve(cells, 1)
    assert win.win
    result = search(board, HashEvaluator(), n=30, forced_moves=True, vcf=True, vct=True)
    assert set(np.flatnonzero(result.visits)) == {win.move}
    plain = search(board, HashEvaluator(), n=30, forced_moves=True, vcf=True)
    assert len(np.flatnonzero(plain.visits)) > 1


def test_root_searches_only_the_moves_that_stop_the_opponents_vct():
    from tests.test_vct import GAME_D5, board_after

    board = board_after(GAME_D5, 9)  # a real game: White to move, Black's open three E6-G6
    cells = board_cells(board)
    solver = VctSolver(Geometry(9, 9, 5))
    assert solver.solve(cells, 1).win
    moves = np.flatnonzero(cells[:-1] == 0)
    stopping = set(moves[solver.defences(cells, 2, moves)].tolist())
    assert 0 < len(stopping) < len(moves)
    result = search(board, HashEvaluator(), n=100, forced_moves=True, vcf=True, vct=True)
    assert set(np.flatnonzero(result.visits)) == stopping


def test_vct_leaves_two_moves_down_are_checked():
    board = Board.from_moves(VCT_DOUBLE_THREE[:-1])
    calls = {}
    for depth in (0, 2):
        options = dict(n_playout=200, forced_moves=True, vcf=True, vct=True, vct_leaf_depth=depth)
        mcts = BatchedMCTS(HashEvaluator(), *parts(9, 9, 5, **options), rng=np.random.default_rng(0))
        mcts.search([board])
        calls[depth] = mcts.rules.vct_calls
    assert calls[2] > calls[0]  # the root's calls, then one per new leaf two moves down


def test_vct_config_is_checked():
    with pytest.raises(ValueError, match="vct needs vcf"):
        TacticsConfig(forced_moves=True, vct=True)
    with pytest.raises(ValueError, match="vct_nodes"):
        TacticsConfig(forced_moves=True, vcf=True, vct=True, vct_nodes=0)
    with pytest.raises(ValueError, match="vct_leaf_depth"):
        TacticsConfig(forced_moves=True, vcf=True, vct_leaf_depth=2)
