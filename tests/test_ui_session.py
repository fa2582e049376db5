"""The play window's game and its commands (gomoku/ui/session.py), the saved-game text, the frame built
from a plain scene (gomoku/ui/frame.py) and the imports between the window's modules: no pygame."""

import ast
import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import gomoku.ui
from gomoku.game.board import Board
from gomoku.players import parse_point
from gomoku.ui.ai import (SECONDS_PLAYOUT_CAP, STRENGTH_PRESETS, Strength, short_spec, spec_strength, strength_ladder,
                          with_strength)
from gomoku.ui.frame import Ghost, Scene, Thinking, Tone, build_frame
from gomoku.ui.session import (BLACK, WHITE, Author, Played, Session, SetupError, describe_undo, format_game,
                               initial_game, parse_game)
from gomoku.ui.thinking import NO_MOVE, Analysis, MoveStats, SearchState

BOARD = Board()


def p(name):
    return parse_point(BOARD, name)


def p6(name):
    return parse_point(Board(6, 6, 4), name)


def session_with(names, authors, human=BLACK):
    return Session(9, human, tuple(p(n) for n in names), tuple(authors))


def test_the_session_package_needs_no_pygame():
    code = "import sys, gomoku.ui.session, gomoku.ui.ai, gomoku.ui.thinking, gomoku.ui.frame; assert 'pygame' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_undo_goes_back_to_your_turn_and_says_whose_moves_went():
    you, ai = Author.YOU, Author.AI
    game = session_with(["E5", "D4", "F4", "D6"], [you, ai, you, ai])
    taken = game.undo()
    assert [t.move for t in taken] == [p("F4"), p("D6")] and game.position() == (p("E5"), p("D4"))
    assert describe_undo(taken, game.board) == "Took back your move F4 and the AI's reply D6."
    # Issue 15, 3: N, S (the AI opens E5), D4, S (you take Black), the AI plays twice in a row; U.
    swapped = session_with(["E5", "D4", "F5", "E4"], [ai, you, ai, ai], human=BLACK)
    taken = swapped.undo()
    assert [t.by for t in taken] == [ai, ai] and swapped.position() == (p("E5"), p("D4"))
    assert swapped.board.current_player == BLACK
    message = describe_undo(taken, swapped.board)
    assert message == "Took back the AI's moves F5, E4." and "your" not in message
    assert Session(9, WHITE, (p("E5"),), (ai,)).undo() == ()
    assert "Nothing" in describe_undo((), BOARD)
    mixed = describe_undo((Played(p("A1"), Author.SETUP), Played(p("B2"), you)), BOARD)
    assert mixed == "Took back the set-up move A1 and your move B2."
    # Stepped back two moves (4 of 6 shown), U: the later moves went too, unnamed ("Took back the
    # set-up moves E4, E6."); they are named now, and nothing goes when there is nothing to undo.
    back = session_with(["E5", "F5", "E4", "E6", "D5", "C6"], [Author.SETUP] * 5 + [ai])
    back.back(2)
    taken = back.undo()
    assert [t.move for t in taken] == [p(n) for n in ("E4", "E6", "D5", "C6")] and back.position() == (p("E5"), p("F5"))
    assert describe_undo(taken, back.board) == "Took back the set-up moves E4, E6, D5 and the AI's move C6."
    stepped = session_with(["E5", "D4"], [ai, you], human=WHITE)
    stepped.back(2)
    assert stepped.undo() == () and len(stepped.history) == 2  # nothing of yours before: the game stays


def test_stepping_back_and_going_on_from_an_earlier_position():
    game = session_with(["E5", "D4", "F4", "D6"], [Author.YOU, Author.AI] * 2)
    assert not game.reviewing() and game.back() == 3 and game.reviewing()
    assert game.go_to(-5) == 0 and game.board.moves == [] and game.go_to(99) == 4
    game.go_to(2)
    assert game.human_to_move() and not game.ai_to_move()  # Black to move, but an earlier position
    game.play(p("A1"), Author.YOU)  # playing there drops the later moves
    assert game.position() == (p("E5"), p("D4"), p("A1")) and len(game.history) == 3 and game.ai_to_move()
    game.go_to(1)
    assert game.resume() == 2 and game.position() == (p("E5"),) and game.ai_to_move()
    with pytest.raises(ValueError):
        game.play(p("E5"), Author.YOU)
    assert len(game.history) == 1


def test_swap_before_the_first_move_or_after_the_end_starts_a_new_game():
    game = Session()
    assert game.swap() and game.human == WHITE and game.ai_to_move()
    game = session_with(["E5"], [Author.YOU])
    assert not game.swap() and game.human == WHITE and game.position() == (p("E5"),)
    won = session_with(["A1", "A9", "B1", "B9", "C1", "C9", "D1", "D9", "E1"], [Author.SETUP] * 9)
    assert won.result_text() == "Black wins" and won.swap() and won.history == []


def test_a_saved_game_reads_back_and_moves_read_the_same_way():
    game = session_with(["E5", "D4", "F4"], [Author.YOU, Author.AI, Author.YOU])
    text = game.to_text("az:models/9x9.pt:400")
    assert text.splitlines() == ["# gomoku-zero game", "# size: 9x9", "# black: you",
                                 "# white: az:models/9x9.pt:400", "E5", "D4", "F4"]
    saved = parse_game(text)
    assert saved.moves == game.position() and saved.size == 9 and saved.human_colour() == BLACK
    assert parse_game("E5, D4;F4").moves == saved.moves == parse_game("e5\n\n d4 f4\n").moves
    assert parse_game(format_game(11, [0, 120], "az:x:1", "you")).size == 11
    assert initial_game(None, None, 13).size == 13 and initial_game([40, 41], None, None).moves == (40, 41)
    with pytest.raises(SetupError, match="for a 9x9 board, not 11x11"):
        parse_game(text, size=11)
    with pytest.raises(SetupError, match="bad size"):
        parse_game("# size: 9x7\nE5")


def test_bad_moves_name_the_move_and_the_point():
    """Issue 15, 7: not "move 40 (row 4, col 4) is already occupied", an index of the board."""
    with pytest.raises(SetupError) as error:
        parse_game("E5,E5")
    assert str(error.value) == "move 2, E5: that point is already taken"
    with pytest.raises(SetupError, match="move 3, 'Z9': off the board"):
        parse_game("E5 D4 Z9")
    with pytest.raises(SetupError, match="move 10, A2: the game was already over"):
        parse_game("A1 A9 B1 B9 C1 C9 D1 D9 E1 A2")
    with pytest.raises(SetupError, match="bad --moves: move 2, E5"):
        initial_game("E5,E5", None, None)


def test_standard_notation_counts_rows_from_the_bottom():
    assert divmod(p("A1"), 9) == (8, 0) and divmod(p("A9"), 9) == (0, 0) and p("E5") == 40


def test_win_estimates_are_per_colour():
    analysis = Analysis((p("E5"),), WHITE, np.ones(81), 0.5, 10, 0.1, (), SearchState.LIVE)
    assert analysis.win_for(WHITE) == 0.75 and analysis.win_for(BLACK) == 0.25
    assert analysis.stopped().state == SearchState.STOPPED and analysis.shares().sum() == pytest.approx(1)
    pytest.importorskip("pygame")
    from gomoku.ui.panel import win_labels
    assert win_labels(analysis, human=WHITE) == ("Black (AI) 25%", "75% White (you)")
    assert win_labels(analysis, human=BLACK) == ("Black (you) 25%", "75% White (AI)")
    # With the search's top moves: the best move's win rate, the figure of the top-moves table.
    best = MoveStats(p("D4"), 6, 0.6, 0.365, 0.2, (p("D4"),))
    other = MoveStats(p("F6"), 4, 0.4, 0.9, 0.2, (p("F6"),))
    ranked = dataclasses.replace(analysis, top=(best, other))
    assert ranked.win_for(WHITE) == 0.365 and ranked.win_for(BLACK) == pytest.approx(0.635)
    assert win_labels(ranked, human=BLACK) == ("Black (you) 64%", "36% White (AI)")
    assert ranked.reused == 81 - 10  # 81 visits at the root, 10 of them this search's playouts


def test_strength_presets():
    assert spec_strength("az:models/9x9.pt:400") == Strength(400) and spec_strength("minimax:2") is None
    assert spec_strength("pure:50", 2.0) == Strength(50, 2.0)
    assert with_strength("az:runs/a:b/best.pt:400", Strength(1600)) == "az:runs/a:b/best.pt:1600"
    ladder = strength_ladder(Strength(50))
    assert ladder[0] == Strength(50) and ladder[1:] == list(STRENGTH_PRESETS)
    assert Strength(SECONDS_PLAYOUT_CAP, 3.0).label == "3 s a move" and Strength(400).label == "400 playouts"


def test_a_games_file_of_evaluate_is_named_and_how_to_replay_one_of_its_games(tmp_path):
    """play.py --load GAMES.jsonl said "move 1, '{"player":': expected a column letter and a row number"."""
    import json

    games = tmp_path / "games.jsonl"
    games.write_text(json.dumps({"player": "az", "game": 1, "moves": "E5,F6"}) + "\n")
    for moves, load in ((None, games), (str(games), None)):
        with pytest.raises(SetupError) as info:
            initial_game(moves, load, None)
        assert str(info.value) == (f"{games} is a games file of evaluate.py --games-out (one JSON line a game), "
                                   'not a saved game: replay one of its games with --moves and that game\'s "moves"')
    assert initial_game("E5,F6", None, None).moves == (p("E5"), p("F6"))  # what it says to do


def test_saved_games_with_a_bom_other_bytes_or_size_zero(tmp_path):
    """Issue 28: a BOM or non-UTF-8 file gave a traceback, '# size: 0' was read as 9."""
    bom = tmp_path / "bom.txt"
    bom.write_bytes(b"\xef\xbb\xbf# size: 9x9\nE5\nD4\n")
    assert initial_game(None, bom, None).moves == (p("E5"), p("D4"))
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"# black: Jos\xe9\nE5\n")
    with pytest.raises(SetupError, match=r"cannot read .*latin.txt: not UTF-8 text \(byte 12\)"):
        initial_game(None, latin, None)
    with pytest.raises(SetupError, match="cannot read"):
        initial_game(str(latin), None, None)  # --moves naming a file reads it the same way
    for size in ("0", "0x0"):
        with pytest.raises(SetupError, match="board size must be 5 to 26 .* got 0"):
            parse_game(f"# size: {size}\nE5")
    with pytest.raises(SetupError, match="got 0"):
        initial_game(None, None, 0)



def test_a_bad_size_names_size_not_moves(tmp_path):
    """`play.py --size 40` said "bad --moves: the board size must be 5 to 26 ..." with no --moves."""
    for size in (40, 4):
        with pytest.raises(SetupError) as error:
            initial_game(None, None, size)
        assert str(error.value) == f"bad --size: the board size must be 5 to 26 points a side, got {size}"
        with pytest.raises(SetupError, match="^bad --size: "):
            initial_game("E5", None, size)
    game = tmp_path / "game.txt"
    game.write_text("# size: 9x9\nE5\n")
    with pytest.raises(SetupError, match="^bad --size: .* got 40$"):
        initial_game(None, game, 40)
    with pytest.raises(SetupError, match="^bad --n-in-row: .* 3 to 6 on a 6x6 board, got 7$"):
        initial_game(None, None, 6, n_in_row=7)


def test_the_rule_comes_from_the_option_else_the_saved_game_else_the_model():
    """A smoke run's model (6x6, four in a row) plays on its own rule: four in a row ends the game."""
    four = [p6(name) for name in ("A1", "B1", "A2", "B2", "A3", "B3", "A4")]
    game = initial_game(None, None, None, default_size=6, default_n_in_row=4)
    assert (game.size, game.n_in_row, game.moves) == (6, 4, ())
    session = Session(6, BLACK, tuple(four), n_in_row=4)
    assert session.game_over() and session.result_text() == "Black wins"
    text = session.to_text("az:best.pt:400")
    assert text.splitlines()[:3] == ["# gomoku-zero game", "# size: 6x6", "# n_in_row: 4"]
    saved = parse_game(text)  # the header's rule, not five in a row: the game is over after A4
    assert (saved.size, saved.n_in_row, saved.moves) == (6, 4, tuple(four))
    assert initial_game(None, None, None, 6, n_in_row=4, default_n_in_row=5).n_in_row == 4
    with pytest.raises(SetupError, match="move 8, B4: the game was already over"):
        parse_game(text + "B4\n")
    with pytest.raises(SetupError, match="the game is for 4 in a row, not 5"):
        parse_game(text, n_in_row=5)
    with pytest.raises(SetupError, match="bad n_in_row 'four'"):
        parse_game("# n_in_row: four\nE5")
    assert parse_game(format_game(9, [40], "you", "x")).n_in_row == 5 and "n_in_row" not in format_game(9, [], "", "")


def test_a_saved_game_names_the_setting_each_ai_move_was_played_at():
    """Issue 28: the header named 400 playouts when a move was played at 1600."""
    game = Session(9, BLACK)
    game.play(p("E5"), Author.YOU)
    game.play(p("D4"), Author.AI, "az:m.pt:400")
    game.play(p("F4"), Author.YOU)
    assert game.to_text("az:m.pt:1600").splitlines()[3:] == ["# white: az:m.pt:400", "E5", "D4", "F4"]
    game.play(p("C3"), Author.AI, "az:m.pt:1600, at most 3 s a move")
    lines = game.to_text("az:m.pt:1600, at most 3 s a move").splitlines()
    assert lines[3] == "# white: az:m.pt:400, az:m.pt:1600, at most 3 s a move"
    assert lines[4:] == ["E5", "D4  # az:m.pt:400", "F4", "C3  # az:m.pt:1600, at most 3 s a move"]
    saved = parse_game("\n".join(lines))
    assert saved.moves == game.position() and saved.human_colour() == BLACK
    assert Session(9, BLACK).to_text("minimax:2").splitlines()[3] == "# white: minimax:2"  # no AI move yet


# ---------------------------------------------------------------------------- the frame, from a scene
def test_a_frame_is_built_from_a_scene_alone():
    """``build_frame`` reads only the plain values of a ``Scene`` (no app, no window): the status
    line, the analysis shown, the move list and the ghost stones."""
    e5, d4, f6, c3, a1 = (p(name) for name in ("E5", "D4", "F6", "C3", "A1"))
    visits = np.zeros(81)
    visits[d4] = 6
    best = MoveStats(d4, 6, 1.0, 0.75, 0.2, (d4, f6, c3))
    chose = Analysis((e5,), WHITE, visits, 0.5, 6, 0.4, (best,), SearchState.DONE, d4)
    you_to_move = session_with(["E5", "D4"], [Author.YOU, Author.AI])
    scene = Scene(you_to_move, analyses={(e5,): chose}, ai_spec="az:models/9x9.pt:400", can_analyse=True,
                  strength="400 playouts", show_line=True, hover_point=a1)
    frame = build_frame(scene)
    assert frame.status == "Your move (Black): click a point" and frame.tone == Tone.NORMAL and not frame.busy
    assert frame.analysis is chose and frame.marked == d4 and frame.analysis_info == "6 playouts, 0.4 s"
    assert [(row.ply, row.move, row.colour, row.note, row.shown) for row in frame.moves] == [
        (1, e5, BLACK, "", True), (2, d4, WHITE, "75%", True)]
    # The line from the position shown (D4 was played), numbered; the stone you would play at A1.
    assert frame.ghosts == (Ghost(f6, BLACK, 1), Ghost(c3, WHITE, 2), Ghost(a1, BLACK))
    assert frame.toggles == {"analysis", "line"} and frame.strength == "400 playouts"
    assert build_frame(dataclasses.replace(scene, show_line=False, hover_point=d4)).ghosts == ()  # D4 is taken
    hovered = build_frame(dataclasses.replace(scene, show_line=False, hover_point=None, hover_rank=0))
    assert hovered.ghosts == frame.ghosts[:2]

    ai_to_move = session_with(["E5"], [Author.YOU])
    live = dataclasses.replace(chose, playouts=40, state=SearchState.LIVE, chosen=NO_MOVE)
    thinking = Scene(ai_to_move, Thinking((e5,), 2.34, live, 400), can_analyse=True, flash="Saved x.txt")
    frame = build_frame(thinking)
    assert frame.status == "AI thinking... 2.3 s (40/400 playouts)  |  Saved x.txt"
    assert frame.busy and frame.tone == Tone.ALERT and frame.analysis is live and frame.marked == NO_MOVE
    assert frame.analysis_info == "live: 40/400 playouts"
    first = build_frame(Scene(ai_to_move, Thinking((e5,), 0.5, None, 400), can_analyse=True))
    assert first.status == "AI thinking... 0.5 s" and first.analysis is None and first.analysis_hint == "searching..."
    assert build_frame(Scene(ai_to_move, ai_spec="minimax:2")).analysis_hint == \
        f"no search statistics for {short_spec('minimax:2')}"
    assert build_frame(Scene(ai_to_move, stopping=True)).status == "Stopping the AI's search..."
    assert build_frame(Scene(ai_to_move, ai_error="boom")).status == "The AI failed. N: new game, U: undo (boom)"
    assert build_frame(Scene(ai_to_move)).status == "AI to move"

    won = session_with(["A1", "A2", "B1", "B2", "C1", "C2", "D1", "D2", "E1"],
                       [Author.YOU, Author.AI] * 4 + [Author.YOU])
    assert (build_frame(Scene(won)).status, build_frame(Scene(won)).tone) == ("You win! N: new game", Tone.WIN)
    assert build_frame(Scene(won, flash="hi")).tone == Tone.ALERT
    won.go_to(3)
    assert build_frame(Scene(won)).status.startswith("Move 3 of 9: ")


# ---------------------------------------------------------------------------- the imports between modules
def ui_imports() -> dict[str, set[str]]:
    """Each module of gomoku.ui and the modules of gomoku.ui it imports, read from the source (so an
    import under TYPE_CHECKING or inside a function counts too)."""
    graph = {}
    for path in sorted(Path(gomoku.ui.__file__).parent.glob("*.py")):
        names = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "gomoku.ui":
                names |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gomoku.ui."):
                names.add(node.module.split(".")[2])
            elif isinstance(node, ast.Import):
                names |= {alias.name.split(".")[2] for alias in node.names if alias.name.startswith("gomoku.ui.")}
        graph[path.stem] = names
    return graph


def in_a_cycle(graph: dict[str, set[str]]) -> set[str]:
    """The modules left after taking away, again and again, those whose imports are all taken away:
    empty when the imports have no cycle."""
    left = dict(graph)
    while True:
        leaves = {name for name, imports in left.items() if not imports & left.keys()}
        if not leaves:
            return set(left)
        for name in leaves:
            del left[name]


def test_the_window_modules_import_each_other_without_a_cycle():
    graph = ui_imports()
    assert {"app", "frame", "draw", "panel", "paint", "session"} <= graph.keys() and "frame" in graph["app"]
    assert in_a_cycle(graph) == set()
    assert not graph["frame"] & {"app", "draw", "panel", "paint", "layout", "look"}  # the frame knows no window
    assert "draw" not in graph["panel"] and "app" not in set().union(*(graph[m] for m in graph if m != "app"))
    assert in_a_cycle({**graph, "frame": graph["frame"] | {"app"}}) >= {"app", "frame"}  # the check sees one


def test_a_saved_game_names_who_played_each_colour_after_a_swap_in_mid_game():
    """The header named colours by the sides at the end: after a swap, the person's first moves
    were saved as the AI's. Each colour now lists its players, and its moves name their own."""
    game = Session(9, BLACK)
    game.play(p("E5"), Author.YOU)
    game.play(p("D4"), Author.AI, "az:m.pt:400")
    assert not game.swap() and game.human == WHITE  # the AI takes Black, to move
    game.play(p("F5"), Author.AI, "az:m.pt:400")
    game.play(p("D5"), Author.YOU)
    lines = game.to_text("az:m.pt:400").splitlines()
    assert lines[2:5] == ["# black: you, az:m.pt:400", "# white: az:m.pt:400, you", "# you: white"]
    assert lines[5:] == ["E5  # you", "D4  # az:m.pt:400", "F5  # az:m.pt:400", "D5  # you"]
    # It loads back with the person on White (to move: the AI played G2 for them when the window
    # took Black as theirs) and each move's player.
    saved = parse_game("\n".join(lines))
    assert saved.moves == game.position() and saved.human_colour() == WHITE
    assert saved.authors() == (Author.YOU, Author.AI, Author.AI, Author.YOU)
    assert parse_game("E5\nD4").authors() is None and parse_game("# white: you\nE5\nD4").authors() == (Author.AI, Author.YOU)
    with pytest.raises(SetupError, match="bad you 'red' in the header"):
        parse_game("# you: red\nE5")
    setup = Session(9, WHITE, (p("E5"),))  # a set-up move names nobody: the colours keep their sides
    assert setup.to_text("minimax:2").splitlines()[2:4] == ["# black: minimax:2", "# white: you"]


@pytest.mark.parametrize("text", ["Z" * 3_000_000, "E5\n" + "E" + "9" * 3_000_000, "# you: " + "a" * 3_000_000,
                                  "# size: " + "9" * 3_000_000, "# n_in_row: " + "4" * 3_000_000])
def test_a_huge_token_in_a_saved_game_is_a_short_error(tmp_path, text):
    """play --load of a file with a 3 MB token printed 3 MB of error (and a 3 MB size, int()'s limit)."""
    from gomoku.ui.session import SHOWN_CHARS, SetupError, initial_game

    game = tmp_path / "game.txt"
    game.write_text(text + "\n")
    with pytest.raises(SetupError) as caught:
        initial_game(None, game, None)
    message = str(caught.value)
    assert message.startswith(f"bad game in {game}: ") and len(message) < len(str(game)) + 3 * SHOWN_CHARS + 100
    assert "\n" not in message and "characters)" in message
