"""Painting on the play window: the ``Painter`` (the surface, its layout and sprites, text set at the
window's scale) and its record of what the last frame drew where (``DrawnText``, ``Hit``), which the
app reads for clicks and the tests for what was shown. ``draw`` and ``panel`` paint with it."""

from __future__ import annotations

from dataclasses import dataclass

import pygame

from gomoku.ui import look
from gomoku.ui.layout import Layout

TEXT_CACHE_LIMIT = 800
MIN_TEXT_PX = 12  # no text is set smaller than this many pixels (the smallest window gives 13 * 12/13)


@dataclass(frozen=True)
class DrawnText:
    text: str
    rect: pygame.Rect
    size: int  # the font size asked for (design pixels)
    pixels: int  # the font size it was set in (window pixels)


@dataclass(frozen=True)
class Hit:
    """A clickable (or hoverable) part of the last frame: ``kind`` "ply" or "top", and its value."""

    rect: pygame.Rect
    kind: str
    value: int


class Painter:
    """The window surface with its layout and sprites, text on it (scaled fonts, a cache of rendered
    texts), and a log of what the last frame drew where (``drawn``, ``hits``)."""

    def __init__(self, screen: pygame.Surface, layout: Layout):
        self._fonts: dict[tuple[int, bool], pygame.font.Font] = {}
        self._texts: dict[tuple, pygame.Surface] = {}
        self.drawn: list[DrawnText] = []
        self.hits: list[Hit] = []
        self.set_layout(screen, layout)

    def set_layout(self, screen: pygame.Surface, layout: Layout) -> None:
        """A new window surface or size: fonts and sprites are made again at its scale."""
        self.screen, self.layout = screen, layout
        self._fonts.clear()
        self._texts.clear()
        self.sprites = look.Sprites(layout.wood.width, layout.stone_radius, layout.small_radius,
                                    layout.icon_radius)

    def font_pixels(self, size: int) -> int:
        """The pixel size of the design's font ``size`` at this scale."""
        return max(MIN_TEXT_PX, round(size * self.layout.scale))

    def font(self, size: int, bold: bool = False) -> pygame.font.Font:
        pixels = self.font_pixels(size)
        key = (pixels, bold)
        if key not in self._fonts:
            self._fonts[key] = pygame.font.SysFont(look.FONT_NAMES, pixels, bold=bold)
        return self._fonts[key]

    def render(self, text: str, size: int, colour, bold: bool = False) -> pygame.Surface:
        key = (text, size, tuple(colour), bold)
        surface = self._texts.get(key)
        if surface is None:
            if len(self._texts) > TEXT_CACHE_LIMIT:
                self._texts.clear()
            surface = self.font(size, bold).render(text, True, colour)
            self._texts[key] = surface
        return surface

    def fitting_size(self, text: str, size: int, max_width: int, bold: bool = False) -> int:
        """The largest font size up to ``size`` in which ``text`` is at most ``max_width`` pixels
        wide (never below the smallest text, MIN_TEXT_PX: there it may be wider)."""
        while self.font_pixels(size) > MIN_TEXT_PX and self.render(text, size, (0, 0, 0), bold).get_width() > max_width:
            size -= 1
        return size

    def text(self, text: str, size: int, colour, pos, bold: bool = False, anchor: str = "topleft",
             max_width: int | None = None, min_size: int | None = None) -> pygame.Rect:
        """Draw ``text``; wider than ``max_width`` it is first set smaller (down to ``min_size``),
        then cut short with "..."."""
        if max_width is not None:
            while min_size is not None and size > min_size and self.render(text, size, colour, bold).get_width() > max_width:
                size -= 1
            if self.render(text, size, colour, bold).get_width() > max_width:
                while len(text) > 1 and self.render(text + "...", size, colour, bold).get_width() > max_width:
                    text = text[:-1]
                text += "..."
        surface = self.render(text, size, colour, bold)
        rect = surface.get_rect(**{anchor: pos})
        self.screen.blit(surface, rect)
        self.drawn.append(DrawnText(text, rect, size, self.font_pixels(size)))
        return rect

    def texts(self) -> list[str]:
        return [item.text for item in self.drawn]
