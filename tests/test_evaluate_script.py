"""scripts/evaluate.py as a user runs it: a subprocess from the repo root, no install needed."""

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gomoku.game.arena import MatchResult

REPO_ROOT = Path(__file__).resolve().parent.parent
SCRIPT = REPO_ROOT / "scripts" / "evaluate.py"


def run(*args, cwd=REPO_ROOT):
    # A clean PYTHONPATH: the script must find the gomoku package by itself.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def test_smoke_run_prints_the_table(tmp_path):
    out = tmp_path / "results.json"
    done = run("--player", "minimax:1", "--opponent", "random", "--games", "2", "--seed", "0", "--json", str(out),
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "2 games per opponent, 9x9, 5 in a row, seed 0"
    assert lines[1] == "player: minimax:1"
    assert lines[2].split()[:2] == ["opponent", "+W"] and "95% CI" in lines[2]
    row = lines[3].split()
    assert row[0] == "random" and row[1].startswith("+") and row[2].startswith("=") and row[3].startswith("-")
    assert 0.0 <= float(row[4]) <= 1.0
    payload = json.loads(out.read_text())
    assert payload["player_spec"] == "minimax:1" and payload["games"] == 2
    [result] = payload["results"]
    assert result["opponent"] == "random" and result["wins"] + result["draws"] + result["losses"] == 2
    assert f"{result['score']:.3f}" == row[4]


def test_same_seed_same_results():
    args = ("--player", "heuristic", "--opponent", "random", "--games", "2", "--seed", "5", "--no-progress",
            "--size", "7", "--n-in-row", "4")
    first, second = run(*args), run(*args)
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout and "7x7, 4 in a row" in first.stdout


def test_bad_spec_exits_2_with_the_valid_forms():
    done = run("--player", "minimax:zero", "--opponent", "random", "--games", "1")
    assert done.returncode == 2
    assert "valid forms" in done.stderr and "az:CHECKPOINT:PLAYOUTS" in done.stderr


@pytest.mark.skipif((REPO_ROOT / "models" / "9x9.pt").exists(), reason="a shipped model exists")
def test_no_arguments_without_a_shipped_model_exits_2():
    done = run()
    assert done.returncode == 2
    assert "no shipped model at models/9x9.pt yet; train one with scripts/train.py or pass --player" in done.stderr
    assert done.stdout == ""


@pytest.mark.skipif(not (REPO_ROOT / "models" / "9x9.pt").exists(), reason="no shipped model")
def test_no_arguments_play_the_shipped_model_against_the_pure_mcts_ladder(monkeypatch, capsys):
    spec = importlib.util.spec_from_file_location("evaluate_script", SCRIPT)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    calls = []

    def fake_evaluate(player, opponents, games, **options):
        calls.append((player, list(opponents), games, options["seed"], options["forced_moves"]))
        return [MatchResult(player, opponent) for opponent in opponents]

    monkeypatch.setattr(script, "evaluate", fake_evaluate)
    monkeypatch.chdir(REPO_ROOT)
    assert script.main([]) == 0
    ladder = ["pure:1000", "pure:3000", "pure:5000", "pure:10000"]  # the README's pure-MCTS rows
    assert calls == [("az:models/9x9.pt:400", ladder, 20, 0, True)]
    assert capsys.readouterr().out.startswith("20 games per opponent, 9x9, 5 in a row, seed 0")


def test_json_into_a_missing_folder_is_refused_before_the_games(tmp_path):
    started = time.monotonic()
    done = run("--player", "minimax:1", "--opponent", "random", "--games", "2000", "--json",
               str(tmp_path / "no" / "such" / "results.json"))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == f"error: --json {tmp_path / 'no' / 'such' / 'results.json'}: there is no folder " \
                                  f"{tmp_path / 'no' / 'such'}"
    assert time.monotonic() - started < 30  # 4000 games were not played first
    done = run("--player", "minimax:1", "--opponent", "random", "--games", "1", "--json", str(tmp_path))
    assert done.returncode == 2 and "is a folder" in done.stderr and "Traceback" not in done.stderr


def test_a_net_for_another_rule_is_a_one_line_error(tmp_path):
    from nets import NetConfig, build_net, save_model

    save_model(tmp_path / "four.pt", build_net(NetConfig()), n_in_row=4)
    done = run("--player", f"az:{tmp_path / 'four.pt'}:8", "--opponent", "random", "--games", "1")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "trained for 4 in a row, not 5" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_ctrl_c_with_workers_stops_at_once_with_the_finished_games(tmp_path):
    """SIGINT to the whole process group, as Ctrl-C in a terminal sends it, while two worker
    processes play: the script ends within seconds, printing and writing the games finished."""
    out = tmp_path / "partial.json"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    process = subprocess.Popen([sys.executable, str(SCRIPT), "--player", "minimax:1", "--opponent", "random",
                                "--games", "5000", "--workers", "2", "--json", str(out)], cwd=REPO_ROOT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    stderr = bytearray()

    def pump():
        while chunk := process.stderr.read1(4096):
            stderr.extend(chunk)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 90
        while not re.search(rb"\| *[1-9]\d*/5000", bytes(stderr)):  # the progress bar: games finished
            assert process.poll() is None and time.monotonic() < deadline, bytes(stderr[-2000:]).decode(errors="replace")
            time.sleep(0.05)
        interrupted = time.monotonic()
        os.killpg(process.pid, signal.SIGINT)
        process.wait(timeout=30)
        took = time.monotonic() - interrupted
        stdout = process.stdout.read()
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    reader.join(timeout=5)
    text = bytes(stderr).decode(errors="replace")
    shown = "\n".join(line for line in text.replace("\r", "\n").splitlines() if "game" not in line)  # no bars
    assert process.returncode == 130, shown[-3000:]
    assert took < 5, took
    assert "Traceback" not in text and "interrupted after" in text, shown[-3000:]
    lines = stdout.decode().splitlines()
    played = int(re.search(r"interrupted after (\d+) of 5000 games", lines[0]).group(1))
    assert 0 < played < 5000
    row = lines[3].split()
    assert row[0] == "random" and sum(int(n[1:]) for n in row[1:4]) == played
    payload = json.loads(out.read_text())
    assert payload["interrupted"] is True and payload["games_played"] == played
    assert payload["games_planned"] == 5000 and payload["results"][0]["games"] == played
