"""The search is game-agnostic (issue 56): it plays tic-tac-toe (tests/tictactoe.py) through the
same rules protocol as five in a row, and mcts/ names no piece of five-in-a-row knowledge."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from gomoku import Board
from mcts import BatchedMCTS, SearchConfig, UniformEvaluator
from tests.tictactoe import RolloutEvaluator, TicTacToe, TicTacToeRules

ROOT = Path(__file__).resolve().parents[1]
FIVE_IN_A_ROW_WORDS = re.compile(r"n_in_row|FOUR|THREE|vcf|vct|DIRECTIONS")  # issue 56's grep
PLAYOUTS = 400  # enough for a win or a block in one
GAME_PLAYOUTS = 2000  # enough to play a whole game without a blunder (12 seeds of the rollouts tried)
WIN = TicTacToe([0, 3, 1, 4])  # X (first) holds 0 and 1, O holds 3 and 4; X to move wins at 2
BLOCK = TicTacToe([0, 4, 1])  # X holds 0 and 1; O to move must take 2


def search(n_playout: int = PLAYOUTS, n_trees: int = 1) -> BatchedMCTS:
    return BatchedMCTS(RolloutEvaluator(np.random.default_rng(1)), TicTacToeRules(), SearchConfig(n_playout=n_playout),
                       n_trees=n_trees, rng=np.random.default_rng(0))


def test_it_takes_the_winning_move():
    result = search().search([WIN])[0]
    assert result.best_move() == 2 and result.value > 0


def test_it_blocks_the_opponents_line():
    assert search().search([BLOCK])[0].best_move() == 2


def test_several_trees_in_one_batch_find_the_win_and_the_block():
    assert [result.best_move() for result in search(n_trees=2).search([WIN, BLOCK])] == [2, 2]


def test_a_uniform_evaluator_finds_the_win_by_the_terminal_values_alone():
    result = BatchedMCTS(UniformEvaluator(), TicTacToeRules(), SearchConfig(n_playout=PLAYOUTS)).search([WIN])[0]
    assert result.best_move() == 2


def test_a_game_against_itself_is_a_draw():
    game, player = TicTacToe(), search(GAME_PLAYOUTS)
    while not game.over():
        game.moves.append(player.search([game])[0].best_move())
    assert game.winner() == 0 and len(game.moves) == 9


def test_the_rules_refuse_a_game_of_another_kind():
    with pytest.raises(ValueError, match="tic-tac-toe rules cannot search a Board"):
        search().search([Board()])


def test_mcts_names_no_piece_of_five_in_a_row():
    found = [f"{path.relative_to(ROOT)}:{number}" for path in sorted((ROOT / "mcts").rglob("*.py"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if FIVE_IN_A_ROW_WORDS.search(line)]
    assert found == []
    assert FIVE_IN_A_ROW_WORDS.search("rules.vcf_calls") and not FIVE_IN_A_ROW_WORDS.search("the rules")  # it bites
