"""Monte Carlo tree search, independent of any game code, torch or pygame.

The search sees positions only through a move history and a board shape, and judges leaves only
through an evaluator (``mcts.evaluators.Evaluator``): a network, random rollouts, or a stub.
Line geometry lives in ``mcts.geometry``; the exact VCF solver the search can use, in ``mcts.threats``.
"""

from mcts.evaluators import Evaluator, RolloutEvaluator, UniformEvaluator, evaluate
from mcts.geometry import Geometry
from mcts.search import BatchedMCTS, SearchConfig, SearchResult, visit_policy
from mcts.threats import VcfResult, VcfSolver, VcfStatus

__all__ = ["BatchedMCTS", "Evaluator", "Geometry", "RolloutEvaluator", "SearchConfig",
           "SearchResult", "UniformEvaluator", "VcfResult", "VcfSolver", "VcfStatus", "evaluate", "visit_policy"]
