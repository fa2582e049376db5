"""The benchmark functions run and report sane figures (no timing assertions: speed is not tested)."""

from dataclasses import replace

import torch

from gomoku.training import bench
from gomoku.training.config import Config


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
    assert bench.bench_net(s, batch=8) > 0
    assert bench.bench_train_step(s, batch=16) > 0
    config = Config()
    config = replace(config, search=replace(config.search, n_playout=8),
                     selfplay=replace(config.selfplay, workers=1, parallel_games=2))
    figures = bench.bench_selfplay(s, config)
    assert figures["selfplay_positions_per_s"] > 0
    assert figures["selfplay_playouts_per_s"] == figures["selfplay_positions_per_s"] * 8
    assert set(bench.machine()) >= {"cores", "device", "torch"}


def test_selfplay_variants_are_valid_configs():
    from gomoku.training.config import load_config

    for name, overrides in {**bench.SELFPLAY_VARIANTS, **bench.CUDA_SELFPLAY_VARIANTS}.items():
        config = load_config(None, overrides)
        assert ("server" in name) == (config.selfplay.inference == "server")
        assert ("forced" in name) == (not config.search.forced_moves)
    for overrides in bench.CUDA_SELFPLAY_VARIANTS.values():  # in-process (bench --device) or on cuda
        selfplay = load_config(None, overrides).selfplay
        assert selfplay.workers == 1 or selfplay.device == "cuda"
