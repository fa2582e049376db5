"""A training run loses nothing: kill a smoke run with SIGKILL at many instants (inside each save,
by fault injection, and at arbitrary times), resume it, and check that what the resume sees
describes one iteration: the metrics hold each completed iteration once, the replay-buffer shards
and the buffer hold exactly the samples those records count, and no temp file is left.

The kills happen in real processes. To pay for importing torch once, this file is also a driver
(``python tests/test_crash.py RUN_ROOT PLAN_JSON``): it imports the pipeline, then forks one
child per step of the plan; the child trains until the fault point named in ``GOMOKU_FAULT``
kills it (``gomoku.training.rundir.fault_point``) or the driver kills it after a delay.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OVERRIDES = ["search.n_playout=4", "selfplay.parallel_games=1", "selfplay.games_per_iteration=1",
             "train.updates_per_game=1", "train.buffer_size=160", "train.game_batch_num=1000",
             "eval.check_freq=1000", "search.vct=false"]  # the search is not under test here
MAX_ITERATIONS = 6  # a child whose fault never fires stops here (and the test fails)
KILLED = -signal.SIGKILL

# (name, steps, the iteration the run must be at after the kill; None: any). A step is a fault
# point "point@k" (the k-th time the process reaches it; the first checkpoint save is the fresh
# run's iteration 0), "resume+point@k" (resume the run and kill it there), or "after:seconds".
SCENARIOS = [
    ("mid-self-play", ["selfplay@3"], 2),
    ("mid-training", ["train@3"], 2),
    ("commit-start", ["commit@3"], 2),
    ("shard-temp-written", ["shard.tmp@3"], 2),
    ("shard-written", ["shard@3"], 2),
    ("metrics-line-torn", ["metrics.torn@3"], 2),
    ("metrics-line-written", ["metrics@3"], 2),
    ("checkpoint-temp-written", ["checkpoint.tmp@4"], 2),
    ("checkpoint-written", ["checkpoint@4"], 3),
    ("mid-prune", ["prune@1"], None),
    ("first-checkpoint", ["checkpoint.tmp@1"], 0),
    ("metrics-repair-on-resume", ["metrics@3", "resume+metrics_repair.tmp@1"], 2),
    ("resume-killed-mid-commit", ["checkpoint@3", "resume+metrics@1"], 2),
    ("at-1s", ["after:1.0"], None),
    ("at-2.5s", ["after:2.5"], None),
]


# ---------------------------------------------------------------------------- the driver
def _child(run_dir: Path, step: str) -> None:
    """Runs in the forked child: train until killed."""
    from gomoku.training.config import load_config
    from gomoku.training.pipeline import TrainPipeline

    resume = step.startswith("resume+")
    fault = step.removeprefix("resume+")
    if not fault.startswith("after:"):
        os.environ["GOMOKU_FAULT"] = fault
    config = load_config(ROOT / "configs" / "smoke.yaml", OVERRIDES)
    pipeline = TrainPipeline(None if resume else config, run_dir, device="cpu", resume=resume, progress=False)
    pipeline.run(max_iterations=None if fault.startswith("after:") else MAX_ITERATIONS)


def drive(run_root: Path, plan: list[tuple[str, list[str]]]) -> dict[str, list[int]]:
    import torch._dynamo  # noqa: F401  (imported by the first optimiser: once, here, before the forks)

    import gomoku.training.pipeline  # noqa: F401

    outcome = {}
    for name, steps in plan:
        codes = []
        for step in steps:
            pid = os.fork()
            if pid == 0:
                code = 0
                try:
                    _child(run_root / name, step)
                except BaseException:  # noqa: BLE001 - reported as the exit code
                    import traceback

                    traceback.print_exc()
                    code = 1
                os._exit(code)
            if step.startswith("after:"):
                time.sleep(float(step.split(":")[1]))
                os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            codes.append(-os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status))
        outcome[name] = codes
    return outcome


if __name__ == "__main__":
    print(json.dumps(drive(Path(sys.argv[1]), json.loads(sys.argv[2]))))
    sys.exit(0)


# ---------------------------------------------------------------------------- the test
from tests.fakes import metrics_records  # noqa: E402  (below the driver: run as a script, it stops above)
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from gomoku.training.config import load_config  # noqa: E402
from gomoku.training.pipeline import TrainPipeline  # noqa: E402
from nets import CheckpointError  # noqa: E402


def _temps(run: Path) -> list[Path]:
    return [p for p in run.rglob("*") if p.name.endswith(".tmp")]


def check_consistent(pipeline: TrainPipeline) -> None:
    """What a resume sees describes iteration N = the checkpoint's, and nothing else."""
    run, n = pipeline.run_dir, pipeline.iteration
    assert not _temps(run)
    records = metrics_records(run)
    assert [r["iteration"] for r in records] == list(range(1, n + 1))  # none missing, none twice
    shards = pipeline.shards.iterations()
    assert shards == list(range(shards[0], n + 1)) if shards else n == 0  # the newest, up to N
    for iteration in shards:
        assert pipeline.shards.info(iteration).size == records[iteration - 1]["buffer_added"]
    assert pipeline.buffer.total == sum(r["buffer_added"] for r in records)
    assert len(pipeline.buffer) == (records[-1]["buffer"] if records else 0)
    assert pipeline.games_played == (records[-1]["games"] if records else 0)
    assert pipeline.positions == (records[-1]["positions"] if records else 0)
    if shards:  # the newest sample in the buffer is the last one the last iteration added
        newest = pipeline.shards.read(shards[-1])
        last = (pipeline.buffer.next - 1) % pipeline.buffer.capacity
        np.testing.assert_array_equal(pipeline.buffer.states[last], newest.states[-1])
        np.testing.assert_array_equal(pipeline.buffer.probs[last], newest.probs[-1])


def test_kill_at_any_instant_then_resume(tmp_path):
    plan = [(name, steps) for name, steps, _ in SCENARIOS]
    result = subprocess.run([sys.executable, __file__, str(tmp_path), json.dumps(plan)], cwd=ROOT,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    config = load_config(ROOT / "configs" / "smoke.yaml", OVERRIDES)
    for name, steps, expected in SCENARIOS:
        run = tmp_path / name
        assert outcome[name] == [KILLED] * len(steps), (name, outcome[name], result.stderr[-3000:])
        if expected == 0 or not (run / "checkpoint.pt").exists():  # killed before or inside the very
            # first save: nothing to resume, and a new run starts there cleanly
            with pytest.raises(CheckpointError, match="no checkpoint"):
                TrainPipeline(None, run, device="cpu", resume=True, progress=False)
            pipeline = TrainPipeline(config, run, device="cpu", progress=False)
        else:
            pipeline = TrainPipeline(None, run, device="cpu", resume=True, progress=False)
        if expected is not None:
            assert pipeline.iteration == expected, name
        check_consistent(pipeline)
        before = pipeline.iteration
        pipeline.run(max_iterations=1)
        assert [r["iteration"] for r in metrics_records(run)] == list(range(1, before + 2)), name
        assert not _temps(run), name
        check_consistent(TrainPipeline(None, run, device="cpu", resume=True, progress=False))


def test_stale_temp_files_are_removed_on_start(tmp_path):
    """The temp files of the run's own saves go, on a new run's start and on resume; other files
    whose names look like temp files (the user's, another program's) stay."""
    config = load_config(ROOT / "configs" / "smoke.yaml", OVERRIDES)
    (tmp_path / "buffer").mkdir()
    foreign = [tmp_path / ".draft.tmp", tmp_path / ".notes.md.k2x9.tmp", tmp_path / "buffer" / ".plot.png.a1.tmp"]
    for path in foreign:
        path.write_bytes(b"not the run's")
    first_save = tmp_path / ".checkpoint.pt.abc123.tmp"  # a new run killed inside its first save
    first_save.write_bytes(b"half a save")
    TrainPipeline(config, tmp_path, device="cpu", progress=False).close()
    assert not first_save.exists()
    stale = [tmp_path / ".checkpoint.pt.abc123.tmp", tmp_path / ".best.pt.x.tmp",
             tmp_path / ".current.pt.pending-000002.q_7.tmp", tmp_path / "buffer" / ".000001.npz.y.tmp"]
    for path in stale:
        path.write_bytes(b"half a save")
    TrainPipeline(None, tmp_path, device="cpu", resume=True, progress=False).close()
    assert not any(path.exists() for path in stale)
    assert all(path.read_bytes() == b"not the run's" for path in foreign)


def test_ctrl_c_inside_a_commit_waits_until_it_is_done(tmp_path, monkeypatch):
    """Two Ctrl-C during the commit of iteration 1: the commit completes, then the run stops."""
    config = load_config(ROOT / "configs" / "smoke.yaml", OVERRIDES)
    pipeline = TrainPipeline(config, tmp_path, device="cpu", progress=False)

    sent = []

    def interrupt(name: str) -> None:
        if name in ("shard", "checkpoint.tmp"):
            sent.append((name, signal.getsignal(signal.SIGINT)))
            os.kill(os.getpid(), signal.SIGINT)

    # Ctrl-C raises KeyboardInterrupt, as scripts/train.py sets it (conftest puts back the handler after).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # The fault points as TrainPipeline's own code looks them up (its module's globals).
    monkeypatch.setitem(TrainPipeline._commit.__globals__, "fault_point", interrupt)
    with pytest.raises(KeyboardInterrupt):
        pipeline.run(max_iterations=MAX_ITERATIONS)  # a lost signal fails in seconds, not 1000 games
    assert [name for name, _ in sent] == ["shard", "checkpoint.tmp"], sent  # the handlers, if one was lost
    assert pipeline.committed_iteration == pipeline.iteration == 1
    assert [r["iteration"] for r in metrics_records(tmp_path)] == [1]
    assert not _temps(tmp_path)
    check_consistent(TrainPipeline(None, tmp_path, device="cpu", resume=True, progress=False))


def test_a_metrics_file_cut_mid_file_is_named_on_resume(tmp_path, caplog):
    import logging

    config = load_config(ROOT / "configs" / "smoke.yaml", OVERRIDES + ["train.game_batch_num=3"])
    TrainPipeline(config, tmp_path, device="cpu", progress=False).run()
    path = tmp_path / "metrics.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    assert len(lines) == 3
    path.write_bytes(lines[0] + b"garbage\n" + lines[1][: len(lines[1]) // 2])  # a copy cut short, a bad line
    with caplog.at_level(logging.WARNING):
        resumed = TrainPipeline(None, tmp_path, device="cpu", resume=True, progress=False)
    resumed.close()
    assert f"{path}: line 2 is not a metrics record (7 bytes); kept as it is" in caplog.text
    assert f"{path}: dropping a torn last line (line 3," in caplog.text
    assert f"{path}: holds no record of iteration(s) 2-3 of the checkpoint's 3" in caplog.text
    assert path.read_bytes() == lines[0] + b"garbage\n"


def test_a_deleted_metrics_file_is_named_on_resume(tmp_path, caplog):
    import logging

    config = load_config(ROOT / "configs" / "smoke.yaml", OVERRIDES + ["train.game_batch_num=2"])
    TrainPipeline(config, tmp_path, device="cpu", progress=False).run()
    path = tmp_path / "metrics.jsonl"
    path.unlink()
    with caplog.at_level(logging.WARNING):
        TrainPipeline(None, tmp_path, device="cpu", resume=True, progress=False).close()
    assert f"{path}: holds no record of iteration(s) 1-2 of the checkpoint's 2" in caplog.text


def test_a_last_record_without_its_newline_is_kept_and_ended(tmp_path, caplog):
    """A whole last record whose newline is missing (a write cut just before it, an editor) was
    dropped as torn; a cut record is still dropped, and the file ends in a newline either way."""
    import logging

    from gomoku.training.rundir import repair_metrics

    path = tmp_path / "metrics.jsonl"
    whole = [json.dumps({"iteration": i, "games": 4 * i}) for i in (1, 2, 3)]
    path.write_text("\n".join(whole))  # no newline after iteration 3
    with caplog.at_level(logging.WARNING):
        assert repair_metrics(path, 3) == []
    assert path.read_text() == "\n".join(whole) + "\n" and "torn" not in caplog.text
    path.write_text("\n".join(whole[:2]) + "\n" + whole[2][:-5])  # cut inside the record
    assert repair_metrics(path, 3) == [] and path.read_text() == "\n".join(whole[:2]) + "\n"
    assert "dropping a torn last line (line 3" in caplog.text


class _Killed(Exception):
    """Stands for a kill at a fault point (the pipeline object is not used after it)."""


@pytest.mark.parametrize("point, kept", [("checkpoint.tmp", 1), ("models", 2)])
def test_best_pt_is_always_a_committed_model(tmp_path, monkeypatch, point, kept):
    """An evaluation at every iteration; a kill at the second commit between the model files and
    the checkpoint (or just after the checkpoint): the resume keeps best.pt and current.pt of the
    iteration the checkpoint holds, and no pending file."""
    import torch

    config = load_config(ROOT / "configs" / "smoke.yaml",
                         OVERRIDES + ["eval.check_freq=1", "eval.games=2", "eval.opponents=[]", "eval.select_by=ladder"])
    pipeline = TrainPipeline(config, tmp_path, device="cpu", progress=False)
    seen = []

    def kill_at_the_second(name: str) -> None:
        seen.append(name)
        if name == point and seen.count(point) == 2:
            raise _Killed(name)

    monkeypatch.setitem(TrainPipeline._commit.__globals__, "fault_point", kill_at_the_second)
    with pytest.raises(_Killed):
        pipeline.run(max_iterations=MAX_ITERATIONS)
    pipeline.close()
    pending = {p.name for p in tmp_path.glob("*.pending-*")}
    assert "current.pt.pending-000002" in pending <= {"current.pt.pending-000002", "best.pt.pending-000002"}
    monkeypatch.undo()
    resumed = TrainPipeline(None, tmp_path, device="cpu", resume=True, progress=False)
    resumed.close()
    assert resumed.iteration == kept and not list(tmp_path.glob("*.pending-*"))
    assert torch.load(tmp_path / "current.pt", weights_only=True)["iteration"] == kept
    assert torch.load(tmp_path / "best.pt", weights_only=True)["iteration"] <= kept


def test_a_checkpoint_without_the_runs_counters_is_a_checkpoint_error(tmp_path):
    import torch

    from nets.checkpoint import FORMAT

    config = load_config(ROOT / "configs" / "smoke.yaml", OVERRIDES + ["train.game_batch_num=1"])
    TrainPipeline(config, tmp_path, device="cpu", progress=False).run()
    payload = torch.load(tmp_path / "checkpoint.pt", weights_only=True)
    del payload["games_played"]
    torch.save({**payload, "format": FORMAT}, tmp_path / "checkpoint.pt")
    with pytest.raises(CheckpointError, match=r"holds weights and an optimiser but not the run's counters "
                                              r"\(KeyError: 'games_played'\)"):
        TrainPipeline(None, tmp_path, device="cpu", resume=True, progress=False)
