"""The parts the search is cut into (issue 26): injected rules, one search config, one definition
of the line shapes, one encoding of the network's input planes."""

import numpy as np
import pytest

from gomoku.game.board import Board
from gomoku.training.config import ConfigError, SearchSection, load_config
from gomoku.tactics import NO_TACTICS, FreestyleRules, Geometry, TacticsConfig, TacticsSettings, make_rules
from gomoku.tactics.geometry import BLOCKED, FOUR, THREE, stones_short
from mcts import FIRST, SECOND, BatchedMCTS, SearchConfig, SearchSettings, UniformEvaluator
from tests.fakes import parts


def test_injected_rules_search_as_the_default_ones():
    config, tactics = SearchConfig(n_playout=60), TacticsConfig(forced_moves=True, vcf=True)
    board = Board.from_moves([40, 41, 31, 49, 22])
    default = BatchedMCTS(UniformEvaluator(), make_rules(9, 9, 5, tactics), config).search([board])[0]
    rules = FreestyleRules(Geometry(9, 9, 5), tactics)
    injected = BatchedMCTS(UniformEvaluator(), rules, config).search([board])[0]
    np.testing.assert_array_equal(default.visits, injected.visits)
    assert rules.vcf_calls > 0  # the injected rules were the ones asked


def test_rules_of_another_board_shape_are_refused():
    search = BatchedMCTS(UniformEvaluator(), FreestyleRules(Geometry(7, 7, 5), NO_TACTICS), SearchConfig(n_playout=8))
    with pytest.raises(ValueError, match="board 9x9/5 does not match the rules' 7x7/5"):
        search.search([Board()])


def test_a_run_s_settings_become_a_search_config_in_one_place():
    section = SearchSection(forced_moves=False)
    config, tactics = SearchConfig.of(section, noise=True), TacticsConfig.of(section)
    assert (tactics.forced_moves, tactics.vcf, tactics.vct, config.noise, config.reuse_tree) == (False, False, False,
                                                                                                True, True)
    section = SearchSection(vcf=False, gumbel_k=8, n_playout=32)
    config, tactics = SearchConfig.of(section), TacticsConfig.of(section)
    assert (tactics.vcf, tactics.vct, config.gumbel_k, config.reuse_tree) == (False, False, 8, False)
    default = TacticsConfig.of(SearchSection())
    assert (default.forced_moves, default.vcf, default.vct) == (True, True, True)  # a run's exact rules
    assert SearchSection().settings() == SearchSettings()
    assert SearchSection().tactics_settings() == TacticsSettings(forced_moves=True, vcf=True, vct=True)


@pytest.mark.parametrize("key, value, message", [
    ("dirichlet_alpha", 0, "must be > 0, got 0"),
    ("dirichlet_epsilon", 2, r"must be in \[0, 1\], got 2"),
    ("gumbel_k", 300, r"must be in 0..n_playout // 2, got 300"),
])
def test_a_shared_check_speaks_both_languages(key, value, message):
    with pytest.raises(ValueError, match=f"^{key} {message}"):
        SearchConfig(**{key: value})
    with pytest.raises(ConfigError, match=f"^search.{key}: {message}"):
        load_config("configs/smoke.yaml", [f"search.{key}={value}"])


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_stones_short_is_short_of_one_window_at_a_time(n):
    geometry = Geometry(n, 1, n)
    short = stones_short(n)
    for mine in range(n + 1):
        for theirs in range(n + 1 - mine):
            counts = np.array([[[mine], [theirs]]])
            expected = [m for m in range(n + 1) if geometry.short_of(counts, m)[0, 0, 0]]
            assert [short[mine][theirs]] == (expected or [BLOCKED])
    assert short[n - 1][0] == FOUR and short[n - 2][0] == THREE and short[n - 1][1] == BLOCKED


@pytest.mark.parametrize("start_player", [1, 2])
def test_board_and_search_encode_the_same_planes(start_player):
    rng = np.random.default_rng(start_player)
    rules = FreestyleRules(Geometry(7, 5, 4), NO_TACTICS)
    for _ in range(20):
        board = Board(7, 5, 4, start_player=start_player)
        for _ in range(int(rng.integers(0, 12))):
            if board.game_end()[0]:
                break
            board.do_move(int(rng.choice(board.availables)))
        cells = np.zeros((1, 36), dtype=np.int8)
        cells[0, board.moves[0::2]], cells[0, board.moves[1::2]] = FIRST, SECOND
        to_move = np.array([FIRST if len(board.moves) % 2 == 0 else SECOND])
        last = np.array([board.moves[-1] if board.moves else -1])
        np.testing.assert_array_equal(rules.encode(cells, to_move, last)[0], board.current_state())


def test_a_search_without_noise_of_a_kept_root_drops_the_noise_of_the_last():
    """The same position searched again with the tree kept, first with Dirichlet noise, then
    without: the second search selected with the noisy priors and returned them."""
    from mcts import BatchedMCTS, UniformEvaluator
    from gomoku.game.board import Board

    board = Board(6, 6, 4)
    board.do_move(14)
    search = BatchedMCTS(UniformEvaluator(), *parts(6, 6, 4, n_playout=60, forced_moves=False),
                         rng=np.random.default_rng(0))
    noisy = search.search([board], noise=True, keep_tree=True)[0]
    clean = search.search([board], noise=False, keep_tree=True, n_playout=30)[0]
    legal = np.array(board.availables)
    np.testing.assert_allclose(clean.priors[legal], 1 / legal.size)
    assert noisy.priors[legal].std() > 0  # the first search had its noise


def test_best_move_breaks_a_tie_of_visits_by_the_prior():
    """100 playouts of the 15x15 net visited 99 moves once each and played the corner A15, the
    lowest index among them; the net's prior is the better guess."""
    from mcts.result import SearchResult

    result = SearchResult(visits=np.array([1.0, 1.0, 0.0, 1.0]), priors=np.array([0.2, 0.5, 0.9, 0.1]),
                          value=0.0, playouts=3)
    assert result.best_move() == 1  # not 0, and never the unvisited 2 however high its prior
    assert SearchResult(**{**result.__dict__, "refuted": (1,)}).best_move() == 0
    assert SearchResult(**{**result.__dict__, "priors": np.full(4, 0.25)}).best_move() == 0  # then the index
    assert SearchResult(**{**result.__dict__, "visits": np.array([1.0, 2.0, 0.0, 3.0])}).best_move() == 3
