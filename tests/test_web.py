"""The browser page (gomoku/web): the export, the page's net against torch, its search against the
Python search, its classical players and VCF solver against the Python ones (all under node), and a
whole game in a headless Chromium played by clicks."""

import dataclasses
import errno
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from gomoku import Board
from gomoku.players import HeuristicPlayer, MinimaxPlayer, format_point
from gomoku.players.search import PLAYER_C_PUCT
from gomoku.players.alphabeta import AlphaBetaPlayer
from gomoku.web import ExportError, export_site
from gomoku.web.export import BIG_BOARD_PLAYOUTS, STATIC_FILES
from mcts import BatchedMCTS, SearchConfig
from tests.fakes import TACTICS_KEYS, load_script, parts

REPO_ROOT = Path(__file__).resolve().parent.parent
MODEL = REPO_ROOT / "models" / "9x9.pt"  # the 3-conv net with pooled heads
FC_MODEL = REPO_ROOT / "docs" / "results" / "runs" / "previous-9x9" / "9x9.pt"  # conv3 with fc heads, shipped before the tower
HARNESS = REPO_ROOT / "gomoku" / "web" / "harness.js"
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed (the page's scripts run under node)")
TOLERANCE = 1e-4

# Fixed positions (move lists). The tactical ones were found by playing heuristic players from
# random openings: the player to move has a VCF (continuous fours), the opponent has one, the
# opponent has a four to block, both have fours.
OWN_VCF = [42, 33, 37, 41, 22, 49, 78]
THEIR_VCF = [29, 49, 56, 67, 47]
MUST_BLOCK = [23, 40, 36, 31, 70, 22, 49, 13]
BOTH_FOUR = [36, 72, 37, 73, 38, 74, 39, 75]
MIDGAME = [52, 25, 50, 49, 41, 59, 32, 23, 22, 42, 40, 39, 29, 69, 79, 31]
LONG_VCF = [52, 38, 33, 29, 42, 47, 20, 65, 22, 69, 56, 32, 24, 51, 23, 21, 25, 26, 15, 6, 43, 13]
# From a seeded heuristic game (gomoku.lab.bench_threats.game_positions): the opponent would
# have a VCT (continuous threats, no VCF), starting at 57, were it their move; 29 of the 54 moves
# stop it. Then, after a move that does not (the corner), the player to move has that VCT.
THEIR_VCT = [40, 39, 49, 31, 47, 48, 30, 50, 58, 67, 20, 10, 38, 29, 22, 14, 54, 46, 21, 23, 19, 18, 41, 15, 7,
             13, 12]
OWN_VCT = THEIR_VCT + [0]


def random_positions(count: int, seed: int, max_moves: int = 40) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    positions = []
    while len(positions) < count:
        board = Board()
        target = int(rng.integers(1, max_moves))
        while len(board.moves) < target and not board.game_end()[0]:
            board.do_move(int(rng.choice(board.availables)))
        if not board.game_end()[0]:
            positions.append(list(board.moves))
    return positions


def run_node(site: Path, request: dict) -> dict:
    done = subprocess.run([NODE, str(HARNESS), str(site)], input=json.dumps(request), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return export_site(MODEL, tmp_path_factory.mktemp("site"))


# ---------------------------------------------------------------------------- export
def test_export_writes_a_static_site(site):
    for name in (*STATIC_FILES, "model.json", "weights.bin"):
        assert (site / name).is_file(), name
    meta = json.loads((site / "model.json").read_text())
    assert (meta["arch"], meta["head"], meta["width"], meta["height"], meta["n_in_row"]) == ("conv3", "pooled", 9, 9, 5)
    assert "channels" not in meta and meta["parameters"] == 106_050  # conv3's fixed trunk, no BatchNorm
    assert (site / "weights.bin").stat().st_size == 4 * meta["parameters"]
    assert meta["search"]["playouts"] == 400 and meta["search"]["c_puct"] == PLAYER_C_PUCT == 5.0
    assert meta["search"]["forced_moves"] is True
    from gomoku.players.search import CHECK_NODES
    from gomoku.tactics.vct import DEFAULT_VCT_NODES
    assert (meta["search"]["vct"], meta["search"]["vct_nodes"], meta["search"]["check_nodes"]) == (
        True, DEFAULT_VCT_NODES, CHECK_NODES)  # the page's VCT rules and deep checks: the Python player's
    html = (site / "index.html").read_text()
    for script in ("game.js", "app.js"):
        assert f'src="{script}"' in html  # relative paths: the site works from any folder of a host
    assert "importScripts(" in (site / "worker.js").read_text()


def _save_net(path: Path, **config) -> Path:
    from nets import NetConfig, build_net
    from nets.checkpoint import save_model

    save_model(path, build_net(NetConfig(**config)))
    return path


def test_export_refuses_a_model_the_page_cannot_run(tmp_path):
    small = _save_net(tmp_path / "7x7.pt", width=7, height=7)
    with pytest.raises(ExportError, match="7x7 board, the page plays 9x9 only"):
        export_site(small, tmp_path / "out")
    resnet = _save_net(tmp_path / "res.pt", arch="resnet", channels=8, blocks=1, width=7, height=7)
    with pytest.raises(ExportError, match="7x7 board, the page plays 9x9 only"):
        export_site(resnet, tmp_path / "out")
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(ExportError, match="cannot export"):
        export_site(tmp_path / "junk.pt", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_export_script(tmp_path, capsys):
    script = load_script("export_web")
    assert script.main([str(MODEL), "--out", str(tmp_path / "site")]) == 0
    assert (tmp_path / "site" / "index.html").is_file()
    assert "python -m http.server --bind 127.0.0.1" in capsys.readouterr().out  # not every interface
    small = _save_net(tmp_path / "7x7.pt", width=7, height=7)
    assert script.main([str(small), "--out", str(tmp_path / "bad")]) == 2
    assert "the page plays 9x9 only" in capsys.readouterr().err


def test_export_refuses_a_folder_of_other_files_unless_forced(tmp_path, capsys):
    """export_web --out DIR overwrote the index.html of a folder it had not written."""
    script = load_script("export_web")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "index.html").write_text("my own page")
    assert script.main([str(MODEL), "--out", str(mine)]) == 2
    assert _last_error_line(capsys) == (f"error: {mine} already holds index.html and no site of ours: give a new or "
                                        "empty folder, or --force to replace those files")
    assert sorted(p.name for p in mine.iterdir()) == ["index.html"]
    assert (mine / "index.html").read_text() == "my own page"
    assert script.main([str(MODEL), "--out", str(mine), "--force"]) == 0
    assert "my own page" not in (mine / "index.html").read_text()
    assert script.main([str(MODEL), "--out", str(mine)]) == 0  # an earlier export of ours is replaced
    capsys.readouterr()


def test_a_full_disk_leaves_the_previous_site_as_it_was(tmp_path, monkeypatch):
    """A full disk in the middle of an export left a partial site: new weights, the old model.json."""
    from gomoku.web.export import write_site

    site = write_site({"format": "gomoku-zero-web/1", "version": 1}, b"old weights", tmp_path / "site")
    before = {p.name: p.read_bytes() for p in site.iterdir()}

    def full_disk(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full_disk)  # model.json, after weights.bin
    full = f"^cannot write the site into {re.escape(str(site))}: No space left on device$"
    with pytest.raises(ExportError, match=full):
        write_site({"format": "gomoku-zero-web/1", "version": 2}, b"new weights", site)
    monkeypatch.undo()
    assert {p.name: p.read_bytes() for p in site.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]  # no temp folder left beside it


def _last_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and err.splitlines()[-1].count("error:") == 1, err
    return err.splitlines()[-1]


def test_export_script_errors_are_one_line(tmp_path, capsys, monkeypatch):
    import errno

    import gomoku.web.export

    script = load_script("export_web")
    for port in ("99999", "-1"):
        with pytest.raises(SystemExit) as caught:
            script.main([str(MODEL), "--out", str(tmp_path / "site"), "--serve", port])
        assert caught.value.code == 2
        assert "--serve needs a port" in _last_error_line(capsys)
    (tmp_path / "file").write_text("a file, not a folder")
    for out in (tmp_path / "file", tmp_path / "file" / "site"):
        assert script.main([str(MODEL), "--out", str(out)]) == 2
        assert str(out) in _last_error_line(capsys)

    def read_only(source, target, *args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setenv("CHROMIUM", str(tmp_path / "no-chromium-here"))
    assert script.main([str(MODEL), "--out", str(tmp_path / "site"), "--screenshot", str(tmp_path / "x.png")]) == 2
    assert "no-chromium-here" in _last_error_line(capsys)

    monkeypatch.setattr(gomoku.web.export.shutil, "copyfile", read_only)
    assert script.main([str(MODEL), "--out", str(tmp_path / "ro")]) == 2
    assert "cannot write the site into" in _last_error_line(capsys)


def test_the_static_server_serves_files_only(tmp_path, capfd):
    """No folder listings; a NUL byte in the path is a 400, not a traceback; nothing above the folder."""
    import urllib.error
    import urllib.request

    from gomoku.web.browser import StaticServer

    (tmp_path / "site" / "sub").mkdir(parents=True)
    (tmp_path / "site" / "index.html").write_text("the page")
    (tmp_path / "site" / "sub" / "a.txt").write_text("a file")
    (tmp_path / "secret.txt").write_text("outside")

    def status(server, path):
        try:
            with urllib.request.urlopen(server.url + path, timeout=30) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, ""

    for quiet in (True, False):
        with StaticServer(tmp_path / "site", quiet=quiet) as server:
            assert status(server, "") == (200, "the page")
            assert status(server, "sub/a.txt") == (200, "a file")
            assert status(server, "sub/")[0] == 404
            assert status(server, "%00")[0] == 400
            assert status(server, "sub/%00x")[0] == 400
            assert status(server, "../secret.txt") != (200, "outside")
            assert status(server, "%2e%2e/secret.txt") != (200, "outside")
    assert "Traceback" not in capfd.readouterr().err


def test_play_web_serves_the_page_until_ctrl_c(tmp_path):
    """`play.py --web` exports into a temp folder, serves it on localhost and opens a browser
    (here BROWSER is a script that opens nothing and never returns); Ctrl-C stops it and removes
    the folder, even while it still waits for the browser (a race CI once met)."""
    import os
    import re
    import signal
    import sys
    import time
    import urllib.request

    opened = tmp_path / "browser.pid"
    browser = tmp_path / "browser.sh"
    browser.write_text(f"#!/bin/sh\necho $$ > {opened}.part && mv {opened}.part {opened}\nexec sleep 120\n")
    browser.chmod(0o755)
    env = dict(os.environ, BROWSER=str(browser))
    process = subprocess.Popen([sys.executable, str(REPO_ROOT / "scripts" / "play.py"), "--web"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        line = ""
        while "serving" not in line:
            line = process.stdout.readline()
            assert line or process.poll() is None, "play.py --web exited early"
            assert time.monotonic() < deadline
        folder, url = re.search(r"serving (\S+) at (\S+)", line).groups()
        with urllib.request.urlopen(url) as response:
            assert b"gomoku-zero" in response.read()
        with urllib.request.urlopen(url + "model.json") as response:
            assert json.loads(response.read())["arch"] == "conv3"  # models/9x9.pt
        with urllib.request.urlopen(url + "worker.js") as response:
            assert "javascript" in response.headers["Content-Type"]  # a worker script needs a JS type
        while not opened.exists():  # play.py now waits for the browser command
            assert time.monotonic() < deadline
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        assert process.wait(30) == 0
        assert not Path(folder).exists()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if opened.exists():
            os.kill(int(opened.read_text()), signal.SIGKILL)


# ---------------------------------------------------------------------------- the net
@needs_node
def test_page_net_matches_torch(site):
    import torch

    from nets import load_net

    positions = [[], [40], [40, 41, 31], OWN_VCF, MIDGAME, LONG_VCF] + random_positions(14, seed=3)
    answer = run_node(site, {"net": positions})["net"]
    net = load_net(MODEL).eval()
    planes = torch.from_numpy(np.stack([Board.from_moves(m).current_state() for m in positions]))
    with torch.inference_mode():
        log_policy, value = net(planes)
    js_policy = np.array([a["logPolicy"] for a in answer])
    js_value = np.array([a["value"] for a in answer])
    assert np.abs(js_policy - log_policy.numpy()).max() < TOLERANCE
    assert np.abs(js_value - value.numpy()).max() < TOLERANCE


# ---------------------------------------------------------------------------- the search
class FormulaEvaluator:
    """The harness's "formula" evaluator, exactly (every number exact in binary or one division):
    priors proportional to 1 + (7 * move + key) % 11 on the legal moves, value ((key % 17) - 8) / 8,
    key = sum of (point + 1) * (1 own stone, 2 opponent's stone, 3 last move)."""

    def evaluate_batch(self, planes, legal):
        size = legal.shape[1]
        points = np.arange(size)
        priors, values = np.zeros(legal.shape), np.zeros(len(legal))
        for i, (p, ok) in enumerate(zip(planes, legal)):
            own, opponent, last = (p[k].ravel() > 0 for k in range(3))
            key = int(((points + 1) * own).sum() + 2 * ((points + 1) * opponent).sum() + 3 * ((points + 1) * last).sum())
            weights = (1 + (7 * points + key) % 11).astype(np.float64)
            total = float(weights[ok].sum())
            priors[i] = np.where(ok, weights / total, 0.0)
            values[i] = ((key % 17) - 8) / 8
        return priors, values


def game_prefixes(moves: list[int], start: int, step: int = 1) -> list[list[int]]:
    """The positions of one game from ``start`` moves on: searched in turn, the tree is reused."""
    return [moves[:n] for n in range(start, len(moves) + 1, step)]


SEARCH_SEQUENCES = [
    [[]],
    [[40]],
    game_prefixes(MIDGAME, 8),
    [OWN_VCF],
    [THEIR_VCF],
    [MUST_BLOCK],
    [BOTH_FOUR],
    game_prefixes(LONG_VCF, 16),
]
# With the VCT rules (their solves cost most of the Python search's time, so fewer positions): the
# tactical positions, and a game through THEIR_VCT (the root's defence check) to OWN_VCT (its win).
VCT_SEARCH_SEQUENCES = [[[]], [THEIR_VCF], [MUST_BLOCK], [BOTH_FOUR], game_prefixes(LONG_VCF, 16),
                        game_prefixes(OWN_VCT, 25)]
SEARCH_CONFIGS = {
    "classic": {"forced_moves": False},
    "forced": {"forced_moves": True},
    "forced+vcf": {"forced_moves": True, "vcf": True},
    # the Python az player's rules: the root's VCT rules and the VCT leaf checks two moves down
    "forced+vcf+vct": {"forced_moves": True, "vcf": True, "vct": True, "vct_leaf_depth": 2},
}
PLAYOUTS = 160


def _js_config(options: dict) -> dict:
    return {"forcedMoves": options.get("forced_moves", False), "vcf": options.get("vcf", False),
            "vct": options.get("vct", False), "vctLeafDepth": options.get("vct_leaf_depth", 0)}


@needs_node
def test_page_ranks_moves_as_python_does(site):
    """The move played and the final check's order: most visits, then the higher prior, then the
    lower index (SearchResult.ranked_moves), on seeded vectors full of ties."""
    from mcts.result import SearchResult

    rng = np.random.default_rng(5)
    cases = [(rng.integers(0, 3, 81).astype(float), rng.integers(0, 4, 81) / 8) for _ in range(20)]
    cases.append((np.zeros(81), rng.integers(0, 4, 81) / 8))  # no visits: by the priors
    answer = run_node(site, {"ranked": [{"visits": v.tolist(), "priors": p.tolist()} for v, p in cases]})["ranked"]
    by_index = 0
    for (visits, priors), js in zip(cases, answer, strict=True):
        assert js == SearchResult(visits=visits, priors=priors, value=0.0, playouts=1).ranked_moves().tolist()
        by_index += js[0] == int(np.argmax(visits))  # the old rule (the lowest index of the most visited)
    assert by_index < len(cases) // 2  # the cases tell the rules apart


@needs_node
@pytest.mark.parametrize("name", SEARCH_CONFIGS)
def test_page_search_matches_python_search(site, name):
    options = SEARCH_CONFIGS[name]
    fields = {f.name for f in dataclasses.fields(SearchConfig)} | TACTICS_KEYS
    if not set(options) <= fields:
        pytest.skip(f"this checkout's mcts.search lacks {set(options) - fields}")
    sequences = VCT_SEARCH_SEQUENCES if options.get("vct") else SEARCH_SEQUENCES
    jobs = [{"moves": sequence, "playouts": PLAYOUTS, "evaluator": "formula", "config": _js_config(options)}
            for sequence in sequences]
    answer = run_node(site, {"search": jobs})["search"]
    for sequence, js_results in zip(sequences, answer, strict=True):
        search = BatchedMCTS(FormulaEvaluator(), *parts(9, 9, 5, n_playout=PLAYOUTS, **options),
                             rng=np.random.default_rng(0))
        for moves, js in zip(sequence, js_results, strict=True):
            result = search.search([Board.from_moves(moves)])[0]
            assert np.array_equal(np.array(js["visits"]), result.visits), (name, moves)
            assert js["bestMove"] == result.best_move()
            assert js["value"] == pytest.approx(result.value, abs=1e-9)


@needs_node
def test_page_search_takes_the_win_and_blocks_with_the_net(site):
    jobs = [{"moves": [BOTH_FOUR, MUST_BLOCK], "playouts": 50, "evaluator": "net", "config": {}}]
    win, block = run_node(site, {"search": jobs})["search"][0]
    assert win["bestMove"] == 40
    board = Board.from_moves(MUST_BLOCK)
    from gomoku.players import winning_points

    assert block["bestMove"] in winning_points(board, 3 - board.current_player)


# ---------------------------------------------------------------------------- players, VCF
@needs_node
def test_page_players_choose_the_python_players_moves(site):
    positions = [[], [40], OWN_VCF, THEIR_VCF, MUST_BLOCK, MIDGAME] + random_positions(8, seed=11, max_moves=30)
    jobs = [{"kind": kind, "depth": depth, "moves": moves}
            for moves in positions for kind, depth in (("heuristic", 0), ("minimax", 2), ("ab", 1), ("ab", 3))]
    answer = run_node(site, {"players": jobs})["players"]
    for job, move in zip(jobs, answer, strict=True):
        board = Board.from_moves(job["moves"])
        makers = {"heuristic": lambda _: HeuristicPlayer(), "minimax": MinimaxPlayer, "ab": AlphaBetaPlayer}
        assert move == makers[job["kind"]](job["depth"]).get_action(board), job


@needs_node
def test_page_vcf_solver_matches_python(site):
    threats = pytest.importorskip("gomoku.tactics.threats")
    from gomoku.tactics.geometry import Geometry

    positions = [OWN_VCF, THEIR_VCF, MUST_BLOCK, MIDGAME, LONG_VCF] + random_positions(30, seed=7, max_moves=45)
    jobs = [{"moves": m, "nodes": nodes} for m in positions for nodes in (200, 5)]
    answer = run_node(site, {"vcf": jobs})["vcf"]
    solver = threats.VcfSolver(Geometry(9, 9, 5))
    wins = 0
    for job, js in zip(jobs, answer, strict=True):
        board = Board.from_moves(job["moves"])
        cells = np.zeros(82, dtype=np.int8)
        for i, move in enumerate(board.moves):
            cells[move] = 1 + i % 2
        result = solver.solve(cells, board.current_player, job["nodes"])
        assert (js["status"], js["move"], js["nodes"]) == (result.status.value, result.move, result.nodes), job
        wins += result.win
    assert wins >= 2  # the fixed VCF positions


def _cells_of(moves: list[int]) -> np.ndarray:
    cells = np.zeros(82, dtype=np.int8)
    for i, move in enumerate(moves):
        cells[move] = 1 + i % 2
    return cells


@needs_node
def test_page_vct_solver_matches_python(site):
    """vct.js gives gomoku/tactics/vct.py's answers, node for node: status, first move and node count, each
    side attacking, at the default budget and at a small one (out of budget midway), on every position
    of two seeded heuristic games and on random ones; and the defence sets of the first wins."""
    vct = pytest.importorskip("gomoku.tactics.vct")
    from gomoku.tactics.geometry import Geometry
    from gomoku.lab.bench_common import BenchSettings
    from gomoku.lab.bench_threats import game_positions

    games = [list(board.moves) for board in game_positions(BenchSettings(vcf_games=2))]  # the pinned test's
    positions = [OWN_VCT, THEIR_VCT, OWN_VCF, MIDGAME] + games + random_positions(10, seed=13)
    jobs = [{"moves": m, "attacker": attacker, "nodes": nodes}
            for m in positions for attacker in (1, 2) for nodes in (vct.DEFAULT_VCT_NODES, 60)]
    solver = vct.VctSolver(Geometry(9, 9, 5))
    expected = [solver.solve(_cells_of(job["moves"]), job["attacker"], job["nodes"]) for job in jobs]
    defended = [job for job, result in zip(jobs, expected) if result.win and result.nodes > 0][:5]
    answer = run_node(site, {"vct": jobs + [dict(job, defences=True) for job in defended]})["vct"]
    assert len(answer) == len(jobs) + len(defended)
    for job, result, js in zip(jobs, expected, answer):
        assert (js["status"], js["move"], js["nodes"]) == (result.status.value, result.move, result.nodes), job
    statuses = [result.status.value for result in expected]
    assert min(statuses.count(status) for status in ("win", "no win", "unknown")) >= 20
    for job, js in zip(defended, answer[len(jobs):], strict=True):
        cells = _cells_of(job["moves"])
        empty = np.flatnonzero(cells[:-1] == 0)
        stops = solver.defences(cells, 3 - job["attacker"], empty, job["nodes"])
        assert js["stops"] == stops.tolist(), job
    assert len(defended) == 5 and any(job["moves"] == THEIR_VCT for job in defended)


@needs_node
def test_page_search_plays_a_vct_and_stops_the_opponents(site):
    """With its defaults (the Python az player's: VCT on, vct_nodes, leaf checks two moves down) the
    page's search searches only the first move of its VCT (no VCF there), and under the opponent's
    VCT only the moves that stop it, the Python rules' moves; with VCT off it searches others too."""
    from gomoku.players.search import PLAYER_VCT_LEAF_DEPTH, AlphaZeroPlayer
    from gomoku.tactics.geometry import Geometry
    from gomoku.tactics.rules import VCT_LEAF_NODES, FreestyleRules
    from gomoku.tactics.threats import VcfSolver
    from gomoku.tactics.vct import DEFAULT_VCT_NODES, LEAF_VCF_NODES, VctSolver

    defaults = run_node(site, {"defaults": True})["defaults"]
    player = AlphaZeroPlayer(FormulaEvaluator())
    assert (defaults["search"]["vct"], defaults["search"]["vctNodes"], defaults["search"]["vctLeafDepth"]) == (
        player.tactics.vct, player.tactics.vct_nodes, PLAYER_VCT_LEAF_DEPTH)
    assert (defaults["vctNodes"], defaults["vctLeafNodes"], defaults["leafVcfNodes"]) == (
        DEFAULT_VCT_NODES, VCT_LEAF_NODES, LEAF_VCF_NODES)

    geometry = Geometry(9, 9, 5)
    rules = FreestyleRules(geometry, player.tactics)
    jobs = [{"moves": [OWN_VCT, THEIR_VCT], "playouts": PLAYOUTS, "evaluator": "formula", "config": {}},
            {"moves": [THEIR_VCT], "playouts": PLAYOUTS, "evaluator": "formula", "config": {"vct": False}}]
    (own, theirs), (unguarded,) = run_node(site, {"search": jobs})["search"]
    searched = lambda js: set(np.flatnonzero(js["visits"]).tolist())  # noqa: E731

    def root_moves(moves: list[int]) -> set[int]:
        board = Board.from_moves(moves)
        legal = rules.moves_to_search(_cells_of(moves)[None], np.array([board.current_player]), root=True)[1][0]
        return set(np.flatnonzero(legal).tolist())

    cells = _cells_of(OWN_VCT)
    assert not VcfSolver(geometry).solve(cells, 1).win and VctSolver(geometry).solve(cells, 1).move == 57
    assert searched(own) == root_moves(OWN_VCT) == {57} and own["bestMove"] == 57
    cells = _cells_of(THEIR_VCT)
    empty = np.flatnonzero(cells[:-1] == 0)
    stopping = set(empty[VctSolver(geometry).defences(cells, 2, empty)].tolist())
    assert len(stopping) == 29 and root_moves(THEIR_VCT) == stopping
    assert searched(theirs) and searched(theirs) <= stopping
    assert not searched(unguarded) <= stopping


# Positions where the az player's final check passes over the most visited moves of a search whose
# root VCT solves stop at one node: one colour's moves 9, 11 and 17 of a seeded game (heuristic, with
# random second and fourth moves), searched one after the other by one player (the tree kept).
FINAL_CHECK_GAME = [40, 37, 31, 42, 22, 49, 13, 4, 30, 50, 32, 33, 28, 29, 48, 24, 51]
FINAL_CHECK_POSITIONS = [FINAL_CHECK_GAME[:9], FINAL_CHECK_GAME[:11], FINAL_CHECK_GAME]
CHECK_NODES = 2000  # the deep checks' budget here (the player's CHECK_NODES is far more: slow in Python)


@needs_node
def test_page_alphazero_player_deep_checks_match_python(site):
    """The page's AlphaZero player (search.js's AlphaZeroPlayer) gives the Python player's results:
    a VCT found by the first check is played without a search (OWN_VCT), and the final check passes
    over the same most visited moves (the root's VCT solves at one node, so that the search leaves
    some), along a game with the tree kept. Not here: a final check out of budget (CHECK_NODES / 4 a candidate)
    that passes over a move; none was found in 270 positions."""
    from gomoku.players.search import AlphaZeroPlayer
    from gomoku.tactics import DEFAULT_VCT_NODES

    jobs = [{"moves": game_prefixes(OWN_VCT, 26), "config": {}},
            {"moves": FINAL_CHECK_POSITIONS, "config": {"vctNodes": 1}, "vct_nodes": 1},
            {"moves": FINAL_CHECK_POSITIONS, "config": {"vcf": False}, "vcf": False}]  # no VCT rules, no checks
    answer = run_node(site, {"az": [{"moves": job["moves"], "playouts": PLAYOUTS, "evaluator": "formula",
                                     "config": job["config"], "checkNodes": CHECK_NODES} for job in jobs]})["az"]
    refuted = 0
    for job, js_results in zip(jobs, answer, strict=True):
        player = AlphaZeroPlayer(FormulaEvaluator(), n_playout=PLAYOUTS, vcf=job.get("vcf", True),
                                 vct_nodes=job.get("vct_nodes", DEFAULT_VCT_NODES), check_nodes=CHECK_NODES)
        for moves, js in zip(job["moves"], js_results, strict=True):
            result = player.analyse(Board.from_moves(moves))
            assert np.array_equal(np.array(js["visits"]), result.visits), moves
            assert (js["bestMove"], js["playouts"], tuple(js["refuted"])) == (
                result.best_move(), result.playouts, result.refuted), moves
            refuted += bool(result.refuted)
    assert answer[0][-1]["playouts"] == 0 and answer[0][-1]["bestMove"] == 57  # OWN_VCT: no search
    assert refuted == len(FINAL_CHECK_POSITIONS)  # all in the second job, none in the third


@needs_node
def test_page_final_check_looks_past_the_first_candidates_as_python(site):
    """The page's final check, like the Python player's, goes on past the 8 most visited moves
    when all of them are lost (the ab:4:vct game of tests/test_vct.py: E3, ninth, holds)."""
    from gomoku.players import parse_point
    from gomoku.players.search import AlphaZeroPlayer
    from mcts import UniformEvaluator
    from tests.test_vct import GAME_E6, LOST_E6, visited

    board, moves = Board(), []
    for name in GAME_E6.split(","):
        moves.append(parse_point(board, name))
        board.do_move(moves[-1])
    nodes, jobs, expected = 20_000, [], []  # enough for each of these checks (9,000 nodes at most)
    for names in ([*LOST_E6, "E3"], LOST_E6):
        result = visited(board, names)
        jobs.append({"moves": moves, "visits": result.visits.tolist(), "priors": result.priors.tolist(),
                     "checkNodes": nodes})
        result = AlphaZeroPlayer(UniformEvaluator(), n_playout=20).final_check(board, result, None, nodes)
        expected.append({"refuted": list(result.refuted), "bestMove": result.best_move()})
    assert run_node(site, {"finalCheck": jobs})["finalCheck"] == expected
    assert expected[0]["bestMove"] == parse_point(board, "E3") and len(expected[0]["refuted"]) == 8
    assert expected[1] == {"refuted": [], "bestMove": parse_point(board, "E6")}


# ---------------------------------------------------------------------------- the page in Chromium
def _chromium():
    from gomoku.web.browser import find_chromium

    return find_chromium()


needs_chromium = pytest.mark.skipif(
    _chromium() is None, reason="no Chromium here: install Debian's `chromium` (.ci/run does) to play the page")


@needs_chromium
def test_page_plays_a_whole_game_by_clicks(site):
    """Heuristic moves clicked on the board against the page's minimax (depth 2) to the end."""
    from gomoku.web.browser import Chromium, Page, StaticServer

    with StaticServer(site) as server, Chromium() as browser:
        page = Page(browser, server.url)
        assert page.state() == "human" and page.moves() == []
        page.select("opponent", "minimax:2")
        page.click_button("new-game")
        assert page.wait_state("human") == "human"
        chooser = HeuristicPlayer()
        while True:
            state = page.wait_state("human", "over")
            moves = page.moves()
            if state == "over":
                break
            assert len(moves) % 2 == 0  # the person plays Black
            page.click_point(chooser.get_action(Board.from_moves(moves)))
            browser.wait_for(f"document.body.dataset.moves.split(',').length > {len(moves)}")
        board = Board.from_moves(moves)  # every move legal
        ended, winner = board.game_end()
        assert ended and page.winner() == winner
        for n in range(1, len(moves), 2):  # the page's minimax played the Python minimax's moves
            assert moves[n] == MinimaxPlayer(2).get_action(Board.from_moves(moves[:n])), n
        expected = {-1: "Draw", 1: "You win", 2: "The AI wins"}[winner]
        assert expected in page.status()
        lines = browser.evaluate("document.querySelectorAll('#board .win-line').length")
        assert lines == (0 if winner == -1 else 1)
        assert browser.evaluate("document.querySelectorAll('#board .last-dot').length") == 1
        timing = "document.getElementById('timing').textContent"
        last_ai = max(n for n in range(1, len(moves), 2))
        assert f"played {format_point(board, moves[last_ai])} in " in browser.evaluate(timing)
        # Undo takes back the person's last move (and the AI's reply after it): their move again.
        last_own = max(n for n in range(0, len(moves), 2))
        page.click_button("undo")
        page.wait_state("human")
        assert page.moves() == moves[:last_own]
        if last_ai < last_own:  # the AI's last move is still there, and so is its line; one more undo
            assert f"played {format_point(board, moves[last_ai])} in " in browser.evaluate(timing)
            page.click_button("undo")
            page.wait_state("human")
            assert page.moves() == moves[:last_own - 2]
        assert browser.evaluate(timing) == ""  # it named a move taken back (issue 28)


@needs_chromium
def test_page_alphazero_moves_in_the_worker(site):
    """The net and the search in the page's Web Worker: the AI moves first, then answers a click."""
    from gomoku.web.browser import Chromium, Page, StaticServer

    with StaticServer(site) as server, Chromium() as browser:
        page = Page(browser, server.url)
        page.select("playouts", "50")
        page.select("numbers", "true")
        page.select("side", "2")  # the person plays White: a new game where the AI moves first
        page.wait_state("human")
        (first,) = page.moves()
        reply = next(m for m in (40, 30, 50) if m != first)
        page.click_point(reply)
        browser.wait_for("document.body.dataset.moves.split(',').length === 3")
        page.wait_state("human")
        moves = page.moves()
        Board.from_moves(moves)
        timings = page.timings()
        assert [t["playouts"] for t in timings] == [50, 50] and all(t["ms"] > 0 for t in timings)
        assert browser.evaluate("document.querySelectorAll('#board .number').length") == 3
        assert "search, 50 playouts" in browser.evaluate("document.getElementById('est-source').textContent")


# ---------------------------------------------------------------------------- any board size (issue 29)
def _pooled_net(width: int, seed: int = 0):
    """A conv3 net with pooled heads trained (here: initialised) on a width x width board."""
    import torch

    from nets import NetConfig, build_net

    with torch.random.fork_rng():  # seeded weights; the global generator is left as it was
        torch.manual_seed(seed)
        net = build_net(NetConfig(width=width, height=width, head="pooled"))
    with torch.no_grad():  # larger than the initial weights, so that no ReLU layer is all zero
        for parameter in net.parameters():
            parameter.mul_(2.0)
    return net.eval()


def _positions(size: int, count: int, seed: int) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    positions = [[], [size * size // 2]]
    while len(positions) < count:
        board = Board(size, size, 5)
        for _ in range(int(rng.integers(1, 3 * size))):
            board.do_move(int(rng.choice(board.availables)))
            if board.game_end()[0]:
                board.undo_move()
                break
        positions.append(list(board.moves))
    return positions


@pytest.fixture(scope="module")
def pooled_site(tmp_path_factory):
    from gomoku.web.export import net_payload, write_site

    net = _pooled_net(15)
    return net, write_site(*net_payload(net, source="pooled.pt"), tmp_path_factory.mktemp("pooled"))


def test_export_of_a_net_with_pooled_heads(pooled_site, tmp_path):
    from gomoku.web.export import net_payload

    from nets import count_parameters

    net, site = pooled_site
    meta = json.loads((site / "model.json").read_text())
    assert (meta["head"], meta["width"], meta["sizes"]) == ("pooled", 15, [9, 15])
    assert meta["search"]["playouts"] == BIG_BOARD_PLAYOUTS  # it opens on 15x15, where playouts cost more
    assert meta["parameters"] == count_parameters(net)
    assert (site / "weights.bin").stat().st_size == 4 * meta["parameters"]
    assert list(meta["tensors"])[6:] == ["policy1.weight", "policy1.bias", "policy2.weight", "policy2.bias",
                                         "value_conv.weight", "value_conv.bias", "value_fc1.weight",
                                         "value_fc1.bias", "value_fc2.weight", "value_fc2.bias"]
    nine = net_payload(_pooled_net(9))[0]
    assert (nine["head"], nine["sizes"], nine["search"]["playouts"]) == ("pooled", [9, 15], 400)
    fc = json.loads((export_site(FC_MODEL, tmp_path / "fc") / "model.json").read_text())
    assert (fc["head"], fc["sizes"]) == ("fc", [9]) and "heads.policy_fc.weight" in fc["tensors"]
    with pytest.raises(ExportError, match="trained for 4 in a row"):
        net_payload(net, n_in_row=4)


@needs_node
def test_page_net_with_pooled_heads_matches_torch_on_two_sizes(pooled_site):
    _assert_page_net_matches_torch(*pooled_site, sizes=(9, 15))


def _assert_page_net_matches_torch(net, site: Path, sizes: tuple[int, ...]) -> list[dict]:
    """The page's net (node) gives torch's log-policy and value within TOLERANCE on positions of
    each size; returns the node jobs and answers."""
    import torch

    jobs = [{"moves": moves, "size": size} for size in sizes for moves in _positions(size, 8, seed=size)]
    answer = run_node(site, {"net": jobs})["net"]
    for size in sizes:
        mine = [(job, js) for job, js in zip(jobs, answer, strict=True) if job["size"] == size]
        planes = torch.from_numpy(np.stack([Board.from_moves(job["moves"], size, size, 5).current_state()
                                            for job, _ in mine]))
        with torch.inference_mode():
            log_policy, value = net(planes)
        js_policy = np.array([js["logPolicy"] for _, js in mine])
        assert js_policy.shape == (len(mine), size * size)
        assert np.abs(js_policy - log_policy.numpy()).max() < TOLERANCE
        assert np.abs(np.array([js["value"] for _, js in mine]) - value.numpy()).max() < TOLERANCE
        assert value.abs().max() > 1e-3 and log_policy.std() > 1e-3  # not a constant net
    return jobs, answer


@needs_node
def test_page_search_of_one_position_again_and_again_matches_python(site):
    """The same position searched six times by one search (the page: undo and the same move again;
    New game as White): the tree grows while another search fits, then starts afresh, as in Python."""
    sequence = [[40, 41]] * 6
    answer = run_node(site, {"search": [{"moves": sequence, "playouts": 50, "evaluator": "formula",
                                         "config": _js_config({})}]})["search"][0]
    search = BatchedMCTS(FormulaEvaluator(), *parts(9, 9, 5, n_playout=50), rng=np.random.default_rng(0))
    totals = []
    for moves, js in zip(sequence, answer, strict=True):
        result = search.search([Board.from_moves(moves)])[0]
        assert np.array_equal(np.array(js["visits"]), result.visits)
        totals.append(int(result.visits.sum()))
    assert totals == [49, 99, 149, 49, 99, 149]


@needs_node
def test_page_search_and_players_at_15x15_match_python(pooled_site):
    _, site = pooled_site
    sequence = game_prefixes(_positions(15, 4, seed=5)[-1], 10, 3)
    options = {"forced_moves": True, "vcf": True}
    if "vcf" not in {f.name for f in dataclasses.fields(SearchConfig)} | TACTICS_KEYS:
        options.pop("vcf")
    positions = _positions(15, 5, seed=21)
    jobs = [{"kind": kind, "depth": depth, "moves": moves, "size": 15}
            for moves in positions for kind, depth in (("minimax", 2), ("ab", 2))]
    answer = run_node(site, {"search": [{"moves": sequence, "playouts": PLAYOUTS, "evaluator": "formula",
                                         "config": _js_config(options), "size": 15}],
                             "players": jobs})
    search = BatchedMCTS(FormulaEvaluator(), *parts(15, 15, 5, n_playout=PLAYOUTS, **options),
                         rng=np.random.default_rng(0))
    for moves, js in zip(sequence, answer["search"][0], strict=True):
        result = search.search([Board.from_moves(moves, 15, 15, 5)])[0]
        assert np.array_equal(np.array(js["visits"]), result.visits), moves
    for job, move in zip(jobs, answer["players"], strict=True):
        board = Board.from_moves(job["moves"], 15, 15, 5)
        python = (MinimaxPlayer if job["kind"] == "minimax" else AlphaBetaPlayer)(job["depth"])
        assert move == python.get_action(board), job


@needs_chromium
@pytest.mark.parametrize("net_site", ["pooled_site", "resnet_site"])
def test_page_plays_15x15_with_a_pooled_net(net_site, request):
    """The page of a pooled net (conv3, and a residual tower) trained on 15x15 opens on 15x15 (9x9
    offered too); the AlphaZero player answers a click from the worker; another size is a new game
    on a new board."""
    from gomoku.web.browser import Chromium, Page, StaticServer

    _, site = request.getfixturevalue(net_site)
    with StaticServer(site) as server, Chromium() as browser:
        page = Page(browser, server.url)
        page.wait_state("human")
        sizes = "Array.from(document.getElementById('size').options).map((o) => o.value).join()"
        assert browser.evaluate(sizes) == "9,15" and browser.evaluate("document.getElementById('size').value") == "15"
        assert browser.evaluate("document.querySelectorAll('#board rect.hit').length") == 225
        page.select("playouts", "50")
        page.click_point(112)  # H8, the centre
        browser.wait_for("document.body.dataset.moves.split(',').length === 2")
        page.wait_state("human")
        moves = page.moves()
        assert moves[0] == 112 and Board.from_moves(moves, 15, 15, 5).moves == moves
        assert [t["playouts"] for t in page.timings()] == [50]
        page.select("size", "9")
        page.wait_state("human")
        assert page.moves() == [] and browser.evaluate("document.querySelectorAll('#board rect.hit').length") == 81
        page.click_point(40)
        browser.wait_for("document.body.dataset.moves.split(',').length === 2")
        assert page.wait_state("human") == "human" and page.moves()[0] == 40


# ---------------------------------------------------------------------------- residual towers
def _resnet_net(width: int, head: str = "pooled", channels: int = 32, blocks: int = 3, seed: int = 0):
    """A resnet (configs/15x15.yaml's tower by default) trained (here: initialised) on a width x
    width board, its BatchNorm layers given random statistics and affine weights, as training leaves
    them (fresh ones are the identity, which would hide a wrong fold)."""
    import torch
    from torch import nn

    from nets import NetConfig, build_net

    with torch.random.fork_rng():  # seeded weights; the global generator is left as it was
        torch.manual_seed(seed)
        net = build_net(NetConfig(width=width, height=width, arch="resnet", channels=channels, blocks=blocks,
                                  head=head))
        with torch.no_grad():
            for module in net.modules():
                if isinstance(module, nn.BatchNorm2d):
                    module.running_mean.normal_(0.0, 0.5)
                    module.running_var.uniform_(0.2, 3.0)
                    module.weight.uniform_(0.5, 2.0).mul_(torch.randint(0, 2, module.weight.shape) * 2 - 1)
                    module.bias.normal_(0.0, 0.5)
    return net.eval()


@pytest.fixture(scope="module")
def resnet_site(tmp_path_factory):
    from gomoku.web.export import net_payload, write_site

    net = _resnet_net(15)
    return net, write_site(*net_payload(net, source="resnet.pt"), tmp_path_factory.mktemp("resnet"))


def _folded_forward(site: Path, net, planes):
    """The exported net run by torch from model.json and weights.bin: the trunk of folded 3x3
    convolutions with biases, ReLU and residual adds, then the torch net's own heads."""
    import torch
    import torch.nn.functional as F

    meta = json.loads((site / "model.json").read_text())
    floats = np.frombuffer((site / "weights.bin").read_bytes(), dtype="<f4")

    def tensor(name):
        entry = meta["tensors"][name]
        return torch.from_numpy(floats[entry["offset"]:entry["offset"] + int(np.prod(entry["shape"]))]
                                .reshape(entry["shape"]).copy())

    def conv(name, x):
        return F.conv2d(x, tensor(f"{name}.weight"), tensor(f"{name}.bias"), padding=1)

    x = F.relu(conv("stem", planes))
    for block in range(meta["blocks"]):
        x = F.relu(x + conv(f"blocks.{block}.conv2", F.relu(conv(f"blocks.{block}.conv1", x))))
    return net.heads(x)


def test_export_of_a_resnet_folds_batchnorm(resnet_site, tmp_path):
    """The tower's BatchNorm layers are folded into its convolutions: torch (eval mode) and the
    folded net from the exported files agree within TOLERANCE on 9x9 and 15x15; model.json records
    the trunk; the heads are torch's tensors; a 9x9 resnet with fc heads exports too."""
    import torch

    from gomoku.web.export import net_payload

    from nets import count_parameters

    net, site = resnet_site
    meta = json.loads((site / "model.json").read_text())
    assert (meta["arch"], meta["channels"], meta["blocks"], meta["head"], meta["sizes"]) == (
        "resnet", 32, 3, "pooled", [9, 15])
    trunk = ["stem"] + [f"blocks.{b}.conv{n}" for b in range(3) for n in (1, 2)]
    assert list(meta["tensors"]) == [f"{name}.{kind}" for name in trunk for kind in ("weight", "bias")] + [
        "policy1.weight", "policy1.bias", "policy2.weight", "policy2.bias", "value_conv.weight",
        "value_conv.bias", "value_fc1.weight", "value_fc1.bias", "value_fc2.weight", "value_fc2.bias"]
    norms = len(trunk)  # one BatchNorm (weight and bias) a convolution, folded into a bias
    assert meta["parameters"] == count_parameters(net) - norms * 32
    assert (site / "weights.bin").stat().st_size == 4 * meta["parameters"]
    for size in (9, 15):
        planes = torch.from_numpy(np.stack([Board.from_moves(moves, size, size, 5).current_state()
                                            for moves in _positions(size, 6, seed=size + 1)]))
        with torch.inference_mode():
            log_policy, value = net(planes)
            folded_policy, folded_value = _folded_forward(site, net, planes)
        assert (log_policy - folded_policy).abs().max() < TOLERANCE
        assert (value - folded_value).abs().max() < TOLERANCE
        assert value.abs().max() > 1e-3 and log_policy.std() > 1e-3  # not a constant net
    fc_meta, _ = net_payload(_resnet_net(9, head="fc", channels=8, blocks=1))
    assert (fc_meta["arch"], fc_meta["channels"], fc_meta["blocks"], fc_meta["head"]) == ("resnet", 8, 1, "fc")
    assert "heads.policy_fc.weight" in fc_meta["tensors"] and "blocks.0.conv2.bias" in fc_meta["tensors"]


@needs_node
def test_page_net_with_a_resnet_matches_torch(resnet_site, tmp_path):
    """The page's residual tower (folded BatchNorm, non-trivial statistics) gives torch's outputs
    on 9x9 and 15x15, and its copies of the empty board's rows far from the stones are exact: the
    same outputs to the bit as computing every point; a 9x9 resnet with fc heads too."""
    from gomoku.web.export import net_payload, write_site

    jobs, answer = _assert_page_net_matches_torch(*resnet_site, sizes=(9, 15))
    full = run_node(resnet_site[1], {"net": [dict(job, full=True) for job in jobs]})["net"]
    assert full == answer
    fc_net = _resnet_net(9, head="fc", channels=8, blocks=2, seed=1)
    _assert_page_net_matches_torch(fc_net, write_site(*net_payload(fc_net), tmp_path / "fc"), sizes=(9,))


@needs_chromium
def test_the_export_screenshot_plays_on_the_pages_board(pooled_site, tmp_path, monkeypatch):
    """The screenshot's person (minimax) chose its moves on a 9x9 board whatever the page's: on a
    pooled 15x15 net's page its first click fell off the centre and the next position was illegal."""
    from gomoku.web import screenshot

    monkeypatch.setattr(screenshot, "SCREENSHOT_TURNS", 1)
    _, site = pooled_site
    out = tmp_path / "shot.png"
    moves = screenshot.screenshot(site, out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(moves) == 2 and moves[0] == 112  # H8, the centre of 15x15 (40 is E5's number on 9x9)
    assert Board.from_moves(moves, 15, 15).moves == moves


def test_play_web_takes_the_model_for_size_and_refuses_the_windows_options(tmp_path, capsys, monkeypatch):
    """--web served models/9x9.pt whatever --size, --opponent or --playouts said, with no word."""
    from gomoku.web import ExportError
    from gomoku.web.browser import play_in_browser

    play = load_script("play")
    for argv, named in ((["--opponent", "minimax:2"], "--opponent is a window option"),
                        (["--playouts", "1600", "--seed", "3"], "--playouts, --seed are window options")):
        with pytest.raises(SystemExit) as refused:
            play.parse_args(["--web", *argv])
        assert refused.value.code == 2 and capsys.readouterr().err.splitlines()[-1].endswith(
            f": error: {named}: --web serves the page, which has its own settings (opponent, playouts, who plays first)")
    monkeypatch.chdir(REPO_ROOT)
    assert play.web_model(play.parse_args(["--web"])) == Path("models/9x9.pt")
    assert play.web_model(play.parse_args(["--web", "--size", "15"])) == Path("models/15x15.pt")
    assert play.web_model(play.parse_args(["--web", "--size", "13"])) == Path("models/9x9.pt")  # then refused:
    with pytest.raises(ExportError, match="the page of models/9x9.pt plays 9x9, 15x15, not 13x13"):
        play_in_browser(Path("models/9x9.pt"), port=0, open_browser=False, size=13)
    with pytest.raises(ExportError, match="the page of docs/results/runs/previous-9x9/9x9.pt plays 9x9, not 13x13"):
        play_in_browser(Path("docs/results/runs/previous-9x9/9x9.pt"), port=0, open_browser=False, size=13)
    assert play.web_model(play.parse_args(["--web", "--model", str(MODEL), "--size", "13"])) == MODEL


@needs_chromium
def test_the_page_fits_a_phone_wide_screen(site):
    """At 390 px wide the settings box (a fieldset, whose min-width is its content's) and its menus
    were wider than the screen: the page scrolled sideways (401 against 390 px)."""
    from gomoku.web.browser import Chromium, Page, StaticServer

    with StaticServer(site) as server, Chromium(width=390, height=844) as browser:
        Page(browser, server.url).wait_state("human")
        width = browser.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], width
        past = browser.evaluate("Array.from(document.querySelectorAll('fieldset select')).filter((s) => "
                                "s.getBoundingClientRect().right > s.closest('fieldset').getBoundingClientRect().right)"
                                ".map((s) => s.id)")
        assert past == [], past  # no menu sticks out of its box


def test_a_plain_kill_stops_play_web_as_ctrl_c_does(tmp_path, monkeypatch, capsys):
    """SIGTERM ended play.py --web without removing its temp folder (Ctrl-C did remove it)."""
    import os
    import signal

    from gomoku.web import browser

    real_sleep = browser.time.sleep

    def killed(seconds):  # the serving loop's sleep: a kill arrives
        os.kill(os.getpid(), signal.SIGTERM)
        real_sleep(5)

    before = signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr(browser.time, "sleep", killed)
    monkeypatch.setattr(browser.tempfile, "tempdir", str(tmp_path))  # its temp folder goes here
    browser.play_in_browser(MODEL, port=0, open_browser=False)
    assert capsys.readouterr().out.splitlines()[-1] == "stopped"
    assert [p for p in tmp_path.iterdir() if p.name.startswith("gomoku-web-")] == []  # the folder went
    assert signal.getsignal(signal.SIGTERM) == before


@pytest.mark.parametrize("failure", ["returns False", "raises"])
def test_play_web_says_so_when_it_cannot_open_a_browser(monkeypatch, capsys, failure):
    """play.py --web said nothing when no browser could be opened (a server, no display)."""
    import webbrowser

    from gomoku.web.browser import open_browser_at

    def no_browser(url, *args, **kwargs):
        if failure == "raises":
            raise webbrowser.Error("could not locate runnable browser")
        return False

    monkeypatch.setattr(webbrowser, "open", no_browser)
    assert open_browser_at("http://127.0.0.1:8123/") is False
    assert capsys.readouterr().out == ("could not open a browser here: open http://127.0.0.1:8123/ in one (on this "
                                       "machine, or over an SSH tunnel)\n")
    monkeypatch.setattr(webbrowser, "open", lambda url, *args, **kwargs: True)
    assert open_browser_at("http://127.0.0.1:8123/") is True and capsys.readouterr().out == ""


def test_a_click_on_a_stone_or_after_the_end_says_why_on_the_page(site):
    """A click on an occupied point gave no feedback on the page (the window says "E5 is taken")."""
    five = [0, 9, 1, 10, 2, 11, 3, 12, 4]  # Black's line on the top row
    answers = run_node(site, {"clicks": [{"moves": [40], "move": 40}, {"moves": [40, 30], "move": 30},
                                         {"moves": [40], "move": 41}, {"moves": [112], "move": 112, "size": 15},
                                         {"moves": five, "move": 80}]})["clicks"]
    assert answers[:4] == [f"{format_point(Board(), 40)} is taken: pick an empty point.",
                           f"{format_point(Board(), 30)} is taken: pick an empty point.", None,
                           f"{format_point(Board(15, 15), 112)} is taken: pick an empty point."]
    assert answers[4].startswith("The game is over")
    app = (site / "app.js").read_text()
    assert "G.clickProblem(state.board, move)" in app and "flash(problem)" in app  # the page says it


@needs_chromium
def test_a_click_on_a_stone_shows_a_status_message_in_the_page(site):
    from gomoku.web.browser import Chromium, Page, StaticServer

    with StaticServer(site) as server, Chromium() as browser:
        page = Page(browser, server.url)
        page.select("opponent", "minimax:2")
        page.click_button("new-game")
        page.wait_state("human")
        page.click_point(40)
        browser.wait_for("document.body.dataset.moves.split(',').length === 2")
        page.wait_state("human")
        page.click_point(40)
        assert page.status() == f"{format_point(Board(), 40)} is taken: pick an empty point."
        assert len(page.moves()) == 2
