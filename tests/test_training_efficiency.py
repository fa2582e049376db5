"""The knobs of learning per CPU-second: sample reuse, playout cap randomization, evaluation
against classical opponents and best-model selection on it."""

import json

import numpy as np
import pytest

from gomoku import Board
from gomoku.training.config import ConfigError, load_config
from gomoku.training.pipeline import TrainPipeline
from gomoku.training.selfplay import SelfPlayRunner
from mcts import UniformEvaluator


def test_sample_reuse_sets_the_number_of_updates(tmp_path):
    # 16 new positions x 8 symmetries = 128 samples; batch 64 x 2 epochs = 128 sample passes per update
    config = load_config("configs/smoke.yaml", ["train.sample_reuse=3", "train.batch_size=64", "train.epochs=2"])
    pipeline = TrainPipeline(config, tmp_path / "run", device="cpu", progress=False)
    assert pipeline._n_updates(0, 4, samples=128) == 3
    assert pipeline._n_updates(0, 4, samples=8) == 1  # at least one update
    classic = load_config("configs/smoke.yaml", ["train.updates_per_game=0.5"])
    assert TrainPipeline(classic, tmp_path / "run2", device="cpu", progress=False)._n_updates(0, 4, 128) == 2


def test_a_fraction_of_an_update_a_game_carries_over(tmp_path):
    config = load_config("configs/smoke.yaml", ["train.updates_per_game=0.4", "selfplay.games_per_iteration=1"])
    pipeline = TrainPipeline(config, tmp_path / "run", device="cpu", progress=False)
    per_iteration = [pipeline._n_updates(games, games + 1, 128) for games in range(10)]
    assert per_iteration == [0, 0, 1, 0, 1, 0, 0, 1, 0, 1]  # 4 updates in 10 games, not 0 (round(0.4) each)
    config = load_config("configs/smoke.yaml", ["train.updates_per_game=0.29"])
    assert TrainPipeline(config, tmp_path / "run2", device="cpu", progress=False)._n_updates(0, 100, 128) == 29


def _play(overrides: list[str], games: int = 6):
    config = load_config("configs/smoke.yaml", overrides)
    runner = SelfPlayRunner(UniformEvaluator(), config.board, config.search, parallel_games=3,
                            rng=np.random.default_rng(1))
    return runner, runner.play(games).games


def test_playout_cap_randomization_records_only_full_searches():
    runner, games = _play(["search.fast_playouts=4", "search.full_search_prob=0.4"])
    recorded = sum(len(g.states) for g in games)
    moves = sum(len(g.moves) for g in games)
    assert 0 < recorded < moves  # some moves were fast searches, not recorded
    for game in games:
        assert len(game.states) == len(game.probs) == len(game.outcomes)
        final = Board.from_moves(game.moves, 6, 6, 4)
        assert final.game_end() == (True, game.winner)
        # Each recorded position is one of the game's positions, with its outcome for the player to move.
        positions = {}
        replay = Board(6, 6, 4)
        for move in game.moves:
            positions[replay.current_state().tobytes()] = replay.current_player
            replay.do_move(move)
        for state, outcome in zip(game.states, game.outcomes):
            player = positions[state.tobytes()]
            expected = 0.0 if game.winner == -1 else (1.0 if player == game.winner else -1.0)
            assert outcome == expected


def test_playout_cap_randomization_off_records_every_move():
    _, games = _play(["search.fast_playouts=0"])
    assert all(len(g.states) == len(g.moves) for g in games)


@pytest.mark.parametrize("override", ["search.fast_playouts=16", "search.full_search_prob=0",
                                      "eval.select_by=opponents", "eval.opponents=[az:x.pt:10]",
                                      "eval.opponents=minimax:2"])
def test_bad_efficiency_settings_are_named(override):
    with pytest.raises(ConfigError, match=override.split("=")[0].split(".")[1]):
        load_config("configs/smoke.yaml", [override])


def test_evaluation_against_opponents_picks_the_best_model(tmp_path):
    run = tmp_path / "run"
    config = load_config("configs/smoke.yaml", ["train.game_batch_num=8", "eval.opponents=[random, minimax:1]",
                                                 "eval.select_by=opponents"])
    TrainPipeline(config, run, device="cpu", progress=False).run()
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    evaluation = records[-1]["eval"]
    assert [o["opponent"] for o in evaluation["opponents"]] == ["random", "minimax:1"]
    for result in evaluation["opponents"]:
        assert result["wins"] + result["draws"] + result["losses"] == config.eval.games
        assert result["score"] == (result["wins"] + 0.5 * result["draws"]) / config.eval.games
    assert evaluation["opponents_score"] == np.mean([o["score"] for o in evaluation["opponents"]])
    assert evaluation["new_best"]  # the first evaluation is always the best so far
    assert (run / "best.pt").exists()


def test_new_opponents_on_resume_forget_the_best_score_against_the_old(tmp_path):
    from gomoku.training.evaluation import NO_SCORE

    config = load_config("configs/smoke.yaml", ["eval.check_freq=4", "eval.opponents=[random]", "eval.games=2",
                                                "eval.select_by=opponents", "train.game_batch_num=4"])
    TrainPipeline(config, tmp_path, device="cpu", progress=False).run()
    same = TrainPipeline(None, tmp_path, device="cpu", resume=True, progress=False)
    best = same.state.ladder.best_opponent_score
    same.close()
    assert best != NO_SCORE  # an evaluation against random gave a best score
    changed = TrainPipeline(None, tmp_path, device="cpu", resume=True, progress=False,
                            overrides=["eval.opponents=[heuristic]"])
    changed.close()
    assert changed.state.ladder.best_opponent_score == NO_SCORE  # not compared across opponents
