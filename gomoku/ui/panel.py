"""The side panel of the play window: who plays what and the AI's strength, the analysis (the win
estimate per side, a mini-board of the search's visits, the top moves with visits, win rate and
prior), the move list, and the buttons, painted with a ``paint.Painter`` (``draw.Renderer``)."""

from __future__ import annotations

import math

import numpy as np
import pygame

from gomoku.game.board import EMPTY
from gomoku.players import COLUMN_LETTERS, format_point
from gomoku.ui import look
from gomoku.ui.frame import Frame
from gomoku.ui.paint import Hit, Painter
from gomoku.ui.session import BLACK, COLOUR_NAMES, WHITE
from gomoku.ui.thinking import Analysis, percent

SEPARATOR_Y = 90
ANALYSIS_Y = 98
WIN_Y = 124
WIN_BAR_Y = 143
WIN_BAR_HEIGHT = 10
HEAT_LABEL = 13
SHARE_SHOWN = 0.02  # per cent of the visits are written on mini-board points from this share up
MOVE_ROW = 18
TOP_ROW = 18
BAR_BLACK = (28, 28, 32)
BAR_WHITE = (232, 230, 224)


def win_labels(analysis: Analysis, human: int) -> tuple[str, str]:
    """("Black (you) 38%", "62% White (AI)"): each side's chance, the side to move's as in the
    top-moves table (the win rate of the best move)."""
    mover = percent(analysis.win_for(analysis.to_move))
    black = mover if analysis.to_move == BLACK else 100 - mover

    def who(colour: int) -> str:
        return "you" if colour == human else "AI"

    return f"Black ({who(BLACK)}) {black}%", f"{100 - black}% White ({who(WHITE)})"


def draw_panel(p: Painter, frame: Frame) -> None:
    lay, screen = p.layout, p.screen
    panel = lay.panel
    pygame.draw.rect(screen, look.PANEL, panel, border_radius=lay.px(10))
    pygame.draw.rect(screen, look.PANEL_EDGE, panel, width=1, border_radius=lay.px(10))
    _draw_players(p, frame)
    x, right = panel.x + lay.pad, panel.right - lay.pad
    y = panel.y + lay.px(SEPARATOR_Y)
    pygame.draw.line(screen, look.PANEL_EDGE, (x, y), (right, y))
    if frame.show_analysis:
        _draw_analysis(p, frame)
    else:
        centre = (lay.heat_origin[0] + lay.heat_cell * lay.n // 2, lay.heat_origin[1] + lay.heat_cell * lay.n // 2)
        p.text("Analysis hidden", 17, look.DIM, centre, anchor="center")
        p.text("press A to show it", 14, look.DIM, (centre[0], centre[1] + lay.px(22)), anchor="center")
    _draw_move_list(p, frame)
    _draw_buttons(p, frame)


def _draw_players(p: Painter, frame: Frame) -> None:
    lay = p.layout
    x, right, y = lay.panel.x + lay.pad, lay.panel.right - lay.pad, lay.panel.y + lay.px(12)
    for index, (who, colour) in enumerate((("You", frame.human), ("AI", 3 - frame.human))):
        left = x + index * lay.px(150)
        stone = p.sprites.icons[colour]
        p.screen.blit(stone, stone.get_rect(center=(left + lay.px(8), y + lay.px(10))))
        p.text(f"{who}: {COLOUR_NAMES[colour]}", 16, look.TEXT, (left + lay.px(22), y + lay.px(10)),
               anchor="midleft", bold=who == "You")
    y += lay.px(24)
    name = p.text(f"AI: {frame.ai_name}", 14, look.DIM, (x, y), max_width=right - x)
    if frame.note:
        p.text(frame.note, 14, look.ACCENT, (name.right + lay.px(8), y), max_width=right - name.right - lay.px(8))
    y = lay.panel.y + lay.px(57)
    buttons = [b for b in lay.buttons if b.action in ("weaker", "stronger")]
    if frame.strength:
        p.text(f"Strength: {frame.strength}", 14, look.TEXT, (x, y + lay.px(3)),
               max_width=min(b.rect.x for b in buttons) - x - lay.px(6))
    else:
        p.text("Strength: fixed for this player", 14, look.DIM, (x, y + lay.px(3)), max_width=right - x)


def _draw_analysis(p: Painter, frame: Frame) -> None:
    lay, screen, analysis = p.layout, p.screen, frame.analysis
    x, right = lay.panel.x + lay.pad, lay.panel.right - lay.pad
    y = lay.panel.y + lay.px(ANALYSIS_Y)
    title = p.text("Analysis", 17, look.TEXT, (x, y), bold=True)
    if frame.analysis_info:
        p.text(frame.analysis_info, 13, look.DIM, (right, y + lay.px(3)), anchor="topright",
               max_width=right - title.right - lay.px(10))
    y = lay.panel.y + lay.px(WIN_Y)
    if analysis is None:
        p.text(frame.analysis_hint, 14, look.DIM, (x, y), max_width=right - x)
    else:
        left_text, right_text = win_labels(analysis, frame.human)
        for colour, text, pos, anchor in ((BLACK, left_text, (x + lay.px(18), y), "topleft"),
                                          (WHITE, right_text, (right - lay.px(18), y), "topright")):
            stone = p.sprites.icons[colour]
            centre = (x + lay.px(7) if colour == BLACK else right - lay.px(7), y + lay.px(8))
            screen.blit(stone, stone.get_rect(center=centre))
            p.text(text, 14, look.TEXT, pos, anchor=anchor, bold=colour == frame.human)
        bar = pygame.Rect(x, lay.panel.y + lay.px(WIN_BAR_Y), right - x, lay.px(WIN_BAR_HEIGHT))
        pygame.draw.rect(screen, BAR_WHITE, bar, border_radius=bar.height // 2)
        black = pygame.Rect(bar.x, bar.y, max(bar.height, round(bar.width * analysis.win_for(BLACK))), bar.height)
        pygame.draw.rect(screen, BAR_BLACK, black, border_radius=bar.height // 2)
        pygame.draw.rect(screen, look.PANEL_EDGE, bar, width=1, border_radius=bar.height // 2)
    _draw_heat(p, frame)
    _draw_top_moves(p, frame)


def _draw_heat(p: Painter, frame: Frame) -> None:
    """The mini-board: the stones shown on the board, the search's visits as heat on empty points."""
    lay, screen, board = p.layout, p.screen, frame.board
    n, cell = lay.n, lay.heat_cell
    ox, oy = lay.heat_origin
    area = pygame.Rect(ox, oy, n * cell, n * cell)
    pygame.draw.rect(screen, look.WOOD, area.inflate(lay.px(6), lay.px(6)), border_radius=lay.px(4))
    shares = frame.analysis.shares() if frame.analysis is not None else None
    empty = np.array([board.stone(move) == EMPTY for move in range(n * n)])
    if shares is not None:
        shares = np.where(empty, shares, 0.0)
    if shares is not None and shares.max() > 0:
        heat = pygame.Surface(area.size, pygame.SRCALPHA)
        peak = shares.max()
        for move in np.flatnonzero(shares > 0):
            r, c = divmod(int(move), n)
            strength = (shares[move] / peak) ** 0.6
            heat.fill((*look.HEAT, round(14 + 216 * strength)), (c * cell + 1, r * cell + 1, cell - 2, cell - 2))
        screen.blit(heat, area)
    half = cell // 2
    label_height = p.font(HEAT_LABEL).get_linesize()
    every = math.ceil(label_height / cell)  # on a big board, coordinates on every few lines only
    for i in range(n):
        pygame.draw.line(screen, look.HEAT_GRID, (ox + half, oy + i * cell + half), (ox + (n - 1) * cell + half, oy + i * cell + half))
        pygame.draw.line(screen, look.HEAT_GRID, (ox + i * cell + half, oy + half), (ox + i * cell + half, oy + (n - 1) * cell + half))
        if i % every == 0:
            p.text(COLUMN_LETTERS[i], HEAT_LABEL, look.DIM, (ox + i * cell + half, oy - lay.px(5) - label_height // 2),
                   anchor="center")
        if (n - 1 - i) % every == 0:
            p.text(str(n - i), HEAT_LABEL, look.DIM, (ox - lay.px(12), oy + i * cell + half), anchor="center")
    for move in board.moves:
        stone = p.sprites.small[board.stone(move)]
        screen.blit(stone, stone.get_rect(center=lay.heat_centre(move)))
    if frame.marked >= 0 and board.stone(frame.marked) != EMPTY:
        pygame.draw.circle(screen, look.GOLD, lay.heat_centre(frame.marked), lay.small_radius + lay.px(2), lay.px(2))
    if shares is None:
        return
    fits = p.font(HEAT_LABEL, True).size("88")[0] <= cell  # per cent figures only where they fit a cell
    for move in np.flatnonzero(shares >= SHARE_SHOWN) if fits else ():
        p.text(f"{shares[move] * 100:.0f}", HEAT_LABEL, (255, 250, 240), lay.heat_centre(int(move)), bold=True,
               anchor="center")
    best = int(np.argmax(shares))
    if shares[best] > 0 and frame.marked < 0:  # the search's choice, until it is played
        r, c = divmod(best, n)
        pygame.draw.rect(screen, look.GOLD, (ox + c * cell, oy + r * cell, cell, cell), lay.px(2), border_radius=lay.px(3))


def _draw_top_moves(p: Painter, frame: Frame) -> None:
    lay, analysis = p.layout, frame.analysis
    if analysis is None or not analysis.top:
        return
    rect = lay.top_moves
    columns = (rect.x + round(rect.width * 0.56), rect.x + round(rect.width * 0.76), rect.right)
    p.text(f"{COLOUR_NAMES[analysis.to_move]} to play", 13, look.DIM, (rect.x, rect.y))
    for title, column in zip(("visits", "win", "prior"), columns):
        p.text(title, 13, look.DIM, (column, rect.y), anchor="topright")
    probe = frame.board
    for rank, stats in enumerate(analysis.top):
        y = rect.y + lay.px(16) + rank * lay.px(TOP_ROW)
        row = pygame.Rect(rect.x - lay.px(4), y - lay.px(1), rect.width + lay.px(8), lay.px(TOP_ROW))
        if frame.hover and row.collidepoint(frame.hover):
            pygame.draw.rect(p.screen, look.ROW_ON, row, border_radius=lay.px(4))
        p.hits.append(Hit(row, "top", rank))
        played = stats.move == frame.marked
        colour = look.GOLD if played or (rank == 0 and frame.marked < 0) else look.TEXT
        mark = "  played" if played else ""
        p.text(f"{rank + 1}. {format_point(probe, stats.move)}{mark}", 14, colour, (rect.x, y), bold=rank == 0)
        win = "-" if np.isnan(stats.win) else f"{percent(stats.win)}%"
        for text, column in zip((str(stats.visits), win, f"{percent(stats.prior)}%"), columns):
            p.text(text, 14, look.TEXT, (column, y), anchor="topright")


def _draw_move_list(p: Painter, frame: Frame) -> None:
    lay, rect = p.layout, p.layout.moves
    p.text("Moves", 14, look.TEXT, (rect.x, rect.y), bold=True)
    p.text("AI win", 13, look.DIM, (rect.right, rect.y + lay.px(3)), anchor="topright")
    top = rect.y + lay.px(22)
    row_height = lay.px(MOVE_ROW)
    visible = max(1, (rect.bottom - top) // row_height)
    rows = frame.moves
    if not rows:
        p.text("no moves yet", 13, look.DIM, (rect.x, top))
        return
    shown = sum(row.shown for row in rows)
    first = max(0, min(shown - visible // 2 - 1, len(rows) - visible))
    for index, row in enumerate(rows[first:first + visible]):
        y = top + index * row_height
        line = pygame.Rect(rect.x - lay.px(4), y - lay.px(1), rect.width + lay.px(8), row_height)
        if row.ply == shown:
            pygame.draw.rect(p.screen, look.ROW_ON, line, border_radius=lay.px(4))
        p.hits.append(Hit(line, "ply", row.ply))
        colour = look.TEXT if row.shown else look.FAINT
        p.text(str(row.ply), 13, look.DIM if row.shown else look.FAINT, (rect.x + lay.px(20), y + lay.px(1)),
               anchor="topright")
        stone = p.sprites.icons[row.colour]
        p.screen.blit(stone, stone.get_rect(center=(rect.x + lay.px(32), y + row_height // 2)))
        p.text(format_point(frame.board, row.move), 13, colour, (rect.x + lay.px(44), y))
        if row.note:
            p.text(row.note, 13, look.DIM if row.shown else look.FAINT, (rect.right, y + lay.px(1)), anchor="topright")


def _draw_buttons(p: Painter, frame: Frame) -> None:
    lay = p.layout
    for button in lay.buttons:
        if button.action in ("weaker", "stronger") and not frame.strength:
            continue
        on = button.action in frame.toggles
        colour = look.BUTTON_ON if on else look.BUTTON
        if frame.hover and button.rect.collidepoint(frame.hover):
            colour = look.BUTTON_HOVER if not on else tuple(min(255, v + 18) for v in look.BUTTON_ON)
        pygame.draw.rect(p.screen, colour, button.rect, border_radius=lay.px(6))
        key = p.render(button.key, 13, look.ACCENT, True)
        if not button.label:
            p.screen.blit(key, key.get_rect(center=button.rect.center))
            continue
        label = p.render(button.label, 14, look.TEXT, False)
        gap = lay.px(6)
        left = button.rect.centerx - (key.get_width() + gap + label.get_width()) // 2
        p.screen.blit(key, key.get_rect(midleft=(left, button.rect.centery)))
        p.screen.blit(label, label.get_rect(midleft=(left + key.get_width() + gap, button.rect.centery)))
