"""The search's settings, defined once.

``SearchSettings`` holds what a run's config file sets for a search (its YAML section ``search``
extends it with the game's rule settings and the self-play settings:
``gomoku.training.config.SearchSection``), with the checks every search needs (``problems``).
``SearchConfig`` is what one ``BatchedMCTS`` runs with: the settings plus the switches a caller
picks per use (root noise, tree reuse, virtual loss, the pipeline) and the checks that tie the
settings together. ``SearchConfig.of`` builds one from settings, the one translation between the
two. The rules' own settings are the game's (the rules object is injected already built), which
may check theirs with the same helpers (``problems_of``, ``raise_first``, ``part_of``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Iterable, TypeVar

Check = tuple[str, bool, str]  # a setting's key, whether its value is good, what it must be ("must be >= 1")
T = TypeVar("T")


def problems_of(settings: object, checks: Iterable[Check]) -> list[tuple[str, str]]:
    """Each failed check of ``settings`` as (its key, what is wrong: the message and the value got)."""
    return [(key, f"{message}, got {getattr(settings, key)!r}") for key, ok, message in checks if not ok]


def raise_first(problems: list[tuple[str, str]]) -> None:
    """A ValueError naming the first of ``problems`` ("n_playout must be >= 1, got 0"), if any."""
    for key, message in problems:
        raise ValueError(f"{key} {message}")


def part_of(cls: type[T], settings: T) -> T:
    """``settings`` (a dataclass ``cls`` or one that extends it) as a ``cls``: the extra fields dropped."""
    return cls(**{f.name: getattr(settings, f.name) for f in dataclasses.fields(cls)})


@dataclass(frozen=True)
class SearchSettings:
    n_playout: int = 400  # playouts per search
    c_puct: float = 5.0  # PUCT's exploration weight
    dirichlet_alpha: float = 0.3  # root noise (self-play)
    dirichlet_epsilon: float = 0.25  # the noise's share of the root priors
    leaves_per_step: int = 1  # > 1: several leaves per tree and evaluator call, with virtual loss
    # Gumbel root search (mcts/gumbel.py): > 0 samples this many root moves and narrows them by
    # sequential halving over n_playout playouts (e.g. 16 of 32); a fresh root every search.
    gumbel_k: int = 0

    def problems(self) -> list[tuple[str, str]]:
        """Each bad setting as (its key, what is wrong with it), in the order of the fields."""
        return problems_of(self, (
            ("n_playout", self.n_playout >= 1, "must be >= 1"),
            ("c_puct", self.c_puct > 0, "must be > 0"),
            ("dirichlet_alpha", self.dirichlet_alpha > 0, "must be > 0"),
            ("dirichlet_epsilon", 0 <= self.dirichlet_epsilon <= 1, "must be in [0, 1]"),
            ("leaves_per_step", self.leaves_per_step >= 1, "must be >= 1"),
            # so that the playouts fit the tree's capacity
            ("gumbel_k", 0 <= self.gumbel_k <= self.n_playout // 2, "must be in 0..n_playout // 2"),
        ))

    def settings(self) -> SearchSettings:
        """These settings alone (a subclass's extra fields dropped)."""
        return part_of(SearchSettings, self)


@dataclass(frozen=True)
class SearchConfig(SearchSettings):
    noise: bool = False  # mix Dirichlet noise into the root priors (self-play only)
    reuse_tree: bool = True  # keep the subtree of the moves played between searches
    virtual_loss: float = 1.0  # with leaves_per_step > 1
    # With leaves_per_step > 1: the evaluator runs on a thread of its own while the search gathers
    # the next batch (mcts.search: two cores busy, the same search whatever the threads' timing).
    pipeline: bool = False

    def __post_init__(self) -> None:
        raise_first(self.problems())
        if self.pipeline and (self.leaves_per_step < 2 or self.gumbel_k):
            raise ValueError("pipeline needs leaves_per_step >= 2 and no gumbel_k")
        if self.gumbel_k and self.reuse_tree:
            raise ValueError("gumbel_k needs reuse_tree=False (each Gumbel search starts at a fresh root)")

    @classmethod
    def of(cls, settings: SearchSettings, **switches) -> SearchConfig:
        """The config of a run's ``settings`` (its other fields, the rules' and the run's, dropped):
        a Gumbel root starts fresh (no tree reuse); ``switches`` (noise, ...) set the rest."""
        s = settings.settings()
        return cls(**(dataclasses.asdict(s) | dict(reuse_tree=s.gumbel_k == 0) | switches))
