"""Gumbel root search (Danihelka et al., "Policy improvement by planning with Gumbel", ICLR 2022).

The search's root is handled as a bandit with a small budget instead of by PUCT:

1. Draw a Gumbel variable ``g(a)`` per legal root move and keep the ``k`` moves with the largest
   ``g(a) + logits(a)`` (sampling ``k`` moves without replacement from the prior).
2. Sequential halving: spread the playouts over ceil(log2 k) phases; in each, visit every
   remaining candidate equally often (the search below the root is the usual PUCT), then keep the
   better half by ``g(a) + logits(a) + sigma(q(a))``. The last candidate is the move to play.
3. The training target is the improved policy ``softmax(logits + sigma(completed q))``, where an
   unvisited move's q is completed with a value mixed from the network's and the visited moves'.

With an exact q the chosen move is, in expectation, no worse than the prior's (the paper's policy
improvement guarantee), so it needs no temperature and no Dirichlet noise, and the target is
meaningful with only a few playouts per move (16-32 in the paper, where PUCT needs hundreds).

Values are in [-1, 1] from the root player's point of view; ``sigma`` maps them to [0, 1] first.
The functions here are plain numpy over one root; ``BatchedMCTS`` drives them (mcts/search.py).
"""

from __future__ import annotations

import math

import numpy as np

C_VISIT = 50.0  # sigma's offset on the visit count (the paper's value)
C_SCALE = 1.0  # sigma's scale (the paper's value)
PRIOR_FLOOR = 1e-30  # logits of zero priors stay finite


def sigma(q: np.ndarray, max_visits: float) -> np.ndarray:
    """The monotone transform of values in [-1, 1]: ``(c_visit + max_b N(b)) * c_scale * q01``."""
    return (C_VISIT + max_visits) * C_SCALE * (np.asarray(q) + 1.0) / 2.0


def root_q(visits: np.ndarray, value_sum: np.ndarray) -> np.ndarray:
    """Mean value of each root edge, 0 where unvisited."""
    return np.where(visits > 0, value_sum / np.maximum(visits, 1.0), 0.0)


def completed_q(prior: np.ndarray, visits: np.ndarray, q: np.ndarray, value: float) -> np.ndarray:
    """q of the visited moves; elsewhere the mixed value: the network's ``value`` and the
    prior-weighted mean q of the visited moves, weighted 1 and the visit total."""
    visited = visits > 0
    total = float(visits.sum())
    mixed = value
    if total > 0:
        weights = prior[visited]
        mass = float(weights.sum())
        mean_q = float((weights * q[visited]).sum() / mass) if mass > 0 else float(q[visited].mean())
        mixed = (value + total * mean_q) / (1.0 + total)
    return np.where(visited, q, mixed)


def improved_policy(prior: np.ndarray, legal: np.ndarray, visits: np.ndarray, q: np.ndarray,
                    value: float) -> np.ndarray:
    """``softmax(logits + sigma(completed q))`` over the legal moves (zero elsewhere)."""
    scores = np.log(np.maximum(prior, PRIOR_FLOOR)) + sigma(completed_q(prior, visits, q, value), visits.max())
    scores = np.where(legal, scores, -np.inf)
    scores -= scores[legal].max()
    policy = np.exp(scores)
    return policy / policy.sum()


def halving_schedule(k: int, budget: int) -> list[int]:
    """Visits per remaining candidate in each phase of sequential halving over ``k`` candidates.

    ceil(log2 k) phases (one when k is 1); phase p has ``m_p = ceil(k / 2^p)`` candidates and
    shares what is left of ``budget`` evenly with the phases after it, at least one visit per
    candidate. The total is at most ``max(budget, sum of m_p)``, and at least ``budget - 1`` when
    the budget covers one visit per candidate and phase (``sum of m_p`` < 2k + log2 k + 1).
    """
    if k < 1 or budget < 0:
        raise ValueError(f"need k >= 1 and budget >= 0, got k={k}, budget={budget}")
    phases = max(1, math.ceil(math.log2(k)))
    left, m, schedule = budget, k, []
    for p in range(phases):
        visits = max(1, left // ((phases - p) * m))
        schedule.append(visits)
        left -= visits * m
        m = (m + 1) // 2
    return schedule


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` moves with the largest finite scores, best first (lowest index on ties)."""
    order = np.argsort(-scores, kind="stable")
    return order[: min(k, int(np.isfinite(scores).sum()))]
