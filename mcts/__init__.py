"""Monte Carlo tree search, independent of any game code, torch or pygame.

The search (``mcts.search.BatchedMCTS``: tree storage, PUCT selection, backup, tree reuse) sees
positions only through a move history and a board shape, and takes the rest injected:
- the game's rules (``mcts.rules.FreestyleRules``): terminal positions, the moves a node searches
  (forced moves, the VCF and VCT rules with their caches) and the network's input planes
  (``mcts.evaluators.input_planes``, the one encoding, also ``Board``'s);
- the judgement of leaves: an evaluator (``mcts.evaluators.Evaluator``: a network, random
  rollouts, or a stub);
- optionally a root selector in place of PUCT at the root (``mcts.gumbel.GumbelRoot``).
Its settings are defined once in ``mcts.config`` (``SearchSettings``, which a run's config
extends; ``SearchConfig``, one search's); what it returns, in ``mcts.result``.
Line geometry and shapes (fives, fours, threes) live in ``mcts.geometry``; the exact VCF and VCT
solvers built on them, in ``mcts.threats`` and ``mcts.vct``.
"""

from mcts.config import SearchConfig, SearchSettings
from mcts.evaluators import Evaluator, RolloutEvaluator, UniformEvaluator, evaluate
from mcts.geometry import Geometry
from mcts.result import SearchResult, visit_policy
from mcts.rules import FreestyleRules
from mcts.search import BatchedMCTS
from mcts.threats import ThreatResult, ThreatStatus, VcfResult, VcfSolver, VcfStatus
from mcts.vct import VctSolver

__all__ = ["BatchedMCTS", "Evaluator", "FreestyleRules", "Geometry", "RolloutEvaluator", "SearchConfig",
           "SearchResult", "SearchSettings", "ThreatResult", "ThreatStatus", "UniformEvaluator", "VcfResult",
           "VcfSolver", "VcfStatus", "VctSolver", "evaluate", "visit_policy"]
