"""The Gomocup "pbrain" text protocol as data: lines in, typed records out, answers formatted.

Pure: no players, no threads, no clock. ``parse_line`` turns one raw line from the manager (bytes
or text) into a record, whatever the line holds: bytes that are not UTF-8, control characters,
a number that does not parse all come back as records (``Undecodable``, ``Unknown``,
``Malformed``, ``BadInfo``) for the engine to answer with ``ERROR`` or ``UNKNOWN``; it never
raises. Inside a ``BOARD`` or ``SWAP2BOARD`` block lines are parsed as stones (``parse_line(..., in_board=True)``).

Coordinates are 0-based with ``x`` the column and ``y`` the row, so ``move = y * width + x`` as
on ``Board``. ``rebuild_board`` turns the stones of a BOARD block into a Board with a history.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gomoku.game.board import Board, IllegalMoveError
from gomoku.players.gomocup import MAX_LINE_BYTES, N_IN_ROW  # shared with the manager side (players.external)

NAME = "gomoku-zero"
VERSION = "0.1.0"
AUTHOR = "gomoku-zero developers"
COUNTRY = "International"
ABOUT = f'name="{NAME}", version="{VERSION}", author="{AUTHOR}", country="{COUNTRY}"'

MIN_SIZE = N_IN_ROW

# Rule bits of INFO rule. Bit 2 (continuous game) only says the manager may go on after a line
# of five; it does not change what a move is worth, so freestyle play is right for it up to the
# first five (after it, moves are answered with ERROR: the engine has no blocked points).
RULE_EXACTLY_FIVE = 1
RULE_CONTINUOUS = 2
RULE_RENJU = 4
RULE_CARO = 8
UNSUPPORTED_RULES = {RULE_EXACTLY_FIVE: "exactly five", RULE_RENJU: "renju", RULE_CARO: "caro"}
# INFO keys whose value is an integer (milliseconds, bytes, a number); others are free text.
INTEGER_INFO = ("timeout_turn", "timeout_match", "time_left", "max_memory", "game_type", "rule")
# Of those, the keys whose value cannot be negative (time_left can: a manager may report an overrun).
NON_NEGATIVE_INFO = ("timeout_turn", "timeout_match", "max_memory", "game_type", "rule")

# ASCII digits only: int() would also take "1_000", "\u0661\u0662" and other forms.
_POINT = re.compile(r"\s*(-?[0-9]+)\s*,\s*(-?[0-9]+)\s*")
_BOARD_LINE = re.compile(r"\s*(-?[0-9]+)\s*,\s*(-?[0-9]+)\s*,\s*(-?[0-9]+)\s*")
_BOARDISH = re.compile(r"[-\d\s,]+")  # looks like a stone line (checked in full at DONE)
_DIGITS = re.compile(r"[+-]?[0-9]+")


class ProtocolError(ValueError):
    """A command that cannot be carried out; its message becomes an ``ERROR`` line."""


# ---------------------------------------------------------------------------- records
# Records of one kind share a frozen dataclass base; each kind is its own subclass, so that a
# record compares equal only to one of its own kind (``Turn(3, 4) != Takeback(3, 4)``).
@dataclass(frozen=True)
class Bare:
    """A line that is nothing but its command (or nothing at all)."""


class Blank(Bare):
    """An empty line: no answer."""


class Restart(Bare):
    """``RESTART``."""


class Begin(Bare):
    """``BEGIN``: the engine moves first."""


class BoardBegin(Bare):
    """``BOARD``: stone lines follow until ``DONE``."""


class Swap2BoardBegin(Bare):
    """``SWAP2BOARD``: stone lines follow until ``DONE``; the whole block is answered UNKNOWN
    (this engine does not play the swap2 opening)."""


class About(Bare):
    """``ABOUT``."""


class End(Bare):
    """``END``."""


class Done(Bare):
    """``DONE``: the end of a BOARD block."""


@dataclass(frozen=True)
class Refused:
    """A line answered with ERROR, and why."""

    reason: str


class Undecodable(Refused):
    """A line that is not UTF-8 text (or is too long)."""


class Malformed(Refused):
    """A known command with arguments that do not parse."""


class BadInfo(Refused):
    """An ``INFO`` line that does not parse, or a value out of range: the previous value is kept."""


@dataclass(frozen=True)
class Point:
    """A command about one point: ``x`` the column, ``y`` the row (0-based)."""

    x: int
    y: int


class Turn(Point):
    """``TURN x,y``: the opponent's move."""


class Takeback(Point):
    """``TAKEBACK x,y``: a move taken back."""


@dataclass(frozen=True)
class Unknown:
    """A command this engine does not know: answered with UNKNOWN."""

    command: str


@dataclass(frozen=True)
class Info:
    """``INFO key value``: ``number`` is the value of an ``INTEGER_INFO`` key, parsed."""

    key: str  # lower case
    value: str
    number: int | None = None


@dataclass(frozen=True)
class Stone:
    """One line of a BOARD block, kept as text: it is checked (x,y,who) when the block is done."""

    text: str


@dataclass(frozen=True)
class NotAStone:
    """A line inside a BOARD block that is not a stone: the block is abandoned (ERROR) and the
    line is then handled as a command of its own."""

    line: str


@dataclass(frozen=True)
class Start:
    """``START size`` (a square board) or ``RECTSTART width,height``."""

    width: int
    height: int


Record = (Blank | Undecodable | Unknown | Malformed | Start | Restart | Begin | Turn | Takeback | BoardBegin
          | Swap2BoardBegin | Info | BadInfo | About | End | Stone | Done | NotAStone)


# ---------------------------------------------------------------------------- parsing
def decode_line(raw: bytes | str) -> str:
    """The text of one line, without the line ending and a leading byte-order mark. Raises
    UnicodeDecodeError for bytes that are not UTF-8."""
    text = raw.decode("utf-8") if isinstance(raw, (bytes, bytearray)) else raw
    return text.lstrip("\ufeff").strip()


def parse_line(raw: bytes | str, in_board: bool = False) -> Record:
    """One line from the manager as a record (never raises)."""
    if len(raw) > MAX_LINE_BYTES:  # also bounds the digits int() reads (it refuses over 4300)
        unit = "bytes" if isinstance(raw, (bytes, bytearray)) else "characters"
        return Undecodable(f"line longer than {MAX_LINE_BYTES} {unit}")
    try:
        text = decode_line(raw)
    except UnicodeDecodeError as error:
        return Undecodable(f"line is not UTF-8 text (byte 0x{raw[error.start]:02x} at {error.start})")
    if in_board:
        if text.upper() == "DONE":
            return Done()
        if not text:
            return Blank()
        if _BOARDISH.fullmatch(text):
            return Stone(text)
        return NotAStone(text)
    return parse_command(text)


def parse_command(text: str) -> Record:
    """A decoded line (outside a BOARD block) as a record."""
    if not text:
        return Blank()
    command, argument = _split_word(text)
    command, argument = command.upper(), argument.strip()
    try:
        if command in _NO_ARGUMENT_COMMANDS and argument:  # "END x" is not END: the engine goes on
            return Malformed(f"{command} takes no argument, got {argument!r}")
        if command == "END":
            return End()
        if command == "START":
            size = parse_int(argument, "START expects a board size, e.g. START 9")
            return Start(size, size)
        if command == "RECTSTART":
            return Start(*parse_pair(argument, "RECTSTART expects width,height, e.g. RECTSTART 9,9"))
        if command in ("TURN", "TAKEBACK"):
            x, y = parse_pair(argument, f"{command} expects x,y, got {argument!r}")
            return Turn(x, y) if command == "TURN" else Takeback(x, y)
        if command in _NO_ARGUMENT:
            return _NO_ARGUMENT[command]
        if command == "INFO":
            return parse_info(argument)
    except ProtocolError as error:
        return Malformed(str(error))
    return Unknown(command)


_NO_ARGUMENT = {"RESTART": Restart(), "BEGIN": Begin(), "BOARD": BoardBegin(), "SWAP2BOARD": Swap2BoardBegin(),
                "ABOUT": About()}


_NO_ARGUMENT_COMMANDS = ("END", *_NO_ARGUMENT)


def _split_word(text: str) -> tuple[str, str]:
    """(the first word, the rest) at the first run of spaces or tabs."""
    word, *rest = text.split(None, 1) or [""]
    return word, rest[0] if rest else ""


def parse_info(argument: str) -> Info | BadInfo:
    key, value = _split_word(argument)
    key, value = key.lower(), value.strip()
    if not key:
        return BadInfo("INFO without a key")
    number = None
    if key in INTEGER_INFO:
        try:
            number = parse_int(value, f"INFO {key} expects an integer, got {value!r}")
        except ProtocolError as error:
            return BadInfo(str(error))
        if key in NON_NEGATIVE_INFO and number < 0:
            return BadInfo(f"INFO {key} must be at least 0, got {number}")
    return Info(key, value, number)


def parse_int(text: str, error: str) -> int:
    text = text.strip()
    if not _DIGITS.fullmatch(text):
        raise ProtocolError(error)
    return int(text)


def parse_pair(text: str, error: str) -> tuple[int, int]:
    match = _POINT.fullmatch(text)
    if not match:
        raise ProtocolError(error)
    return int(match.group(1)), int(match.group(2))


def parse_stones(lines: list[str], board: Board) -> tuple[list[int], list[int], list[int]]:
    """The moves of the engine's stones, of the opponent's, and the 1/2 order in which the lines
    gave them, from the lines of a BOARD block on ``board``'s size. Who 3 marks a stone of a five
    in a continuous game (or a renju forbidden point): a game this engine does not play on."""
    own: list[int] = []
    theirs: list[int] = []
    order: list[int] = []
    seen: set[int] = set()
    for text in lines:
        match = _BOARD_LINE.fullmatch(text)
        if not match:
            raise ProtocolError(f"BOARD: malformed line {text!r} (expected x,y,who)")
        x, y, who = (int(g) for g in match.groups())
        if who == 3:
            raise ProtocolError(f"BOARD: line {text!r}: who 3 marks a five of a continuous game (or a forbidden "
                                f"point), which this engine does not play on")
        if who not in (1, 2):
            raise ProtocolError(f"BOARD: line {text!r}: who must be 1, 2 or 3")
        move = move_at(board, x, y, f"BOARD: line {text!r}")
        if move in seen:
            raise ProtocolError(f"BOARD: two stones at {x},{y}")
        seen.add(move)
        (own if who == 1 else theirs).append(move)
        order.append(who)
    return own, theirs, order


# ---------------------------------------------------------------------------- positions
def move_at(board: Board, x: int, y: int, context: str) -> int:
    if not (0 <= x < board.width and 0 <= y < board.height):
        raise ProtocolError(f"{context}: {x},{y} is off the {board.width}x{board.height} board")
    return y * board.width + x


def xy(board: Board, move: int) -> tuple[int, int]:
    y, x = divmod(move, board.width)
    return x, y


def result_text(board: Board, winner: int) -> str:
    if winner == -1:
        return "the board is full (a draw)"
    x, y = xy(board, board.last_move)
    return f"five in a row, completed at {x},{y}"


def unsupported_rule(rule: int) -> list[str]:
    """Names of the rule bits of ``rule`` this engine cannot play (empty when it can)."""
    return [name for bit, name in UNSUPPORTED_RULES.items() if rule & bit]


def rebuild_board(width: int, height: int, own: list[int], theirs: list[int],
                  order: list[int] | None = None) -> Board:
    """A Board with ``own`` and ``theirs`` stones and the engine (``own``) to move.

    The Board needs a move history that alternates colours, while BOARD gives stones only. With
    as many own stones as the opponent's, the engine moved first; with one fewer, second. Any
    other count is an error. When the manager listed the stones alternately ending with the
    opponent's (``order``, as Piskvork does with the real game), that order is the history;
    otherwise the stones of each colour are interleaved in the order given. The search only
    sees colours, so the order does not matter to it, except that the "last move" plane of the
    net's input then shows an arbitrary opponent stone: acceptable, the planes are otherwise exact.
    """
    if len(own) == len(theirs):
        first, second = own, theirs
    elif len(own) == len(theirs) - 1:
        first, second = theirs, own
    else:
        raise ProtocolError(f"BOARD: {len(own)} own stones and {len(theirs)} of the opponent's; "
                            "with the engine to move it must have as many or one fewer")
    expected = [1 if first is own else 2, 2 if first is own else 1] * len(first)
    if order is not None and order == expected[: len(order)] and len(order) == len(own) + len(theirs):
        mine, others = iter(own), iter(theirs)
        moves = [next(mine) if who == 1 else next(others) for who in order]
    else:
        moves = [m for pair in zip(first, second) for m in pair] + first[len(second):]
    board = Board(width, height, N_IN_ROW)
    try:
        for move in moves:
            board.do_move(move)
    except IllegalMoveError as error:  # a line of five before the last stone
        raise ProtocolError("BOARD: the position already has five in a row; the game is over") from error
    ended, winner = board.game_end()
    if ended:
        raise ProtocolError("BOARD: the game is over: " + result_text(board, winner))
    return board


# ---------------------------------------------------------------------------- answers
def format_move(x: int, y: int) -> str:
    return f"{x},{y}"


def format_error(reason: str) -> str:
    return "ERROR " + _one_line(reason)


def format_unknown(command: str) -> str:
    return f"UNKNOWN command {ascii(command)}"


def format_message(text: str) -> str:
    return "MESSAGE " + _one_line(text)


def encode_answer(text: str) -> bytes:
    """An answer as the bytes of one line: ASCII (managers expect it), anything else escaped."""
    return _one_line(text).encode("ascii") + b"\n"


def _one_line(text: str) -> str:
    """One line of ASCII: whitespace (newlines too) collapsed, other characters escaped."""
    return " ".join(str(text).split()).encode("ascii", "backslashreplace").decode("ascii")
