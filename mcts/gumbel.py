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
The functions here are plain numpy over one root; ``GumbelRoot`` is the root selector built on
them: ``BatchedMCTS`` (mcts/search.py) hands it its roots (``Roots``) in place of PUCT at the root.
"""

from __future__ import annotations

import math
from typing import Protocol

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


class Roots(Protocol):
    """What the Gumbel root selector needs of a search over several trees."""

    def root_searched(self, trees: np.ndarray) -> np.ndarray:
        """bool [k, size]: the moves each root searches."""
        ...

    def root_prior(self, trees: np.ndarray) -> np.ndarray:
        """float [k, size]: the evaluator's priors of each root (no noise)."""
        ...

    def root_edges(self, tree: int) -> tuple[np.ndarray, np.ndarray]:
        """(visits, value sums) of the root's edges, float [size] each."""
        ...

    def playouts_through(self, trees: np.ndarray, moves: np.ndarray) -> None:
        """One playout in each of ``trees``, through root edge ``moves[i]``, one evaluator call."""
        ...


class GumbelRoot:
    """Sequential halving over ``k`` Gumbel-sampled root moves (the module docstring)."""

    def __init__(self, k: int):
        self.k = k

    def run(self, roots: Roots, trees: np.ndarray, budget: np.ndarray,
            rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Spend ``budget[i]`` playouts on tree ``trees[i]``; returns the playouts run and the move
        chosen, per tree. Each round descends once in every tree that still has playouts to run in
        the phase, its root edge given, as one evaluator call."""
        legal = roots.root_searched(trees)
        logits = np.log(np.maximum(roots.root_prior(trees), PRIOR_FLOOR))
        scores = np.where(legal, logits + rng.gumbel(size=logits.shape), -np.inf)
        candidates = [top_k(row, self.k) for row in scores]
        schedules = [halving_schedule(len(c), int(b)) for c, b in zip(candidates, budget)]
        played = np.zeros(len(trees), dtype=np.int64)
        for phase in range(max(len(s) for s in schedules)):
            plans = [np.tile(c, s[phase]) if phase < len(s) else c[:0] for c, s in zip(candidates, schedules)]
            for round_ in range(max(len(plan) for plan in plans)):
                active = np.array([i for i, plan in enumerate(plans) if len(plan) > round_])
                if active.size == 0:
                    break
                roots.playouts_through(trees[active], np.array([plans[i][round_] for i in active]))
                played[active] += 1
            for i, tree in enumerate(trees):  # keep the better half of each tree's candidates
                c = candidates[i]
                if phase < len(schedules[i]) and len(c) > 1:
                    visits, value_sum = roots.root_edges(int(tree))
                    q = root_q(visits[c], value_sum[c])
                    ranked = np.argsort(-(scores[i, c] + sigma(q, visits.max())), kind="stable")
                    candidates[i] = c[ranked[: (len(c) + 1) // 2]]
        return played, np.array([c[0] for c in candidates])

    @staticmethod
    def policy(roots: Roots, tree: int, prior: np.ndarray, value: float) -> np.ndarray:
        """The improved policy to train on, of one root searched with ``prior``, its network
        ``value``."""
        visits, value_sum = roots.root_edges(tree)
        legal = roots.root_searched(np.array([tree]))[0]
        return improved_policy(prior, legal, visits, root_q(visits, value_sum), value)
