"""An external Gomocup engine as a player: the pbrain protocol spoken to a subprocess.

``PbrainPlayer`` (spec ``pbrain:PATH[:MS]``) starts the engine at its first move and sends it
``START`` (and ``INFO timeout_turn``, ``timeout_match 0``, ``rule 0``...); a later game, or a
position that does not follow from the engine's game (a take-back), starts with ``RESTART``. An
engine that answers ``RESTART`` with ``UNKNOWN`` (or ``ERROR``: the command is optional) is ended
and run again, as the protocol says, as is one asked to play on another board size. Then it is sent
``BEGIN``, ``TURN x,y`` or a ``BOARD`` block, and its answer is read under the turn time; an answer
``SUGGEST x,y`` is sent back as ``PLAY x,y``, which the engine answers with that point. A line that
came before the command it would answer is dropped as stray. An engine that answers late, says
nothing, crashes or answers with something that is not a legal move raises ``Forfeit``:
``play_game`` scores the game as lost and records why. After a forfeit the process is ended and the
next game starts a fresh one. ``close`` sends ``END`` and kills the process when it has not gone
after a grace period. The engine runs in a process group of its own (POSIX), which is killed whole:
an engine behind a wrapper script that does not ``exec`` goes too. Answers may end with CR LF, LF
or CR, as the protocol allows.

Coordinates follow the protocol: 0-based ``x`` (column), ``y`` (row), ``move = y * width + x``.
"""

from __future__ import annotations

import collections
import logging
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import weakref

from gomoku.players.forfeit import STDERR_MARK, Forfeit, ForfeitReason
from gomoku.game.board import EMPTY, Board
from gomoku.players.classical import Player, format_point
from gomoku.players.gomocup import MAX_LINE_BYTES, N_IN_ROW  # an answer longer than a command is cut to it

log = logging.getLogger(__name__)

DEFAULT_TURN_MS = 1000  # a turn when none is given (the spec pbrain:PATH, too)
MAX_TURN_MS = 24 * 3600 * 1000  # the longest turn a spec may ask for: a day (a longer wait overflows)
START_TIMEOUT = 60.0  # seconds an engine may take to answer START at most (loading a net on a busy machine)
# The wait for START's answer follows the clock: START_TURNS turns, at least START_FLOOR_S seconds
# (the shipped engine answers in ~3 s on a busy 2-core machine), at most START_TIMEOUT. An engine
# that never answers costs a game 10 s at 500 ms a turn, not a minute.
START_TURNS = 20
START_FLOOR_S = 10.0


def start_wait(turn_ms: int) -> float:
    """Seconds an engine playing ``turn_ms`` a turn may take to answer START (see START_TURNS)."""
    return min(START_TIMEOUT, max(START_FLOOR_S, START_TURNS * turn_ms / 1000))

LATE_GRACE = 0.1  # seconds past the turn time an answer still counts (pipes, a shared machine's scheduler)
SILENT_WAIT = 1.0  # seconds more to wait for a late answer before calling the engine silent
END_GRACE = 1.0  # seconds the engine has to exit after END before it is killed
CRASH_WAIT = 0.5  # seconds to wait for the exit code of an engine whose output ended
STDERR_LINES = 20  # the engine's last stderr lines kept for a crash report
STDERR_LINE_BYTES = 300  # a longer stderr line is cut to this for the crash report
READ_BYTES = 65536  # the pipes are read in chunks of up to this: a chatty engine costs few system calls
GAME_TYPE_AI = 1  # INFO game_type: the opponent is another engine
_MOVE = re.compile(r"\s*(\d+)\s*,\s*(\d+)\s*")
_LINE_END = re.compile(rb"\r\n|\r|\n")  # what a brain may end its lines with
_CHATTER = ("MESSAGE", "DEBUG")  # lines an engine may send besides its answer
_SUGGEST = re.compile(r"SUGGEST\s+(.*)", re.IGNORECASE)  # an answer that leaves the move to the manager (PLAY)
_NO_RESTART = ("UNKNOWN", "ERROR")  # answers to the optional RESTART: end the engine and run it again
_PLAYOUTS = re.compile(r"(\d+) playouts")  # "MESSAGE ... N playouts ..." (gomoku-zero's --report)


def engine_command(path: str) -> list[str]:
    """How to run the engine at ``path``: a Python script with this interpreter, else the file."""
    return [sys.executable, path] if path.endswith(".py") else [path]


class PbrainPlayer(Player):
    """A pbrain engine process playing under a turn time of ``turn_ms`` milliseconds."""

    def __init__(self, path: str, turn_ms: int = DEFAULT_TURN_MS, args: tuple[str, ...] = (),
                 max_memory: int | None = None, start_timeout: float | None = None,
                 late_grace: float = LATE_GRACE, silent_wait: float = SILENT_WAIT):
        self.name = f"pbrain:{path}:{turn_ms}"
        self.path = path
        self.command = engine_command(path) + list(args)
        self.turn_ms = turn_ms
        self.max_memory = max_memory
        self.start_timeout = start_wait(turn_ms) if start_timeout is None else start_timeout
        self.late_grace, self.silent_wait = late_grace, silent_wait
        self.process: subprocess.Popen | None = None
        self._lines: queue.Queue[tuple[float, bytes | None]] = queue.Queue()  # (arrival time, line)
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self._known: list[int] | None = None  # the moves of the engine's current game (None: none started)
        self._size: tuple[int, int] | None = None  # the board (width, height) the running engine was STARTed on
        self._finalizer = None
        self.last_answer_seconds: float | None = None
        self.slowest_answer = 0.0
        self.answer_times: list[float] = []  # seconds, every answer so far
        self.arrived = 0.0
        self.last_playouts: int | None = None

    # ------------------------------------------------------------------ Player
    def check_board(self, board: Board) -> None:
        """Raise ValueError for a rule the protocol does not play: its games are five in a row
        (any size: ``START`` for a square, ``RECTSTART`` for a rectangle)."""
        if board.n_in_row != N_IN_ROW:
            raise ValueError(f"{self.name}: the pbrain protocol plays five in a row, not {board.n_in_row}")

    def reset(self) -> None:
        self._known = None  # the next move starts a new game (START)

    def get_action(self, board: Board) -> int:
        try:
            if self._known is not None and not self._alive():  # it died after its last answer
                raise self._crashed("the engine exited between two moves")
            if self._known is None or (self._known and not self._follows(board)):  # or a take-back
                self._new_game(board)
            move = self._ask(board)
        except Forfeit:
            self.close()
            raise
        self._known = list(board.moves) + [move]
        return move

    def close(self) -> None:
        """END, then kill the engine if it has not exited within ``END_GRACE`` seconds."""
        process, self.process = self.process, None
        self._known = None
        if process is None:
            return
        if process.poll() is None:
            try:
                process.stdin.write(b"END\n")
                process.stdin.flush()
            except OSError:
                pass
            try:
                process.wait(END_GRACE)
            except subprocess.TimeoutExpired:
                log.info("%s did not exit within %.1f s of END: killed", self.name, END_GRACE)
        _kill(process)
        if self._finalizer is not None:
            self._finalizer.detach()

    # ------------------------------------------------------------------ the process
    def _alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def _start_process(self) -> None:
        self.close()
        self._lines = lines = queue.Queue()
        self._stderr = stderr = collections.deque(maxlen=STDERR_LINES)  # a dying engine's pump keeps its own
        try:
            # A session of its own: its process group is killed with it (a wrapper's children too).
            process = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, bufsize=0, start_new_session=True)
        except OSError as error:
            raise Forfeit(ForfeitReason.CRASHED, f"cannot start {self.command[-1]}: {error}") from error
        self.process = process
        self._finalizer = weakref.finalize(self, _kill, process)

        def keep_stderr(line: bytes | None) -> None:
            if line is not None:
                stderr.append(line.decode("utf-8", "replace").rstrip())

        threading.Thread(target=_pump, args=(process.stdout, lambda line: lines.put((time.monotonic(), line)),
                                             MAX_LINE_BYTES), daemon=True, name="pbrain-out").start()
        threading.Thread(target=_pump, args=(process.stderr, keep_stderr, STDERR_LINE_BYTES), daemon=True,
                         name="pbrain-err").start()

    def _send(self, *lines: str) -> None:
        try:
            self.process.stdin.write("".join(line + "\n" for line in lines).encode("ascii"))
            self.process.stdin.flush()
        except OSError as error:
            raise self._crashed(f"writing to it failed ({error})") from error

    def _crashed(self, what: str) -> Forfeit:
        code = None
        if self.process is not None:
            try:
                code = self.process.wait(CRASH_WAIT)  # its output ended: it is probably exiting
            except subprocess.TimeoutExpired:
                pass
        tail = " | ".join(list(self._stderr)[-3:])
        exit_text = f", exit code {code}" if code is not None else ""
        return Forfeit(ForfeitReason.CRASHED, f"{what}{exit_text}" + (f"{STDERR_MARK}{tail}" if tail else ""))

    def _read(self, timeout: float, since: float) -> str | None:
        """The next answer line that arrived at ``since`` (``time.monotonic``, when the command was
        sent) or later (chatter skipped, MESSAGE lines read for playouts); None when nothing came
        within ``timeout`` seconds. Raises Forfeit when the engine's output ended. ``self.arrived``
        is the time the line arrived on the pipe (never before ``since``).

        A line that came before the command is no answer to it: it is dropped (logged), not scored.
        It is an extra line (after an earlier answer, which was read then, or before START), and the
        engine is judged on what it answers to this command; read as the answer, it would make the
        engine play a move it never chose, at a negative answer time, and forfeit the turn after
        for a stale answer (nor is it a protocol error the spec's manager forfeits for)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.arrived, raw = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return None
            if raw is None:
                raise self._crashed("the engine exited")
            line = raw.decode("utf-8", "replace").strip()
            if not line:
                continue
            if self.arrived < since:
                if not line.upper().startswith(_CHATTER):
                    log.warning("%s: dropped a stray line %r (it came before the command)", self.name, line)
                continue
            if line.upper().startswith(_CHATTER):
                found = _PLAYOUTS.search(line)
                if found:
                    self.last_playouts = int(found.group(1))
                continue
            return line

    # ------------------------------------------------------------------ protocol
    def _new_game(self, board: Board) -> None:
        """Bring the engine to an empty game on ``board``'s size: ``RESTART`` to a running engine
        of that size; else, or when it answers ``RESTART`` with UNKNOWN or ERROR, a fresh process
        and ``START`` (the protocol's manager does the same)."""
        width, height = board.width, board.height
        if self._alive() and self._size == (width, height):
            answer = self._setup("RESTART")
            if _first_word(answer) == "OK":
                self._known = []
                return
            if _first_word(answer) not in _NO_RESTART:
                raise Forfeit(ForfeitReason.ILLEGAL, f"RESTART answered {answer!r}")
            log.info("%s answered %r to RESTART: ended and run again", self.name, answer)
        self._start_process()  # ends the running engine first (END)
        start = f"START {width}" if width == height else f"RECTSTART {width},{height}"
        answer = self._setup(start)
        if _first_word(answer) != "OK":
            raise Forfeit(ForfeitReason.ILLEGAL, f"{start.split()[0]} answered {answer!r}")
        infos = [f"INFO timeout_turn {self.turn_ms}", "INFO timeout_match 0", "INFO rule 0",
                 f"INFO game_type {GAME_TYPE_AI}"]
        if self.max_memory is not None:
            infos.append(f"INFO max_memory {self.max_memory}")
        self._send(*infos)
        self._size = (width, height)
        self._known = []

    def _setup(self, command: str) -> str:
        """Send ``command`` (START, RECTSTART, RESTART) and return its answer, read within ``start_timeout``."""
        since = time.monotonic()
        self.starting = self.start_timeout
        try:
            self._send(command)
            answer = self._read(self.start_timeout, since)
        finally:
            self.starting = None
        if answer is None:
            raise Forfeit(ForfeitReason.SILENT, f"no answer to {command.split()[0]} within {self.start_timeout:g} s")
        return answer

    def _follows(self, board: Board) -> bool:
        """Whether ``board`` is the engine's game and one more move (a TURN)."""
        moves, known = board.moves, self._known
        return len(moves) == len(known) + 1 and list(moves[:-1]) == known

    def _command(self, board: Board) -> list[str]:
        """BEGIN, TURN or a BOARD block: what brings the engine to ``board`` with it to move
        (its game is empty, or ``board`` follows from it)."""
        moves = list(board.moves)
        if not moves:
            return ["BEGIN"]
        if self._follows(board):
            return ["TURN " + _format(board, moves[-1])]
        me = board.current_player
        stones = [f"{_format(board, move)},{1 if board.stone(move) == me else 2}" for move in moves]
        return ["BOARD", *stones, "DONE"]

    def _ask(self, board: Board) -> int:
        """The engine's move on ``board`` (its game is empty or ``board`` follows from it), answered
        (after a SUGGEST, PLAY and its answer) within the turn time of the command."""
        self.last_playouts = None
        lines = self._command(board)
        # the command as the messages name it: a TURN's point also as the board names it
        command = f"TURN {_named(board, board.last_move)}" if lines[0].startswith("TURN") else lines[0]
        started = time.monotonic()
        self._send(*lines)
        answer = self._answer(command, started, started)
        suggested = _SUGGEST.fullmatch(answer)
        if suggested:
            answer = self._play(board, suggested.group(1), answer, command, started)
        elapsed = self.arrived - started  # when the line came, not when this thread woke up
        self.last_answer_seconds = elapsed
        self.slowest_answer = max(self.slowest_answer, elapsed)
        self.answer_times.append(elapsed)
        turn = self.turn_ms / 1000
        if elapsed > turn + self.late_grace:
            raise Forfeit(ForfeitReason.LATE, f"answered {answer!r} after {elapsed * 1000:.0f} ms "
                                              f"(turn time {self.turn_ms} ms)")
        return self._move(board, answer, command)

    def _play(self, board: Board, point: str, answer: str, command: str, started: float) -> str:
        """``PLAY point`` for the answer ``SUGGEST point`` to ``command`` (the engine leaves the move
        to the manager), in the turn that began at ``started``; the engine's answer, that point."""
        move = self._move(board, answer, command, point)
        point = _format(board, move)
        sent = time.monotonic()
        self._send(f"PLAY {point}")
        played = self._answer("PLAY", started, sent)
        match = _MOVE.fullmatch(played)
        if not match or f"{match.group(1)},{match.group(2)}" != point:
            raise Forfeit(ForfeitReason.ILLEGAL, f"answered {played!r} to PLAY {_named(board, move)}")
        return played

    def _answer(self, command: str, started: float, sent: float) -> str:
        """The answer to ``command``, sent at ``sent`` in the turn that began at ``started``: waits
        until the turn time and ``late_grace`` from ``started`` are up, then ``silent_wait`` more."""
        turn_end = started + self.turn_ms / 1000 + self.late_grace
        answer = self._read(turn_end - time.monotonic(), sent)
        if answer is None:
            answer = self._read(self.silent_wait, sent)
            if answer is None:
                raise Forfeit(ForfeitReason.SILENT, f"no answer to {command} within "
                                                    f"{turn_end + self.silent_wait - started:.2f} s")
        return answer

    def _move(self, board: Board, answer: str, command: str, point: str | None = None) -> int:
        """The move at ``point`` (``x,y``; the whole ``answer`` to ``command`` when None); Forfeit
        when it is not a free point of ``board``."""
        match = _MOVE.fullmatch(answer if point is None else point)
        if not match:
            raise Forfeit(ForfeitReason.ILLEGAL, f"answered {answer!r} to {command}")
        x, y = int(match.group(1)), int(match.group(2))
        if not (x < board.width and y < board.height):
            raise Forfeit(ForfeitReason.ILLEGAL, f"played {x},{y}, off the {board.width}x{board.height} board")
        move = y * board.width + x
        if board.stone(move) != EMPTY:
            raise Forfeit(ForfeitReason.ILLEGAL, f"played {_named(board, move)}, an occupied point")
        return move


def _first_word(answer: str) -> str:
    """An answer's first word, upper case ("OK - everything is good", the protocol's own example
    answer to START, is OK). Answers are never empty: ``_read`` skips empty lines."""
    return answer.split(maxsplit=1)[0].upper()


def _named(board: Board, move: int) -> str:
    """``move`` for a message: as the protocol writes it and as the board names it ("4,4 (E5)")."""
    return f"{_format(board, move)} ({format_point(board, move)})"


def _format(board: Board, move: int) -> str:
    y, x = divmod(move, board.width)
    return f"{x},{y}"


def _pump(stream, put, max_bytes: int) -> None:
    """Hand each line of ``stream`` (ended by CR LF, LF or CR; cut to ``max_bytes``) to ``put``,
    then None at its end. The pipe is read in chunks of up to ``READ_BYTES``, not a byte a call."""
    line, after_cr = b"", False
    try:
        while chunk := stream.read(READ_BYTES):
            if after_cr and chunk.startswith(b"\n"):  # the LF of a CR LF that a read split
                chunk = chunk[1:]
            after_cr = chunk.endswith(b"\r")
            *ended, rest = _LINE_END.split(chunk)
            for part in ended:
                put((line + part)[:max_bytes])
                line = b""
            line = (line + rest)[:max_bytes]
    except (OSError, ValueError):
        pass
    if line:
        put(line)  # the last line had no end
    put(None)


def _kill(process: subprocess.Popen) -> None:
    """Kill the engine's process group (POSIX; it has one of its own), else the process."""
    killpg = getattr(os, "killpg", None)
    if killpg is not None:
        try:
            killpg(process.pid, signal.SIGKILL)
        except OSError:  # the group is gone (or not ours to kill)
            pass
    if process.poll() is None:
        process.kill()
    try:
        process.wait(END_GRACE)
    except subprocess.TimeoutExpired:
        log.warning("engine process %d did not die", process.pid)
    for stream in (process.stdin, process.stdout, process.stderr):
        try:
            stream.close()
        except OSError:
            pass
