"""The pipelined search (``SearchConfig.pipeline``): the evaluator on a thread of its own while the
search gathers the next batch. Checked: every playout counted once, every leaf evaluated and
expanded once (a leaf the batch in flight holds is borrowed, not evaluated again), no virtual loss
left, the same tree whatever the evaluator's timing, and the overlap itself."""

import time

import numpy as np
import pytest

from gomoku import Board
from gomoku.players.search import AlphaZeroPlayer
from gomoku.tactics import NO_TACTICS
from gomoku.tactics.geometry import Geometry
from gomoku.tactics.rules import FreestyleRules
from mcts import BatchedMCTS, SearchConfig
from tests.boards import random_midgame
from tests.fakes import ConstantEvaluator, HashEvaluator, parts

DEADLOCK_GUARD_S = 30  # only bounds a broken pipeline's wait; a working one never waits this long


def pipelined(evaluator, board, n=300, leaves=8, **kwargs):
    mcts = BatchedMCTS(evaluator, *parts(board.width, board.height, board.n_in_row, n_playout=n, leaves_per_step=leaves,
                                         pipeline=True, **kwargs))
    return mcts, mcts.search([board])[0]


@pytest.mark.parametrize("rules", [{}, {"forced_moves": True, "vcf": True}])
def test_every_playout_counted_once_and_every_leaf_expanded_once(rules, monkeypatch):
    borrowed = []
    finish = BatchedMCTS._finish

    def counting_finish(self, batch, priors, values):
        borrowed.append(batch.borrowed.size)
        finish(self, batch, priors, values)

    monkeypatch.setattr(BatchedMCTS, "_finish", counting_finish)
    for board in (random_midgame(seed, seed % 13, 5, 5, 4) for seed in range(12)):  # small: descents collide
        evaluator = HashEvaluator()
        mcts, result = pipelined(evaluator, board, n=300, **rules)
        nodes = int(mcts.n_nodes[0])
        assert result.visits.sum() == 299  # the first playout expands the root
        for node in range(nodes):  # a node's visits: the one that made it, then one per edge visit
            edges = mcts.visits[0, node]
            assert edges[edges > 0].sum() + 1 == mcts.node_visits[0, node]
        children = mcts.children[0, :nodes]
        slots = children[children >= 0]
        assert sorted(slots.tolist()) == list(range(1, nodes))  # no node made twice, none lost
        assert evaluator.positions == nodes  # each evaluated position became one node
    assert sum(borrowed) > 0  # leaves of the batch in flight were met again, and borrowed


def test_no_virtual_loss_is_left():
    mcts, _ = pipelined(ConstantEvaluator(0.0), Board(), n=400)  # no line can be made this shallow: every value is 0
    edges = mcts.value_sum[0, : int(mcts.n_nodes[0])]
    assert np.all(edges[edges > -1e8] == 0.0)


def test_the_tree_does_not_depend_on_the_evaluators_timing():
    class Jittery(HashEvaluator):
        def __init__(self, seed):
            super().__init__()
            self.rng = np.random.default_rng(seed)

        def evaluate_batch(self, planes, legal):
            time.sleep(self.rng.uniform(0, 0.002))
            return super().evaluate_batch(planes, legal)

    board = Board.from_moves([40, 41, 31, 49])
    trees = []
    for seed in (0, 1, 2):
        mcts, result = pipelined(Jittery(seed), board, n=200, forced_moves=True, vcf=True, vct=True)
        trees.append((result.visits, mcts.value_sum[0, : int(mcts.n_nodes[0])].copy()))
    for visits, value_sum in trees[1:]:
        np.testing.assert_array_equal(visits, trees[0][0])
        np.testing.assert_array_equal(value_sum, trees[0][1])


def test_the_next_batch_is_gathered_while_the_evaluator_runs():
    """The evaluation of batch k (but the last) waits until the search has gathered batch k + 1:
    the root's edges then hold the descents of k + 1 batches. Without the pipeline the search
    would be waiting for this evaluation, and the condition would never come."""
    leaves, batches = 8, 10
    saw = []

    class Waiting(HashEvaluator):
        def evaluate_batch(self, planes, legal):
            batch = self.calls  # 0: the root's evaluation, then batches 1, 2, ...
            if 1 <= batch < batches:
                guard = time.monotonic() + DEADLOCK_GUARD_S
                while mcts.visits[0, 0].sum() < leaves * (batch + 1) and time.monotonic() < guard:
                    time.sleep(0.0005)
                saw.append(mcts.visits[0, 0].sum() >= leaves * (batch + 1))
            return super().evaluate_batch(planes, legal)

    evaluator = Waiting()
    mcts = BatchedMCTS(evaluator, *parts(9, 9, 5, n_playout=1 + leaves * batches, leaves_per_step=leaves,
                                         pipeline=True))
    mcts.search([Board()])
    assert evaluator.calls == 1 + batches and len(saw) == batches - 1 and all(saw)


def test_pipeline_needs_several_leaves():
    with pytest.raises(ValueError, match="pipeline needs leaves_per_step >= 2"):
        SearchConfig(leaves_per_step=1, pipeline=True)


def test_the_player_pipelines_only_with_several_leaves():
    assert AlphaZeroPlayer(HashEvaluator(), leaves_per_step=8, pipeline=True).config.pipeline
    assert not AlphaZeroPlayer(HashEvaluator(), leaves_per_step=1, pipeline=True).config.pipeline
    player = AlphaZeroPlayer(HashEvaluator(), n_playout=64, leaves_per_step=8, pipeline=True, seed=0)
    board = Board.from_moves([37, 41, 38, 0, 39, 8, 40])  # Black's four on row 5: White must block 36
    assert player.get_action(board) == 36


@pytest.mark.parametrize("pipeline", [False, True])
def test_a_failed_search_leaves_no_half_done_tree(pipeline):
    evaluator = ConstantEvaluator(0.0, fail_at=3)
    mcts = BatchedMCTS(evaluator, *parts(9, 9, 5, n_playout=200, leaves_per_step=8, pipeline=pipeline))
    with pytest.raises(RuntimeError, match="the net failed"):
        mcts.search([Board()])
    result = mcts.search([Board()], n_playout=100, keep_tree=True)[0]  # a fresh tree, not the broken one
    assert result.visits.sum() == 99
    edges = mcts.value_sum[0, : int(mcts.n_nodes[0])]
    assert np.all(edges[edges > -1e8] == 0.0)  # no virtual loss of the failed search's descents


def test_an_error_while_gathering_waits_for_the_evaluation_in_flight():
    """The search's own error (here the rules', on the search's thread) must not return while the
    evaluator still runs: the caller could call it again, from two threads at once."""
    running = []

    class Slow(ConstantEvaluator):
        def evaluate_batch(self, planes, legal):
            running.append(True)
            if self.calls == 2:
                time.sleep(0.2)  # batch 2 is still being evaluated when batch 3's gathering fails
            result = super().evaluate_batch(planes, legal)
            running.pop()
            return result

    class FailingRules(FreestyleRules):
        calls = 0

        def moves_to_search(self, *args, **kwargs):
            FailingRules.calls += 1
            if FailingRules.calls == 4:  # the root's, batch 1's, batch 2's, then batch 3's
                raise RuntimeError("the rules failed")
            return super().moves_to_search(*args, **kwargs)

    config = SearchConfig(n_playout=200, leaves_per_step=8, pipeline=True)
    mcts = BatchedMCTS(Slow(0.0), FailingRules(Geometry(9, 9, 5), NO_TACTICS), config)
    with pytest.raises(RuntimeError, match="the rules failed"):
        mcts.search([Board()])
    assert running == []


def test_under_a_clock_rounds_start_small_and_fit_the_time_left(monkeypatch):
    """The first round is TIMED_ROUND_PLAYOUTS (its pace unknown: a 64-playout round could miss a
    short turn); then rounds are as long as the time left allows at the last round's pace, at
    most TIMED_ROUND_MAX_PLAYOUTS; a round that cannot fit even TIMED_ROUND_PLAYOUTS ends the
    search. A fake clock: every round takes 1 ms."""
    import types

    from gomoku.players import search as players_search

    ticks = iter(np.arange(1000) * 0.001)
    monkeypatch.setattr(players_search, "time", types.SimpleNamespace(perf_counter=lambda: float(next(ticks))))
    left = iter([1.0, 1.0, 1.0, 0.004, 0.1, 0.001, 0.0002])  # seconds left: read twice before the search
    # (the shares of the threat checks), once by the root's expansion (whether the search's stop cut
    # its checks short), then after each round
    player = AlphaZeroPlayer(HashEvaluator(), n_playout=None, leaves_per_step=8, pipeline=True, forced_moves=False,
                             vcf=False, vct=False, check_nodes=0, seed=0)
    player.early_stop = False
    done = []
    player.analyse(Board(), on_progress=lambda result: done.append(result.playouts), time_left=lambda: next(left))
    rounds = np.diff([0, *done]).tolist()
    # 0.004 s left at 1 ms a 16-playout round fits 51 playouts (with the safety margin of 1.25),
    # 0.1 s fits far more than 64, 0.001 s at the pace of 64 fits 51, and 0.0002 s fits 8 only.
    assert rounds == [16, 51, 64, 51]
