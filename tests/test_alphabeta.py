"""The ab player (gomoku/players/alphabeta.py): tactics in known positions, its threat solvers,
alpha-beta against plain negamax and against a brute force of the game, seeds, specs, the budget."""

import numpy as np
import pytest

from gomoku.game.board import Board
from gomoku.players import PLAYER_SPECS_HELP, make_player
from gomoku.players.alphabeta import VCT_NODES, AlphaBetaPlayer, ab_search
from gomoku.players.classical import board_cells
from gomoku.players.negamax import NegamaxSearch
from gomoku.tactics.geometry import Geometry
from gomoku.tactics import solvers
from gomoku.tactics.threats import MIN_N_IN_ROW, VcfSolver
from gomoku.tactics.vct import VctSolver
from boards import at, position, random_midgame

AB_SOLVERS = list(solvers())  # the ab player's VCF and VCT solver classes: the compiled ones

BIG_BUDGET = 10**6


def vcf(board: Board, attacker: int) -> bool:
    solver = VcfSolver(Geometry(board.width, board.height, board.n_in_row), BIG_BUDGET)
    return solver.solve(board_cells(board), attacker).win


# ---------------------------------------------------------------- known positions
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_takes_a_five(depth):
    # X has four in row 4 (B-E) with A and F open; O has four in column 8, X to move: X wins now.
    board = position(xs=[(4, 1), (4, 2), (4, 3), (4, 4)], os_=[(0, 8), (1, 8), (2, 8), (3, 8)])
    assert board.move_to_location(AlphaBetaPlayer(depth).get_action(board)) in [(4, 0), (4, 5)]


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_blocks_a_four(depth):
    # O has four in row 4 (B-E), X nothing in a line: X must block at A or F.
    board = position(xs=[(0, 0), (8, 8), (0, 4), (8, 1)], os_=[(4, 1), (4, 2), (4, 3), (4, 4)])
    assert board.move_to_location(AlphaBetaPlayer(depth).get_action(board)) in [(4, 0), (4, 5)]


# X to move: a closed three on row 4 and two stones in column 4; X (4, 4) makes a four and, after
# O's forced block at (4, 5), an open three in column 4 that becomes an open four (mcts tests).
VCF_XS = [(4, 1), (4, 2), (4, 3), (5, 4), (6, 4)]
VCF_OS = [(4, 0), (8, 0), (8, 8), (0, 8), (1, 6)]


@pytest.mark.parametrize("depth", [1, 2])
def test_plays_a_vcf(depth):
    board = position(xs=VCF_XS, os_=VCF_OS)
    assert board.current_player == 1 and vcf(board, 1)
    move = AlphaBetaPlayer(depth).get_action(board)
    after = board.copy()
    after.do_move(move)
    # The solver's first move: a four whose forced answer leaves X a win by fours.
    assert board.move_to_location(move) == (4, 4)
    (block,) = at(after, (4, 5))
    after.do_move(block)
    assert vcf(after, 1)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_refutes_the_opponents_vcf(depth):
    # The same shape for O, X to move without a threat of its own: every move X may play leaves O
    # without a VCF (checked with a large budget), and there are moves that do not.
    board = position(xs=[(4, 0), (8, 0), (8, 8), (0, 8), (1, 1)], os_=VCF_XS)
    assert board.current_player == 1 and vcf(board, 2) and not vcf(board, 1)
    move = AlphaBetaPlayer(depth).get_action(board)
    after = board.copy()
    after.do_move(move)
    assert not vcf(after, 2)


def test_a_vct_solver_plugs_in():
    # X: two stones in row 4 and two in column 5; X (4, 5) makes two open threes at once: a win
    # with threes (VCT) and no win by fours alone (the VCT tests' position).
    board = position(xs=[(2, 5), (3, 5), (4, 3), (4, 4)], os_=[(7, 0), (7, 8), (8, 0), (8, 8)])
    geometry = Geometry(9, 9, 5)
    cells = board_cells(board)
    assert not vcf(board, 1) and VctSolver(geometry).solve(cells, 1).win
    player = AlphaBetaPlayer(1, solvers=[VcfSolver(geometry), VctSolver(geometry)])
    assert player.get_action(board) == VctSolver(geometry).solve(cells, 1).move
    # A player with the default solvers takes those of each board shape it is given.
    player = AlphaBetaPlayer(2)
    for size in (9, 7, 9):
        small = position(xs=[(3, 3)], os_=[], width=size, height=size)
        assert player.get_action(small) in small.availables
        assert player._solvers[0].geometry.width == size


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_stops_an_open_three(depth):
    # O has an open three on row 4 (C-E) and X nothing: X must stop the open four at once.
    board = position(xs=[(0, 0), (8, 8), (0, 8)], os_=[(4, 2), (4, 3), (4, 4)])
    assert board.move_to_location(AlphaBetaPlayer(depth).get_action(board)) in [(4, 0), (4, 1), (4, 5), (4, 6)]


@pytest.mark.parametrize("depth", [1, 3])
def test_makes_an_open_four(depth):
    board = position(xs=[(4, 3), (4, 4), (4, 5)], os_=[(0, 0), (8, 8)])
    assert board.move_to_location(AlphaBetaPlayer(depth).get_action(board)) in [(4, 2), (4, 6)]


def test_plays_the_centre_first_and_leaves_the_board_alone():
    board = Board()
    assert AlphaBetaPlayer(3).get_action(board) == 40
    board = random_midgame(np.random.default_rng(3), 14, 9, 9, 5)
    before = (list(board.moves), board.current_state().tobytes())
    assert AlphaBetaPlayer(2).get_action(board) in board.availables
    assert (list(board.moves), board.current_state().tobytes()) == before


# ---------------------------------------------------------------- search
def state(search: NegamaxSearch):
    return search.counts, search.fours, search.threes, search.pattern, search.near, search.cells.tolist()


@pytest.mark.parametrize("seed", range(3))
def test_incremental_shapes_match_a_fresh_count(seed):
    """Moves played and taken back keep the window counts, shapes and pattern sums of a recount."""
    rng = np.random.default_rng(seed)
    board = random_midgame(rng, 6, 9, 9, 5)
    search = ab_search(board, BIG_BUDGET)
    for _ in range(30):
        if search.board.moves and (search.board.game_end()[0] or rng.random() < 0.4):
            search.undo()
        else:
            search.play(int(rng.choice(search.board.availables)))
        assert state(search) == state(ab_search(search.board, BIG_BUDGET))


@pytest.mark.parametrize("seed", range(6))
def test_alpha_beta_agrees_with_plain_negamax(seed):
    """The same best value and the same set of best root moves with and without pruning."""
    rng = np.random.default_rng(seed)
    board = random_midgame(rng, int(rng.integers(3, 10)), 7, 7, 4)
    for depth in (1, 2, 3):
        pruned, plain = ab_search(board, BIG_BUDGET), ab_search(board, BIG_BUDGET, prune=False)
        moves = pruned.ordered_moves(board.current_player, 8)
        fast, slow = pruned.root_scores(moves, depth), plain.root_scores(moves, depth)
        assert max(fast) == max(slow)
        assert [m for m, s in zip(moves, fast) if s == max(fast)] == [m for m, s in zip(moves, slow) if s == max(slow)]
        assert pruned.nodes <= plain.nodes


def game_value(board: Board, memo: dict) -> int:
    """+1 / 0 / -1 for the side to move, by trying every move (a brute force with a memo)."""
    key = (frozenset(board.states.items()), board.current_player)
    if key in memo:
        return memo[key]
    best = -1
    for move in board.availables:
        board.do_move(move)
        ended, winner = board.game_end()
        value = (1 if winner != -1 else 0) if ended else -game_value(board, memo)
        board.undo_move()
        best = max(best, value)
        if best == 1:
            break
    memo[key] = best
    return best


@pytest.mark.parametrize("seed", range(8))
def test_a_full_depth_search_knows_the_game_value(seed):
    """To the end of the game (every empty point a candidate), the value's sign is the brute force's."""
    rng = np.random.default_rng(100 + seed)
    board = random_midgame(rng, 9, 4, 4, 3)
    empties = len(board.availables)
    search = ab_search(board, BIG_BUDGET)
    value = search.negamax(empties, -search.infinity, search.infinity, 0)
    assert int(np.sign(value)) == game_value(board.copy(), {})


def test_the_node_budget_bounds_every_depth():
    board = random_midgame(np.random.default_rng(7), 16, 9, 9, 5)
    player = AlphaBetaPlayer(50, max_nodes=2000)
    assert player.get_action(board) in board.availables
    assert 1 <= player.last_depth < 50 and player.out_of_nodes


def test_seeded_games_repeat():
    def game(seed: int) -> list[int]:
        black, white = make_player("ab:2", seed=seed), make_player("ab:1", seed=seed + 1)
        board = Board()
        while not board.game_end()[0] and len(board.moves) < 30:
            board.do_move((black if board.current_player == 1 else white).get_action(board))
        return board.moves

    assert game(4) == game(4)


@pytest.mark.parametrize("width, height, n_in_row", [(4, 4, 1), (6, 6, 2), (5, 5, 3), (7, 5, 4)])
def test_plays_whole_games_on_small_rules(width, height, n_in_row):
    """Lines too short for threats (n_in_row < 3) get no threat solvers; the rest plays on. A line
    of one or two cannot be stopped: Black completes it on its first or second move."""
    black, white = make_player("ab:3:vct", seed=1), make_player("ab:2", seed=2)
    solvers = black.solvers(Geometry(width, height, n_in_row))
    assert [type(s) for s in solvers] == ([] if n_in_row < MIN_N_IN_ROW else AB_SOLVERS)
    board = Board(width, height, n_in_row)
    while not board.game_end()[0]:
        move = (black if board.current_player == 1 else white).get_action(board)
        assert move in board.availables
        board.do_move(move)
    if n_in_row < MIN_N_IN_ROW:
        assert board.game_end() == (True, 1) and len(board.moves) == 2 * n_in_row - 1


# ---------------------------------------------------------------- specs
def test_the_spec():
    player = make_player(" ab:3 ", seed=1)
    assert isinstance(player, AlphaBetaPlayer) and player.name == "ab:3" and player.depth == 3
    assert "ab:DEPTH" in PLAYER_SPECS_HELP
    with_vct = make_player("ab:3:vct", seed=1)
    assert with_vct.name == "ab:3:vct" and with_vct.depth == 3 and "ab:DEPTH:vct" in PLAYER_SPECS_HELP
    solvers = with_vct.solvers(Geometry(9, 9, 5))
    assert [type(s) for s in solvers] == AB_SOLVERS and solvers[1].max_nodes == VCT_NODES
    assert [type(s) for s in player.solvers(Geometry(9, 9, 5))] == AB_SOLVERS[:1]


def test_the_play_window_offers_ab():
    from gomoku.ui.ai import AI_SPECS_HELP, build_opponent, describe_spec

    assert build_opponent("ab:2", 9, seed=0).name == "ab:2"
    assert describe_spec("ab:2") == "alpha-beta, depth 2" and "ab:DEPTH" in AI_SPECS_HELP
    assert describe_spec("ab:2:vct") == "alpha-beta, depth 2, VCT"


@pytest.mark.parametrize("spec", ["ab", "ab:", "ab:0", "ab:-2", "ab:x", "ab:2:3", "AB:2", "ab:vct", "ab:0:vct", "ab:2:VCT"])
def test_bad_specs_name_the_valid_forms(spec):
    with pytest.raises(ValueError, match="valid forms") as info:
        make_player(spec)
    assert repr(spec) in str(info.value).splitlines()[0]


def test_an_unknown_suffix_is_named_as_such():
    """'ab:2:vcf' was refused as "DEPTH must be a positive integer, got '2:vcf'"."""
    with pytest.raises(ValueError) as info:
        make_player("ab:2:vcf")
    assert str(info.value).splitlines()[0] == ("bad player spec 'ab:2:vcf' (expected ab:DEPTH or ab:DEPTH:vct, "
                                               "got the suffix 'vcf'); valid forms:")


def test_bad_depths_and_budgets():
    for depth in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="depth"):
            AlphaBetaPlayer(depth)
    with pytest.raises(ValueError, match="max_nodes"):
        AlphaBetaPlayer(2, max_nodes=0)
    with pytest.raises(ValueError, match="vct_nodes"):
        AlphaBetaPlayer(2, vct_nodes=-1)


def test_training_configs_take_ab_opponents():
    from gomoku.training.config import config_from_dict

    config = config_from_dict({"eval": {"opponents": ["ab:2", "minimax:2", "ab:3:vct"]}})
    assert config.eval.opponents == ["ab:2", "minimax:2", "ab:3:vct"]
