"""Speed figures of the hot paths (what ``scripts/bench.py`` prints and saves as JSON).

The speed figures here are medians of ``repeats`` runs on 9x9 / five in a row with an untrained
default net (the threat solvers' are medians or means over calls and positions, as their names say). Torch runs single-threaded except in the self-play figure, which runs self-play the way the
TrainPipeline does by default on this machine (one worker process per core); with
``BenchSettings.ray`` the same self-play again on Ray actors (``selfplay.backend: ray``), right after.
The threat solvers' figures are in ``bench_threats``; what both share, in ``bench_common``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import shutil
import signal
import statistics
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import torch

from gomoku.players import ENGINE_LEAVES, WINDOW_LEAVES, WINDOW_THREADS
from gomoku.players.search import AlphaZeroPlayer, PureMCTSPlayer
from gomoku.game.board import Board
from gomoku.matches.processes import put_back_handler
from gomoku.lab.bench_common import CLASSIC, BenchSettings, az_evaluator, machine, median_time
from gomoku.lab.bench_threats import (bench_vcf, bench_vcf_per_move, bench_vct, bench_vct_per_move,
                                      bench_vct_selfplay, game_positions)
from gomoku.training.backends.actors import resolve_workers
from gomoku.training.backends.messages import SelfPlayTask
from gomoku.training.backends.pool import WorkerPool
from gomoku.training.backends.worker import resolve_inference
from gomoku.training.config import Config, load_config
from gomoku.training.selfplay import SelfPlayRunner
from nets.onnx_export import onnx_available
from nets import NetConfig, NetEvaluator, Trainer, build_net

def bench_pure(s: BenchSettings) -> float:
    player = PureMCTSPlayer(n_playout=s.pure_playouts, seed=0)
    return s.pure_playouts / median_time(lambda: player.get_action(Board()), s.repeats)


def az_move(s: BenchSettings, leaves_per_step: int = 1, onnx: bool | None = None, forced_moves: bool = True,
            vcf: bool = True, threads: int = 1, int8: bool = False, pipeline: bool = False):
    """(playouts, one run) of the az player's single-game search from the empty board
    (``az_evaluator``)."""
    evaluator = az_evaluator(s, onnx, threads, int8)

    def one_move():
        AlphaZeroPlayer(evaluator, n_playout=s.az_playouts, seed=0, leaves_per_step=leaves_per_step,
                        forced_moves=forced_moves, vcf=vcf, pipeline=pipeline).get_action(Board())

    return s.az_playouts, one_move


def bench_az(s: BenchSettings, leaves_per_step: int = 1, onnx: bool | None = None, forced_moves: bool = True,
             vcf: bool = True, threads: int = 1) -> float:
    """Playouts/s of the az player's single-game search from the empty board (``az_evaluator``)."""
    playouts, run = az_move(s, leaves_per_step, onnx, forced_moves, vcf, threads)
    return playouts / median_time(run, s.repeats)


def reference_move(s: BenchSettings, onnx: bool | None = None):
    """(playouts, one run) of ``mcts.reference`` on the evaluator ``bench_az`` uses: the classic
    implementation's search structure (a node object per position, children in a dict, a Python
    max over them, a board copy per playout), to time side by side with ours on the same net.
    ``onnx=False``: on torch, one position a net call, which is how the classic implementation
    runs (its ``policy_value_fn``)."""
    from mcts.reference import ReferenceMCTS

    search = ReferenceMCTS(az_evaluator(s, onnx), n_playout=s.az_playouts, rng=np.random.default_rng(0))
    return s.az_playouts, lambda: search.search(Board())


def bench_reference(s: BenchSettings) -> float:
    playouts, run = reference_move(s)
    return playouts / median_time(run, s.repeats)


def az_game(s: BenchSettings, moves: int = 8, leaves_per_step: int = 1, cache: bool = False,
            pipeline: bool = False):
    """(playouts, one run) of the first ``moves`` moves of a game the az player plays against
    itself, ``az_playouts`` a move with the tree kept between moves, as the engine plays; with
    ``cache`` through a ``CachedEvaluator`` (positions met in earlier searches answered from
    memory: the same moves, since its answers are exact); ``pipeline``: the net on a thread of
    its own beside the search (``SearchConfig.pipeline``)."""
    from mcts.evaluators import CachedEvaluator

    evaluator = az_evaluator(s)

    def game():
        player = AlphaZeroPlayer(CachedEvaluator(evaluator) if cache else evaluator, n_playout=s.az_playouts,
                                 seed=0, leaves_per_step=leaves_per_step, pipeline=pipeline)
        board = Board()
        for _ in range(moves):
            board.do_move(player.get_action(board))

    return moves * s.az_playouts, game


def bench_az_game(s: BenchSettings, moves: int = 8, leaves_per_step: int = 1, cache: bool = False) -> float:
    playouts, run = az_game(s, moves, leaves_per_step, cache)
    return playouts / median_time(run, s.repeats)


def bench_net(s: BenchSettings, batch: int = 256) -> float:
    evaluator = NetEvaluator(build_net(NetConfig()), s.device, chunk=0)
    planes = np.random.default_rng(0).integers(0, 2, (batch, 4, 9, 9)).astype(np.float32)
    legal = np.ones((batch, 81), dtype=bool)
    evaluator.evaluate_batch(planes, legal)
    return batch / median_time(lambda: evaluator.evaluate_batch(planes, legal), s.repeats)


def bench_train_step(s: BenchSettings, batch: int = 512) -> float:
    trainer = Trainer(build_net(NetConfig()), lr=2e-3, device=s.device)
    rng = np.random.default_rng(0)
    states = rng.integers(0, 2, (batch, 4, 9, 9)).astype(np.float32)
    probs = rng.dirichlet(np.ones(81), batch).astype(np.float32)
    outcomes = rng.choice([-1.0, 1.0], batch).astype(np.float32)
    trainer.train_step(states, probs, outcomes, 2e-3)
    return median_time(lambda: trainer.train_step(states, probs, outcomes, 2e-3), s.repeats)


def _timed_selfplay(pool, workers: int, s: "BenchSettings") -> list[tuple[int, float]]:
    """(moves, seconds) of ``s.repeats`` rounds of self-play tasks, one per worker, on a pool
    (``WorkerPool`` or ``RayPool``, its weights published), with the same seeds whatever the pool."""
    runs = []
    for r in range(s.repeats):
        start = time.perf_counter()
        tasks = [SelfPlayTask(s.selfplay_games, 100 + r * workers + i) for i in range(workers)]
        runs.append((sum(answer.moves for answer in pool.run(tasks)), time.perf_counter() - start))
    return runs


def bench_selfplay(s: BenchSettings, config: Config | None = None) -> dict:
    """Self-play positions (moves) per second, as the pipeline plays it by default."""
    config = config or Config()
    workers = resolve_workers(config.selfplay.workers)
    net = build_net(config.net_config())  # untrained; the one net every path below plays
    weights = {k: v for k, v in net.state_dict().items()}
    device, inference = resolve_inference(config.selfplay)
    runs, extra = [], {}
    if workers > 1:
        server = NetEvaluator(net, device) if inference == "server" else None
        pool = WorkerPool(workers, config, server)  # with a server, the server's net is the one that plays
        try:
            pool.publish(weights)
            pool.run([SelfPlayTask(1, i) for i in range(workers)])  # warm up (spawn, imports)
            runs = _timed_selfplay(pool, workers, s)
        finally:
            pool.close()
        if server is not None:
            extra["selfplay_server_positions_per_call"] = pool.server.positions / max(pool.server.batches, 1)
    else:
        runner = SelfPlayRunner(NetEvaluator(net, s.device), config.board, config.search,
                                config.selfplay.parallel_games, np.random.default_rng(0))
        for _ in range(s.repeats):
            start = time.perf_counter()
            moves = runner.play(s.selfplay_games).moves
            runs.append((moves, time.perf_counter() - start))
    rates = [moves / seconds for moves, seconds in runs]
    positions = statistics.median(rates)
    return {"selfplay_positions_per_s": positions,
            "selfplay_playouts_per_s": positions * config.search.n_playout,
            "selfplay_workers": workers, "selfplay_parallel_games": config.selfplay.parallel_games,
            "selfplay_inference": f"{inference} on {device}" if workers > 1 else f"in-process on {s.device}",
            "selfplay_moves_measured": [m for m, _ in runs], **extra}


@contextlib.contextmanager
def local_ray_cluster(nodes: int):
    """A Ray cluster of ``nodes`` one-CPU nodes on this machine (``ray.cluster_utils.Cluster``, as
    the tests start it), this process connected to it; its files in a temp folder, removed after,
    and this process's SIGINT and SIGTERM handlers as they were (ray.init installs its own)."""
    import ray
    from ray.cluster_utils import Cluster

    temp = Path(tempfile.mkdtemp(prefix="gzb"))  # short: Ray's socket paths must fit
    (temp / "ray").mkdir()  # where Cluster writes its address file
    # Ray's temp folder, and the home folder Ray would keep an auth token in, both in temp.
    saved = {name: os.environ.get(name) for name in ("RAY_TMPDIR", "HOME", "RAY_USAGE_STATS_ENABLED")}
    os.environ.update(RAY_TMPDIR=str(temp), HOME=str(temp), RAY_USAGE_STATS_ENABLED="0")
    node_args = {"num_cpus": 1, "temp_dir": str(temp)}
    handlers = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    cluster = None
    try:
        cluster = Cluster(initialize_head=True, head_node_args={**node_args, "include_dashboard": False})
        for _ in range(nodes - 1):
            cluster.add_node(**node_args)
        ray.init(address=cluster.address, log_to_driver=False, logging_level=logging.WARNING)
        yield cluster
    finally:
        ray.shutdown()
        if cluster is not None:
            cluster.shutdown()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(temp, ignore_errors=True)
        if threading.current_thread() is threading.main_thread():  # only it can set handlers
            for number, handler in handlers.items():
                put_back_handler(number, handler)


def run_selfplay(s: BenchSettings, config: Config, ray_nodes: int = 0, log=print) -> dict:
    """Self-play positions/s of ``config`` (its board, net and search; an untrained net) on the
    process pool, then (``ray_nodes`` > 0, Ray installed) on Ray actors, one per node of a local
    cluster of that many one-CPU nodes, right after: the two figures side by side. The ratio
    compares the same number of workers: when the config's pool has another number than
    ``ray_nodes``, a pool of ``ray_nodes`` workers is timed too (``selfplay_pool_positions_per_s_at_ray_workers``)."""
    torch.set_num_threads(1)
    results = bench_selfplay(s, config)
    log(f"{'selfplay_positions_per_s':36s} {results['selfplay_positions_per_s']:12.4g}")
    if ray_nodes and ray_available():
        same = dataclasses.replace(config, selfplay=dataclasses.replace(config.selfplay, workers=ray_nodes))
        pool = results["selfplay_positions_per_s"]
        if resolve_workers(config.selfplay.workers) != ray_nodes:
            pool = bench_selfplay(s, same)["selfplay_positions_per_s"]
            results["selfplay_pool_positions_per_s_at_ray_workers"] = pool
            log(f"{'selfplay_pool_positions_per_s_at_ray_workers':36s} {pool:12.4g}")
        with local_ray_cluster(ray_nodes):
            results.update(bench_selfplay_ray(s, same))
        results["selfplay_ray_nodes"] = ray_nodes
        results["selfplay_ray_vs_pool"] = results["selfplay_ray_positions_per_s"] / pool
        for key in ("selfplay_ray_positions_per_s", "selfplay_ray_vs_pool", "selfplay_ray_start_s"):
            log(f"{key:36s} {results[key]:12.4g}")
    elif ray_nodes:
        log('selfplay_ray_positions_per_s: skipped, Ray is not installed (pip install -e ".[ray]")')
    return results


def ray_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("ray") is not None


def bench_selfplay_ray(s: BenchSettings, config: Config | None = None) -> dict:
    """Self-play positions per second on Ray actors (``selfplay.backend: ray``; a local Ray
    instance unless ``selfplay.ray_address`` names a cluster), measured as ``bench_selfplay``
    measures the process pool: one actor per worker the pool would have, the same tasks and seeds.
    Also how long Ray and the actors took to start, and one call's round trip to an idle actor."""
    from gomoku.training.backends.ray_backend import RayPool

    config = config or Config()
    workers = resolve_workers(config.selfplay.workers)
    weights = {k: v for k, v in build_net(config.net_config()).state_dict().items()}
    start = time.perf_counter()
    pool = RayPool(config, workers, config.selfplay.ray_address)
    runs = []
    try:
        start_s = time.perf_counter() - start
        pool.publish(weights)
        pool.run([SelfPlayTask(1, i) for i in range(workers)])  # warm up (weights, first batch)
        import ray

        actor = pool.actors()[0]
        round_trip_s = median_time(lambda: ray.get(actor.info.remote()), 5)
        runs = _timed_selfplay(pool, workers, s)
    finally:
        pool.close()
    return {"selfplay_ray_positions_per_s": statistics.median(moves / seconds for moves, seconds in runs),
            "selfplay_ray_actors": workers, "selfplay_ray_start_s": start_s,
            "selfplay_ray_round_trip_ms": 1e3 * round_trip_s,
            "selfplay_ray_moves_measured": [m for m, _ in runs]}


CPU_WORKERS = ["selfplay.workers=0", "selfplay.parallel_games=16", "selfplay.device=cpu", "selfplay.inference=worker"]
SELFPLAY_VARIANTS = {  # self-play layouts to compare (scripts/bench.py --variants), as config overrides
    "1 process x 32 games, torch": ["selfplay.workers=1", "selfplay.parallel_games=32", "selfplay.runtime=torch"],
    "per-core processes x 16 games, torch": CPU_WORKERS + ["selfplay.runtime=torch"],
    "per-core processes x 16 games, onnx": CPU_WORKERS + ["selfplay.runtime=onnx"],
    "per-core processes x 16 games, onnx, no forced moves": CPU_WORKERS + ["selfplay.runtime=onnx",
                                                                           "search.forced_moves=false"],
    "per-core processes x 16 games, one inference server on the CPU": [
        "selfplay.workers=0", "selfplay.parallel_games=16", "selfplay.device=cpu", "selfplay.inference=server"],
}
CUDA_SELFPLAY_VARIANTS = {  # on a CUDA machine only (the in-process one runs on BenchSettings.device)
    "1 process x 256 games, cuda": ["selfplay.workers=1", "selfplay.parallel_games=256"],
    "per-core processes x 16 games, a cuda net in each": [
        "selfplay.workers=0", "selfplay.parallel_games=16", "selfplay.device=cuda", "selfplay.inference=worker"],
    "per-core processes x 16 games, one cuda inference server": [
        "selfplay.workers=0", "selfplay.parallel_games=16", "selfplay.device=cuda", "selfplay.inference=server"],
    "per-core processes x 64 games, one cuda inference server": [
        "selfplay.workers=0", "selfplay.parallel_games=64", "selfplay.device=cuda", "selfplay.inference=server"],
}


def bench_selfplay_variants(s: BenchSettings, log=print, config_path: str | None = None,
                            overrides: list[str] | tuple[str, ...] = ()) -> dict:
    """Self-play positions/s of each layout (``SELFPLAY_VARIANTS``, on CUDA also the CUDA ones),
    each the config at ``config_path`` (default: the defaults) with ``overrides``, then the layout's."""
    variants = dict(SELFPLAY_VARIANTS)
    if torch.cuda.is_available():
        variants.update(CUDA_SELFPLAY_VARIANTS)
    out = {}
    for name, layout in variants.items():
        if "selfplay.runtime=onnx" in layout and not onnx_available():
            continue
        config = load_config(config_path, [*overrides, *layout])
        result = bench_selfplay(s, config)
        out[name] = result["selfplay_positions_per_s"]
        per_call = result.get("selfplay_server_positions_per_call")
        note = f" ({per_call:.1f} positions per server call)" if per_call else ""
        log(f"  self-play, {name:40s} {out[name]:8.1f} positions/s{note}")
    return out


SEARCH_FIGURES = {  # the single-game search, one lever at a time: (playouts, one run) each (run_search)
    "az_mcts_playouts_per_s": lambda s: az_move(s),
    "az_mcts_playouts_per_s_threads2": lambda s: az_move(s, threads=2),
    "az_mcts_playouts_per_s_leaves8": lambda s: az_move(s, leaves_per_step=8),
    "az_mcts_playouts_per_s_leaves8_pipeline": lambda s: az_move(s, leaves_per_step=8, pipeline=True),
    "az_mcts_playouts_per_s_window": lambda s: az_move(s, WINDOW_LEAVES, threads=WINDOW_THREADS),
    # The net's int8 export (gomoku.lab.int8) on onnxruntime: exact, and the window's search.
    "az_mcts_playouts_per_s_int8": lambda s: az_move(s, int8=True),
    "az_mcts_playouts_per_s_window_int8": lambda s: az_move(s, WINDOW_LEAVES, threads=WINDOW_THREADS, int8=True),
    "az_mcts_playouts_per_s_no_forced_moves": lambda s: az_move(s, forced_moves=False),
    "az_mcts_playouts_per_s_torch": lambda s: az_move(s, onnx=False),
    "az_mcts_playouts_per_s_torch_leaves8": lambda s: az_move(s, 8, onnx=False),
    # The same search structure as the classic, on our net and runtime, in this sitting.
    "az_reference_playouts_per_s": reference_move,
    # The classic implementation as it runs: that structure on torch, one leaf a call.
    "az_classic_playouts_per_s": lambda s: reference_move(s, onnx=False),
    # A game's searches (tree kept), as the engine plays them: the levers one by one.
    "az_game_playouts_per_s": lambda s: az_game(s),
    "az_game_playouts_per_s_cached": lambda s: az_game(s, cache=True),
    "az_game_playouts_per_s_leaves8": lambda s: az_game(s, leaves_per_step=ENGINE_LEAVES),
    "az_game_playouts_per_s_leaves8_cached": lambda s: az_game(s, leaves_per_step=ENGINE_LEAVES, cache=True),
    "az_game_playouts_per_s_leaves8_cached_pipeline": lambda s: az_game(s, leaves_per_step=ENGINE_LEAVES, cache=True,
                                                                         pipeline=True),
}


def run_search(s: BenchSettings, log=print) -> dict:
    """The search figures (``SEARCH_FIGURES``) timed side by side: after one warm-up run each,
    ``repeats`` rounds that run every figure once in turn (so a change of the machine's load hits
    them alike), the median per figure; and their ratios to the classic's search structure on our
    runtime and to the classic implementation as it runs (that structure on torch, one leaf a
    call), both timed beside them, and to the classic implementation's published figure. The headline is the exact
    search (one leaf, one thread) on the default runtime (onnxruntime on a CPU when installed), as
    evaluate.py plays it; "_window" is the play window's search (players.WINDOW_LEAVES leaves a
    call, WINDOW_THREADS threads); "az_game_*" the engine's."""
    torch.set_num_threads(1)
    runs = {key: make(s) for key, make in SEARCH_FIGURES.items()}
    for _, run in runs.values():
        run()
    times: dict[str, list[float]] = {key: [] for key in runs}
    for _ in range(s.repeats):
        for key, (_, run) in runs.items():
            start = time.perf_counter()
            run()
            times[key].append(time.perf_counter() - start)
    results = {}
    for key, (playouts, _) in runs.items():
        results[key] = playouts / statistics.median(times[key])
        log(f"{key:36s} {results[key]:12.4g}")
    searches = {key: value for key, value in results.items() if key.startswith(("az_mcts", "az_game"))}
    for name, base, what in (("speedup_vs_reference", results["az_reference_playouts_per_s"],
                              "the classic's search structure"),
                             ("speedup_vs_classic_here", results["az_classic_playouts_per_s"],
                              "the classic implementation (its structure on torch)")):
        results[name] = {key: value / base for key, value in searches.items()}
        for key, ratio in results[name].items():
            log(f"{key:36s} {ratio:10.1f}x {what}, side by side")
    classic = CLASSIC["az_mcts_playouts_per_s"]
    results["search_speedup_vs_classic"] = {key: value / classic for key, value in searches.items()}
    return results


def run_all(s: BenchSettings, log=print, variants: bool = False) -> dict:
    torch.set_num_threads(1)
    results: dict = {"machine": machine(), "settings": s.__dict__.copy()}
    results["selfplay_runtime"] = "onnx" if onnx_available() else "torch"  # what "auto" picks here
    steps = [("pure_mcts_playouts_per_s", bench_pure), ("net_positions_per_s_b256", bench_net),
             ("train_step_s", bench_train_step)]
    for key, fn in steps:
        results[key] = fn(s)
        log(f"{key:36s} {results[key]:12.4g}")
    results.update(run_search(s, log))
    positions = game_positions(s)
    results.update(bench_vcf(s, positions))
    results.update(bench_vcf_per_move(s, positions))
    results.update(bench_vct(s, positions))
    results.update(bench_vct_per_move(s, positions))
    for key in ("vcf_ms_per_call", "vcf_ms_per_call_mean", "move_ms_vcf", "move_ms_no_vcf", "vcf_ms_per_move",
                "vcf_calls_per_move", "vct_ms_per_call", "vct_ms_per_call_mean", "vct_ms_per_call_max",
                "move_ms_vct", "move_ms_no_vct", "vct_ms_per_move", "vct_calls_per_move"):
        log(f"{key:36s} {results[key]:12.4g}")
    results.update(bench_selfplay(s))
    log(f"{'selfplay_positions_per_s':36s} {results['selfplay_positions_per_s']:12.4g}")
    results.update(bench_vct_selfplay(s))
    for key in ("selfplay_positions_per_s_vct", "selfplay_positions_per_s_no_vct", "selfplay_vct_cost"):
        log(f"{key:36s} {results[key]:12.4g}")
    log(f"{'selfplay_playouts_per_s':36s} {results['selfplay_playouts_per_s']:12.4g}")
    if s.ray and ray_available():  # right after the pool, same config: the two figures side by side
        results.update(bench_selfplay_ray(s))
        results["selfplay_ray_vs_pool"] = results["selfplay_ray_positions_per_s"] / results["selfplay_positions_per_s"]
        for key in ("selfplay_ray_positions_per_s", "selfplay_ray_vs_pool", "selfplay_ray_start_s",
                    "selfplay_ray_round_trip_ms"):
            log(f"{key:36s} {results[key]:12.4g}")
    elif s.ray:
        log('selfplay_ray_positions_per_s: skipped, Ray is not installed (pip install -e ".[ray]")')
    if variants:
        results["selfplay_variants_positions_per_s"] = bench_selfplay_variants(s, log)
    results["speedup_vs_classic"] = {k: results[k] / v for k, v in CLASSIC.items()}
    results["speedup_vs_classic"]["az_mcts_playouts_per_s_window"] = (
        results["az_mcts_playouts_per_s_window"] / CLASSIC["az_mcts_playouts_per_s"])
    for key, ratio in results["speedup_vs_classic"].items():
        log(f"{key:36s} {ratio:10.1f}x the classic")
    return results
