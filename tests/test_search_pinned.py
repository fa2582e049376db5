"""Characterization tests: the search's and the classical players' exact behaviour, pinned.

The figures below were produced by the code of commit 8a42220 (before the search was cut into
tree, rules and root selectors, issue 26) and pin it, so that a refactor can show it changed
nothing: the visit counts, the chosen move and the root value of ``BatchedMCTS`` on fixed
positions under each configuration it has (classic, forced moves + VCF, VCT with leaf checks,
several leaves per step, Dirichlet noise, a Gumbel root, several trees in one batch, a tree
reused across two moves), with a deterministic evaluator and fixed seeds; and seeded games of
the classical players (their move lists). A figure may change only with a deliberate change of
behaviour; then rerun ``PYTHONPATH=$PWD python tests/test_search_pinned.py`` and paste its output
into PINNED, saying why in the commit.

Visit arrays are pinned by a digest (sha256 of the counts as int64), floats rounded to 9 digits.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from gomoku.matches.games import play_game
from gomoku.game.board import Board
from gomoku.players import make_player, parse_point
from mcts import BatchedMCTS
from tests.boards import position
from tests.fakes import HashEvaluator, parts


POSITIONS = {
    "empty": ((), ()),
    "opening": (("E5", "F6"), ("E6",)),  # white to move
    "black_four": (("B5", "C5", "D5", "E5"), ("B6", "C6", "D6")),  # white must block A5 or F5
    "open_three": (("D5", "E5", "F5"), ("D6", "E6")),  # white to move against an open three
    "vcf": (("C5", "D5", "E5", "F6", "F7"), ("B5", "A9", "I9", "A1")),  # white to move; black: VCF-rich
    "middle": (("E5", "F6", "D4", "G4", "E7", "C6"), ("E6", "F5", "D6", "G6", "F4", "C3")),
}

CONFIGS = {
    "classic": dict(n_playout=120),
    "forced_vcf": dict(n_playout=120, forced_moves=True, vcf=True),
    "vct": dict(n_playout=120, forced_moves=True, vcf=True, vct=True, vct_leaf_depth=2),
    "leaves4": dict(n_playout=120, forced_moves=True, vcf=True, leaves_per_step=4),
    "noise": dict(n_playout=120, forced_moves=True, noise=True),
    "gumbel": dict(n_playout=64, forced_moves=True, vcf=True, gumbel_k=8, reuse_tree=False),
}


def digest(values: np.ndarray) -> str:
    return hashlib.sha256(np.asarray(values, dtype=np.int64).tobytes()).hexdigest()[:16]


def summary(result) -> tuple:
    out = (digest(result.visits), result.best_move(), round(result.value, 9), result.playouts)
    if result.improved is not None:
        out += (result.selected, digest(np.round(result.improved * 1e9)))
    return out


def board(name: str) -> Board:
    """The position ``name`` of POSITIONS (points like "E5" turned into (row, col) for ``position``)."""
    xs, os_ = ([divmod(parse_point(Board(), p), 9) for p in points] for points in POSITIONS[name])
    return position(xs, os_)


def single(config: str, name: str) -> tuple:
    search = BatchedMCTS(HashEvaluator(), *parts(9, 9, 5, **CONFIGS[config]), rng=np.random.default_rng(7))
    return summary(search.search([board(name)])[0])


def batched(config: str) -> list[tuple]:
    """All positions in one search of several trees (the batched descent and backup)."""
    names = list(POSITIONS)
    search = BatchedMCTS(HashEvaluator(), *parts(9, 9, 5, **CONFIGS[config]), n_trees=len(names),
                         rng=np.random.default_rng(11))
    return [summary(r) for r in search.search([board(n) for n in names])]


def reused(config: str) -> list[tuple]:
    """Search, play the best move and a reply, search again on the same (reused) tree."""
    search = BatchedMCTS(HashEvaluator(), *parts(9, 9, 5, **CONFIGS[config]), rng=np.random.default_rng(3))
    game = board("opening")
    first = search.search([game])[0]
    game.do_move(first.best_move())
    game.do_move(min(game.availables))
    return [summary(first), summary(search.search([game])[0])]


def classical_games() -> list[tuple]:
    """Seeded classical games: (winner, digest of the moves), two per pairing, colours swapped."""
    out = []
    for first, second in (("minimax:2", "ab:2"), ("heuristic", "minimax:1"), ("pure:60", "heuristic")):
        for swap in (False, True):
            a, b = make_player(first, seed=5), make_player(second, seed=6)
            record = play_game(*((b, a) if swap else (a, b)))
            out.append((record.winner, digest(record.moves)))
    return out


def current() -> dict:
    pinned = {f"{c}/{n}": single(c, n) for c in CONFIGS for n in POSITIONS}
    pinned.update({f"batched/{c}": batched(c) for c in ("classic", "vct", "leaves4", "gumbel")})
    pinned.update({f"reused/{c}": reused(c) for c in ("classic", "forced_vcf")})
    pinned["classical_games"] = classical_games()
    return pinned


PINNED = {'classic/empty': ('080bd79cfe1d40e9', 9, 0.390920988, 120),
 'classic/opening': ('a5986c483747020a', 16, 0.333763532, 120),
 'classic/black_four': ('28f22eda54244671', 34, 0.480053513, 120),
 'classic/open_three': ('acd05104ec065304', 11, 0.218074159, 120),
 'classic/vcf': ('5b885b72c92afc2d', 14, 0.302265275, 120),
 'classic/middle': ('cf53956e8bb330b4', 17, 0.232403622, 120),
 'forced_vcf/empty': ('080bd79cfe1d40e9', 9, 0.390920988, 120),
 'forced_vcf/opening': ('a5986c483747020a', 16, 0.333763532, 120),
 'forced_vcf/black_four': ('f3f8a791d5b76350', 36, -1.0, 120),
 'forced_vcf/open_three': ('2a8cfc558d861c56', 42, -0.478975571, 120),
 'forced_vcf/vcf': ('b87fd64dd51e1447', 14, 0.406410411, 120),
 'forced_vcf/middle': ('e693419688e30ff8', 25, 0.619318782, 120),
 'vct/empty': ('080bd79cfe1d40e9', 9, 0.390920988, 120),
 'vct/opening': ('a5986c483747020a', 16, 0.333763532, 120),
 'vct/black_four': ('f3f8a791d5b76350', 36, -1.0, 120),
 'vct/open_three': ('2a8cfc558d861c56', 42, -0.478975571, 120),
 'vct/vcf': ('fd05ef881d8c631c', 14, -0.045441967, 120),
 'vct/middle': ('e693419688e30ff8', 25, 0.619318782, 120),
 'leaves4/empty': ('87c88571de38fa4b', 9, 0.331745651, 120),
 'leaves4/opening': ('da6624abfde55700', 16, 0.268997955, 120),
 'leaves4/black_four': ('f3f8a791d5b76350', 36, -1.0, 120),
 'leaves4/open_three': ('8f387a1cea317712', 42, -0.450901984, 120),
 'leaves4/vcf': ('b87fd64dd51e1447', 14, 0.414698352, 120),
 'leaves4/middle': ('3025682cb8493945', 25, 0.606941799, 120),
 'noise/empty': ('5132b087b4aee844', 12, 0.522985567, 120),
 'noise/opening': ('951134c5e269230a', 19, 0.3961019, 120),
 'noise/black_four': ('bd331f2ce7316b0c', 36, -1.0, 120),
 'noise/open_three': ('278a1e9afee1a334', 17, 0.01317013, 120),
 'noise/vcf': ('1d9be472546631a2', 14, 0.404984549, 120),
 'noise/middle': ('659bee967a6e9f0a', 12, 0.226908903, 120),
 'gumbel/empty': ('097fc05fb791b743', 37, 0.041256235, 63, 23, '0156fd8a59477b6b'),
 'gumbel/opening': ('32d2b3ed1f1be438', 37, 0.507479574, 63, 6, '151d4e6c6f280d7c'),
 'gumbel/black_four': ('2e631dbfdd7513e9', 36, -1.0, 63, 36, 'fcb5ffef01ba0a1b'),
 'gumbel/open_three': ('236bb4c178e2a9cd', 42, -0.423318001, 63, 42, '1b8e15356ca4bd0f'),
 'gumbel/vcf': ('bb7cb29f265d03c3', 14, 0.142056168, 63, 14, '3e956f91efeb3a27'),
 'gumbel/middle': ('969ffc51eddbb3ad', 23, 0.371719721, 63, 23, 'a4476e78f143e5a9'),
 'batched/classic': [('080bd79cfe1d40e9', 9, 0.390920988, 120),
                     ('a5986c483747020a', 16, 0.333763532, 120),
                     ('28f22eda54244671', 34, 0.480053513, 120),
                     ('acd05104ec065304', 11, 0.218074159, 120),
                     ('5b885b72c92afc2d', 14, 0.302265275, 120),
                     ('cf53956e8bb330b4', 17, 0.232403622, 120)],
 'batched/vct': [('080bd79cfe1d40e9', 9, 0.390920988, 120),
                 ('a5986c483747020a', 16, 0.333763532, 120),
                 ('f3f8a791d5b76350', 36, -1.0, 120),
                 ('2a8cfc558d861c56', 42, -0.478975571, 120),
                 ('fd05ef881d8c631c', 14, -0.045441967, 120),
                 ('e693419688e30ff8', 25, 0.619318782, 120)],
 'batched/leaves4': [('87c88571de38fa4b', 9, 0.331745651, 120),
                     ('da6624abfde55700', 16, 0.268997955, 120),
                     ('f3f8a791d5b76350', 36, -1.0, 120),
                     ('8f387a1cea317712', 42, -0.450901984, 120),
                     ('b87fd64dd51e1447', 14, 0.414698352, 120),
                     ('3025682cb8493945', 25, 0.606941799, 120)],
 'batched/gumbel': [('1b0e552004ccf274', 73, -0.024457395, 63, 73, 'e1fb203ba20ed3af'),
                    ('3b43af16f4fe158b', 19, 0.403749182, 63, 19, 'd96b3c1b3760fa15'),
                    ('2e631dbfdd7513e9', 36, -1.0, 63, 36, 'fcb5ffef01ba0a1b'),
                    ('236bb4c178e2a9cd', 42, -0.423318001, 63, 42, '1b8e15356ca4bd0f'),
                    ('091be83192f48a86', 14, 0.142056168, 63, 14, '3e956f91efeb3a27'),
                    ('eb1f93489d382cf3', 17, 0.222375894, 63, 17, '944e1b0bb6d484d5')],
 'reused/classic': [('a5986c483747020a', 16, 0.333763532, 120), ('eb777820ab326ba8', 1, 0.724459273, 120)],
 'reused/forced_vcf': [('a5986c483747020a', 16, 0.333763532, 120), ('eb777820ab326ba8', 1, 0.724459273, 120)],
 'classical_games': [(-1, '30a528b7a7fdb737'),
                     (-1, '9a01cc8d70cee866'),
                     (-1, '5f5e4de778de4519'),
                     (1, '0f3a57e3a2e4fb8a'),
                     (2, 'f00cb69e04b00152'),
                     (1, '140572f9325ef22e')]}


@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("name", list(POSITIONS))
def test_single_tree_search_is_unchanged(config, name):
    assert single(config, name) == PINNED[f"{config}/{name}"]


@pytest.mark.parametrize("config", ["classic", "vct", "leaves4", "gumbel"])
def test_batched_search_is_unchanged(config):
    assert batched(config) == PINNED[f"batched/{config}"]


@pytest.mark.parametrize("config", ["classic", "forced_vcf"])
def test_reused_tree_is_unchanged(config):
    assert reused(config) == PINNED[f"reused/{config}"]


def test_classical_games_are_unchanged():
    assert classical_games() == PINNED["classical_games"]


if __name__ == "__main__":
    import pprint

    pprint.pprint(current(), width=120, sort_dicts=False)
