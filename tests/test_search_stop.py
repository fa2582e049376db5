"""Searches under a clock are not held by the threat checks: a solver stops when told to, the
rules count a check it interrupted as out of budget without remembering it, the timed player
gives its checks up once its time is up, and the engine answers with the round it has.

The position (GAME_D5 after 7 plies, White to move) is one where Black would have a VCT were it
Black's move, so the root's check runs a VCT solve for every move (the step that took 667 ms of a
200 ms turn in a match). No timing is asserted: the clocks are fakes or lambdas.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from gomoku.pbrain.engine import PbrainEngine
from gomoku.pbrain.loader import EngineOptions
from gomoku.players.search import TIMED_ROUND_PLAYOUTS, AlphaZeroPlayer
from gomoku.tactics import TacticsConfig
from gomoku.tactics.geometry import Geometry
from gomoku.tactics.rules import FreestyleRules
from gomoku.tactics.threats import STOP_CHECK_NODES, Interrupted
from gomoku.tactics.vct import DEFAULT_VCT_NODES, VctSolver
from mcts import FIRST, SECOND, BatchedMCTS, SearchConfig
from tests.fakes import HashEvaluator
from tests.test_vct import GAME_B4, GAME_D5, board_after, cells_after

PLIES = 7  # White to move; Black threatens a VCT
THREATS = SearchConfig(n_playout=64)
THREAT_RULES = TacticsConfig(forced_moves=True, vcf=True, vct=True, vct_leaf_depth=2)


def stopping_moves() -> set[int]:
    cells = cells_after(GAME_D5, PLIES)
    moves = np.flatnonzero(cells[:-1] == 0)
    return set(moves[VctSolver(Geometry(9, 9, 5)).defences(cells, SECOND, moves)].tolist())


def empty_points() -> set[int]:
    return set(np.flatnonzero(cells_after(GAME_D5, PLIES)[:-1] == 0).tolist())


def test_the_position_restricts_the_root():
    assert 0 < len(stopping_moves()) < len(empty_points())


def test_a_stopped_solve_raises_at_its_first_node_and_leaves_the_solver_intact():
    cells = cells_after(GAME_B4, 8)  # Black's VCT there takes more than the default budget
    geometry = Geometry(9, 9, 5)
    expected = VctSolver(geometry).solve(cells, FIRST)
    assert expected.nodes == DEFAULT_VCT_NODES
    solver = VctSolver(geometry)
    checks = []
    solver.stop = lambda: checks.append(solver._nodes) or True
    with pytest.raises(Interrupted):
        solver.solve(cells, FIRST)
    assert checks == [1]
    # Checked every STOP_CHECK_NODES nodes: a stop that never fires changes nothing.
    solver.stop = lambda: checks.append(solver._nodes) and False
    assert solver.solve(cells, FIRST) == expected
    assert checks[1] == 1 and all(n % STOP_CHECK_NODES == 1 for n in checks) and len(checks) > 1
    solver.stop = None
    assert solver.solve(cells, FIRST) == expected
    with pytest.raises(Interrupted):  # a defence check too
        solver.stop = lambda: True
        solver.defences(cells, SECOND, np.flatnonzero(cells[:-1] == 0))


def test_an_interrupted_root_check_keeps_every_move_and_is_not_remembered():
    cells = cells_after(GAME_D5, PLIES)[None]
    to_move = np.array([SECOND])
    rules = FreestyleRules(Geometry(9, 9, 5), THREAT_RULES)
    rules.stop = lambda: True  # every check that reaches a node gives up: as out of budget
    _, legal = rules.moves_to_search(cells, to_move, root=True)
    assert set(np.flatnonzero(legal[0])) == empty_points()
    # Black's VCT is found without a node (an open three) and remembered; White's own check (23
    # nodes unstopped) and the defence check (a solve per move) were interrupted: not remembered.
    assert [key[-1] for key in rules._vct_cache] == [FIRST] and rules._vct_cache[cells[0].tobytes() + b"\x01"].win
    assert VctSolver(Geometry(9, 9, 5)).solve(cells[0], SECOND).nodes > 0
    assert not rules._vcf_cache and not rules._defence_cache
    # Unstopped, the same rules object restricts the root as a fresh one does.
    rules.stop = None
    _, legal = rules.moves_to_search(cells, to_move, root=True)
    assert set(np.flatnonzero(legal[0])) == stopping_moves()
    assert len(rules._defence_cache) == 1 and len(rules._vct_cache) == 2


def test_a_stopped_search_runs_every_playout_and_forgets_the_stop():
    board = board_after(GAME_D5, PLIES)
    search = BatchedMCTS(HashEvaluator(), FreestyleRules(Geometry(9, 9, 5), THREAT_RULES), THREATS)
    result = search.search([board], n_playout=THREATS.n_playout, stop=lambda: True)[0]
    assert result.visits.sum() == THREATS.n_playout - 1  # the first playout expands the root
    assert set(np.flatnonzero(result.priors > 0)) == empty_points()
    assert search.rules.stop is None and search.rules.vct_solver.stop is None
    fresh = BatchedMCTS(HashEvaluator(), FreestyleRules(Geometry(9, 9, 5), THREAT_RULES), THREATS).search([board])[0]
    assert set(np.flatnonzero(fresh.priors > 0)) == stopping_moves()


@pytest.mark.parametrize("stopped", ["time is up", "stop", "neither"])
def test_a_timed_player_gives_its_checks_up_once_its_time_is_up(stopped):
    player = AlphaZeroPlayer(HashEvaluator(), n_playout=None, leaves_per_step=8, seed=0)
    time_left = (lambda: -1.0) if stopped == "time is up" else (lambda: 1e9)
    should_stop = (lambda: True) if stopped == "stop" else None
    result = player.analyse(board_after(GAME_D5, PLIES), time_left=time_left, should_stop=should_stop,
                            playouts=TIMED_ROUND_PLAYOUTS)
    assert result.playouts == TIMED_ROUND_PLAYOUTS  # one round, all of its playouts
    searched = set(np.flatnonzero(result.priors > 0))
    assert searched == (stopping_moves() if stopped == "neither" else empty_points())


def board_block() -> list[str]:
    """The BOARD block of GAME_D5 after PLIES plies for White, the engine (1: its own stones)."""
    board = board_after(GAME_D5, PLIES)
    lines = [f"{move % 9},{move // 9},{2 if i % 2 == 0 else 1}" for i, move in enumerate(board.moves)]
    return ["BOARD", *lines, "DONE"]


def test_the_engine_answers_with_its_round_when_the_checks_outlast_the_plan():
    out: list[str] = []
    now = [0.0]
    engine = PbrainEngine(EngineOptions(player_spec="random", shortcuts=False, report=True), write=out.append,
                          clock=lambda: now[0])
    engine.handle_line("START 9")
    player = engine.player = AlphaZeroPlayer(HashEvaluator(), n_playout=None, leaves_per_step=8, seed=0)
    engine.handle_line("INFO timeout_turn 600000")  # plans 540 s, answers by 570 s
    *lines, done = board_block()
    for line in lines:
        engine.handle_line(line)
    now[0] = 550.0
    engine.handle_line(done, received_at=0.0)  # the planned time is up, the hard deadline is not
    assert out[-2] == f"MESSAGE {TIMED_ROUND_PLAYOUTS} playouts in 550000 ms, value {player.last_result.value:+.2f}"
    assert set(np.flatnonzero(player.last_result.priors > 0)) == empty_points()
    assert out[-1] == "{},{}".format(*divmod(player.last_result.best_move(), 9)[::-1])
    assert not player._search.rules._defence_cache


class NoRound:
    """A search player whose first round outlasts the turn: no statistics by the deadline."""

    name = "no round"

    def __init__(self):
        self.release = threading.Event()
        self.stopped = None

    def reset(self):
        pass

    def analyse(self, board, on_progress=None, should_stop=None, time_left=None, playouts=None):
        self.release.wait(timeout=10)
        self.stopped = should_stop()  # the engine stopped it at the deadline
        return None


def test_with_no_round_by_the_deadline_it_says_so_and_the_next_command_waits_for_it():
    out: list[str] = []
    now = [0.0]
    engine = PbrainEngine(EngineOptions(player_spec="random", shortcuts=False, report=True), write=out.append,
                          clock=lambda: now[0])
    engine.handle_line("START 9")
    slow = engine.player = NoRound()
    engine.handle_line("INFO timeout_turn 200")
    now[0] = 1.0
    engine.handle_line("BEGIN", received_at=0.0)  # the hard deadline has passed
    assert out[-2] == "MESSAGE no search round done in 1000 ms: playing a heuristic move"
    assert out[-1] == "4,4"  # the heuristic's centre
    slow.release.set()
    engine.handle_line("ABOUT")  # waits for the round left running, which was told to stop
    assert slow.stopped is True and engine._search_thread is None
