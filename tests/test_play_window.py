"""The play window (gomoku/ui, scripts/play.py), driven headless through real pygame events.

The helpers here (make_app, click, press, ...) are shared with tests/test_ui_window.py."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

# Headless, silent: these must be set before pygame is imported.
os.environ["SDL_VIDEODRIVER"] = "dummy"
os.environ["SDL_AUDIODRIVER"] = "dummy"
os.environ["PYGAME_HIDE_SUPPORT_PROMPT"] = "1"
pygame = pytest.importorskip("pygame")

from gomoku.ui.thinking import SearchState  # noqa: E402
from gomoku.ui.app import FALLBACK_SPEC, PlayApp, SetupError  # noqa: E402
from gomoku.ui.layout import BASE_SIZE  # noqa: E402
from gomoku.ui.session import WHITE, Author  # noqa: E402
from gomoku.game.board import Board  # noqa: E402
from gomoku.players import Player, parse_point  # noqa: E402
from gomoku.players.external import START_TIMEOUT  # noqa: E402
from tests.fakes import load_script  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
E5 = parse_point(Board(), "E5")
SLOW_AI = "pure:20000"  # seconds of thinking on any machine: long enough to interrupt


@pytest.fixture
def make_app():
    apps = []

    def make(*args, **kwargs):
        app = PlayApp(*args, **kwargs)
        apps.append(app)
        return app

    yield make
    for app in apps:
        app.close()


def click(app, move=None, pos=None):
    """A real left click (press and release) at a board point or a pixel, then one frame."""
    pos = app.layout.point_to_pixel(move) if pos is None else pos
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=pos, button=1))
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, pos=pos, button=1))
    app.step()


def press(app, key, mod=0, unicode=""):
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=key, mod=mod, unicode=unicode))
    pygame.event.post(pygame.event.Event(pygame.KEYUP, key=key, mod=mod))
    app.step()


def button(app, action):
    [found] = [b for b in app.layout.buttons if b.action == action]
    return found


def wait_thinking(app, timeout=5.0):
    deadline = time.perf_counter() + timeout
    while not app.thinking():
        assert time.perf_counter() < deadline, "the AI never started"
        app.step()
        time.sleep(0.002)


def point(name):
    return parse_point(Board(), name)


def save_net(path, size):
    nets = pytest.importorskip("nets")
    nets.save_model(path, nets.build_net(nets.NetConfig(width=size, height=size)))
    return path


# ---------------------------------------------------------------------------- playing
def test_click_plays_and_the_ai_answers(make_app):
    app = make_app("minimax:1", seed=0)
    click(app, E5)
    assert app.board.moves[0] == E5 and app.board.stone(E5) == 1
    assert app.run_until_idle(5)
    assert len(app.board.moves) == 2 and app.board.stone(app.board.moves[1]) == 2
    assert app.status_text().startswith("Your move (Black)")


def test_clicks_on_taken_points_or_off_the_board_do_nothing(make_app):
    app = make_app("minimax:1", seed=0)
    click(app, E5)
    assert app.run_until_idle(5)
    before = list(app.board.moves)
    click(app, E5)  # taken by us
    assert "taken" in app.status_text()
    click(app, before[1])  # taken by the AI
    x, y = app.layout.point_to_pixel(E5)
    half = round(app.layout.cell / 2)
    for pos in [(3, 3), (x + half, y + half), (app.layout.panel.centerx, app.layout.panel.y + 5),
                (x, app.layout.status.centery), (-20, 900)]:
        click(app, pos=pos)
    assert app.board.moves == before and not app.thinking()
    free = point("A1")
    click(app, free)  # the next good click still counts
    assert app.board.moves == before + [free]
    assert app.run_until_idle(5) and len(app.board.moves) == 4


def test_undo_takes_back_your_move_and_the_reply(make_app):
    app = make_app("minimax:1", seed=0)
    click(app, E5)
    assert app.run_until_idle(5)
    first_two = list(app.board.moves)
    click(app, point("A1"))
    assert app.run_until_idle(5) and len(app.board.moves) == 4
    press(app, pygame.K_u)
    assert app.board.moves == first_two
    press(app, pygame.K_u)
    assert app.board.moves == []
    press(app, pygame.K_u)  # nothing left: no crash, no AI move
    assert app.board.moves == [] and app.run_until_idle(2)


def test_undo_while_the_ai_thinks_stops_the_search(make_app):
    app = make_app(SLOW_AI, seed=0)
    click(app, E5)
    wait_thinking(app)
    job = app.thinker.job
    press(app, pygame.K_u)
    assert app.board.moves == [] and not app.thinking()
    assert app.run_until_idle(3), "the cancelled search did not stop"
    assert not job.thread.is_alive() and app.board.moves == []
    click(app, point("D4"))  # play goes on
    assert app.board.moves == [point("D4")]
    wait_thinking(app)


def test_swap_lets_the_ai_move_first(make_app):
    app = make_app("minimax:1", seed=0)
    press(app, pygame.K_s)
    assert app.human == 2
    assert app.run_until_idle(5)
    assert len(app.board.moves) == 1 and app.board.stone(app.board.moves[0]) == 1
    ai_first = make_app("minimax:1", seed=0, human_first=False)
    assert ai_first.run_until_idle(5) and len(ai_first.board.moves) == 1
    click(ai_first, ai_first.board.moves[0])  # taken
    assert len(ai_first.board.moves) == 1


def test_new_game_clears_the_board(make_app):
    app = make_app("minimax:1", seed=0, moves="E5,D4,E4")
    assert app.run_until_idle(5) and len(app.board.moves) == 4
    press(app, pygame.K_n)
    assert app.board.moves == [] and app.run_until_idle(2) and app.board.moves == []


def test_a_win_ends_the_game_and_is_highlighted(make_app):
    app = make_app("minimax:1", seed=0, moves="A1,A9,B1,B9,C1,C9,D1,I9")
    assert app.is_idle()
    click(app, point("E1"))
    assert app.board.winner == 1 and app.status_text().startswith("You win")
    assert app.run_until_idle(1) and len(app.board.moves) == 9
    click(app, point("E5"))  # after the end: ignored
    assert len(app.board.moves) == 9
    surface = app.draw()
    x, y = app.layout.point_to_pixel(point("C1"))
    r, g, b, *_ = surface.get_at((x, y - app.layout.stone_radius - 1))  # on the gold ring
    assert r > 200 and g > 150 and b < 120


# ---------------------------------------------------------------------------- drawing
def test_the_drawn_board_shows_stones_and_wood(make_app):
    app = make_app("minimax:1", seed=0, moves="E5,D4")
    surface = app.draw()
    assert surface.get_size() == BASE_SIZE
    black = surface.get_at(app.layout.point_to_pixel(E5))
    assert max(black[:3]) < 110
    x, y = app.layout.point_to_pixel(point("D4"))
    white = surface.get_at((x + 8, y + 8))  # off the last-move mark in the middle
    assert min(white[:3]) > 170
    x, y = app.layout.point_to_pixel(point("G7"))
    wood = surface.get_at((x + round(app.layout.cell / 4), y + round(app.layout.cell / 4)))
    assert wood.r > 170 and wood.r > wood.g > wood.b + 20


def test_toggles_for_numbers_and_analysis(make_app):
    app = make_app("pure:50", seed=0)
    click(app, E5)
    assert app.run_until_idle(5)
    shown = app.draw().subsurface(app.layout.panel).copy()
    press(app, pygame.K_a)
    assert not app.show_analysis and "Analysis hidden" in app.renderer.texts()
    hidden = app.draw().subsurface(app.layout.panel).copy()
    assert pygame.image.tobytes(shown, "RGB") != pygame.image.tobytes(hidden, "RGB")
    press(app, pygame.K_a)
    assert app.show_analysis
    assert not app.show_numbers
    press(app, pygame.K_m)
    assert app.show_numbers
    click(app, pos=button(app, "numbers").rect.center)  # the on-screen button does the same
    assert not app.show_numbers and len(app.board.moves) == 2


def test_analysis_shows_the_search_live_and_after(make_app):
    app = make_app("pure:1000", seed=0)
    click(app, E5)
    live = []
    deadline = time.perf_counter() + 10
    while not app.is_idle():
        assert time.perf_counter() < deadline
        app.step()
        shown, _ = app.shown_analysis()
        if shown is not None and shown.state == SearchState.LIVE:
            live.append(shown.playouts)
            app.draw()
            assert any(text.startswith("live: ") for text in app.renderer.texts())
        time.sleep(0.002)
    assert live, "no progress shown while searching"
    analysis = app.analyses[(E5,)]
    assert analysis.state == SearchState.DONE and analysis.chosen == app.board.moves[1]
    assert analysis.visits.sum() > 0 and -1.0 <= analysis.value <= 1.0
    assert analysis.playouts == 1000 and app.shown_analysis() == (analysis, app.board.moves[1])


# ---------------------------------------------------------------------------- never frozen
def test_the_window_stays_responsive_and_closes_mid_search(make_app):
    app = make_app(SLOW_AI, seed=0)
    click(app, E5)
    wait_thinking(app)
    job = app.thinker.job
    for _ in range(5):  # each frame returns while the search goes on in its thread
        app.step()
        assert job.thread.is_alive() and app.thinker.job is job
    assert "AI thinking" in app.status_text()
    pygame.event.post(pygame.event.Event(pygame.QUIT))
    app.run()  # takes the QUIT, stops the search (seconds of it left), closes the window
    assert not app.running and not job.thread.is_alive()
    stopped = job.answer().analysis
    assert stopped.state == SearchState.STOPPED and stopped.playouts < 20000  # SLOW_AI's playouts


# ---------------------------------------------------------------------------- AI choice
def test_alphazero_model_plays(make_app, tmp_path):
    model = save_net(tmp_path / "net.pt", 9)
    app = make_app(model=model, playouts=50, seed=0)
    assert app.ai_spec == f"az:{model}:50" and app.note == ""
    click(app, E5)
    assert app.run_until_idle(20)
    assert len(app.board.moves) == 2
    assert -1.0 <= app.analyses[(E5,)].value <= 1.0
    explicit = make_app(f"az:{model}:50", seed=0, human_first=False)
    assert explicit.run_until_idle(20) and len(explicit.board.moves) == 1


def test_a_model_for_another_board_size_is_rejected(tmp_path, capsys):
    model = save_net(tmp_path / "net7.pt", 7)
    with pytest.raises(SetupError, match="7x7 board, not 9x9"):
        PlayApp(model=model, size=9)
    play = load_script("play")
    assert play.main(["--model", str(model), "--size", "9"]) == 2
    assert "7x7 board, not 9x9" in capsys.readouterr().err
    game = tmp_path / "game.txt"
    game.write_text("# size: 9x9\nE5\n")
    with pytest.raises(SetupError, match="7x7 board, not 9x9"):  # a saved game's size wins over the model's
        PlayApp(model=model, load=game)
    assert play.main(["--opponent", "minimax:zero"]) == 2
    assert "valid forms" in capsys.readouterr().err
    nets = pytest.importorskip("nets")
    four = tmp_path / "four.pt"
    nets.save_model(four, nets.build_net(nets.NetConfig()), n_in_row=4)
    with pytest.raises(SetupError, match="trained for 4 in a row, not 5 \\(pass --n-in-row 4"):  # issue 28
        PlayApp(model=four, n_in_row=5)
    assert play.main(["--model", str(four), "--n-in-row", "5"]) == 2
    assert "trained for 4 in a row, not 5" in capsys.readouterr().err


def test_play_model_takes_the_board_and_rule_of_its_checkpoint(tmp_path, monkeypatch, capsys):
    """The command train.py prints for the smoke run (`play.py --model RUN/best.pt`, a 6x6 net for
    four in a row) said "the net was trained for 4 in a row, not 5": the window now plays its board
    and rule, unless --size or --n-in-row asks for others."""
    nets = pytest.importorskip("nets")
    model = tmp_path / "best.pt"
    nets.save_model(model, nets.build_net(nets.NetConfig(width=6, height=6)), n_in_row=4)
    apps = []
    monkeypatch.setattr(PlayApp, "run", lambda app: apps.append(app))  # set up the window, do not loop
    play = load_script("play")
    try:
        assert play.main(["--model", str(model)]) == 0
        assert pygame.display.get_caption()[0].startswith("gomoku-zero (4 in a row): you (Black)")
        apps[0].change_strength(1)  # the stronger player is checked on the window's rule too
        assert apps[0].ai_spec == f"az:{model}:1600" and "Strength: 1600 playouts" in apps[0].status_text()
        assert play.main(["--model", str(model), "--moves", "A1,B1,A2,B2,A3,B3,A4"]) == 0
    finally:
        for app in apps:
            app.close()
    fresh, won = (app.session for app in apps)
    assert (fresh.size, fresh.n_in_row, fresh.board.width, fresh.board.height, fresh.board.n_in_row) == (6, 4, 6, 6, 4)
    assert won.game_over() and won.result_text() == "Black wins"  # four in a row ends it
    assert play.main(["--model", str(model), "--size", "9"]) == 2
    assert "for a 6x6 board, not 9x9 (pass --size 6" in capsys.readouterr().err
    assert play.main(["--model", str(model), "--moves", "A1,B1,A2,B2,A3,B3,A4,B4"]) == 2
    assert "bad --moves: move 8, B4: the game was already over" in capsys.readouterr().err


def test_an_engine_that_forfeits_is_told_in_words_and_ends_with_the_window(make_app, caplog):
    """An external engine (pbrain:) that crashes: the status says so in words, without its
    traceback or stderr; closing the window ends its process (close), even when it hangs."""
    from gomoku.players.forfeit import Forfeit, ForfeitReason

    closed = []

    class Crashing(Player):
        name = "pbrain:engine"

        def get_action(self, board):
            raise Forfeit(ForfeitReason.CRASHED, 'the engine exited, exit code 1; stderr: Traceback | File "x.py"')

        def close(self):
            closed.append(True)

    app = make_app(Crashing())
    click(app, E5)
    assert app.run_until_idle(5)
    assert app.status_text() == "The AI failed. N: new game, U: undo (the engine crashed: the engine exited, exit code 1)"
    assert not any(record.exc_info for record in caplog.records)
    app.close()
    assert closed == [True]


def test_an_engine_still_starting_is_said_so(make_app):
    """An external engine that has not answered START yet: "Starting the engine", not "AI
    thinking" (an engine that never answers keeps it until its START timeout)."""
    import threading

    go = threading.Event()

    class Starting(Player):
        name = "pbrain:engine"

        def get_action(self, board):
            self.starting = START_TIMEOUT  # as PbrainPlayer while it waits for START's answer
            go.wait(30)
            self.starting = None
            return next(move for move in range(board.size) if not board.stone(move))

    app = make_app(Starting())
    click(app, E5)
    wait_thinking(app)
    deadline = time.monotonic() + 30
    while not app.ai.starting and time.monotonic() < deadline:
        time.sleep(0.01)
    assert app.status_text().startswith("Starting the engine... ") and "60 s to answer" in app.status_text()
    go.set()
    assert app.run_until_idle(5)
    assert len(app.board.moves) == 2 and app.status_text().startswith("Your move")


def test_an_ai_that_fails_does_not_take_the_window_down(make_app):
    class Broken(Player):
        name = "broken"

        def get_action(self, board):
            raise RuntimeError("no idea")

    app = make_app(Broken())
    click(app, E5)
    assert app.run_until_idle(5)
    assert "The AI failed" in app.status_text() and "no idea" in app.status_text()
    assert app.board.moves == [E5]
    click(app, E5 + 1)  # the person cannot play on: the message says how to go on
    assert app.board.moves == [E5]
    assert "N: new game, U: undo" in app.status_text() and "Wait for the AI" not in app.status_text()
    press(app, pygame.K_u)  # undo and new game still work
    assert app.board.moves == []


def test_without_a_model_the_fallback_plays_and_says_so(make_app, tmp_path):
    app = make_app(default_model=tmp_path / "missing.pt")
    assert app.ai_spec == FALLBACK_SPEC
    assert "No model" in app.note and FALLBACK_SPEC in app.note
    five = save_net(tmp_path / "9x9.pt", 9)  # the default model is for five in a row: not for --n-in-row 4
    assert make_app(default_model=five).ai_spec == f"az:{five}:400"
    four = make_app(default_model=five, n_in_row=4)
    assert (four.ai_spec, four.session.n_in_row) == (FALLBACK_SPEC, 4)
    assert four.note == f"No model for 4 in a row on 9x9 yet: playing {FALLBACK_SPEC} (pure MCTS) instead."


def test_bad_moves_are_a_setup_error(capsys):
    with pytest.raises(SetupError, match="bad --moves"):
        PlayApp("minimax:1", moves="E5,E5")
    with pytest.raises(SetupError, match="bad --moves"):
        PlayApp("minimax:1", moves="Z9")
    play = load_script("play")
    for size in ("40", "4"):  # said "bad --moves" without any --moves
        assert play.main(["--size", size]) == 2
        assert capsys.readouterr().err == f"error: bad --size: the board size must be 5 to 26 points a side, got {size}\n"
    assert play.main(["--n-in-row", "2", "--opponent", "minimax:1"]) == 2
    assert capsys.readouterr().err == "error: bad --n-in-row: the stones in a row to win must be 3 to 26, got 2\n"


# ---------------------------------------------------------------------------- the script
def test_screenshot_from_the_command_line(tmp_path):
    out = tmp_path / "shot.png"
    assert load_script("play").main(["--opponent", "minimax:1", "--moves", "E5,D4,E4", "--seed", "0",
                                "--screenshot", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = pygame.image.load(str(out))
    assert image.get_size() == BASE_SIZE


def test_importing_gomoku_does_not_import_pygame():
    code = ("import sys, gomoku, gomoku.players, gomoku.players.search, gomoku.matches.arena; "
            "assert 'pygame' not in sys.modules, 'pygame imported'")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr


def test_torch_threads_are_restored_after_the_apps_close(make_app, tmp_path):
    """The windows' AI threads use 1 torch thread; the last to close gives back the count before
    (3 here: the test workers run with 1, which would not tell a restore from none)."""
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    try:
        model = save_net(tmp_path / "net.pt", 9)
        first = make_app(f"az:{model}:10")
        second = make_app(f"az:{model}:10")
        assert torch.get_num_threads() == 1
        first.close()
        assert torch.get_num_threads() == 1
        second.close()
        assert torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(before)


def test_a_game_saved_after_a_swap_in_mid_game_loads_with_the_persons_colour(make_app, tmp_path):
    """The saved header listed both players of each colour, so the load took the person for
    Black: with White to move, the AI played the person's move at once."""
    saved = tmp_path / "swapped.txt"
    saved.write_text("# gomoku-zero game\n# size: 9x9\n# black: you, minimax:1\n# white: minimax:1, you\n"
                     "# you: white\nE5  # you\nD4  # minimax:1\nF5  # minimax:1\n")
    app = make_app("minimax:1", load=saved)
    app.step()
    assert app.session.human == WHITE and len(app.board.moves) == 3  # White (the person) to move
    assert [p.by for p in app.session.history] == [Author.YOU, Author.AI, Author.AI]
    assert app.thinker.job is None


def test_ctrl_c_in_the_terminal_closes_the_window_in_one_line(monkeypatch, capsys):
    """Ctrl-C while the window ran ended in a traceback (clock.tick ... KeyboardInterrupt)."""
    closed = []

    def interrupted(app):
        closed.append(app)
        app.close()  # as run() does in its finally
        raise KeyboardInterrupt

    monkeypatch.setattr(PlayApp, "run", interrupted)
    assert load_script("play").main(["--opponent", "minimax:1"]) == 130
    assert capsys.readouterr().err == "interrupted: the window is closed (Ctrl+S in the window saves a game)\n"
    assert len(closed) == 1 and not closed[0].running
