"""The game behind the play window, and its commands; no pygame, no AI.

A ``Session`` holds the line of moves played (``history``, each with who played it) and how many
of them the board shows (``cursor``): stepping back and forth only moves the cursor, and any move,
undo or resume while looking at an earlier position drops the moves after it and goes on from
there. The person plays one colour (``human``), the AI the other.

Saved games are plain text (``format_game`` / ``parse_game``): an optional ``#`` header, then one
move per line in board coordinates (``E5``; column letter, row 1 at the bottom), where ``#`` after a
move starts a comment (the AI's setting for that move, when it changed during the game). ``parse_game``
also reads moves separated by commas or spaces, so ``--moves E5,D4`` and a saved file read the same.
A game for another rule than five in a row says so in its header (``# n_in_row: 4``).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Sequence

from gomoku.game.board import DEFAULT_N_IN_ROW, DEFAULT_SIZE, DRAW, EMPTY, Board, other
from gomoku.players import COLUMN_LETTERS, format_point, parse_point
from gomoku.tactics.threats import MIN_N_IN_ROW  # below this every game is won in a move or two

N_IN_ROW = DEFAULT_N_IN_ROW  # the rule unless a model (or --n-in-row) says otherwise
MIN_SIZE = 5  # the smallest board the window plays, whatever the rule
MAX_SIZE = len(COLUMN_LETTERS)
BLACK, WHITE = 1, 2
COLOUR_NAMES = {BLACK: "Black", WHITE: "White"}
FILE_TITLE = "# gomoku-zero game"
YOU_NAME = "you"  # the player header of the person's colour in a saved game
YOU_HEADER = {"black": BLACK, "white": WHITE}  # the values of the ``you`` header
SHOWN_CHARS = 40  # of a file's token or header value quoted in an error
MAX_POINT_CHARS = 8  # longer than any point ("Z26", "a10" with spaces trimmed): not a point
SIZE_DIGITS = 4  # at most this many digits in a header's size (int() refuses over 4,300)


class SetupError(Exception):
    """The window cannot start as asked: a bad player spec or move list, a missing model..."""


class Author(str, Enum):
    """Who played a move."""

    YOU = "you"
    AI = "ai"
    SETUP = "set-up"  # given with --moves (or a saved game without player headers)


@dataclass(frozen=True)
class Played:
    move: int
    by: Author
    player: str = ""  # the AI's setting when it played the move ("az:models/9x9.pt:1600"), else ""


@dataclass(frozen=True)
class SavedGame:
    """A game read from text: the board size, the moves, and the header's players and result."""

    size: int
    moves: tuple[int, ...]
    black: str = ""
    white: str = ""
    result: str = ""
    n_in_row: int = N_IN_ROW
    you: str = ""  # the ``you`` header: the person's colour at the end, written after a swap in mid-game
    notes: tuple[str, ...] = ()  # each move's comment ("" for none): who played it, after a swap

    def human_colour(self) -> int | None:
        """The person's colour: the ``you`` header's, else the colour whose player header is
        ``you``, if exactly one is."""
        if self.you.lower() in YOU_HEADER:
            return YOU_HEADER[self.you.lower()]
        you = [c for c, name in ((BLACK, self.black), (WHITE, self.white)) if name.lower() == YOU_NAME]
        return you[0] if len(you) == 1 else None

    def authors(self) -> tuple[Author, ...] | None:
        """Who played each move, when the file says: each move's note (``you`` or the AI's
        setting) where the game names its players move by move, else by the person's colour."""
        human = self.human_colour()
        if human is None:
            return None
        by_colour = [Author.YOU if i % 2 == human - 1 else Author.AI for i in range(len(self.moves))]
        if not any(self.notes):
            return tuple(by_colour)
        return tuple(Author.YOU if note.lower() == YOU_NAME else Author.AI if note else colour
                     for note, colour in zip(self.notes, by_colour))


def new_board(size: int, n_in_row: int = N_IN_ROW) -> Board:
    return Board(size, size, n_in_row)


def check_size(size: int, n_in_row: int = N_IN_ROW) -> None:
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise SetupError(f"the board size must be {MIN_SIZE} to {MAX_SIZE} points a side, got {size}")
    check_n_in_row(n_in_row, size)


def check_n_in_row(n_in_row: int, size: int | None = None) -> None:
    if not MIN_N_IN_ROW <= n_in_row <= (size or MAX_SIZE):
        board = f" on a {size}x{size} board" if size else ""
        raise SetupError(f"the stones in a row to win must be {MIN_N_IN_ROW} to {size or MAX_SIZE}{board}, "
                         f"got {n_in_row}")


# ------------------------------------------------------------------------------ the game
class Session:
    """The moves of one game, the position shown, and who plays which colour."""

    def __init__(self, size: int = DEFAULT_SIZE, human: int = BLACK, moves: tuple[int, ...] = (),
                 authors: tuple[Author, ...] | None = None, n_in_row: int = N_IN_ROW):
        check_size(size, n_in_row)
        self.size = size
        self.n_in_row = n_in_row
        self.human = human
        self.board = new_board(size, n_in_row)
        self.history: list[Played] = []
        authors = authors or (Author.SETUP,) * len(moves)
        for move, by in zip(moves, authors):
            self.board.do_move(move)
            self.history.append(Played(move, by))

    # -------------------------------------------------------------------------- queries
    @property
    def cursor(self) -> int:
        """How many moves of the history the board shows."""
        return len(self.board.moves)

    @property
    def ai_colour(self) -> int:
        return other(self.human)

    def position(self) -> tuple[int, ...]:
        return tuple(self.board.moves)

    def reviewing(self) -> bool:
        """True while the board shows an earlier position than the last one played."""
        return self.cursor < len(self.history)

    def game_over(self) -> bool:
        return self.board.game_end()[0]

    def human_to_move(self) -> bool:
        """The person may play here (also while reviewing: playing then goes on from here)."""
        return not self.game_over() and self.board.current_player == self.human

    def ai_to_move(self) -> bool:
        """The AI should think now: the latest position, its colour to move, the game not over."""
        return not self.reviewing() and not self.game_over() and self.board.current_player == self.ai_colour

    def to_move_at(self, ply: int) -> int:
        """The colour to move after ``ply`` moves."""
        return self.board.start_player if ply % 2 == 0 else other(self.board.start_player)

    def author(self, index: int) -> Author:
        return self.history[index].by

    def result_text(self) -> str:
        """ "Black wins", "Draw", or "" while the game goes on (at the last position played)."""
        final = new_board(self.size, self.n_in_row)
        for played in self.history:
            final.do_move(played.move)
        ended, winner = final.game_end()
        if not ended:
            return ""
        return "Draw" if winner == DRAW else f"{COLOUR_NAMES[winner]} wins"

    # -------------------------------------------------------------------------- commands
    def play(self, move: int, by: Author, player: str = "") -> None:
        """Play ``move`` at the position shown (dropping any later moves); ``player`` is the AI's
        setting for its moves. Raises the board's IllegalMoveError (a ValueError), and then
        changes nothing."""
        self.board.do_move(move)
        del self.history[self.cursor - 1:]
        self.history.append(Played(move, by, player))

    def resume(self) -> int:
        """Go on from the position shown: drop the later moves. Returns how many were dropped."""
        dropped = len(self.history) - self.cursor
        del self.history[self.cursor:]
        return dropped

    def new_game(self) -> None:
        self.board = new_board(self.size, self.n_in_row)
        self.history = []

    def undo(self) -> tuple[Played, ...]:
        """Back to the latest position before the one shown where the person is to move; the
        moves taken back in the order they were played, the later ones of a game stepped back
        through included (none, and nothing changed, when there is no such position)."""
        target = next((ply for ply in range(self.cursor - 1, -1, -1) if self.to_move_at(ply) == self.human),
                       None)
        if target is None:
            return ()
        taken = tuple(self.history[target:])
        self.go_to(target)
        self.resume()
        return taken

    def swap(self) -> bool:
        """The person takes the other colour. After a finished game, or before the first move, that
        starts a new game; returns True then."""
        self.human = other(self.human)
        if not self.history or (self.game_over() and not self.reviewing()):
            self.new_game()
            return True
        return False

    def go_to(self, ply: int) -> int:
        """Show the position after ``ply`` moves of the history (clamped); returns the ply shown."""
        ply = max(0, min(ply, len(self.history)))
        while self.cursor > ply:
            self.board.undo_move()
        while self.cursor < ply:
            self.board.do_move(self.history[self.cursor].move)
        return ply

    def back(self, steps: int = 1) -> int:
        return self.go_to(self.cursor - steps)

    def forward(self, steps: int = 1) -> int:
        return self.go_to(self.cursor + steps)

    # -------------------------------------------------------------------------- saving
    def to_text(self, ai_name: str) -> str:
        """The game as saved text. Each colour's header names who played its moves: ``you``, or
        the AI's setting when it played them (``ai_name`` for a colour nobody has played yet). A
        colour played by more than one (the AI's setting changed, or a swap in mid-game) lists
        them all, each of its moves names its own player, and a ``you`` header says which colour the
        person had at the end (the colour to play on with when the game is loaded)."""
        players = [self._player_name(played, ai_name) for played in self.history]
        names = {}
        for colour in (BLACK, WHITE):
            named = [name for ply, name in enumerate(players) if name and self.to_move_at(ply) == colour]
            names[colour] = list(dict.fromkeys(named)) or [YOU_NAME if colour == self.human else ai_name]
        notes = [name if len(names[self.to_move_at(ply)]) > 1 else "" for ply, name in enumerate(players)]
        swapped = any(YOU_NAME in listed and len(listed) > 1 for listed in names.values())
        return format_game(self.size, [p.move for p in self.history], ", ".join(names[BLACK]),
                           ", ".join(names[WHITE]), self.result_text(), notes, self.n_in_row,
                           you=self.human if swapped else None)

    @staticmethod
    def _player_name(played: Played, ai_name: str) -> str:
        """Who played a move, as a saved game names it: ``you``, the AI's setting, or "" (set-up)."""
        if played.by == Author.YOU:
            return YOU_NAME
        return (played.player or ai_name) if played.by == Author.AI else ""


def describe_undo(taken: tuple[Played, ...], board: Board) -> str:
    """What an undo took back, in words: "Took back your move D4 and the AI's reply E4."."""
    if not taken:
        return "Nothing of yours to take back (use Left to step back through the game)."
    groups: list[tuple[Author, list[str]]] = []
    for played in taken:
        name = format_point(board, played.move)
        if groups and groups[-1][0] == played.by:
            groups[-1][1].append(name)
        else:
            groups.append((played.by, [name]))
    if [by for by, _ in groups] == [Author.YOU, Author.AI] and len(groups[1][1]) == 1 and len(groups[0][1]) == 1:
        return f"Took back your move {groups[0][1][0]} and the AI's reply {groups[1][1][0]}."
    owner = {Author.YOU: "your", Author.AI: "the AI's", Author.SETUP: "the set-up"}
    parts = [f"{owner[by]} move{'s' if len(names) > 1 else ''} {', '.join(names)}" for by, names in groups]
    return "Took back " + " and ".join(parts) + "."


def initial_game(moves: str | Path | Sequence[int] | None, load: str | Path | None, size: int | None,
                 default_size: int = DEFAULT_SIZE, n_in_row: int | None = None,
                 default_n_in_row: int = N_IN_ROW) -> SavedGame:
    """The game to start from: a saved game (``load``), ``moves`` (text, a file, or move numbers).
    The board is ``size``, else a saved game's, else ``default_size`` (the model's board); the rule
    is ``n_in_row``, else a saved game's, else ``default_n_in_row`` (the model's). A bad ``size``
    or ``n_in_row`` is an error naming --size or --n-in-row."""
    if moves is not None and load is not None:
        raise SetupError("give --moves or --load, not both")
    if size is not None:
        _check_option("--size", check_size, size)
    if n_in_row is not None:
        _check_option("--n-in-row", check_n_in_row, n_in_row, size)
    if load is not None:
        text = read_game_file(load)
        try:
            return parse_game(text, size, default_size, n_in_row, default_n_in_row)
        except SetupError as error:
            raise SetupError(f"bad game in {load}: {error}") from error
    if isinstance(moves, (str, Path)):
        text = str(moves)
        if isinstance(moves, Path) or (text and Path(text).is_file()):
            text = read_game_file(text)
        try:
            return parse_game(text, size, default_size, n_in_row, default_n_in_row)
        except SetupError as error:
            raise SetupError(f"bad --moves: {error}") from error
    size = default_size if size is None else size
    n_in_row = default_n_in_row if n_in_row is None else n_in_row
    check_size(size, n_in_row)
    board = new_board(size, n_in_row)
    try:
        for move in moves or ():
            board.do_move(int(move))
    except ValueError as error:
        raise SetupError(f"bad --moves: {error}") from error
    return SavedGame(size, tuple(board.moves), n_in_row=n_in_row)


def _check_option(option: str, check, *args) -> None:
    """``check(*args)``, its SetupError naming the option asked for: "bad --size: ..."."""
    try:
        check(*args)
    except SetupError as error:
        raise SetupError(f"bad {option}: {error}") from None


def read_game_file(path: str | Path) -> str:
    """A saved game's text: UTF-8, with or without a byte order mark; a SetupError otherwise, and
    for a games file of evaluate.py --games-out (JSON lines, each game's moves in its "moves")."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise SetupError(f"cannot read {path}: not UTF-8 text (byte {error.start}); "
                         "a saved game is plain text, one move per line") from None
    except OSError as error:
        raise SetupError(f"cannot read {path}: {error.strerror or error}") from error
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if first.startswith("{") and '"moves"' in first:
        raise SetupError(f"{path} is a games file of evaluate.py --games-out (one JSON line a game), not a "
                         "saved game: replay one of its games with --moves and that game's \"moves\"")
    return text


# ------------------------------------------------------------------------------ text format
def format_game(size: int, moves: list[int], black: str, white: str, result: str = "",
                notes: Sequence[str] = (), n_in_row: int = N_IN_ROW, you: int | None = None) -> str:
    """The saved-game text; ``notes[i]``, when given and not empty, follows move i as a comment.
    The rule is in the header only when it is not five in a row; ``you`` (a colour) only when given."""
    board = new_board(size, n_in_row)
    lines = [FILE_TITLE, f"# size: {size}x{size}", f"# black: {black}", f"# white: {white}"]
    if you is not None:
        lines.append(f"# you: {COLOUR_NAMES[you].lower()}")
    if n_in_row != N_IN_ROW:
        lines.insert(2, f"# n_in_row: {n_in_row}")
    if result:
        lines.append(f"# result: {result}")
    for move, note in itertools.zip_longest(moves, notes[:len(moves)], fillvalue=""):
        lines.append(f"{format_point(board, move)}  # {note}" if note else format_point(board, move))
    return "\n".join(lines) + "\n"


def shown(text: str) -> str:
    """``repr(text)``, cut to about ``SHOWN_CHARS`` characters: a file's token or header value in a
    message (a 3 MB token made a 3 MB error)."""
    return repr(text) if len(text) <= SHOWN_CHARS else repr(text[:SHOWN_CHARS]) + f"... ({len(text):,} characters)"


def _header_size(value: str) -> int:
    match = re.fullmatch(r"(\d{1,%d})(?:\s*x\s*(\d+))?" % SIZE_DIGITS, value.strip())
    if not match or (match.group(2) and match.group(2) != match.group(1)):
        raise SetupError(f"bad size {shown(value)} in the header: expected a square board like 9x9")
    return int(match.group(1))


def _header_n_in_row(value: str) -> int:
    if not re.fullmatch(r"\d{1,%d}" % SIZE_DIGITS, value.strip()):
        raise SetupError(f"bad n_in_row {shown(value)} in the header: expected a number like 4")
    return int(value)


def parse_game(text: str, size: int | None = None, default_size: int = DEFAULT_SIZE, n_in_row: int | None = None,
               default_n_in_row: int = N_IN_ROW) -> SavedGame:
    """Moves (and an optional header) -> SavedGame; every move is checked on a board.

    ``size`` is the board size asked for: None takes the header's (or ``default_size``); a header
    that says another size is an error. ``n_in_row`` (the rule) likewise, from the header's
    ``n_in_row`` (or ``default_n_in_row``). Errors are SetupError naming the move: "move 2, E5:
    that point is already taken".
    """
    headers: dict[str, str] = {}
    tokens: list[str] = []
    notes: list[str] = []  # each token's comment: that of its line, for a line of one move
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("#"):
            key, sep, value = line[1:].partition(":")
            if sep:
                headers[key.strip().lower()] = value.strip()
            continue
        moves_text, _, comment = line.partition("#")
        found = [token for token in re.split(r"[,;\s]+", moves_text) if token]
        tokens += found
        notes += [comment.strip() if len(found) == 1 else ""] * len(found)
    if "you" in headers and headers["you"].lower() not in YOU_HEADER:
        raise SetupError(f"bad you {shown(headers['you'])} in the header: expected black or white")
    file_size = _header_size(headers["size"]) if "size" in headers else None
    if size is not None and file_size is not None and size != file_size:
        raise SetupError(f"the game is for a {file_size}x{file_size} board, not {size}x{size}")
    file_rule = _header_n_in_row(headers["n_in_row"]) if "n_in_row" in headers else None
    if n_in_row is not None and file_rule is not None and n_in_row != file_rule:
        raise SetupError(f"the game is for {file_rule} in a row, not {n_in_row}")
    size = next((s for s in (size, file_size) if s is not None), default_size)
    n_in_row = next((n for n in (n_in_row, file_rule) if n is not None), default_n_in_row)
    check_size(size, n_in_row)
    board = new_board(size, n_in_row)
    for number, token in enumerate(tokens, 1):
        try:
            if len(token) > MAX_POINT_CHARS:  # int() of a row of 3,000,000 digits says more than this
                raise ValueError("expected a column letter and a row number, like E5")
            move = parse_point(board, token)
        except ValueError as error:
            raise SetupError(f"move {number}, {shown(token)}: {error}") from error
        where = f"move {number}, {format_point(board, move)}"
        if board.game_end()[0]:
            raise SetupError(f"{where}: the game was already over")
        if board.stone(move) != EMPTY:
            raise SetupError(f"{where}: that point is already taken")
        board.do_move(move)
    return SavedGame(size, tuple(board.moves), headers.get("black", ""), headers.get("white", ""),
                     headers.get("result", ""), n_in_row, headers.get("you", ""), tuple(notes))
