"""Match outputs that survive a kill and belong to one run (issue 58, items 6 and 9), and the
match scripts' messages after a stop (colours, the playouts footer, absurd sizes)."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gomoku.matches.stops import Terminated
from gomoku.matches.games import play_game
from gomoku.matches.records import MatchResult, colours_note
from gomoku.matches.outputs import LOCK_SUFFIX, TEMP_SUFFIX, MatchOutputs, OutputInUse
from gomoku.players import RUN_BEST_MODEL, RUN_CHECKPOINT, RandomPlayer, parse_spec
from tests.fakes import load_script

REPO_ROOT = Path(__file__).resolve().parent.parent
HANG_GUARD_S = 90  # a bounded wait for what should come in seconds


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.parametrize("script, args", [
    ("evaluate.py", ["--player", "random", "--opponent", "random", "--games", "100000", "--no-progress"]),
    ("clock_match.py", ["--player", "random", "--opponent", "random", "--openings", "3000"])])
def test_a_sigkill_leaves_the_finished_games_on_disk(tmp_path, script, args):
    """Both files were written only at the end: a SIGKILL after 12 finished games left none."""
    games, summary = tmp_path / "games.jsonl", tmp_path / "summary.json"
    process = subprocess.Popen([sys.executable, str(REPO_ROOT / "scripts" / script), *args, "--games-out",
                                str(games), "--json", str(summary)], cwd=REPO_ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + HANG_GUARD_S
        while len(lines_of(games)) < 5:  # (a line is written whole, flushed: never half of one)
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        process.kill()
        process.wait()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    finished = lines_of(games)
    payload = json.loads(summary.read_text())
    played = payload["games_played"]
    assert payload["in_progress"] is True and played in (len(finished) - 1, len(finished))  # the game in flight
    result = payload["results"][0] if "results" in payload else payload["result"]
    assert result["games"] == played
    assert [line["game"] for line in finished] == list(range(1, len(finished) + 1))
    with MatchOutputs(games, summary):  # the next run: a temp file the kill may have left is gone
        assert not list(tmp_path.glob(f"*{TEMP_SUFFIX}"))


def test_an_output_in_use_by_another_run_is_refused_in_one_line(tmp_path, capsys):
    """Two runs given the same --json both exited 0 and the last writer won."""
    script = load_script("evaluate")
    summary, games = tmp_path / "summary.json", tmp_path / "games.jsonl"
    match = ["--player", "random", "--opponent", "random", "--games", "2", "--no-progress"]
    with MatchOutputs(summary=summary):  # another run writing it
        assert script.main([*match, "--json", str(summary)]) == 2
        err = capsys.readouterr().err
        assert err == (f"error: --json {summary} is in use by another run (pid {os.getpid()}, its lock "
                       f"{summary}{LOCK_SUFFIX})\n")
        assert not summary.exists()
        assert script.main([*match, "--games-out", str(games)]) == 0  # another file: no conflict
    with MatchOutputs(games=games):
        assert script.main([*match, "--json", str(summary), "--games-out", str(games)]) == 2
        assert capsys.readouterr().err.startswith(f"error: --games-out {games} is in use by another run")
    clock = load_script("clock_match")
    with MatchOutputs(summary=summary):
        assert clock.main(["--player", "random", "--opponent", "random", "--openings", "1", "--json",
                           str(summary)]) == 2
        assert "is in use by another run" in capsys.readouterr().err
    assert script.main([*match, "--json", str(summary)]) == 0  # given back: free again
    assert json.loads(summary.read_text())["results"][0]["games"] == 2
    assert not (tmp_path / f"summary.json{LOCK_SUFFIX}").exists()  # removed with the lock


def test_a_lock_left_by_a_killed_run_holds_nothing(tmp_path):
    summary = tmp_path / "summary.json"
    Path(f"{summary}{LOCK_SUFFIX}").write_text("12345\n")  # a run killed while it held the file
    half = tmp_path / f".summary.json.k1ll3d00{TEMP_SUFFIX}"  # ... and was writing it
    half.write_text('{"games"')
    other = tmp_path / f".other.json.k1ll3d00{TEMP_SUFFIX}"  # another file's: not this run's to remove
    other.write_text("{")
    with MatchOutputs(summary=summary) as outputs:
        assert not half.exists() and other.exists()
        outputs.write_summary({"games": 1})
        with pytest.raises(OutputInUse):
            MatchOutputs(summary=summary)
    assert json.loads(summary.read_text()) == {"games": 1}


def test_the_same_file_for_both_outputs_is_refused(tmp_path, capsys):
    script = load_script("evaluate")
    out = tmp_path / "out.json"
    assert script.main(["--player", "random", "--opponent", "random", "--games", "2", "--json", str(out),
                        "--games-out", str(out)]) == 1
    assert capsys.readouterr().err == f"error: --games-out and --json are the same file, {out}\n"


def test_colours_are_balanced_after_an_even_number_of_alternating_games():
    """After Ctrl-C both scripts always said "(colours are not balanced)", after 4 games too."""
    result = MatchResult("a", "b")
    record = play_game(RandomPlayer(), RandomPlayer())
    for index in range(3):
        result.add(record, player_first=index % 2 == 0)
        assert colours_note([result]) == ("" if index % 2 else " (colours are not balanced)")
    assert colours_note([result, MatchResult("a", "c")]) == " (colours are not balanced)"


def test_clock_match_stopped_after_four_games_says_nothing_of_colours(monkeypatch, tmp_path, capsys):
    script = load_script("clock_match")
    real = script.play_openings

    def four_games_then_sigterm(player, opponent, openings, on_game):
        def on_game_then_stop(index, record):
            on_game(index, record)
            if index == 3:
                raise Terminated()  # what SIGTERM raises
        return real(player, opponent, openings, on_game=on_game_then_stop)

    monkeypatch.setattr(script, "play_openings", four_games_then_sigterm)
    out = tmp_path / "m.json"
    assert script.main(["--player", "heuristic", "--opponent", "random", "--openings", "4", "--json", str(out)]) == 143
    assert capsys.readouterr().err == ("stopped by SIGTERM after 4 of 8 games: the results of the finished games "
                                       "follow\n")
    assert json.loads(out.read_text())["games_played"] == 4


def test_evaluate_interrupted_after_balanced_games_says_nothing_of_colours(monkeypatch, capsys):
    script = load_script("evaluate")
    real = script.evaluate

    def two_games_then_ctrl_c(*args, on_game, **options):
        def on_game_then_stop(match, index, record):
            on_game(match, index, record)
            if index == 1:
                raise KeyboardInterrupt
        return real(*args, on_game=on_game_then_stop, **options)

    monkeypatch.setattr(script, "evaluate", two_games_then_ctrl_c)
    assert script.main(["--player", "random", "--opponent", "random", "--games", "6", "--no-progress"]) == 130
    assert capsys.readouterr().err == "interrupted after 2 of 6 games: the results of the finished games follow\n"


def test_the_playouts_footer_names_the_player_once_over_several_opponents(capsys):
    """It printed the player's line once per opponent, unlabelled."""
    script = load_script("evaluate")
    assert script.main(["--player", "pure:30", "--opponent", "random", "--opponent", "heuristic", "--games", "2",
                        "--no-progress"]) == 0
    out = capsys.readouterr().out
    footer = out[out.index("moves: playouts reached"):].splitlines()[1:]
    assert [line.split()[0] for line in footer] == ["pure:30", "random", "heuristic"]
    assert footer[0].split()[1:3] == ["(all", "games)"] and footer[0].count("playouts/searched move") == 1


def test_absurd_match_sizes_are_refused_in_one_line(capsys):
    """--games 1000000000000 allocated 1.7 GB before the first game; pure:99999999999999999999ms
    was accepted."""
    script = load_script("evaluate")
    with pytest.raises(SystemExit) as stop:
        script.main(["--player", "random", "--opponent", "random", "--games", "1000000000000"])
    assert stop.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(
        "error: --games must be from 1 to 100,000, got 1,000,000,000,000")
    with pytest.raises(SystemExit):
        load_script("clock_match").main(["--player", "random", "--opponent", "random", "--openings", "1000000000000"])
    assert capsys.readouterr().err.splitlines()[-1].endswith(
        "error: --openings must be from 1 to 50,000, got 1,000,000,000,000")
    with pytest.raises(ValueError, match=r"the time must be at most 86400 s \(a day\), got '99999999999999999999ms'"):
        parse_spec("pure:99999999999999999999ms")
    assert parse_spec("pure:86400s").seconds == 86400


def test_a_runs_best_pt_before_its_first_evaluation_points_to_its_checkpoint(tmp_path, capsys):
    """README's evaluate.py --player az:runs/9x9/best.pt:400 early in a run said "no checkpoint",
    with no hint that best.pt comes at the first evaluation and checkpoint.pt plays meanwhile."""
    from gomoku.training.evaluation import BEST_MODEL
    from gomoku.training.pipeline import CHECKPOINT

    assert (RUN_BEST_MODEL, RUN_CHECKPOINT) == (BEST_MODEL, CHECKPOINT)
    run = tmp_path / "run"
    run.mkdir()
    (run / CHECKPOINT).write_bytes(b"")  # its first iteration's save (only its name matters here)
    script = load_script("evaluate")
    assert script.main(["--player", f"az:{run / BEST_MODEL}:400", "--opponent", "random", "--games", "2"]) == 2
    assert capsys.readouterr().err == (
        f"error: no checkpoint at {run / BEST_MODEL} yet: a run writes it at its first evaluation (every "
        f"eval.check_freq games); until then play its latest model, az:{run / CHECKPOINT}:400\n")
