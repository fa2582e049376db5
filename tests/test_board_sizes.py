"""Boards other than 9x9: the pooled head plays any size (nets.model), its model files and ONNX
exports load for every size it plays, an fc model refuses other sizes, a 15x15 run trains,
resumes and evaluates, and the engine plays 15x15 through the protocol."""

import json

import numpy as np
import pytest
import torch

from gomoku import Board
from gomoku.pbrain.engine import PbrainEngine
from gomoku.pbrain.loader import EngineOptions
from gomoku.players import make_player
from gomoku.training.config import ConfigError, load_config
from gomoku.training.pipeline import TrainPipeline
from mcts.evaluators import CachedEvaluator
from nets import CheckpointError, NetConfig, NetEvaluator, build_net, load_net, save_model
from nets.model import MAX_BOARD_SIDE, MIN_POOLED_SIDE
from nets.onnx_evaluator import OnnxEvaluator
from nets.onnx_export import check_onnx, export_in_memory, random_planes
from tests.fakes import load_script, metrics_records

SIDES = (9, 15, 20)


def evaluate_script(*args: str) -> int:
    """scripts/evaluate.py's main, run in this process (no second interpreter to start)."""
    return load_script("evaluate").main(list(args))


def _pooled(arch: str = "conv3", side: int = 9) -> torch.nn.Module:
    torch.manual_seed(0)
    return build_net(NetConfig(side, side, arch, channels=8, blocks=1, head="pooled")).eval()


def _random_legal(rng: np.random.Generator, batch: int, moves: int) -> np.ndarray:
    legal = rng.random((batch, moves)) < 0.5
    legal[:, 0] = True  # at least one legal move a row
    return legal


@pytest.mark.parametrize("arch", ["conv3", "resnet"])
def test_pooled_heads_shapes_and_legal_masking_on_several_sizes(arch):
    net = _pooled(arch)
    evaluator = NetEvaluator(net)
    rng = np.random.default_rng(1)
    for side in SIDES:
        planes = random_planes(net.config, 5, rng, (side, side))
        with torch.inference_mode():
            log_policy, value = net(torch.from_numpy(planes))
        assert log_policy.shape == (5, side * side) and value.shape == (5,)
        np.testing.assert_allclose(log_policy.exp().sum(dim=1).numpy(), 1.0, rtol=1e-5)
        assert bool((value.abs() <= 1).all())
        legal = _random_legal(rng, 5, side * side)
        priors, values = evaluator.evaluate_batch(planes, legal)
        assert priors.shape == (5, side * side) and values.shape == (5,)
        assert not priors[~legal].any()
        np.testing.assert_allclose(priors.sum(axis=1), 1.0, rtol=1e-6)
        # On the legal moves the priors are the net's policy, renormalised.
        policy = log_policy.exp().numpy() * legal
        np.testing.assert_allclose(priors, policy / policy.sum(axis=1, keepdims=True), rtol=1e-5)


def test_pooled_policy_follows_the_board_one_logit_per_point():
    """Moving a lone stone moves the policy with it (away from the edges: padding sees the border)."""
    net = _pooled()
    planes = np.zeros((2, 4, 15, 15), dtype=np.float32)
    planes[0, 0, 5, 5] = planes[1, 0, 8, 9] = 1.0
    with torch.inference_mode():
        log_policy = net(torch.from_numpy(planes))[0].numpy().reshape(2, 15, 15)
    np.testing.assert_allclose(log_policy[0, 3:8, 3:8] - log_policy[0, 3, 3],
                               log_policy[1, 6:11, 7:12] - log_policy[1, 6, 7], atol=1e-5)


def test_net_config_plays_and_rejects_unknown_heads():
    fc, pooled = NetConfig(9, 9), NetConfig(15, 15, head="pooled")
    assert fc.plays(9, 9) and not fc.plays(15, 15) and not fc.plays(9, 8)
    assert all(pooled.plays(w, h) for w in (MIN_POOLED_SIDE, 9, 15, 20, MAX_BOARD_SIDE) for h in (9, 15))
    assert not pooled.plays(MIN_POOLED_SIDE - 1, 9) and not pooled.plays(15, MAX_BOARD_SIDE + 1)
    assert NetConfig(4, 4, head="pooled").plays(4, 4)  # its own board, even below the smallest
    assert NetConfig().head == "fc"
    with pytest.raises(ValueError, match=r"^net.head must be one of \('fc', 'pooled'\), got 'global'$"):
        NetConfig(head="global")
    with pytest.raises(ConfigError, match="^net.head: must be fc or pooled$"):
        load_config("configs/smoke.yaml", ["net.head=global"])


def test_one_model_file_two_sizes_torch_and_onnxruntime_agree(tmp_path):
    net = _pooled("resnet")
    save_model(tmp_path / "m.pt", net)
    loaded = load_net(tmp_path / "m.pt", 15, 15)  # trained "on" 9x9, loaded for 15x15
    exported = export_in_memory(loaded, n_in_row=5)
    assert [size for size in check_onnx(loaded, exported).sizes] == [(9, 9), (15, 15)]
    onnx_evaluator, torch_evaluator = OnnxEvaluator(exported), NetEvaluator(loaded)
    rng = np.random.default_rng(2)
    for side in (9, 15):
        planes = random_planes(net.config, 6, rng, (side, side))
        legal = _random_legal(rng, 6, side * side)
        onnx_priors, onnx_values = onnx_evaluator.evaluate_batch(planes, legal)
        torch_priors, torch_values = torch_evaluator.evaluate_batch(planes, legal)
        np.testing.assert_allclose(onnx_priors, torch_priors, atol=1e-5)
        np.testing.assert_allclose(onnx_values, torch_values, atol=1e-5)


def test_fc_model_refuses_another_size_with_a_clear_error(tmp_path, capsys):
    save_model(tmp_path / "fc.pt", build_net(NetConfig(9, 9)))
    with pytest.raises(CheckpointError, match=r"fc\.pt is for a 9x9 board, not 15x15$"):
        load_net(tmp_path / "fc.pt", 15, 15)
    player = make_player(f"az:{tmp_path / 'fc.pt'}:8", seed=0)
    with pytest.raises(ValueError, match=r"the net is for a 9x9 board, not 15x15$"):
        player.check_board(Board(15, 15))
    assert evaluate_script("--player", f"az:{tmp_path / 'fc.pt'}:8", "--opponent", "random", "--games", "1",
                           "--size", "15", "--no-progress") == 2
    assert capsys.readouterr().err.splitlines() == [f"error: az:{tmp_path / 'fc.pt'}:8: the net is for a 9x9 "
                                                    "board, not 15x15"]


def test_cache_keys_tell_boards_with_as_many_points_apart():
    """A 6x10 and a 10x6 position have as many input bits: the cache must not mix them up."""
    class Counting:
        calls = 0

        def evaluate_batch(self, planes, legal):
            Counting.calls += 1
            return legal / legal.sum(axis=1, keepdims=True), np.full(len(planes), planes.shape[2], float)

    cached = CachedEvaluator(Counting())
    for height, width in ((6, 10), (10, 6)):
        _, values = cached.evaluate_batch(np.zeros((1, 4, height, width), np.float32), np.ones((1, 60), bool))
        assert values[0] == height
    assert Counting.calls == 2


def test_15x15_smoke_run_trains_resumes_and_evaluates(tmp_path):
    run = tmp_path / "run"
    overrides = ["board.width=15", "board.height=15", "board.n_in_row=5", "net.head=pooled",
                 "search.n_playout=4", "search.vct=false", "search.vcf_nodes=20", "search.temperature_moves=2",
                 "selfplay.parallel_games=2", "selfplay.games_per_iteration=2", "train.batch_size=16",
                 "train.epochs=1", "train.game_batch_num=2", "eval.check_freq=2", "eval.games=1",
                 "eval.n_playout=4", "eval.pure_playouts=4", "eval.pure_step=4", "eval.pure_cap=8",
                 "eval.opponents=[random]"]
    TrainPipeline(load_config("configs/smoke.yaml", overrides), run, device="cpu", progress=False).run()
    assert [r["iteration"] for r in metrics_records(run)] == [1]
    resumed = TrainPipeline(None, run, device="cpu", resume=True, progress=False,
                            overrides=["train.game_batch_num=4"])
    assert resumed.net_config == NetConfig(15, 15, head="pooled")
    resumed.run()
    records = metrics_records(run)
    assert [r["iteration"] for r in records] == [1, 2]
    assert records[-1]["resumed"]["from_iteration"] == 1 and "eval" in records[-1]
    saved = torch.load(run / "checkpoint.pt", weights_only=True)
    assert saved["net_config"]["head"] == "pooled" and saved["config"]["board"]["width"] == 15
    # The run's model plays 15x15, and 9x9 too.
    assert evaluate_script("--player", f"az:{run / 'current.pt'}:4", "--opponent", "random", "--games", "2",
                           "--size", "15", "--no-progress", "--json", str(tmp_path / "eval.json")) == 0
    assert sum(json.loads((tmp_path / "eval.json").read_text())["results"][0][k] for k in
               ("wins", "draws", "losses")) == 2
    assert make_player(f"az:{run / 'current.pt'}:4", seed=0).get_action(Board(9, 9)) in range(81)


def _parse(answer: str, board: Board) -> int:
    x, y = (int(n) for n in answer.split(","))
    move = y * board.width + x
    assert 0 <= x < board.width and 0 <= y < board.height and board.stone(move) == 0, answer
    return move


@pytest.mark.parametrize("onnx", [True, False])
def test_engine_plays_15x15_with_a_pooled_model_and_refuses_it_with_an_fc_one(tmp_path, onnx):
    save_model(tmp_path / "pooled.pt", _pooled())
    save_model(tmp_path / "fc.pt", build_net(NetConfig()))
    out: list[str] = []
    engine = PbrainEngine(EngineOptions(model=tmp_path / "pooled.pt", playouts=8, seed=3, onnx=onnx),
                          write=out.append)
    answers = lambda: [line for line in out if not line.startswith(("MESSAGE", "DEBUG"))]  # noqa: E731
    engine.handle_line("START 15")
    assert answers()[-1] == "OK"
    board = Board(15, 15)
    engine.handle_line("BEGIN")
    board.do_move(_parse(answers()[-1], board))
    rng = np.random.default_rng(4)
    for _ in range(4):
        reply = int(rng.choice(board.availables))
        board.do_move(reply)
        engine.handle_line(f"TURN {reply % 15},{reply // 15}")
        board.do_move(_parse(answers()[-1], board))
    engine.handle_line("START 20")
    assert answers()[-1] == "OK"
    engine.handle_line("BEGIN")
    _parse(answers()[-1], Board(20, 20))
    assert engine.handle_line("END") is False

    out.clear()
    engine = PbrainEngine(EngineOptions(model=tmp_path / "fc.pt", playouts=8, seed=3, onnx=onnx), write=out.append)
    for line in ("START 15", "START 20"):
        engine.handle_line(line)
        assert answers()[-1].startswith("ERROR board") and "plays 9x9 only" in answers()[-1]


def test_the_15x15_config_loads_with_the_pooled_heads():
    config = load_config("configs/15x15.yaml")
    assert (config.board.width, config.board.height, config.net.head) == (15, 15, "pooled")
    assert "minimax:2" in config.eval.opponents


def test_a_run_from_before_net_head_resumes(tmp_path):
    """Checkpoints written before the key hold no net_config["head"]: they are fc nets and resume."""
    config = load_config("configs/smoke.yaml", ["search.n_playout=8", "train.game_batch_num=4", "eval.check_freq=100"])
    TrainPipeline(config, tmp_path, device="cpu", progress=False).run()
    payload = torch.load(tmp_path / "checkpoint.pt", weights_only=True)
    del payload["net_config"]["head"]
    torch.save(payload, tmp_path / "checkpoint.pt")
    resumed = TrainPipeline(None, tmp_path, device="cpu", resume=True, progress=False)
    assert resumed.iteration == 1 and resumed.net_config.head == "fc"
