"""The play window: opening it, and where everything goes in it, for any window size.

The window is designed at ``BASE_SIZE``; a ``Layout`` scales that design by the largest factor
that fits the window and centres it, so the board, the panel and the fonts grow together.
Board points map to pixels here (``point_to_pixel``, ``pixel_to_point``); rows are drawn with
row 1 at the bottom, as the standard notation counts them (``gomoku.players.format_point``).
"""

from __future__ import annotations

from dataclasses import dataclass

import os
import sys

import pygame

from gomoku.ui.session import SetupError
from gomoku.ui.sizes import MAX_WINDOW, MIN_WINDOW

HEADLESS_DRIVERS = ("dummy", "offscreen")  # SDL's drivers that show nothing
BASE_SIZE = (1000, 660)  # the design size of the window (pixels at scale 1)
MARGIN = 16
WOOD_SIDE = 588  # the wooden board, a square at (MARGIN, MARGIN)
# Wood between the board's edge and the outer grid lines, where the coordinates go: room for a
# label (LABEL_ROOM) and half a cell, so that an edge stone clears the labels. Solving
# border = LABEL_ROOM + cell / 2 with cell = (WOOD_SIDE - 2 * border) / (n - 1) gives
# (LABEL_ROOM * (n - 1) + WOOD_SIDE / 2) / n: 56 at 9x9 (the design), 44 at 15x15, 40 at 20x20.
LABEL_ROOM = 26.25
STATUS_GAP = 8
STATUS_HEIGHT = 36
PANEL_GAP = 16
PANEL_PAD = 16
HEAT_SIDE = 162  # the analysis mini-board (at 9x9: 18-pixel cells)
HEAT_TOP = 178  # its top edge, below the panel's top
HEAT_LEFT = 34  # room for its row numbers
ICON_RADIUS = 7  # the small stones of the panel and the status line (the mini-board's at 9x9)
MOVES_TOP = 166  # the move list, right of the mini-board
TOP_MOVES_TOP = 350  # the table of the search's top moves
TOP_MOVES_HEIGHT = 110
STRENGTH_ROW = 57
STRENGTH_BUTTON = (26, 22)
BUTTON_HEIGHT = 28
BUTTON_GAP = 6
HIT_RADIUS = 0.48  # a click counts for a point within this many cells of it


@dataclass(frozen=True)
class ButtonSpec:
    key: str  # the key, as shown on the button
    label: str
    action: str


@dataclass
class Button:
    key: str
    label: str
    action: str
    rect: pygame.Rect


BUTTON_ROWS = (
    (ButtonSpec("N", "New", "new"), ButtonSpec("U", "Undo", "undo"), ButtonSpec("S", "Swap", "swap")),
    (ButtonSpec("←", "Back", "back"), ButtonSpec("→", "Forward", "forward"),
     ButtonSpec("Enter", "Resume", "resume")),
    (ButtonSpec("M", "Numbers", "numbers"), ButtonSpec("A", "Analysis", "analysis"),
     ButtonSpec("V", "Line", "line")),
    (ButtonSpec("Ctrl+S", "Save", "save"), ButtonSpec("Esc", "Quit", "quit")),
)
STRENGTH_BUTTONS = (ButtonSpec("-", "", "weaker"), ButtonSpec("+", "", "stronger"))


def fit_window(size: tuple[int, int]) -> tuple[int, int]:
    """A size resized to by hand, kept within MIN_WINDOW and MAX_WINDOW."""
    return (min(MAX_WINDOW[0], max(MIN_WINDOW[0], int(size[0]))),
            min(MAX_WINDOW[1], max(MIN_WINDOW[1], int(size[1]))))


def window_for_screen(screen: tuple[int, int] | None) -> tuple[int, int]:
    """A window size for a screen: the design size, scaled to most of a large (or small) screen."""
    if not screen or min(screen) <= 0:
        return BASE_SIZE
    scale = min(0.9 * screen[0] / BASE_SIZE[0], 0.85 * screen[1] / BASE_SIZE[1])
    scale = max(MIN_WINDOW[1] / BASE_SIZE[1], min(scale, 3.0))
    if 0.95 <= scale <= 1.15:
        scale = 1.0
    return round(BASE_SIZE[0] * scale), round(BASE_SIZE[1] * scale)


def wood_border(n: int) -> float:
    """The design's wood between the board's edge and the outer grid lines, for an n x n board."""
    return (LABEL_ROOM * (n - 1) + WOOD_SIDE / 2) / n


class NoDisplayError(SetupError):
    """There is no display to open the window on."""


def display_missing() -> bool:
    """True on X11/Wayland systems with neither display set (and no SDL driver asked for)."""
    return (sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")) and not os.environ.get("SDL_VIDEODRIVER")
            and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"))


def open_window(size: tuple[int, int] | None, headless_ok: bool = False) -> tuple[pygame.Surface, tuple[int, int]]:
    """Open the (resizable) window: ``size``, else fitted to the screen (``BASE_SIZE`` headless).

    Without a display SDL silently falls back to an invisible 'offscreen' window, and the app
    would wait forever for clicks: that is a NoDisplayError unless asked for (SDL_VIDEODRIVER)
    or ``headless_ok`` (a screenshot).
    """
    pygame.display.init()
    pygame.font.init()
    driver = pygame.display.get_driver()
    if driver in HEADLESS_DRIVERS and os.environ.get("SDL_VIDEODRIVER") != driver and not headless_ok:
        pygame.display.quit()
        raise NoDisplayError(f"no display to open the window on (SDL could only start its {driver!r} driver)")
    if size is None:
        size = BASE_SIZE if driver in HEADLESS_DRIVERS else window_for_screen(pygame.display.get_desktop_sizes()[0])
    size = fit_window(size)
    return pygame.display.set_mode(size, pygame.RESIZABLE), size


class Layout:
    """Rectangles and metrics of one window size for an n x n board."""

    def __init__(self, window: tuple[int, int], n: int):
        self.window = window
        self.n = n
        self.scale = s = min(window[0] / BASE_SIZE[0], window[1] / BASE_SIZE[1])
        ox = (window[0] - BASE_SIZE[0] * s) / 2
        oy = (window[1] - BASE_SIZE[1] * s) / 2

        def rect(x: float, y: float, w: float, h: float) -> pygame.Rect:
            return pygame.Rect(round(ox + x * s), round(oy + y * s), round(w * s), round(h * s))

        self.wood = rect(MARGIN, MARGIN, WOOD_SIDE, WOOD_SIDE)
        border = wood_border(n) * s
        self.origin = (self.wood.x + border, self.wood.y + border)
        self.cell = (self.wood.width - 2 * border) / (n - 1)
        self.stone_radius = max(3, min(int(self.cell * 0.46), round(30 * s)))
        self.label_offset = max(border * 0.66, self.stone_radius + 12 * s)
        self.status = rect(MARGIN, MARGIN + WOOD_SIDE + STATUS_GAP, WOOD_SIDE, STATUS_HEIGHT)
        panel_x = MARGIN + WOOD_SIDE + PANEL_GAP
        self.panel = rect(panel_x, MARGIN, BASE_SIZE[0] - panel_x - MARGIN, BASE_SIZE[1] - 2 * MARGIN)
        self.pad = round(PANEL_PAD * s)
        self.heat_cell = max(4, round(min(18, HEAT_SIDE // n) * s))
        self.heat_origin = (self.panel.x + round(HEAT_LEFT * s), self.panel.y + round(HEAT_TOP * s))
        moves_x = self.heat_origin[0] + self.heat_cell * n + round(18 * s)
        self.moves = pygame.Rect(moves_x, self.panel.y + round(MOVES_TOP * s),
                                 self.panel.right - self.pad - moves_x, round((HEAT_TOP + HEAT_SIDE - MOVES_TOP) * s))
        self.top_moves = pygame.Rect(self.panel.x + self.pad, self.panel.y + round(TOP_MOVES_TOP * s),
                                     self.panel.width - 2 * self.pad, round(TOP_MOVES_HEIGHT * s))
        self.small_radius = max(3, int(self.heat_cell * 0.4))  # the mini-board's stones
        self.icon_radius = max(3, round(ICON_RADIUS * s))
        self.buttons = self._buttons()

    def px(self, value: float) -> int:
        """A length of the design, in pixels at this scale."""
        return max(1, round(value * self.scale))

    def _buttons(self) -> list[Button]:
        buttons = []
        panel, gap, height = self.panel, self.px(BUTTON_GAP), self.px(BUTTON_HEIGHT)
        inner = panel.width - 2 * self.pad
        for index, row in enumerate(BUTTON_ROWS):
            y = panel.bottom - self.pad - (len(BUTTON_ROWS) - index) * (height + gap) + gap
            width = (inner - gap * (len(row) - 1)) / len(row)
            for col, spec in enumerate(row):
                x = panel.x + self.pad + col * (width + gap)
                buttons.append(Button(spec.key, spec.label, spec.action, pygame.Rect(round(x), y, round(width), height)))
        w, h = self.px(STRENGTH_BUTTON[0]), self.px(STRENGTH_BUTTON[1])
        right = panel.right - self.pad
        for index, spec in enumerate(reversed(STRENGTH_BUTTONS)):
            x = right - (index + 1) * w - index * self.px(4)
            buttons.append(Button(spec.key, spec.label, spec.action,
                                  pygame.Rect(x, panel.y + self.px(STRENGTH_ROW), w, h)))
        return buttons

    # -------------------------------------------------------------------------- board points
    def point_to_pixel(self, move: int) -> tuple[int, int]:
        """The window pixel of a board point (its intersection); row 0 of the board is drawn on top."""
        row, col = divmod(move, self.n)
        return round(self.origin[0] + col * self.cell), round(self.origin[1] + row * self.cell)

    def pixel_to_point(self, pos: tuple[int, int]) -> int | None:
        """The board point nearest to a pixel, or None when the pixel is not close to one."""
        col = round((pos[0] - self.origin[0]) / self.cell)
        row = round((pos[1] - self.origin[1]) / self.cell)
        if not (0 <= row < self.n and 0 <= col < self.n):
            return None
        dx = pos[0] - (self.origin[0] + col * self.cell)
        dy = pos[1] - (self.origin[1] + row * self.cell)
        if dx * dx + dy * dy > (HIT_RADIUS * self.cell) ** 2:
            return None
        return row * self.n + col

    def heat_centre(self, move: int) -> tuple[int, int]:
        row, col = divmod(move, self.n)
        cell = self.heat_cell
        return self.heat_origin[0] + col * cell + cell // 2, self.heat_origin[1] + row * cell + cell // 2

    def button_at(self, pos: tuple[int, int]) -> Button | None:
        return next((button for button in self.buttons if button.rect.collidepoint(pos)), None)
