"""Every piece of five-in-a-row knowledge the search and the players use, in one package.

- ``geometry``: the line windows of a board shape and their shapes (fives, fours, threes), the one
  ``DIRECTIONS``;
- ``threats``: the VCF solver (victory by continuous fours) and the threat records the solvers
  share (``ThreatResult``, ``ThreatStatus``, ``ThreatBoard``); ``vct``: the VCT solver (fours and
  threes);
- ``rules``: ``FreestyleRules``, the rules object injected into ``mcts.BatchedMCTS`` (terminal
  test, the moves a node searches with the forced-move, VCF and VCT rules, the planes);
- ``planes``: the network's input planes; ``rollout``: the pure-MCTS random-playout evaluator;
- ``compiled``: the same solvers and rules as numba kernels (``kernel_board``: the threat board and
  VCF; ``kernel_vct``: the proof-number VCT; ``kernel_solve``: the
  entry points Python calls; ``kernel_rules``: an inner node's moves for a batch),
  the default (``tactics: compiled``); the pure-Python modules above are their tested reference;
- ``settings``: the rules' settings (``TacticsSettings``, a run's; ``TacticsConfig``, one rules
  object's), which a run's config file sets under ``search:`` beside the search's own.

``make_rules`` builds the rules object every caller of the search passes.
"""

from gomoku.tactics.geometry import DIRECTIONS, Geometry
from gomoku.tactics.planes import PLANES, input_planes
from gomoku.tactics.rollout import RolloutEvaluator
from gomoku.tactics.rules import FreestyleRules
from gomoku.tactics.settings import (COMPILED, DEFAULT_VCF_NODES, DEFAULT_VCT_NODES, REFERENCE, TACTICS_KINDS,
                                     TacticsConfig, TacticsSettings)
from gomoku.tactics.threats import ThreatBoard, ThreatResult, ThreatStatus, VcfResult, VcfSolver, VcfStatus
from gomoku.tactics.vct import VctSolver

NO_TACTICS = TacticsConfig()  # the plain game: terminal positions only, every empty point searched


def make_rules(width: int, height: int, n_in_row: int, settings: TacticsConfig = NO_TACTICS) -> FreestyleRules:
    """The rules of freestyle ``n_in_row`` in a row on a ``width`` x ``height`` board with the
    forced-move and threat rules ``settings`` turns on (a run's ``TacticsSettings``:
    ``TacticsConfig.of`` first): with the compiled solvers unless ``settings.tactics`` is
    "reference" (the same answers; numba is imported only here, on first use)."""
    geometry = Geometry(width, height, n_in_row)
    if settings.tactics == COMPILED and settings.vcf and settings.forced_moves:
        from gomoku.tactics.compiled import CompiledRules

        return CompiledRules(geometry, settings)
    return FreestyleRules(geometry, settings)


def solvers(kind: str = COMPILED) -> tuple[type[VcfSolver], type[VctSolver]]:
    """The VCF and VCT solver classes of ``kind`` ("compiled" or "reference"): the same interface
    and answers."""
    if kind == COMPILED:
        from gomoku.tactics.compiled import CompiledVcfSolver, CompiledVctSolver

        return CompiledVcfSolver, CompiledVctSolver
    if kind != REFERENCE:
        raise ValueError(f"tactics must be one of {', '.join(TACTICS_KINDS)}, got {kind!r}")
    return VcfSolver, VctSolver


__all__ = ["COMPILED", "REFERENCE", "TACTICS_KINDS", "DEFAULT_VCF_NODES", "DEFAULT_VCT_NODES", "DIRECTIONS", "NO_TACTICS", "PLANES", "FreestyleRules",
           "Geometry", "RolloutEvaluator", "TacticsConfig", "TacticsSettings", "ThreatBoard", "ThreatResult",
           "ThreatStatus", "VcfResult", "VcfSolver", "VcfStatus", "VctSolver", "input_planes", "make_rules", "solvers"]
