"""Ablations at equal wall time (gomoku/lab/ablation.py, scripts/ablate.py) on the smoke config."""

import json
from pathlib import Path

import pytest

from gomoku.lab import ablation
from gomoku.lab.ablation import Variant, format_ablation, run_ablation
from gomoku.training.config import ConfigError, load_config
from gomoku.training.metrics import IterationRecord
from tests.fakes import load_script

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ROOT / "configs" / "smoke.yaml"
ONE_ITERATION = 1e-9  # minutes: any iteration takes longer, so each run plays exactly one


def test_variant_parse():
    assert Variant.parse("baseline") == Variant("baseline", ())
    assert Variant.parse(" no-vcf  search.vcf=false train.sample_reuse=0 ") == Variant(
        "no-vcf", ("search.vcf=false", "train.sample_reuse=0"))
    for bad in ("", "a/b search.vcf=false", "search.vcf=false"):
        with pytest.raises(ValueError):
            Variant.parse(bad)


def test_a_bad_override_stops_before_any_run(tmp_path):
    variants = [Variant("baseline"), Variant("typo", ("search.vcff=false",))]
    with pytest.raises(ConfigError, match="vcff"):
        run_ablation(SMOKE, variants, tmp_path / "ab", ONE_ITERATION, ["random"], 2)
    assert not (tmp_path / "ab").exists()
    with pytest.raises(ValueError, match="share a name"):
        run_ablation(SMOKE, [Variant("a"), Variant("a", ("search.vcf=false",))], tmp_path / "ab",
                     ONE_ITERATION, ["random"], 2)


def test_variants_are_trained_rated_and_kept(tmp_path, monkeypatch):
    root = tmp_path / "ab"
    variants = [Variant("baseline"), Variant("no-vcf", ("search.vcf=false",))]
    results = run_ablation(SMOKE, variants, root, ONE_ITERATION, ["random", "heuristic"], 2)
    assert [r.name for r in results] == ["baseline", "no-vcf"]
    assert [r.overrides for r in results] == [[], ["search.vcf=false"]]
    for r in results:
        assert (r.iteration, r.games) == (1, 4)  # one iteration of 4 games (smoke.yaml)
        assert 0 < r.wall_minutes < 10
        assert [m["opponent"] for m in r.matches] == ["random", "heuristic"]
        assert all(m["wins"] + m["draws"] + m["losses"] == 2 for m in r.matches)
        record = json.loads((root / r.name / "metrics.jsonl").read_text())
        assert r.positions_per_s == pytest.approx(record["selfplay_positions_per_s"])  # one iteration: its figure
    # Each variant trained its own config, and the table on disk is the one returned.
    run_configs = [(root / name / "config.yaml").read_text() for name in ("baseline", "no-vcf")]
    assert "vcf: true" in run_configs[0] and "vcf: false" in run_configs[1]
    saved = json.loads((root / ablation.RESULTS_FILE).read_text())
    assert [item["name"] for item in saved] == ["baseline", "no-vcf"]
    assert saved[1]["matches"] == results[1].matches
    table = format_ablation(results).splitlines()
    assert len(table) == 4 and "search.vcf=false" in table[3] and "random" in table[0]

    # Run again: nothing is trained or played again.
    def refuse(*args, **kwargs):
        raise AssertionError("trained or rated again")

    monkeypatch.setattr(ablation, "train_variant", refuse)
    monkeypatch.setattr(ablation, "rate_variant", refuse)
    assert run_ablation(SMOKE, variants, root, ONE_ITERATION, ["random", "heuristic"], 2) == results
    monkeypatch.undo()

    # A variant whose overrides changed does not resume (and get rated as) the run of the old ones.
    changed = [Variant("no-vcf", ("search.vcf=false", "search.c_puct=2"))]
    with pytest.raises(ValueError, match=r"no-vcf holds a run of other settings \(search.c_puct: run 5.0, variant 2"):
        run_ablation(SMOKE, changed, root, ONE_ITERATION, ["random", "heuristic"], 2)


def test_a_longer_ablation_resumes_the_runs(tmp_path):
    root = tmp_path / "ab"
    variants = [Variant("baseline")]
    first = run_ablation(SMOKE, variants, root, ONE_ITERATION, ["random"], 2)[0]
    # A few more minutes than the run has: the same run goes on by exactly one iteration.
    minutes = first.wall_minutes + ONE_ITERATION
    second = run_ablation(SMOKE, variants, root, minutes, ["random"], 2)[0]
    assert (second.iteration, second.games, second.minutes) == (2, 8, minutes)
    metrics = (root / "baseline" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line)["iteration"] for line in metrics] == [1, 2]


def test_script_errors_are_one_line(tmp_path, capsys):
    script = load_script("ablate")
    common = ["--config", str(SMOKE), "--minutes", "1", "--root", str(tmp_path / "ab"), "--opponent", "random"]
    for variant, message in (("typo search.vcff=false", "search.vcff"), ("a/b", "the name must be")):
        assert script.main([*common, "--variant", variant]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: ") and message in err and "\n" not in err
    assert not (tmp_path / "ab").exists()


def test_bad_opponents_stop_before_any_training(tmp_path, capsys, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("trained before the opponents were checked")

    monkeypatch.setattr(ablation, "train_variant", refuse)
    script = load_script("ablate")
    gone = tmp_path / "gone.pt"
    common = ["--config", str(SMOKE), "--minutes", "0.05", "--root", str(tmp_path / "ab"), "--variant", "x",
              "--opponent", "random"]
    for opponent, message in (("foo", "error: bad player spec 'foo'"),
                              ("minimax:0", "error: bad player spec 'minimax:0' (DEPTH must be a positive integer, "
                                            "got '0')"),
                              (f"az:{gone}:50", f"error: opponent 'az:{gone}:50': no checkpoint at {gone}")):
        assert script.main([*common, "--opponent", opponent]) == 2
        assert capsys.readouterr().err.strip() == message
    assert not (tmp_path / "ab").exists()
    # --help says the first line once, and lists the specs
    with pytest.raises(SystemExit):
        script.main(["--help"])
    text = capsys.readouterr().out
    assert text.count("Ablations at equal wall time") == 1 and "az:CHECKPOINT:PLAYOUTS" in text


def test_a_variant_is_rated_with_the_search_rules_it_trained_with(tmp_path, monkeypatch):
    import gomoku.matches.arena as arena

    asked = {}
    monkeypatch.setattr(arena, "evaluate", lambda spec, opponents, games, **options: asked.update(options) or [])
    config = load_config("configs/smoke.yaml", ["search.vct=false", "search.leaves_per_step=4"])
    assert ablation.rate_variant(config, tmp_path, ["random"], games=2, seed=0) == []
    assert (asked["forced_moves"], asked["vcf"], asked["vct"], asked["leaves_per_step"]) == (True, True, False, 4)


def test_the_self_play_speed_is_the_runs_own_and_unknown_for_older_metrics():
    """The table divided finished games' positions by the self-play time: 14.3 where the run's
    log and plot said 25.9 (moves made per second, games still running carried over). It is now
    the run's figure, weighted by self-play time; records that predate it give n/a, not a TypeError."""
    new = [IterationRecord(1, 4, selfplay_positions_per_s=10.0, selfplay_s=20.0),
           IterationRecord(2, 8, selfplay_positions_per_s=25.0, selfplay_s=30.0)]
    assert ablation.selfplay_speed(new) == pytest.approx((10 * 20 + 25 * 30) / 50)
    assert ablation.selfplay_speed([IterationRecord(1, 4, selfplay_s=20.0)]) is None
    assert ablation.selfplay_speed([IterationRecord(1, 4), *new]) is None
    assert ablation.selfplay_speed([]) is None
    old = ablation.VariantResult("base", [], 5.0, 5.2, 3, 12, 0, [])
    assert old.positions_per_s is None and format_ablation([old]).splitlines()[2].endswith("| 12 | n/a |")


def test_a_variant_named_dots_is_refused():
    """A variant ".." trained in the folder above --root (its name is its folder there)."""
    for name in (".", "..", ".hidden"):
        with pytest.raises(ValueError, match="the name must be a letter or digit"):
            Variant.parse(name)
    assert Variant.parse("v1.2 search.vcf=false") == Variant("v1.2", ("search.vcf=false",))


def test_a_root_that_is_a_file_is_one_line_naming_it(tmp_path, capsys):
    """ablate.py --root FILE said "[Errno 17] File exists: ..."."""
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    common = ["--config", str(SMOKE), "--minutes", "1", "--variant", "x", "--opponent", "random"]
    assert load_script("ablate").main([*common, "--root", str(afile)]) == 2
    assert capsys.readouterr().err == f"error: --root {afile} is a file, not a folder\n"
    assert load_script("ablate").main([*common, "--root", str(afile / "under")]) == 2
    assert capsys.readouterr().err.startswith(f"error: cannot create --root {afile / 'under'}: ")
    assert afile.read_text() == "not a folder"


def test_a_full_disk_names_the_results_file(tmp_path, capsys, monkeypatch):
    """A full disk gave "[Errno 28] No space left on device" with no path."""
    import errno
    from types import SimpleNamespace

    monkeypatch.setattr(ablation, "train_variant", lambda *args, **kwargs: None)
    record = SimpleNamespace(wall_time=60.0, iteration=1, games=4)
    monkeypatch.setattr(ablation, "run_records", lambda run_dir: [record])
    monkeypatch.setattr(ablation, "rate_variant", lambda *args, **kwargs: [])
    monkeypatch.setattr(ablation, "selfplay_speed", lambda records: None)

    def full_disk(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full_disk)
    root = tmp_path / "ab"
    assert load_script("ablate").main(["--config", str(SMOKE), "--minutes", "1", "--variant", "x", "--opponent",
                                       "random", "--root", str(root)]) == 1
    assert capsys.readouterr().err == f"error: cannot write {root / ablation.RESULTS_FILE}: No space left on device\n"
    assert list(root.iterdir()) == []
