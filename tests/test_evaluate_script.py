"""scripts/evaluate.py as a user runs it: a subprocess, the package installed (this checkout on the path)."""

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

from gomoku.matches.stops import Terminated
from gomoku.matches.records import MatchResult
from tests.fakes import checkout_env, load_script

REPO_ROOT = Path(__file__).resolve().parent.parent
SCRIPT = REPO_ROOT / "scripts" / "evaluate.py"


def run(*args, cwd=REPO_ROOT):
    # This checkout's package alone on the path, as the README's install gives it (from any folder).
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=cwd, env=checkout_env(), capture_output=True,
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
    assert payload["options"] == {"seconds": None, "leaves": 1, "forced_moves": True, "vcf": True,
                                  "check_nodes": None, "c_puct": None}  # the players' own settings
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


@pytest.mark.skipif((REPO_ROOT / "models" / "9x9.pt").exists(),
                    reason="checks the message for a checkout without models/9x9.pt, and this one has it")
def test_no_arguments_without_a_shipped_model_exits_2():
    done = run()
    assert done.returncode == 2
    assert "no shipped model at models/9x9.pt yet; train one with scripts/train.py or pass --player" in done.stderr
    assert done.stdout == ""


@pytest.mark.skipif(not (REPO_ROOT / "models" / "9x9.pt").exists(), reason="no shipped model at models/9x9.pt")
def test_no_arguments_play_the_shipped_model_against_the_pure_mcts_ladder(monkeypatch, capsys):
    script = load_script("evaluate")
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


def test_json_into_a_missing_folder_is_refused_before_the_games(tmp_path, monkeypatch, capsys):
    script = load_script("evaluate")

    def no_games(*args, **kwargs):
        raise AssertionError("the games were played before the check")

    monkeypatch.setattr(script, "evaluate", no_games)
    target = tmp_path / "no" / "such" / "results.json"
    assert script.main(["--player", "minimax:1", "--opponent", "random", "--games", "2000", "--json", str(target)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.strip() == f"error: --json {target}: there is no folder {target.parent}"
    done = run("--player", "minimax:1", "--opponent", "random", "--games", "1", "--json", str(tmp_path))
    assert done.returncode == 2 and "is a folder" in done.stderr and "Traceback" not in done.stderr


def test_games_out_writes_every_game_so_that_it_replays_to_its_result(tmp_path):
    from gomoku.game.board import Board
    from gomoku.players import parse_point

    out = tmp_path / "games.jsonl"
    done = run("--player", "heuristic", "--opponent", "random", "--opponent", "minimax:1", "--games", "3",
               "--seed", "4", "--games-out", str(out), "--no-progress")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(line["opponent"], line["game"]) for line in lines] == [
        ("random", 1), ("random", 2), ("random", 3), ("minimax:1", 1), ("minimax:1", 2), ("minimax:1", 3)]
    assert [line["player_colour"] for line in lines] == ["black", "white", "black"] * 2
    for line in lines:
        board = Board()
        for name in line["moves"].split(","):
            board.do_move(parse_point(board, name))
        over, winner = board.game_end()
        assert over and line["plies"] == len(board.moves) and line["forfeit"] is None
        own = 1 if line["player_colour"] == "black" else 2
        assert line["result"] == ("draw" if winner == -1 else "win" if winner == own else "loss")
    wins = sum(line["result"] == "win" for line in lines[:3])
    assert f"+{wins} " in next(row for row in done.stdout.splitlines() if row.startswith("random"))
    # every line says how to play its game again: the command's seed and search options (the players' own: null)
    assert all(line["seed"] == 4 and line["options"] == lines[0]["options"] for line in lines)
    assert lines[0]["options"] == {"seconds": None, "leaves": 1, "forced_moves": True, "vcf": True,
                                   "check_nodes": None, "c_puct": None}
    done = run("--player", "minimax:1", "--opponent", "random", "--games", "1",
               "--games-out", str(tmp_path / "no" / "games.jsonl"))
    assert done.returncode == 2 and done.stderr.startswith("error: --games-out ") and "there is no folder" in done.stderr
    done = run("--player", "random", "--opponent", "random", "--games", "1", "--size", "27",
               "--games-out", str(tmp_path / "wide.jsonl"))  # before the games, not after them
    assert done.returncode == 2 and done.stdout == "" and done.stderr.strip() == (
        "error: --games-out writes moves in standard notation, columns A to Z: --size 27 is past 26")


def test_a_net_for_another_rule_is_a_one_line_error(tmp_path):
    from nets import NetConfig, build_net, save_model

    save_model(tmp_path / "four.pt", build_net(NetConfig()), n_in_row=4)
    done = run("--player", f"az:{tmp_path / 'four.pt'}:8", "--opponent", "random", "--games", "1", "--n-in-row", "5")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "trained for 4 in a row, not 5" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_the_board_defaults_to_the_one_the_rated_net_was_trained_on(tmp_path, capsys):
    from nets import NetConfig, build_net, save_model

    save_model(tmp_path / "seven.pt", build_net(NetConfig(width=7, height=7)), n_in_row=4)
    script = load_script("evaluate")
    spec = f"az:{tmp_path / 'seven.pt'}:4"
    assert script.main(["--player", spec, "--opponent", "random", "--games", "1", "--no-progress"]) == 0
    assert capsys.readouterr().out.startswith("1 game per opponent, 7x7, 4 in a row, seed 0\n")
    # --size and --n-in-row still choose; a net that cannot play them is refused in one line
    assert script.main(["--player", spec, "--opponent", "random", "--games", "1", "--size", "9"]) == 2
    assert capsys.readouterr().err.strip() == f"error: {spec}: the net is for a 7x7 board, not 9x9"
    # a size or rule given as 0 is refused, not taken for "not given"
    for option in ("--size", "--n-in-row"):
        assert script.main(["--player", "random", "--opponent", "random", "--games", "1", option, "0"]) == 2
        assert "must be a positive integer, got 0" in capsys.readouterr().err
    # a player without a net plays 9x9, 5 in a row
    assert script.main(["--player", "random", "--opponent", "random", "--games", "1", "--no-progress"]) == 0
    assert capsys.readouterr().out.startswith("1 game per opponent, 9x9, 5 in a row, seed 0\n")
    clock = load_script("clock_match")
    save_model(tmp_path / "seven5.pt", build_net(NetConfig(width=7, height=7)), n_in_row=5)
    assert clock.main(["--player", f"az:{tmp_path / 'seven5.pt'}:4", "--opponent", "random", "--openings", "1",
                       "--stones", "48", "--json", str(tmp_path / "clock.json")]) == 0
    capsys.readouterr()
    assert json.loads((tmp_path / "clock.json").read_text())["size"] == 7


def test_ctrl_c_with_workers_stops_at_once_with_the_finished_games(tmp_path):
    """SIGINT to the whole process group, as Ctrl-C in a terminal sends it, while two worker
    processes play: the script ends within seconds, printing and writing the games finished."""
    out = tmp_path / "partial.json"
    env = checkout_env()
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
        os.killpg(process.pid, signal.SIGINT)
        process.wait(timeout=30)  # a hang guard: it stops within a game, "interrupted after" says how far
        stdout = process.stdout.read()
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    reader.join(timeout=5)
    text = bytes(stderr).decode(errors="replace")
    shown = "\n".join(line for line in text.replace("\r", "\n").splitlines() if "game" not in line)  # no bars
    assert process.returncode == 130, shown[-3000:]
    assert "Traceback" not in text and "interrupted after" in text, shown[-3000:]
    lines = stdout.decode().splitlines()
    played = int(re.search(r"interrupted after (\d+) of 5000 games", lines[0]).group(1))
    assert 0 < played < 5000
    row = lines[3].split()
    assert row[0] == "random" and sum(int(n[1:]) for n in row[1:4]) == played
    payload = json.loads(out.read_text())
    assert payload["interrupted"] is True and payload["games_played"] == played
    assert payload["games_planned"] == 5000 and payload["results"][0]["games"] == played


class Running:
    """evaluate.py in the background, its stderr read as it comes (the progress bar)."""

    def __init__(self, *args, ignore_sigint=False):
        env = checkout_env()
        # A shell starts a background job with SIGINT ignored; so does this, when asked.
        setup = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None
        self.process = subprocess.Popen([sys.executable, str(SCRIPT), *args], cwd=REPO_ROOT, env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=setup)
        self.stderr = bytearray()
        self.reader = threading.Thread(target=self._pump, daemon=True)
        self.reader.start()

    def _pump(self):
        while chunk := self.process.stderr.read1(4096):
            self.stderr.extend(chunk)

    def wait_for(self, pattern: bytes, timeout=90):
        deadline = time.monotonic() + timeout
        while not re.search(pattern, bytes(self.stderr)):
            assert self.process.poll() is None and time.monotonic() < deadline, self.text()[-2000:]
            time.sleep(0.05)

    def stop(self, signum):
        """Send ``signum``; (exit status, stdout, stderr without the progress bars)."""
        try:
            self.process.send_signal(signum)
            self.process.wait(timeout=60)
            stdout = self.process.stdout.read().decode()
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
        self.reader.join(timeout=5)
        return self.process.returncode, stdout, self.text()

    def text(self):
        text = bytes(self.stderr).decode(errors="replace")
        return "\n".join(line for line in text.replace("\r", "\n").splitlines() if "game/s" not in line
                         and "s/game" not in line and "it/s" not in line)


@pytest.mark.parametrize("signum, ignore_sigint, status, said", [
    (signal.SIGTERM, False, 143, "stopped by SIGTERM"),
    (signal.SIGINT, True, 130, "interrupted")])
def test_sigterm_and_sigint_to_a_background_job_keep_the_finished_games(tmp_path, signum, ignore_sigint, status,
                                                                        said):
    """Issue 28: only a foreground Ctrl-C kept the finished games; SIGTERM lost them and SIGINT to
    a background job (started with SIGINT ignored) did nothing."""
    out = tmp_path / "partial.json"
    running = Running("--player", "minimax:1", "--opponent", "random", "--games", "5000", "--json", str(out),
                      ignore_sigint=ignore_sigint)
    running.wait_for(rb"\| *[1-9]\d*/5000")  # the progress bar: games finished
    returncode, stdout, stderr = running.stop(signum)
    assert returncode == status and "Traceback" not in stderr, stderr[-3000:]
    played = int(re.search(rf"{said} after (\d+) of 5000 games", stdout.splitlines()[0]).group(1))
    assert f"{said} after {played} of 5000 games: the results of the finished games follow" in stderr
    row = stdout.splitlines()[3].split()
    assert row[0] == "random" and sum(int(n[1:]) for n in row[1:4]) == played > 0
    payload = json.loads(out.read_text())
    assert payload["interrupted"] is True and payload["games_played"] == played == payload["results"][0]["games"]


def test_an_interrupt_before_any_game_finished_says_so_and_writes_nothing(tmp_path):
    """Issue 28: it wrote "score 0.000" for an opponent no game was played against."""
    out = tmp_path / "none.json"
    running = Running("--player", "pure:20000", "--opponent", "pure:20000", "--games", "2", "--json", str(out))
    running.wait_for(rb"0/2")  # the progress bar: the first game is on
    returncode, stdout, stderr = running.stop(signal.SIGTERM)
    assert returncode == 143 and stdout == "" and not out.exists()
    assert stderr.strip().endswith("stopped by SIGTERM before any game finished: no results"), stderr
    done = subprocess.run([sys.executable, str(SCRIPT), "--player", "human", "--opponent", "random", "--games", "2",
                           "--no-progress"], cwd=REPO_ROOT, input="E5\n", capture_output=True, text=True, timeout=60)
    assert done.returncode == 130 and "Traceback" not in done.stderr  # the person's input ended: no traceback
    assert done.stderr == "stopped (the input of human ended) before any game finished: no results\n"


def test_partial_results_name_opponents_without_games():
    from gomoku.matches.records import format_table

    empty = MatchResult("minimax:1", "pure:1000")
    assert empty.format_row().split()[-4:] == ["-", "no", "games", "played"] and "0.000" not in format_table([empty])
    assert empty.to_dict()["score"] is None and empty.to_dict()["ci95"] is None


def test_seconds_must_be_a_positive_number_and_the_help_shows_the_defaults():
    for seconds in ("0", "nan", "-2", "inf"):
        done = run("--player", "minimax:1", "--opponent", "random", "--seconds", seconds)
        assert done.returncode == 2 and "--seconds must be a positive number of seconds" in done.stderr
    text = " ".join(run("--help").stdout.split())
    for default in ("default: az:models/9x9.pt:400", "default: pure:1000 pure:3000 pure:5000 pure:10000",
                    "alternating (default: 20)", "choices (default: 0)",
                    "height, at most 32 (default: the board the player's net was trained on, else 9)",
                    "to win (default: the player's net's rule, else 5)"):
        assert default in text, default


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_an_output_that_cannot_be_created_is_refused_before_the_games_and_a_check_leaves_no_file(tmp_path, capsys):
    """/proc passes the permission check as root, and the write failed after the games (exit 1)."""
    from gomoku.matches.outputs import output_problem

    assert output_problem(Path("/proc/gomoku-results.json"), "--json") == (
        "--json /proc/gomoku-results.json: cannot be written (No such file or directory)")
    fresh, kept = tmp_path / "new.json", tmp_path / "old.json"
    kept.write_text("kept")
    assert output_problem(fresh) is None and output_problem(kept) is None
    assert not fresh.exists() and kept.read_text() == "kept"  # the trial write created nothing, changed nothing
    main = load_script("evaluate").main
    assert main(["--player", "minimax:1", "--opponent", "random", "--games", "1000",
                 "--games-out", "/proc/gomoku-games.jsonl"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.strip() == ("error: --games-out /proc/gomoku-games.jsonl: cannot be written "
                                         "(No such file or directory)")


def test_a_seconds_cap_shows_the_thinking_time(capsys):
    assert load_script("evaluate").main(["--player", "minimax:1", "--opponent", "pure:20", "--games", "1",
                                         "--seconds", "5", "--no-progress"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith(", --seconds 5.0") and "moves: playouts reached, thinking time" in lines
    assert re.search(r"^  pure:20 +[0-9]+ playouts/searched move +[0-9.]+ s/move  slowest +[0-9.]+ s$", lines[-1])


def test_seconds_with_a_spec_that_has_its_own_time_is_an_error(capsys):
    """--seconds 0.1 with az:...:1.5s: the moves took 0.76 s (the spec's time), and nothing said so."""
    from tests.fakes import load_script

    main = load_script("evaluate").main
    for specs, named in ((["--player", "az:models/9x9.pt:1.5s", "--opponent", "random"], "az:models/9x9.pt:1.5s"),
                         (["--player", "minimax:1", "--opponent", "random", "--opponent", "pure:50ms"], "pure:50ms")):
        assert main([*specs, "--games", "1", "--seconds", "0.1", "--no-progress"]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.strip().splitlines() == [
            f"error: --seconds caps the players given playouts (az:PATH:400 --seconds 1), not a spec's own time a "
            f"move: {named}"]


def test_clock_match_names_the_player_whose_record_it_prints(tmp_path):
    """scripts/clock_match.py prints the player above its row (the row is named by the opponent, as
    in evaluate.py's table), so "+W =D -L" reads as the player's; the JSON holds the same counts."""
    out = tmp_path / "match.json"
    done = subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "clock_match.py"), "--player", "heuristic",
                           "--opponent", "random", "--openings", "1", "--seed", "3", "--json", str(out),
                           "--games-out", str(tmp_path / "games.jsonl")],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())["result"]
    games = [json.loads(line) for line in (tmp_path / "games.jsonl").read_text().splitlines()]
    assert [game["player_colour"] for game in games] == ["black", "white"]  # one opening, colours swapped
    assert games[0]["moves"].split(",")[:2] == games[1]["moves"].split(",")[:2]  # its two stones first
    assert sum(game["result"] == "win" for game in games) == result["wins"]
    assert [(game["seed"], game["player_c_puct"], game["check_nodes"]) for game in games] == [(3, None, None)] * 2
    lines = done.stdout.splitlines()
    assert lines[0] == ("1 openings of 2 stones anywhere, each twice with colours swapped, 9x9, 5 in a row, "
                        "seed 3")
    assert [line.split(":")[0] for line in lines[1:3]] == ["game 1/2", "game 2/2"]
    title, header, row = lines[3:6]
    assert title == "player: heuristic" and header.split()[:2] == ["opponent", "+W"]
    assert row.split()[:2] == ["random", f"+{result['wins']}"]
    assert f"+{result['wins']} ={result['draws']} -{result['losses']}" in row


def test_clock_match_refuses_bad_arguments_and_outputs_before_building_the_players(tmp_path, monkeypatch, capsys):
    script = load_script("clock_match")

    def refuse(*args, **kwargs):
        raise AssertionError("a player was built before the arguments were checked")

    monkeypatch.setattr(script, "make_player", refuse)
    missing = tmp_path / "no" / "a.json"
    for argv, message in (
            (["--json", str(missing)], f"--json {missing}: there is no folder {missing.parent}"),
            (["--games-out", str(missing)], f"--games-out {missing}: there is no folder {missing.parent}"),
            (["--json", str(tmp_path)], f"--json {tmp_path} is a folder, not a file"),
            (["--stones", "200"], "--stones must be from 0 to 80 on a 9x9 board (a move left), got 200"),
            (["--stones", "-1"], "--stones must be from 0 to 80 on a 9x9 board (a move left), got -1"),
            (["--stones", "25", "--size", "5"], "--stones must be from 0 to 24 on a 5x5 board (a move left), got 25"),
            (["--stones", "0", "--openings", "2"],
             "--openings 2 --stones 0: only 1 different opening(s) of 0 stone(s) exist, not 2"),
            (["--size", "4"], "--size must be from 5 to 26, got 4"),
            (["--seed", "-1"], "--seed must be at least 0, got -1"),
            (["--centre", "-1"], "--centre must be at least 0, got -1"),
            (["--centre", "0", "--openings", "2"],
             "--openings 2 --stones 2 --centre 0: 2 stones do not fit the 1 point(s) within 0 of the centre"),
            (["--openings", "0"], "--openings must be from 1 to 50,000, got 0"),
            (["--check-nodes", "-1"], "--check-nodes must be at least 0, got -1"),
            (["--player-c-puct", "0"], "--player-c-puct must be a positive number, got 0"),
            (["--player-c-puct", "nan"], "--player-c-puct must be a positive number, got nan"),
            (["--player-c-puct", "2.5"], "--player-c-puct is for an az player, not 'heuristic'")):
        with pytest.raises(SystemExit) as exit_:
            script.main(["--player", "heuristic", "--opponent", "random", *argv])
        out, err = capsys.readouterr()
        assert exit_.value.code == 2 and out == ""
        assert err.splitlines()[-1].endswith(f": error: {message}"), argv  # argparse's form: usage, then this
    assert not missing.parent.exists()
    with pytest.raises(SystemExit):  # every option has a help text
        script.main(["--help"])
    helps = capsys.readouterr().out.splitlines()
    for option in ("--player SPEC", "--opponent SPEC", "--size SIZE", "--seed SEED", "--json PATH"):
        line = next(line for line in helps if line.strip().startswith(option))
        assert len(line.split()) > 2, f"{option}: no help"


def test_clock_match_refuses_a_net_for_another_board_before_the_games(capsys, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)  # the spec's path is relative, as a user types it
    script = load_script("clock_match")
    fc_net = "docs/results/runs/retrain-9x9/best.pt"  # fc heads: 9x9 only (a pooled net would play 15x15)
    code = script.main(["--player", f"az:{fc_net}:10", "--opponent", "random", "--size", "15", "--openings", "1"])
    out, err = capsys.readouterr()
    assert code == 2 and "game 1" not in out
    assert err.strip() == f"error: az:{fc_net}:10: the net is for a 9x9 board, not 15x15"


def test_clock_match_ctrl_c_is_one_line_and_closes_the_players(monkeypatch, capsys):
    script = load_script("clock_match")
    closed = []

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(script, "play_openings", interrupted)
    monkeypatch.setattr(script, "close_players", lambda *players: closed.extend(players))
    assert script.main(["--player", "heuristic", "--opponent", "random", "--openings", "1"]) == 130
    assert capsys.readouterr().err.strip() == "interrupted before any game finished: no results"
    assert len(closed) == 2


def test_clock_match_keeps_the_finished_games_when_stopped(monkeypatch, tmp_path, capsys):
    """It printed "no table" and wrote nothing, so a long clock match stopped late lost every game."""
    script = load_script("clock_match")
    real = script.play_openings

    def three_games_then_sigterm(player, opponent, openings, on_game):
        def on_game_then_stop(index, record):
            on_game(index, record)
            if index == 2:
                raise Terminated()  # what SIGTERM raises
        return real(player, opponent, openings, on_game=on_game_then_stop)

    monkeypatch.setattr(script, "play_openings", three_games_then_sigterm)
    out, games = tmp_path / "m.json", tmp_path / "g.jsonl"
    assert script.main(["--player", "heuristic", "--opponent", "random", "--openings", "4", "--seed", "1",
                        "--json", str(out), "--games-out", str(games)]) == 143
    printed, err = capsys.readouterr()
    assert err.strip() == ("stopped by SIGTERM after 3 of 8 games: the results of the finished games follow "
                           "(colours are not balanced)")
    payload = json.loads(out.read_text())
    assert (payload["interrupted"], payload["games_played"], payload["games_planned"]) == (True, 3, 8)
    result = payload["result"]
    assert result["wins"] + result["draws"] + result["losses"] == 3 == len(games.read_text().splitlines())
    assert [json.loads(line)["player_colour"] for line in games.read_text().splitlines()] == ["black", "white",
                                                                                            "black"]
    assert f"+{result['wins']} ={result['draws']} -{result['losses']}" in printed


def test_a_negative_seed_and_a_human_in_worker_processes_are_refused_in_one_line(capsys):
    """numpy's "expected non-negative integer" named no option; a human player in worker
    processes (no keyboard) killed a worker with a traceback."""
    script = load_script("evaluate")
    with pytest.raises(SystemExit) as refused:
        script.main(["--player", "minimax:1", "--opponent", "random", "--games", "2", "--seed", "-1"])
    assert refused.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(": error: --seed must be at least 0, got -1")
    assert script.main(["--player", "human", "--opponent", "random", "--games", "2", "--workers", "2",
                        "--no-progress"]) == 2
    assert capsys.readouterr().err.strip() == ("error: 'human' plays from the keyboard, which worker processes "
                                               "do not have: use one worker")
    with pytest.raises(SystemExit) as refused:  # it played a 1000x1000 board, for hours
        script.main(["--player", "random", "--opponent", "random", "--games", "1", "--size", "1000"])
    assert refused.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(": error: --size must be at most 32, got 1000")
    with pytest.raises(SystemExit) as refused:  # it said "leaves_per_step must be >= 1" (with az players only)
        script.main(["--player", "minimax:1", "--opponent", "random", "--games", "2", "--leaves", "0"])
    assert refused.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(": error: --leaves must be at least 1, got 0")
    with pytest.raises(SystemExit) as refused:
        load_script("play").parse_args(["--seed", "-5"])
    assert refused.value.code == 2 and capsys.readouterr().err.splitlines()[-1].endswith("--seed must be at least 0, got -5")


def test_c_puct_must_be_positive_and_reaches_the_az_players_alone(monkeypatch, capsys):
    script = load_script("evaluate")
    for value in ("0", "-1", "nan", "inf"):
        with pytest.raises(SystemExit) as refused:
            script.main(["--player", "minimax:1", "--opponent", "random", "--c-puct", value])
        assert refused.value.code == 2
        assert capsys.readouterr().err.splitlines()[-1].endswith(f"--c-puct must be a positive number, got {value}")
    # with no az player in the match, the az players' options are refused (they were ignored)
    assert script.main(["--player", "minimax:1", "--opponent", "random", "--c-puct", "2.5", "--leaves", "4"]) == 2
    assert capsys.readouterr().err.strip() == "error: --leaves --c-puct: for az players, and none plays in this match"
    import gomoku.matches.arena as arena
    built, make = [], arena.make_player

    def spy(spec, **options):
        built.append(make(spec, **options))
        return built[-1]

    monkeypatch.setattr(arena, "make_player", spy)
    model = REPO_ROOT / "models" / "9x9.pt"
    assert script.main(["--player", f"az:{model}:3", "--opponent", "random", "--games", "2", "--c-puct", "2.5",
                        "--no-progress", "--check-nodes", "0"]) == 0
    # the printed results say how they were played
    assert capsys.readouterr().out.startswith("2 games per opponent, 9x9, 5 in a row, seed 0, --check-nodes 0, "
                                              "--c-puct 2.5\n")
    searching = [player for player in built if hasattr(player, "config")]
    # home_board and the spec's check build the player only to read its board and check it (the
    # player's own c_puct, 5); the 2 games' players search with 2.5
    assert [player.config.c_puct for player in searching] == [5.0, 5.0, 2.5, 2.5]


def test_clock_match_player_c_puct_sets_the_players_alone(monkeypatch, tmp_path, capsys):
    script = load_script("clock_match")
    built, make = [], script.make_player

    def spy(spec, **options):
        built.append(make(spec, **options))
        return built[-1]

    monkeypatch.setattr(script, "make_player", spy)
    out = tmp_path / "h2h.json"
    assert script.main(["--player", "az:models/9x9.pt:3", "--opponent", "az:models/9x9.pt:3", "--openings", "1",
                        "--player-c-puct", "2.5", "--check-nodes", "0", "--json", str(out)]) == 0
    player, opponent = built
    assert (player.config.c_puct, opponent.config.c_puct) == (2.5, 5.0)
    assert player.check_nodes == opponent.check_nodes == 0  # --check-nodes: both az players
    assert json.loads(out.read_text())["player_c_puct"] == 2.5
    assert "player: az:models/9x9.pt:3 (c_puct 2.5)" in capsys.readouterr().out.splitlines()
