"""The compiled threat solvers: ``VcfSolver`` and ``VctSolver`` with the reference's interface and
answers (status, first move, nodes), each solve one call into numba kernels (``kernel_board``,
``kernel_vct``, ``kernel_solve``: the entry points) that run the whole search.

The kernels read the reference's own tables (windows, window classes, Zobrist keys: from
``ThreatBoard``), so both see a board the same way. Each solver keeps one workspace, sized for
its largest budget so far.

Compiling the kernels takes about 20 s on 2 cores, once: numba keeps them in its cache
(``__pycache__``, or ``NUMBA_CACHE_DIR``), from where a process loads them in under a second.
``warm_up`` compiles or loads them all; ``compile_elsewhere`` compiles them in another process
while this one answers with the reference solvers (the same answers, slower: ``use_reference``),
so that the engine's first move never waits for a compiler; ``switch_when_compiled`` ends that.

``stop`` (a callable, as the reference's): read when a solve starts and, for solves of at least
``WATCHED_NODES`` nodes, every ``WATCH_SECONDS`` by a thread while the kernel runs (the kernels
release the GIL); the kernel looks at the flag where the reference calls ``stop`` (its first node
and every ``STOP_CHECK_NODES``) and the solve raises ``Interrupted`` as the reference's does.
"""

from __future__ import annotations

import functools
import hashlib
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

import gomoku.tactics.kernel_board as kb
import gomoku.tactics.kernel_rules as ki
import gomoku.tactics.kernel_solve as ks
import gomoku.tactics.kernel_vct as kv
from gomoku.tactics.geometry import Geometry
from gomoku.tactics.rules import VCT_LEAF_NODES, FreestyleRules
from gomoku.tactics.settings import TacticsConfig
from gomoku.tactics.threats import DEFAULT_MAX_NODES, Interrupted, ThreatBoard, ThreatResult, ThreatStatus, VcfSolver
from gomoku.tactics.vct import DEFAULT_VCT_NODES, VctSolver

WATCHED_NODES = 20_000  # solves with at least this budget have their ``stop`` watched while they run
WATCH_SECONDS = 0.001
# A VCT workspace's room for replies and children: every node's worst case (a reply and a child
# per point) up to FULL_ROOM entries, else ROOM_PER_NODE a node of its budget at first (grown as needed).
FULL_ROOM = 1 << 20
ROOM_PER_NODE = 4
VCT_FROM_DEPTH = 2  # the VCT leaf checks start at this depth (gomoku.tactics.rules: never at depth 1)
KERNEL_MODULES = ("kernel_board", "kernel_vct", "kernel_solve", "kernel_rules")  # the modules numba caches
_STATUS = {kv.WIN: ThreatStatus.WIN, kv.NO_WIN: ThreatStatus.NO_WIN, kv.UNKNOWN: ThreatStatus.UNKNOWN}


def tables(geometry: Geometry) -> np.ndarray:
    """The kernels' tables of one board shape, from the reference's (``kernel_board.build_tables``);
    built once a shape (a rules object holds four solvers); shared, so never written to."""
    return _tables(geometry.width, geometry.height, geometry.n_in_row)


@functools.lru_cache(maxsize=None)
def _tables(width: int, height: int, n_in_row: int) -> np.ndarray:
    geometry = Geometry(width, height, n_in_row)
    board = ThreatBoard(geometry, wide=True)  # also refuses n_in_row < MIN_N_IN_ROW, as the reference
    through = geometry.point_windows.copy()
    through[through == geometry.n_windows] = -1
    return kb.build_tables(geometry.windows[:-1], through, board._class_array, np.asarray(board._keys))


class _Fallback:
    """Whether the compiled classes answer with the reference for now (while another process
    compiles the kernels: ``compile_elsewhere``), and that process."""

    active = False
    compiler: subprocess.Popen | None = None


def use_reference(on: bool) -> None:
    """Answer with the reference solvers (``on``) or the kernels from now on."""
    _Fallback.active = on


@dataclass(frozen=True)
class _Start:
    """An empty board as the search takes one (``mcts.GameLike``: no moves yet) and the rules check
    it (its shape): ``warm_up``'s, which cannot build a ``Board`` (``gomoku.game`` is the layer above)."""

    width: int
    height: int
    n_in_row: int
    moves: tuple[int, ...] = ()


class _Float32Evaluator:
    """``mcts.UniformEvaluator``'s answers as float32, the type of a net's (``warm_up``'s)."""

    def evaluate_batch(self, planes: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        from mcts import UniformEvaluator

        priors, values = UniformEvaluator().evaluate_batch(planes, legal)
        return priors.astype(np.float32), values.astype(np.float32)


def warm_up() -> None:
    """Compile every kernel (or load it from numba's cache) on a small position, the search's
    own loops (``mcts.kernels``) too."""
    from mcts import BatchedMCTS, SearchConfig, UniformEvaluator

    geometry = Geometry(9, 9, 5)
    cells = np.zeros(geometry.size + 1, dtype=np.int8)
    for point, colour in ((40, 1), (41, 2), (31, 1), (49, 2), (22, 1)):  # Black has a two: a VCT's start
        cells[point] = colour
    active, _Fallback.active = _Fallback.active, False
    try:
        CompiledVcfSolver(geometry).solve(cells, 1)
        vct = CompiledVctSolver(geometry, 50)
        vct.solve(cells, 1)
        vct.defences(cells, 2, np.array([0, 1]))
        CompiledVcfSolver(geometry).defences(cells, 2, np.array([0, 1]))
        rules = CompiledRules(geometry, TacticsConfig(forced_moves=True, vcf=True, vct=True, vct_leaf_depth=2))
        rules.moves_to_search(cells[None], np.array([1]), depth=np.array([2]))
        rules.wins(cells[None], np.array([22]), np.array([1]))
        # The single-game and the batched search (the same loops), with float64 priors (pure MCTS's)
        # and float32 ones (a net's: a node's priors are typed by what the evaluator returns).
        for evaluator in (UniformEvaluator(), _Float32Evaluator()):
            for trees in (1, 2):
                search = BatchedMCTS(evaluator, rules, SearchConfig(n_playout=4), n_trees=trees)
                search.search([_Start(geometry.width, geometry.height, geometry.n_in_row)] * trees)
    finally:
        _Fallback.active = active


def drop_stale_cache() -> None:
    """Forget numba's cache of the kernels when their source changed since it was written: numba
    checks only a cached function's own file, and the kernels call across four files."""
    folder = Path(__file__).with_name("__pycache__")
    digest = hashlib.sha256(b"".join(Path(__file__).with_name(f"{m}.py").read_bytes() for m in KERNEL_MODULES))
    stamp = folder / "kernels.sha256"
    try:
        if stamp.is_file() and stamp.read_text() == digest.hexdigest():
            return
        for module in KERNEL_MODULES:
            for path in [*folder.glob(f"{module}.*.nbi"), *folder.glob(f"{module}.*.nbc")]:
                path.unlink(missing_ok=True)
        folder.mkdir(exist_ok=True)
        stamp.write_text(digest.hexdigest())
    except OSError:  # a read-only install: numba caches elsewhere (and compiles what it must)
        pass


def cached() -> bool:
    """Whether numba's cache next to the kernels holds them for this Python (a warm machine)."""
    folder = Path(__file__).with_name("__pycache__")
    tag = f"py{sys.version_info.major}{sys.version_info.minor}"
    return all(any(folder.glob(f"{module}.*.{tag}.nbi")) for module in KERNEL_MODULES)


def compile_elsewhere() -> None:
    """Compile the kernels in another process, answering with the reference meanwhile (until
    ``switch_when_compiled``); nothing to do on a warm machine."""
    if cached() or _Fallback.compiler is not None:
        return
    _Fallback.compiler = subprocess.Popen([sys.executable, "-c", "import gomoku.tactics.compiled as c; c.warm_up()"],
                                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL)
    _Fallback.active = True


def switch_when_compiled() -> bool:
    """Once the other process has compiled the kernels, load them (a second or less) and use them;
    whether the kernels are in use. The engine calls it where a move's clock can pay for it."""
    compiler = _Fallback.compiler
    if _Fallback.active and compiler is not None and compiler.poll() is not None:
        _Fallback.compiler = None
        warm_up()
        _Fallback.active = False
    return not _Fallback.active


class _Solver:
    """What both compiled solvers share: the tables, the workspace, the stop flag, and the
    reference solver that answers while the kernels compile elsewhere (``_Fallback``)."""

    def __init__(self, geometry: Geometry, max_nodes: int, vct: bool):
        if max_nodes < 1:
            raise ValueError(f"max_nodes must be >= 1, got {max_nodes}")
        self.geometry = geometry
        self.max_nodes = max_nodes
        self.stop: Callable[[], bool] | None = None
        self._tables = tables(geometry)
        self._vct = vct
        self._budget = 0
        self._room = 0
        self._ws = np.zeros(0, dtype=np.int64)
        self._reference_solver = None

    def _reference(self):
        """The reference solver of the same budgets, with this one's ``stop``."""
        if self._reference_solver is None:
            self._reference_solver = self._reference_kind(self.geometry, *self._budgets())
        self._reference_solver.stop = self.stop
        return self._reference_solver

    def _workspace(self, budget: int, room: int = 0) -> np.ndarray:
        if budget > self._budget or room > self._room:
            self._budget = max(budget, self._budget)
            if self._vct:
                full = (self._budget + 3) * self.geometry.size
                first = full if full <= FULL_ROOM else ROOM_PER_NODE * (self._budget + 2)
                self._room = max(room, self._room, first)
            g = self.geometry
            self._ws = kb.workspace(g.size, g.n_windows, self._tables[3], self._budget, self._room, self._room)
            self._meta = self._ws[kb.meta_offset(g.size, g.n_windows):][:kb.META]  # the flag the kernel reads
        return self._ws

    def defences(self, cells: np.ndarray, defender: int, moves: np.ndarray,
                 max_nodes: int | None = None) -> np.ndarray:
        """For ``defender`` to move in ``cells``: which of ``moves`` leave the opponent without a
        win of the solver's kind, one bool per move (out of budget counts as a defence)."""
        if _Fallback.active:
            return self._reference().defences(cells, defender, moves, max_nodes)
        _check(3 - defender)
        budget = int(self.max_nodes if max_nodes is None else max_nodes)
        moves = np.asarray(moves, dtype=np.int64)
        stops = np.zeros(len(moves), dtype=np.bool_)
        kernel = ks.vct_defences if self._vct else ks.vcf_defences
        extra = (self._budgets()[1],) if self._vct else ()  # the VCT's VCF check budget
        if self._run(budget, kernel, _cells(cells), int(defender), moves, stops, budget, *extra) == kv.STOPPED:
            raise Interrupted
        return stops

    def seconds_in_kernel(self, cells: np.ndarray, attacker: int, max_nodes: int | None = None,
                          repeats: int = 1, loaded: bool = False) -> tuple[ThreatResult, float]:
        """``solve``'s answer and the seconds one solve takes inside the kernels (the mean of
        ``repeats`` run in one call, with no call from Python each), for the bench. ``loaded``: the
        position loaded once, as an inner node's solve runs on the position ``kernel_rules`` loaded
        for its fours check; else each solve loads it, as a defence check does."""
        answer = self.solve(cells, attacker, max_nodes)  # the workspace grown to what the solve needs
        budget = int(self.max_nodes if max_nodes is None else max_nodes)
        vcf_nodes = self._budgets()[1] if self._vct else -1
        start = time.perf_counter()
        again = ks.solve_repeatedly(self._tables, self._ws, _cells(cells), int(attacker), budget, vcf_nodes, repeats,
                                     loaded)
        seconds = (time.perf_counter() - start) / repeats
        if _result(again) != answer:
            raise RuntimeError(f"the repeated solve answered {_result(again)}, not {answer}")
        return answer, seconds

    def _run(self, budget: int, kernel, *args):
        """``kernel(tables, workspace, *args)`` with the stop flag kept up to date, run again in a
        larger workspace while it answers NEEDS_ROOM."""
        while True:
            ws = self._workspace(budget)
            result = self._watched(budget, kernel, ws, *args)
            status = result[0] if isinstance(result, tuple) else result
            if status != kv.NEEDS_ROOM:
                return result
            self._workspace(budget, 4 * self._room)

    def _watched(self, budget: int, kernel, ws: np.ndarray, *args):
        stop = self.stop
        meta = self._meta
        meta[kb.STOP] = 1 if stop is not None and stop() else 0
        if stop is None or meta[kb.STOP] or budget < WATCHED_NODES:
            return kernel(self._tables, ws, *args)
        done = threading.Event()

        def watch() -> None:
            while not done.wait(WATCH_SECONDS):
                if stop():
                    meta[kb.STOP] = 1
                    return

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        try:
            return kernel(self._tables, ws, *args)
        finally:
            done.set()
            watcher.join()


def _cells(cells: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(cells, dtype=np.int8)


def _check(attacker: int) -> None:
    if attacker not in (1, 2):
        raise ValueError(f"attacker must be 1 or 2, got {attacker!r}")


def _result(answer: tuple[int, int, int]) -> ThreatResult:
    status, move, nodes = answer
    if status == kv.STOPPED:
        raise Interrupted
    return ThreatResult(_STATUS[status], int(move), int(nodes))


class CompiledVcfSolver(_Solver):
    """``VcfSolver``'s interface and answers, compiled."""

    _reference_kind = VcfSolver

    def __init__(self, geometry: Geometry, max_nodes: int = DEFAULT_MAX_NODES):
        super().__init__(geometry, max_nodes, vct=False)

    def _budgets(self) -> tuple[int, ...]:
        return (self.max_nodes,)

    def solve(self, cells: np.ndarray, attacker: int, max_nodes: int | None = None) -> ThreatResult:
        if _Fallback.active:
            return self._reference().solve(cells, attacker, max_nodes)
        _check(attacker)
        budget = int(self.max_nodes if max_nodes is None else max_nodes)
        if self.stop is None and budget <= self._budget:  # the common call: straight to the kernel
            self._meta[kb.STOP] = 0
            return _result(ks.vcf_solve(self._tables, self._ws, _cells(cells), int(attacker), budget))
        return _result(self._run(budget, ks.vcf_solve, _cells(cells), int(attacker), budget))



class CompiledVctSolver(_Solver):
    """``VctSolver``'s interface and answers, compiled."""

    _reference_kind = VctSolver

    def __init__(self, geometry: Geometry, max_nodes: int = DEFAULT_VCT_NODES, vcf_nodes: int = DEFAULT_MAX_NODES):
        super().__init__(geometry, max_nodes, vct=True)
        self.vcf_nodes = int(vcf_nodes)

    def _budgets(self) -> tuple[int, ...]:
        return self.max_nodes, self.vcf_nodes

    def solve(self, cells: np.ndarray, attacker: int, max_nodes: int | None = None) -> ThreatResult:
        if _Fallback.active:
            return self._reference().solve(cells, attacker, max_nodes)
        _check(attacker)
        budget = int(self.max_nodes if max_nodes is None else max_nodes)
        return _result(self._run(budget, ks.vct_solve, _cells(cells), int(attacker), budget, self.vcf_nodes))


    def after(self, cells: np.ndarray, defender: int, move: int, max_nodes: int | None = None) -> ThreatResult:
        cells = np.array(cells, dtype=np.int8)
        cells[move] = defender
        return self.solve(cells, 3 - defender, max_nodes)


class CompiledRules(FreestyleRules):
    """``FreestyleRules`` with the compiled solvers, and the moves to search of inner nodes (below
    the root) computed for the whole batch in one kernel call (``kernel_rules.inner_moves``): the
    reference rules' answers. The root's rules are the reference's code over the compiled solvers
    (one call a search), with its caches."""

    def __init__(self, geometry: Geometry, config: TacticsConfig):
        super().__init__(geometry, config, solvers=(CompiledVcfSolver, CompiledVctSolver))
        # One solver's workspace for the inner nodes' VCF and VCT leaf checks.
        self._inner = None if self.vcf_solver is None else \
            CompiledVctSolver(geometry, max(config.vcf_nodes, VCT_LEAF_NODES), config.vcf_nodes)
        self._calls = np.zeros(2, dtype=np.int64)
        self._tables = tables(geometry)
        self.wins = self._wins  # the terminal test of a batch, compiled (``wins_one`` stays the geometry's)

    def _wins(self, cells: np.ndarray, moves: np.ndarray, colours: np.ndarray) -> np.ndarray:
        if _Fallback.active:
            return self.geometry.wins(cells, moves, colours)
        won = np.empty(len(cells), dtype=bool)
        ki.wins(self._tables, np.ascontiguousarray(cells, dtype=np.int8), np.asarray(moves, dtype=np.int64),
                np.asarray(colours, dtype=np.int64), won)
        return won

    @FreestyleRules.stop.setter
    def stop(self, stop: Callable[[], bool] | None) -> None:
        FreestyleRules.stop.fset(self, stop)
        if self._inner is not None:
            self._inner.stop = stop

    def moves_to_search(self, cells: np.ndarray, to_move: np.ndarray, root: bool = False,
                        depth: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        if root or self._inner is None or not self.forced_moves or _Fallback.active:
            return super().moves_to_search(cells, to_move, root, depth)
        cells = np.ascontiguousarray(cells, dtype=np.int8)
        k = len(cells)
        to_move = np.asarray(to_move, dtype=np.int64)
        deepest = self.vct_leaf_depth if self.vct_solver is not None and depth is not None else 0
        depth = np.zeros(k, dtype=np.int64) if depth is None else np.asarray(depth, dtype=np.int64)
        inner, budget = self._inner, self._inner.max_nodes
        while True:
            legal = cells[:, :-1] == 0
            can_win = np.zeros(k, dtype=bool)
            self._calls[:] = 0
            status = inner._watched(budget, ki.inner_moves, inner._workspace(budget), cells, to_move, depth,
                                    self.least_stones(), self.settings.vcf_nodes, VCT_FROM_DEPTH, deepest,
                                    VCT_LEAF_NODES, can_win, legal, self._calls)
            if status != kv.NEEDS_ROOM:
                break
            inner._workspace(budget, 4 * inner._room)
        self.vcf_calls += int(self._calls[0])
        self.vct_calls += int(self._calls[1])
        return can_win, legal


drop_stale_cache()  # before any kernel is called: numba reads its cache on a kernel's first call

if __name__ == "__main__":  # python -m gomoku.tactics.compiled: compile the kernels into numba's cache now
    warm_up()
