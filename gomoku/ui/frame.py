"""What one frame of the play window shows, as plain data: ``build_frame`` makes a ``Frame`` from
the app's state (the analysis to show, the move list, the ghost stones of an expected line), the
renderer (``draw``, ``panel``) paints it and records what it drew where (``DrawnText``, ``Hit``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

import pygame

from gomoku.game.board import DRAW, EMPTY, Board
from gomoku.ui.ai import NO_MOVE, Analysis, SearchState, describe_spec, percent, short_spec
from gomoku.ui.session import COLOUR_NAMES, Author, Session

if TYPE_CHECKING:
    from gomoku.ui.app import PlayApp


class Tone(str, Enum):
    NORMAL = "normal"
    ALERT = "alert"  # a short message, the end of the game
    WIN = "win"  # you won


@dataclass(frozen=True)
class Ghost:
    """A see-through stone: the point under the mouse, or a move of the expected line."""

    move: int
    colour: int
    number: int = 0  # its ply in the line; 0 draws no number


@dataclass(frozen=True)
class MoveRow:
    """One line of the move list."""

    ply: int  # the move's number, from 1
    move: int
    colour: int
    note: str  # the AI's win estimate when it played the move ("64%"), else ""
    shown: bool  # on the board now (False: a later move, while stepping back)


@dataclass
class Frame:
    board: Board
    human: int
    status: str
    tone: Tone = Tone.NORMAL
    busy: bool = False  # the AI thinks: a spinner instead of the stone to move
    ai_name: str = ""
    strength: str = ""  # "" when the AI's strength cannot be changed
    note: str = ""
    analysis: Analysis | None = None
    analysis_info: str = ""  # "400 playouts + 152 reused, 1.3 s", "live: 650/1600 playouts", "stopped at 2600 playouts"
    analysis_hint: str = ""  # shown in place of a missing analysis
    marked: int = NO_MOVE  # the move played from the analysed position (ringed on the mini-board)
    moves: tuple[MoveRow, ...] = ()
    show_numbers: bool = False
    show_analysis: bool = True
    ghosts: tuple[Ghost, ...] = ()
    hover: tuple[int, int] | None = None
    toggles: frozenset[str] = field(default_factory=frozenset)  # buttons drawn as switched on


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


# ------------------------------------------------------------------------------ building a frame
GAME_OVER = "The game is over: N for a new game, U to undo."


def status_text(app: "PlayApp") -> str:
    """The status line: the AI's search while it runs (then any short message after it), else a
    short message, the position while stepping back, the game's end, whose move."""
    session, job = app.session, app.thinker.job
    if job is not None:
        live, target = job.live(), job.target_playouts()
        done = f" ({live.playouts}/{target} playouts)" if live is not None and target else ""
        thinking = f"AI thinking... {job.elapsed():.1f} s{done}"
        return f"{thinking}  |  {app.flash_text()}" if app.flashing() else thinking
    if app.flashing():
        return app.flash_text()
    if session.reviewing():
        return (f"Move {session.cursor} of {len(session.history)}: Left/Right to step, "
                "Enter or a click goes on from here")
    ended, winner = app.board.game_end()
    if ended:
        if winner == DRAW:
            return "Draw: the board is full. N: new game"
        return "You win! N: new game" if winner == app.human else "The AI wins. N: new game, U: undo"
    if app.ai_error:
        return f"The AI failed ({app.ai_error}). N: new game"
    if app.thinker.stopping:
        return "Stopping the AI's search..."
    if app.board.current_player == app.human:
        return f"Your move ({COLOUR_NAMES[app.human]}): click a point"
    return "AI to move"


def build_frame(app: "PlayApp") -> Frame:
    """What the window shows now, from the app's game, AI and switches."""
    session, job = app.session, app.thinker.job
    board = session.board
    analysis, marked = app.shown_analysis()
    ended, winner = board.game_end()
    tone = Tone.ALERT if app.flashing() or ended else Tone.NORMAL
    if ended and winner == session.human and not app.flashing():
        tone = Tone.WIN
    target = job.target_playouts() if job is not None and analysis is not None and job.moves == analysis.moves else None
    toggles = {name for name, on in (("numbers", app.show_numbers), ("analysis", app.show_analysis),
                                     ("line", app.show_line)) if on}
    return Frame(board=board, human=session.human, status=app.status_text(), tone=tone, busy=job is not None,
                 ai_name=describe_spec(app.ai_spec), strength=app.strength.label if app.strength else "",
                 note="no model found" if app.note else "", analysis=analysis,
                 analysis_info=analysis_info(analysis, target), analysis_hint=analysis_hint(app),
                 marked=marked, moves=move_rows(session, app.analyses), show_numbers=app.show_numbers,
                 show_analysis=app.show_analysis, ghosts=ghosts(app, analysis), hover=app.hover,
                 toggles=frozenset(toggles))


def analysis_info(analysis: Analysis | None, target: int | None = None) -> str:
    """The analysis's search in words: how many playouts, and whether it runs, ended or was stopped."""
    if analysis is None:
        return ""
    kept = f" + {analysis.reused} reused" if analysis.reused else ""  # visits from an earlier move's tree
    if analysis.state == SearchState.LIVE:
        return f"live: {analysis.playouts}" + (f"/{target}" if target else "") + f" playouts{kept}"
    if analysis.state == SearchState.STOPPED:
        return f"stopped at {analysis.playouts} playouts{kept}"
    return f"{analysis.playouts} playouts{kept}, {analysis.seconds:.1f} s"


def analysis_hint(app: "PlayApp") -> str:
    if not callable(getattr(app.ai, "analyse", None)):
        return f"no search statistics for {short_spec(app.ai_spec)}"
    return "searching..." if app.thinker.job is not None else "The AI's search shows here."


def move_rows(session: Session, analyses: dict[tuple[int, ...], Analysis]) -> tuple[MoveRow, ...]:
    """The move list: every move of the game, the AI's with its win estimate when it played them."""
    rows, before = [], []
    for index, played in enumerate(session.history):
        colour = session.to_move_at(index)
        analysis = analyses.get(tuple(before)) if played.by == Author.AI else None
        note = f"{percent(analysis.win_for(colour))}%" if analysis is not None and analysis.chosen == played.move else ""
        rows.append(MoveRow(index + 1, played.move, colour, note, index < session.cursor))
        before.append(played.move)
    return tuple(rows)


def line_ghosts(analysis: Analysis, line: tuple[int, ...], session: Session) -> list[Ghost]:
    """The stones of an expected line, numbered: from the position shown when the line goes
    through the moves played since the analysed position, else from the analysed position."""
    position, base = session.position(), len(analysis.moves)
    if position[:base] != analysis.moves:
        return []
    played, start = position[base:], base
    if tuple(line[:len(played)]) == played:
        line, start = line[len(played):], len(position)
    ghosts: list[Ghost] = []
    for offset, move in enumerate(line):
        if session.board.stone(move) != EMPTY or any(g.move == move for g in ghosts):
            break
        ghosts.append(Ghost(move, session.to_move_at(start + offset), offset + 1))
    return ghosts


def ghosts(app: "PlayApp", analysis: Analysis | None) -> tuple[Ghost, ...]:
    """The line of the top move under the mouse (or the main line with V), and the stone you
    would play at the point under the mouse."""
    session, hover = app.session, app.hover
    result: list[Ghost] = []
    if analysis is not None:
        rank = next((hit.value for hit in app.renderer.hits
                     if hit.kind == "top" and hover is not None and hit.rect.collidepoint(hover)), None)
        if rank is not None and rank < len(analysis.top):
            result = line_ghosts(analysis, analysis.top[rank].line, session)
        elif app.show_line and analysis.top:
            result = line_ghosts(analysis, analysis.top[0].line, session)
    if hover is not None and session.human_to_move():
        move = app.layout.pixel_to_point(hover)
        if move is not None and session.board.stone(move) == EMPTY and all(g.move != move for g in result):
            result.append(Ghost(move, session.human))
    return tuple(result)
