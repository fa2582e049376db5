"""The pbrain engine: the state machine that answers the manager, and how it plays a move.

``PbrainEngine`` takes the records of ``gomoku.pbrain.protocol`` (``handle_line`` parses a raw
line first) and calls ``write`` with each answer, so it can be tested without a subprocess;
``gomoku.pbrain.server.serve`` runs it on stdin/stdout. Bad input never ends it: every line is
answered (``ERROR``, ``UNKNOWN``) or taken as the protocol says (a good ``INFO`` gets no answer; a
malformed or negative value is answered ``ERROR`` and the previous value kept; an unplayable
rule is reported at the next move asked for). A ``SWAP2BOARD`` block is answered once,
``UNKNOWN``. Once the manager sent ``END`` during a search (``end_due``) the move of the search
it cut short is not written; a command that was already waiting when END came (a script piped in
at once: ``START 9``, ``BEGIN``, ``END``) is answered in full, its search within the clock, or
within ``ENDING_SECONDS`` without one (``end_pending``).

What it plays comes from ``gomoku.pbrain.loader`` (by default the AlphaZero player of
``models/9x9.pt`` for the board size and rule, five in a row, that its net was trained for).
Only freestyle is played: under a rule bit for exactly five, renju or caro, moves are refused
(ERROR) until a playable rule is set.

Time: a move's clock starts when its command was read, or when the engine finished answering the
command before it if that came later (commands piped in while START still loads the net do not
lose their time to it). The INFO values set each move's budget (``gomoku.pbrain.budget``: also the
search tree's and the evaluation cache's memory). The search players (pure and az) have
no playout cap unless one was asked for (``--playouts``): the clock ends the search, or the move
being decided (one move left by the forced-move, win and VCF rules, or a visit lead the time
left cannot overturn: ``gomoku.players.search.decided``). The az player keeps its tree from one
move to the next while the game goes on. The search runs on its own thread in short rounds
(checked by the player between rounds, ``SearchPlayer.analyse``; once the planned time is up or
the engine stops it, the threat checks of the round running give up, so a round ends within about
a playout's time: ``gomoku.tactics.rules``); should a round still be running at the hard deadline,
the engine answers with the best move of the rounds done (a heuristic move when there is none:
``gomoku.pbrain.searching``); the next command waits for that round to end before it is handled.
Without any clock the search runs a fixed number of playouts (``Loaded.untimed_playouts``).

Garbage collection: at START, once the player is loaded, a full collection runs and the objects
alive are moved out of the collector's reach (``freeze_loaded_objects``), so that no collection
in the middle of a move walks them all.

The net runs on onnxruntime (like the players) with one thread unless told otherwise
(``EngineOptions.threads``): several threads fighting other processes for the cores made single
moves take seconds. Other players ignore the clock.
"""

from __future__ import annotations

import gc
import logging
import math
import threading
import time
from typing import Callable

import gomoku.tactics.compiled as compiled
from gomoku.game.board import EMPTY, MAX_SIZE, Board, other
from gomoku.pbrain import budget
from gomoku.pbrain.budget import CACHE_SHARE, MAX_INFO_NUMBER, resident_bytes
from gomoku.pbrain.loader import EngineOptions, Players
from gomoku.pbrain.protocol import (ABOUT, MIN_SIZE, N_IN_ROW, About, BadInfo, Begin, Blank, BoardBegin,
                                    Done, End, Info, Malformed, NotAStone, ProtocolError, Restart, Stone,
                                    Swap2BoardBegin, Takeback, Turn, Undecodable, Unknown, format_error,
                                    format_message, format_move, format_unknown, move_at, parse_command, parse_line,
                                    parse_stones, rebuild_board, result_text, unsupported_rule, xy)
from gomoku.pbrain.protocol import Start as StartRecord
from gomoku.pbrain.searching import timed_search
from gomoku.players import winning_points
from mcts.evaluators import CachedEvaluator, cache_entry_bytes

log = logging.getLogger(__name__)

ENDING_SECONDS = 0.5  # the search of a command that END already follows, without a clock (answer, then exit)


def freeze_loaded_objects() -> None:
    """A full collection, then every object alive (the player and its net's runtime, torch: some
    180,000) moved out of the collector's reach (``gc.freeze``). Collections of the oldest
    generation walked them all: 167 ms each, which came in the middle of moves and made answers
    late (1,123 ms at 1000 ms a turn); without them one takes 5-30 ms. What the search makes
    later is collected as before."""
    gc.collect()
    gc.freeze()


class PbrainEngine:
    """The protocol state machine. ``handle_line`` returns False once the manager sent ``END``."""

    def __init__(self, options: EngineOptions | None = None, write: Callable[[str], None] = print,
                 stop_event=None, clock: Callable[[], float] = time.perf_counter):
        self.options = options or EngineOptions()
        self.write = write
        self.stop_event = stop_event  # anything with is_set(); set by serve() when END is due
        # True once the manager's END is due (serve() sets it; not at a mere end of input): the
        # move of a search that END cut short is then not written, nothing may follow END.
        self.end_due: Callable[[], bool] = lambda: False
        # True while the command being handled was read before END (or the end of input) was:
        # it is answered in full (serve() sets it).
        self.end_pending: Callable[[], bool] = lambda: False
        self.clock = clock
        self.board: Board | None = None
        self.player = None
        self.loaded = None
        self.players = Players(self.options, self.message)
        self._block: str | None = None  # "BOARD" or "SWAP2BOARD" while its lines are collected up to DONE
        self._block_lines: list[str] = []
        self._received_at = 0.0
        self._ready_at = -math.inf  # when the engine finished answering the last command (on clock)
        self._search_thread: threading.Thread | None = None  # a search left to finish its round
        self._search_stop = threading.Event()
        self.loading = False  # handling START (loading a player): an END must wait for its answer
        self._base_memory = 0  # resident bytes once the player was loaded (before its tree)
        # INFO values (milliseconds; None = not sent).
        self.timeout_turn: int | None = None
        self.timeout_match: int | None = None
        self.time_left: int | None = None
        self.max_memory: int | None = None
        self.game_type: int | None = None
        self.rule = 0
        self.info: dict[str, str] = {}

    # ------------------------------------------------------------------ dispatch
    def handle_line(self, line: bytes | str, received_at: float | None = None) -> bool:
        """Process one raw line from the manager (received at ``received_at`` on ``clock``,
        default now); False when the engine should exit."""
        received_at = self.clock() if received_at is None else received_at
        self._received_at = max(received_at, self._ready_at)  # a line read while busy waited for us
        self._finish_search()
        try:
            return self.handle(parse_line(line, in_board=self._block is not None))
        finally:
            self._ready_at = self.clock()

    def handle(self, record) -> bool:
        """Answer one record; False on END."""
        if self._block is not None:
            record = self._in_block(record)
            if record is None:
                return True
        if isinstance(record, End):
            return False
        if isinstance(record, Blank):
            return True
        if isinstance(record, Unknown):
            self.write(format_unknown(record.command))
        elif isinstance(record, (Undecodable, Malformed)):
            self.write(format_error(record.reason))
        elif isinstance(record, BadInfo):
            reason = f"{record.reason}; the previous value is kept"
            log.warning("%s", reason)
            self.write(format_error(reason))
        else:
            return self._run(getattr(self, self._HANDLERS[type(record)]), record, type(record).__name__.upper())
        return True

    def _in_block(self, record):
        """A line of a BOARD or SWAP2BOARD block: a stone is collected; DONE or a line that is not
        a stone ends the block, answered once. Returns the record still to handle as a command of
        its own (the line that broke the block), or None."""
        if isinstance(record, Stone):
            self._block_lines.append(record.text)
            return None
        if isinstance(record, Blank):
            return None
        block, lines = self._block, self._block_lines
        self._block, self._block_lines = None, []
        if isinstance(record, Done):
            if block == "BOARD":
                self._run(self._finish_board, lines, "BOARD")
            else:
                self.write(format_unknown(block))  # swap2 is not played
            return None
        if block == "BOARD":
            reason = f" ({record.reason})" if isinstance(record, Undecodable) else ""
            self.write(format_error(f"BOARD block ended without DONE{reason}; position unchanged"))
            if isinstance(record, Undecodable):
                return None  # its reason is in that ERROR
        else:
            self.write(format_unknown(block))
        return parse_command(record.line) if isinstance(record, NotAStone) else record

    def _run(self, handler, argument, name: str) -> bool:
        try:
            handler(argument)
        except ProtocolError as error:
            self.write(format_error(str(error)))
        except Exception as error:  # never die on one command: report it and keep serving
            log.exception("%s failed", name)
            self.write(format_error(f"internal error on {name}: {type(error).__name__}: {error}"))
        return True

    def message(self, text: str) -> None:
        self.write(format_message(text))

    # ------------------------------------------------------------------ commands
    def _cmd_start(self, record: StartRecord) -> None:
        width, height = record.width, record.height
        self.board = None  # a refused START leaves no game to play on
        if not (MIN_SIZE <= width <= MAX_SIZE and MIN_SIZE <= height <= MAX_SIZE):
            raise ProtocolError(f"board {width}x{height} not supported: sizes {MIN_SIZE} to {MAX_SIZE} only")
        self.loading = True
        try:
            loaded = self.players.for_board(width, height)
            if loaded.message:
                self.message(loaded.message)
            self.loaded, self.player = loaded, loaded.player
            self._base_memory = resident_bytes() if not loaded.warmed else self._base_memory
            self.board = Board(width, height, N_IN_ROW)  # the memory limits are sized for this board
            self._limit_memory()
            loaded.warm_up(width, height)
            self.player.reset()
            freeze_loaded_objects()
            self._block = None
            self.write("OK")
        except BaseException:
            self.board = None
            raise
        finally:
            self.loading = False

    def _cmd_restart(self, record: Restart) -> None:
        board = self._require_board()
        self.board = Board(board.width, board.height, N_IN_ROW)
        self.player.reset()
        self.write("OK")

    def _cmd_begin(self, record: Begin) -> None:
        board = self._require_board()
        if board.moves:
            raise ProtocolError("BEGIN on a board that already has stones (use RESTART first)")
        self._play()

    def _cmd_turn(self, record: Turn) -> None:
        board = self._require_board()
        move = self._move(record, "TURN")
        self._check_rule()  # before the stone goes on: a refused TURN changes nothing
        self._check_playable(board)
        board.do_move(move)
        self._play()

    def _cmd_takeback(self, record: Takeback) -> None:
        board = self._require_board()
        move = self._move(record, "TAKEBACK", must_be_empty=False)
        if board.stone(move) == EMPTY:
            raise ProtocolError(f"TAKEBACK {record.x},{record.y}: there is no stone there")
        if board.last_move != move:
            # The history decides the colours of every later stone, so only the last one can go.
            x, y = xy(board, board.last_move)
            raise ProtocolError(f"TAKEBACK {record.x},{record.y}: only the last move ({x},{y}) can be taken back")
        board.undo_move()
        self.write("OK")

    def _cmd_board(self, record: BoardBegin) -> None:
        self._require_board()
        self._block = "BOARD"

    def _cmd_swap2board(self, record: Swap2BoardBegin) -> None:
        self._block = "SWAP2BOARD"  # answered UNKNOWN at its DONE

    def _finish_board(self, lines: list[str]) -> None:
        board = self._require_board()
        self._check_rule()  # before the position is replaced: a refused BOARD changes nothing
        try:
            own, theirs, order = parse_stones(lines, board)
            self.board = rebuild_board(board.width, board.height, own, theirs, order)
        except ProtocolError as error:
            raise ProtocolError(f"{error}; position unchanged") from error
        self.player.reset()
        self._play()

    def _cmd_info(self, record: Info) -> None:
        """Store the value; no answer (the manager does not read one), also for a rule this
        engine cannot play: the moves asked for under it are refused."""
        self.info[record.key] = record.value
        if record.key == "rule":
            self.rule = record.number
            bad = unsupported_rule(record.number)
            if bad:
                log.warning("INFO rule %d (%s): not supported, moves are refused until INFO rule 0",
                            record.number, ", ".join(bad))
        elif record.number is not None:
            setattr(self, record.key, max(-MAX_INFO_NUMBER, min(MAX_INFO_NUMBER, record.number)))
        # Anything else (evaluate, folder, future keys) is stored and otherwise ignored.

    def _cmd_about(self, record: About) -> None:
        self.write(ABOUT)

    _HANDLERS = {
        StartRecord: "_cmd_start", Restart: "_cmd_restart", Begin: "_cmd_begin", Turn: "_cmd_turn",
        BoardBegin: "_cmd_board", Swap2BoardBegin: "_cmd_swap2board", Info: "_cmd_info", About: "_cmd_about",
        Takeback: "_cmd_takeback",
    }

    # ------------------------------------------------------------------ helpers
    def _require_board(self) -> Board:
        if self.board is None:
            raise ProtocolError("no game: send START first")
        return self.board

    def _move(self, record: Turn | Takeback, command: str, must_be_empty: bool = True) -> int:
        board = self._require_board()
        move = move_at(board, record.x, record.y, f"{command} {record.x},{record.y}")
        if must_be_empty and board.stone(move) != EMPTY:
            raise ProtocolError(f"{command} {record.x},{record.y}: that point is already occupied")
        return move

    def _check_rule(self) -> None:
        bad = unsupported_rule(self.rule)
        if bad:
            raise ProtocolError(f"rule {self.rule} ({', '.join(bad)}) is not supported; send INFO rule 0")

    def _check_playable(self, board: Board) -> None:
        ended, winner = board.game_end()
        if ended:
            raise ProtocolError("the game is over: " + result_text(board, winner))

    # ------------------------------------------------------------------ moves
    def _play(self) -> None:
        """Choose, play and announce the engine's move on ``self.board``."""
        board = self._require_board()
        self._check_rule()
        self._check_playable(board)
        move = self.choose_move(board)
        if self.end_due():
            log.info("END came during the search: its move is not written")
            return
        board.do_move(move)
        x, y = xy(board, move)
        self.write(format_move(x, y))
        ended, winner = board.game_end()
        if ended:
            log.info("game over after our move %d,%d: %s", x, y, result_text(board, winner))

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
        if not board.moves:  # the first move of a game is the centre on every board size (the search
            return board.centre  # still runs and reports: a net's priors are flat there on large boards)
        if move is None or move not in legal:
            if move is not None:
                self.message(f"player chose an illegal move {move}; playing a heuristic move")
            from gomoku.players import HeuristicPlayer
            move = HeuristicPlayer().get_action(board)
        return int(move)

    def time_limit(self, board: Board) -> float | None:
        """The seconds this move may take by the manager's clock, or None without a limit
        (``budget.time_limit``)."""
        return budget.time_limit(self.timeout_turn, self.timeout_match, self.time_left, len(board.availables))

    def move_seconds(self, board: Board) -> float | None:
        """``time_limit``, or ``ENDING_SECONDS`` without one when END already follows the command."""
        limit = self.time_limit(board)
        return ENDING_SECONDS if limit is None and self.end_pending() else limit

    def think_seconds(self, board: Board) -> float | None:
        """Seconds the search plans to spend on this move, or None when no time limit was set."""
        return budget.think_seconds(self.move_seconds(board))

    def answer_seconds(self, board: Board) -> float | None:
        """Seconds after which the engine answers whatever the search is doing (None: no limit)."""
        return budget.answer_seconds(self.move_seconds(board))

    def tree_bytes(self) -> int:
        """The search tree's memory budget (``budget.tree_bytes``)."""
        return budget.tree_bytes(self.max_memory, self._base_memory)

    def _limit_memory(self) -> None:
        """The tree within ``tree_bytes()``, and the evaluation cache within a quarter of that
        (at most the entries asked for)."""
        if hasattr(self.player, "tree_bytes"):
            self.player.tree_bytes = self.tree_bytes()
        cache = getattr(self.player, "evaluator", None)
        if isinstance(cache, CachedEvaluator) and self.board is not None:
            entry = cache_entry_bytes(self.board.size)
            cache.max_entries = max(1, min(self.options.cache, int(CACHE_SHARE * self.tree_bytes() // entry)))

    def _search(self, board: Board) -> int | None:
        player = self.player
        analyse = getattr(player, "analyse", None)
        if analyse is None:
            return player.get_action(board.copy())
        self._limit_memory()
        compiled.switch_when_compiled()  # the kernels compiled at START's request: loaded on this move's clock
        seconds = self.think_seconds(board)
        untimed = getattr(self.loaded, "untimed_playouts", None)
        if seconds is None and self.stop_event is None:
            result = analyse(board.copy(), playouts=untimed)
        else:
            result = self._timed_search(player, board, seconds, self.answer_seconds(board),
                                        None if self.time_limit(board) is not None else untimed)
        report = self.options.report and not self.end_due()  # nothing may follow END
        if result is None or result.visits.sum() <= 0:
            if report:
                self.message(f"no search round done in {1000 * (self.clock() - self._received_at):.0f} ms: "
                             "playing a heuristic move")
            return None
        log.debug("%s: %d playouts, value %+.3f", getattr(player, "name", "player"), result.playouts,
                  result.value)
        if report:
            self.message(f"{result.playouts} playouts in {1000 * (self.clock() - self._received_at):.0f} ms, "
                         f"value {result.value:+.2f}")
        return result.best_move()

    def _timed_search(self, player, board: Board, seconds: float | None, answer_by: float | None,
                      playouts: int | None = None):
        """The search on a thread (``searching.timed_search``), ``seconds`` and ``answer_by`` from
        when the command was received; a round left running at the deadline is kept to finish."""
        soft = None if seconds is None else self._received_at + seconds
        hard = None if answer_by is None else self._received_at + answer_by
        search = timed_search(player, board, self.clock, soft, hard, playouts, self.stop_event)
        self._search_thread, self._search_stop = search.thread, search.stop
        return search.result

    def _finish_search(self, timeout: float | None = None) -> None:
        """Wait for a search left running at a deadline (it stops at the end of its round)."""
        thread, self._search_thread = self._search_thread, None
        if thread is not None:
            self._search_stop.set()
            thread.join(timeout)

    def close(self, timeout: float = 1.0) -> None:
        """Stop a search still running in the background (before the process exits: a thread
        inside torch at interpreter exit aborts the process)."""
        self._finish_search(timeout)


def forced_move(board: Board) -> int | None:
    """A move that completes a line for the side to move, else one that blocks the opponent's
    line (when the opponent has a single winning point there is nothing better to do)."""
    me = board.current_player
    wins = winning_points(board, me)
    if wins:
        return wins[0]
    threats = winning_points(board, other(me))
    return threats[0] if threats else None
