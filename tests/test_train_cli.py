"""scripts/train.py as a user meets it: the banner, the end line, resuming with the command line
that started the run, and one-line errors for hostile input (fault injection for the files)."""

from __future__ import annotations

import errno
import logging
import os
import signal
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

import gomoku.training.pipeline as pipeline_module
from gomoku.training.config import load_config
from gomoku.training.pipeline import TrainPipeline
from gomoku.training.progress import RunTarget
from nets import default_device
from nets.checkpoint import FORMAT, atomic_write
from tests.fakes import load_script, metrics_records

ROOT = Path(__file__).resolve().parents[1]
SMOKE = str(ROOT / "configs" / "smoke.yaml")


@pytest.fixture
def train(capsys):
    """train.py's main, run in this process: returns (exit code, stdout, stderr lines)."""
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    main = load_script("train").main

    def call(*argv: str) -> tuple[int, str, list[str]]:
        try:
            code = main(list(argv))
        except SystemExit as exit_:  # argparse
            code = exit_.code
        out, err = capsys.readouterr()
        return code, out, err.strip().splitlines()

    yield call
    for number, handler in handlers.items():
        signal.signal(number, handler)


def test_resume_with_the_command_line_that_started_the_run(tmp_path, train, caplog):
    run = tmp_path / "R"
    line = ["--config", SMOKE, "--run-dir", str(run), "--no-progress", "--set", "board.width=9",
            "--set", "board.height=9", "--set", "board.n_in_row=5", "--set", "selfplay.parallel_games=2",
            "--set", "selfplay.games_per_iteration=2", "--set", "search.vct=false",  # (not under test)
            "--set", "search.n_playout=8", "--set", "seed=3", "--set", "net.channels=8"]
    code, out, err = train(*line, "--max-iterations", "1")
    assert code == 0, err
    assert "run directory: " in out and "(a new run)" in out and "board: 9x9, 5 in a row" in out
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        code, out, err = train(*line, "--resume", "--max-iterations", "1")
    assert code == 0, err
    assert "resumed at iteration 1" in out
    assert "differs" not in caplog.text and "resuming with changes" not in caplog.text
    assert [r["iteration"] for r in metrics_records(run)] == [1, 2]
    assert metrics_records(run)[-1]["resumed"] == {"from_iteration": 1, "config_changes": {}}
    # A key that may change, changed on the same line: applied and recorded, no false "differs" warning.
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        code, _, err = train(*line, "--set", "train.lr=1e-3", "--resume", "--max-iterations", "1")
    assert code == 0, err
    assert "differs" not in caplog.text and "train.lr 0.002 -> 0.001" in caplog.text
    assert metrics_records(run)[-1]["resumed"]["config_changes"] == {"train.lr": [0.002, 0.001]}
    # The config file differing from the run, with no --set saying so: the run's value is kept, and said.
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        code, _, err = train(*line[:-6], *line[-4:], "--resume", "--max-iterations", "1")
    assert code == 0, err
    assert "search.n_playout (run 8, given 16)" in caplog.text
    # What may not change still may not: the config file without the --set of seed, board and net.
    code, _, err = train("--config", SMOKE, "--run-dir", str(run), "--resume", "--no-progress")
    assert code == 2 and len(err) == 1 and "seed: the run was trained with 3, the config given asks for 0" in err[0]
    code, _, err = train(*line, "--set", "board.n_in_row=4", "--resume", "--no-progress")
    assert code == 2 and len(err) == 1 and "board.n_in_row: the run was trained with 5, --set asks for 4" in err[0]


def test_banner_progress_and_the_end_line(tmp_path, train, caplog):
    run = tmp_path / "R"
    with caplog.at_level(logging.INFO):
        code, out, err = train("--config", SMOKE, "--run-dir", str(run), "--no-progress",
                               "--set", "train.game_batch_num=8", "--max-minutes", "60")
    assert code == 0, err
    for text in (f"run directory: {run} (a new run)", f"config: {SMOKE}",
                 f"training on {default_device().type}; self-play: 1 worker",
                 "stops at 8 games (train.game_batch_num) or 60 min of run time", "evaluation every 8 games"):
        assert text in out
    assert "iter 1: 4/8 games" in caplog.text and "positions/s" in caplog.text and "end in ~" in caplog.text
    assert "evaluation at 8 games: pure:20 +" in caplog.text and f"{run / 'best.pt'} written" in caplog.text
    assert "done: reached 8 games (target 8, train.game_batch_num)" in out
    assert out.strip().endswith(f"play its best model: python scripts/play.py --model {run / 'best.pt'}")
    # No evaluation yet: the end line says when best.pt comes instead.
    code, out, _ = train("--config", SMOKE, "--run-dir", str(tmp_path / "S"), "--no-progress", "--max-iterations", "1")
    assert code == 0 and "done: played 1 iteration(s) (--max-iterations)" in out
    assert "no best.pt yet: the first evaluation comes at 8 games" in out


def test_the_end_line_says_how_to_train_on_past_the_limit_that_stopped_the_run(tmp_path, train):
    end_message = load_script("train").end_message

    def hint(games: int, wall_s: float, target: RunTarget, max_minutes: float | None = None,
             overrides: tuple[str, ...] = ()) -> str:
        pipeline = SimpleNamespace(stop_reason="(why)", games_played=games, wall_time=wall_s,
                                   config=load_config(SMOKE, list(overrides)))
        pipeline.stopped_by = target.limit_met(games, wall_s, 1)  # as run() finds it
        last = end_message(pipeline, tmp_path, target, max_minutes).splitlines()[-1]
        assert last.startswith("no best.pt yet: ") and " (train longer: the same command with --resume" in last
        return last.partition("--resume")[2]

    assert hint(12, 10.0, RunTarget(12, 120.0)) == " --set train.game_batch_num=N, N above 12)"
    # Workers that played past the target (8/7 games): N must be above what the run has played.
    assert hint(8, 10.0, RunTarget(7, 120.0)) == " --set train.game_batch_num=N, N above 8)"
    assert hint(4, 181.0, RunTarget(12, 120.0), 2.0) == (" and a larger --max-minutes: it counts the run's time "
                                                        "over all its sessions, 0:03:01 so far)")
    assert hint(4, 181.0, RunTarget(12, 120.0), None, ("train.max_minutes=2",)) == (
        " and --set train.max_minutes=M, M above 2: it counts the run's time over all its sessions, 0:03:01 so far)")
    assert hint(4, 181.0, RunTarget(12, 120.0), 2.0, ("train.max_minutes=5",)) == (
        " and a larger --max-minutes and --set train.max_minutes=M, M above 5: the smaller wins; both count the "
        "run's time over all its sessions, 0:03:01 so far)")
    assert hint(4, 10.0, RunTarget(12, 120.0, 1), 2.0) == ": --max-iterations counts the iterations of one session)"
    # As a user meets it: stopped by --max-minutes, the end line says to raise it, not the games.
    code, out, err = train("--config", SMOKE, "--run-dir", str(tmp_path / "R"), "--no-progress",
                           "--max-minutes", "1e-9")
    assert code == 0, err
    done, last = out.strip().splitlines()[-2:]
    assert done.startswith("done: reached ") and "of run time (limit 1e-09 min)" in done
    assert last.endswith(" so far)") and "--resume and a larger --max-minutes: it counts the run's time" in last
    assert "game_batch_num" not in last


def test_the_end_line_without_best_pt_says_why(tmp_path):
    """Before the first evaluation: when it comes; after evaluations that chose no best model
    (under eval.select_by: ladder, a score of 0 writes no best.pt): that, and when the next comes."""
    end_message = load_script("train").end_message

    def reason(games: int, overrides: tuple[str, ...] = ()) -> str:
        pipeline = SimpleNamespace(stop_reason="(why)", games_played=games, wall_time=1.0, stopped_by=None,
                                   config=load_config(SMOKE, list(overrides)))
        return end_message(pipeline, tmp_path, RunTarget(100, None, 1)).splitlines()[-1].partition(" (train")[0]

    assert reason(4) == "no best.pt yet: the first evaluation comes at 8 games"
    assert reason(8) == ("no best.pt yet: no evaluation has yet scored above 0 against the pure-MCTS ladder; the next "
                         "comes at 16 games")
    assert reason(17, ("eval.opponents=[random, heuristic]", "eval.select_by=opponents")) == (
        "no best.pt yet: no evaluation so far was chosen as best by its score against random, heuristic; the next "
        "comes at 24 games")


@pytest.mark.parametrize("leftover", ["best.pt", "current.pt", "current.pt.pending-000001", "best.pt.pending-000003"])
def test_a_new_run_refuses_a_folder_with_model_files_of_another_run(tmp_path, train, leftover):
    run = tmp_path / "R"
    run.mkdir()
    (run / leftover).write_bytes(b"a model of another run")
    code, _, err = train("--config", SMOKE, "--run-dir", str(run), "--no-progress")
    assert code == 2 and err == [f"error: {run} holds files of a run but no checkpoint.pt ({leftover}); choose "
                                 f"another --run-dir"]
    assert sorted(p.name for p in run.iterdir()) == sorted([leftover, "train.lock"])


def test_the_end_estimate_counts_max_iterations():
    from gomoku.training.progress import RunProgress

    where = [(0.0, 0, 0)]  # the run's (wall time, games, iteration), as committed
    progress = RunProgress(lambda: where[0], 100, RunTarget(1000, None, 3))
    where[0] = (10.0, 4, 1)  # one iteration of 4 games in 10 s; 2 more to play
    assert progress.eta() == (240.0, 20.0)  # evaluation at 100 games: 96 games at 2.5 s; the end: 2 iterations


def test_the_end_estimate_under_a_time_limit_counts_whole_iterations():
    """--max-minutes 2: after a first iteration of 1:44 it said "end in ~0:00:16", but the limit is
    checked after each iteration, so the run went on for a whole iteration more (4:26 in all)."""
    from gomoku.training.progress import RunProgress

    where = [(0.0, 0, 0)]
    progress = RunProgress(lambda: where[0], 400, RunTarget(1200, 120.0))
    where[0] = (104.0, 16, 1)
    assert progress.eta()[1] == 104.0  # 16 s left: one more iteration of 104 s
    progress = RunProgress(lambda: where[0], 400, RunTarget(1200, 300.0))  # a session resumed there
    assert progress.eta() == ((400 - 16) * 6.5, 208.0)  # at the run's pace: 196 s left, two iterations
    where[0] = (208.0, 32, 2)
    assert progress.eta()[1] == 104.0  # 92 s left at 104 s an iteration
    where[0] = (310.0, 48, 3)
    assert progress.eta()[1] == 0.0  # past the limit: this iteration was the last


def test_train_max_minutes_ends_the_run(tmp_path):
    config = load_config(SMOKE, ["train.max_minutes=1e-9", "train.game_batch_num=100"])
    pipeline = TrainPipeline(config, tmp_path, device="cpu", progress=False)
    pipeline.run()
    assert [r["iteration"] for r in metrics_records(tmp_path)] == [1]  # any iteration takes longer than the limit
    assert pipeline.stop_reason.startswith("reached ") and "of run time" in pipeline.stop_reason
    # the smaller of train.max_minutes and max_wall_s wins
    assert pipeline.target(max_wall_s=30.0).wall_s == 60 * 1e-9
    assert TrainPipeline(None, tmp_path, resume=True, progress=False,
                         overrides=["train.max_minutes=0"]).target(max_wall_s=30.0).wall_s == 30.0


@pytest.mark.parametrize("argv, message", [
    (["--max-iterations", "-1"], "--max-iterations: must be >= 1, got -1"),
    (["--max-iterations", "0"], "--max-iterations: must be >= 1, got 0"),
    (["--max-minutes", "nan"], "--max-minutes: must be a finite number > 0"),
    (["--max-minutes", "0"], "--max-minutes: must be a finite number > 0"),
    (["--set", "search.n_playout=["], "error: override 'search.n_playout=[': the value is not valid YAML"),
    (["--set", "eval.opponents=[minimax:0]"], "error: eval.opponents[0]: bad player spec 'minimax:0'"),
    (["--set", "search.fast_playouts=1"], "error: search.fast_playouts: must be 0 (off) or in 2..n_playout - 1"),
    (["--set", "seed=-3"], "error: seed: must be in 0..4294967295"),
])
def test_bad_arguments_are_one_line_errors(tmp_path, train, argv, message):
    code, _, err = train("--config", SMOKE, "--run-dir", str(tmp_path / "R"), "--no-progress", *argv)
    assert code == 2 and message in err[-1]
    assert not (tmp_path / "R").exists()
    if err[-1].startswith("error: "):
        assert len(err) == 1


def test_a_bad_set_value_on_resume_and_in_an_ablation_variant(tmp_path, train, capsys):
    run = tmp_path / "R"
    TrainPipeline(load_config(SMOKE), run, device="cpu", progress=False).close()  # a new run, at iteration 0
    code, _, err = train("--run-dir", str(run), "--resume", "--set", "search.n_playout=[")
    assert code == 2 and len(err) == 1 and "the value is not valid YAML" in err[0]
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        code = load_script("ablate").main(["--config", SMOKE, "--variant", "x search.n_playout=[", "--minutes", "1",
                                       "--root", str(tmp_path / "abl"), "--opponent", "random"])
    finally:
        for number, handler in handlers.items():
            signal.signal(number, handler)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "override 'search.n_playout=[': the value is not valid YAML" in err[0]
    from gomoku.lab.ablation import Variant, run_ablation

    for minutes, seed, message in ((float("nan"), 0, "minutes must be a finite number > 0"),
                                   (1.0, -1, "seed must be in 0..4294967295, got -1")):
        with pytest.raises(ValueError, match=message):
            run_ablation(SMOKE, [Variant.parse("x")], tmp_path / "abl", minutes, ["random"], 2, seed=seed)
    assert not (tmp_path / "abl").exists()


def test_a_run_dir_that_is_a_file_or_a_dangling_link(tmp_path, train):
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "gone")
    for run, message in ((afile, f"run directory {afile} is a file, not a directory"),
                         (link, f"run directory {link} is a link to {tmp_path / 'gone'}, which does not exist"),
                         (afile / "sub", f"cannot create run directory {afile / 'sub'}: {afile} is not a directory")):
        code, _, err = train("--config", SMOKE, "--run-dir", str(run), "--no-progress")
        assert code == 2 and len(err) == 1 and err[0].startswith(f"error: {message}")
    assert afile.read_text() == "not a folder" and not (tmp_path / "gone").exists()


class _FullDisk:
    """A file handle on a disk that fills up after ``room`` bytes."""

    def __init__(self, handle, room: int):
        self.handle, self.room = handle, room

    def write(self, data) -> int:
        if len(data) > self.room:
            raise OSError(errno.ENOSPC, "No space left on device")
        self.room -= len(data)
        return self.handle.write(data)

    def flush(self) -> None:
        self.handle.flush()


def test_a_full_disk_during_a_checkpoint_save(tmp_path, train, monkeypatch):
    run = tmp_path / "R"
    line = ["--config", SMOKE, "--run-dir", str(run), "--no-progress", "--set", "train.game_batch_num=8"]
    saves = []

    def save_on_a_full_disk(path, payload, before_replace=None):  # torch.save itself, onto a full disk
        saves.append(payload["iteration"])
        room = 10**9 if payload["iteration"] < 2 else 5000
        atomic_write(path, lambda handle: torch.save({"format": FORMAT, **payload},
                                                     _FullDisk(handle, room)), before_replace)

    monkeypatch.setattr(pipeline_module, "save_checkpoint", save_on_a_full_disk)
    code, _, err = train(*line)
    assert code == 1 and saves == [0, 1, 2]
    assert "Traceback" not in "\n".join(err)
    assert err[-1:] == [f"error: cannot write {run / 'checkpoint.pt'}: No space left on device; the run stays at its "
                   f"last saved iteration (free some space, then --resume)"]
    assert torch.load(run / "checkpoint.pt", weights_only=True)["iteration"] == 1  # the last good one, intact
    assert not [p for p in run.rglob("*.tmp")]
    monkeypatch.undo()
    code, out, err = train(*line, "--resume")  # space freed: the lost iteration is played again
    assert code == 0, err
    assert [r["iteration"] for r in metrics_records(run)] == [1, 2]


def test_sigterm_during_the_first_save_says_the_run_is_saved(tmp_path, train, monkeypatch):
    run = tmp_path / "R"
    real_save = pipeline_module.save_checkpoint

    def save_then_kill(path, payload, before_replace=None):
        def before():  # `kill` arrives while the first checkpoint is being written
            os.kill(os.getpid(), signal.SIGTERM)
            if before_replace is not None:
                before_replace()
        real_save(path, payload, before)

    monkeypatch.setattr(pipeline_module, "save_checkpoint", save_then_kill)
    code, _, err = train("--config", SMOKE, "--run-dir", str(run), "--no-progress")
    assert code == 130
    assert err[-1] == f"interrupted; the new run is saved in {run} at iteration 0 (continue with --resume)"
    monkeypatch.undo()
    assert torch.load(run / "checkpoint.pt", weights_only=True)["iteration"] == 0
    code, _, err = train("--run-dir", str(run), "--resume", "--no-progress", "--max-iterations", "1")
    assert code == 0, err


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_selfplay_device_cuda_without_cuda(tmp_path, train):
    code, _, err = train("--config", SMOKE, "--run-dir", str(tmp_path / "R"), "--no-progress",
                         "--set", "selfplay.device=cuda")
    assert code == 2 and err == ["error: selfplay.device: cuda, but CUDA is not available here (use cpu or auto: "
                                 "--set selfplay.device=auto)"]
    assert not (tmp_path / "R").exists()


def test_the_progress_bar_shows_games_of_the_target_and_the_phase(tmp_path, capsys):
    pipeline = TrainPipeline(load_config(SMOKE), tmp_path, device="cpu", progress=True)
    pipeline.run(max_iterations=2)
    bar = capsys.readouterr().err.replace("\r", "\n")
    for text in ("0/12 games |", "run 0:00:00, end in ? (timing the first iteration) | self-play", "4/12 games |",
                 "| training 1/", "8/12 games |", "| evaluation vs pure:20 2/2", "positions/s, evaluation in ~",
                 "end in ~"):
        assert text in bar, text
    assert not [t for t in threading.enumerate() if t.name == "progress-clock"]  # the bar's clock stopped


def test_the_bar_ticks_each_second_on_a_terminal_only(monkeypatch):
    from gomoku.training.progress import RunProgress

    for terminal in (False, True):
        monkeypatch.setattr(sys.stderr, "isatty", lambda: terminal)
        progress = RunProgress(lambda: (0.0, 0, 0), 100, RunTarget(1000))
        progress.open(enabled=True)
        try:
            clocks = [t for t in threading.enumerate() if t.name == "progress-clock"]
            assert len(clocks) == terminal  # a log file or a pipe gets no line a second
        finally:
            progress.close()
    assert not [t for t in threading.enumerate() if t.name == "progress-clock"]


def test_the_banner_says_games_at_once_and_the_default_run_directory_as_the_docs_show_it(tmp_path, monkeypatch):
    """"2 worker processes, 16 games each" while each played 8 of the iteration's 16 (16 is how many
    it plays at once); the default run directory was printed as a full path, the docs show runs/9x9."""
    from gomoku.training.backends.actors import selfplay_description

    config = load_config("configs/9x9.yaml", ["selfplay.workers=2", "selfplay.runtime=torch", "selfplay.device=cpu"])
    assert "2 worker processes, 16 games at once each, nets on cpu (torch)" == selfplay_description(config, "cpu")
    script = load_script("train")
    root = Path(script.REPO_ROOT)
    monkeypatch.chdir(root)
    assert script.default_run_dir("configs/9x9.yaml") == Path("runs/9x9")
    monkeypatch.chdir(tmp_path)
    assert script.default_run_dir("configs/9x9.yaml") == root / "runs" / "9x9"


def test_a_lock_file_that_is_a_folder_is_one_line_naming_it(tmp_path, train):
    """train.lock as a folder: "[Errno 21] Is a directory"."""
    run = tmp_path / "R"
    (run / "train.lock").mkdir(parents=True)
    code, _, err = train("--config", SMOKE, "--run-dir", str(run), "--no-progress")
    assert code == 2 and err == [f"error: {run / 'train.lock'} is not a regular file (a folder?): remove it, or "
                                 "train in another --run-dir"]


class _FullDiskHandle:
    """An open file whose writes fail as on a full disk (everything else is the real file's)."""

    def __init__(self, handle):
        self._handle = handle

    def write(self, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    def __getattr__(self, name):
        return getattr(self._handle, name)


def test_a_full_disk_at_the_start_of_a_run_names_the_file(tmp_path, train, monkeypatch):
    """Training on a full disk, leaving only train.lock, said "[Errno 28] No space left on device"
    with no path: the lock's PID, and config.yaml, were written outside ``writing``."""
    import builtins

    import gomoku.training.rundir as rundir

    run = tmp_path / "R"
    monkeypatch.setattr(rundir, "open", lambda *args, **kwargs: _FullDiskHandle(builtins.open(*args, **kwargs)),
                        raising=False)
    code, _, err = train("--config", SMOKE, "--run-dir", str(run), "--no-progress")
    assert code == 1 and err == [f"error: cannot write {run / 'train.lock'}: No space left on device; free some "
                                 "space and run again"]
    monkeypatch.undo()

    def config_on_a_full_disk(path, write, before_replace=None):
        if Path(path).name == "config.yaml":
            raise OSError(errno.ENOSPC, "No space left on device")
        atomic_write(path, write, before_replace)

    monkeypatch.setattr(pipeline_module, "atomic_write", config_on_a_full_disk)
    code, _, err = train("--config", SMOKE, "--run-dir", str(tmp_path / "S"), "--no-progress")
    assert code == 1 and err == [f"error: cannot write {tmp_path / 'S' / 'config.yaml'}: No space left on device; the "
                                 "new run was not started (free some space, then run the same command again)"]


def test_an_empty_config_does_not_start_a_default_run(tmp_path, train):
    """train.py --config /dev/null started a full default run."""
    code, _, err = train("--config", "/dev/null", "--run-dir", str(tmp_path / "R"), "--no-progress")
    assert code == 2 and err == ["error: /dev/null: the config is empty (expected a mapping of sections, as "
                                 "configs/9x9.yaml)"]
    assert not (tmp_path / "R").exists()


def test_the_estimate_does_not_jump_on_resume():
    """3:10 h to go at 144 games, 4:34 h at 160 after a resume at the same speed: the first iteration
    of the new session (with an evaluation in it) was its whole pace. The run's pace goes on."""
    from gomoku.training.progress import RunProgress

    target = RunTarget(3200)
    where = [(0.0, 0, 0)]
    before = RunProgress(lambda: where[0], 50, target)
    where[0] = (9000.0, 144, 9)  # the session that was stopped
    stopped_at = before.eta()
    resumed = RunProgress(lambda: where[0], 50, target)
    assert resumed.eta() == stopped_at == ((150 - 144) * 9000 / 144, (3200 - 144) * 9000 / 144)
    where[0] = (9000.0 + 1500.0, 160, 10)  # one slow iteration: 16 games and an evaluation
    assert resumed.eta()[1] == (3200 - 160) * 10500 / 160  # not at 1500 s / 16 games
