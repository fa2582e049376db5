"""Every piece of five-in-a-row knowledge the search and the players use, in one package.

- ``geometry``: the line windows of a board shape and their shapes (fives, fours, threes), the one
  ``DIRECTIONS``;
- ``threats``: the VCF solver (victory by continuous fours) and the threat records the solvers
  share (``ThreatResult``, ``ThreatStatus``, ``ThreatBoard``); ``vct``: the VCT solver (fours and
  threes);
- ``rules``: ``FreestyleRules``, the rules object injected into ``mcts.BatchedMCTS`` (terminal
  test, the moves a node searches with the forced-move, VCF and VCT rules, the planes);
- ``planes``: the network's input planes; ``rollout``: the pure-MCTS random-playout evaluator;
- ``settings``: the rules' settings (``TacticsSettings``, a run's; ``TacticsConfig``, one rules
  object's), which a run's config file sets under ``search:`` beside the search's own.

``make_rules`` builds the rules object every caller of the search passes.
"""

from gomoku.tactics.geometry import DIRECTIONS, Geometry
from gomoku.tactics.planes import PLANES, input_planes
from gomoku.tactics.rollout import RolloutEvaluator
from gomoku.tactics.rules import FreestyleRules
from gomoku.tactics.settings import DEFAULT_VCF_NODES, DEFAULT_VCT_NODES, TacticsConfig, TacticsSettings
from gomoku.tactics.threats import ThreatBoard, ThreatResult, ThreatStatus, VcfResult, VcfSolver, VcfStatus
from gomoku.tactics.vct import VctSolver

NO_TACTICS = TacticsConfig()  # the plain game: terminal positions only, every empty point searched


def make_rules(width: int, height: int, n_in_row: int, settings: TacticsConfig = NO_TACTICS) -> FreestyleRules:
    """The rules of freestyle ``n_in_row`` in a row on a ``width`` x ``height`` board with the
    forced-move and threat rules ``settings`` turns on (a run's ``TacticsSettings``:
    ``TacticsConfig.of`` first)."""
    return FreestyleRules(Geometry(width, height, n_in_row), settings)


__all__ = ["DEFAULT_VCF_NODES", "DEFAULT_VCT_NODES", "DIRECTIONS", "NO_TACTICS", "PLANES", "FreestyleRules",
           "Geometry", "RolloutEvaluator", "TacticsConfig", "TacticsSettings", "ThreatBoard", "ThreatResult",
           "ThreatStatus", "VcfResult", "VcfSolver", "VcfStatus", "VctSolver", "input_planes", "make_rules"]
