"""A Gomocup / Piskvork engine: the "pbrain" text protocol on top of any player.

The manager writes one command per line; the engine answers on its own lines (``OK``, a move
``x,y``, ``ERROR reason``, ``UNKNOWN reason``, ``MESSAGE text``, ``DEBUG text``). Coordinates are
0-based with ``x`` the column and ``y`` the row, so ``move = y * width + x`` as on ``Board``.

``PbrainEngine`` is the whole protocol as a class: feed it lines with ``handle_line`` and it calls
``write`` with each answer, so it can be tested without a subprocess. ``serve`` runs it on a pair
of streams (what ``scripts/pbrain.py`` does), reading stdin on a thread so that ``END`` stops a
search that is running and the process exits promptly.

What the engine plays: by default the AlphaZero player of ``models/9x9.pt`` (board sizes the net
was trained for only), or pure MCTS when there is no model; ``player_spec`` picks any player spec
(``pure:N``, ``minimax:D``, ``az:PATH:N``...). Only freestyle is played: a rule bit for exactly
five, renju or caro is answered with ERROR, and moves are refused until a playable rule is set.

Time: ``INFO timeout_turn`` / ``timeout_match`` / ``time_left`` (milliseconds) bound the thinking
time of the search players (pure and az); the search stops early and plays the best move so far.
Without a limit the search runs its full playout count. Other players ignore the clock.
"""

from __future__ import annotations

import logging
import math
import os
import queue
import re
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TextIO

from gomoku.game.board import EMPTY, Board, IllegalMoveError, other
from gomoku.players import SHIPPED_MODEL, winning_points

log = logging.getLogger(__name__)

NAME = "gomoku-zero"
VERSION = "0.1.0"
AUTHOR = "gomoku-zero developers"
COUNTRY = "International"
ABOUT = f'name="{NAME}", version="{VERSION}", author="{AUTHOR}", country="{COUNTRY}"'

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = REPO_ROOT / SHIPPED_MODEL
AZ_PLAYOUTS = 800  # per move for the model when --playouts is not given
PURE_PLAYOUTS = 2000  # per move for the pure-MCTS fallback when --playouts is not given
N_IN_ROW = 5
MIN_SIZE = N_IN_ROW
MAX_SIZE = 32  # the search's per-node arrays grow with the board; Gomocup uses 15 and 20

# Rule bits of INFO rule. Bit 2 (continuous game) only says the manager may go on after a line
# of five; it does not change what a move is worth, so freestyle play is right for it.
RULE_EXACTLY_FIVE = 1
RULE_CONTINUOUS = 2
RULE_RENJU = 4
RULE_CARO = 8
UNSUPPORTED_RULES = {RULE_EXACTLY_FIVE: "exactly five", RULE_RENJU: "renju", RULE_CARO: "caro"}

# Time management (all limits from the manager are in milliseconds).
TIME_SAFETY = 0.8  # use this share of the budget for the search...
TIME_OVERHEAD = 0.05  # ...minus this many seconds for the reply, pipes and the manager
MIN_THINK = 0.01  # never plan fewer seconds than this (one search round still runs)
MOVES_LEFT_MIN = 5  # spread time_left over at least this many and at most MOVES_LEFT_MAX moves
MOVES_LEFT_MAX = 25
ROUND_SAFETY = 1.25  # stop when the next round, as long as the last one times this, would overrun
END_GRACE = 0.8  # seconds serve() waits for a clean exit after END before exiting hard

_POINT = re.compile(r"\s*(-?\d+)\s*,\s*(-?\d+)\s*")
_BOARD_LINE = re.compile(r"\s*(-?\d+)\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*")


class ProtocolError(ValueError):
    """A command that cannot be carried out; its message becomes an ``ERROR`` line."""


@dataclass
class EngineOptions:
    """What to play with. ``player_spec`` wins over ``model``; ``fallback_spec`` plays board
    sizes the main player cannot (None: answer START with ERROR for them)."""

    model: Path | None = None  # None: DEFAULT_MODEL if it exists, else pure MCTS
    playouts: int | None = None  # per move for the model / the pure fallback
    player_spec: str | None = None
    fallback_spec: str | None = None
    seed: int | None = None
    shortcuts: bool = True  # play a win in one / block the opponent's line at once, without search
    onnx: bool = False  # run the net with onnxruntime (a .pt model is exported at START)


@dataclass
class _Loaded:
    player: object
    description: str
    sizes: tuple[tuple[int, int], ...] | None  # (width, height) it plays, None for any size
    message: str | None = None  # said at START (e.g. "no model, playing pure MCTS")


class PbrainEngine:
    """The protocol state machine. ``handle_line`` returns False once the manager sent ``END``."""

    def __init__(self, options: EngineOptions | None = None, write: Callable[[str], None] = print,
                 stop_event=None,
                 clock: Callable[[], float] = time.perf_counter):
        self.options = options or EngineOptions()
        self.write = write
        self.stop_event = stop_event  # anything with is_set(); set by serve() when END is due
        self.clock = clock
        self.board: Board | None = None
        self.player = None
        self._main: _Loaded | None = None
        self._fallbacks: dict[tuple[int, int], _Loaded] = {}
        self._board_lines: list[str] | None = None  # collecting a BOARD block
        self._received_at = 0.0
        # INFO values (milliseconds; None = not sent).
        self.timeout_turn: int | None = None
        self.timeout_match: int | None = None
        self.time_left: int | None = None
        self.max_memory: int | None = None
        self.game_type: int | None = None
        self.rule = 0
        self.info: dict[str, str] = {}

    # ------------------------------------------------------------------ dispatch
    def handle_line(self, line: str) -> bool:
        """Process one line from the manager; False when the engine should exit."""
        self._received_at = self.clock()
        text = line.strip()
        if self._board_lines is not None:
            if self._collect_board_line(text):
                return True
            if text.upper() == "END":
                return False
        if not text:
            return True
        command, _, argument = text.partition(" ")
        command = command.upper()
        argument = argument.strip()
        if command == "END":
            return False
        handler = self._HANDLERS.get(command)
        if handler is None:
            self.write(f"UNKNOWN command {command!r}")
            return True
        try:
            handler(self, argument)
        except ProtocolError as error:
            self.write(f"ERROR {error}")
        except Exception as error:  # never die on one command: report it and keep serving
            log.exception("command %r failed", text)
            self.write(f"ERROR internal error on {command}: {type(error).__name__}: {error}")
        return True

    def message(self, text: str) -> None:
        self.write(f"MESSAGE {text}")

    # ------------------------------------------------------------------ players
    def _load_main(self) -> _Loaded:
        if self._main is not None:
            return self._main
        options = self.options
        if options.player_spec:
            self._main = self._load_spec(options.player_spec)
        else:
            model = options.model
            if model is None and DEFAULT_MODEL.is_file():
                model = DEFAULT_MODEL
            if model is not None:
                if not Path(model).is_file():
                    raise ProtocolError(f"no model file at {model}")
                self._main = self._load_spec(f"az:{model}:{options.playouts or AZ_PLAYOUTS}")
            else:
                playouts = options.playouts or PURE_PLAYOUTS
                self._main = self._load_spec(f"pure:{playouts}")
                self._main.message = (f"no model at {DEFAULT_MODEL}: playing pure MCTS with {playouts} "
                                      "playouts (weak); pass --model PATH to use a trained net")
        return self._main

    def _load_spec(self, spec: str) -> _Loaded:
        from gomoku.players import make_player  # lazy: keeps START cheap to reach

        kind, _, rest = spec.strip().partition(":")
        if kind == "human":
            raise ProtocolError("the human player cannot run behind the protocol")
        if kind == "az":
            path, _, playouts = rest.rpartition(":")
            if path and playouts.isdigit() and int(playouts) > 0 and (
                    self.options.onnx or path.lower().endswith(".onnx")):
                loaded = self._load_onnx(Path(path), int(playouts))
                if loaded is not None:
                    return loaded
        try:
            player = make_player(spec, seed=self.options.seed)
        except ValueError as error:  # bad spec or CheckpointError (a ValueError)
            raise ProtocolError(f"cannot load player {spec!r}: {error}".replace("\n", " ")) from error
        config = getattr(player, "net_config", None)
        sizes = None if config is None else ((config.width, config.height),)
        return _Loaded(player, getattr(player, "name", spec), sizes)

    def _load_onnx(self, path: Path, playouts: int) -> _Loaded | None:
        """An AlphaZero player on onnxruntime; None (and a MESSAGE) when it cannot run, so that a
        .pt model falls back to torch."""
        try:
            evaluator = onnx_evaluator(path)
        except ImportError as error:
            if path.suffix.lower() == ".onnx":
                raise ProtocolError(f"cannot run {path}: {error}") from error
            self.message(f"{error}; running the net with torch")
            return None
        except Exception as error:  # a bad file, a failed export check
            raise ProtocolError(f"cannot run {path} with onnxruntime: {error}".replace("\n", " ")) from error
        from gomoku.players.search import AlphaZeroPlayer

        player = AlphaZeroPlayer(evaluator, n_playout=playouts, seed=self.options.seed,
                                 name=f"az:{path}:{playouts} (onnxruntime)")
        player.net_config = evaluator.config
        return _Loaded(player, player.name, ((evaluator.width, evaluator.height),))

    def _player_for(self, width: int, height: int) -> _Loaded:
        main = self._load_main()
        if main.sizes is None or (width, height) in main.sizes:
            return main
        shown = ", ".join(f"{w}x{h}" for w, h in main.sizes)
        if not self.options.fallback_spec:
            raise ProtocolError(f"board {width}x{height} not supported: {main.description} plays {shown} only")
        if (width, height) not in self._fallbacks:
            fallback = self._load_spec(self.options.fallback_spec)
            if fallback.sizes is not None and (width, height) not in fallback.sizes:
                raise ProtocolError(f"board {width}x{height} not supported by {main.description} "
                                    f"nor by the fallback {fallback.description}")
            fallback.message = (f"{main.description} plays {shown} only: playing {width}x{height} with "
                                f"{fallback.description}")
            self._fallbacks[(width, height)] = fallback
        return self._fallbacks[(width, height)]

    # ------------------------------------------------------------------ commands
    def _cmd_start(self, argument: str) -> None:
        size = _parse_int(argument, "START expects a board size, e.g. START 9")
        self._start(size, size)

    def _cmd_rectstart(self, argument: str) -> None:
        width, height = _parse_pair(argument, "RECTSTART expects width,height, e.g. RECTSTART 9,9")
        self._start(width, height)

    def _start(self, width: int, height: int) -> None:
        if not (MIN_SIZE <= width <= MAX_SIZE and MIN_SIZE <= height <= MAX_SIZE):
            raise ProtocolError(f"board {width}x{height} not supported: sizes {MIN_SIZE} to {MAX_SIZE} only")
        loaded = self._player_for(width, height)
        if loaded.message:
            self.message(loaded.message)
        self.player = loaded.player
        self.player.reset()
        self.board = Board(width, height, N_IN_ROW)
        self._board_lines = None
        self.write("OK")

    def _cmd_restart(self, argument: str) -> None:
        board = self._require_board()
        self.board = Board(board.width, board.height, N_IN_ROW)
        self.player.reset()
        self.write("OK")

    def _cmd_begin(self, argument: str) -> None:
        board = self._require_board()
        if board.moves:
            raise ProtocolError("BEGIN on a board that already has stones (use RESTART first)")
        self._play()

    def _cmd_turn(self, argument: str) -> None:
        board = self._require_board()
        move = self._parse_move(argument, "TURN")
        self._check_playable(board)
        board.do_move(move)
        self._play()

    def _cmd_takeback(self, argument: str) -> None:
        board = self._require_board()
        move = self._parse_move(argument, "TAKEBACK", must_be_empty=False)
        if board.stone(move) == EMPTY:
            raise ProtocolError(f"TAKEBACK {argument}: there is no stone there")
        if board.last_move != move:
            # The history decides the colours of every later stone, so only the last one can go.
            x, y = _xy(board, board.last_move)
            raise ProtocolError(f"TAKEBACK {argument}: only the last move ({x},{y}) can be taken back")
        board.undo_move()
        self.write("OK")

    def _cmd_board(self, argument: str) -> None:
        self._require_board()
        self._board_lines = []

    def _collect_board_line(self, text: str) -> bool:
        """Take one line of a BOARD block; False when it is not one (the block is then abandoned)."""
        if text.upper() == "DONE":
            lines, self._board_lines = self._board_lines, None
            try:
                self._finish_board(lines)
            except ProtocolError as error:
                self.write(f"ERROR {error}")
            except Exception as error:
                log.exception("BOARD failed")
                self.write(f"ERROR internal error on BOARD: {type(error).__name__}: {error}")
            return True
        if not text:
            return True
        if _BOARD_LINE.fullmatch(text) or re.fullmatch(r"[-\d\s,]+", text):
            self._board_lines.append(text)
            return True
        self._board_lines = None
        self.write("ERROR BOARD block ended without DONE; position unchanged")
        return False

    def _finish_board(self, lines: list[str]) -> None:
        board = self._require_board()
        own: list[int] = []
        theirs: list[int] = []
        order: list[int] = []  # 1/2 per stone, in the order the manager listed them
        seen: set[int] = set()
        for text in lines:
            match = _BOARD_LINE.fullmatch(text)
            if not match:
                raise ProtocolError(f"BOARD: malformed line {text!r} (expected x,y,who); position unchanged")
            x, y, who = (int(g) for g in match.groups())
            if who == 3:
                continue  # a winning-line or forbidden-point mark, not a stone
            if who not in (1, 2):
                raise ProtocolError(f"BOARD: line {text!r}: who must be 1, 2 or 3; position unchanged")
            move = _move_at(board, x, y, f"BOARD line {text!r}")
            if move in seen:
                raise ProtocolError(f"BOARD: two stones at {x},{y}; position unchanged")
            seen.add(move)
            (own if who == 1 else theirs).append(move)
            order.append(who)
        self.board = rebuild_board(board.width, board.height, own, theirs, order)
        self.player.reset()
        self._play()

    def _cmd_info(self, argument: str) -> None:
        key, _, value = argument.partition(" ")
        key, value = key.lower(), value.strip()
        if not key:
            raise ProtocolError("INFO expects a key and a value")
        self.info[key] = value
        if key in ("timeout_turn", "timeout_match", "time_left", "max_memory", "game_type", "rule"):
            number = _parse_int(value, f"INFO {key} expects an integer, got {value!r}")
            if key == "rule":
                self._set_rule(number)
            else:
                setattr(self, key, number)
        # Anything else (evaluate, folder, future keys) is stored and otherwise ignored.

    def _set_rule(self, rule: int) -> None:
        self.rule = rule
        bad = [name for bit, name in UNSUPPORTED_RULES.items() if rule & bit]
        if bad:
            raise ProtocolError(f"rule {rule} ({', '.join(bad)}) is not supported: this engine plays "
                                "freestyle only (rule 0, or 2 for a continuous game)")

    def _cmd_about(self, argument: str) -> None:
        self.write(ABOUT)

    _HANDLERS = {
        "START": _cmd_start, "RECTSTART": _cmd_rectstart, "RESTART": _cmd_restart,
        "BEGIN": _cmd_begin, "TURN": _cmd_turn, "BOARD": _cmd_board, "INFO": _cmd_info,
        "ABOUT": _cmd_about, "TAKEBACK": _cmd_takeback,
    }

    # ------------------------------------------------------------------ helpers
    def _require_board(self) -> Board:
        if self.board is None:
            raise ProtocolError("no game: send START first")
        return self.board

    def _parse_move(self, argument: str, command: str, must_be_empty: bool = True) -> int:
        x, y = _parse_pair(argument, f"{command} expects x,y, got {argument!r}")
        board = self._require_board()
        move = _move_at(board, x, y, f"{command} {argument}")
        if must_be_empty and board.stone(move) != EMPTY:
            raise ProtocolError(f"{command} {argument}: that point is already occupied")
        return move

    def _check_playable(self, board: Board) -> None:
        ended, winner = board.game_end()
        if ended:
            raise ProtocolError("the game is over: " + _result_text(board, winner))

    # ------------------------------------------------------------------ moves
    def _play(self) -> None:
        """Choose, play and announce the engine's move on ``self.board``."""
        board = self._require_board()
        bad = [name for bit, name in UNSUPPORTED_RULES.items() if self.rule & bit]
        if bad:
            raise ProtocolError(f"rule {self.rule} ({', '.join(bad)}) is not supported; send INFO rule 0")
        self._check_playable(board)
        move = self.choose_move(board)
        board.do_move(move)
        x, y = _xy(board, move)
        self.write(f"{x},{y}")
        ended, winner = board.game_end()
        if ended:
            log.info("game over after our move %d,%d: %s", x, y, _result_text(board, winner))

    def choose_move(self, board: Board) -> int:
        """The engine's move on ``board`` (not changed); always a legal move."""
        legal = board.legal_moves()
        if self.options.shortcuts:
            forced = forced_move(board)
            if forced is not None:
                return forced
        try:
            move = self._search(board)
        except Exception as error:  # a player failure must not lose the game by silence
            log.exception("the player failed")
            self.message(f"player failed ({type(error).__name__}: {error}); playing a heuristic move")
            move = None
        if move is None or move not in legal:
            if move is not None:
                self.message(f"player chose an illegal move {move}; playing a heuristic move")
            from gomoku.players import HeuristicPlayer
            move = HeuristicPlayer().get_action(board)
        return int(move)

    def think_seconds(self, board: Board) -> float | None:
        """Seconds to spend on this move, or None when no time limit was set."""
        limits = []
        if self.timeout_turn:
            limits.append(self.timeout_turn / 1000)
        if self.timeout_match and self.time_left is not None:
            empties = len(board.availables)
            moves_left = min(MOVES_LEFT_MAX, max(MOVES_LEFT_MIN, math.ceil(empties / 2)))
            limits.append(max(self.time_left, 0) / 1000 / moves_left)
        if not limits:
            return None
        return max(MIN_THINK, min(limits) * TIME_SAFETY - TIME_OVERHEAD)

    def _search(self, board: Board) -> int | None:
        player = self.player
        seconds = self.think_seconds(board)
        analyse = getattr(player, "analyse", None)
        if analyse is None:
            return player.get_action(board.copy())
        if seconds is None and self.stop_event is None:
            result = analyse(board.copy())
        else:
            deadline = None if seconds is None else self._received_at + seconds
            last = [self.clock()]

            def should_stop() -> bool:
                if self.stop_event is not None and self.stop_event.is_set():
                    return True
                now = self.clock()
                round_time, last[0] = now - last[0], now
                return deadline is not None and now + ROUND_SAFETY * round_time >= deadline

            player.seconds = None  # our own deadline (counted from when the command arrived) rules
            result = analyse(board.copy(), should_stop=should_stop)
        log.debug("%s: %d playouts, value %+.3f", getattr(player, "name", "player"), result.playouts,
                  result.value)
        if result.visits.sum() <= 0:
            return None
        return result.best_move()


# ---------------------------------------------------------------------------- onnx
_exported: dict[Path, Path] = {}


def onnx_evaluator(path: Path, threads: int = 1):
    """An OnnxEvaluator for an exported model, or for a .pt model exported (and checked against
    torch) into a temporary folder on first use. Raises ImportError without onnx/onnxruntime."""
    from nets.onnx_export import require

    require("onnx")
    require("onnxruntime")
    from nets.onnx_evaluator import OnnxEvaluator

    path = Path(path)
    if path.suffix.lower() != ".onnx":
        if path.resolve() not in _exported:
            import atexit
            import shutil
            import tempfile

            from nets import load_net
            from nets.onnx_export import check_onnx, export_onnx

            net = load_net(path)
            folder = tempfile.mkdtemp(prefix="gomoku-zero-onnx-")
            atexit.register(shutil.rmtree, folder, True)
            exported = export_onnx(net, Path(folder) / "model.onnx")
            check_onnx(net, exported)
            _exported[path.resolve()] = exported
        path = _exported[path.resolve()]
    return OnnxEvaluator(path, threads=threads)


# ---------------------------------------------------------------------------- positions
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
        moves = _in_listed_order(own, theirs, order)
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
        raise ProtocolError("BOARD: the game is over: " + _result_text(board, winner))
    return board


def _in_listed_order(own: list[int], theirs: list[int], order: list[int]) -> list[int]:
    mine, others = iter(own), iter(theirs)
    return [next(mine) if who == 1 else next(others) for who in order]


def forced_move(board: Board) -> int | None:
    """A move that completes a line for the side to move, else one that blocks the opponent's
    line (when the opponent has a single winning point there is nothing better to do)."""
    me = board.current_player
    wins = winning_points(board, me)
    if wins:
        return wins[0]
    threats = winning_points(board, other(me))
    return threats[0] if threats else None


# ---------------------------------------------------------------------------- parsing
def _parse_int(text: str, error: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise ProtocolError(error) from None


def _parse_pair(text: str, error: str) -> tuple[int, int]:
    match = _POINT.fullmatch(text)
    if not match:
        raise ProtocolError(error)
    return int(match.group(1)), int(match.group(2))


def _move_at(board: Board, x: int, y: int, context: str) -> int:
    if not (0 <= x < board.width and 0 <= y < board.height):
        raise ProtocolError(f"{context}: {x},{y} is off the {board.width}x{board.height} board")
    return y * board.width + x


def _xy(board: Board, move: int) -> tuple[int, int]:
    y, x = divmod(move, board.width)
    return x, y


def _result_text(board: Board, winner: int) -> str:
    if winner == -1:
        return "the board is full (a draw)"
    x, y = _xy(board, board.last_move)
    return f"five in a row, completed at {x},{y}"


# ---------------------------------------------------------------------------- serving
class _EndSignal:
    """Set once END has been read and every line before it has been taken up: a search running
    for the last command before END then stops (earlier queued commands still run in full, so a
    script piped in at once is answered completely)."""

    def __init__(self, hard_exit: bool) -> None:
        self.lock = threading.Lock()
        self.end_at: int | None = None  # number of lines before END (or end of input)
        self.taken = 0  # lines the engine has taken up so far
        self.hard_exit = hard_exit
        self._timer: threading.Timer | None = None

    def is_set(self) -> bool:
        with self.lock:
            return self._due()

    def _due(self) -> bool:
        return self.end_at is not None and self.taken >= self.end_at

    def _update(self) -> None:
        """Called with the lock held: arm the hard exit once END is due."""
        if self.hard_exit and self._timer is None and self._due():
            self._timer = threading.Timer(END_GRACE, os._exit, (0,))
            self._timer.daemon = True
            self._timer.start()

    def ended(self, count: int) -> None:
        with self.lock:
            self.end_at = count
            self._update()

    def take(self) -> None:
        with self.lock:
            self.taken += 1
            self._update()


def serve(engine: PbrainEngine, stdin: TextIO, stdout: TextIO, hard_exit: bool = False) -> None:
    """Run the protocol until END or end of input.

    Lines are read on a daemon thread, so an ``END`` that arrives while the engine thinks stops
    the search at its next round (the best move so far is still written). With ``hard_exit`` the
    process is ended ``END_GRACE`` seconds after END is due even if a player that cannot be
    interrupted (minimax) is still busy.
    """
    lock = threading.Lock()

    def write(text: str) -> None:
        with lock:
            stdout.write(text + "\n")
            stdout.flush()

    signal = _EndSignal(hard_exit)
    engine.write = write
    engine.stop_event = signal
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        count = 0
        try:
            for line in iter(stdin.readline, ""):
                if line.strip().upper() == "END":
                    break
                lines.put(line)
                count += 1
        except (OSError, ValueError):  # stdin closed under us
            pass
        signal.ended(count)
        lines.put(None)

    threading.Thread(target=read, name="pbrain-stdin", daemon=True).start()
    while True:
        line = lines.get()
        if line is None:
            return
        signal.take()
        if not engine.handle_line(line):
            return


def configure_logging(verbose: bool = False) -> None:
    """Log to stderr only: stdout belongs to the protocol."""
    logging.basicConfig(stream=sys.stderr, level=logging.DEBUG if verbose else logging.WARNING,
                        format="%(asctime)s %(name)s %(levelname)s: %(message)s")
