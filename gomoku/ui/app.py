"""The pygame window for playing against the AI (``python scripts/play.py``).

This is the only module of the project that imports pygame; ``import gomoku`` never imports it.

``PlayApp`` holds the state (the ``Board``, who plays which colour, the AI player, the display
flags, the running search) and keeps it apart from the drawing (``draw``) and the input
(``handle_event``), so tests can drive it headless: post real pygame events, call ``step()`` or
``run_until_idle()``, and look at ``app.board`` or at the pixels of ``app.draw()``.

Threads: the pygame event pump and all drawing stay on the main thread. The AI thinks in a daemon
worker thread on a copy of the board; the worker only writes its progress and its answer into its
``_Job`` (under a lock), and the main thread polls that job every frame. A search player is asked
through ``analyse(board, on_progress=..., should_stop=...)``, so new game, undo, swap or closing the
window stop it within one round of playouts; any other player (minimax...) is just left to finish
its ``get_action`` in the background (its answer is then thrown away). A new search starts only
once the previous worker has ended, as the player's search tree is not shared between threads.
"""

from __future__ import annotations

import logging
import math
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import pygame

from gomoku.game.board import DRAW, EMPTY, Board, other
from gomoku.players import (COLUMN_LETTERS, SHIPPED_MODEL, SHIPPED_PLAYOUTS, Player, format_point, make_player,
                            parse_point)

log = logging.getLogger(__name__)

DEFAULT_MODEL = Path(SHIPPED_MODEL)
DEFAULT_PLAYOUTS = SHIPPED_PLAYOUTS
FALLBACK_SPEC = "pure:2000"  # the AI when no model has been trained yet
N_IN_ROW = 5
JOIN_SECONDS = 2.0  # how long close() waits for a search to notice that it should stop
FLASH_SECONDS = 2.5  # how long a short message ("E5 is taken") replaces the status line
FPS = 60  # event polling rate; the window is redrawn only when something changed
THINKING_REDRAW_SECONDS = 0.1  # redraw rate while the AI thinks (elapsed time, live analysis)
TOP_MOVES = 5

# ------------------------------------------------------------------------------ look
WINDOW_SIZE = (900, 640)
MARGIN = 16
WOOD_SIZE = 568  # the wooden board, a square at (MARGIN, MARGIN)
WOOD_BORDER = 56  # wood between the board's edge and the outer grid lines (the coordinates)
STATUS_HEIGHT = 36
PANEL_X = MARGIN + WOOD_SIZE + 18
HEAT_CELL = 24

BACKGROUND = (36, 34, 32)
PANEL = (49, 46, 43)
PANEL_EDGE = (66, 62, 57)
TEXT = (236, 231, 222)
DIM = (166, 158, 146)
ACCENT = (236, 172, 64)
RED = (214, 58, 42)
LAST_NUMBER = (255, 96, 72)
GOLD = (255, 204, 51)
WOOD = (221, 180, 122)
WOOD_DARK = (196, 150, 92)
GRID = (74, 50, 26)
LABEL = (96, 64, 32)
HEAT = (214, 62, 36)
BUTTON = (70, 66, 61)
BUTTON_ON = (116, 92, 48)
BUTTON_HOVER = (88, 83, 77)
COLOUR_NAMES = {1: "Black", 2: "White"}

FONT_NAMES = "dejavusans,freesans,helvetica,arial,liberationsans"


class SetupError(Exception):
    """The app cannot start as asked: a bad player spec, a model for another board size..."""


# ------------------------------------------------------------------------------ opponent
def choose_opponent(opponent: str | None, model: str | Path = DEFAULT_MODEL,
                    playouts: int = DEFAULT_PLAYOUTS) -> tuple[str, str]:
    """(spec, note): ``opponent`` if given, else the model through the net MCTS, else the fallback.

    The note is empty unless the fallback is used; it then says why, for the log and the window.
    """
    if opponent:
        return opponent, ""
    if Path(model).is_file():
        return f"az:{model}:{playouts}", ""
    return FALLBACK_SPEC, f"No model at {model} yet: playing {FALLBACK_SPEC} (pure MCTS) instead."


def build_opponent(spec: str, size: int, seed: int | None = None, seconds: float | None = None) -> Player:
    """The player for ``spec``; a net for another board size (or any bad spec) is a SetupError.

    ``seconds`` caps the thinking time per move of the search players.
    """
    if spec.strip() == "human":
        raise SetupError("the opponent must be an AI: 'human' is you, at the board")
    try:
        player = make_player(spec, seed, seconds=seconds)
    except (ValueError, OSError) as error:  # bad spec, unreadable or foreign checkpoint
        raise SetupError(str(error)) from error
    config = getattr(player, "net_config", None)
    if config is not None and (config.width, config.height) != (size, size):
        hint = f" (pass --size {config.width} to play on its board)" if config.width == config.height else ""
        raise SetupError(f"the model in {spec!r} is for a {config.width}x{config.height} board, "
                         f"not {size}x{size}{hint}")
    return player


class _OneTorchThread:
    """One torch intra-op thread while any app with a net is open; the old count back after the last."""

    users = 0
    saved: int | None = None

    @classmethod
    def acquire(cls) -> bool:
        torch = sys.modules.get("torch")
        if torch is None:
            return False
        if cls.users == 0:
            cls.saved = torch.get_num_threads()
            torch.set_num_threads(1)
        cls.users += 1
        return True

    @classmethod
    def release(cls) -> None:
        cls.users -= 1
        torch = sys.modules.get("torch")
        if cls.users == 0 and torch is not None and cls.saved is not None:
            torch.set_num_threads(cls.saved)


def short_spec(spec: str) -> str:
    """The spec with only the file name of a checkpoint: "az:9x9.pt:400"."""
    kind, _, rest = spec.partition(":")
    if kind == "az":
        path, _, playouts = rest.rpartition(":")
        return f"az:{Path(path).name}:{playouts}"
    return spec


def describe_spec(spec: str) -> str:
    """A short readable name for the status line: "AlphaZero net 9x9.pt, 400 playouts"."""
    kind, _, rest = spec.partition(":")
    if kind == "az":
        path, _, playouts = rest.rpartition(":")
        return f"AlphaZero net {Path(path).name}, {playouts} playouts"
    if kind == "pure":
        return f"pure MCTS, {rest} playouts"
    if kind == "minimax":
        return f"minimax, depth {rest}"
    return spec


def parse_moves(board: Board, text: str | Sequence[int] | None) -> list[int]:
    """ "E5,D4,E4" (or a list of move numbers) -> moves; played on ``board`` to check them."""
    if text is None:
        return []
    if isinstance(text, str):
        names = [name for name in text.replace(";", ",").replace(" ", ",").split(",") if name]
        try:
            moves = [parse_point(board, name) for name in names]
        except ValueError as error:
            raise SetupError(f"bad --moves {text!r}: {error}") from error
    else:
        moves = [int(move) for move in text]
    probe = board.copy()
    for move in moves:
        try:
            probe.do_move(move)
        except ValueError as error:
            raise SetupError(f"bad --moves: {error}") from error
    return moves


# ------------------------------------------------------------------------------ the worker
@dataclass
class _Job:
    """One AI search in the worker thread. The worker writes only ``progress``, ``rounds``, ``outcome``."""

    moves: tuple[int, ...]  # the position searched
    started: float
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    thread: threading.Thread | None = None
    progress: object = None  # the latest SearchResult while searching
    rounds: int = 0
    outcome: tuple | None = None  # (move, SearchResult | None, error | None) once finished
    finished: float | None = None

    def alive(self) -> bool:
        return self.thread is not None and self.thread.is_alive()


@dataclass
class Analysis:
    """What the analysis view shows: a search of ``moves`` (live while ``final`` is False)."""

    moves: tuple[int, ...]
    result: object  # SearchResult
    playouts: int
    seconds: float
    final: bool
    chosen: int = -1


@dataclass
class Button:
    key: str
    label: str
    action: str
    rect: pygame.Rect


# ------------------------------------------------------------------------------ the app
class PlayApp:
    """A person against an AI player on one Board, in a pygame window."""

    def __init__(self, opponent: str | Player | None = None, *, model: str | Path = DEFAULT_MODEL,
                 playouts: int = DEFAULT_PLAYOUTS, size: int = 9, human_first: bool = True,
                 seed: int | None = None, seconds: float | None = None,
                 moves: str | Sequence[int] | None = None,
                 show_analysis: bool = True, show_numbers: bool = False,
                 screenshot: str | Path | None = None, title: str = "gomoku-zero"):
        if size < N_IN_ROW:
            raise SetupError(f"--size must be at least {N_IN_ROW} for five in a row, got {size}")
        if size > len(COLUMN_LETTERS):
            raise SetupError(f"--size must be at most {len(COLUMN_LETTERS)}, got {size}")
        self.size = size
        if isinstance(opponent, Player):
            self.ai, self.ai_spec, self.note = opponent, opponent.name, ""
        else:
            self.ai_spec, self.note = choose_opponent(opponent, model, playouts)
            self.ai = build_opponent(self.ai_spec, size, seed, seconds)
        if self.note:
            log.warning("%s", self.note)
        log.info("AI: %s", self.ai_spec)
        self.board = Board(size, size, N_IN_ROW)
        for move in parse_moves(self.board, moves):
            self.board.do_move(move)
        self.human = 1 if human_first else 2
        self.show_analysis = show_analysis
        self.show_numbers = show_numbers
        self.screenshot = Path(screenshot) if screenshot else None
        self.running = True
        self.analysis: Analysis | None = None
        self.ai_replies = 0
        self.ai_error: str | None = None
        self.hover: tuple[int, int] | None = None
        self._job: _Job | None = None
        self._stopping: list[_Job] = []  # cancelled jobs whose thread has not ended yet
        self._reset_ai = False
        self._flash: tuple[str, float] | None = None
        self._dirty = True
        self._last_draw = 0.0
        # One intra-op thread for the net (small, batch 1): more only fight the UI thread for the
        # cores, and on a busy machine make each move several times slower. Restored by close().
        self._one_thread = bool(getattr(self.ai, "net_config", None)) and _OneTorchThread.acquire()

        pygame.display.init()
        pygame.font.init()
        self.screen = pygame.display.set_mode(WINDOW_SIZE)
        pygame.display.set_caption(f"{title}: you against {describe_spec(self.ai_spec)}")
        self._fonts: dict[tuple[int, bool], pygame.font.Font] = {}
        self._texts: dict[tuple, pygame.Surface] = {}
        self._layout()
        self._wood = _wood_texture(WOOD_SIZE, WOOD_SIZE, seed=7)
        radius = self.stone_radius
        self._stones = {1: _stone(radius, black=True), 2: _stone(radius, black=False)}
        self._ghosts = {player: _faded(surface, 110) for player, surface in self._stones.items()}
        self._shadow = _shadow(radius)
        small = int(self.heat_cell * 0.38)
        self._small_stones = {1: _stone(small, black=True), 2: _stone(small, black=False)}

    # -------------------------------------------------------------------------- geometry
    def _layout(self) -> None:
        self.wood_rect = pygame.Rect(MARGIN, MARGIN, WOOD_SIZE, WOOD_SIZE)
        self.cell = (WOOD_SIZE - 2 * WOOD_BORDER) / (self.size - 1)
        self.stone_radius = min(int(self.cell * 0.46), 30)
        self.label_offset = max(WOOD_BORDER * 0.66, self.stone_radius + 12)  # clear of the edge stones
        self.origin = (MARGIN + WOOD_BORDER, MARGIN + WOOD_BORDER)
        self.status_rect = pygame.Rect(MARGIN, MARGIN + WOOD_SIZE + 8, WOOD_SIZE, STATUS_HEIGHT)
        self.panel_rect = pygame.Rect(PANEL_X, MARGIN, WINDOW_SIZE[0] - PANEL_X - MARGIN,
                                      WINDOW_SIZE[1] - 2 * MARGIN)
        self.heat_cell = min(HEAT_CELL, (9 * HEAT_CELL) // self.size)
        heat_side = self.heat_cell * self.size
        self.heat_origin = (self.panel_rect.centerx - heat_side // 2 + 8, self.panel_rect.y + 236)
        width = (self.panel_rect.width - 2 * 12 - 2 * 8) // 3
        self.buttons: list[Button] = []
        rows = (("N", "New", "new"), ("U", "Undo", "undo"), ("S", "Swap", "swap")), (
            ("M", "Numbers", "numbers"), ("A", "Analysis", "analysis"), ("Esc", "Quit", "quit"))
        for row_index, row in enumerate(rows):
            y = self.panel_rect.bottom - 12 - (2 - row_index) * 34 + 4
            for col, (key, label, action) in enumerate(row):
                rect = pygame.Rect(self.panel_rect.x + 12 + col * (width + 8), y, width, 30)
                self.buttons.append(Button(key, label, action, rect))

    def point_to_pixel(self, move: int) -> tuple[int, int]:
        """The window pixel of a board point (its intersection)."""
        row, col = self.board.move_to_location(move)
        return (round(self.origin[0] + col * self.cell), round(self.origin[1] + row * self.cell))

    def pixel_to_point(self, pos: tuple[int, int]) -> int | None:
        """The board point nearest to a pixel, or None when the pixel is not close to one."""
        col = round((pos[0] - self.origin[0]) / self.cell)
        row = round((pos[1] - self.origin[1]) / self.cell)
        if not (0 <= row < self.size and 0 <= col < self.size):
            return None
        dx = pos[0] - (self.origin[0] + col * self.cell)
        dy = pos[1] - (self.origin[1] + row * self.cell)
        if dx * dx + dy * dy > (0.48 * self.cell) ** 2:
            return None
        return row * self.size + col

    # -------------------------------------------------------------------------- state
    @property
    def ai_colour(self) -> int:
        return other(self.human)

    def game_over(self) -> bool:
        return self.board.game_end()[0]

    def human_to_move(self) -> bool:
        return not self.game_over() and self.board.current_player == self.human

    def thinking(self) -> bool:
        return self._job is not None

    def is_idle(self) -> bool:
        """Nothing to wait for: no search runs, and the person is to move (or the game is over, or the
        AI has failed)."""
        self._reap()
        return self._job is None and not self._stopping and (
            self.game_over() or self.board.current_player == self.human or self.ai_error is not None)

    def flash(self, text: str) -> None:
        self._flash = (text, time.perf_counter() + FLASH_SECONDS)
        self._dirty = True

    # -------------------------------------------------------------------------- actions
    def play(self, move: int) -> bool:
        """The person plays ``move``; False (and a short message) when that is not possible now."""
        if self.game_over():
            self.flash("The game is over: N for a new game, U to undo.")
            return False
        if self.board.current_player != self.human:
            self.flash("Wait: the AI is thinking.")
            return False
        if self.board.stone(move) != EMPTY:
            self.flash(f"{format_point(self.board, move)} is taken: pick an empty point.")
            return False
        self.board.do_move(move)
        self._dirty = True
        return True

    def new_game(self) -> None:
        self._cancel()
        self.board = Board(self.size, self.size, N_IN_ROW)
        self.analysis = None
        self._reset_ai = True
        self.ai_error = None
        colour = COLOUR_NAMES[self.human]
        self.flash(f"New game: you play {colour}" + (", you move first." if self.human == 1 else "."))

    def undo(self) -> None:
        """Take back the person's last move and the AI's reply (a running search is stopped)."""
        was_thinking = self._cancel()
        popped = 0
        moves = self.board.moves
        # The person's moves are those played while it was their colour's turn.
        if not any(self._mover(i) == self.human for i in range(len(moves))):
            self.flash("Nothing to undo." if not was_thinking else "The AI's search was stopped.")
            return
        while moves and self._mover(len(moves) - 1) != self.human:
            self.board.undo_move()
            popped += 1
        self.board.undo_move()
        popped += 1
        self.analysis = None
        self.ai_error = None
        self.flash("Took back your move and the AI's reply." if popped > 1 else "Took back your move.")

    def _mover(self, index: int) -> int:
        """The colour that played the move with this index."""
        return self.board.start_player if index % 2 == 0 else other(self.board.start_player)

    def swap(self) -> None:
        """Swap colours: the AI takes over the side to move (after a game: a new game, swapped)."""
        self.human = other(self.human)
        if self.game_over() or not self.board.moves:
            self.new_game()
            if self.human == 2:
                self.flash("Swapped: the AI plays Black and moves first.")
            return
        self._cancel()
        self.ai_error = None
        self.flash(f"Swapped: you now play {COLOUR_NAMES[self.human]}.")

    def toggle_numbers(self) -> None:
        self.show_numbers = not self.show_numbers
        self._dirty = True

    def toggle_analysis(self) -> None:
        self.show_analysis = not self.show_analysis
        self._dirty = True

    def request_quit(self) -> None:
        self.running = False
        self._cancel()

    def do_action(self, action: str) -> None:
        {"new": self.new_game, "undo": self.undo, "swap": self.swap, "numbers": self.toggle_numbers,
         "analysis": self.toggle_analysis, "quit": self.request_quit}[action]()

    # -------------------------------------------------------------------------- input
    KEYS = {pygame.K_n: "new", pygame.K_u: "undo", pygame.K_s: "swap", pygame.K_m: "numbers",
            pygame.K_a: "analysis", pygame.K_ESCAPE: "quit", pygame.K_q: "quit"}

    def handle_event(self, event: pygame.event.Event) -> None:
        self._dirty = True
        if event.type == pygame.QUIT:
            self.request_quit()
        elif event.type == pygame.KEYDOWN:
            action = self.KEYS.get(event.key)
            if action:
                self.do_action(action)
        elif event.type == pygame.MOUSEBUTTONDOWN and getattr(event, "button", 1) == 1:
            self.click(event.pos)
        elif event.type == pygame.MOUSEMOTION:
            self.hover = event.pos
        elif event.type == getattr(pygame, "WINDOWLEAVE", -1):
            self.hover = None

    def click(self, pos: tuple[int, int]) -> bool:
        """A left click at a window pixel: a button, or a move when it is on a board point."""
        for button in self.buttons:
            if button.rect.collidepoint(pos):
                self.do_action(button.action)
                return True
        move = self.pixel_to_point(pos)
        return move is not None and self.play(move)

    # -------------------------------------------------------------------------- the AI
    def _cancel(self) -> bool:
        """Stop the running search (its answer will be ignored); True when one was running."""
        job, self._job = self._job, None
        if job is None:
            return False
        job.stop.set()
        self._stopping.append(job)
        self._dirty = True
        return True

    def _reap(self) -> None:
        self._stopping = [job for job in self._stopping if job.alive()]

    def _maybe_start(self) -> None:
        self._reap()
        if (not self.running or self._job is not None or self._stopping or self.ai_error
                or self.game_over() or self.board.current_player == self.human):
            return
        if self._reset_ai:
            self.ai.reset()
            self._reset_ai = False
        job = _Job(moves=tuple(self.board.moves), started=time.perf_counter())
        board = self.board.copy()
        ai = self.ai

        def progress(result) -> None:
            with job.lock:
                job.progress = result
                job.rounds += 1

        def work() -> None:
            try:
                analyse = getattr(ai, "analyse", None)
                if callable(analyse):
                    result = analyse(board, on_progress=progress, should_stop=job.stop.is_set)
                    outcome = (result.best_move(), result, None)
                else:
                    outcome = (ai.get_action(board), None, None)
            except Exception as error:  # shown in the window; the UI goes on
                log.exception("the AI failed")
                outcome = (None, None, error)
            with job.lock:
                job.outcome = outcome
                job.finished = time.perf_counter()

        job.thread = threading.Thread(target=work, name="gomoku-ai", daemon=True)
        self._job = job
        job.thread.start()
        self._dirty = True

    def _target_playouts(self) -> int | None:
        config = getattr(self.ai, "config", None)
        return getattr(config, "n_playout", None)

    def _poll(self) -> None:
        """Take the worker's progress and answer (main thread)."""
        job = self._job
        if job is None:
            return
        with job.lock:
            progress, rounds, outcome, finished = job.progress, job.rounds, job.outcome, job.finished
        target = self._target_playouts()
        if outcome is None:
            if progress is not None:
                step = getattr(self.ai, "ROUND_PLAYOUTS", 1)
                done = min(rounds * step, target) if target else rounds * step
                self.analysis = Analysis(job.moves, progress, done, time.perf_counter() - job.started, False)
            return
        self._job = None
        self._dirty = True
        move, result, error = outcome
        if error is not None:
            self.ai_error = f"{type(error).__name__}: {error}"
            self.flash(f"The AI failed: {self.ai_error}")
            return
        if tuple(self.board.moves) != job.moves or self.board.stone(move) != EMPTY:
            log.error("AI answer %s does not fit the position; ignored", move)
            return
        if result is not None:
            self.analysis = Analysis(job.moves, result, int(getattr(result, "playouts", 0)),
                                     finished - job.started, True, move)
        self.board.do_move(move)
        self.ai_replies += 1
        log.info("AI plays %s (%.1f s)", format_point(self.board, move), finished - job.started)

    # -------------------------------------------------------------------------- loop
    def step(self, draw: bool = True) -> None:
        """One frame: handle the pending events, take the AI's answer, start a search, redraw."""
        for event in pygame.event.get():
            self.handle_event(event)
        self._poll()
        self._maybe_start()
        now = time.perf_counter()
        if self._flash and now > self._flash[1]:
            self._flash = None
            self._dirty = True
        if draw and self.running and (self._dirty or (
                self._job is not None and now - self._last_draw >= THINKING_REDRAW_SECONDS)):
            self.draw()
            pygame.display.flip()

    def run_until_idle(self, timeout: float = 10.0) -> bool:
        """Step until the person is to move (or the game is over) and no search runs."""
        deadline = time.perf_counter() + timeout
        while self.running:
            self.step()
            if self.is_idle():
                return True
            if time.perf_counter() > deadline:
                return False
            time.sleep(0.002)
        return False

    def run(self) -> None:
        """The main loop, until the window is closed (or the screenshot is saved)."""
        clock = pygame.time.Clock()
        try:
            while self.running:
                self.step()
                if self.screenshot is not None and self.is_idle():
                    self.save_screenshot(self.screenshot)
                    self.running = False
                clock.tick(FPS)
        finally:
            self.close()

    def save_screenshot(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        pygame.image.save(self.draw(), str(path))
        log.info("saved %s", path)
        return path

    def close(self) -> None:
        """Stop any search (waiting up to JOIN_SECONDS for it) and close the window."""
        self.running = False
        self._cancel()
        deadline = time.perf_counter() + JOIN_SECONDS
        for job in self._stopping:
            if job.thread is not None:
                job.thread.join(max(0.0, deadline - time.perf_counter()))
        self._reap()
        if self._one_thread:
            _OneTorchThread.release()
            self._one_thread = False
        pygame.display.quit()

    # -------------------------------------------------------------------------- text
    def status_text(self) -> str:
        if self._flash:
            return self._flash[0]
        ended, winner = self.board.game_end()
        if ended:
            if winner == DRAW:
                return "Draw: the board is full. N: new game"
            if winner == self.human:
                return "You win! N: new game"
            return "The AI wins. N: new game, U: undo"
        if self.ai_error:
            return f"The AI failed ({self.ai_error}). N: new game"
        if self._job is not None:
            elapsed = time.perf_counter() - self._job.started
            live = self.analysis if self.analysis is not None and not self.analysis.final else None
            target = self._target_playouts()
            done = f"  ({live.playouts}/{target} playouts)" if live is not None and target else ""
            return f"AI thinking... {elapsed:.1f}s{done}"
        if self._stopping:
            return "Stopping the AI's search..."
        if self.board.current_player == self.human:
            return f"Your move ({COLOUR_NAMES[self.human]}): click a point"
        return "AI to move"

    def _font(self, size: int, bold: bool = False) -> pygame.font.Font:
        key = (size, bold)
        if key not in self._fonts:
            self._fonts[key] = pygame.font.SysFont(FONT_NAMES, size, bold=bold)
        return self._fonts[key]

    def _text(self, text: str, size: int, colour, bold: bool = False) -> pygame.Surface:
        key = (text, size, tuple(colour), bold)
        surface = self._texts.get(key)
        if surface is None:
            if len(self._texts) > 800:
                self._texts.clear()
            surface = self._font(size, bold).render(text, True, colour)
            self._texts[key] = surface
        return surface

    def _blit_text(self, text: str, size: int, colour, pos, bold: bool = False, anchor: str = "topleft",
                   max_width: int | None = None) -> pygame.Rect:
        surface = self._text(text, size, colour, bold)
        if max_width is not None and surface.get_width() > max_width:
            while len(text) > 1 and self._text(text + "...", size, colour, bold).get_width() > max_width:
                text = text[:-1]
            surface = self._text(text + "...", size, colour, bold)
        rect = surface.get_rect(**{anchor: pos})
        self.screen.blit(surface, rect)
        return rect

    def _wrap(self, text: str, size: int, width: int, bold: bool = False) -> list[str]:
        lines, line = [], ""
        for word in text.split():
            trial = f"{line} {word}".strip()
            if line and self._font(size, bold).size(trial)[0] > width:
                lines.append(line)
                line = word
            else:
                line = trial
        return lines + ([line] if line else [])

    # -------------------------------------------------------------------------- drawing
    def draw(self) -> pygame.Surface:
        """Draw the whole window and return its surface (not flipped)."""
        self._dirty = False
        self._last_draw = time.perf_counter()
        self.screen.fill(BACKGROUND)
        self._draw_board()
        self._draw_status()
        self._draw_panel()
        return self.screen

    def _draw_board(self) -> None:
        screen, board, cell = self.screen, self.board, self.cell
        shadow = pygame.Rect(self.wood_rect).move(4, 6)
        pygame.draw.rect(screen, (20, 18, 16), shadow, border_radius=6)
        screen.blit(self._wood, self.wood_rect)
        pygame.draw.rect(screen, WOOD_DARK, self.wood_rect, width=2, border_radius=2)
        x0, y0 = self.origin
        last = round((self.size - 1) * cell)
        for i in range(self.size):
            offset = round(i * cell)
            edge = 2 if i in (0, self.size - 1) else 1
            pygame.draw.line(screen, GRID, (x0, y0 + offset), (x0 + last, y0 + offset), edge)
            pygame.draw.line(screen, GRID, (x0 + offset, y0), (x0 + offset, y0 + last), edge)
        for move in self._star_points():
            pygame.draw.circle(screen, GRID, self.point_to_pixel(move), max(3, round(cell * 0.09)))
        for i in range(self.size):
            offset = round(i * cell)
            letter, number = COLUMN_LETTERS[i], str(i + 1)
            for y in (y0 - self.label_offset, y0 + last + self.label_offset):
                self._blit_text(letter, 18, LABEL, (x0 + offset, round(y)), bold=True, anchor="center")
            for x in (x0 - self.label_offset, x0 + last + self.label_offset):
                self._blit_text(number, 18, LABEL, (round(x), y0 + offset), bold=True, anchor="center")
        line = board.winning_line()
        if line:  # a gold band under the winning stones, rings on them below
            ends = [self.point_to_pixel(line[0]), self.point_to_pixel(line[-1])]
            pygame.draw.line(screen, GOLD, ends[0], ends[1], max(6, round(cell * 0.16)))
        for move in board.moves:
            x, y = self.point_to_pixel(move)
            self.screen.blit(self._shadow, self._shadow.get_rect(center=(x + 2, y + 3)))
        for index, move in enumerate(board.moves):
            player = board.stone(move)
            centre = self.point_to_pixel(move)
            self.screen.blit(self._stones[player], self._stones[player].get_rect(center=centre))
            if self.show_numbers:
                colour = LAST_NUMBER if move == board.last_move else ((235, 235, 235) if player == 1 else (30, 30, 30))
                self._blit_text(str(index + 1), 20 if index < 99 else 16, colour, centre, bold=True,
                                anchor="center")
        if board.moves and not self.show_numbers:
            pygame.draw.circle(screen, RED, self.point_to_pixel(board.last_move), max(4, round(cell * 0.1)))
        if line:
            for move in line:
                pygame.draw.circle(screen, GOLD, self.point_to_pixel(move), self.stone_radius + 2, 4)
        if self.hover and self.human_to_move():
            move = self.pixel_to_point(self.hover)
            if move is not None and board.stone(move) == EMPTY:
                ghost = self._ghosts[self.human]
                screen.blit(ghost, ghost.get_rect(center=self.point_to_pixel(move)))

    def _star_points(self) -> list[int]:
        n = self.size
        points = {(n // 2, n // 2)} if n % 2 else set()
        if n >= 9:
            edge = 2 if n < 13 else 3
            points |= {(r, c) for r in (edge, n - 1 - edge) for c in (edge, n - 1 - edge)}
        return [r * n + c for r, c in sorted(points)]

    def _draw_status(self) -> None:
        rect = self.status_rect
        pygame.draw.rect(self.screen, PANEL, rect, border_radius=8)
        text = self.status_text()
        colour = ACCENT if (self._flash or self.game_over()) else TEXT
        if self.board.winner == self.human and not self._flash:
            colour = GOLD
        left = rect.x + 14
        if not self._flash and not self.game_over() and self._job is None:
            stone = self._small_stones[self.board.current_player]
            self.screen.blit(stone, stone.get_rect(center=(rect.x + 22, rect.centery)))
            left = rect.x + 38
        elif self._job is not None:
            self._draw_spinner((rect.x + 22, rect.centery))
            left = rect.x + 38
        who = f"vs {short_spec(self.ai_spec)}" + (" (no model)" if self.note else "")
        tag = self._blit_text(who, 13, ACCENT if self.note else DIM, (rect.right - 12, rect.centery),
                              anchor="midright", max_width=rect.width // 3)
        self._blit_text(text, 18, colour, (left, rect.centery), bold=True, anchor="midleft",
                        max_width=tag.x - left - 12)

    def _draw_spinner(self, centre: tuple[int, int]) -> None:
        angle = time.perf_counter() * 5.0
        for i in range(8):
            a = angle + i * math.pi / 4
            shade = 90 + 20 * i
            pos = (round(centre[0] + 7 * math.cos(a)), round(centre[1] + 7 * math.sin(a)))
            pygame.draw.circle(self.screen, (shade, shade * 0.8, shade * 0.5), pos, 2)

    def _draw_panel(self) -> None:
        screen, panel = self.screen, self.panel_rect
        pygame.draw.rect(screen, PANEL, panel, border_radius=10)
        pygame.draw.rect(screen, PANEL_EDGE, panel, width=1, border_radius=10)
        x, right = panel.x + 16, panel.right - 16
        self._blit_text("Gomoku Zero", 26, TEXT, (x, panel.y + 12), bold=True)
        y = panel.y + 52
        for who, colour in (("You", self.human), ("AI", self.ai_colour)):
            stone = self._small_stones[colour]
            screen.blit(stone, stone.get_rect(center=(x + 8, y + 10)))
            self._blit_text(f"{who}: {COLOUR_NAMES[colour]}", 16, TEXT, (x + 22, y + 10), anchor="midleft",
                            bold=who == "You")
            x += 130
        x = panel.x + 16
        y += 26
        for line in self._wrap(f"AI: {describe_spec(self.ai_spec)}", 15, right - x)[:2]:
            self._blit_text(line, 15, DIM, (x, y), max_width=right - x)
            y += 19
        if self.note:
            for line in self._wrap(self.note, 14, right - x)[:2]:
                self._blit_text(line, 14, ACCENT, (x, y))
                y += 17
        top = panel.y + 138
        pygame.draw.line(screen, PANEL_EDGE, (x, top), (right, top))
        if self.show_analysis:
            self._draw_analysis(top + 10)
        else:
            self._blit_text("Analysis hidden", 18, DIM, (panel.centerx, top + 140), anchor="center")
            self._blit_text("press A to show it", 15, DIM, (panel.centerx, top + 164), anchor="center")
        self._draw_buttons()

    def _draw_analysis(self, y: int) -> None:
        screen, panel = self.screen, self.panel_rect
        x, right = panel.x + 16, panel.right - 16
        analysis = self.analysis
        searching = self._job is not None
        has_search = callable(getattr(self.ai, "analyse", None))
        self._blit_text("Analysis", 18, TEXT, (x, y), bold=True)
        if analysis is not None:
            where = "live" if not analysis.final else f"{analysis.seconds:.1f}s"
            self._blit_text(f"{analysis.playouts} playouts, {where}", 14, DIM, (right, y + 3), anchor="topright")
        y += 26
        # The win estimate: the root value is for the player to move there, which is the AI.
        bar = pygame.Rect(x, y + 18, right - x, 14)
        if analysis is not None:
            win = (float(analysis.result.value) + 1.0) / 2.0
            self._blit_text(f"AI win estimate: {win:.0%}", 15, TEXT, (x, y))
            pygame.draw.rect(screen, (86, 82, 76), bar, border_radius=7)
            filled = pygame.Rect(bar.x, bar.y, max(bar.height, round(bar.width * win)), bar.height)
            pygame.draw.rect(screen, ACCENT, filled, border_radius=7)
            self._blit_text(f"you {1 - win:.0%}", 13, DIM, (right, y + 2), anchor="topright")
        elif has_search:
            msg = "searching..." if searching else "The AI's search shows here."
            self._blit_text(msg, 15, DIM, (x, y))
        else:
            self._blit_text(f"no search statistics for {short_spec(self.ai_spec)}", 15, DIM, (x, y),
                            max_width=right - x)
        self._draw_heat(analysis)
        self._draw_top_moves(analysis, self.heat_origin[1] + self.heat_cell * self.size + 14)

    def _draw_heat(self, analysis: Analysis | None) -> None:
        screen, n, cell = self.screen, self.size, self.heat_cell
        ox, oy = self.heat_origin
        area = pygame.Rect(ox, oy, n * cell, n * cell)
        pygame.draw.rect(screen, WOOD, area.inflate(6, 6), border_radius=4)
        cells = [EMPTY] * (n * n)
        moves = analysis.moves if analysis is not None else tuple(self.board.moves)
        for index, move in enumerate(moves):
            cells[move] = 1 if index % 2 == 0 else 2
        shares = None
        if analysis is not None:
            visits = np.asarray(analysis.result.visits, dtype=float)
            total = visits.sum()
            shares = visits / total if total > 0 else np.asarray(analysis.result.priors, dtype=float)
        if shares is not None and shares.max() > 0:
            heat = pygame.Surface(area.size, pygame.SRCALPHA)
            peak = shares.max()
            for move in np.flatnonzero(shares > 0):
                r, c = divmod(int(move), n)
                strength = (shares[move] / peak) ** 0.6
                heat.fill((*HEAT, round(14 + 216 * strength)), (c * cell + 1, r * cell + 1, cell - 2, cell - 2))
            screen.blit(heat, area)
        for i in range(n):
            pygame.draw.line(screen, (150, 112, 66), (ox + cell // 2, oy + i * cell + cell // 2),
                             (ox + (n - 1) * cell + cell // 2, oy + i * cell + cell // 2))
            pygame.draw.line(screen, (150, 112, 66), (ox + i * cell + cell // 2, oy + cell // 2),
                             (ox + i * cell + cell // 2, oy + (n - 1) * cell + cell // 2))
            self._blit_text(COLUMN_LETTERS[i], 11, DIM, (ox + i * cell + cell // 2, oy - 10), anchor="center")
            self._blit_text(str(i + 1), 11, DIM, (ox - 11, oy + i * cell + cell // 2), anchor="center")
        for move, player in enumerate(cells):
            if player:
                r, c = divmod(move, n)
                stone = self._small_stones[player]
                screen.blit(stone, stone.get_rect(center=(ox + c * cell + cell // 2, oy + r * cell + cell // 2)))
        if shares is not None:
            for move in np.flatnonzero(shares >= 0.02):
                r, c = divmod(int(move), n)
                centre = (ox + c * cell + cell // 2, oy + r * cell + cell // 2)
                self._blit_text(f"{shares[move] * 100:.0f}", 11, (255, 250, 240), centre, bold=True, anchor="center")
            if analysis is not None and analysis.final and analysis.chosen >= 0:
                r, c = divmod(analysis.chosen, n)
                pygame.draw.rect(screen, GOLD, (ox + c * cell, oy + r * cell, cell, cell), 2, border_radius=3)

    def _draw_top_moves(self, analysis: Analysis | None, y: int) -> None:
        if analysis is None:
            return
        x, right = self.panel_rect.x + 16, self.panel_rect.right - 16
        visits = np.asarray(analysis.result.visits, dtype=float)
        total = visits.sum()
        if total <= 0:
            return
        order = [int(m) for m in np.argsort(-visits, kind="stable")[:TOP_MOVES] if visits[m] > 0]
        probe = Board(self.size, self.size, N_IN_ROW)
        gap = 14
        width = (right - x - gap) // 2
        peak = visits[order[0]] / total
        for rank, move in enumerate(order):
            col, row = divmod(rank, 3)
            cx, cy = x + col * (width + gap), y + row * 19
            share = visits[move] / total
            colour = GOLD if rank == 0 else TEXT
            self._blit_text(f"{rank + 1}. {format_point(probe, move)}", 14, colour, (cx, cy), bold=rank == 0)
            track = pygame.Rect(cx + 48, cy + 5, width - 48 - 36, 8)
            pygame.draw.rect(self.screen, (74, 70, 65), track, border_radius=4)
            bar = pygame.Rect(track.x, track.y, max(4, round(track.width * share / peak)), track.height)
            pygame.draw.rect(self.screen, HEAT, bar, border_radius=4)
            self._blit_text(f"{share:.0%}", 13, DIM, (cx + width, cy + 1), anchor="topright")

    def _draw_buttons(self) -> None:
        mouse = self.hover
        for button in self.buttons:
            on = (button.action == "numbers" and self.show_numbers) or (
                button.action == "analysis" and self.show_analysis)
            colour = BUTTON_ON if on else BUTTON
            if mouse and button.rect.collidepoint(mouse):
                colour = BUTTON_HOVER if not on else tuple(min(255, v + 18) for v in BUTTON_ON)
            pygame.draw.rect(self.screen, colour, button.rect, border_radius=6)
            key = self._text(button.key, 13, ACCENT, True)
            label = self._text(button.label, 14, TEXT, False)
            total = key.get_width() + 6 + label.get_width()
            left = button.rect.centerx - total // 2
            self.screen.blit(key, key.get_rect(midleft=(left, button.rect.centery)))
            self.screen.blit(label, label.get_rect(midleft=(left + key.get_width() + 6, button.rect.centery)))


# ------------------------------------------------------------------------------ sprites
def _wood_texture(width: int, height: int, seed: int = 0) -> pygame.Surface:
    """A light wood surface: long soft grain lines with a little noise."""
    rng = np.random.default_rng(seed)
    y = np.arange(height, dtype=np.float64)[:, None]
    x = np.arange(width, dtype=np.float64)[None, :]
    wobble = 9.0 * np.sin(y / height * 2.3 + 0.4) + 4.0 * np.sin(y / height * 7.1 + 1.3)
    columns = np.convolve(rng.normal(size=width + 40), np.ones(9) / 9, mode="same")[20:20 + width]
    grain = np.sin((x + wobble) / width * 2 * np.pi * 11 + 2.5 * columns[None, :])
    fine = np.sin((x + 0.6 * wobble) / width * 2 * np.pi * 57 + 6.0 * columns[None, :])
    shade = 1.0 + 0.055 * grain + 0.02 * fine
    light = 1.0 + 0.05 * (1.0 - (x / width + y / height))  # a touch lighter at the top left
    rgb = np.asarray(WOOD, dtype=np.float64)[None, None, :] * (shade * light)[:, :, None]
    rgb = np.clip(rgb, 0, 255).astype(np.uint8)
    return pygame.surfarray.make_surface(rgb.transpose(1, 0, 2)).convert()


def _disc_alpha(radius: float, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pixel-centre offsets from the centre (dx, dy) and the antialiased coverage of a disc."""
    coords = np.arange(size, dtype=np.float64) - (size - 1) / 2
    dx, dy = np.meshgrid(coords, coords, indexing="ij")  # [x, y] like surfarray
    dist = np.hypot(dx, dy)
    return dx, dy, np.clip(radius + 0.5 - dist, 0.0, 1.0)


def _stone(radius: int, black: bool) -> pygame.Surface:
    """A shaded stone with a soft highlight at the top left."""
    size = 2 * radius + 3
    dx, dy, coverage = _disc_alpha(radius, size)
    hx, hy = -0.38 * radius, -0.42 * radius
    spot = np.exp(-((dx - hx) ** 2 + (dy - hy) ** 2) / (2 * (0.42 * radius) ** 2))
    rim = np.clip(np.hypot(dx, dy) / radius, 0, 1) ** 3
    if black:
        base, high, edge = np.array([28, 28, 32]), np.array([120, 122, 130]), np.array([8, 8, 10])
        mix = 0.85 * spot
    else:
        base, high, edge = np.array([232, 230, 224]), np.array([255, 255, 255]), np.array([176, 172, 164])
        mix = spot
    rgb = base[None, None, :] * (1 - mix)[:, :, None] + high[None, None, :] * mix[:, :, None]
    rgb = rgb * (1 - 0.6 * rim)[:, :, None] + edge[None, None, :] * (0.6 * rim)[:, :, None]
    surface = pygame.Surface((size, size), pygame.SRCALPHA)
    pygame.surfarray.blit_array(surface, _pack(surface, rgb))
    alpha = pygame.surfarray.pixels_alpha(surface)
    alpha[:] = np.round(255 * coverage).astype(np.uint8)
    del alpha
    return surface


def _pack(surface: pygame.Surface, rgb: np.ndarray) -> np.ndarray:
    """An [x, y, 3] float colour array -> the packed pixel values of ``surface``'s format."""
    rgb = np.clip(np.round(rgb), 0, 255).astype(np.uint32)
    shifts = surface.get_shifts()
    return (rgb[:, :, 0] << shifts[0]) | (rgb[:, :, 1] << shifts[1]) | (rgb[:, :, 2] << shifts[2])


def _shadow(radius: int) -> pygame.Surface:
    size = 2 * radius + 9
    _, _, coverage = _disc_alpha(radius + 1.5, size)
    soft = np.clip(coverage, 0, 1) * 0.55
    # A softer edge: blend the disc with a slightly larger one.
    _, _, outer = _disc_alpha(radius + 3.5, size)
    soft = 0.5 * soft + 0.25 * outer
    surface = pygame.Surface((size, size), pygame.SRCALPHA)
    surface.fill((40, 24, 8, 0))
    alpha = pygame.surfarray.pixels_alpha(surface)
    alpha[:] = np.round(255 * soft).astype(np.uint8)
    del alpha
    return surface


def _faded(surface: pygame.Surface, alpha: int) -> pygame.Surface:
    faded = surface.copy()
    faded.fill((255, 255, 255, alpha), special_flags=pygame.BLEND_RGBA_MULT)
    return faded
