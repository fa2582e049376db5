"""Drawing one frame of the play window: the board and the status line (the side panel: ``panel``).

The app describes a frame as a ``Frame`` (``frame``: the board, the texts, the analysis, the ghost
stones); ``Renderer.draw`` paints it. The renderer is a ``paint.Painter``: it keeps what it drew
where, for the app and the tests: ``drawn`` (every text of the last frame with its rectangle) and
``hits`` (the clickable rows of the panel).
"""

from __future__ import annotations

import math
import time

import pygame

from gomoku.game.board import EMPTY
from gomoku.players import COLUMN_LETTERS
from gomoku.ui import look
from gomoku.ui.frame import Frame, Tone
from gomoku.ui.paint import Painter
from gomoku.ui.panel import draw_panel

STATUS_FONT = 18
STATUS_MIN_FONT = 13
NUMBER_FONT = 20  # move numbers on the stones, at most
NUMBER_WIDTH = 1.6  # a move number is at most this many stone radii wide


class Renderer(Painter):
    """Paints frames; ``set_layout`` after the window changed size."""

    def draw(self, frame: Frame) -> pygame.Surface:
        self.drawn, self.hits = [], []
        self.screen.fill(look.BACKGROUND)
        self._draw_board(frame)
        self._draw_status(frame)
        draw_panel(self, frame)
        return self.screen

    # -------------------------------------------------------------------------- the board
    def _draw_board(self, frame: Frame) -> None:
        screen, board, lay = self.screen, frame.board, self.layout
        cell, n = lay.cell, lay.n
        pygame.draw.rect(screen, look.SHADOW, lay.wood.move(lay.px(4), lay.px(6)), border_radius=lay.px(6))
        screen.blit(self.sprites.wood, lay.wood)
        pygame.draw.rect(screen, look.WOOD_DARK, lay.wood, width=lay.px(2), border_radius=lay.px(2))
        x0, y0 = round(lay.origin[0]), round(lay.origin[1])
        last = round((n - 1) * cell)
        for i in range(n):
            offset = round(i * cell)
            edge = lay.px(2) if i in (0, n - 1) else lay.px(1)
            pygame.draw.line(screen, look.GRID, (x0, y0 + offset), (x0 + last, y0 + offset), edge)
            pygame.draw.line(screen, look.GRID, (x0 + offset, y0), (x0 + offset, y0 + last), edge)
        for move in star_points(n):
            pygame.draw.circle(screen, look.GRID, lay.point_to_pixel(move), max(3, round(cell * 0.09)))
        for i in range(n):  # columns A.. left to right, rows numbered from the bottom
            offset = round(i * cell)
            for y in (y0 - lay.label_offset, y0 + last + lay.label_offset):
                self.text(COLUMN_LETTERS[i], 18, look.LABEL, (x0 + offset, round(y)), bold=True, anchor="center")
            for x in (x0 - lay.label_offset, x0 + last + lay.label_offset):
                self.text(str(n - i), 18, look.LABEL, (round(x), y0 + offset), bold=True, anchor="center")
        line = board.winning_line()
        if line:  # a gold band under the winning stones, rings on them below
            ends = [lay.point_to_pixel(line[0]), lay.point_to_pixel(line[-1])]
            pygame.draw.line(screen, look.GOLD, ends[0], ends[1], max(6, round(cell * 0.16)))
        shadow = self.sprites.shadow
        for move in board.moves:
            x, y = lay.point_to_pixel(move)
            screen.blit(shadow, shadow.get_rect(center=(x + lay.px(2), y + lay.px(3))))
        for index, move in enumerate(board.moves):
            colour = board.stone(move)
            centre = lay.point_to_pixel(move)
            stone = self.sprites.stones[colour]
            screen.blit(stone, stone.get_rect(center=centre))
            if frame.show_numbers:
                tint = look.LAST_NUMBER if move == board.last_move else number_colour(colour)
                self._stone_number(str(index + 1), tint, centre)
        if board.moves and not frame.show_numbers:
            pygame.draw.circle(screen, look.RED, lay.point_to_pixel(board.last_move), max(4, round(cell * 0.1)))
        for move in line:
            pygame.draw.circle(screen, look.GOLD, lay.point_to_pixel(move), lay.stone_radius + 2, lay.px(4))
        for ghost in frame.ghosts:
            if board.stone(ghost.move) != EMPTY:
                continue
            sprite = self.sprites.ghosts[ghost.colour]
            centre = lay.point_to_pixel(ghost.move)
            screen.blit(sprite, sprite.get_rect(center=centre))
            if ghost.number:
                self._stone_number(str(ghost.number), number_colour(ghost.colour), centre)

    def _stone_number(self, text: str, colour, centre: tuple[int, int]) -> None:
        """A move number on a stone, set small enough to stay on it (on a big board, small stones)."""
        size = self.fitting_size(text, NUMBER_FONT, round(NUMBER_WIDTH * self.layout.stone_radius), bold=True)
        self.text(text, size, colour, centre, bold=True, anchor="center")

    # -------------------------------------------------------------------------- the status line
    def _draw_status(self, frame: Frame) -> None:
        rect, lay = self.layout.status, self.layout
        pygame.draw.rect(self.screen, look.PANEL, rect, border_radius=lay.px(8))
        colour = {Tone.NORMAL: look.TEXT, Tone.ALERT: look.ACCENT, Tone.WIN: look.GOLD}[frame.tone]
        left = rect.x + lay.px(14)
        icon = (rect.x + lay.px(22), rect.centery)
        if frame.busy:
            self._draw_spinner(icon)
            left = rect.x + lay.px(38)
        elif frame.tone == Tone.NORMAL and not frame.board.game_end()[0]:
            stone = self.sprites.icons[frame.board.current_player]
            self.screen.blit(stone, stone.get_rect(center=icon))
            left = rect.x + lay.px(38)
        self.text(frame.status, STATUS_FONT, colour, (left, rect.centery), bold=True, anchor="midleft",
                  max_width=rect.right - lay.px(12) - left, min_size=STATUS_MIN_FONT)

    def _draw_spinner(self, centre: tuple[int, int]) -> None:
        angle = time.perf_counter() * 5.0
        radius = self.layout.px(7)
        for i in range(8):
            a = angle + i * math.pi / 4
            shade = 90 + 20 * i
            pos = (round(centre[0] + radius * math.cos(a)), round(centre[1] + radius * math.sin(a)))
            pygame.draw.circle(self.screen, (shade, shade * 0.8, shade * 0.5), pos, self.layout.px(2))


def number_colour(colour: int) -> tuple[int, int, int]:
    return look.NUMBER_ON_BLACK if colour == 1 else look.NUMBER_ON_WHITE


def star_points(n: int) -> list[int]:
    points = {(n // 2, n // 2)} if n % 2 else set()
    if n >= 9:
        edge = 2 if n < 13 else 3
        points |= {(r, c) for r in (edge, n - 1 - edge) for c in (edge, n - 1 - edge)}
    return [r * n + c for r, c in sorted(points)]
