"""The mechanics of a run directory: one writer at a time, crash-safe files, fault injection.

- ``RunLock``: an OS file lock (``train.lock``) held by the trainer for the life of a run; a
  second trainer gets ``RunLockedError`` naming the holder's PID. The OS drops the lock when its
  process dies, however it dies.
- ``remove_stale_temps``: the temp files of the run's saves cut short by a kill (only with the lock
  held; other files, hidden or not, are left alone).
- ``append_line`` / ``repair_metrics``: the metrics file is appended one flushed line per
  iteration; on resume the lines past the checkpoint's iteration (and a torn last line) are dropped.
- ``writing(path)``: a failed write of a run's file (a full disk, a folder gone read-only) becomes a
  ``RunWriteError`` naming the file.
- ``fault_point(name)``: called at the named points of a save. Tests monkeypatch it, or set
  ``GOMOKU_FAULT=name`` (or ``name@k``: at its k-th hit in the process) to have the process
  SIGKILL itself there, as a power cut or ``kill -9`` would.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import signal
from pathlib import Path
from typing import Callable

from nets.checkpoint import TMP_SUFFIX, atomic_write, temp_target

log = logging.getLogger(__name__)

LOCK_FILE = "train.lock"
FAULT_ENV = "GOMOKU_FAULT"
_fault_hits: dict[str, int] = {}


def fault_point(name: str) -> None:
    """A named instant of a save; kills this process there when ``GOMOKU_FAULT`` asks for it."""
    wanted = os.environ.get(FAULT_ENV)
    if not wanted:
        return
    point, _, count = wanted.partition("@")
    if point != name:
        return
    _fault_hits[name] = _fault_hits.get(name, 0) + 1
    if _fault_hits[name] == int(count or 1):
        os.kill(os.getpid(), getattr(signal, "SIGKILL", signal.SIGTERM))


def make_run_dir(path: Path) -> None:
    """Create the run directory (and its parents) if needed; ValueError, in words, when ``path``
    is a file, a link to nothing, or under a file (mkdir's own error is ``[Errno 17] File exists``)."""
    if path.is_symlink() and not path.exists():
        raise ValueError(f"run directory {path} is a link to {os.readlink(path)}, which does not exist")
    if path.exists() and not path.is_dir():
        raise ValueError(f"run directory {path} is a file, not a directory; choose another --run-dir")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        blocker = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
        raise ValueError(f"cannot create run directory {path}: {blocker or 'a part of its path'} is not a "
                         f"directory") from None
    except OSError as error:
        raise ValueError(f"cannot create run directory {path}: {error.strerror or error}") from None


class RunLockedError(RuntimeError):
    """Another trainer holds the run directory."""

    def __init__(self, run_dir: Path, pid: int | None):
        self.pid = pid
        holder = f"pid {pid}" if pid is not None else "a process whose pid it did not record"
        super().__init__(f"{run_dir} is in use by another trainer ({holder}); stop it, or train in "
                         f"another --run-dir")


class RunLock:
    """An exclusive, non-blocking lock on ``run_dir/train.lock``, which holds the owner's PID."""

    def __init__(self, run_dir: str | Path):
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / LOCK_FILE
        self._handle = None

    @property
    def held(self) -> bool:
        return self._handle is not None

    def acquire(self) -> None:
        if self._handle is not None:
            return
        if self.path.exists() and not self.path.is_file():  # open() said "[Errno 21] Is a directory"
            raise ValueError(f"{self.path} is not a regular file (a folder?): remove it, or train in another "
                             "--run-dir")
        try:
            handle = open(self.path, "a+")  # not "w": the holder's PID must survive our attempt
        except OSError as error:
            raise RunWriteError(f"cannot open the run's lock file {self.path}: {error.strerror or error}") from None
        try:
            _lock(handle)
        except OSError:
            handle.seek(0)
            text = handle.read().strip()
            handle.close()
            raise RunLockedError(self.run_dir, int(text) if text.isdigit() else None) from None
        try:
            handle.seek(0)
            handle.truncate()
            handle.write(f"{os.getpid()}\n")
            handle.flush()
        except OSError as error:  # a full disk: "[Errno 28] No space left on device", with no path
            handle.close()
            failure = RunWriteError(f"cannot write {self.path}: {error.strerror or error}"
                                    + ("; free some space and run again" if error.errno == errno.ENOSPC else ""))
            failure.errno = error.errno
            raise failure from None
        self._handle = handle

    def release(self) -> None:
        if self._handle is not None:
            handle, self._handle = self._handle, None
            handle.close()  # closing the file drops the lock


try:
    import fcntl

    def _lock(handle) -> None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
except ImportError:  # Windows
    import msvcrt

    _WINDOWS_LOCK_OFFSET = 1 << 20  # lock a byte past the PID, so that others can still read it

    def _lock(handle) -> None:
        handle.seek(_WINDOWS_LOCK_OFFSET)
        msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)


def remove_stale_temps(folder: Path, is_ours: Callable[[str], bool]) -> list[Path]:
    """Delete the temp files (``.<name>.<random>.tmp``) that saves cut short by a kill left in
    ``folder``: those of the files whose name ``is_ours`` accepts, and no others."""
    removed = []
    if folder.is_dir():
        for path in sorted(folder.glob(f".*{TMP_SUFFIX}")):
            target = temp_target(path.name)
            if target is not None and is_ours(target):
                path.unlink(missing_ok=True)
                removed.append(path)
    if removed:
        log.info("removed %d temp file(s) of an interrupted save: %s", len(removed),
                 ", ".join(p.name for p in removed))
    return removed


def append_line(path: Path, line: str) -> None:
    """Append one line and flush it to disk (fault points: ``metrics.torn`` after half of it,
    ``metrics`` after all of it)."""
    data = (line + "\n").encode()
    with open(path, "ab") as handle:
        half = len(data) // 2
        handle.write(data[:half])
        handle.flush()
        fault_point("metrics.torn")
        handle.write(data[half:])
        handle.flush()
        os.fsync(handle.fileno())
    fault_point("metrics")


def _spans(numbers: list[int]) -> str:
    """``1-3, 7``."""
    spans: list[list[int]] = []
    for n in numbers:
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ", ".join(f"{a}-{b}" if b > a else str(a) for a, b in spans)


def repair_metrics(path: Path, iteration: int) -> list[int]:
    """Keep the records of iterations up to ``iteration`` (the checkpoint's): drop the later
    ones and a torn last line (a last record whole but for its newline is kept, and ended),
    rewriting the file atomically; returns the dropped iterations.
    Lines that are not records, and records of iterations 1..``iteration`` that the file lacks (a
    file cut short, edited or deleted), are logged as warnings naming them; such lines are kept as they are."""
    lines = (path.read_bytes() if path.exists() else b"").split(b"\n")
    torn = lines.pop()  # after the last newline: b"" unless a write was cut short
    unterminated = bool(torn) and _record_iteration(torn) is not None  # whole, only its newline missing
    if unterminated:  # (cut right before it, or an editor dropped it): kept, and ended in the rewrite
        lines.append(torn)
        torn = b""
    keep, dropped, seen = [], [], set()
    for number, line in enumerate(lines, 1):
        record_iteration = _record_iteration(line)
        if record_iteration is None:
            log.warning("%s: line %d is not a metrics record (%d bytes); kept as it is", path, number, len(line))
            keep.append(line)  # not ours to judge; keep it
            continue
        if record_iteration <= iteration:
            keep.append(line)
            seen.add(record_iteration)
        else:
            dropped.append(record_iteration)
    missing = sorted(set(range(1, iteration + 1)) - seen)
    if missing:
        log.warning("%s: holds no record of iteration(s) %s of the checkpoint's %d (the file was cut short, "
                    "edited or deleted); those records are lost, the run goes on", path, _spans(missing), iteration)
    if not dropped and not torn and not unterminated:
        return []
    if dropped:
        log.warning("%s: dropping the records of iteration(s) %s, past the checkpoint's iteration %d "
                    "(they will be played again)", path, ", ".join(map(str, dropped)), iteration)
    if torn:
        log.warning("%s: dropping a torn last line (line %d, %d bytes)", path, len(lines) + 1, len(torn))
    body = b"".join(line + b"\n" for line in keep)
    atomic_write(path, lambda handle: handle.write(body), before_replace=lambda: fault_point("metrics_repair.tmp"))
    return dropped


def _record_iteration(line: bytes) -> int | None:
    """The iteration of a metrics record line; None when the line is not one."""
    try:
        iteration = json.loads(line)["iteration"]
    except (ValueError, KeyError, TypeError):
        return None
    return iteration if isinstance(iteration, int) else None


class RunWriteError(OSError):
    """A file of the run could not be written (a full disk, a folder gone read-only): the run stays
    at its last committed iteration, and the file's previous version is intact."""


def _os_error_in(error: BaseException) -> OSError | None:
    """The OSError behind ``error``: itself, or one it was raised from or during (torch.save raises
    a RuntimeError while handling the OSError of a full disk)."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, OSError):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


@contextlib.contextmanager
def writing(path: Path, resumable: bool = True):
    """Turn a failed write of ``path`` (an OSError, or torch's RuntimeError over one) into a
    ``RunWriteError`` naming the file; ``resumable``: the run has a checkpoint to resume (False
    while a new run writes its first one)."""
    try:
        yield
    except (OSError, RuntimeError) as error:
        cause = _os_error_in(error)
        if cause is None or isinstance(error, RunWriteError):
            raise
        reason = cause.strerror or str(cause)
        then = "then --resume" if resumable else "then run the same command again"
        fix = f"free some space, {then}" if cause.errno == errno.ENOSPC else then
        state = "the run stays at its last saved iteration" if resumable else "the new run was not started"
        failure = RunWriteError(f"cannot write {path}: {reason}; {state} ({fix})")
        failure.errno = cause.errno
        raise failure from error
