"""The compiled tactics against the reference (``scripts/bench.py --tactics``): the time of one
solver call on the calls self-play makes, and self-play positions per second with each, once with
a net and once with a free constant evaluator (what a GPU could reach), in the same run.

The calls are recorded from the reference's own self-play (the default config's search, the net
given; a run of its own, untimed, as recording costs time): every VCF and VCT solve its rules ran (cache hits are not solves), the root's defence
checks included. Each is then timed with both solvers, whose answers must agree, the way
self-play makes it with each: the reference's every call from Python; the kernel's root solves
from Python too, but its inner nodes' solves and the defence checks' inside one kernel call for a
batch (``kernel_rules``, ``vcf_defences``/``vct_defences``), so those are timed inside the kernels
(``seconds_in_kernel``): an inner node's solve on the position already loaded (``kernel_rules``
loads it once for its fours check and solves it there), a defence check's with its own load. The
time of every kernel call from Python is reported too. Self-play
runs the same seeded games with both (their answers agree, so the games do too: the bench checks
that they made the same moves).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, replace

import numpy as np

from gomoku.tactics import REFERENCE, COMPILED, TacticsConfig, solvers
from gomoku.tactics.geometry import Geometry
from gomoku.tactics.rules import FreestyleRules
from gomoku.tactics.threats import VcfSolver
from gomoku.tactics.vct import VctSolver
from gomoku.lab.bench_common import BenchSettings, machine
from gomoku.training.config import Config
from gomoku.training.selfplay import SelfPlayRunner
from mcts import UniformEvaluator

MAX_CALLS = 4000  # recorded solver calls timed (evenly spaced when self-play made more)
CALL_REPEATS = 3  # each call timed this many times with each solver (the median kept)
KERNEL_TIMING_SECONDS = 1e-3  # a solve timed inside the kernels is repeated in one call for about this long
MAX_KERNEL_REPEATS = 1000
DEEP_NODES = 100  # calls of at least this many nodes: their nodes per second are the solvers' speed in search
ROOT, INNER, DEFENCE = "root", "inner", "defence"  # where a search made a solve


@dataclass(frozen=True)
class SolverCall:
    """One solve a search ran: the solver kind ("vcf" or "vct"), the position, the attacker, the
    budget, and where (ROOT, INNER: a node below the root, DEFENCE: a root's defence check)."""

    kind: str
    cells: np.ndarray
    attacker: int
    max_nodes: int
    origin: str


class _Origin:
    """Where the recording rules are now: set by ``_RecordingRules`` and the defence checks."""

    def __init__(self):
        self.now = INNER


def _recording(base: type, kind: str, calls: list[SolverCall], origin: _Origin) -> type:
    class Recording(base):
        def solve(self, cells, attacker, max_nodes=None):
            calls.append(SolverCall(kind, np.array(cells, dtype=np.int8), attacker, max_nodes or self.max_nodes,
                                    origin.now))
            return super().solve(cells, attacker, max_nodes)

        def defences(self, cells, defender, moves, max_nodes=None):
            before, origin.now = origin.now, DEFENCE
            try:
                return super().defences(cells, defender, moves, max_nodes)
            finally:
                origin.now = before
    return Recording


class _RecordingRules(FreestyleRules):
    """The reference rules, telling its recording solvers whether a call is the root's."""

    def __init__(self, geometry: Geometry, config: TacticsConfig, calls: list[SolverCall]):
        self.origin = _Origin()
        super().__init__(geometry, config, solvers=(_recording(VcfSolver, "vcf", calls, self.origin),
                                                    _recording(VctSolver, "vct", calls, self.origin)))

    def moves_to_search(self, cells, to_move, root=False, depth=None):
        self.origin.now = ROOT if root else INNER
        return super().moves_to_search(cells, to_move, root, depth)


class TimedEvaluator:
    """An evaluator that adds up the time its calls take (``seconds``)."""

    def __init__(self, evaluator):
        self.evaluator = evaluator
        self.seconds = 0.0

    def evaluate_batch(self, planes, legal):
        start = time.perf_counter()
        try:
            return self.evaluator.evaluate_batch(planes, legal)
        finally:
            self.seconds += time.perf_counter() - start


def _runner(config: Config, evaluator, kind: str, calls: list[SolverCall] | None = None) -> SelfPlayRunner:
    search = replace(config.search, tactics=kind)
    rules = None
    if calls is not None:
        b = config.board
        rules = _RecordingRules(Geometry(b.width, b.height, b.n_in_row), TacticsConfig.of(search), calls)
    return SelfPlayRunner(evaluator, config.board, search, config.selfplay.parallel_games,
                          np.random.default_rng(config.seed), rules=rules)


def selfplay_rate(config: Config, evaluator, kind: str, games: int, calls: list[SolverCall] | None = None) -> dict:
    """Positions per second of ``games`` finished games (``parallel_games`` at once) with the
    tactics ``kind``; the share of the time in the evaluator; the moves made (to compare runs)."""
    timed = TimedEvaluator(evaluator)
    runner = _runner(config, timed, kind, calls)
    start = time.perf_counter()
    result = runner.play(games)
    seconds = time.perf_counter() - start
    return {"positions_per_s": result.moves / seconds, "seconds": seconds, "positions": result.moves,
            "net_share": timed.seconds / seconds,
            "moves": [tuple(board.moves) for board in runner.boards] + [g.moves for g in result.games]}


def time_calls(calls: list[SolverCall], geometry: Geometry, config: Config) -> dict:
    """Per call, the median of CALL_REPEATS timings with each solver kind (the kernel's as
    self-play makes the call: from Python at the root, else inside the kernels), and the kernel's
    call from Python; the answers compared."""
    s = config.search
    made = {kind: dict(zip(("vcf", "vct"), (vcf(geometry, s.vcf_nodes), vct(geometry, s.vct_nodes, s.vcf_nodes))))
            for kind, (vcf, vct) in ((k, solvers(k)) for k in (REFERENCE, COMPILED))}
    for call in calls[:2]:  # compile (or load the kernels' cache) before the clock starts
        made[COMPILED][call.kind].seconds_in_kernel(call.cells, call.attacker, call.max_nodes)
    times = {REFERENCE: [], COMPILED: [], "python_call": []}
    nodes = []
    mismatches = 0
    for call in calls:
        answers = []
        for kind in (REFERENCE, COMPILED):
            solver = made[kind][call.kind]
            spent = []
            for _ in range(CALL_REPEATS):
                start = time.perf_counter()
                answer = solver.solve(call.cells, call.attacker, call.max_nodes)
                spent.append(time.perf_counter() - start)
            times[kind if kind == REFERENCE else "python_call"].append(statistics.median(spent))
            answers.append(answer)
        if call.origin == ROOT:
            times[COMPILED].append(times["python_call"][-1])
        else:
            repeats = int(np.clip(KERNEL_TIMING_SECONDS / times["python_call"][-1], 1, MAX_KERNEL_REPEATS))
            inside = [made[COMPILED][call.kind].seconds_in_kernel(call.cells, call.attacker, call.max_nodes,
                                                                  repeats, loaded=call.origin == INNER)[1]
                      for _ in range(CALL_REPEATS)]
            times[COMPILED].append(statistics.median(inside))
        mismatches += answers[0] != answers[1]
        nodes.append(answers[0].nodes)
    ms = {kind: 1e3 * np.asarray(values) for kind, values in times.items()}
    deep = np.asarray(nodes) >= DEEP_NODES  # the calls that search (most end at once)
    origins = [call.origin for call in calls]
    return {"calls": len(calls), "vcf_calls": sum(c.kind == "vcf" for c in calls),
            "vct_calls": sum(c.kind == "vct" for c in calls), "mismatches": mismatches,
            **{f"{origin}_calls": origins.count(origin) for origin in (ROOT, INNER, DEFENCE)},
            **{f"{kind}_ms_{stat}": float(getattr(np, stat)(ms[kind])) for kind in ms for stat in ("median", "mean", "max")},
            "per_call_speedup_median": float(np.median(ms[REFERENCE] / ms[COMPILED])),
            "python_call_speedup_median": float(np.median(ms[REFERENCE] / ms["python_call"])),
            "total_time_speedup": float(ms[REFERENCE].sum() / ms[COMPILED].sum()),
            "deep_calls": int(deep.sum()),
            **{f"{kind}_nodes_per_s_deep": float(np.asarray(nodes)[deep].sum() / (ms[kind][deep].sum() / 1e3))
               for kind in ms if deep.any()}}


LONG_VCT_NODES = 400_000  # the az player's deep checks' budget (gomoku.players.search.CHECK_NODES)


def long_vcts(positions: dict[str, tuple[np.ndarray, int]], budget: int = LONG_VCT_NODES) -> list[dict]:
    """For each named position (cells, attacker): the VCT solve's answer, nodes and time with
    each solver kind (the answers compared), and the plies of the threat sequence when the attacker
    plays the solver's move and the defender the reply whose refutation takes the most nodes."""
    geometry = Geometry(9, 9, 5)
    reference, kernel = (vct(geometry, budget) for _, vct in (solvers(REFERENCE), solvers(COMPILED)))
    rows = []
    for name, (cells, attacker) in positions.items():
        kernel.solve(cells, attacker)  # load the kernels before the clock starts
        times = {}
        for kind, solver in ((REFERENCE, reference), (COMPILED, kernel)):
            start = time.perf_counter()
            times[kind] = (solver.solve(cells, attacker), time.perf_counter() - start)
        answer = times[COMPILED][0]
        if answer != times[REFERENCE][0]:
            raise AssertionError(f"{name}: the solvers disagree: {times[REFERENCE][0]} against {answer}")
        rows.append({"position": name, "status": answer.status.value, "nodes": answer.nodes,
                     "reference_ms": 1e3 * times[REFERENCE][1], "compiled_ms": 1e3 * times[COMPILED][1],
                     "line_plies": _threat_line(kernel, geometry, cells.copy(), attacker) if answer.win else 0})
    return rows


def _threat_line(solver, geometry: Geometry, cells: np.ndarray, attacker: int) -> int:
    """Plies of a VCT played out: the solver's move, then the defender's reply that takes the next
    solve the most nodes, until the attacker completes a line."""
    plies = 0
    while True:
        move = solver.solve(cells, attacker).move
        cells[move] = attacker
        plies += 1
        if geometry.wins_one(cells, move, attacker):
            return plies
        hardest, most = None, -1
        for reply in np.flatnonzero(cells[:-1] == 0).tolist():
            cells[reply] = 3 - attacker
            after = None if geometry.wins_one(cells, reply, 3 - attacker) else solver.solve(cells, attacker)
            cells[reply] = 0
            if after is not None and after.win and after.nodes > most:
                hardest, most = reply, after.nodes
        if hardest is None:  # no reply keeps the win proved within the budget: the line ends here
            return plies
        cells[hardest] = 3 - attacker
        plies += 1


def run_tactics(s: BenchSettings, evaluator, model: str, log=print, config: Config | None = None) -> dict:
    """The figures of ``scripts/bench.py --tactics`` (``evaluator``: the net of ``model``)."""
    config = config or Config()
    geometry = Geometry(config.board.width, config.board.height, config.board.n_in_row)
    results: dict = {"machine": machine(), "settings": s.__dict__.copy(), "model": model,
                     "search": {k: getattr(config.search, k) for k in ("n_playout", "vcf_nodes", "vct_nodes")},
                     "parallel_games": config.selfplay.parallel_games}
    calls: list[SolverCall] = []
    selfplay_rate(config, evaluator, REFERENCE, s.selfplay_games, calls)  # recorded in a run of its own, untimed
    runs = {}
    for name, net in (("net", evaluator), ("free", UniformEvaluator())):
        for kind in (REFERENCE, COMPILED):
            runs[name, kind] = selfplay_rate(config, net, kind, s.selfplay_games)
            log(f"self-play, {name:4s} evaluator, {kind:9s} tactics: {runs[name, kind]['positions_per_s']:7.2f} "
                f"positions/s ({runs[name, kind]['positions']} positions, {runs[name, kind]['seconds']:.0f} s, "
                f"the evaluator {100 * runs[name, kind]['net_share']:.0f}% of it)")
        results[f"selfplay_{name}"] = {kind: {k: v for k, v in runs[name, kind].items() if k != "moves"}
                                       for kind in (REFERENCE, COMPILED)}
        results[f"selfplay_{name}"]["same_games"] = runs[name, REFERENCE]["moves"] == runs[name, COMPILED]["moves"]
    timed = calls[::max(1, len(calls) // MAX_CALLS)][:MAX_CALLS]
    per_call = time_calls(timed, geometry, config)
    results["per_call"] = per_call
    results["recorded_calls"] = len(calls)
    log(f"per solver call ({per_call['calls']} of the {len(calls)} self-play made: {per_call['vcf_calls']} VCF, "
        f"{per_call['vct_calls']} VCT): reference {per_call['reference_ms_median']:.3f} ms median, "
        f"{per_call['reference_ms_max']:.1f} max; compiled {per_call['compiled_ms_median']:.4f} ms median, "
        f"{per_call['compiled_ms_max']:.2f} max ({per_call['root_calls']} root calls from Python, "
        f"{per_call['inner_calls']} inner and {per_call['defence_calls']} defence solves inside the kernels; "
        f"every call from Python: {per_call['python_call_ms_median']:.4f} ms median, "
        f"{per_call['python_call_speedup_median']:.1f}x); {per_call['mismatches']} different answers; all calls "
        f"{per_call['total_time_speedup']:.1f}x faster in total; {per_call['deep_calls']} calls of {DEEP_NODES}+ nodes: "
        f"{per_call.get('reference_nodes_per_s_deep', 0):,.0f} against {per_call.get('compiled_nodes_per_s_deep', 0):,.0f} "
        f"nodes/s")
    rate = lambda name, kind: runs[name, kind]["positions_per_s"]
    results.update(
        tactics_speedup=per_call["reference_ms_median"] / per_call["compiled_ms_median"],
        selfplay_speedup=rate("net", COMPILED) / rate("net", REFERENCE),
        free_net_selfplay_speedup=rate("free", COMPILED) / rate("free", REFERENCE),
        net_share=runs["net", COMPILED]["net_share"])
    log(f"tactics_speedup {results['tactics_speedup']:.1f}, selfplay_speedup {results['selfplay_speedup']:.2f}, "
        f"free_net_selfplay_speedup {results['free_net_selfplay_speedup']:.2f}, net_share {results['net_share']:.2f}")
    return results
