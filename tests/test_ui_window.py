"""The play window's features and the defects of issue 15 (and two of issue 12), driven through
real pygame events, headless."""

import os
import subprocess
import sys
import time

import numpy as np
import pytest

from test_play_window import (E5, REPO_ROOT, SLOW_AI, button, click, make_app, point,  # noqa: F401
                              press, pygame, wait_thinking)

from gomoku.ui.ai import SECONDS_PLAYOUT_CAP, Strength  # noqa: E402
from gomoku.ui.app import GAME_OVER, PlayApp, SetupError  # noqa: E402
from gomoku.ui.frame import build_frame, status_text  # noqa: E402
from gomoku.ui.layout import BASE_SIZE, MIN_WINDOW  # noqa: E402
from gomoku.ui.panel import win_labels  # noqa: E402
from gomoku.ui.session import BLACK, WHITE  # noqa: E402
from gomoku.ui.thinking import SearchState  # noqa: E402
from tests.fakes import load_script  # noqa: E402


def texts(app):
    app.draw()
    return app.renderer.texts()


# ---------------------------------------------------------------------------- the defects
def test_swap_during_a_search_shows_it_stopped_and_credits_the_right_side(make_app):
    """Issue 15, 1: not "2600 playouts, live", and the win estimate of the side that was to move."""
    app = make_app(SLOW_AI, seed=0)
    click(app, E5)
    wait_thinking(app)
    deadline = time.perf_counter() + 10
    while app.thinker.job.live() is None:
        assert time.perf_counter() < deadline
        time.sleep(0.01)
    press(app, pygame.K_s)
    assert app.human == WHITE and not app.thinking()
    analysis, _ = app.shown_analysis()
    assert analysis.state == SearchState.STOPPED and analysis.to_move == WHITE
    shown = texts(app)
    assert f"stopped at {analysis.playouts} playouts" in shown and not any("live" in t for t in shown)
    black, white = win_labels(analysis, app.human)
    assert black in shown and white in shown and "(you)" in white and "(AI)" in black
    assert white.startswith(f"{round(100 * analysis.top[0].win)}%")  # White was to move: its best move's win rate
    assert app.run_until_idle(5) and app.board.moves == [E5]  # your move now: the AI waits


def test_the_game_over_message_is_drawn_whole(make_app):
    """Issue 15, 2: the message was cut off by the opponent's label."""
    app = make_app("minimax:1", seed=0, moves="A1,A9,B1,B9,C1,C9,D1,I9")
    click(app, point("E1"))
    assert app.board.game_end() == (True, BLACK)
    click(app, point("E5"))
    app.draw()
    [status] = [t for t in app.renderer.drawn if t.text == GAME_OVER]
    assert app.layout.status.contains(status.rect)
    assert not any(t.rect.colliderect(status.rect) for t in app.renderer.drawn if t is not status)


def test_undo_after_a_swap_names_the_ais_moves(make_app):
    """Issue 15, 3: N, S, D4, S, U took back two AI moves but said "your move and the AI's reply"."""
    app = make_app("minimax:1", seed=0)
    press(app, pygame.K_n)
    press(app, pygame.K_s)
    assert app.run_until_idle(5) and len(app.board.moves) == 1
    d4 = point("D4") if app.board.stone(point("D4")) == 0 else point("C3")
    click(app, d4)
    assert app.run_until_idle(5) and len(app.board.moves) == 3
    press(app, pygame.K_s)
    assert app.run_until_idle(5) and len(app.board.moves) == 4 and app.human == BLACK
    first_two, ai_moves = app.board.moves[:2], app.board.moves[2:]
    press(app, pygame.K_u)
    assert app.board.moves == first_two and app.board.current_player == BLACK
    names = ", ".join(_name(app, m) for m in ai_moves)
    assert app.status_text() == f"Took back the AI's moves {names}."


def _name(app, move):
    from gomoku.players import format_point
    return format_point(app.board, move)


SDL_WINDOWS = []  # pygame 2.6 leaves SDL a pointer to each Window wrapper: a freed one can crash the next event


def sdl_window():
    """The SDL window of the display (pygame._sdl2), kept alive."""
    from pygame._sdl2.video import Window

    SDL_WINDOWS.append(Window.from_display_module())
    return SDL_WINDOWS[-1]


def resize_by_hand(size):
    """What a window manager does when an edge is dragged: SDL's window takes the size (pygame
    resizes the window's surface), then pygame sends VIDEORESIZE."""
    sdl_window().size = size
    pygame.event.post(pygame.event.Event(pygame.VIDEORESIZE, size=size, w=size[0], h=size[1]))


def test_the_window_resizes_and_scales(make_app):
    """Issue 15, 4: the window could not be resized."""
    app = make_app("minimax:1", seed=0)
    cell = app.layout.cell
    resize_by_hand((1500, 990))
    app.step()
    assert app.screen.get_size() == (1500, 990) and app.layout.scale == pytest.approx(1.5)
    assert app.layout.cell == pytest.approx(1.5 * cell, abs=1) and app.draw().get_size() == (1500, 990)
    assert app.layout.wood.right < app.layout.panel.x and app.layout.panel.right <= 1500
    click(app, point("C3"))  # at the new pixel of C3
    assert app.board.moves[0] == point("C3")
    wide = (1800, 700)  # another shape: scaled to fit, centred
    resize_by_hand(wide)
    app.step()
    assert app.layout.scale == pytest.approx(700 / BASE_SIZE[1]) and app.layout.wood.x > 100
    resize_by_hand((200, 100))  # pygame 2.6 cannot keep a window from that: the layout keeps its size
    app.step()
    assert app.layout.window == MIN_WINDOW and app.draw() is pygame.display.get_surface()


def test_resizing_by_hand_keeps_the_window(make_app, monkeypatch):
    """A resize by hand called set_mode, which made a new window: under a window manager that
    ended the drag of its edge and moved the window down."""
    app = make_app("minimax:1", seed=0)
    window = sdl_window().id
    calls, set_mode = [], pygame.display.set_mode

    def recorded(*args, **kwargs):
        calls.append(args)
        return set_mode(*args, **kwargs)

    monkeypatch.setattr(pygame.display, "set_mode", recorded)
    resize_by_hand((1200, 800))
    app.step()
    assert calls == [] and sdl_window().id == window
    assert app.screen is pygame.display.get_surface() and app.layout.window == (1200, 800)
    sprites = app.renderer.sprites
    pygame.event.post(pygame.event.Event(pygame.VIDEORESIZE, size=(1190, 800), w=1190, h=800))  # an older one
    app.step()
    assert app.renderer.sprites is sprites and app.layout.window == (1200, 800)  # the window's size, not the event's


def test_the_process_exits_at_once_after_the_window(tmp_path):
    """Issue 15, 5: 2-3 s after the window closed (the interpreter's teardown with torch loaded)."""
    out = tmp_path / "shot.png"
    code = ("import atexit, runpy, sys, time; atexit.register(time.sleep, 60); "
            f"sys.argv = ['play.py', '--opponent', 'minimax:1', '--screenshot', {str(out)!r}]; "
            "runpy.run_path('scripts/play.py', run_name='__main__')")
    env = dict(os.environ, SDL_VIDEODRIVER="dummy")
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=50)
    assert done.returncode == 0, done.stderr
    assert time.perf_counter() - started < 40 and out.is_file() and f"saved {out}" in done.stderr


def test_the_mini_board_shows_played_stones_and_undo_keeps_the_analysis(make_app):
    """Issue 15, 6: heat was drawn over the stone just played, and undo blanked the mini-board."""
    app = make_app("pure:200", seed=0)
    click(app, E5)
    assert app.run_until_idle(10)
    reply = app.board.moves[1]
    app.draw()
    x, y = app.layout.heat_centre(reply)
    assert min(app.screen.get_at((x - 2, y - 2))[:3]) > 150  # a white stone, no heat
    assert not any(t.rect.collidepoint((x, y)) for t in app.renderer.drawn)  # no share written on it
    assert app.shown_analysis() == (app.analyses[(E5,)], reply)
    click(app, point("A1"))
    assert app.run_until_idle(10) and len(app.board.moves) == 4
    press(app, pygame.K_u)
    assert app.board.moves == [E5, reply] and app.shown_analysis() == (app.analyses[(E5,)], reply)
    assert "visits" in texts(app)


def test_command_line_messages(capsys, tmp_path):
    """Issue 15, 7 and issue 12: indices in messages, a help that lists 'human', a mistyped model."""
    play = load_script("play")
    assert play.main(["--opponent", "minimax:1", "--moves", "E5,E5"]) == 2
    err = capsys.readouterr().err
    assert err == "error: bad --moves: move 2, E5: that point is already taken\n"
    assert play.main(["--model", str(tmp_path / "typo.pt")]) == 2
    assert capsys.readouterr().err == f"error: no model file at {tmp_path / 'typo.pt'}\n"
    assert play.main(["--opponent", "human"]) == 2
    with pytest.raises(SystemExit):
        play.parse_args(["--help"])
    help_text = capsys.readouterr().out
    assert "human " not in help_text.split("AI specs")[1] and "takes seconds" not in help_text
    with pytest.raises(SetupError, match="no model file"):
        PlayApp(model=tmp_path / "missing.pt")


def test_without_a_display_it_says_so_at_once(monkeypatch, capsys):
    """Issue 12: with no display, play.py waited forever on SDL's invisible 'offscreen' window."""
    for name in ("SDL_VIDEODRIVER", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    assert load_script("play").main(["--opponent", "minimax:1"]) == 1  # returns: no window was opened
    err = capsys.readouterr().err
    assert err.startswith("error: no display") and err.count("\n") == 1


def test_a_display_that_cannot_be_opened_is_an_error_not_a_hang():
    env = {k: v for k, v in os.environ.items() if k not in ("SDL_VIDEODRIVER", "WAYLAND_DISPLAY")}
    env["DISPLAY"] = ":987"  # nothing there: SDL falls back to its invisible 'offscreen' driver
    done = subprocess.run([sys.executable, "scripts/play.py", "--opponent", "minimax:1"], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "error: no display to open the window on" in done.stderr


# ---------------------------------------------------------------------------- the features
def test_strength_is_chosen_in_the_window(make_app):
    app = make_app("pure:50", seed=0)
    assert "Strength: 50 playouts" in texts(app) and pygame.display.get_caption()[0].endswith("50 playouts")
    press(app, pygame.K_EQUALS, unicode="=")
    assert app.strength == Strength(100) and app.ai_spec == "pure:100" and app.ai.config.n_playout == 100
    assert "Strength: 100 playouts" in texts(app) and pygame.display.get_caption()[0].endswith("100 playouts")
    click(app, pos=button(app, "weaker").rect.center)
    assert app.strength == Strength(50)
    press(app, pygame.K_PLUS, unicode="+")
    click(app, E5)
    assert app.run_until_idle(10) and app.analyses[(E5,)].playouts == 100
    app.set_strength(Strength(SECONDS_PLAYOUT_CAP, 1.0))
    assert app.ai.seconds == 1.0 and "Strength: 1 s a move" in texts(app)
    for _ in range(10):
        press(app, pygame.K_MINUS, unicode="-")
    assert app.strength == Strength(50)
    fixed = make_app("minimax:1")
    press(fixed, pygame.K_PLUS, unicode="+")
    assert "fixed" in fixed.status_text() and "Strength: fixed for this player" in texts(fixed)


def test_a_time_cap_is_kept_on_every_step_of_the_strength(make_app):
    """With --seconds 1, - went to "6400 playouts" (no cap) and + to "1 s a move", then 3 s and 10 s."""
    app = make_app("pure:400", seed=0, seconds=1.0)
    assert app.strength == Strength(400, 1.0) and "Strength: 400 playouts, at most 1 s" in texts(app)
    press(app, pygame.K_MINUS, unicode="-")
    assert app.strength == Strength(100, 1.0) and app.ai.seconds == 1.0 and app.ai.config.n_playout == 100
    steps = []
    for _ in range(6):
        press(app, pygame.K_PLUS, unicode="+")
        steps.append(app.strength.label)
    assert steps == ["400 playouts, at most 1 s", "1600 playouts, at most 1 s", "6400 playouts, at most 1 s",
                     "1 s a move", "1 s a move", "1 s a move"]
    assert app.ai.seconds == 1.0


def test_a_timed_opponent_changes_strength_on_the_time_steps(make_app):
    """+ and - said "The strength of pure:1s is fixed" for az:PATH:TIME and pure:TIME."""
    app = make_app("pure:1s", seed=0)
    assert app.strength == Strength(SECONDS_PLAYOUT_CAP, 1.0) and "Strength: 1 s a move" in texts(app)
    press(app, pygame.K_PLUS, unicode="+")
    assert app.strength == Strength(SECONDS_PLAYOUT_CAP, 3.0) and app.ai.seconds == 3.0
    press(app, pygame.K_MINUS, unicode="-")
    press(app, pygame.K_MINUS, unicode="-")
    assert app.strength == Strength(6400) and app.ai.seconds is None and app.ai.config.n_playout == 6400
    short = make_app("pure:500ms", seed=0)
    assert short.strength.label == "0.5 s a move"
    press(short, pygame.K_PLUS, unicode="+")
    assert short.strength == Strength(SECONDS_PLAYOUT_CAP, 1.0)


def test_a_timed_search_shows_its_playouts_without_a_target(make_app):
    """A time-limited AI showed "live: 1/1 playouts + 558 reused" and "(1/1 playouts)" while it thought."""
    app = make_app("pure:20s", seed=0)
    click(app, E5)
    wait_thinking(app)
    deadline = time.perf_counter() + 10
    while app.thinker.job.live() is None or app.thinker.job.live().playouts <= 1:
        assert time.perf_counter() < deadline
        time.sleep(0.01)
    scene = app.scene()
    live = scene.thinking.live
    assert scene.thinking.target is None and live.playouts > 1
    assert status_text(scene).endswith(f" s ({live.playouts} playouts)")
    kept = f" + {live.reused} reused" if live.reused else ""
    assert build_frame(scene).analysis_info == f"live: {live.playouts} playouts{kept}"


def test_analysis_lists_visits_win_rate_and_prior_and_draws_the_expected_line(make_app):
    app = make_app("pure:300", seed=0)
    click(app, E5)
    assert app.run_until_idle(10)
    analysis = app.analyses[(E5,)]
    tree = app.ai._search
    best = analysis.top[0]
    assert best.move == analysis.chosen == app.board.moves[1] and best.visits == analysis.visits.max()
    for stats in analysis.top:
        q = tree.value_sum[0, 0, stats.move] / tree.visits[0, 0, stats.move]
        assert stats.win == pytest.approx((q + 1) / 2) and stats.line[0] == stats.move
        assert len(set(stats.line)) == len(stats.line) and E5 not in stats.line
    assert stats.prior == pytest.approx(1 / 80)  # pure MCTS: uniform priors
    shown = texts(app)
    assert {"visits", "win", "prior", "White to play"} <= set(shown)
    assert f"{best.visits}" in shown and f"{best.win:.0%}" in shown
    assert app.frame().ghosts == ()  # nothing under the mouse, the line switched off
    press(app, pygame.K_v)
    ghosts = app.frame().ghosts
    assert [g.move for g in ghosts] == list(best.line[1:])  # from the position shown: the played move is off
    assert [g.number for g in ghosts] == list(range(1, len(ghosts) + 1))
    assert [g.colour for g in ghosts[:2]] == [BLACK, WHITE][:len(ghosts)]
    press(app, pygame.K_m)  # with the move numbers on, the line goes on from the game's: 3, 4...
    assert [g.number for g in app.frame().ghosts] == list(range(3, len(ghosts) + 3))
    press(app, pygame.K_m)
    press(app, pygame.K_v)
    second = analysis.top[1]
    [row] = [h for h in app.renderer.hits if h.kind == "top" and h.value == 1]
    hover = pygame.event.Event(pygame.MOUSEMOTION, pos=row.rect.center, rel=(0, 0), buttons=(0, 0, 0))
    pygame.event.post(hover)
    app.step()
    assert app.frame().ghosts == ()  # another move than the one played: not drawn around the AI's move
    press(app, pygame.K_LEFT)  # the position it was searched from: there it is drawn
    pygame.event.post(hover)
    app.step()
    ghosts = app.frame().ghosts
    assert ghosts[0].move == second.move and ghosts[0].colour == WHITE and ghosts[0].number == 1
    assert [g.move for g in ghosts] == list(second.line[:len(ghosts)])


def test_the_move_list_steps_back_and_forth_and_play_goes_on_from_any_point(make_app):
    app = make_app("minimax:1", seed=0, moves="E5,D4,F4,D6")
    click(app, point("G4"))
    assert app.run_until_idle(5) and len(app.session.history) == 6
    game = [p.move for p in app.session.history]
    press(app, pygame.K_LEFT)
    press(app, pygame.K_LEFT)
    assert app.board.moves == game[:4] and app.session.reviewing() and app.is_idle()
    assert app.status_text().startswith("Move 4 of 6")
    press(app, pygame.K_RIGHT)
    assert app.board.moves == game[:5]
    press(app, pygame.K_HOME)
    assert app.board.moves == []
    press(app, pygame.K_END)
    assert app.board.moves == game
    app.draw()
    [row] = [h for h in app.renderer.hits if h.kind == "ply" and h.value == 2]
    click(app, pos=row.rect.center)  # a row of the move list
    assert app.board.moves == game[:2] and len(app.session.history) == 6
    click(app, point("A1"))  # play here: the later moves go, the AI answers
    assert app.session.position()[:3] == (*game[:2], point("A1")) and len(app.session.history) == 3
    assert app.run_until_idle(5) and len(app.session.history) == 4
    press(app, pygame.K_LEFT)  # White (the AI) to move here
    click(app, point("B2"))
    assert "Enter" in app.status_text() and len(app.board.moves) == 3
    press(app, pygame.K_RETURN)
    assert len(app.session.history) == 3 and app.run_until_idle(5) and len(app.session.history) == 4


def test_save_and_load_a_game(make_app, tmp_path):
    saved = tmp_path / "games" / "one.txt"
    app = make_app("minimax:1", seed=0, save_path=saved, human_first=False)
    assert app.run_until_idle(5)
    click(app, point("A1"))
    assert app.run_until_idle(5) and len(app.board.moves) == 3
    press(app, pygame.K_s, mod=pygame.KMOD_LCTRL)
    assert app.human == WHITE  # Ctrl+S saves, it does not swap
    text = saved.read_text()
    assert text.startswith("# gomoku-zero game\n# size: 9x9\n# black: minimax:1\n# white: you\n")
    assert text.splitlines()[4:] == [_name(app, m) for m in app.board.moves]
    loaded = make_app("minimax:1", seed=0, load=saved)
    assert loaded.board.moves == app.board.moves and loaded.human == WHITE and loaded.is_idle()
    press(loaded, pygame.K_u)
    assert loaded.status_text().startswith("Took back your move A1 and the AI's reply")
    same = make_app("minimax:1", seed=0, moves=str(saved), human_first=True)  # --moves reads the file too
    assert same.board.moves == app.board.moves and same.human == BLACK
    click(app, pos=button(app, "save").rect.center)
    assert "Saved" in app.status_text()
    out = tmp_path / "shot.png"
    assert load_script("play").main(["--opponent", "minimax:1", "--load", str(saved), "--screenshot", str(out)]) == 0


def test_rows_are_numbered_from_the_bottom(make_app):
    app = make_app("minimax:1", seed=0, moves="A1")
    a1 = point("A1")
    x, y = app.layout.point_to_pixel(a1)
    assert y == max(app.layout.point_to_pixel(m)[1] for m in range(81)) and app.board.stone(a1) == BLACK
    app.draw()
    left_labels = [t for t in app.renderer.drawn if t.rect.right < app.layout.origin[0] and t.text.isdigit()
                   and app.layout.wood.collidepoint(t.rect.center)]
    assert [t.text for t in sorted(left_labels, key=lambda t: t.rect.y)] == [str(n) for n in range(9, 0, -1)]
    assert abs(next(t for t in left_labels if t.text == "1").rect.centery - y) <= 1
    assert np.isclose(app.layout.heat_centre(a1)[1], max(app.layout.heat_centre(m)[1] for m in range(81)))


def test_command_line_mistakes_are_one_line_errors(monkeypatch, capsys, tmp_path):
    """Issue 28: window sizes out of range, an unwritable screenshot, a missing model without a
    display (it named the display), an unknown opponent (the list offered 'human')."""
    play = load_script("play")
    for size in ("10x10", "30000x30000", "640x480", "923x700", "5121x900"):
        with pytest.raises(SystemExit):
            play.parse_args(["--window", size])
        err = capsys.readouterr().err
        assert f"the window must be 924x610 to 5120x2880 pixels, got {size}" in err and "Traceback" not in err
    assert play.parse_args(["--window", "924x610"]).window == MIN_WINDOW
    with pytest.raises(SetupError, match="got 10x10"):
        PlayApp("minimax:1", window_size=(10, 10))
    blocker = tmp_path / "file"
    blocker.write_text("")
    for shot, reason in ((tmp_path, "is a folder"), (blocker / "shot.png", "is not a folder")):
        with pytest.raises(SystemExit):
            play.parse_args(["--screenshot", str(shot)])
        assert reason in capsys.readouterr().err
    for seconds in ("0", "nan", "inf", "-1"):
        with pytest.raises(SystemExit):
            play.parse_args(["--seconds", seconds])
        assert "--seconds must be a positive number of seconds" in capsys.readouterr().err
    for name in ("SDL_VIDEODRIVER", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    assert play.main(["--model", "nope.pt"]) == 2
    assert capsys.readouterr().err == "error: no model file at nope.pt\n"
    assert play.main(["--opponent", "foo"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: bad AI spec 'foo'; valid forms:\n") and "human" not in err
    assert "minimax:DEPTH" in err and "Traceback" not in err
    assert play.main(["--opponent", "pure:x"]) == 2
    err = capsys.readouterr().err
    assert "PLAYOUTS must be a positive integer" in err and "human" not in err


def test_a_screenshot_that_cannot_be_saved_is_a_one_line_error(monkeypatch, capsys, tmp_path):
    """Issue 28: a failing save (a full disk, a folder made read-only meanwhile) gave a traceback."""
    def fail(surface, name):
        raise pygame.error(f"Couldn't open {name}")

    monkeypatch.setattr(pygame.image, "save", fail)
    out = tmp_path / "shot.png"
    assert load_script("play").main(["--opponent", "minimax:1", "--screenshot", str(out)]) == 2
    assert capsys.readouterr().err == f"error: cannot save the screenshot {out}: Couldn't open {out}\n"


def test_thinking_shows_through_a_short_message(make_app):
    """Issue 28: while the AI thought, the status line kept the last short message."""
    app = make_app(SLOW_AI, seed=0, human_first=False)
    wait_thinking(app)
    app.flash("Saved game.txt")
    status = app.status_text()
    assert status.startswith("AI thinking... ") and status.endswith("|  Saved game.txt")
    press(app, pygame.K_n)  # a new game: the AI moves first again, and the message says so
    wait_thinking(app)
    status = app.status_text()
    assert status.startswith("AI thinking... ") and "New game: you play White." in status
    assert any(t.startswith("AI thinking") for t in texts(app))


class SharpEvaluator:
    """Priors of 0.9 on the lowest legal point (the rest shared), value 0: a narrow, deep tree."""

    def evaluate_batch(self, planes, legal):
        priors = legal / legal.sum(axis=1, keepdims=True) * 0.1
        priors[np.arange(len(legal)), legal.argmax(axis=1)] += 0.9
        return priors, np.zeros(len(legal))


def test_one_win_figure_and_visits_that_add_up(make_app):
    """Issue 28: 30% in the bar and 36% in the top-moves row for one move; "402 visits" under 400
    playouts (the tree kept from the last move), with nothing saying so."""
    from gomoku.players.search import AlphaZeroPlayer

    app = make_app(AlphaZeroPlayer(SharpEvaluator(), n_playout=200, seed=0, name="az:sharp:200"))
    click(app, E5)
    assert app.run_until_idle(30)
    first = app.analyses[(E5,)]
    assert first.playouts == 200 and first.reused == 0 and any(t.startswith("200 playouts, ") for t in texts(app))
    expected = first.top[0].line[1]  # the AI's own guess of our reply: its subtree has visits
    click(app, expected)
    assert app.run_until_idle(30)
    analysis = app.analyses[tuple(app.board.moves[:3])]
    assert analysis.playouts == 200 and analysis.reused == analysis.visits.sum() - 200 > 0
    shown = texts(app)
    assert any(t.startswith(f"200 playouts + {analysis.reused} reused, ") for t in shown)
    best = round(100 * analysis.top[0].win)
    black, white = win_labels(analysis, app.human)
    assert white.startswith(f"{best}% White (AI)") and black.endswith(f" {100 - best}%")
    assert black in shown and white in shown and f"{best}%" in shown  # the table's row says the same
    [row] = [r for r in app.frame().moves if r.ply == 4]
    assert row.note == f"{best}%"  # and the move list


@pytest.mark.parametrize("size, moves", [(9, "E5,D4,E4"), (19, "K10,J9,K9")])
def test_the_smallest_window_has_readable_text_that_fits(make_app, size, moves):
    """Issue 28: the side panel's text was about 8 pixels high in a 640x480 window."""
    app = make_app("pure:300", seed=0, size=size, moves=moves, window_size=MIN_WINDOW)
    assert app.run_until_idle(20) and len(app.board.moves) == 4
    app.draw()
    drawn = app.renderer.drawn
    assert {"visits", "win", "prior", "Moves", "Analysis"} <= {t.text for t in drawn}
    window = pygame.Rect((0, 0), MIN_WINDOW)
    for text in drawn:
        assert text.pixels >= 12 and window.contains(text.rect), text
    for index, text in enumerate(drawn):
        for later in drawn[index + 1:]:
            assert not text.rect.colliderect(later.rect), (text, later)


# ---------------------------------------------------------------------------- bigger boards (issue 29)
def _spread_game(n: int, plies: int, seed: int = 0) -> list[int]:
    """The four corners and the middle of each edge, then seeded random points: a game not over."""
    from gomoku.ui.session import new_board

    board, rng = new_board(n), np.random.default_rng(seed)
    edges = [(0, 0), (0, n - 1), (n - 1, 0), (n - 1, n - 1), (0, n // 2), (n // 2, 0), (n - 1, n // 2), (n // 2, n - 1)]
    for row, col in edges:
        board.do_move(row * n + col)
    while len(board.moves) < plies:
        move = int(rng.choice(board.availables))
        board.do_move(move)
        if board.game_end()[0]:
            board.undo_move()
    return list(board.moves)


@pytest.mark.parametrize("window", [MIN_WINDOW, BASE_SIZE])
@pytest.mark.parametrize("size", [15, 20])
def test_big_boards_are_readable(make_app, size, window):
    """15x15 and 20x20: every text 12 pixels or more, inside the window, none over another; move
    numbers that stay on their stones; coordinates clear of the edge stones; the panel's stones as
    large as at 9x9."""
    app = make_app("pure:300", seed=0, size=size, moves=_spread_game(size, 23), window_size=window,
                   show_numbers=True)
    assert app.run_until_idle(30) and len(app.board.moves) == 24
    app.draw()
    lay, drawn = app.layout, app.renderer.drawn
    last_column = "T" if size == 20 else "O"
    assert {"visits", "win", "prior", "Moves", "Analysis", "24", "A", last_column} <= {t.text for t in drawn}
    screen = pygame.Rect((0, 0), window)
    for index, text in enumerate(drawn):
        assert text.pixels >= 12 and screen.contains(text.rect), text
        for later in drawn[index + 1:]:
            assert not text.rect.colliderect(later.rect), (text, later)
    numbers = [t for t in drawn if t.text.isdigit() and lay.wood.contains(t.rect)
               and any(t.rect.center == lay.point_to_pixel(m) for m in app.board.moves)]
    assert len(numbers) == 24
    for number in numbers:
        assert number.rect.width <= 2 * lay.stone_radius, number
    labels = [t for t in drawn if lay.wood.contains(t.rect) and t not in numbers]
    assert len(labels) == 4 * size
    for move in app.board.moves:
        x, y = lay.point_to_pixel(move)
        stone = pygame.Rect(x - lay.stone_radius, y - lay.stone_radius, 2 * lay.stone_radius, 2 * lay.stone_radius)
        assert lay.wood.contains(stone) and not any(label.rect.colliderect(stone) for label in labels), move
    heat = pygame.Rect(lay.heat_origin, (size * lay.heat_cell, size * lay.heat_cell))
    assert lay.panel.contains(heat) and heat.right < lay.moves.x and heat.bottom < lay.top_moves.y
    assert lay.icon_radius == make_app("minimax:1", size=9, window_size=window).layout.small_radius
    assert lay.cell > 0.04 * window[1]  # 23 pixels a point at 20x20 in the smallest window


def test_the_board_comes_from_the_model_and_the_default_model_from_the_board(make_app, tmp_path):
    """Issue 29: a net plays its own board without --size; the default AI for a size is the model
    named for it beside the default model, else the default model if it plays that size, else
    pure MCTS, which says so."""
    from test_play_window import save_net

    seven = save_net(tmp_path / "7x7.pt", 7)
    app = make_app(model=seven, playouts=20, seed=0)
    assert app.session.size == 7 and app.ai_spec == f"az:{seven}:20"
    default = save_net(tmp_path / "9x9.pt", 9)
    assert make_app(default_model=default, playouts=20).ai_spec == f"az:{default}:20"
    fallback = make_app(default_model=default, size=15)
    assert fallback.ai_spec == "pure:2000" and f"No model for 15x15 at {tmp_path / '15x15.pt'}" in fallback.note
    fifteen = save_net(tmp_path / "15x15.pt", 15)
    assert make_app(default_model=default, size=15, playouts=20).ai_spec == f"az:{fifteen}:20"


def test_a_net_that_plays_any_size_is_accepted_on_any_board(make_app):
    """Issue 29: a net whose config ``plays`` a size (pooled heads) plays it; one that does not is refused."""
    from gomoku.players import Player
    from gomoku.ui.ai import check_opponent
    from nets import NetConfig

    class Net(Player):
        name = "pooled"
        net_config = NetConfig(head="pooled")

        def get_action(self, board):
            return board.availables[0]

    app = make_app(Net(), size=15)
    assert app.session.size == 15
    click(app, app.board.width * 7 + 7)
    assert app.run_until_idle(5) and app.board.moves == [112, 0]
    fixed = Net()
    fixed.net_config = NetConfig()  # fully connected heads: its own 9x9 board only
    with pytest.raises(SetupError, match="is for a 9x9 board, not 20x20"):
        check_opponent(fixed, "az:fc.pt:1", 20)
