"""What a search returns: ``SearchResult`` per root, and the move probabilities of its visits.

A result is a frozen record of one root, read off the search tree when the search returns (the
tree changes afterwards; the record does not). Shapes, with A the moves of the game (``H*W``
points of a board):

    visits    float [A]  visit counts of the root's edges
    priors    float [A]  the root priors the search used (after noise, if any)
    q         float [A]  each root edge's mean backed-up value ``W / N`` for the player to move at
                         the root; NaN where the edge has no visit
    value     float      the root's mean backed-up value for the player to move there
    playouts  int        playouts run in this search
    lines     tuple of up to LINE_MOVES tuples of up to LINE_PLIES moves: the expected line of each
              of the most visited root moves, in ``ranked_moves`` order; ``lines[0]`` is the
              principal variation (``pv``)

A line is a root move, then at each node reached the most visited edge (``most_visited``: ties to
the higher prior, then the lower move), until a node that is not expanded or whose edges have no
visit yet, or LINE_PLIES moves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

NO_MOVE = -1
GREEDY_TEMPERATURE = 1e-2  # at or below this, the policy is uniform over the most visited moves
LINE_MOVES = 8  # the most visited root moves whose expected line a result carries
LINE_PLIES = 12  # the most moves of a line


@dataclass(frozen=True)
class SearchResult:
    """The outcome of one search from one root position (shapes in the module docstring)."""

    visits: np.ndarray
    priors: np.ndarray
    value: float
    playouts: int  # a reused subtree's earlier visits not counted
    q: np.ndarray | None = None  # None when made: NaN everywhere (no edge statistics known)
    lines: tuple[tuple[int, ...], ...] = ()
    selected: int = NO_MOVE  # Gumbel root: the move sequential halving chose (to play)
    improved: np.ndarray | None = None  # Gumbel root: float [A], the improved policy (to train on)
    refuted: tuple[int, ...] = ()  # moves a final threat check found losing (best_move skips them)

    def __post_init__(self) -> None:
        if self.q is None:
            object.__setattr__(self, "q", np.full(np.shape(self.visits), np.nan))

    @property
    def pv(self) -> tuple[int, ...]:
        """The principal variation: the line of the most visited root move (empty without a
        visited edge). ``best_move`` may differ from its first move: it skips ``refuted``."""
        return self.lines[0] if self.lines else ()

    def line(self, move: int) -> tuple[int, ...]:
        """The expected line starting with root move ``move``: one of ``lines``, else just the move."""
        return next((line for line in self.lines if line[0] == move), (move,))

    @property
    def counts(self) -> np.ndarray:
        """The visits, or the priors where no edge has one (a fresh root searched with one
        playout, which only expands it): what ``best_move`` and ``policy`` choose by."""
        return self.visits if self.visits.any() else self.priors

    def ranked_moves(self) -> np.ndarray:
        """Every point, most visited first (``counts``); ties go to the higher prior, then the
        lower index. A short search of a big board visits many moves once each: by index alone,
        the first of them was the corner."""
        return ranked(self.counts, self.priors)

    def best_move(self) -> int:
        """The first of ``ranked_moves`` that is not ``refuted``."""
        refuted, ranked_ = set(self.refuted), self.ranked_moves()
        return next((int(move) for move in ranked_ if int(move) not in refuted), int(ranked_[0]))

    def policy(self, temperature: float = 1.0) -> np.ndarray:
        return visit_policy(self.counts, temperature)


def ranked(counts: np.ndarray, priors: np.ndarray) -> np.ndarray:
    """Every move, the largest ``counts`` first; ties go to the higher prior, then the lower index."""
    counts = np.asarray(counts, dtype=np.float64)
    priors = np.asarray(priors, dtype=np.float64)
    return np.lexsort((np.arange(counts.size), -priors, -counts))  # the last key sorts first


def edge_q(visits: np.ndarray, value_sum: np.ndarray) -> np.ndarray:
    """Each edge's mean value ``W / N``, NaN where it has no visit."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(visits > 0, value_sum / visits, np.nan)


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
