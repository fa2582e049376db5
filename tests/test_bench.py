"""The benchmark functions run and report sane figures (no timing assertions: speed is not tested)."""

import json
import textwrap
from dataclasses import replace

import pytest
import torch

from gomoku.cli import REPO_ROOT
from gomoku.lab import bench, bench_threats
from gomoku.training.config import Config
from tests.fakes import load_script


def test_bench_functions_report_positive_rates():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as scripts/bench.py does; small batches on 2 threads crawl on a busy machine
    try:
        _check_bench()
    finally:
        torch.set_num_threads(threads)


def _check_bench():
    s = bench.BenchSettings(repeats=1, pure_playouts=50, az_playouts=20, selfplay_games=1)
    assert bench.bench_pure(s) > 0
    assert bench.bench_az(s) > 0 and bench.bench_az(s, leaves_per_step=4) > 0
    assert bench.bench_az(s, leaves_per_step=8, threads=2) > 0
    assert bench.bench_reference(s) > 0
    assert bench.bench_az_game(s, moves=2) > 0 and bench.bench_az_game(s, moves=2, leaves_per_step=4, cache=True) > 0
    assert bench.bench_net(s, batch=8) > 0
    assert bench.bench_train_step(s, batch=16) > 0
    config = Config()
    config = replace(config, search=replace(config.search, n_playout=8),
                     selfplay=replace(config.selfplay, workers=1, parallel_games=2))
    figures = bench.bench_selfplay(s, config)
    assert figures["selfplay_positions_per_s"] > 0
    assert figures["selfplay_playouts_per_s"] == figures["selfplay_positions_per_s"] * 8
    # Another config's board and net (bench.py --selfplay --config): a pooled net on 7x7.
    small = replace(config, board=replace(config.board, width=7, height=7), net=replace(config.net, head="pooled"))
    assert bench.run_selfplay(s, small, ray_nodes=0, log=lambda line: None)["selfplay_positions_per_s"] > 0
    assert set(bench.machine()) >= {"cores", "device", "torch"}


def test_vcf_figures_come_from_real_positions():
    s = bench.BenchSettings(az_playouts=20, vcf_games=1)
    positions = bench_threats.game_positions(s)
    assert len(positions) > 9 and all(not board.game_end()[0] for board in positions)
    assert [len(board.moves) for board in positions] == list(range(len(positions)))  # one whole game
    per_call = bench_threats.bench_vcf(s, positions)
    assert per_call["vcf_calls_measured"] == 2 * len(positions) and per_call["vcf_ms_per_call"] > 0
    per_move = bench_threats.bench_vcf_per_move(s, positions, every=3)
    assert per_move["vcf_moves_measured"] == len(positions[::3])
    assert per_move["move_ms_vcf"] > 0 and per_move["move_ms_no_vcf"] > 0
    assert per_move["vcf_calls_per_move"] > 0  # a heuristic game's late positions have threes to extend


def test_selfplay_variants_are_valid_configs():
    from gomoku.training.config import load_config

    for name, overrides in {**bench.SELFPLAY_VARIANTS, **bench.CUDA_SELFPLAY_VARIANTS}.items():
        config = load_config(None, overrides)
        assert ("server" in name) == (config.selfplay.inference == "server")
        assert ("forced" in name) == (not config.search.forced_moves)
    for overrides in bench.CUDA_SELFPLAY_VARIANTS.values():  # in-process (bench --device) or on cuda
        selfplay = load_config(None, overrides).selfplay
        assert selfplay.workers == 1 or selfplay.device == "cuda"


def test_selfplay_variants_play_the_given_config_with_each_layout(monkeypatch):
    """bench.py --selfplay --variants --config C --set K=V: every layout plays C with K=V."""
    from gomoku.training.config import load_config

    played = []
    monkeypatch.setattr(bench, "bench_selfplay", lambda s, config: played.append(config) or {
        "selfplay_positions_per_s": 1.0})
    figures = bench.bench_selfplay_variants(bench.BenchSettings(), log=lambda line: None,
                                            config_path="configs/smoke.yaml", overrides=["search.n_playout=7"])
    every = {**bench.SELFPLAY_VARIANTS, **(bench.CUDA_SELFPLAY_VARIANTS if torch.cuda.is_available() else {})}
    layouts = {name: overrides for name, overrides in every.items()
               if "selfplay.runtime=onnx" not in overrides or bench.onnx_available()}
    assert list(figures) == list(layouts) and len(played) == len(layouts)
    for config, overrides in zip(played, layouts.values()):
        assert config.board.width == 6 and config.search.n_playout == 7  # the smoke config, then --set
        assert config.selfplay == load_config("configs/smoke.yaml", overrides).selfplay  # the layout's keys on top


@pytest.mark.parametrize("argv, message", [
    (["--set", "search.n_playout=7"], "--set needs --selfplay"),
    (["--selfplay", "--set", "search.n_playouts=7"], "unknown key search.n_playouts"),
    # options that did nothing where given (a missing config file went unnoticed)
    (["--search", "--config", "no/such.yaml"], "--config and --ray-nodes need --selfplay"),
    (["--ray-nodes", "7"], "--config and --ray-nodes need --selfplay"),
    (["--search", "--variants"], "--variants and --ray go with the full bench or --selfplay"),
    (["--vct", "--ray"], "--variants and --ray go with the full bench or --selfplay"),
    (["--search", "--repeats", "0"], "--repeats must be at least 1, got 0"),
])
def test_bench_set_errors_are_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        load_script("bench").main(argv)
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert exit_.value.code == 2 and ": error: " in error and message in error  # one line, argparse's form


def test_repeats_reach_the_search_figures(monkeypatch, tmp_path):
    seen = []

    def fake_search(settings):
        seen.append(settings.repeats)
        return {}

    monkeypatch.setattr(bench, "run_search", fake_search)
    load_script("bench").main(["--search", "--repeats", "11"])
    load_script("bench").main(["--search", "--quick", "--repeats", "5"])
    load_script("bench").main(["--search"])
    assert seen == [11, 5, bench.BenchSettings().repeats]


def test_the_ray_ratio_compares_pools_of_the_same_workers(monkeypatch):
    """--selfplay timed Ray on --ray-nodes actors against the config's own pool (one in-process
    runner with workers: 1, 16 processes on a 16-core machine) and called the ratio "Ray vs pool"."""
    from gomoku.training.config import load_config

    timed = []

    def fake_pool(s, config):
        timed.append(config.selfplay.workers)
        return {"selfplay_positions_per_s": 10.0 * config.selfplay.workers}

    def fake_ray(s, config):
        return {"selfplay_ray_positions_per_s": 21.0, "selfplay_ray_start_s": 1.0}

    monkeypatch.setattr(bench, "bench_selfplay", fake_pool)
    monkeypatch.setattr(bench, "bench_selfplay_ray", fake_ray)
    monkeypatch.setattr(bench, "ray_available", lambda: True)
    monkeypatch.setattr(bench, "local_ray_cluster", lambda nodes: __import__("contextlib").nullcontext())
    one = bench.run_selfplay(bench.BenchSettings(), load_config(None, ["selfplay.workers=1"]), 2, log=lambda *a: None)
    assert timed == [1, 2] and one["selfplay_positions_per_s"] == 10.0
    assert one["selfplay_pool_positions_per_s_at_ray_workers"] == 20.0 and one["selfplay_ray_vs_pool"] == 21.0 / 20.0
    timed.clear()
    two = bench.run_selfplay(bench.BenchSettings(), load_config(None, ["selfplay.workers=2"]), 2, log=lambda *a: None)
    assert timed == [2] and "selfplay_pool_positions_per_s_at_ray_workers" not in two
    assert two["selfplay_ray_vs_pool"] == 21.0 / 20.0


def test_a_bad_model_or_device_is_refused_before_any_figure(tmp_path, monkeypatch, capsys):
    def refuse(*args, **kwargs):
        raise AssertionError("a figure ran before the arguments were checked")

    for name in ("run_all", "run_search", "run_selfplay"):
        monkeypatch.setattr(bench, name, refuse)
    monkeypatch.setattr(bench_threats, "run_vct", refuse)
    monkeypatch.setattr(bench_threats, "game_positions", refuse)
    nope = tmp_path / "nope.pt"
    cases = [(["--vct", "--model", str(nope)], f"--model: no checkpoint at {nope}"),
             (["--model", str(nope)], "--model needs --vct"),
             (["--device", "nope", "--quick"], "--device nope: not a device"),
             (["--selfplay", "--ray-nodes", "-1"], "--ray-nodes must be 0 (no Ray figure) or more, got -1"),
             (["--quick", "--json", str(tmp_path / "no" / "b.json")], f"--json {tmp_path / 'no' / 'b.json'}: there is no folder {tmp_path / 'no'}")]
    if not torch.cuda.is_available():
        cases.append((["--device", "cuda", "--quick"], "--device cuda: CUDA is not available here"))
    for argv, message in cases:
        with pytest.raises(SystemExit) as exit_:
            load_script("bench").main(argv)
        err = capsys.readouterr().err.strip().splitlines()
        assert exit_.value.code == 2 and ": error: " + message in err[-1], argv
        assert not any("Traceback" in line for line in err)


def test_each_game_figure_runs_the_search_its_name_says(monkeypatch):
    """The "8 leaves" game figures passed 8 as the moves of the game: they timed one leaf a call."""
    from gomoku.lab import bench
    from gomoku.lab.bench_common import BenchSettings
    from mcts.evaluators import CachedEvaluator

    made = []

    class Recorder:
        def __init__(self, evaluator, n_playout, seed, leaves_per_step, pipeline):
            made.append((leaves_per_step, isinstance(evaluator, CachedEvaluator), pipeline))

        def get_action(self, board):
            return board.availables[0]

    monkeypatch.setattr(bench, "AlphaZeroPlayer", Recorder)
    monkeypatch.setattr(bench, "az_evaluator", lambda s: object())
    expected = {"az_game_playouts_per_s": (1, False, False), "az_game_playouts_per_s_cached": (1, True, False),
                "az_game_playouts_per_s_leaves8": (bench.ENGINE_LEAVES, False, False),
                "az_game_playouts_per_s_leaves8_cached": (bench.ENGINE_LEAVES, True, False),
                "az_game_playouts_per_s_leaves8_cached_pipeline": (bench.ENGINE_LEAVES, True, True)}
    assert bench.ENGINE_LEAVES == 8
    for key, search in expected.items():
        made.clear()
        playouts, run = bench.SEARCH_FIGURES[key](BenchSettings())
        run()
        assert made == [search] and playouts == 8 * BenchSettings().az_playouts, key


def test_the_tactics_bench_compares_both_kinds_on_the_same_calls_and_games():
    from gomoku.lab.bench_common import BenchSettings
    from gomoku.lab.bench_tactics import run_tactics
    from gomoku.training.config import load_config
    from mcts import UniformEvaluator

    config = load_config("configs/smoke.yaml", ["search.vct=true", "search.n_playout=8"])
    results = run_tactics(BenchSettings(selfplay_games=1), UniformEvaluator(), "uniform", log=lambda line: None,
                          config=config)
    calls = results["per_call"]
    assert calls["calls"] > 0 and calls["mismatches"] == 0 and calls["vcf_calls"] + calls["vct_calls"] == calls["calls"]
    assert calls["root_calls"] + calls["inner_calls"] + calls["defence_calls"] == calls["calls"]
    assert calls["root_calls"] > 0 and calls["inner_calls"] > 0  # both ways self-play calls the kernels
    for name in ("net", "free"):  # the same answers, so the same seeded games
        assert results[f"selfplay_{name}"]["same_games"]
    for key in ("tactics_speedup", "selfplay_speedup", "free_net_selfplay_speedup", "net_share"):
        assert results[key] > 0


def test_the_export_figures_time_torch_and_each_export(tmp_path, capsys):
    """bench.py --onnx (the benchmark export_onnx.py --bench runs on the file it wrote): torch, the
    float32 export and the int8 one, on the model's own board."""
    from nets import NetConfig, build_net, save_model

    model = tmp_path / "6.pt"
    save_model(model, build_net(NetConfig(6, 6)), n_in_row=4)
    assert load_script("bench").main(["--onnx", "--quick", "--model", str(model), "--json",
                                          str(tmp_path / "o.json")]) == 0
    figures = json.loads((tmp_path / "o.json").read_text())
    assert [f["runtime"] for f in figures["runtimes"]] == ["torch", "onnxruntime", "onnxruntime int8"]
    assert all(f["latency_us"] > 0 and f["playouts_per_s"] > 0 for f in figures["runtimes"])
    assert "onnxruntime int8" in capsys.readouterr().out
    assert load_script("bench").main(["--onnx", "--model", str(tmp_path / "nope.pt")]) == 1
    assert capsys.readouterr().err.startswith("error: no checkpoint at")
    with pytest.raises(SystemExit):
        load_script("bench").main(["--onnx", "--web", "3"])
    assert "--onnx goes alone" in capsys.readouterr().err


# An engine that reports FACTOR playouts a stone of each BOARD it is given and plays its first empty point.
COUNTING_ENGINE = textwrap.dedent("""\
    import sys
    factor = int(sys.argv[1])
    stones = []
    for line in sys.stdin:
        word = line.strip()
        if word.startswith(("START", "RESTART")):
            print("OK", flush=True)
        elif word == "BOARD":
            stones = []
        elif word == "DONE":
            taken = {tuple(map(int, s.split(",")[:2])) for s in stones}
            print("MESSAGE %d playouts in 5 ms" % (factor * len(stones)), flush=True)
            print("%d,%d" % next((x, y) for y in range(9) for x in range(9) if (x, y) not in taken), flush=True)
        elif word == "END":
            break
        elif word and word[0].isdigit():
            stones.append(word)
""")


def test_the_engine_bench_counts_each_engines_playouts_on_the_same_real_positions(tmp_path):
    from gomoku.lab.bench_engine import CUTS, middle_game_positions, run_engines

    positions = middle_game_positions(REPO_ROOT / "docs/results/clock/clock-int8-vs-previous-1000ms-seed10.games.jsonl.gz")
    assert len(positions) >= 30 and {len(board.moves) for board in positions} == set(CUTS)
    script = tmp_path / "counting.py"
    script.write_text(COUNTING_ENGINE)
    commands = [f"{script} 10", f"{script} 30"]
    figures = run_engines(commands, positions[:4], turn_ms=1000, rounds=2, log=lambda line: None)
    stones = sum(len(board.moves) for board in positions[:4])
    assert figures["positions"] == 4 and figures["rounds"] == 2
    for command, factor in zip(commands, (10, 30)):
        rounds = figures["engines"][command]["rounds"]
        assert [r["playouts"] for r in rounds] == [factor * stones] * 2  # the engine's own counts, summed
        assert all(r["seconds"] > 0 and r["playouts_per_s"] == r["playouts"] / r["seconds"] for r in rounds)
        rates = [r["playouts_per_s"] for r in rounds]
        assert figures["engines"][command]["playouts_per_s"] == pytest.approx(sum(rates) / 2)  # the median of two


@pytest.mark.parametrize("argv, message", [
    (["--turn", "200"], "--turn needs --engine"),
    (["--engine", "scripts/pbrain.py", "--turn", "0"], "--turn must be at least 1 ms, got 0"),
    (["--engine", "scripts/pbrain.py", "--search"], "--engine goes alone (with --turn, --repeats, --json)"),
    (["--engine", " "], "not an engine command"),
])
def test_engine_bench_errors_are_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        load_script("bench").main(argv)
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert exit_.value.code == 2 and message in error
