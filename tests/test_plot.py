"""The training-curves plot (gomoku/training/plot.py, scripts/plot.py), headless."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
pygame = pytest.importorskip("pygame")

from gomoku.training.plot import (DEFAULT_SIZE, load_metrics, log_ticks, make_axis, nice_ticks,  # noqa: E402
                         plot_metrics, tick_labels)

REPO_ROOT = Path(__file__).resolve().parent.parent
TRAINING_KEYS = ("loss", "policy_loss", "value_loss", "entropy", "kl", "explained_var_old", "explained_var_new")


def synthetic_records(n: int = 40) -> list[dict]:
    """Records as gomoku.training.pipeline writes them: the first without training stats, every 5th with an eval."""
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
        records.append(record)
    return records


def write_metrics(run_dir: Path, records: list[dict], torn_tail: bool = False) -> Path:
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / "metrics.jsonl"
    text = "".join(json.dumps(r) + "\n" for r in records)
    path.write_text(text + ('{"iteration": 99, "gam' if torn_tail else ""))
    return path


def panel_cells(size, cols=3, rows=2, header=70):
    """Rough panel rectangles in the figure (the header, then a cols x rows grid)."""
    width, height = size
    cell_w, cell_h = width // cols, (height - header) // rows
    return [pygame.Rect(c * cell_w + 10, header + r * cell_h + 10, cell_w - 20, cell_h - 20)
            for r in range(rows) for c in range(cols)]


def ink(image: pygame.Surface, rect: pygame.Rect, step: int = 3) -> int:
    """Number of sampled non-white pixels in rect."""
    return sum(image.get_at((x, y))[:3] != (255, 255, 255)
               for x in range(rect.left, rect.right, step) for y in range(rect.top, rect.bottom, step))


def coloured(image: pygame.Surface, rect: pygame.Rect, step: int = 2) -> int:
    """Number of sampled clearly coloured (not grey) pixels in rect: data, not grid or text."""
    count = 0
    for x in range(rect.left, rect.right, step):
        for y in range(rect.top, rect.bottom, step):
            r, g, b = image.get_at((x, y))[:3]
            count += max(r, g, b) - min(r, g, b) > 60
    return count


def test_run_dir_gives_png_with_every_panel_drawn(tmp_path):
    run = tmp_path / "run"
    write_metrics(run, synthetic_records(), torn_tail=True)
    out = plot_metrics(run)
    assert out == run / "curves.png" and out.is_file()
    image = pygame.image.load(str(out))
    assert image.get_size() == DEFAULT_SIZE
    for i, cell in enumerate(panel_cells(DEFAULT_SIZE)):
        assert ink(image, cell) > 100, f"panel {i} looks blank"
        assert coloured(image, cell) > 20, f"panel {i} has no data drawn"


def test_metrics_file_custom_out_and_size(tmp_path):
    metrics = write_metrics(tmp_path / "run", synthetic_records(8))
    out = plot_metrics(metrics, tmp_path / "pics" / "c.png", size=(900, 600))
    assert out == tmp_path / "pics" / "c.png"
    image = pygame.image.load(str(out))
    assert image.get_size() == (900, 600)
    assert ink(image, pygame.Rect(0, 0, 900, 60)) > 50  # the title


def test_records_without_training_or_eval_still_plot(tmp_path):
    records = [{k: v for k, v in r.items() if k not in TRAINING_KEYS and k != "eval"} for r in synthetic_records(2)]
    out = plot_metrics(write_metrics(tmp_path, records), tmp_path / "c.png")
    assert pygame.image.load(str(out)).get_size() == DEFAULT_SIZE


@pytest.mark.parametrize("content", [None, "", "\n\n", "not json\n"])
def test_missing_or_empty_metrics_is_a_clear_error(tmp_path, content):
    path = tmp_path / "metrics.jsonl"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ValueError, match="no metrics"):
        load_metrics(tmp_path)
    with pytest.raises(ValueError, match="no metrics"):
        plot_metrics(path)
    assert not (tmp_path / "curves.png").exists()


def test_script_from_repo_root_and_its_errors(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = tmp_path / "run"
    write_metrics(run, synthetic_records(10))
    script = str(REPO_ROOT / "scripts" / "plot.py")
    done = subprocess.run([sys.executable, script, str(run), "--out", str(tmp_path / "x.png")], cwd=REPO_ROOT,
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tmp_path / "x.png") and (tmp_path / "x.png").is_file()
    missing = subprocess.run([sys.executable, script, str(tmp_path / "nope")], cwd=REPO_ROOT, env=env,
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode != 0 and "no metrics file" in missing.stderr


def test_import_gomoku_does_not_import_pygame():
    code = "import sys, gomoku; assert 'pygame' not in sys.modules and 'gomoku.training.plot' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, check=True, timeout=60)


def test_nice_ticks_and_labels():
    assert nice_ticks(0, 1) == pytest.approx([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    assert nice_ticks(0.2, 4.7) == [0, 1, 2, 3, 4, 5]
    assert tick_labels([0, 0.25, 0.5, 0.75, 1.0]) == ["0", "0.25", "0.50", "0.75", "1.00"]
    assert tick_labels([0, 5000, 10000, 15000]) == ["0", "5k", "10k", "15k"]
    assert log_ticks(0.005, 20) == [0.01, 0.1, 1, 10]
    assert log_ticks(0.015, 6) == pytest.approx([0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5])
    axis = make_axis([3.0, 3.0])  # a constant still gets a range and ticks
    assert axis.lo < 3.0 < axis.hi and len(axis.ticks) >= 3
    assert all(math.isfinite(t) for t in make_axis([], log=True).ticks)
