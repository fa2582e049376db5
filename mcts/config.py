"""The search's settings, defined once.

``SearchSettings`` holds what a run's config file sets for a search (its YAML section ``search``
extends it with the self-play settings: ``gomoku.training.config.SearchSection``), with the checks
every search needs (``problems``). ``SearchConfig`` is what one ``BatchedMCTS`` runs with: the
settings plus the switches a caller picks per use (root noise, tree reuse, virtual loss, the VCT
leaf checks) and the checks that tie the settings together. ``SearchConfig.of`` builds one from
settings, the one translation between the two.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from mcts.threats import DEFAULT_MAX_NODES
from mcts.vct import DEFAULT_VCT_NODES

DEFAULT_VCF_NODES = DEFAULT_MAX_NODES  # the VCF solver's node budget per call (see mcts.threats)


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
    forced_moves: bool = False  # value wins in one exactly, search only blocks of a four (mcts.rules)
    vcf: bool = False  # with forced_moves: value a VCF exactly, defend the root (mcts.rules, mcts.threats)
    vcf_nodes: int = DEFAULT_VCF_NODES  # node budget of one VCF solver call
    vct: bool = False  # with vcf: the root plays its VCT, stops the opponent's (mcts.rules, mcts.vct)
    vct_nodes: int = DEFAULT_VCT_NODES  # node budget of one VCT solver call

    def problems(self) -> list[tuple[str, str]]:
        """Each bad setting as (its key, what is wrong with it), in the order of the fields."""
        checks = (
            ("n_playout", self.n_playout >= 1, "must be >= 1"),
            ("c_puct", self.c_puct > 0, "must be > 0"),
            ("dirichlet_alpha", self.dirichlet_alpha > 0, "must be > 0"),
            ("dirichlet_epsilon", 0 <= self.dirichlet_epsilon <= 1, "must be in [0, 1]"),
            ("leaves_per_step", self.leaves_per_step >= 1, "must be >= 1"),
            # so that the playouts fit the tree's capacity
            ("gumbel_k", 0 <= self.gumbel_k <= self.n_playout // 2, "must be in 0..n_playout // 2"),
            ("vcf_nodes", self.vcf_nodes >= 1, "must be >= 1"),
            ("vct_nodes", self.vct_nodes >= 1, "must be >= 1"),
        )
        return [(key, f"{message}, got {getattr(self, key)!r}") for key, ok, message in checks if not ok]

    def settings(self) -> SearchSettings:
        """These settings alone (a subclass's extra fields dropped)."""
        names = [f.name for f in dataclasses.fields(SearchSettings)]
        return SearchSettings(**{name: getattr(self, name) for name in names})


@dataclass(frozen=True)
class SearchConfig(SearchSettings):
    noise: bool = False  # mix Dirichlet noise into the root priors (self-play only)
    reuse_tree: bool = True  # keep the subtree of the moves played between searches
    virtual_loss: float = 1.0  # with leaves_per_step > 1
    vct_leaf_depth: int = 0  # >= 2, with vct: leaves down to this depth are valued won on a VCT (mcts.rules)
    # With leaves_per_step > 1: the evaluator runs on a thread of its own while the search gathers
    # the next batch (mcts.search: two cores busy, the same search whatever the threads' timing).
    pipeline: bool = False

    def __post_init__(self) -> None:
        for key, message in self.problems():
            raise ValueError(f"{key} {message}")
        if self.vcf and not self.forced_moves:
            raise ValueError("vcf needs forced_moves")
        if self.vct and not self.vcf:
            raise ValueError("vct needs vcf")
        if self.vct_leaf_depth < 0 or (self.vct_leaf_depth and not self.vct):
            raise ValueError(f"vct_leaf_depth must be >= 0 and needs vct, got {self.vct_leaf_depth}")
        if self.pipeline and (self.leaves_per_step < 2 or self.gumbel_k):
            raise ValueError("pipeline needs leaves_per_step >= 2 and no gumbel_k")
        if self.gumbel_k and self.reuse_tree:
            raise ValueError("gumbel_k needs reuse_tree=False (each Gumbel search starts at a fresh root)")

    @classmethod
    def of(cls, settings: SearchSettings, **switches) -> SearchConfig:
        """The config of a run's ``settings``: a rule whose prerequisite is off is off (vcf without
        forced_moves, vct without vcf); a Gumbel root starts fresh (no tree reuse); ``switches``
        (noise, vct_leaf_depth, ...) set the rest."""
        s = settings.settings()
        vcf = s.vcf and s.forced_moves
        fields = dataclasses.asdict(s) | dict(vcf=vcf, vct=s.vct and vcf, reuse_tree=s.gumbel_k == 0)
        return cls(**(fields | switches))
