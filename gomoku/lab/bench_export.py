"""Speed figures of the exported models: a net on torch against its ONNX exports (one position's
latency, a single-game search's playouts/s, one thread), and the browser page's AI moves in
headless Chromium. ``scripts/bench.py --onnx`` and ``--web`` time a model's exports;
``scripts/export_onnx.py --bench`` and ``export_web.py --bench`` time the file or site they wrote.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch

from gomoku.game.board import Board
from gomoku.lab.bench_common import machine, median_time

SEARCH_PLAYOUTS = 400  # a move of the search figure (the shipped model's setting)
SEARCH_MOVES = 12  # moves of the search figure, from the empty board
QUICK_MOVES = 2  # the same with --quick
LATENCY_CALLS = 300  # net calls a round of the latency figure
LATENCY_ROUNDS = 5  # rounds of it: the median is kept
WARM_UP_CALLS = 50
WEB_PLAYOUTS = 400  # a move of the page's AI
ANSWER_TIMEOUT_S = 600  # the page's answer to one click, at most
NINE_CLICKS = (40, 30, 50, 32, 48, 31, 49, 39, 41, 22, 58, 23, 57, 21, 59, 24, 56)  # the person's points on 9x9


class RuntimeFigures(NamedTuple):
    runtime: str  # "torch", or the name of an export ("onnxruntime", "onnxruntime int8")
    latency_us: float  # one position's evaluate_batch, the median of the rounds' means
    playouts_per_s: float  # a single-game search, its tree kept between moves


def search_speed(evaluator, playouts: int, moves: int, width: int, height: int, n_in_row: int) -> float:
    """Playouts per second of a single-game search (tree reused) over the first ``moves`` moves."""
    from gomoku.tactics import make_rules
    from mcts import BatchedMCTS, SearchConfig

    board = Board(width, height, n_in_row)
    search = BatchedMCTS(evaluator, make_rules(board.width, board.height, board.n_in_row),
                         SearchConfig(n_playout=playouts), rng=np.random.default_rng(0))
    start = time.perf_counter()
    done = 0
    for _ in range(moves):
        if board.game_end()[0]:
            break
        result = search.search([board])[0]
        done += playouts
        board.do_move(result.best_move())
    return done / (time.perf_counter() - start)


def onnx_figures(net, exports: dict[str, bytes | Path], playouts: int = SEARCH_PLAYOUTS, moves: int = SEARCH_MOVES,
                 n_in_row: int = 5) -> list[RuntimeFigures]:
    """``net`` on torch, then each of ``exports`` (name -> an ONNX model, serialised or its file)
    on onnxruntime, one thread each (torch's thread count is set to 1), on the net's own board (a
    pooled net: the board it was trained on)."""
    from mcts import evaluate
    from nets import NetEvaluator
    from nets.onnx_evaluator import OnnxEvaluator

    torch.set_num_threads(1)
    evaluators = {"torch": NetEvaluator(net, "cpu")}
    evaluators.update({name: OnnxEvaluator(model, threads=1) for name, model in exports.items()})
    width, height = net.config.width, net.config.height
    centre = (height // 2) * width + width // 2  # four stones around the centre, on any board of 5+ a side
    board = Board.from_moves([centre, centre + 1, centre - width, centre + width], width, height, n_in_row)
    planes = board.current_state()[None]
    legal = np.zeros((1, board.size), dtype=bool)
    legal[0, board.availables] = True
    for evaluator in evaluators.values():
        for _ in range(WARM_UP_CALLS):
            evaluator.evaluate_batch(planes, legal)
        evaluate(evaluator, board)

    def calls(evaluator) -> None:
        for _ in range(LATENCY_CALLS):
            evaluator.evaluate_batch(planes, legal)

    latency = {name: median_time(lambda: calls(evaluator), LATENCY_ROUNDS) / LATENCY_CALLS * 1e6
               for name, evaluator in evaluators.items()}
    return [RuntimeFigures(name, latency[name], search_speed(evaluator, playouts, moves, width, height, n_in_row))
            for name, evaluator in evaluators.items()]


def onnx_lines(figures: list[RuntimeFigures], playouts: int, moves: int) -> list[str]:
    """The figures as two lines: the latencies, the search speeds."""
    return [f"single-position evaluate_batch, 1 thread: "
            + ", ".join(f"{f.runtime} {f.latency_us:.0f} us" for f in figures),
            f"single-game search, {playouts} playouts/move, {moves} moves: "
            + ", ".join(f"{f.runtime} {f.playouts_per_s:.0f} playouts/s" for f in figures)]


def run_onnx(model: str | Path, moves: int = SEARCH_MOVES, log=print) -> dict:
    """The figures of ``scripts/bench.py --onnx``: the model file on torch, its float32 export
    and the int8 one (``gomoku.lab.int8``), made in memory as ``export_onnx.py`` makes them;
    the search figure over ``moves`` moves."""
    from gomoku.lab.int8 import int8_model
    from nets.checkpoint import load_model
    from nets.onnx_export import onnx_bytes

    net, n_in_row = load_model(model)
    n_in_row = n_in_row or 5
    fp32 = onnx_bytes(net, n_in_row=n_in_row)
    exports = {"onnxruntime": fp32, "onnxruntime int8": int8_model(fp32, net.config.width, net.config.height, n_in_row)}
    figures = onnx_figures(net, exports, SEARCH_PLAYOUTS, moves, n_in_row)
    for line in onnx_lines(figures, SEARCH_PLAYOUTS, moves):
        log(line)
    return {"machine": machine(), "model": str(model), "playouts": SEARCH_PLAYOUTS, "moves": moves,
            "runtimes": [f._asdict() for f in figures]}


def web_figures(site: Path, moves: int, playouts: int = WEB_PLAYOUTS, size: int = 9) -> dict:
    """AI move times in headless Chromium on a size x size board: the person clicks the first
    empty point of a fixed list near the centre after each AI move, the AI (the net + search in
    the Web Worker) answers. A BrowserError without Chromium or when the page has no such board."""
    from gomoku.web.browser import BrowserError, Chromium, Page, StaticServer

    # The clicks on 9x9; on another board the points as far from its centre.
    candidates = [(size // 2 + m // 9 - 4) * size + size // 2 + m % 9 - 4 for m in NINE_CLICKS]
    with StaticServer(site) as server, Chromium() as browser:
        page = Page(browser, server.url)
        page.wait_state("human")
        page.select("size", str(size))
        if browser.evaluate("document.getElementById('size').value") != str(size):
            raise BrowserError(f"the page does not offer a {size}x{size} board for this model")
        page.select("opponent", "az")
        page.select("playouts", str(playouts))
        version = browser.evaluate("navigator.userAgent")
        for _ in range(moves):
            if page.wait_state("human", "over") == "over":
                break
            played = page.moves()
            page.play(next(m for m in candidates if m not in played), ANSWER_TIMEOUT_S)
        timings = [t for t in page.timings() if t["playouts"] == playouts]
    times = [t["ms"] for t in timings]
    return {"size": size, "playouts": playouts, "user_agent": version, "ms_per_move": times,
            "median_ms": statistics.median(times) if times else None}


def run_web(model: str | Path, moves: int, log=print) -> dict:
    """The figures of ``scripts/bench.py --web MOVES``: the model's page, exported into a
    temporary folder, ``moves`` AI moves in headless Chromium."""
    from gomoku.web.export import export_site

    with tempfile.TemporaryDirectory() as folder:
        site = export_site(Path(model), Path(folder) / "site")
        figures = web_figures(site, moves)
    log(f"the page's AI, {figures['playouts']} playouts: {figures['median_ms']} ms a move (median of "
        f"{len(figures['ms_per_move'])}), {figures['user_agent']}")
    return {"machine": machine(), "model": str(model), **figures}
