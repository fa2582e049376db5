"""The threat solvers' speed figures (``scripts/bench.py --vct``, and part of the full bench):
the VCF and VCT solvers per call, their cost per move of the search, and per self-play position."""

from __future__ import annotations

import statistics
import time

import numpy as np
import torch

from gomoku.game.board import Board
from gomoku.players.classical import board_cells
from gomoku.lab.bench_common import BenchSettings, az_evaluator, machine
from gomoku.training.config import Config
from gomoku.training.selfplay import SelfPlayRunner
from nets import NetConfig, NetEvaluator, build_net


def game_positions(s: BenchSettings) -> list[Board]:
    """Every position (game not over) of ``vcf_games`` seeded games between heuristic players."""
    from gomoku.players import HeuristicPlayer

    positions = []
    for game in range(s.vcf_games):
        players = [HeuristicPlayer(np.random.default_rng(2 * game + i)) for i in range(2)]
        board = Board()
        while not board.game_end()[0]:
            positions.append(Board.from_moves(list(board.moves)))
            board.do_move(players[len(board.moves) % 2].get_action(board))
    return positions


def bench_vcf(s: BenchSettings, positions: list[Board] | None = None) -> dict:
    """Milliseconds per VCF solver call (gomoku.tactics.threats, the search's default node budget) on
    ``positions`` (default ``game_positions``), for each side as the attacker (the search asks
    for the player to move at its leaves, and for the opponent at the root). Median and mean: a
    few positions with many fours cost most of the total."""
    from gomoku.tactics import DEFAULT_VCF_NODES, Geometry, VcfSolver

    solver = VcfSolver(Geometry(9, 9, 5), DEFAULT_VCF_NODES)
    times, wins = [], 0
    for board in positions if positions is not None else game_positions(s):
        cells = board_cells(board)
        for attacker in (1, 2):
            start = time.perf_counter()
            wins += solver.solve(cells, attacker).win
            times.append(time.perf_counter() - start)
    return {"vcf_ms_per_call": 1e3 * statistics.median(times), "vcf_ms_per_call_mean": 1e3 * statistics.mean(times),
            "vcf_calls_measured": len(times), "vcf_wins_found": wins}


def _rule_cost(s: BenchSettings, rule: str, positions: list[Board] | None, every: int, evaluator,
               **on: bool) -> dict:
    """What the search rule ``rule`` ("vcf" or "vct") costs the az player per move: the mean time
    of a ``az_playouts`` search with and without it (the settings ``on`` in both), on every
    ``every``-th of ``positions`` (``evaluator``: default an untrained net), with its solver calls."""
    from gomoku.tactics import TacticsConfig, make_rules
    from mcts.search import BatchedMCTS, SearchConfig

    evaluator = evaluator or az_evaluator(s)
    boards = (positions if positions is not None else game_positions(s))[::every]
    seconds, calls = {}, {}
    for switched_on in (True, False):
        rules = make_rules(9, 9, 5, TacticsConfig(forced_moves=True, **on, **{rule: switched_on}))
        search = BatchedMCTS(evaluator, rules, SearchConfig(n_playout=s.az_playouts, noise=False),
                             rng=np.random.default_rng(0))
        start = time.perf_counter()
        for board in boards:
            search.reset()
            search.search([board])
        seconds[switched_on] = (time.perf_counter() - start) / len(boards)
        calls[switched_on] = getattr(rules, f"{rule}_calls")
    return {f"move_ms_{rule}": 1e3 * seconds[True], f"move_ms_no_{rule}": 1e3 * seconds[False],
            f"{rule}_ms_per_move": 1e3 * (seconds[True] - seconds[False]),
            f"{rule}_calls_per_move": calls[True] / len(boards), f"{rule}_moves_measured": len(boards)}


def bench_vcf_per_move(s: BenchSettings, positions: list[Board] | None = None, every: int = 4) -> dict:
    """What the VCF rules cost the az player per move (``_rule_cost``; forced moves on in both)."""
    return _rule_cost(s, "vcf", positions, every, None, vct=False)


def bench_vct(s: BenchSettings, positions: list[Board] | None = None, max_nodes: int | None = None) -> dict:
    """Milliseconds per VCT solver call (gomoku.tactics.vct, ``max_nodes`` or the search's default budget)
    on ``positions`` (default ``game_positions``), each side attacking, as ``bench_vcf``; with
    how many calls proved a win, proved none, or ran out of budget."""
    from gomoku.tactics.geometry import Geometry
    from gomoku.tactics.threats import ThreatStatus
    from gomoku.tactics.vct import DEFAULT_VCT_NODES, VctSolver

    solver = VctSolver(Geometry(9, 9, 5), max_nodes or DEFAULT_VCT_NODES)
    times, nodes, statuses = [], [], {status: 0 for status in ThreatStatus}
    for board in positions if positions is not None else game_positions(s):
        cells = board_cells(board)
        for attacker in (1, 2):
            start = time.perf_counter()
            result = solver.solve(cells, attacker)
            times.append(time.perf_counter() - start)
            nodes.append(result.nodes)
            statuses[result.status] += 1
    return {"vct_ms_per_call": 1e3 * statistics.median(times), "vct_ms_per_call_mean": 1e3 * statistics.mean(times),
            "vct_ms_per_call_max": 1e3 * max(times), "vct_nodes_per_call": statistics.median(nodes),
            "vct_calls_measured": len(times), "vct_budget": solver.max_nodes,
            "vct_wins": statuses[ThreatStatus.WIN], "vct_no_wins": statuses[ThreatStatus.NO_WIN],
            "vct_unknown": statuses[ThreatStatus.UNKNOWN]}


def bench_vct_per_move(s: BenchSettings, positions: list[Board] | None = None, every: int = 4,
                       evaluator=None) -> dict:
    """What the root's VCT rules cost the az player per move (``_rule_cost``; forced moves and
    VCF on in both)."""
    return _rule_cost(s, "vct", positions, every, evaluator, vcf=True)


def bench_vct_selfplay(s: BenchSettings, config: Config | None = None) -> dict:
    """Self-play positions per second in one process (``selfplay.parallel_games`` games at once,
    an untrained net), with and without ``search.vct``: what the VCT rules cost a self-play position."""
    from dataclasses import replace

    config = config or Config()
    rates = {}
    for vct in (True, False):
        search = replace(config.search, vct=vct)
        runner = SelfPlayRunner(NetEvaluator(build_net(NetConfig()), s.device), config.board, search,
                                config.selfplay.parallel_games, np.random.default_rng(0))
        start = time.perf_counter()
        moves = runner.play(s.selfplay_games).moves
        rates[vct] = moves / (time.perf_counter() - start)
    return {"selfplay_positions_per_s_vct": rates[True], "selfplay_positions_per_s_no_vct": rates[False],
            "selfplay_vct_cost": rates[False] / rates[True]}


def bench_final_check(s: BenchSettings, positions: list[Board] | None = None, every: int = 4,
                      evaluator=None) -> dict:
    """What the az player's deep checks (its own VCT, ``AlphaZeroPlayer.deep_win``, and the final
    threat check, ``final_check``, at their default budget; ``check_nodes=0`` turns both off) cost
    a move of ``az_playouts`` playouts: the mean and slowest move with and without them on every
    ``every``-th of ``positions`` (a fresh tree each), and how often the final check ran and changed
    the move."""
    from gomoku.players.search import AlphaZeroPlayer

    evaluator = evaluator or az_evaluator(s)
    boards = (positions if positions is not None else game_positions(s))[::every]
    figures: dict = {"check_moves_measured": len(boards)}
    for label, check in (("check", {}), ("no_check", {"check_nodes": 0})):
        player = AlphaZeroPlayer(evaluator, n_playout=s.az_playouts, seed=0, **check)
        times, checked, changed = [], 0, 0
        for board in boards:
            player.reset()
            start = time.perf_counter()
            result = player.analyse(board)
            times.append(time.perf_counter() - start)
            checked += player.last_threatened
            changed += bool(result.refuted)
        figures[f"move_ms_{label}"] = 1e3 * statistics.mean(times)
        figures[f"move_ms_max_{label}"] = 1e3 * max(times)
        if label == "check":
            figures.update(check_nodes=player.check_nodes, check_triggered=checked, check_changed_move=changed)
    return figures


VCT_BUDGETS = (250, 1000, 4000)  # node budgets compared by ``run_vct``


def model_evaluator(model: str):
    """The net of the model file ``model`` as the search's evaluator; a ValueError (``CheckpointError``)
    when it does not load or does not play the figures' positions (9x9, five in a row), an
    ImportError for an .onnx file without onnxruntime."""
    from gomoku.players.search import AlphaZeroPlayer

    player = AlphaZeroPlayer.from_checkpoint(model)
    player.check_board(Board())  # the board of ``game_positions``
    return player.evaluator


def run_vct(s: BenchSettings, log=print, budgets=VCT_BUDGETS, model: str | None = None, evaluator=None) -> dict:
    """Only the VCT figures (``scripts/bench.py --vct``): per call at each budget, per move and per
    self-play position at the default budget; per move also with the net of ``model`` (a path,
    loaded before any figure; ``evaluator``: its net, when ``model_evaluator`` loaded it already),
    whose searches meet the threats of real play."""
    torch.set_num_threads(1)
    evaluators = {"untrained net": None}
    if model:
        evaluators[model] = evaluator if evaluator is not None else model_evaluator(model)
    results: dict = {"machine": machine(), "settings": s.__dict__.copy()}
    positions = game_positions(s)
    for budget in budgets:
        figures = bench_vct(s, positions, budget)
        results[f"vct_budget_{budget}"] = figures
        log(f"VCT budget {budget:6d}: {figures['vct_ms_per_call']:8.2f} ms/call median, "
            f"{figures['vct_ms_per_call_mean']:8.2f} mean, {figures['vct_ms_per_call_max']:8.1f} max; "
            f"{figures['vct_wins']} wins, {figures['vct_no_wins']} none, {figures['vct_unknown']} unknown "
            f"of {figures['vct_calls_measured']}")
    for name, net in evaluators.items():
        figures = bench_vct_per_move(s, positions, evaluator=net)
        results[f"per_move {name}"] = figures
        log(f"per move, {name}: {figures['move_ms_vct']:.0f} ms with VCT, {figures['move_ms_no_vct']:.0f} ms "
            f"without, {figures['vct_calls_per_move']:.1f} VCT calls a move ({figures['vct_moves_measured']} moves)")
        figures = bench_final_check(s, positions, evaluator=net)
        results[f"final_check {name}"] = figures
        log(f"deep checks, {name}: {figures['move_ms_check']:.0f} ms a move with them (slowest "
            f"{figures['move_ms_max_check']:.0f}), {figures['move_ms_no_check']:.0f} without (slowest "
            f"{figures['move_ms_max_no_check']:.0f}); the final check ran on {figures['check_triggered']}, "
            f"changed {figures['check_changed_move']} of {figures['check_moves_measured']} moves")
    results.update(bench_vct_selfplay(s))
    log(f"self-play, in process: {results['selfplay_positions_per_s_vct']:.2f} positions/s with VCT, "
        f"{results['selfplay_positions_per_s_no_vct']:.2f} without ({results['selfplay_vct_cost']:.2f}x)")
    return results
