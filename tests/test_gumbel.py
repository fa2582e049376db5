"""Gumbel root search: the halving schedule, the improved policy, the search and self-play with it."""

import math

import numpy as np
import pytest

from gomoku import Board
from gomoku.training.config import ConfigError, load_config
from gomoku.training.selfplay import SelfPlayRunner
from mcts import BatchedMCTS, SearchConfig, UniformEvaluator
from mcts.gumbel import completed_q, halving_schedule, improved_policy, sigma, top_k
from tests.fakes import HashEvaluator, parts


def gumbel_search(boards, evaluator=None, n=32, k=8, seed=0, **kwargs):
    board = boards[0]
    mcts = BatchedMCTS(evaluator or UniformEvaluator(),
                       *parts(board.width, board.height, board.n_in_row, n_playout=n, gumbel_k=k, reuse_tree=False,
                              **kwargs), n_trees=len(boards),
                       rng=np.random.default_rng(seed))
    return mcts.search(boards)


def test_halving_schedule_known_values():
    assert halving_schedule(16, 31) == [1, 1, 1, 1]  # 16 + 8 + 4 + 2 visits
    assert halving_schedule(16, 200) == [3, 6, 13, 26]  # 48 + 48 + 52 + 52
    assert halving_schedule(3, 10) == [1, 3]  # 3 + 6
    assert halving_schedule(1, 7) == [7]
    with pytest.raises(ValueError):
        halving_schedule(0, 10)


def test_halving_schedule_spends_the_budget():
    for k in range(1, 65):
        for budget in range(0, 300, 7):
            schedule = halving_schedule(k, budget)
            assert len(schedule) == max(1, math.ceil(math.log2(k))) and min(schedule) >= 1
            counts = [math.ceil(k / 2 ** p) for p in range(len(schedule))]
            total = sum(v * m for v, m in zip(schedule, counts))
            assert total <= max(budget, sum(counts))
            if budget >= sum(counts):
                assert total >= budget - 1


def test_sigma_and_completed_q():
    assert sigma(np.array([-1.0, 0.0, 1.0]), 10).tolist() == [0.0, 30.0, 60.0]
    prior = np.array([0.5, 0.25, 0.25, 0.0])
    visits = np.array([3.0, 1.0, 0.0, 0.0])
    q = np.array([0.2, -0.4, 0.0, 0.0])
    # mixed value: (v + 4 * (0.5 * 0.2 + 0.25 * -0.4) / 0.75) / 5 with v = 0.5
    assert completed_q(prior, visits, q, 0.5) == pytest.approx([0.2, -0.4, 0.1, 0.1])
    assert completed_q(prior, np.zeros(4), q, 0.5) == pytest.approx([0.5] * 4)


def test_improved_policy_is_the_prior_when_every_value_is_equal():
    rng = np.random.default_rng(3)
    legal = rng.random(81) < 0.7
    prior = rng.random(81) * legal
    prior /= prior.sum()
    visits = np.where(legal & (rng.random(81) < 0.3), rng.integers(1, 9, 81), 0).astype(float)
    policy = improved_policy(prior, legal, visits, np.zeros(81), 0.0)
    assert policy == pytest.approx(prior)
    # A better q raises a move's probability, a worse one lowers it.
    move = int(np.flatnonzero(visits)[0])
    q = np.zeros(81)
    q[move] = 0.5
    assert improved_policy(prior, legal, visits, q, 0.0)[move] > prior[move]
    q[move] = -0.5
    assert improved_policy(prior, legal, visits, q, 0.0)[move] < prior[move]


def test_top_k_skips_illegal_moves():
    scores = np.array([0.3, -np.inf, 2.0, 1.0, -np.inf])
    assert top_k(scores, 2).tolist() == [2, 3]
    assert top_k(scores, 9).tolist() == [2, 3, 0]


def test_search_visits_k_candidates_within_the_budget():
    boards = [Board(), Board.from_moves([40]), Board.from_moves([40, 41, 30])]
    for result in gumbel_search(boards, HashEvaluator(), n=64, k=8):
        assert (result.visits > 0).sum() == 8
        assert result.visits.sum() == result.playouts - 1  # the first playout expands the root
        assert 62 <= result.playouts <= 64
        assert result.visits[result.selected] == result.visits.max()  # the last candidate has the most
        assert result.improved.sum() == pytest.approx(1.0)


def test_improved_policy_of_a_value_blind_search_is_the_prior():
    for result in gumbel_search([Board(), Board.from_moves([40, 41])], HashEvaluator(0.0), n=32, k=16):
        assert result.improved == pytest.approx(result.priors)
        assert result.selected in np.flatnonzero(result.visits)


@pytest.mark.parametrize("seed", range(5))
def test_search_finds_a_win_in_one_without_forced_moves(seed):
    # 6x6, four in a row: X has three on row 0 (0, 1, 2); 3 wins. All 30 moves are candidates.
    board = Board.from_moves([0, 12, 1, 13, 2, 20], 6, 6, 4)
    result = gumbel_search([board], n=64, k=32, seed=seed)[0]
    assert result.selected == 3
    assert result.improved[3] > 0.99


def test_forced_moves_leave_one_candidate():
    # O must block X's three-of-four at 3 (6x6, four in a row: X on 0..2, the edge at their left).
    board = Board.from_moves([0, 12, 1, 13, 2], 6, 6, 4)
    result = gumbel_search([board], n=16, k=8, forced_moves=True)[0]
    assert result.selected == 3
    assert np.flatnonzero(result.improved).tolist() == [3]


def test_gumbel_settings_are_checked():
    with pytest.raises(ValueError, match="reuse_tree"):
        SearchConfig(n_playout=32, gumbel_k=8)
    with pytest.raises(ValueError, match="gumbel_k"):
        SearchConfig(n_playout=32, gumbel_k=17, reuse_tree=False)
    with pytest.raises(ConfigError, match="gumbel_k"):
        load_config("configs/smoke.yaml", ["search.gumbel_k=4", "search.fast_playouts=4"])
    with pytest.raises(ConfigError, match="gumbel_k"):
        load_config("configs/smoke.yaml", ["search.gumbel_k=9"])  # smoke: 16 playouts


def test_selfplay_with_gumbel_plays_the_chosen_moves_and_records_improved_policies():
    config = load_config("configs/smoke.yaml", ["search.gumbel_k=4"])
    runner = SelfPlayRunner(UniformEvaluator(), config.board, config.search, parallel_games=3,
                            rng=np.random.default_rng(1))
    assert runner.search.config.gumbel_k == 4 and not runner.search.config.reuse_tree
    games = runner.play(4).games
    assert len(games) >= 4
    for game in games:
        assert len(game.states) == len(game.moves)  # every move recorded
        assert game.probs.sum(axis=1) == pytest.approx(np.ones(len(game.moves)), abs=1e-5)
        replay = Board(6, 6, 4)
        for state, probs, move in zip(game.states, game.probs, game.moves):
            assert np.array_equal(state, replay.current_state())
            assert probs[move] > 0  # the move played is legal: the improved policy covers it
            assert np.all(probs[np.flatnonzero(state[0].ravel() + state[1].ravel())] == 0)
            replay.do_move(move)
        assert replay.game_end() == (True, game.winner)
