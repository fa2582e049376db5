"""The training-curves plot (gomoku/lab/plot.py, scripts/plot.py): matplotlib on Agg, headless."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")
from matplotlib.image import imread  # noqa: E402

from gomoku.training.metrics import IterationRecord  # noqa: E402
from gomoku.lab.plot import (DEFAULT_SIZE, TITLES, build_figure, eval_results, first_reached,  # noqa: E402
                             load_metrics, moving_average, plot_metrics, rung_table, rungs, smoothing_window)
from tests.fakes import checkout_env, load_script  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
TRAINING_KEYS = ("loss", "policy_loss", "value_loss", "entropy", "kl", "explained_var_old", "explained_var_new")


def synthetic_records(n: int = 40, opponents: tuple[str, ...] = ()) -> list[dict]:
    """Records as gomoku.training.pipeline writes them: the first 3 without training stats, every 5th
    with an eval (the pure-MCTS ladder, plus `opponents` as eval.opponents)."""
    records = []
    for i in range(1, n + 1):
        record = {"iteration": i, "games": 16 * i, "positions": 350 * i, "buffer": 1000,
                  "lr_multiplier": 1.5 ** (i % 3), "selfplay_positions_per_s": 20 + i % 7, "wall_time": 60.0 * i}
        if i > 3:
            t = i / n
            record.update(loss=4.5 - 2 * t, policy_loss=4.2 - 2 * t, value_loss=0.3 - 0.1 * t,
                          entropy=4.3 - 2 * t, kl=0.01 + 0.02 * (i % 4) / 4,
                          explained_var_old=0.4 + 0.4 * t, explained_var_new=0.5 + 0.4 * t)
        if i % 5 == 0:
            score = min(1.0, i / n + 0.2)
            record["eval"] = {"pure_playouts": 1000 if i < n / 2 else 2000, "wins": round(10 * score), "draws": 0,
                              "losses": 10 - round(10 * score), "score": score, "new_best": i % 10 == 0}
            if opponents:
                record["eval"]["opponents"] = [{"opponent": o, "wins": 1, "draws": 0, "losses": 1, "score": 0.5}
                                               for o in opponents]
        records.append(record)
    return records


def write_metrics(run_dir: Path, records: list[dict], tail: str = "") -> Path:
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / "metrics.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + tail)
    return path


def lines(ax, label: str):
    return [line for line in ax.get_lines() if line.get_label() in (label, f"_raw {label}")]


def test_six_panels_with_one_point_per_record(tmp_path):
    records = synthetic_records(40)
    fig = build_figure(records, "t")
    axes = fig.get_axes()
    assert [ax.get_title() for ax in axes] == list(TITLES)
    loss, entropy, evaluation, lr, ev, speed = axes
    trained = sum("loss" in r for r in records)  # 37: the first three records have no training stats
    for ax, label, n in ((loss, "loss", trained), (loss, "value loss", trained), (entropy, "entropy", trained),
                         (lr, "KL(old || new)", trained), (lr, "lr multiplier", 40), (ev, "after update", trained),
                         (speed, "positions/s", 40)):
        drawn = lines(ax, label)
        assert drawn and all(len(line.get_xdata()) == n for line in drawn), label
    assert len(lines(loss, "loss")) == 2  # past SMOOTH_MIN_POINTS: faint raw + moving average
    assert lr.get_yscale() == "log"
    assert [t.get_text() for t in evaluation.get_legend().get_texts()] == [
        "pure MCTS 1000 playouts", "pure MCTS 2000 playouts", "new best model"]
    assert sum(len(c.get_offsets()) for c in evaluation.collections[:2]) == 8  # 40 / 5 evals
    assert "40 iterations" in fig.texts[1].get_text() and "last eval 1.00 vs pure 2000" in fig.texts[1].get_text()


def test_other_opponents_are_lines_in_the_evaluation_panel():
    records = synthetic_records(20, opponents=("minimax:2", "heuristic"))
    records[-1]["eval"] = [{"opponent": "minimax:2", "score": 0.75}, {"opponent": "random", "score": 1.0}]
    ladder, others = eval_results(records)
    assert len(ladder) == 3 and sorted(others) == ["heuristic", "minimax:2", "random"]
    assert [s for _, s in others["minimax:2"]] == [0.5, 0.5, 0.5, 0.75]
    evaluation = build_figure(records).get_axes()[2]
    assert {line.get_label(): len(line.get_xdata()) for line in evaluation.get_lines()} == {
        "_ladder": 3, "vs heuristic": 3, "vs minimax:2": 4, "vs random": 1}


def test_run_dir_gives_png_and_survives_torn_tail_and_odd_lines(tmp_path):
    records = synthetic_records(12)
    records[5]["new_key"] = {"nested": [1, 2]}
    records[6]["loss"] = None
    del records[7]["explained_var_new"]
    run = tmp_path / "run"
    path = write_metrics(run, records, tail='{"iteration": 13, "gam')
    path.write_text("\n[1, 2]\n" + path.read_text())
    assert load_metrics(run) == [IterationRecord.from_dict(json.loads(json.dumps(r))) for r in records]
    out = plot_metrics(run)
    assert out == run / "curves.png"
    assert imread(out).shape[:2] == DEFAULT_SIZE[::-1]
    axes = build_figure(records).get_axes()
    assert len(lines(axes[0], "loss")[0].get_xdata()) == 8 and len(lines(axes[4], "after update")[0].get_xdata()) == 8


def test_metrics_file_custom_out_and_size(tmp_path):
    metrics = write_metrics(tmp_path / "run", synthetic_records(8))
    out = plot_metrics(metrics, tmp_path / "pics" / "c.png", size=(900, 600))
    assert out == tmp_path / "pics" / "c.png" and imread(out).shape[:2] == (600, 900)
    with pytest.raises(ValueError, match="too small"):
        plot_metrics(metrics, tmp_path / "d.png", size=(100, 100))
    with pytest.raises(ValueError, match=r"99999x99999 is too large \(at most 10000x10000\)"):  # was a MemoryError
        plot_metrics(metrics, tmp_path / "d.png", size=(99999, 99999))
    assert not (tmp_path / "d.png").exists()


def test_records_without_training_or_eval_note_it():
    records = [{k: v for k, v in r.items() if k not in TRAINING_KEYS and k != "eval"} for r in synthetic_records(2)]
    axes = build_figure(records).get_axes()
    assert [[t.get_text() for t in ax.texts] for ax in axes] == [
        ["no training yet"], ["no training yet"], ["no evaluation yet"], [], ["no training yet"], []]


def test_config_adds_reference_lines(tmp_path):
    write_metrics(tmp_path, synthetic_records(6))
    (tmp_path / "config.yaml").write_text("board: {width: 9, height: 9}\ntrain: {kl_targ: 0.02}\n")
    out = plot_metrics(tmp_path)
    assert out.is_file()
    from gomoku.lab.plot import load_config
    axes = build_figure(synthetic_records(6), config=load_config(tmp_path)).get_axes()
    assert "uniform over 81 moves" in [t.get_text() for t in axes[1].get_legend().get_texts()]
    assert "KL target 0.02" in [t.get_text() for t in axes[3].get_legend().get_texts()]


@pytest.mark.parametrize("content", [None, "", "\n\n", "not json\n", '{"iteration": 1}\n'])
def test_missing_or_empty_metrics_is_a_clear_error(tmp_path, content):
    path = tmp_path / "metrics.jsonl"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ValueError, match="no metrics"):
        plot_metrics(path)
    assert not (tmp_path / "curves.png").exists()


def test_moving_average_and_window():
    assert moving_average([1, 2, 3, 4, 5], 3).tolist() == [1.5, 2, 3, 4, 4.5]
    assert moving_average([1, 5], 1).tolist() == [1, 5]
    assert smoothing_window(29) == 1 and smoothing_window(30) == 3 and smoothing_window(357) == 23
    assert smoothing_window(10_000) == 51


def test_script_from_repo_root_and_its_errors(tmp_path):
    env = checkout_env()
    run = tmp_path / "run"
    write_metrics(run, synthetic_records(10))
    script = str(REPO_ROOT / "scripts" / "plot.py")
    code = (f"import runpy, sys; sys.argv = [{script!r}, {str(run)!r}, '--out', {str(tmp_path / 'x.png')!r}]\n"
            "try:\n    runpy.run_path(sys.argv[0], run_name='__main__')\nexcept SystemExit as e:\n    assert not e.code\n"
            "assert 'matplotlib.pyplot' not in sys.modules and 'pygame' not in sys.modules")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tmp_path / "x.png") and (tmp_path / "x.png").is_file()
    (tmp_path / "bad.jsonl").write_text("garbage\n")
    for source, message in ((tmp_path / "nope", "no metrics file at"), (tmp_path / "bad.jsonl", "holds no metrics")):
        failed = subprocess.run([sys.executable, script, str(source)], cwd=REPO_ROOT, env=env, capture_output=True,
                                text=True, timeout=60)
        assert failed.returncode == 2 and failed.stderr.startswith("plot.py: error: ") and message in failed.stderr
        assert len(failed.stderr.strip().splitlines()) == 1


def test_help_says_the_description_once(capsys):
    with pytest.raises(SystemExit):
        load_script("plot").main(["--help"])
    out = capsys.readouterr().out
    assert out.count("Draw a training run's curves") == 1 and "python scripts/plot.py runs/9x9 " in out


def test_import_gomoku_imports_no_plotting():
    code = ("import sys, gomoku, gomoku.training\n"
            "assert not {'matplotlib', 'pygame', 'gomoku.lab.plot'} & set(sys.modules), sys.modules.keys()")
    subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, check=True, timeout=60)


def test_out_folder_or_no_suffix_prints_the_file_written(tmp_path):
    env = checkout_env()
    run = tmp_path / "run"
    write_metrics(run, synthetic_records(6))
    (tmp_path / "pics").mkdir()
    script = str(REPO_ROOT / "scripts" / "plot.py")
    for out, written in ((tmp_path / "pics", tmp_path / "pics" / "curves.png"),
                         (tmp_path / "noext", tmp_path / "noext.png")):
        done = subprocess.run([sys.executable, script, str(run), "--out", str(out)], cwd=REPO_ROOT, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == str(written) and written.is_file()
    assert load_script("plot").main([str(run), "--out", f"{tmp_path / 'made'}/"]) == 0  # a folder to make:
    assert (tmp_path / "made" / "curves.png").is_file()  # the script's own Path dropped the slash (made.png)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["made", "noext.png", "pics", "run"]
    with pytest.raises(ValueError, match=r"x\.jpg: the plot is a PNG"):
        plot_metrics(run, tmp_path / "x.jpg")
    # A folder to make, written with its slash: it wrote new.png beside it instead.
    assert plot_metrics(run, f"{tmp_path / 'new'}/") == tmp_path / "new" / "curves.png"
    assert (tmp_path / "new" / "curves.png").is_file() and not (tmp_path / "new.png").exists()


def test_huge_values_and_damaged_lines_are_skipped_and_named(tmp_path, caplog):
    import logging

    records = synthetic_records(40)
    records[10]["loss"], records[11]["loss"] = 1e308, -1e308  # an axis over both overflowed
    records[12]["kl"] = 1e300
    path = write_metrics(tmp_path, records)
    text = path.read_text().splitlines(keepends=True)
    path.write_text("".join(text[:20]) + "garbage\n" + "".join(text[20:]))  # line 21
    with caplog.at_level(logging.WARNING, logger="gomoku.lab.plot"):
        out = plot_metrics(tmp_path)
    assert imread(out).shape[:2] == DEFAULT_SIZE[::-1]
    assert f"{path}: skipped line(s) 21: not metrics records" in caplog.text
    assert "loss: 2 value(s) beyond 1e+15 not drawn (first at 176 games)" in caplog.text
    assert "kl: 1 value(s) beyond 1e+15 not drawn" in caplog.text
    loss = lines(build_figure(load_metrics(tmp_path)).get_axes()[0], "loss")[0]
    assert len(loss.get_xdata()) == 40 - 3 - 2  # no training in the first 3 records, 2 too large


def test_out_that_is_not_a_regular_file_is_refused(tmp_path, capsys):
    """plot.py RUN --out /dev/null wrote /dev/null.png and said so, exit 0."""
    run = tmp_path / "run"
    write_metrics(run, synthetic_records(4))
    fifo = tmp_path / "pipe.png"
    os.mkfifo(fifo)
    for out in ("/dev/null", str(fifo)):
        assert load_script("plot").main([str(run), "--out", out]) == 2
        assert capsys.readouterr().err == f"plot.py: error: {out}: not a regular file or a folder; give a .png file " \
                                          "or a folder\n"
    assert not Path("/dev/null.png").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["pipe.png", "run"]


def test_a_full_disk_is_one_line_naming_the_file(tmp_path, capsys, monkeypatch):
    """A full disk gave "[Errno 28] No space left on device" with no path, and left a partial PNG."""
    import errno

    run = tmp_path / "run"
    write_metrics(run, synthetic_records(4))
    out = tmp_path / "curves.png"
    out.write_bytes(b"the previous plot")

    def full_disk(self, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", full_disk)
    assert load_script("plot").main([str(run), "--out", str(out)]) == 2
    assert capsys.readouterr().err == f"plot.py: error: cannot write {out}: No space left on device\n"
    monkeypatch.undo()
    assert out.read_bytes() == b"the previous plot"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["curves.png", "run"]


def test_the_rung_table_gives_each_evaluation_its_minute_its_counts_and_its_interval(tmp_path):
    records = synthetic_records(20, opponents=("ab:2",))
    for i, (wins, draws, losses) in zip((4, 9, 14, 19), ((0, 2, 8), (2, 6, 2), (5, 5, 0), (10, 0, 0))):
        records[i]["eval"]["opponents"] = [{"opponent": "ab:2", "wins": 1, "draws": 0, "losses": 1, "score": 0.5},
                                           {"opponent": "ab:4:vct", "wins": wins, "draws": draws, "losses": losses,
                                            "score": (wins + draws / 2) / 10}]
    found = rungs(records)
    assert [(r.minutes, r.games) for r in found] == [(5.0, 80), (10.0, 160), (15.0, 240), (20.0, 320)]
    assert [r.opponent for r in found[0].results] == ["pure:1000", "ab:2", "ab:4:vct"]
    assert first_reached(found, "ab:4:vct", 0.5) is found[1]  # +2 =6 -2 is 0.5
    assert first_reached(found, "ab:4:vct", 0.8).games == 320 and first_reached(found, "ab:9", 0.1) is None
    table = rung_table(records).splitlines()
    assert table[0] == "| minutes | games | vs ab:2 | vs ab:4:vct |"
    assert table[2] == "| 5.0 | 80 | +1 =0 -1, 0.50 [0.09, 0.91] | +0 =2 -8, 0.10 [0.02, 0.40] |"
    assert table[5] == "| 20.0 | 320 | +1 =0 -1, 0.50 [0.09, 0.91] | +10 =0 -0, 1.00 [0.72, 1.00] |"
    assert rung_table(records, ["ab:4:vct"]).splitlines()[3] == "| 10.0 | 160 | +2 =6 -2, 0.50 [0.24, 0.76] |"
    write_metrics(tmp_path / "run", records)
    done = subprocess.run([sys.executable, "scripts/plot.py", str(tmp_path / "run"), "--table"], cwd=REPO_ROOT,
                          capture_output=True, text=True, env=checkout_env())
    assert done.returncode == 0 and done.stdout.splitlines() == table
    assert not (tmp_path / "run" / "curves.png").exists()


def test_the_panels_can_be_drawn_against_minutes_of_run_time():
    records = synthetic_records(20, opponents=("ab:2",))
    records[0]["wall_time"] = None  # an old record without run time is left out
    axes = build_figure(records, against="minutes").get_axes()
    assert {ax.get_xlabel() for ax in axes} == {"minutes of run time"}
    assert list(lines(axes[5], "positions/s")[0].get_xdata()) == [float(i) for i in range(2, 21)]
    assert list(lines(axes[2], "vs ab:2")[0].get_xdata()) == [5.0, 10.0, 15.0, 20.0]
    with pytest.raises(ValueError, match="no record has its minutes of run time"):
        build_figure([{"iteration": 1, "games": 16}], against="minutes")
