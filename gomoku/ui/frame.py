"""What one frame of the play window shows, as plain data, and how it is made: the app gathers a
``Scene`` (the game, the AI's search, the messages and switches, where the mouse is) and
``build_frame`` turns it into a ``Frame`` (the texts, the analysis to show, the move list, the ghost
stones of an expected line), which the renderer (``draw``, ``panel``) paints. Pure functions, no
pygame, no app."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Mapping

from gomoku.game.board import DRAW, EMPTY, Board
from gomoku.ui.ai import describe_spec, short_spec
from gomoku.ui.session import COLOUR_NAMES, Author, Session
from gomoku.ui.thinking import NO_MOVE, Analysis, SearchState, percent


class Tone(str, Enum):
    NORMAL = "normal"
    ALERT = "alert"  # a short message, the end of the game
    WIN = "win"  # you won


@dataclass(frozen=True)
class Ghost:
    """A see-through stone: the point under the mouse, or a move of the expected line."""

    move: int
    colour: int
    number: int = 0  # its number along the line, or as the game's move (``line_ghosts``); 0 draws none


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
class Thinking:
    """The AI's running search, as the window shows it."""

    moves: tuple[int, ...]  # the position it searches
    seconds: float  # since it started
    live: Analysis | None  # its analysis so far (None before its first round)
    target: int | None  # the playouts it will make (None when it has no such count)
    starting: float | None = None  # an engine process that has not answered START yet: the seconds it has


@dataclass(frozen=True)
class Scene:
    """What a frame is made from, gathered by the app at once: plain values, read and never changed."""

    session: Session
    thinking: Thinking | None = None
    stopping: bool = False  # a stopped search has not ended yet
    analyses: Mapping[tuple[int, ...], Analysis] = field(default_factory=dict)  # per position searched
    flash: str | None = None  # a short message ("E5 is taken") that replaces the status line for a while
    ai_error: str | None = None
    ai_spec: str = ""
    can_analyse: bool = False  # the AI's search reports visits (else no analysis is shown)
    strength: str = ""  # the AI's strength, "" when it cannot be changed
    note: str = ""  # why the AI is not the one asked for ("" when it is)
    show_numbers: bool = False
    show_analysis: bool = True
    show_line: bool = False
    hover: tuple[int, int] | None = None  # the mouse, in window pixels
    hover_point: int | None = None  # the board point under the mouse
    hover_rank: int | None = None  # the row of the top-moves table under the mouse (its rank, from 0)


# ------------------------------------------------------------------------------ building a frame
AI_FAILED_HINT = "The AI failed. N: new game, U: undo"  # the hint first: a long reason is cut off
GAME_OVER = "The game is over: N for a new game, U to undo."


def status_text(scene: Scene) -> str:
    """The status line: the AI's search while it runs (then any short message after it), else a
    short message, the position while stepping back, the game's end, whose move."""
    session, thinking, flash = scene.session, scene.thinking, scene.flash
    if thinking is not None:
        live, target = thinking.live, thinking.target
        done = "" if live is None else f" ({live.playouts}" + (f"/{target}" if target else "") + " playouts)"
        if thinking.starting is not None:
            text = f"Starting the engine... {thinking.seconds:.1f} s (it has {thinking.starting:g} s to answer)"
        else:
            text = f"AI thinking... {thinking.seconds:.1f} s{done}"
        return f"{text}  |  {flash}" if flash is not None else text
    if flash is not None:
        return flash
    if session.reviewing():
        return (f"Move {session.cursor} of {len(session.history)}: Left/Right to step, "
                "Enter or a click goes on from here")
    ended, winner = session.board.game_end()
    if ended:
        if winner == DRAW:
            return "Draw: the board is full. N: new game"
        return "You win! N: new game" if winner == session.human else "The AI wins. N: new game, U: undo"
    if scene.ai_error:
        return f"{AI_FAILED_HINT} ({scene.ai_error})"
    if scene.stopping:
        return "Stopping the AI's search..."
    if session.board.current_player == session.human:
        return f"Your move ({COLOUR_NAMES[session.human]}): click a point"
    return "AI to move"


def shown_analysis(position: tuple[int, ...], thinking: Thinking | None,
                   analyses: Mapping[tuple[int, ...], Analysis]) -> tuple[Analysis | None, int]:
    """The analysis for the position shown (live, stored, or the search that chose its last
    move) and the move played from the analysed position (NO_MOVE when none)."""
    live = thinking.live if thinking is not None and thinking.moves == position else None
    if live is not None:
        return live, NO_MOVE
    if position in analyses:
        return analyses[position], NO_MOVE
    if position and position[:-1] in analyses:
        return analyses[position[:-1]], position[-1]
    return None, NO_MOVE


def build_frame(scene: Scene) -> Frame:
    """What the window shows now, from the game, the AI's search and the switches."""
    session, thinking = scene.session, scene.thinking
    board = session.board
    analysis, marked = shown_analysis(session.position(), thinking, scene.analyses)
    flashing = scene.flash is not None
    ended, winner = board.game_end()
    tone = Tone.ALERT if flashing or ended else Tone.NORMAL
    if ended and winner == session.human and not flashing:
        tone = Tone.WIN
    searched = analysis.moves if analysis is not None else None
    target = thinking.target if thinking is not None and thinking.moves == searched else None  # of this search
    toggles = {name for name, on in (("numbers", scene.show_numbers), ("analysis", scene.show_analysis),
                                     ("line", scene.show_line)) if on}
    return Frame(board=board, human=session.human, status=status_text(scene), tone=tone, busy=thinking is not None,
                 ai_name=describe_spec(scene.ai_spec), strength=scene.strength,
                 note="no model found" if scene.note else "", analysis=analysis,
                 analysis_info=analysis_info(analysis, target), analysis_hint=analysis_hint(scene),
                 marked=marked, moves=move_rows(session, scene.analyses), show_numbers=scene.show_numbers,
                 show_analysis=scene.show_analysis, ghosts=ghosts(scene, analysis), hover=scene.hover,
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


def analysis_hint(scene: Scene) -> str:
    if not scene.can_analyse:
        return f"no search statistics for {short_spec(scene.ai_spec)}"
    return "searching..." if scene.thinking is not None else "The AI's search shows here."


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


def line_ghosts(analysis: Analysis, line: tuple[int, ...], session: Session, numbers: bool = False) -> list[Ghost]:
    """The stones of an expected line from the position shown: the analysed position, or one the
    game reached from it along the line (none for a line the game left: it would be drawn around
    moves it does not have). Numbered 1, 2... along the line, or with the game's move numbers on
    (``numbers``) as the game's next moves."""
    position, base = session.position(), len(analysis.moves)
    played = position[base:]
    if position[:base] != analysis.moves or tuple(line[:len(played)]) != played:
        return []
    first = len(position) if numbers else 0  # the number before the line's first stone
    ghosts: list[Ghost] = []
    for offset, move in enumerate(line[len(played):]):
        if session.board.stone(move) != EMPTY or any(g.move == move for g in ghosts):
            break
        ghosts.append(Ghost(move, session.to_move_at(len(position) + offset), first + offset + 1))
    return ghosts


def ghosts(scene: Scene, analysis: Analysis | None) -> tuple[Ghost, ...]:
    """The line of the top move under the mouse (or the main line with V), and the stone you
    would play at the point under the mouse."""
    session, rank = scene.session, scene.hover_rank
    result: list[Ghost] = []
    if analysis is not None:
        if rank is not None and rank < len(analysis.top):
            result = line_ghosts(analysis, analysis.top[rank].line, session, scene.show_numbers)
        elif scene.show_line and analysis.top:
            result = line_ghosts(analysis, analysis.top[0].line, session, scene.show_numbers)
    if scene.hover_point is not None and session.human_to_move():
        move = scene.hover_point
        if session.board.stone(move) == EMPTY and all(g.move != move for g in result):
            result.append(Ghost(move, session.human))
    return tuple(result)
