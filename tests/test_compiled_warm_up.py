"""The compiled tactics on a machine that has not compiled them yet: the kernels compile in
another process while the reference answers, and are used once they are compiled."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

import gomoku.tactics.compiled as compiled

POPEN = subprocess.Popen
from gomoku.tactics.geometry import Geometry
from gomoku.tactics.threats import VcfSolver
from gomoku.tactics.vct import VctSolver
from tests.fakes import checkout_env
from tests.test_compiled_tactics import game_positions


def test_while_the_kernels_compile_elsewhere_the_reference_answers(monkeypatch):
    launched = []

    def fake_compiler(command, **_):  # a compiler that has already finished
        launched.append(command)
        return POPEN([sys.executable, "-c", "pass"])

    monkeypatch.setattr(compiled, "cached", lambda: False)
    monkeypatch.setattr(compiled.subprocess, "Popen", fake_compiler)
    geometry = Geometry(9, 9, 5)
    kernel, reference = compiled.CompiledVctSolver(geometry, 300), VctSolver(geometry, 300)
    calls = []
    monkeypatch.setattr(VctSolver, "solve", lambda self, *a, **k: calls.append(1) or reference_solve(self, *a, **k))
    try:
        compiled.compile_elsewhere()
        assert launched and "warm_up" in launched[0][-1] and compiled._Fallback.active
        cells = game_positions()[10]
        answer = kernel.solve(cells, 1)
        assert calls and answer == reference.solve(cells, 1)  # the reference solver answered
        compiled._Fallback.compiler.wait()
        assert compiled.switch_when_compiled() and not compiled._Fallback.active
        calls.clear()
        assert kernel.solve(cells, 1) == answer and not calls  # the kernel answered
    finally:
        compiled.use_reference(False)
        compiled._Fallback.compiler = None


reference_solve = VctSolver.solve


def test_a_warm_machine_compiles_nothing_elsewhere(monkeypatch):
    monkeypatch.setattr(compiled, "cached", lambda: True)
    monkeypatch.setattr(compiled.subprocess, "Popen", lambda *a, **k: (_ for _ in ()).throw(AssertionError))
    compiled.compile_elsewhere()
    assert not compiled._Fallback.active and compiled.switch_when_compiled()


def test_a_change_to_a_kernels_source_drops_its_cache(tmp_path, monkeypatch):
    for module in compiled.KERNEL_MODULES:
        (tmp_path / f"{module}.py").write_text(f"# {module}\n")
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    monkeypatch.setattr(compiled, "__file__", str(tmp_path / "compiled.py"))
    compiled.drop_stale_cache()
    entry = cache / "kernel_solve.vct_solve-1.py311.nbi"
    entry.write_text("cached")
    compiled.drop_stale_cache()  # unchanged sources: kept
    assert entry.exists()
    (tmp_path / "kernel_board.py").write_text("# changed\n")
    compiled.drop_stale_cache()
    assert not entry.exists()


def test_the_vcf_solver_falls_back_too():
    geometry = Geometry(9, 9, 5)
    kernel, reference = compiled.CompiledVcfSolver(geometry, 200), VcfSolver(geometry, 200)
    cells = game_positions()[12]
    compiled.use_reference(True)
    try:
        moves = np.flatnonzero(cells[:-1] == 0)
        assert kernel.solve(cells, 1) == reference.solve(cells, 1)
        assert np.array_equal(kernel.defences(cells, 2, moves), reference.defences(cells, 2, moves))
        assert kernel._reference_solver is not None
    finally:
        compiled.use_reference(False)


# In a fresh process: warm_up, then a pure and an az player's moves; every kernel type signature
# they compile that warm_up had not is printed.
NEW_SIGNATURES = """
import importlib
import gomoku.tactics.compiled as compiled
import mcts.kernels
from numba.core.registry import CPUDispatcher
from gomoku.game.board import Board
from gomoku.players import make_player

MODULES = [importlib.import_module(f"gomoku.tactics.{name}") for name in compiled.KERNEL_MODULES] + [mcts.kernels]

def signatures():
    return {(m.__name__, name, str(s)) for m in MODULES for name, f in vars(m).items()
            if isinstance(f, CPUDispatcher) for s in f.signatures}

compiled.warm_up()
before = signatures()
for spec in ("pure:30", "az:models/9x9.pt:30"):
    board, player = Board(), make_player(spec, seed=0)
    for _ in range(6):
        board.do_move(player.get_action(board))
for new in sorted(signatures() - before):
    print(*new)
"""


def test_warm_up_compiles_every_kernel_signature_the_players_use():
    """A kernel the players call with types warm_up did not (a net's float32 priors) would compile
    on a move's clock, or in a script's subprocess under load."""
    done = subprocess.run([sys.executable, "-c", NEW_SIGNATURES], env=checkout_env(), capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == "", done.stdout
