"""The training's typed records: the evaluation's verdict, a metrics line, the run's state, the
workers' answers (gomoku/training/evaluation.py, metrics.py, state.py, messages.py)."""

import json

import numpy as np
import pytest
import torch

from gomoku.training.config import EvalSection, load_config
from gomoku.training.evaluation import EvalReport, LadderState, MatchScore, judge
from gomoku.training.backends.messages import EvalGame, EvalResult, EvalTask, SelfPlayResult, SelfPlayTask, Weights, WorkerSpec
from gomoku.training.metrics import IterationRecord
from gomoku.training.state import RunState


def match(opponent: str, wins: int, draws: int, losses: int) -> MatchScore:
    games = tuple(EvalGame(i, r) for i, r in enumerate([1] * wins + [0] * draws + [-1] * losses))
    return MatchScore.of(opponent, games, wins + draws + losses)


def test_a_clean_sweep_raises_the_ladder_and_starts_its_best_score_again():
    e = EvalSection(pure_playouts=1000, pure_step=1000, pure_cap=2500)
    report = judge(e, LadderState(1000, best_score=0.5), match("pure:1000", 10, 0, 0), ())
    assert report.new_best and report.ladder_after == LadderState(2000, best_score=0.0)
    report = judge(e, LadderState(2000), match("pure:2000", 10, 0, 0), ())
    assert report.ladder_after == LadderState(2500, best_score=0.0)  # the cap
    report = judge(e, LadderState(2500), match("pure:2500", 10, 0, 0), ())
    assert report.ladder_after == LadderState(2500, best_score=1.0)  # at the cap it stays
    report = judge(e, LadderState(1000, best_score=0.6), match("pure:1000", 5, 2, 3), ())
    assert not report.new_best and report.ladder_after == LadderState(1000, best_score=0.6)
    assert report.ladder.score == 0.6 and report.to_dict() == {
        "pure_playouts": 1000, "wins": 5, "draws": 2, "losses": 3, "score": 0.6, "new_best": False}


def test_select_by_opponents_keeps_the_best_mean_score_against_them():
    e = EvalSection(opponents=["minimax:2", "random"], select_by="opponents")
    ladder = LadderState(1000, best_score=0.9, best_opponent_score=0.5)
    others = (match("minimax:2", 0, 2, 0), match("random", 1, 0, 1))
    report = judge(e, ladder, match("pure:1000", 0, 0, 2), others)
    assert report.opponents_score == 0.5 and report.new_best  # at least the best so far
    assert report.ladder_after == ladder
    report = judge(e, ladder, match("pure:1000", 0, 0, 2), (match("minimax:2", 2, 0, 0), match("random", 2, 0, 0)))
    assert report.new_best and report.ladder_after.best_opponent_score == 1.0
    data = report.to_dict()
    assert data["opponents_score"] == 1.0 and [o["opponent"] for o in data["opponents"]] == ["minimax:2", "random"]
    assert EvalReport.from_dict(data) == report  # the metrics' eval object reads back into the report


def test_a_metrics_line_round_trips_and_old_lines_load():
    line = {"iteration": 3, "games": 12, "positions": 133, "buffer": 1064, "lr_multiplier": 1.5,
            "selfplay_s": 2.0, "selfplay_positions_per_s": 20.0, "eval": {"pure_playouts": 20, "score": 1.0},
            "wall_time": 9.5, "buffer_added": 296, "a_key_of_the_future": [1, 2]}
    record = IterationRecord.from_json(json.dumps(line))
    assert record.iteration == 3 and record.train.loss is None and record.extra == {"a_key_of_the_future": [1, 2]}
    assert json.loads(record.to_json()) == line and record.get("a_key_of_the_future") == [1, 2]
    assert list(json.loads(record.to_json())) == list(line)  # the keys in the order the pipeline writes them
    old = IterationRecord.from_json('{"iteration": 1, "games": 16, "loss": 4.5}')  # an early run's line
    assert (old.games, old.train.loss, old.wall_time, old.get("wall_time", 0.0)) == (16, 4.5, None, 0.0)
    for bad in ("[1, 2]", '{"games": 4}', "not json"):
        with pytest.raises(ValueError):
            IterationRecord.from_json(bad)


def test_the_run_state_is_the_checkpoints_entries():
    state = RunState(4, 64, 900, 12.5, 2.25, LadderState(2000, 0.5, 0.75))
    payload = state.to_payload()
    assert payload == {"iteration": 4, "games_played": 64, "positions": 900, "wall_time": 12.5, "lr_multiplier": 2.25,
                       "ladder": {"pure_playouts": 2000, "best_score": 0.5, "best_opponent_score": 0.75}}
    assert RunState.from_payload(payload) == state
    old = {**payload, "ladder": {"pure_playouts": 1000, "best_score": 0.3}}  # before eval.opponents
    assert RunState.from_payload(old).ladder == LadderState(1000, 0.3, -1.0)
    assert RunState.start(1000) == RunState(ladder=LadderState(1000))


def test_answers_add_up_and_messages_pickle(tmp_path):
    import pickle

    games = [EvalGame(2, 1), EvalGame(0, -1)]
    assert (EvalResult((games[0],)) + EvalResult((games[1],))).games == (games[1], games[0])  # by index
    assert (SelfPlayResult((), 5) + SelfPlayResult((), 7)).moves == 12
    config = load_config("configs/smoke.yaml")
    weights = Weights(3, {"w": torch.ones(2)})
    for message in (WorkerSpec(config, 1), SelfPlayTask(4, 7), EvalTask((0, 2), "random", 1), weights):
        copy = pickle.loads(pickle.dumps(message))
        assert type(copy) is type(message) and (copy == message if message is not weights else copy.version == 3)
    assert pickle.loads(pickle.dumps(WorkerSpec(config, 1))).config == config  # the config goes as the dataclass


def test_a_worker_loads_a_version_once_and_plays_its_tasks():
    from gomoku.training.backends.worker import Worker
    from nets import NetConfig, build_net

    config = load_config("configs/smoke.yaml", ["selfplay.runtime=torch", "search.n_playout=4",
                                                "eval.n_playout=4", "selfplay.parallel_games=2"])
    worker = Worker(WorkerSpec(config, 0))
    net = build_net(NetConfig(6, 6))
    worker.load(Weights(0, net.state_dict()))
    with torch.no_grad():
        next(net.parameters()).add_(1.0)
    worker.load(Weights(0, net.state_dict()))  # the same version: not loaded again
    first = next(worker.net.net.parameters())
    assert not torch.equal(first, next(net.parameters()))
    worker.load(Weights(1, net.state_dict()))
    assert torch.equal(next(worker.net.net.parameters()), next(net.parameters()))
    played = worker.run(SelfPlayTask(2, seed=3))
    assert len(played.games) >= 2 and played.moves >= sum(len(g.moves) for g in played.games)
    result = worker.run(EvalTask((0, 1), "random", 5))
    assert [g.index for g in result.games] == [0, 1] and all(g.result in (-1, 0, 1) for g in result.games)
    assert np.all(np.concatenate([g.outcomes for g in played.games]) ** 2 <= 1)


def test_the_seed_fixes_the_first_weights(tmp_path):
    """A run's seed sets the net's starting weights too (it was drawn before the seed was set)."""
    from gomoku.training.pipeline import TrainPipeline

    def first_weights(name: str, seed: int) -> dict:
        config = load_config(None, [f"seed={seed}"])
        pipeline = TrainPipeline(config, tmp_path / name, device="cpu", progress=False)
        torch.rand(5)  # whatever the process drew before does not matter
        return {k: v.clone() for k, v in pipeline.net.state_dict().items()}

    a, b, c = first_weights("a", 3), first_weights("b", 3), first_weights("c", 4)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)
