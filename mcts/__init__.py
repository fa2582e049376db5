"""Monte Carlo tree search, independent of any game code, torch or pygame.

The search (``mcts.search.BatchedMCTS``: tree storage, PUCT selection, backup, tree reuse) plays
placement games (two players alternately take an empty point) and sees positions only through a
move history; it takes the rest injected:
- the game's rules (``mcts.game.Rules``, a small protocol): terminal positions, the moves a node
  searches (which may prove a position won) and the evaluator's input planes; the caller builds
  them for one board shape (five in a row: ``gomoku.tactics.make_rules``);
- the judgement of leaves: an evaluator (``mcts.evaluators.Evaluator``: a network, a stub, or a
  cache in front of one);
- optionally a root selector in place of PUCT at the root (``mcts.gumbel.GumbelRoot``).
Its settings are defined once in ``mcts.config`` (``SearchSettings``, which a run's config
extends; ``SearchConfig``, one search's); what it returns, in ``mcts.result``. A plain reference
search to check it against: ``mcts.reference``.
"""

from mcts.config import SearchConfig, SearchSettings
from mcts.evaluators import CachedEvaluator, Evaluator, UniformEvaluator, evaluate
from mcts.game import FIRST, SECOND, GameLike, Rules
from mcts.result import SearchResult, visit_policy
from mcts.search import BatchedMCTS

__all__ = ["FIRST", "SECOND", "BatchedMCTS", "CachedEvaluator", "Evaluator", "GameLike", "Rules", "SearchConfig",
           "SearchResult", "SearchSettings", "UniformEvaluator", "evaluate", "visit_policy"]
