"""The VCT solver (gomoku/tactics/vct.py): against plain brute forces, positions from real games, its budget."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from gomoku.game.board import Board
from gomoku.players import make_player, parse_point
from gomoku.players.checks import CHECK_CANDIDATES, CHECK_NODES, CHECK_TIME_SHARE, UNSETTLED_CHECK_DIVISOR
from gomoku.players.search import AlphaZeroPlayer
from gomoku.tactics.geometry import Geometry
from gomoku.tactics.threats import NO_MOVE, ThreatResult, ThreatStatus, VcfSolver
from gomoku.tactics.vct import DEFAULT_VCT_NODES, VctSolver
from mcts import UniformEvaluator
from mcts.result import SearchResult
from tests.boards import at, position
from tests.test_threats import Brute, board, random_position

BIG_BUDGET = 10**6  # enough for any position of the small boards here: the answers are exact


# ---------------------------------------------------------------- plain brute forces
class BruteVct(Brute):
    """VCT under the rules of gomoku/tactics/vct.py, by trying every move and every reply with a plain line
    scan (no windows), remembering solved positions and nothing else:
    - a *five point*: an empty point where a stone completes a line; a *three point*: one where a
      stone leaves two or more five points;
    - the attacker to move wins with a five point; else it must take the defender's five point
      (two: it loses); its move must leave it a five point (a four: the one reply is to take it;
      two or more: won) or a three point (a three: the defender may reply anywhere that makes a
      five point of its own or leaves the attacker no three point; every other reply loses)."""

    def __init__(self, width: int, height: int, n_in_row: int):
        super().__init__(width, height, n_in_row)
        self.vct_memo: dict[tuple[bytes, int], bool] = {}  # the VCF's memo is ``memo``

    def three_point(self, cells: np.ndarray, colour: int, points) -> bool:
        for p in points:
            if cells[p] == 0:
                cells[p] = colour
                double = len(self.five_points(cells, colour)) >= 2
                cells[p] = 0
                if double:
                    return True
        return False

    def vct(self, cells: np.ndarray, attacker: int) -> bool:
        key = (cells.tobytes(), attacker)
        if key not in self.vct_memo:
            won = bool(self.five_points(cells, attacker))
            blocks = self.five_points(cells, 3 - attacker)
            if not won and len(blocks) <= 1:
                empty = [p for p in range(self.width * self.height) if cells[p] == 0]
                won = any(self.wins_by(cells, attacker, move) for move in (sorted(blocks) or empty))
            self.vct_memo[key] = won
        return self.vct_memo[key]

    def wins_by(self, cells: np.ndarray, attacker: int, move: int) -> bool:
        """Whether the attacker's threat at ``move`` wins (a five point to take is not asked here)."""
        defender = 3 - attacker
        cells[move] = attacker
        try:
            fives = self.five_points(cells, attacker)
            if len(fives) > 1:
                return True
            empty = [p for p in range(self.width * self.height) if cells[p] == 0]
            # A defender's stone makes no five point of the attacker's, so the three points left
            # after a reply are among those before it.
            threes = [] if fives else [p for p in empty if self.three_point(cells, attacker, [p])]
            if not fives and not threes:
                return False  # not a threat
            for reply in sorted(fives) or empty:
                cells[reply] = defender
                try:
                    if fives or self.five_points(cells, defender) or not self.three_point(cells, attacker, threes):
                        if not self.vct(cells, attacker):
                            return False
                finally:
                    cells[reply] = 0
            return True
        finally:
            cells[move] = 0


class FullGame:
    """Whether the player to move can force a line whatever the other does (every move of both
    sides; a full board is not a win): the plain game tree, for boards with few empty points."""

    def __init__(self, brute: Brute):
        self.brute = brute
        self.memo: dict[tuple[bytes, int], bool] = {}

    def wins(self, cells: np.ndarray, player: int) -> bool:
        key = (cells.tobytes(), player)
        if key not in self.memo:
            empty = [p for p in range(self.brute.width * self.brute.height) if cells[p] == 0]
            self.memo[key] = any(self.wins_with(cells, player, move) for move in empty)
        return self.memo[key]

    def wins_with(self, cells: np.ndarray, player: int, move: int) -> bool:
        if self.brute.makes_line(cells, move, player):
            return True
        cells[move] = player
        try:
            other = 3 - player
            replies = [p for p in range(self.brute.width * self.brute.height) if cells[p] == 0]
            return bool(replies) and all(not self._reply_holds(cells, other, player, r) for r in replies)
        finally:
            cells[move] = 0

    def _reply_holds(self, cells: np.ndarray, other: int, player: int, reply: int) -> bool:
        if self.brute.makes_line(cells, reply, other):
            return True
        cells[reply] = other
        try:
            return not self.wins(cells, player)
        finally:
            cells[reply] = 0


# ---------------------------------------------------------------- agreement with the brute forces
def check_against_brute_force(width: int, height: int, n: int, low: int, high: int, positions: int,
                              seed: int, without_vcf: bool) -> tuple[int, int]:
    """Solve ``positions`` seeded random positions (``low``..``high`` stones, the side to move
    attacking; ``without_vcf``: only those where the brute force finds no VCF) with both; returns
    (positions, wins)."""
    geometry = Geometry(width, height, n)
    solver, brute = VctSolver(geometry, max_nodes=BIG_BUDGET), BruteVct(width, height, n)
    rng = np.random.default_rng(seed)
    checked = wins = 0
    while checked < positions:
        stones = int(rng.integers(low, high + 1))
        cells = random_position(geometry, stones, rng)
        attacker = 1 + stones % 2
        if cells is None or brute.five_points(cells, 1) or brute.five_points(cells, 2):
            continue  # a line to complete or block: nothing to search
        if without_vcf and brute.vcf(cells, attacker):
            continue
        expected = brute.vct(cells, attacker)
        result = solver.solve(cells.copy(), attacker)
        assert result.status is not ThreatStatus.UNKNOWN
        assert result.win == expected, (cells[:-1].reshape(height, width), attacker)
        if result.win:
            assert cells[result.move] == 0
            assert result.move in brute.five_points(cells, attacker) or brute.wins_by(cells, attacker, result.move)
            wins += 1
        checked += 1
    return checked, wins


def test_matches_brute_force_on_random_positions():
    checked, wins = check_against_brute_force(6, 6, 4, 16, 22, 20, 66, False)
    assert 0 < wins < checked


def test_matches_brute_force_where_only_threes_can_win():
    checked, wins = check_against_brute_force(5, 5, 4, 8, 14, 20, 1, True)
    assert 0 < wins < checked


def test_every_win_is_a_win_of_the_full_game():
    """Soundness against the whole game tree (every move of both sides) on nearly full boards."""
    geometry = Geometry(5, 5, 4)
    solver, brute = VctSolver(geometry, max_nodes=BIG_BUDGET), Brute(5, 5, 4)
    full = FullGame(brute)
    rng = np.random.default_rng(7)
    wins = checked = 0
    while checked < 40:
        stones = int(rng.integers(12, 17))
        cells = random_position(geometry, stones, rng)
        if cells is None:
            continue
        attacker = 1 + stones % 2
        if brute.five_points(cells, 1) or brute.five_points(cells, 2):
            continue
        result = solver.solve(cells.copy(), attacker)
        assert result.status is not ThreatStatus.UNKNOWN
        if result.win:
            assert full.wins_with(cells, attacker, result.move)
            wins += 1
        checked += 1
    assert wins > 5


# ---------------------------------------------------------------- known positions
def test_a_double_three_is_a_vct_and_not_a_vcf():
    # X: two stones in row 4 and two in column 5; X (4, 5) makes two open threes at once.
    cells = board(9, 9, [".........", ".........", ".....X...", ".....X...", "...XX....",
                         ".........", ".........", "O.......O", "O.......O"])
    geometry = Geometry(9, 9, 5)
    result = VctSolver(geometry).solve(cells, 1)
    assert result.win
    assert BruteVct(9, 9, 5).wins_by(cells, 1, result.move)
    assert VcfSolver(geometry).solve(cells, 1).status is ThreatStatus.NO_WIN


def test_no_threat_no_win():
    cells = board(9, 9, [".........", ".........", ".........", "....X....", ".........",
                         ".........", "....O....", ".........", "........."])
    result = VctSolver(Geometry(9, 9, 5)).solve(cells, 1)
    assert result.status is ThreatStatus.NO_WIN and result.move == -1


# ---------------------------------------------------------------- real games (issue 25)
# Standard notation, row 1 at the bottom; the first two stones are a random opening, then Black.
GAME_B4 = "D7,G4,E7,F5,D6,D5,C5,B4,F8,G9,C7,B7,C6,C4,C8,C9,E8,D8,B5,F9,A4"  # White's B4 (move 8) lost


def cells_after(game: str, plies: int) -> np.ndarray:
    b = Board()
    cells = np.zeros(b.size + 1, dtype=np.int8)
    for i, text in enumerate(game.split(",")[:plies]):
        cells[parse_point(b, text)] = 1 + i % 2
    return cells


def test_finds_blacks_win_after_whites_blunder():
    cells = cells_after(GAME_B4, 8)
    result = VctSolver(Geometry(9, 9, 5), max_nodes=100_000).solve(cells, 1)
    assert result.win
    assert VcfSolver(Geometry(9, 9, 5), max_nodes=100_000).solve(cells, 1).status is ThreatStatus.NO_WIN


def test_the_budget_is_respected():
    cells = cells_after(GAME_B4, 8)
    for budget in (1, 10, 100):
        result = VctSolver(Geometry(9, 9, 5), max_nodes=budget).solve(cells, 1)
        assert result.status is ThreatStatus.UNKNOWN and result.nodes <= budget
    assert VctSolver(Geometry(9, 9, 5)).max_nodes == DEFAULT_VCT_NODES
    with pytest.raises(ValueError, match="max_nodes"):
        VctSolver(Geometry(9, 9, 5), max_nodes=0)


# ---------------------------------------------------------------- the shipped player's search
GAME_D5 = "G4,C6,E6,F5,G5,D5,G6,G7,F6,D6,F4,H6,H4,I4,E7,D8,I3"  # White's D5 (move 6) lost
MODEL = Path(__file__).resolve().parents[1] / "models" / "9x9.pt"
needs_model = pytest.mark.skipif(not MODEL.is_file(), reason="no shipped model")


@pytest.fixture(scope="module")
def shipped():
    return make_player(f"az:{MODEL}:400", seed=0, check_nodes=0)  # the root's rules alone


def board_after(game: str, plies: int) -> Board:
    b = Board()
    for text in game.split(",")[:plies]:
        b.do_move(parse_point(b, text))
    return b


@needs_model
@pytest.mark.parametrize("game, plies", [(GAME_D5, 12), (GAME_B4, 14), (GAME_B4, 16)])
def test_the_shipped_player_plays_a_vct_win(shipped, game, plies):
    # Black to move has a VCT (no VCF) that the solver finds within its default budget.
    cells = cells_after(game, plies)
    geometry = Geometry(9, 9, 5)
    assert VcfSolver(geometry).solve(cells, 1).status is ThreatStatus.NO_WIN
    win = VctSolver(geometry).solve(cells, 1)
    assert win.win
    shipped.reset()
    move = shipped.get_action(board_after(game, plies))
    assert move == win.move
    assert set(np.flatnonzero(shipped.last_result.visits)) == {win.move}


@needs_model
@pytest.mark.parametrize("game, plies", [(GAME_D5, 7), (GAME_D5, 9), (GAME_B4, 7), (GAME_B4, 11), (GAME_B4, 13)])
def test_the_shipped_player_stops_a_vct(shipped, game, plies):
    # White to move; Black would have a VCT (here an open three) if it were Black's move.
    cells = cells_after(game, plies)
    geometry = Geometry(9, 9, 5)
    solver = VctSolver(geometry)
    assert solver.solve(cells, 1).win and not geometry.winning_points(cells[None]).any()
    moves = np.flatnonzero(cells[:-1] == 0)
    stopping = set(moves[solver.defences(cells, 2, moves)].tolist())
    assert 0 < len(stopping) < len(moves)
    shipped.reset()
    move = shipped.get_action(board_after(game, plies))
    assert move in stopping
    assert set(np.flatnonzero(shipped.last_result.visits)) <= stopping
    after = cells.copy()
    after[move] = 2
    assert not solver.solve(after, 1).win


class Favours:
    """An evaluator whose priors favour ``first``, then ``second`` (values 0)."""

    def __init__(self, first: int, second: int):
        self.first, self.second = first, second

    def evaluate_batch(self, planes, legal):
        priors = legal.astype(np.float32) * 0.01
        priors[:, self.first] += 1.0
        priors[:, self.second] += 0.5
        return priors / priors.sum(axis=1, keepdims=True), np.zeros(len(legal), dtype=np.float32)


def favouring(first: int, second: int, check_nodes: int) -> AlphaZeroPlayer:
    """An az player whose priors favour ``first``, then ``second``, and whose root rules are blind
    to VCTs (a 1-node VCT budget, no leaf checks): only its deep checks can see one."""
    player = AlphaZeroPlayer(Favours(first, second), n_playout=30, vct_nodes=1, check_nodes=check_nodes)
    player.tactics = replace(player.tactics, vct_leaf_depth=0)
    return player


def blind_player(check_nodes: int) -> tuple[Board, int, int, AlphaZeroPlayer]:
    """White to move (move 14 of the B4 game); Black would have a VCT. The player's root rules
    are made blind to it (a 1-node VCT budget, no leaf checks) and its priors favour ``losing``, a
    move that does not stop it (and that the search's VCF rules do not see lose), then
    ``stopping``, one that does."""
    board, cells = board_after(GAME_B4, 13), cells_after(GAME_B4, 13)
    solver = VctSolver(Geometry(9, 9, 5))
    moves = np.flatnonzero(cells[:-1] == 0)
    stops = solver.defences(cells, 2, moves)
    stopping = int(moves[stops][0])

    def vcf_after(move: int) -> bool:
        after = cells.copy()
        after[move] = 2
        return VcfSolver(Geometry(9, 9, 5)).solve(after, 1).win

    losing = next(int(m) for m in moves[~stops] if not vcf_after(m))  # lost by threes, not by fours alone
    return board, losing, stopping, favouring(losing, stopping, check_nodes)


def test_the_final_check_passes_over_moves_that_leave_a_vct():
    # The final check (at the solver's default budget here) passes over the most visited move,
    # which leaves Black its VCT, to the next most visited, which stops it.
    played = {}
    for check_nodes in (0, DEFAULT_VCT_NODES):
        board, losing, stopping, player = blind_player(check_nodes)
        played[check_nodes] = player.get_action(board)
        assert player.last_result.visits.argmax() == losing
    assert played[0] == losing
    assert played[DEFAULT_VCT_NODES] == stopping and player.last_result.refuted == (losing,)


# White's G6 (move 26) lost to ab:4:vct: a VCT the check did not see before the move, found after it.
GAME_G6 = "E5,F5,F6,D4,D6,E6,F4,G3,C7,B8,D7,D5,E7,F7,C4,C5,G5,D8,E3,D2,E4,E8,C8,F8,G8,G6"


def test_the_final_check_runs_smaller_when_the_threat_is_not_settled():
    # White to move at move 26: whether Black would have a VCT, 8,000 nodes cannot settle (its
    # VCT takes 9,111). After White's G6 it has one that 1,792 nodes find, within the smaller
    # check (8,000 // 4 a candidate); after H6 none is found (there is none: 68,015 nodes). The
    # priors favour G6, then H6.
    board, cells = board_after(GAME_G6, 25), cells_after(GAME_G6, 25)
    g6, h6, budget = parse_point(board, "G6"), parse_point(board, "H6"), 8_000
    assert VctSolver(Geometry(9, 9, 5), budget).solve(cells, 1).status is ThreatStatus.UNKNOWN
    small = budget // UNSETTLED_CHECK_DIVISOR
    assert list(VctSolver(Geometry(9, 9, 5)).defences(cells, 2, [g6, h6], small)) == [False, True]
    player = favouring(g6, h6, budget)
    assert player.final_check_nodes(board, None) == small
    assert player.get_action(board) == h6
    assert player.last_threatened and player.last_result.visits.argmax() == g6
    assert player.last_result.refuted == (g6,)


def test_a_threat_solve_stopped_by_the_clock_counts_as_unsettled():
    # White to move at move 26 (above): Black's VCT takes 9,111 nodes. A solve that the clock
    # stops at its first node is unsettled, so the candidates are still checked, at the smaller
    # budget; an empty board is proved free of threats before any node, and needs no check.
    board = board_after(GAME_G6, 25)
    player = AlphaZeroPlayer(UniformEvaluator(), n_playout=20)
    assert player.final_check_nodes(board, None) == CHECK_NODES
    assert player.final_check_nodes(board, lambda: True) == CHECK_NODES // UNSETTLED_CHECK_DIVISOR
    assert player.final_check_nodes(Board(), lambda: True) == 0
    assert AlphaZeroPlayer(UniformEvaluator(), n_playout=20, check_nodes=0).final_check_nodes(board, lambda: True) == 0


# Black (the az player) lost this game to ab:4:vct from a random 2-stone opening (session 24): at
# move 9 it played E6, after which White has a VCT, as it has after each of the 8 most visited
# moves; E3, G5 and E2, further down the search's list, hold.
GAME_E6 = "E7,G4,E4,E5,D5,F3,F5,D3"
LOST_E6 = ["E6", "G7", "C4", "B5", "F8", "F6", "B4", "F7"]  # each leaves White a VCT (3,131 to 8,998 nodes)


def visited(board: Board, names: list[str]) -> SearchResult:
    """A search's result that visited ``names`` in this order of visits (most first)."""
    visits = np.zeros(board.size)
    visits[[parse_point(board, name) for name in names]] = np.arange(len(names), 0, -1)
    return SearchResult(visits, np.full(board.size, 1 / board.size), 0.0, int(visits.sum()))


def test_the_final_check_looks_past_the_first_candidates_when_all_are_lost():
    # The 8 most visited moves each leave White a VCT (3,131 to 8,998 nodes); the ninth, E3, does
    # not. Not visited, E3 is not checked, and the most visited move stays.
    board, lost = board_after(GAME_E6, 8), LOST_E6
    assert CHECK_CANDIDATES == len(lost)
    player = AlphaZeroPlayer(UniformEvaluator(), n_playout=20)
    assert player.final_check_nodes(board, None) == CHECK_NODES
    result = visited(board, [*lost, "E3"])
    result = player.final_check(board, result, None, CHECK_NODES)
    assert result.refuted == tuple(parse_point(board, name) for name in lost)
    assert result.best_move() == parse_point(board, "E3")
    unseen = visited(board, lost)
    unseen = player.final_check(board, unseen, None, CHECK_NODES)
    assert unseen.refuted == () and unseen.best_move() == parse_point(board, "E6")


def test_the_final_checks_past_the_first_candidates_spend_one_candidates_budget_in_all():
    # A stand-in solver: every move is lost (1 node a check) but the one named safe; the extra
    # checks past CHECK_CANDIDATES cost what ``extra`` says. Two that spend the budget end the check.
    board = Board()
    names = [f"{column}1" for column in "ABCDEFGHI"] + ["A2", "B2", "C2"]
    moves = [parse_point(board, name) for name in names]

    class Stand:
        stop = None
        after = VctSolver.after  # the player's check: this solve, with the candidate's stone placed

        def __init__(self, safe: int, extra: int):
            self.safe, self.extra, self.checked = safe, extra, []

        def solve(self, cells, attacker, max_nodes=None):
            move = int(np.flatnonzero(cells[:-1])[0])
            self.checked.append(move)
            if move == self.safe:
                return ThreatResult(ThreatStatus.NO_WIN, NO_MOVE, 1)
            return ThreatResult(ThreatStatus.WIN, 0, 1 if len(self.checked) <= CHECK_CANDIDATES else self.extra)

    for extra, found in ((100, True), (500, False)):
        player = AlphaZeroPlayer(UniformEvaluator(), n_playout=20)
        player.checks.solver, player.checks.shape = Stand(moves[11], extra), (9, 9, 5)
        result = player.final_check(board, visited(board, names), None, 1000)
        checked = player.checks.solver.checked
        if found:  # 3 extra checks of 100 nodes, then the safe one
            assert checked == moves and result.best_move() == moves[11]
        else:  # two extra checks of 500 spend the 1,000: the safe move is not reached
            assert checked == moves[:10] and result.refuted == () and result.best_move() == moves[0]


def test_the_final_check_never_passes_over_a_win():
    # White (O) to move completes five at (8, 4); Black would have a VCT (the double three at
    # (4, 5)) were it its move, so the final check runs, and keeps the winning move.
    board = position(xs=[(2, 5), (3, 5), (4, 3), (4, 4)], os_=[(8, 0), (8, 1), (8, 2), (8, 3)])
    player = AlphaZeroPlayer(UniformEvaluator(), n_playout=20)
    player.deep_win = lambda board, stop: NO_MOVE  # (it would play the five without a search)
    assert player.final_check_nodes(board, None) == CHECK_NODES
    assert player.get_action(board) == at(board, (8, 4))[0] and player.last_result.refuted == ()
    assert player.last_result.playouts == 20  # searched, then checked


def test_a_deep_vct_of_its_own_is_played_without_a_search():
    # Black to move after White's B4 (move 8) has a VCT the root's rules (1,000 nodes) do not
    # find: the solver needs 9,637 nodes (37,462 before it linked transpositions). The first check
    # (CHECK_NODES) finds and plays it.
    board, cells = board_after(GAME_B4, 8), cells_after(GAME_B4, 8)
    win = VctSolver(Geometry(9, 9, 5), CHECK_NODES).solve(cells, 1)
    assert win.win and not VctSolver(Geometry(9, 9, 5)).solve(cells, 1).win
    result = AlphaZeroPlayer(UniformEvaluator(), n_playout=20).analyse(board)
    assert result.best_move() == win.move and result.playouts == 0 and result.value == 1.0
    searched = AlphaZeroPlayer(UniformEvaluator(), n_playout=20, check_nodes=0).analyse(board)
    assert searched.playouts == 20


def test_under_a_clock_the_checks_before_the_search_share_a_quarter_of_the_time():
    # A clock of 1 s that moves only when the checks say so: the own-VCT solve may run to 1/8 of
    # the move's time, the opponent's threat solve to 1/4 from the start (CHECK_TIME_SHARE).
    now, seen = [0.0], []

    def at(when: float, stop) -> bool:
        now[0] = when
        return stop()

    def deep_win(board, stop):
        seen.extend([at(0.12, stop), at(0.13, stop)])
        return NO_MOVE

    def final_check_nodes(board, stop):
        seen.extend([at(0.24, stop), at(0.26, stop)])
        return 0

    player = AlphaZeroPlayer(UniformEvaluator(), n_playout=20)
    player.deep_win, player.final_check_nodes = deep_win, final_check_nodes
    result = player.analyse(Board(), time_left=lambda: 1.0 - now[0])
    assert CHECK_TIME_SHARE == 0.25 and seen == [False, True, False, True]
    assert result.playouts == 20  # then the search, with the time left


def test_an_interrupted_final_check_changes_nothing():
    # A stop already set (the window's new game, the engine's time up): the check gives up, as
    # out of budget, and the most visited move stays.
    board, losing, _, player = blind_player(DEFAULT_VCT_NODES)
    result = player.analyse(board, should_stop=lambda: True)
    assert player.last_threatened and result.visits.argmax() == losing
    assert result.refuted == () and result.best_move() == losing


def test_an_interrupted_final_check_keeps_the_moves_it_proved_lost():
    # The stop comes after the check has found that the most visited move leaves Black a VCT,
    # while it checks the next one: the first is passed over all the same, for the next, unproved.
    board, losing, stopping, player = blind_player(DEFAULT_VCT_NODES)
    player.checks.solve(None, lambda solver, cells: None, board, None)  # builds the checks' solver
    stopped, checked = [False], []
    solve, before = player.checks.solver.solve, cells_after(GAME_B4, 13)

    def solve_then_stop(cells, attacker, max_nodes=None):
        placed = np.flatnonzero(cells != before).tolist()  # a candidate's check: its stone (none before the search)
        checked.extend(placed)
        answer = solve(cells, attacker, max_nodes)
        stopped[0] = stopped[0] or bool(placed)  # after the first candidate, the next solve stops at its first node
        return answer

    player.checks.solver.solve = solve_then_stop
    result = player.analyse(board, should_stop=lambda: stopped[0])
    assert checked == [losing, stopping] and result.visits.argmax() == losing
    assert result.refuted == (losing,) and result.best_move() == stopping


# ---------------------------------------------------------------- pinned answers
# sha256 (first 16 hex digits) of the JSON of every answer below, as the solver gave them once it
# searched a DAG (transpositions linked; before, the tree of commit 92a9930 gave "bb9e92927697c7dc":
# against it, no answer contradicted, one "unknown" became "no win", 2 of the 8 defence lists
# differ, 35,609 nodes in all against 36,930). Speed-ups must change nothing, node for node.
# Change it only with a deliberate change of the search (say why in the commit).
PINNED_ANSWERS = "12c319cc24b8624e"


def test_the_solvers_answers_are_pinned():
    """Status, first move and node count of every solve, each side attacking, on every position of
    2 seeded heuristic games (budget 1000); and the defences of the first 8 searched wins."""
    import hashlib
    import json

    from gomoku.players.classical import board_cells
    from gomoku.lab.bench_common import BenchSettings
    from gomoku.lab.bench_threats import game_positions

    solver = VctSolver(Geometry(9, 9, 5), 1000)
    answers, defended = [], 0
    for position_board in game_positions(BenchSettings(vcf_games=2)):
        cells = board_cells(position_board)
        for attacker in (1, 2):
            result = solver.solve(cells, attacker)
            answers.append((result.status.value, result.move, result.nodes))
            if result.win and result.nodes > 0 and defended < 8:
                defended += 1
                stops = solver.defences(cells, 3 - attacker, np.flatnonzero(cells[:-1] == 0))
                answers.append(np.flatnonzero(stops).tolist())
    assert defended == 8 and len(answers) == 332
    assert hashlib.sha256(json.dumps(answers).encode()).hexdigest()[:16] == PINNED_ANSWERS


def test_the_search_plays_a_vct_that_starts_from_a_two():
    """The rules checked a position for a VCT only once the first player had n_in_row - 2 stones
    (a three, where a VCF starts); a VCT may start one stone earlier. On 7x7, four in a row, X
    with one stone at the centre has one: the root searched all 47 moves."""
    from gomoku.players.classical import board_cells
    from mcts import BatchedMCTS
    from tests.fakes import parts

    board = Board(7, 7, 4)
    board.do_move(24)
    board.do_move(0)
    cells = board_cells(board)
    found = VctSolver(Geometry(7, 7, 4), 1000).solve(cells, 1)
    assert found.win
    search = BatchedMCTS(UniformEvaluator(), *parts(7, 7, 4, n_playout=50, forced_moves=True, vcf=True, vct=True))
    result = search.search([board])[0]
    assert np.flatnonzero(result.priors > 0).tolist() == [found.move] and result.best_move() == found.move
