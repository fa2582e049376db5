"""The pygame window for playing against the AI (``python scripts/play.py``).

``PlayApp`` turns events into commands on the game (``session.Session``) and the AI's searches
(``thinking.Thinker``), and describes each frame for the renderer (``draw``, ``panel``). Tests drive it
headless: post real pygame events, call ``step()`` or ``run_until_idle()``, and look at
``app.board``, at the texts the renderer drew (``app.renderer.texts()``) or at the pixels of
``app.draw()``.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Sequence

import pygame

from gomoku.matches.arena import close_players
from gomoku.game.board import EMPTY, Board
from gomoku.players import Player, format_point, trained_n_in_row, trained_size
from gomoku.ui.ai import (DEFAULT_MODEL, DEFAULT_PLAYOUTS, FALLBACK_SPEC, OneTorchThread, Strength, build_opponent,
                          check_opponent, choose_opponent, describe_spec, make_opponent, player_setting, short_spec,
                          spec_strength, strength_ladder, with_strength)
from gomoku.ui.draw import Renderer
from gomoku.ui.frame import AI_FAILED_HINT, GAME_OVER, Frame, Scene, Thinking, build_frame, shown_analysis, status_text
from gomoku.ui.layout import Layout, NoDisplayError, display_missing, fit_window, open_window
from gomoku.ui.session import (BLACK, COLOUR_NAMES, DEFAULT_SIZE, N_IN_ROW, WHITE, Author, Session, SetupError,
                               describe_undo, initial_game)
from gomoku.ui.thinking import Analysis, Thinker
from gomoku.ui.sizes import window_problem

__all__ = ["FALLBACK_SPEC", "NoDisplayError", "PlayApp", "SetupError"]

log = logging.getLogger(__name__)

JOIN_SECONDS = 2.0  # how long close() waits for a stopped search to end
FLASH_SECONDS = 2.5  # how long a short message ("E5 is taken") replaces the status line
FPS = 60  # event polling rate; the window is redrawn only when something changed
THINKING_REDRAW_SECONDS = 0.1  # redraw rate while the AI thinks (elapsed time, live analysis)
SAVE_DIR = Path("data/games")


class PlayApp:
    """A person against an AI player on one board, in a pygame window."""

    KEYS = {pygame.K_n: "new", pygame.K_u: "undo", pygame.K_s: "swap", pygame.K_m: "numbers",
            pygame.K_a: "analysis", pygame.K_v: "line", pygame.K_LEFT: "back", pygame.K_RIGHT: "forward",
            pygame.K_HOME: "first", pygame.K_UP: "first", pygame.K_END: "last", pygame.K_DOWN: "last",
            pygame.K_RETURN: "resume", pygame.K_KP_ENTER: "resume", pygame.K_PLUS: "stronger",
            pygame.K_EQUALS: "stronger", pygame.K_KP_PLUS: "stronger", pygame.K_MINUS: "weaker",
            pygame.K_KP_MINUS: "weaker", pygame.K_ESCAPE: "quit", pygame.K_q: "quit"}

    def __init__(self, opponent: str | Player | None = None, *, model: str | Path | None = None,
                 default_model: str | Path = DEFAULT_MODEL, playouts: int = DEFAULT_PLAYOUTS,
                 size: int | None = None, n_in_row: int | None = None, human_first: bool | None = None,
                 seed: int | None = None, seconds: float | None = None,
                 moves: str | Path | Sequence[int] | None = None,
                 load: str | Path | None = None, show_analysis: bool = True, show_numbers: bool = False,
                 screenshot: str | Path | None = None, window_size: tuple[int, int] | None = None,
                 save_path: str | Path | None = None, title: str = "gomoku-zero"):
        # What was asked for is checked first (the game, the size, the AI), then the display.
        if window_size is not None and (problem := window_problem(window_size)):
            raise SetupError(problem)
        # The board: --size, else the saved game's, else the board of the model or AI asked for (a
        # net with fully connected heads plays only that one), else 9x9; the rule likewise:
        # --n-in-row, else the saved game's, else the one the model was trained for, else five in a
        # row. Without a model or AI asked for, the AI is the default model for them (choose_opponent).
        explicit = bool(opponent) or model is not None
        if isinstance(opponent, Player):
            ai, spec, note = opponent, opponent.name, ""
        elif explicit:
            spec, note = choose_opponent(opponent, model, playouts, default_model)
            ai = make_opponent(spec, seed, seconds)
        game = initial_game(moves, load, size, (trained_size(ai) if explicit else None) or DEFAULT_SIZE,
                            n_in_row, (trained_n_in_row(ai) if explicit else None) or N_IN_ROW)
        if not explicit:
            spec, note = choose_opponent(None, None, playouts, default_model, game.size, game.n_in_row)
            ai = make_opponent(spec, seed, seconds)
        self.ai, self.ai_spec, self.note = check_opponent(ai, spec, game.size, game.n_in_row), spec, note
        file_human = game.human_colour()
        human = (file_human or BLACK) if human_first is None else (BLACK if human_first else WHITE)
        authors = game.authors()
        self.session = Session(game.size, human, game.moves, authors, game.n_in_row)
        self.seed, self.title = seed, title
        if screenshot is None and display_missing():
            raise NoDisplayError("no display to open the window on (DISPLAY and WAYLAND_DISPLAY are not set); "
                                 "run it on a desktop, or use --screenshot")
        self.strength: Strength | None = None if isinstance(opponent, Player) else spec_strength(self.ai_spec, seconds)
        self.ladder = strength_ladder(self.strength, seconds) if self.strength else []  # the steps of +/-
        if self.note:
            log.warning("%s", self.note)
        log.info("AI: %s", self.ai_spec)
        self.show_analysis, self.show_numbers, self.show_line = show_analysis, show_numbers, False
        self.screenshot = Path(screenshot) if screenshot else None
        self.save_path = Path(save_path) if save_path else None
        self.thinker = Thinker()
        self.analyses: dict[tuple[int, ...], Analysis] = {}
        self.ai_error: str | None = None
        self.hover: tuple[int, int] | None = None
        self.running = True
        self._reset_ai = False
        self._flash: tuple[str, float] | None = None
        self._dirty = True
        self._last_draw = 0.0
        self._one_thread = False
        self._open_window(window_size)
        # One intra-op thread for the net (small, batch 1): more only fight the window for the cores.
        self._one_thread = bool(getattr(self.ai, "net_config", None)) and OneTorchThread.acquire()

    def _open_window(self, window_size: tuple[int, int] | None) -> None:
        self.screen, size = open_window(window_size, headless_ok=self.screenshot is not None)
        self.layout = Layout(size, self.session.size)
        self.renderer = Renderer(self.screen, self.layout)
        self._caption()
        self.draw()

    # -------------------------------------------------------------------------- state
    @property
    def board(self) -> Board:
        return self.session.board

    @property
    def human(self) -> int:
        return self.session.human

    def thinking(self) -> bool:
        return self.thinker.job is not None

    def is_idle(self) -> bool:
        """Nothing to wait for: no search runs or ends, and the AI is not to move (or has failed)."""
        return self.thinker.can_start() and (not self.session.ai_to_move() or self.ai_error is not None)

    def flash(self, text: str) -> None:
        self._flash = (text, time.perf_counter() + FLASH_SECONDS)
        self._dirty = True

    def shown_analysis(self) -> tuple[Analysis | None, int]:
        """The analysis for the position shown and the move played from it (``frame.shown_analysis``)."""
        return shown_analysis(self.session.position(), self._thinking(), self.analyses)

    # -------------------------------------------------------------------------- commands
    def play(self, move: int) -> bool:
        """The person plays ``move`` at the position shown; False (and a message) when not possible."""
        session = self.session
        if session.game_over():
            self.flash(GAME_OVER)
        elif session.board.current_player != session.human:
            self.flash("Here the AI is to move: Enter lets it play from here." if session.reviewing()
                       else AI_FAILED_HINT if self.ai_error else "Wait for the AI's move.")
        elif session.board.stone(move) != EMPTY:
            self.flash(f"{format_point(session.board, move)} is taken: pick an empty point.")
        else:
            dropped = len(session.history) - session.cursor
            session.play(move, Author.YOU)
            if dropped:
                self.flash(f"Went on from move {session.cursor - 1}; {dropped} later moves dropped.")
            self._dirty = True
            return True
        return False

    def new_game(self) -> None:
        self._cancel()
        self.session.new_game()
        self._fresh_game()
        colour = COLOUR_NAMES[self.human]
        self.flash(f"New game: you play {colour}" + (", you move first." if self.human == BLACK else "."))

    def _fresh_game(self) -> None:
        self.analyses.clear()
        self._reset_ai = True
        self.ai_error = None

    def undo(self) -> None:
        """Back to your previous turn: your last move and the AI's replies (a search is stopped)."""
        was_thinking = self._cancel()
        taken = self.session.undo()
        self.ai_error = None
        self.flash(describe_undo(taken, self.board) if taken or not was_thinking else "The AI's search was stopped.")

    def swap(self) -> None:
        """Swap colours: the AI takes over the side to move (after a game: a new game, swapped)."""
        self._cancel()
        self.ai_error = None
        if self.session.swap():
            self._fresh_game()
            self.flash("Swapped: the AI plays Black and moves first." if self.human != BLACK
                       else "Swapped: you play Black and move first.")
        else:
            self.flash(f"Swapped: you now play {COLOUR_NAMES[self.human]}.")
        self._caption()

    def go_to(self, ply: int) -> None:
        """Show the position after ``ply`` moves (stops the AI; it goes on at the last position)."""
        self._cancel()
        self.session.go_to(ply)
        self._dirty = True

    def resume(self) -> None:
        if not self.session.reviewing():
            self.flash("This is the latest position: use Left to step back.")
            return
        dropped = self.session.resume()
        self.ai_error = None
        self.flash(f"Going on from move {self.session.cursor}; {dropped} later moves dropped.")

    def change_strength(self, step: int) -> None:
        if self.strength is None:
            self.flash(f"The strength of {short_spec(self.ai_spec)} is fixed.")
            return
        index = max(0, min(self.ladder.index(self.strength) + step, len(self.ladder) - 1))
        self.set_strength(self.ladder[index])

    def set_strength(self, strength: Strength) -> None:
        spec = with_strength(self.ai_spec, strength)
        try:
            player = build_opponent(spec, self.session.size, self.seed, strength.seconds, self.session.n_in_row)
        except SetupError as error:
            self.flash(f"Cannot change the strength: {error}")
            return
        was_thinking = self._cancel()
        self.ai, self.ai_spec, self.strength = player, spec, strength
        if strength not in self.ladder:
            self.ladder = sorted({*self.ladder, strength}, key=Strength.order)
        self._caption()
        self.flash(f"Strength: {strength.label}" + (" (the AI starts again)" if was_thinking else ""))

    def save(self, path: str | Path | None = None) -> Path | None:
        """Write the game as text (``session.format_game``); the path is flashed."""
        path = Path(path or self.save_path or SAVE_DIR / time.strftime("game-%Y%m%d-%H%M%S.txt"))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(self.session.to_text(player_setting(self.ai)), encoding="utf-8")
        except OSError as error:
            self.flash(f"Could not save {path}: {error.strerror or error}")
            return None
        log.info("saved the game to %s", path)
        self.flash(f"Saved {path}")
        return path

    def toggle(self, name: str) -> None:
        setattr(self, name, not getattr(self, name))
        self._dirty = True

    def request_quit(self) -> None:
        self.running = False
        self._cancel()

    def do_action(self, action: str) -> None:
        session = self.session
        commands = {"new": self.new_game, "undo": self.undo, "swap": self.swap, "resume": self.resume,
                    "numbers": lambda: self.toggle("show_numbers"), "analysis": lambda: self.toggle("show_analysis"),
                    "line": lambda: self.toggle("show_line"), "back": lambda: self.go_to(session.cursor - 1),
                    "forward": lambda: self.go_to(session.cursor + 1), "first": lambda: self.go_to(0),
                    "last": lambda: self.go_to(len(session.history)), "stronger": lambda: self.change_strength(1),
                    "weaker": lambda: self.change_strength(-1), "save": self.save, "quit": self.request_quit}
        commands[action]()

    # -------------------------------------------------------------------------- input
    def handle_event(self, event: pygame.event.Event) -> None:
        self._dirty = True
        if event.type == pygame.QUIT:
            self.request_quit()
        elif event.type == pygame.KEYDOWN:
            if event.key == pygame.K_s and getattr(event, "mod", 0) & pygame.KMOD_CTRL:
                self.save()
            elif event.key in self.KEYS:
                self.do_action(self.KEYS[event.key])
            elif getattr(event, "unicode", "") in ("+", "-"):
                self.do_action("stronger" if event.unicode == "+" else "weaker")
        elif event.type == pygame.MOUSEBUTTONDOWN and getattr(event, "button", 1) == 1:
            self.click(event.pos)
        elif event.type == pygame.MOUSEMOTION:
            self.hover = event.pos
        elif event.type == getattr(pygame, "WINDOWLEAVE", -1):
            self.hover = None
        elif event.type in (pygame.VIDEORESIZE, getattr(pygame, "WINDOWSIZECHANGED", -1)):
            self.resize()

    def click(self, pos: tuple[int, int]) -> bool:
        """A left click at a window pixel: a button, a row of the move list, or a board point."""
        button = self.layout.button_at(pos)
        if button is not None and (self.strength is not None or button.action not in ("weaker", "stronger")):
            self.do_action(button.action)
            return True
        hit = next((h for h in self.renderer.hits if h.kind == "ply" and h.rect.collidepoint(pos)), None)
        if hit is not None:
            self.go_to(hit.value)
            return True
        move = self.layout.pixel_to_point(pos)
        return move is not None and self.play(move)

    def resize(self) -> None:
        """Lay the window out again at its new size. pygame 2 has resized the window's surface
        already: set_mode here would make a new window, which ends a drag of its edge under a
        window manager. Made smaller than MIN_WINDOW (pygame 2.6 cannot give SDL a minimum size),
        the layout stays at MIN_WINDOW, its right and bottom cut off."""
        screen = pygame.display.get_surface()
        size = fit_window(screen.get_size())
        if screen is self.screen and size == self.layout.window:
            return  # laid out already: a drag sends several events, and a layout makes the sprites again
        self.screen, self.layout = screen, Layout(size, self.session.size)
        self.renderer.set_layout(self.screen, self.layout)
        self._dirty = True

    def _caption(self) -> None:
        strength = f", {self.strength.label}" if self.strength else ""
        rule = f" ({self.session.n_in_row} in a row)" if self.session.n_in_row != N_IN_ROW else ""
        pygame.display.set_caption(f"{self.title}{rule}: you ({COLOUR_NAMES[self.human]}) against "
                                   f"{describe_spec(self.ai_spec)}{strength}")

    # -------------------------------------------------------------------------- the AI
    def _cancel(self) -> bool:
        """Stop the running search; keep what it found, marked stopped. True when one ran."""
        running = self.thinker.job is not None
        stopped = self.thinker.cancel()
        if stopped is not None:
            self.analyses[stopped.moves] = stopped
        self._dirty = True
        return running

    def _poll(self) -> None:
        """Take the worker's answer (main thread)."""
        taken = self.thinker.take_answer()
        if taken is None:
            return
        job, answer = taken
        self._dirty = True
        if answer.error is not None:
            self.ai_error = answer.error
            self.flash(f"{AI_FAILED_HINT} ({answer.error})")
            return
        if self.session.position() != job.moves or self.board.stone(answer.move) != EMPTY:
            log.error("AI answer %s does not fit the position; ignored", answer.move)
            return
        if answer.analysis is not None:
            self.analyses[job.moves] = answer.analysis
        self.session.play(answer.move, Author.AI, player_setting(job.player))
        log.info("AI plays %s (%.1f s)", format_point(self.board, answer.move), answer.seconds)

    def _maybe_start(self) -> None:
        if (not self.running or self.ai_error or not self.session.ai_to_move() or not self.thinker.can_start()):
            return
        if self._reset_ai:
            self.ai.reset()
            self._reset_ai = False
        self.thinker.start(self.ai, self.board)
        self._dirty = True

    # -------------------------------------------------------------------------- what is shown
    def _thinking(self) -> Thinking | None:
        job = self.thinker.job
        return None if job is None else Thinking(job.moves, job.elapsed(), job.live(), job.target_playouts(),
                                                 starting=self.ai.starting)

    def scene(self) -> Scene:
        """What the next frame is made from, gathered now (``frame.build_frame`` makes the frame)."""
        hover = self.hover
        rank = None if hover is None else next(
            (hit.value for hit in self.renderer.hits if hit.kind == "top" and hit.rect.collidepoint(hover)), None)
        return Scene(session=self.session, thinking=self._thinking(), stopping=bool(self.thinker.stopping),
                     analyses=self.analyses, flash=self._flash[0] if self._flash else None,
                     ai_error=self.ai_error, ai_spec=self.ai_spec,
                     can_analyse=callable(getattr(self.ai, "analyse", None)),
                     strength=self.strength.label if self.strength else "", note=self.note,
                     show_numbers=self.show_numbers, show_analysis=self.show_analysis, show_line=self.show_line,
                     hover=hover, hover_point=None if hover is None else self.layout.pixel_to_point(hover),
                     hover_rank=rank)

    def status_text(self) -> str:
        return status_text(self.scene())

    def frame(self) -> Frame:
        return build_frame(self.scene())

    # -------------------------------------------------------------------------- loop
    def draw(self) -> pygame.Surface:
        """Draw the whole window and return its surface (not flipped)."""
        self._dirty = False
        self._last_draw = time.perf_counter()
        return self.renderer.draw(self.frame())

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
                self.thinker.job is not None and now - self._last_draw >= THINKING_REDRAW_SECONDS)):
            self.draw()
            pygame.display.flip()

    def run_until_idle(self, timeout: float = 10.0) -> bool:
        """Step until no search runs and the AI is not to move (or the game is over)."""
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
        """Save the window as an image (PNG for a .png path); a SetupError when it cannot be written."""
        path = Path(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            pygame.image.save(self.draw(), str(path))
        except (OSError, pygame.error) as error:
            reason = getattr(error, "strerror", None) or str(error)
            raise SetupError(f"cannot save the screenshot {path}: {reason}") from error
        log.info("saved %s", path)
        return path

    def close(self) -> None:
        """Close the window at once, then wait (up to JOIN_SECONDS) for a stopped search to end."""
        self.running = False
        self._cancel()
        pygame.display.quit()
        self.thinker.join(JOIN_SECONDS)
        close_players(self.ai)  # an external engine's process ends with the window, even a hung one
        if self._one_thread:
            OneTorchThread.release()
            self._one_thread = False
