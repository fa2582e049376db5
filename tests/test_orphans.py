"""No worker process outlives a SIGKILLed parent (issue 58, item 7): training's pool and
evaluate.py's workers, with the forkserver and the resource tracker they hold alive."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
PROC = Path("/proc")
START_GUARD_S = 120  # a bounded wait for the workers to start on a busy machine
AFTER_PARENT_S = 10  # the bound: no worker alive this long after its parent was killed

pytestmark = pytest.mark.skipif(not PROC.is_dir() or sys.platform != "linux", reason="reads /proc (Linux)")


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent pid, state) of ``pid``, None when it is gone."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # after the command name, which may hold spaces
    return int(fields[1]), fields[0]


def descendants(root: int) -> set[int]:
    parents = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None:
            parents[int(entry.name)] = stat[0]
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pid: int) -> bool:
    stat = _stat(pid)
    return stat is not None and stat[1] not in ("Z", "X")  # a zombie has ended (only its entry is left)


def kill_and_check(command: list[str], expected: int, tmp_path: Path) -> None:
    """Run ``command``, wait until it has ``expected`` processes below it, SIGKILL it: none of
    them may be alive ``AFTER_PARENT_S`` later."""
    process = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    below: set[int] = set()
    try:
        deadline = time.monotonic() + START_GUARD_S
        while len(below) < expected:
            assert process.poll() is None and time.monotonic() < deadline, f"{len(below)} processes below it"
            time.sleep(0.2)
            below = descendants(process.pid)
        time.sleep(1.0)  # the workers at work, past their start
        below = descendants(process.pid)
        process.kill()
        process.wait()
        deadline = time.monotonic() + AFTER_PARENT_S
        while (left := [pid for pid in below if alive(pid)]) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not left, [(PROC / str(pid) / "cmdline").read_bytes()[:200] for pid in left if alive(pid)]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for pid in descendants(process.pid) | below:
            try:
                os.kill(pid, signal.SIGKILL)  # what a failed check left (only what this test started)
            except OSError:
                pass


def test_evaluate_workers_end_with_their_killed_parent(tmp_path):
    """Killed evaluate.py --workers 2 left workers that ignored SIGTERM (2 of 2)."""
    # forkserver, resource tracker, 2 workers
    kill_and_check([sys.executable, str(REPO_ROOT / "scripts" / "evaluate.py"), "--player", "random", "--opponent",
                    "random", "--games", "100000", "--workers", "2", "--no-progress"], 4, tmp_path)


def test_training_workers_end_with_their_killed_trainer(tmp_path):
    """6 of 12 kills of train.py --set selfplay.workers=2 left the forkserver, 2 workers and a
    resource tracker alive for 7+ minutes."""
    kill_and_check([sys.executable, str(REPO_ROOT / "scripts" / "train.py"), "--config",
                    str(REPO_ROOT / "configs" / "smoke.yaml"), "--run-dir", str(tmp_path / "run"), "--no-progress",
                    "--set", "selfplay.workers=2", "--set", "train.game_batch_num=100000"], 4, tmp_path)
