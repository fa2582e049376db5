"""Monte Carlo tree search, independent of any game code, torch or pygame.

The search sees positions only through a move history and a board shape, and judges leaves only
through an evaluator (``mcts.evaluators.Evaluator``): a network, random rollouts, or a stub.
Line geometry lives in ``mcts.geometry``; the exact VCF and VCT solvers the search can
use, in ``mcts.threats`` and ``mcts.vct``.
"""

from mcts.evaluators import Evaluator, RolloutEvaluator, UniformEvaluator, evaluate
from mcts.geometry import Geometry
from mcts.search import BatchedMCTS, SearchConfig, SearchResult, visit_policy
from mcts.threats import ThreatResult, ThreatStatus, VcfResult, VcfSolver, VcfStatus
from mcts.vct import VctSolver

__all__ = ["BatchedMCTS", "Evaluator", "Geometry", "RolloutEvaluator", "SearchConfig",
           "SearchResult", "ThreatResult", "ThreatStatus", "UniformEvaluator", "VcfResult", "VcfSolver", "VcfStatus",
           "VctSolver", "evaluate", "visit_policy"]
