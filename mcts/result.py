"""What a search returns: ``SearchResult`` per root, and the move probabilities of its visits."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

NO_MOVE = -1
GREEDY_TEMPERATURE = 1e-2  # at or below this, the policy is uniform over the most visited moves


@dataclass
class SearchResult:
    """The outcome of one search from one root position."""

    visits: np.ndarray  # float [H*W]: visit counts of the root's edges
    priors: np.ndarray  # float [H*W]: the root priors the search used (after noise, if any)
    value: float  # mean backed-up value of the root for the player to move there
    playouts: int  # playouts run in this search (a reused subtree's earlier visits not counted)
    selected: int = NO_MOVE  # Gumbel root: the move sequential halving chose (to play)
    improved: np.ndarray | None = None  # Gumbel root: float [H*W], the improved policy (to train on)
    refuted: tuple[int, ...] = ()  # moves a final threat check found losing (best_move skips them)

    @property
    def counts(self) -> np.ndarray:
        """The visits, or the priors where no edge has one (a fresh root searched with one
        playout, which only expands it): what ``best_move`` and ``policy`` choose by."""
        return self.visits if self.visits.any() else self.priors

    def ranked_moves(self) -> np.ndarray:
        """Every point, most visited first (``counts``); ties go to the higher prior, then the
        lower index. A short search of a big board visits many moves once each: by index alone,
        the first of them was the corner."""
        counts = np.asarray(self.counts, dtype=np.float64)
        priors = np.asarray(self.priors, dtype=np.float64)
        return np.lexsort((np.arange(counts.size), -priors, -counts))  # the last key sorts first

    def best_move(self) -> int:
        """The first of ``ranked_moves`` that is not ``refuted``."""
        refuted, ranked = set(self.refuted), self.ranked_moves()
        return next((int(move) for move in ranked if int(move) not in refuted), int(ranked[0]))

    def policy(self, temperature: float = 1.0) -> np.ndarray:
        return visit_policy(self.counts, temperature)


def visit_policy(visits: np.ndarray, temperature: float) -> np.ndarray:
    """Move probabilities proportional to ``visits ** (1 / temperature)``."""
    visits = np.asarray(visits, dtype=np.float64)
    if temperature <= GREEDY_TEMPERATURE:
        best = visits == visits.max()
        return best / best.sum()
    logits = np.log(np.maximum(visits, 1e-300)) / temperature
    logits[visits <= 0] = -np.inf
    logits -= logits.max()
    probs = np.exp(logits)
    return probs / probs.sum()
