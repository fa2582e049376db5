"""The five-in-a-row rules' search settings, defined once.

``TacticsSettings`` holds what a run's config file sets for them (they sit in its YAML section
``search`` beside the search's own settings: ``gomoku.training.config.SearchSection`` extends
both), with the checks each needs (``problems``). ``TacticsConfig`` is what one ``FreestyleRules``
runs with: the settings plus the VCT leaf checks a caller picks per use, and the checks that tie
them together. ``TacticsConfig.of`` builds one from settings.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from gomoku.tactics.threats import DEFAULT_MAX_NODES
from gomoku.tactics.vct import DEFAULT_VCT_NODES
from mcts.config import part_of, problems_of, raise_first

DEFAULT_VCF_NODES = DEFAULT_MAX_NODES  # the VCF solver's node budget per call (see gomoku.tactics.threats)
# Which solvers run the rules: the compiled kernel (gomoku.tactics.compiled, numba) or the
# pure-Python reference it is tested against (the same answers, 10-50x slower: docs/threats.md).
COMPILED, REFERENCE = "compiled", "reference"
TACTICS_KINDS = (COMPILED, REFERENCE)


@dataclass(frozen=True)
class TacticsSettings:
    forced_moves: bool = False  # value wins in one exactly, search only blocks of a four (gomoku.tactics.rules)
    vcf: bool = False  # with forced_moves: value a VCF exactly, defend the root (gomoku.tactics.threats)
    vcf_nodes: int = DEFAULT_VCF_NODES  # node budget of one VCF solver call
    vct: bool = False  # with vcf: the root plays its VCT, stops the opponent's (gomoku.tactics.vct)
    vct_nodes: int = DEFAULT_VCT_NODES  # node budget of one VCT solver call
    tactics: str = COMPILED  # the solvers: compiled (numba) or reference (pure Python); same answers

    def problems(self) -> list[tuple[str, str]]:
        """Each bad setting as (its key, what is wrong with it), in the order of the fields."""
        return problems_of(self, (
            ("vcf_nodes", self.vcf_nodes >= 1, "must be >= 1"),
            ("vct_nodes", self.vct_nodes >= 1, "must be >= 1"),
            ("tactics", self.tactics in TACTICS_KINDS, f"must be one of {', '.join(TACTICS_KINDS)}"),
        ))

    def tactics_settings(self) -> TacticsSettings:
        """These settings alone (a subclass's extra fields dropped)."""
        return part_of(TacticsSettings, self)


@dataclass(frozen=True)
class TacticsConfig(TacticsSettings):
    vct_leaf_depth: int = 0  # >= 2, with vct: leaves down to this depth are valued won on a VCT (gomoku.tactics.rules)

    def __post_init__(self) -> None:
        raise_first(self.problems())
        if self.vcf and not self.forced_moves:
            raise ValueError("vcf needs forced_moves")
        if self.vct and not self.vcf:
            raise ValueError("vct needs vcf")
        if self.vct_leaf_depth < 0 or (self.vct_leaf_depth and not self.vct):
            raise ValueError(f"vct_leaf_depth must be >= 0 and needs vct, got {self.vct_leaf_depth}")

    @classmethod
    def of(cls, settings: TacticsSettings, **switches) -> TacticsConfig:
        """The config of a run's ``settings``: a rule whose prerequisite is off is off (vcf without
        forced_moves, vct without vcf); ``switches`` (vct_leaf_depth) set the rest."""
        s = settings.tactics_settings()
        vcf = s.vcf and s.forced_moves
        return cls(**(dataclasses.asdict(s) | dict(vcf=vcf, vct=s.vct and vcf) | switches))
