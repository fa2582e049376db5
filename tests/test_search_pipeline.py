"""The pipelined search (``SearchConfig.pipeline``): the evaluator on a thread of its own while the
search gathers the next batch. Checked: every playout counted once, every leaf evaluated and
expanded once (a leaf the batch in flight holds is borrowed, not evaluated again), no virtual loss
left, the same tree whatever the evaluator's timing, and the overlap itself."""

import time

import numpy as np
import pytest

from gomoku import Board
from gomoku.players.search import AlphaZeroPlayer
from mcts import BatchedMCTS, SearchConfig
from tests.fakes import HashEvaluator

DEADLOCK_GUARD_S = 30  # only bounds a broken pipeline's wait; a working one never waits this long


def pipelined(evaluator, board, n=300, leaves=8, **kwargs):
    config = SearchConfig(n_playout=n, leaves_per_step=leaves, pipeline=True, **kwargs)
    mcts = BatchedMCTS(evaluator, board.width, board.height, board.n_in_row, config)
    return mcts, mcts.search([board])[0]


def seeded_positions(width, height, n_in_row, count, seed):
    """``count`` positions of random games on that board (game not over), of 0 to 12 stones."""
    rng = np.random.default_rng(seed)
    positions = []
    while len(positions) < count:
        board = Board(width, height, n_in_row)
        for move in rng.permutation(width * height)[: rng.integers(0, 13)].tolist():
            board.do_move(move)
            if board.game_end()[0]:
                break
        else:
            positions.append(board)
    return positions


@pytest.mark.parametrize("rules", [{}, {"forced_moves": True, "vcf": True}])
def test_every_playout_counted_once_and_every_leaf_expanded_once(rules, monkeypatch):
    borrowed = []
    finish = BatchedMCTS._finish

    def counting_finish(self, batch, priors, values):
        borrowed.append(batch.borrowed.size)
        finish(self, batch, priors, values)

    monkeypatch.setattr(BatchedMCTS, "_finish", counting_finish)
    for board in seeded_positions(5, 5, 4, 12, seed=7):  # a small board: the descents collide
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
    class Zero:
        def evaluate_batch(self, planes, legal):
            return legal / legal.sum(1, keepdims=True), np.zeros(len(planes))

    mcts, _ = pipelined(Zero(), Board(), n=400)  # no line can be made this shallow: every value is 0
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
    config = SearchConfig(n_playout=1 + leaves * batches, leaves_per_step=leaves, pipeline=True)
    mcts = BatchedMCTS(evaluator, 9, 9, 5, config)
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
