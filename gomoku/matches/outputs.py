"""A match script's output files (``--games-out``, ``--json``), written a game at a time and held
by one run at a time.

``MatchOutputs`` appends each finished game to the games file as a JSON line (in one write, so
that a kill of the script loses at most the game in flight) and rewrites the summary after each game
atomically (a temp file in the same folder, then ``os.replace``: a reader sees the old summary or
the new one, never half of one). At the end the games file is rewritten in match order, as the
summary is.

Each file is locked for the run (``flock`` on ``FILE.lock`` beside it, which holds the run's pid):
a second run given the same file is refused with ``OutputInUse`` instead of the last writer
silently winning. The lock file is removed at ``close``; one left by a killed run holds no lock.
A file that is not a regular file (``/dev/null``, a pipe) is written directly, unlocked. A temp
file that a kill left behind is removed by the next run given the same file.

``output_problem`` says, before any game, why an option's file could not be written.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no locks
    fcntl = None

LOCK_SUFFIX = ".lock"  # FILE.lock: the lock of FILE
TEMP_SUFFIX = ".tmp"  # .FILE.XXXXXXXX.tmp: a new FILE being written (one left by a kill is removed by the next run)


class OutputError(OSError):
    """An output file that could not be written: the message names it."""


class OutputInUse(OutputError):
    """An output file that another run holds."""


def _regular(path: Path) -> bool:
    """Whether ``path`` is (or will be, once written) a regular file: not a device or a pipe."""
    return not path.exists() or path.is_file()


def _lock(path: Path, option: str) -> int | None:
    """An open, ``flock``ed descriptor of ``path``'s lock file, holding this pid; OutputInUse when
    another run holds it. None where there are no locks."""
    if fcntl is None:
        return None
    lock = path.with_name(path.name + LOCK_SUFFIX)
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise OutputError(f"{option} {path}: cannot create its lock file {lock} "
                              f"({error.strerror or error})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
            os.close(fd)
            pid = f"pid {holder}, " if holder.isdigit() else ""
            raise OutputInUse(f"{option} {path} is in use by another run ({pid}its lock {lock})") from None
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(lock))
        except FileNotFoundError:
            same = False
        if same:  # not removed by the run that held it while this one waited for it
            break
        os.close(fd)
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def _unlock(path: Path, fd: int | None) -> None:
    if fd is None:
        return
    try:
        path.with_name(path.name + LOCK_SUFFIX).unlink(missing_ok=True)  # while held: see _lock
    finally:
        os.close(fd)


def _temp_prefix(path: Path) -> str:
    return f".{path.name}."


def write_atomically(path: Path, text: str) -> None:
    """``text`` as the new content of ``path``, all or nothing (a device or a pipe is written
    directly). OutputError naming the file when it cannot be written."""
    try:
        if not _regular(path):
            with open(path, "w") as stream:
                stream.write(text)
            return
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=_temp_prefix(path), suffix=TEMP_SUFFIX)
        try:
            with os.fdopen(fd, "w") as stream:
                stream.write(text)
            os.replace(temp, path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
    except OSError as error:
        raise OutputError(f"cannot write {path}: {error.strerror or error}") from None


def output_problem(path: Path, option: str = "--json") -> str | None:
    """Why ``option``'s file could not be written to ``path`` (None: it can), checked before the games."""
    folder = path.parent
    if path.is_dir():
        return f"{option} {path} is a folder, not a file"
    if not folder.is_dir():
        return f"{option} {path}: there is no folder {folder}"
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        return f"{option} {path}: not writable"
    try:  # what the permissions do not tell (as root, /proc): try it, and leave no new file behind
        if not path.exists():
            path.touch(exist_ok=False)
            path.unlink()
        elif path.is_file():  # (not a pipe or a device, which opening could block or change)
            path.open("a").close()
    except OSError as error:
        return f"{option} {path}: cannot be written ({error.strerror or error})"
    return None



class MatchOutputs:
    """The games file and the summary file of one match run (either may be None); see the module
    docstring. Neither is written before the first game: an earlier run's files stay until then."""

    def __init__(self, games: Path | None = None, summary: Path | None = None):
        self.games, self.summary = games, summary
        self._stream = None  # the games file, opened at the first game
        self._streamed = False  # a game was written to it
        self._locks: list[tuple[Path, int | None]] = []
        if games is not None and summary is not None and games.resolve() == summary.resolve():
            raise OutputError(f"--games-out and --json are the same file, {games}")
        try:
            for option, path in (("--games-out", games), ("--json", summary)):
                if path is not None and _regular(path):
                    self._locks.append((path, _lock(path, option)))
                    for stale in path.parent.glob(f"{_temp_prefix(path)}*{TEMP_SUFFIX}"):  # a killed run's
                        stale.unlink(missing_ok=True)
        except BaseException:
            self.close()
            raise

    def add_game(self, line: dict) -> None:
        """Append one game's JSON line to the games file (started afresh at the first game)."""
        if self.games is None:
            return
        try:
            if self._stream is None:
                self._stream = open(self.games, "wb", buffering=0)  # unbuffered: one write a game, whole
            data = (json.dumps(line) + "\n").encode()
            while data:
                data = data[self._stream.write(data):]
            self._streamed = True
        except OSError as error:
            raise OutputError(f"cannot write {self.games}: {error.strerror or error}") from None

    def write_summary(self, payload: dict, final: bool = False) -> None:
        """The summary file's new content (atomically); a device or a pipe is given only the
        ``final`` one."""
        if self.summary is not None and (final or _regular(self.summary)):
            write_atomically(self.summary, json.dumps(payload, indent=2) + "\n")

    def write_games(self, lines: list[dict]) -> None:
        """The games file's final content, in match order (atomically); a device or a pipe has
        had them already, one at a time."""
        if self.games is None:
            return
        self._close_stream()
        if self._streamed and not _regular(self.games):
            return
        write_atomically(self.games, "".join(json.dumps(line) + "\n" for line in lines))

    def _close_stream(self) -> None:
        if self._stream is not None:
            stream, self._stream = self._stream, None
            try:
                stream.close()
            except OSError:
                pass

    def close(self) -> None:
        """Close the games file and give the locks back."""
        self._close_stream()
        while self._locks:
            _unlock(*self._locks.pop())

    def __enter__(self) -> "MatchOutputs":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
