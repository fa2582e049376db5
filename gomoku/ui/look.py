"""The look of the play window: colours, fonts, and the sprites (wood, stones) drawn with numpy."""

from __future__ import annotations

import numpy as np
import pygame

FONT_NAMES = "dejavusans,freesans,helvetica,arial,liberationsans"

BACKGROUND = (36, 34, 32)
PANEL = (49, 46, 43)
PANEL_EDGE = (66, 62, 57)
TEXT = (236, 231, 222)
DIM = (166, 158, 146)
FAINT = (118, 112, 104)
ACCENT = (236, 172, 64)
RED = (214, 58, 42)
LAST_NUMBER = (255, 96, 72)
GOLD = (255, 204, 51)
WOOD = (221, 180, 122)
WOOD_DARK = (196, 150, 92)
GRID = (74, 50, 26)
LABEL = (96, 64, 32)
HEAT = (214, 62, 36)
HEAT_GRID = (150, 112, 66)
TRACK = (86, 82, 76)
ROW_ON = (74, 68, 58)
BUTTON = (70, 66, 61)
BUTTON_ON = (116, 92, 48)
BUTTON_HOVER = (88, 83, 77)
SHADOW = (20, 18, 16)
NUMBER_ON_BLACK = (235, 235, 235)
NUMBER_ON_WHITE = (30, 30, 30)
GHOST_ALPHA = 140  # the hover stone and the stones of an expected line


def wood_texture(width: int, height: int, seed: int = 0) -> pygame.Surface:
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


def stone_sprite(radius: int, black: bool) -> pygame.Surface:
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


def shadow_sprite(radius: int) -> pygame.Surface:
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


def faded(surface: pygame.Surface, alpha: int) -> pygame.Surface:
    faded = surface.copy()
    faded.fill((255, 255, 255, alpha), special_flags=pygame.BLEND_RGBA_MULT)
    return faded


class Sprites:
    """The sprites for one window size: the wood, stones and their shadow, the mini-board's small
    stones (``small``, sized to its cells) and the panel's (``icons``, the same on any board)."""

    def __init__(self, wood_side: int, stone_radius: int, small_radius: int, icon_radius: int):
        self.wood = wood_texture(wood_side, wood_side, seed=7)
        self.stones = {1: stone_sprite(stone_radius, black=True), 2: stone_sprite(stone_radius, black=False)}
        self.ghosts = {colour: faded(surface, GHOST_ALPHA) for colour, surface in self.stones.items()}
        self.shadow = shadow_sprite(stone_radius)
        self.small = {1: stone_sprite(small_radius, black=True), 2: stone_sprite(small_radius, black=False)}
        self.icons = {1: stone_sprite(icon_radius, black=True), 2: stone_sprite(icon_radius, black=False)}
