"""Serving the pbrain engine on a pair of streams: stdin read as bytes on a thread, answers
written as ASCII lines, END honoured at once (also during a search, whose move is then not
written: nothing may follow END).

``serve(engine, stdin, stdout)`` is what ``scripts/pbrain.py`` runs.
"""

from __future__ import annotations

import io
import logging
import os
import queue
import sys
import threading
from typing import TextIO

from gomoku.pbrain.engine import PbrainEngine
from gomoku.pbrain.protocol import MAX_LINE_BYTES, decode_line, encode_answer

log = logging.getLogger(__name__)

END_GRACE = 0.8  # seconds serve() waits for a clean exit after END before exiting hard
BUSY_POLL = 0.1  # seconds between checks, past the grace, that START has been answered


class _EndSignal:
    """Set once END (or the end of input) has been read and every line before it taken up, when
    END came while the last command before it was already being handled: its search then stops
    (the manager gave up on it). A command that was taken up with END already read (a script piped
    in at once) runs in full and is answered (``pending()``), so every command before END is.
    The hard exit waits while ``busy()`` (the engine answering START: loading a net may take
    longer than the grace, and its answer must not be lost). ``end_due()``: the same as
    ``is_set()``, for a real END only (its move is not written), not for the end of input."""

    def __init__(self, hard_exit: bool, busy=lambda: False) -> None:
        self.lock = threading.Lock()
        self.end_at: int | None = None  # number of lines before END (or end of input)
        self.end_sent = False  # the input ended with END (not just closed)
        self.taken = 0  # lines the engine has taken up so far
        self.known_at_take = False  # END (or the end of input) had been read when the last line was taken
        self.hard_exit = hard_exit
        self.busy = busy
        self._timer: threading.Timer | None = None

    def is_set(self) -> bool:
        with self.lock:
            return self._due()

    def end_due(self) -> bool:
        with self.lock:
            return self.end_sent and self._due()

    def pending(self) -> bool:
        with self.lock:
            return self.known_at_take

    def _due(self) -> bool:
        return self.end_at is not None and self.taken >= self.end_at and not self.known_at_take

    def _update(self) -> None:
        """Called with the lock held: arm the hard exit once END is due."""
        if self.hard_exit and self._timer is None and self._due():
            self._arm(END_GRACE)

    def _arm(self, seconds: float) -> None:
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def _expire(self) -> None:
        if self.busy():
            self._arm(BUSY_POLL)
        else:
            os._exit(0)

    def ended(self, count: int, end_sent: bool) -> None:
        with self.lock:
            self.end_at = count
            self.end_sent = end_sent
            self._update()

    def take(self) -> None:
        with self.lock:
            self.taken += 1
            self.known_at_take = self.end_at is not None
            self._update()


def _is_end(line: bytes | str) -> bool:
    try:
        return decode_line(line).upper() == "END"
    except UnicodeDecodeError:
        return False


def serve(engine: PbrainEngine, stdin: TextIO, stdout: TextIO, hard_exit: bool = False) -> None:
    """Run the protocol until END or end of input.

    Lines are read as bytes (from ``stdin.buffer`` when there is one) on a daemon thread, so an
    ``END`` that arrives while the engine thinks stops the search at its next round (its move is
    not written: the protocol wants nothing after END; at the end of input without END it is); a
    command read before END came is answered in full (``_EndSignal``), and
    answers are written as ASCII lines. With ``hard_exit`` the process is ended ``END_GRACE``
    seconds after END is due even if a player that cannot be interrupted (minimax) is still busy.
    """
    source = getattr(stdin, "buffer", stdin)
    sink = getattr(stdout, "buffer", stdout)
    text_sink = isinstance(sink, io.TextIOBase)
    lock = threading.Lock()

    def write(text: str) -> None:
        data = encode_answer(text)
        with lock:
            try:
                sink.write(data.decode("ascii") if text_sink else data)
                sink.flush()
            except (OSError, ValueError) as error:  # the manager closed our stdout
                log.warning("cannot write %r: %s", text, error)

    signal = _EndSignal(hard_exit, lambda: engine.loading)
    engine.write = write
    engine.stop_event = signal
    engine.end_due = signal.end_due
    engine.end_pending = signal.pending
    lines: queue.Queue[tuple[bytes | str, float] | None] = queue.Queue()

    def read() -> None:
        count = 0
        end_sent = False
        try:
            while True:
                line = source.readline(MAX_LINE_BYTES + 1)
                if not line:
                    break
                received = engine.clock()
                newline = b"\n" if isinstance(line, bytes) else "\n"
                if len(line) > MAX_LINE_BYTES and not line.endswith(newline):
                    rest = line
                    while rest and not rest.endswith(newline):  # skip the rest of an overlong line
                        rest = source.readline(MAX_LINE_BYTES + 1)
                elif _is_end(line):
                    end_sent = True
                    break
                lines.put((line, received))
                count += 1
        except (OSError, ValueError):  # stdin closed under us
            log.debug("reading stdin failed", exc_info=True)
        signal.ended(count, end_sent)
        lines.put(None)

    threading.Thread(target=read, name="pbrain-stdin", daemon=True).start()
    try:
        while True:
            item = lines.get()
            if item is None:
                return
            signal.take()
            if not engine.handle_line(*item):
                return
    finally:
        engine.close(END_GRACE)


def configure_logging(verbose: bool = False) -> None:
    """Log to stderr only: stdout belongs to the protocol."""
    logging.basicConfig(stream=sys.stderr, level=logging.DEBUG if verbose else logging.WARNING,
                        format="%(asctime)s %(name)s %(levelname)s: %(message)s")
