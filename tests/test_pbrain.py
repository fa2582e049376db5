"""The pbrain (Gomocup / Piskvork) engine, driven as a subprocess through its protocol.

Every read has a timeout, so a hung engine fails a test instead of hanging the suite.
"""

from __future__ import annotations

import dataclasses
import io
import os
import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from gomoku import Board
import gomoku.pbrain.budget as budget
import gomoku.pbrain.engine as engine_module
from gomoku.pbrain.engine import PbrainEngine, forced_move
from gomoku.pbrain.loader import AZ_PLAYOUTS, EngineOptions
from gomoku.pbrain.protocol import ABOUT, ProtocolError, rebuild_board
from gomoku.pbrain.server import serve
from gomoku.players.search import TIMED_ROUND_MAX_PLAYOUTS, TIMED_ROUND_PLAYOUTS

REPO_ROOT = Path(__file__).resolve().parent.parent
SCRIPT = REPO_ROOT / "scripts" / "pbrain.py"
WRAPPER = REPO_ROOT / "scripts" / "pbrain-gomoku-zero"
READ_TIMEOUT = 20.0  # seconds for one answer (a loaded machine, torch imports)
UNREACHABLE_PLAYOUTS = 10_000_000  # pure MCTS playouts no machine makes in a test's time


class Engine:
    """A running engine: send lines, read answers with a timeout."""

    def __init__(self, *args: str, command: list[str] | None = None):
        env = dict(os.environ, PYTHON=sys.executable)
        self.process = subprocess.Popen(
            command or [sys.executable, str(SCRIPT), *args], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1, cwd=REPO_ROOT, env=env)
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.stderr: list[str] = []
        threading.Thread(target=self._pump_stderr, daemon=True).start()

    def _pump(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def _pump_stderr(self) -> None:
        for line in self.process.stderr:
            self.stderr.append(line)

    def send(self, *lines: str) -> None:
        for line in lines:
            self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def read(self, timeout: float = READ_TIMEOUT, skip_messages: bool = True) -> str:
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no answer within {timeout} s; stderr: {''.join(self.stderr)[-2000:]}")
            if line is None:
                raise AssertionError(f"engine exited; stderr: {''.join(self.stderr)[-2000:]}")
            if skip_messages and line.startswith(("MESSAGE", "DEBUG")):
                continue
            return line

    def ask(self, *lines: str, timeout: float = READ_TIMEOUT) -> str:
        self.send(*lines)
        return self.read(timeout)

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.send("END")
                self.process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()


@pytest.fixture
def engine_factory():
    engines: list[Engine] = []

    def make(*args: str, **kwargs) -> Engine:
        engine = Engine(*args, **kwargs)
        engines.append(engine)
        return engine

    yield make
    for engine in engines:
        engine.close()


def parse_move(board: Board, answer: str) -> int:
    x_text, sep, y_text = answer.partition(",")
    assert sep and x_text.isdigit() and y_text.isdigit(), f"not a move: {answer!r}"
    x, y = int(x_text), int(y_text)
    assert 0 <= x < board.width and 0 <= y < board.height, answer
    move = y * board.width + x
    assert board.stone(move) == 0, f"engine played on an occupied point: {answer}"
    return move


def xy(move: int, width: int = 9) -> str:
    return f"{move % width},{move // width}"


def play_game(engine: Engine, engine_first: bool, rng: np.random.Generator) -> Board:
    """A whole game against a random legal mover; every engine answer is checked."""
    board = Board()
    if engine_first:
        board.do_move(parse_move(board, engine.ask("BEGIN")))
    while not board.game_end()[0]:
        ours = int(rng.choice(board.availables))
        board.do_move(ours)
        if board.game_end()[0]:
            break
        board.do_move(parse_move(board, engine.ask(f"TURN {xy(ours)}")))
    return board


# ---------------------------------------------------------------------------- subprocess
def test_full_games_against_a_random_mover(engine_factory):
    engine = engine_factory("--opponent", "pure:200", "--seed", "1")
    assert engine.ask("ABOUT") == ABOUT
    assert engine.ask("START 9") == "OK"
    rng = np.random.default_rng(0)
    board = play_game(engine, engine_first=True, rng=rng)
    ended, winner = board.game_end()
    assert ended
    # Once the game is over, a further move is refused and the engine keeps serving.
    if board.availables:
        assert engine.ask(f"TURN {xy(board.availables[0])}").startswith("ERROR")
    assert engine.ask("RESTART") == "OK"
    board = play_game(engine, engine_first=False, rng=rng)
    assert board.game_end()[0]
    assert engine.ask("ABOUT") == ABOUT


def test_board_command_and_takeback(engine_factory):
    engine = engine_factory("--opponent", "pure:200", "--seed", "2")
    assert engine.ask("START 9") == "OK"
    # Engine moved first (two stones each), listed out of order.
    stones = [(4, 4, 1), (3, 3, 2), (5, 5, 1), (2, 6, 2)]
    answer = engine.ask("BOARD", *(f"{x},{y},{w}" for x, y, w in stones), "DONE")
    parse_move(rebuild_board(9, 9, [40, 50], [30, 56]), answer)
    # A who=3 mark (a five of a continuous game, a forbidden point): refused, not taken for empty.
    marked = engine.ask("BOARD", *(f"{x},{y},{w}" for x, y, w in stones), "0,8,3", "DONE")
    assert marked.startswith("ERROR BOARD: line '0,8,3': who 3 marks a five of a continuous game"), marked
    # Engine moved second (one stone fewer).
    answer = engine.ask("BOARD", "4,4,2", "0,0,1", "8,8,2", "DONE")
    parse_move(rebuild_board(9, 9, [0], [40, 80]), answer)
    # Counts that cannot happen with the engine to move.
    assert engine.ask("BOARD", "4,4,1", "0,0,1", "DONE").startswith("ERROR")
    assert engine.ask("BOARD", "4,4,2", "0,0,2", "1,1,2", "DONE").startswith("ERROR")
    # A position where the opponent already has five in a row.
    five = [f"{x},0,2" for x in range(5)] + [f"{x},8,1" for x in range(4)]
    assert engine.ask("BOARD", *five, "DONE").startswith("ERROR")
    # TAKEBACK of the engine's last move, and of a point that is not the last move.
    answer = engine.ask("BOARD", "4,4,2", "DONE")
    assert answer != "4,4"
    assert engine.ask("TAKEBACK 4,4").startswith("ERROR")
    assert engine.ask(f"TAKEBACK {answer}") == "OK"
    assert engine.ask(f"TAKEBACK {answer}").startswith("ERROR")  # no stone there any more
    assert engine.ask("TURN 8,8") not in ("4,4", "8,8")


@pytest.mark.parametrize("shortcuts", [True, False])
def test_takes_the_win_and_blocks_a_four(engine_factory, shortcuts):
    args = ["--opponent", "minimax:1"] if not shortcuts else ["--opponent", "pure:50"]
    if not shortcuts:
        args.append("--no-shortcuts")
    engine = engine_factory(*args, "--seed", "3")
    assert engine.ask("START 9") == "OK"
    # Own four at (1..4, 2), open at both ends; the opponent has a scattered position.
    own = ["1,2,1", "2,2,1", "3,2,1", "4,2,1"]
    theirs = ["0,7,2", "3,7,2", "6,6,2", "8,0,2"]
    assert engine.ask("BOARD", *own, *theirs, "DONE") in ("0,2", "5,2")
    # The opponent has four in a column at x=6 (rows 1..4), row 0 blocked by our stone: block 6,5.
    own = ["6,0,1", "0,8,1", "2,8,1", "8,4,1"]
    theirs = ["6,1,2", "6,2,2", "6,3,2", "6,4,2", "3,5,2"]
    assert engine.ask("BOARD", *own, *theirs, "DONE") == "6,5"


def test_malformed_input_is_answered_and_survived(engine_factory):
    engine = engine_factory("--opponent", "pure:50", "--seed", "4")
    assert engine.ask("TURN 4,4").startswith("ERROR")  # before START
    assert engine.ask("BEGIN").startswith("ERROR")
    assert engine.ask("hello world").startswith("UNKNOWN")
    assert engine.ask("START abc").startswith("ERROR")
    assert engine.ask("START 3").startswith("ERROR")
    assert engine.ask("RECTSTART 9x9").startswith("ERROR")
    assert engine.ask("START 9") == "OK"
    assert engine.ask("\x00\x01garbage ,,,").startswith("UNKNOWN")
    for bad in ("TURN 99,99", "TURN a,b", "TURN -1,0", "TURN 4", "TURN", "TURN 1,2,3"):
        assert engine.ask(bad).startswith("ERROR"), bad
    reply = engine.ask("TURN 4,4")
    board = Board()
    board.do_move(40)
    board.do_move(parse_move(board, reply))
    assert engine.ask("TURN 4,4").startswith("ERROR")  # occupied
    assert engine.ask(f"TURN {reply}").startswith("ERROR")  # occupied by the engine
    assert engine.ask("BEGIN").startswith("ERROR")  # not an empty board
    # A BOARD block broken by a non-stone line is abandoned; that line then runs as a command.
    engine.send("BOARD", "1,1,1", "ABOUT")
    assert engine.read().startswith("ERROR")
    assert engine.read() == ABOUT
    assert engine.ask("BOARD", "1,1,7", "DONE").startswith("ERROR")
    assert engine.ask("BOARD", "1,1", "DONE").startswith("ERROR")
    assert engine.ask("BOARD", "10,1,2", "DONE").startswith("ERROR")
    # A good INFO gets no answer at all: unknown keys, the ignored ones; a malformed value is refused.
    engine.send("INFO evaluate 3,4", "INFO folder /tmp", "INFO some_future_key 1", "INFO max_memory 83886080",
                "INFO game_type 0", "INFO timeout_match 0", "INFO time_left 100000")
    assert engine.ask("ABOUT") == ABOUT
    assert engine.ask("INFO timeout_turn soon").startswith("ERROR INFO timeout_turn expects an integer")
    assert engine.ask("INFO").startswith("ERROR INFO without a key")
    # Still playing the same game.
    board.do_move(0)
    parse_move(board, engine.ask("TURN 0,0"))


def test_rules_other_than_freestyle_are_refused(engine_factory):
    engine = engine_factory("--opponent", "pure:50")
    assert engine.ask("START 9") == "OK"
    # INFO rule is not answered (the manager reads nothing after INFO); the moves asked for under
    # a rule this engine cannot play are refused until a playable rule.
    for rule in (1, 4, 8):  # exactly five, renju, caro
        engine.send(f"INFO rule {rule}")
        assert engine.ask("BEGIN").startswith(f"ERROR rule {rule} ")
    engine.send("INFO rule 2")  # continuous game: freestyle play is fine, no answer
    assert engine.ask("ABOUT") == ABOUT
    first = engine.ask("BEGIN")
    parse_move(Board(), first)
    # A TURN refused for its rule puts no stone on: sent again under a playable rule, it is played.
    engine.send("INFO rule 4")
    free = "0,0" if first != "0,0" else "8,8"
    assert engine.ask(f"TURN {free}").startswith("ERROR rule 4")
    engine.send("INFO rule 0")
    assert not engine.ask(f"TURN {free}").startswith("ERROR")
    # A refused START leaves no game: BEGIN is refused too, until a START that is answered OK.
    assert engine.ask("START 40").startswith("ERROR")
    assert engine.ask("BEGIN").startswith("ERROR")
    assert engine.ask("START 9") == "OK"
    parse_move(Board(), engine.ask("BEGIN"))


def test_end_exits_even_while_searching(engine_factory):
    """END ends the engine, idle or in a search with no time limit that would take hours (the
    waits are hang guards: the protocol asks for an exit within a second)."""
    engine = engine_factory("--opponent", "random")
    assert engine.ask("ABOUT") == ABOUT
    engine.send("END")
    assert engine.process.wait(timeout=30) == 0
    engine = engine_factory("--opponent", f"pure:{UNREACHABLE_PLAYOUTS}")
    assert engine.ask("START 9") == "OK"
    engine.send("BEGIN")
    time.sleep(0.3)  # let the search start
    engine.send("END")
    assert engine.process.wait(timeout=30) == 0


def test_timeout_turn_cuts_the_search(engine_factory):
    """Under INFO timeout_turn the engine answers from the playouts it made in time, far fewer
    than asked for (counted in its report, not timed here)."""
    engine = engine_factory("--opponent", f"pure:{UNREACHABLE_PLAYOUTS}")
    assert engine.ask("START 9") == "OK"
    engine.send("INFO timeout_turn 500", "BEGIN")
    report = engine.read(skip_messages=False)
    playouts = re.fullmatch(r"MESSAGE (\d+) playouts in \d+ ms, value [-+]\d\.\d\d", report)
    assert playouts and 0 < int(playouts.group(1)) < UNREACHABLE_PLAYOUTS, report
    parse_move(Board(), engine.read())


def test_pbrain_wrapper_script(engine_factory):
    engine = engine_factory(command=[str(WRAPPER), "--opponent", "random"])
    assert engine.ask("ABOUT") == ABOUT


@pytest.fixture(scope="module")
def random_model(tmp_path_factory):
    from nets import NetConfig, build_net, save_model

    model = tmp_path_factory.mktemp("pbrain") / "random.pt"
    save_model(model, build_net(NetConfig()))
    return model


def test_az_model_plays_9x9_and_other_sizes_only_with_a_fallback(engine_factory, random_model):
    engine = engine_factory("--model", str(random_model), "--playouts", "64", "--seed", "5",
                            "--fallback", "pure:100")
    assert engine.ask("START 9", timeout=40) == "OK"
    board = Board()
    board.do_move(parse_move(board, engine.ask("BEGIN")))
    board.do_move(next(m for m in (40, 30, 50) if board.stone(m) == 0))
    parse_move(board, engine.ask(f"TURN {xy(board.last_move)}"))
    # Other sizes are played by pure MCTS, announced in a MESSAGE line.
    engine.send("START 15")
    assert engine.read(skip_messages=False).startswith("MESSAGE")
    assert engine.read() == "OK"
    parse_move(Board(15, 15), engine.ask("BEGIN"))
    assert engine.ask("START 9") == "OK"
    parse_move(Board(), engine.ask("BEGIN"))


def test_az_model_refuses_other_sizes_without_a_fallback(random_model):
    out: list[str] = []
    engine = PbrainEngine(EngineOptions(model=random_model, playouts=32, seed=6), write=out.append)
    for line, expected in (("START 15", "ERROR"), ("RECTSTART 9,7", "ERROR"), ("START 9", "OK"),
                           ("BEGIN", None), ("START 20", "ERROR")):
        engine.handle_line(line)
        if expected is None:  # a move on the 9x9 board it accepted
            assert parse_move(Board(), out[-1]) in range(81), (line, out)
        else:
            assert out[-1].startswith(expected), (line, out)
    assert engine.handle_line("END") is False


def test_without_a_model_asked_for_the_model_named_for_the_board_plays_it(tmp_path, monkeypatch):
    """START 13 beside models/13x13.pt plays that model, as the window does; START 9 the default
    one; a size with no model of its own falls to the default (here an fc net: ERROR). A model
    asked for with --model is never swapped."""
    import gomoku.pbrain.loader as loader_module
    from nets import NetConfig, build_net, save_model

    save_model(tmp_path / "9x9.pt", build_net(NetConfig()))
    save_model(tmp_path / "13x13.pt", build_net(NetConfig(13, 13, "resnet", channels=8, blocks=1, head="pooled")))
    monkeypatch.setattr(loader_module, "DEFAULT_MODEL", tmp_path / "9x9.pt")
    out: list[str] = []
    engine = PbrainEngine(EngineOptions(playouts=8, seed=0), write=out.append)
    engine.handle_line("START 13")
    assert out[-2] == "MESSAGE playing 13x13 with 13x13.pt, the model for that board" and out[-1] == "OK", out
    engine.handle_line("BEGIN")
    assert parse_move(Board(13, 13), out[-1]) in range(169) and "13x13.pt" in engine.player.name
    engine.handle_line("START 9")
    assert out[-1] == "OK" and "9x9.pt" in engine.player.name
    engine.handle_line("START 11")
    assert out[-1].startswith("ERROR") and "11x11" in out[-1], out
    asked = PbrainEngine(EngineOptions(model=tmp_path / "9x9.pt", playouts=8), write=out.append)
    asked.handle_line("START 13")
    assert out[-1].startswith("ERROR"), out
    for each in (engine, asked):
        each.close()


def test_missing_model_is_an_error_at_start(engine_factory, tmp_path):
    engine = engine_factory("--model", str(tmp_path / "nothing.pt"))
    assert engine.ask("START 9").startswith("ERROR")
    assert engine.ask("ABOUT") == ABOUT


@pytest.mark.parametrize("option", ["--opponent", "--fallback"])
def test_a_bad_player_spec_is_a_one_line_command_line_error(option):
    done = subprocess.run([sys.executable, str(SCRIPT), option, "foo:3"], input="", capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[-1] == "pbrain.py: error: bad player spec 'foo:3' (see --help for the valid forms)"


def test_a_negative_seed_is_a_command_line_error(capsys):
    """numpy refused it later, "expected non-negative integer", naming no option."""
    from tests.fakes import load_script

    with pytest.raises(SystemExit) as refused:
        load_script("pbrain").parse_args(["--seed", "-3"])
    assert refused.value.code == 2 and capsys.readouterr().err.splitlines()[-1].endswith(
        ": error: --seed must be at least 0, got -3")


# ---------------------------------------------------------------------------- in-process
def test_rebuild_board_colours_and_order():
    board = rebuild_board(9, 9, own=[40, 41], theirs=[0, 1])
    assert board.current_player == board.start_player  # engine moved first: it is to move
    assert board.stone(40) == board.start_player and board.stone(0) != board.start_player
    board = rebuild_board(9, 9, own=[40], theirs=[0, 1])
    assert board.stone(40) == board.current_player and board.stone(0) != board.current_player
    # Listed alternately (as in the real game): that is the history, last move included.
    board = rebuild_board(9, 9, own=[40, 41], theirs=[0, 1], order=[1, 2, 1, 2])
    assert board.moves == [40, 0, 41, 1]
    with pytest.raises(ProtocolError):
        rebuild_board(9, 9, own=[1, 2, 3], theirs=[4])
    assert rebuild_board(9, 9, [], []).moves == []


def test_forced_move_and_time_budget():
    # First player: row 0, cols 0..3; second: row 1, cols 0..2. Second to move must block at 4.
    assert forced_move(Board.from_moves([0, 9, 1, 10, 2, 11, 3])) == 4
    # Both have four; the side to move wins rather than blocks.
    assert forced_move(Board.from_moves([0, 9, 1, 10, 2, 11, 3, 12])) == 4
    assert forced_move(Board.from_moves([0, 9, 1, 10, 2, 11, 3, 12, 80])) == 13
    assert forced_move(Board.from_moves([40, 0])) is None
    engine = PbrainEngine(EngineOptions(player_spec="random"), write=lambda line: None)
    assert engine.think_seconds(Board()) is None
    engine.handle_line("INFO timeout_turn 1000")
    assert engine.think_seconds(Board()) == pytest.approx(0.9) and engine.answer_seconds(Board()) == pytest.approx(0.95)
    engine.handle_line("INFO timeout_match 60000")
    engine.handle_line("INFO time_left 5000")
    # 81 empty points: 25 moves left at most, plus the reserve; less the margin (at least 50 ms).
    share = 5.0 / (budget.MOVES_LEFT_MAX + budget.MOVES_LEFT_RESERVE)
    assert engine.think_seconds(Board()) == pytest.approx(share - 0.05)
    engine.handle_line("INFO time_left 100000")  # the turn time is the smaller limit again
    assert engine.think_seconds(Board()) == pytest.approx(0.9)
    engine.handle_line("INFO timeout_match 0")  # no match limit: time_left does not count
    engine.handle_line("INFO time_left 10")
    assert engine.think_seconds(Board()) == pytest.approx(0.9)
    engine.handle_line("INFO timeout_turn 0")  # play fast
    assert engine.time_limit(Board()) == budget.FAST_TURN


def test_onnx_option_falls_back_to_torch_without_onnxruntime(random_model, monkeypatch):
    import nets.onnx_export

    def missing(module):
        raise ImportError(f"{module} is not installed")

    monkeypatch.setattr(nets.onnx_export, "require", missing)  # what nets.loading checks first
    out: list[str] = []
    engine = PbrainEngine(EngineOptions(model=random_model, playouts=16, onnx=True), write=out.append)
    engine.handle_line("START 9")
    assert out[0].startswith("MESSAGE") and "torch" in out[0] and out[-1] == "OK"
    assert "onnxruntime" not in engine.player.name
    # An .onnx model cannot run without onnxruntime at all: an ERROR, not a crash.
    engine = PbrainEngine(EngineOptions(model=random_model.with_suffix(".onnx"), playouts=16), write=out.append)
    random_model.with_suffix(".onnx").write_bytes(b"not really")
    engine.handle_line("START 9")
    assert out[-1].startswith("ERROR")


# ---------------------------------------------------------------------------- bad bytes, clock, rules
def fuzz_lines(rng: np.random.Generator, count: int) -> list[bytes]:
    """Lines a broken or hostile manager might send: random bytes, and commands with bad bytes."""
    commands = [b"START 9", b"TURN 4,4", b"BOARD", b"INFO timeout_turn 100", b"INFO rule 0", b"ABOUD",
                b"TAKEBACK 1,1", b"RESTART", b"DONE", b"1,1,1", b"RECTSTART 9,9", b"BEGIN"]  # no ABOUT: it marks
    # the end of each line's answers in the subprocess test
    specials = [b"\xff", b"\xfe\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xef\xbb\xbf", b"\x00",
                b"\r", b"\x1b[2J", b"\xe2\x82", "\u0664,\u0664".encode(), b" " * 3]
    lines = []
    for _ in range(count):
        kind = rng.integers(4)
        if kind == 0:
            line = bytes(rng.integers(0, 256, size=int(rng.integers(0, 40)), dtype=np.uint8))
        elif kind == 1:  # a command with a bad sequence spliced in
            base = commands[rng.integers(len(commands))]
            cut = int(rng.integers(len(base) + 1))
            line = base[:cut] + specials[rng.integers(len(specials))] + base[cut:]
        elif kind == 2:
            line = b"".join(specials[i] for i in rng.integers(len(specials), size=int(rng.integers(1, 4))))
        else:
            line = commands[rng.integers(len(commands))]
        line = line.replace(b"\n", b"").replace(b"\r", b"\\r")
        if line.strip().upper() == b"END":
            continue
        lines.append(line)
    lines.append(b"x" * 10_000)  # far longer than a command can be
    return lines


ANSWER_PREFIXES = ("ERROR", "UNKNOWN", "MESSAGE", "DEBUG", "OK", "name=")


def test_byte_fuzz_under_a_strict_utf8_decoder(tmp_path):
    """Every line, decodable or not, is answered or ignored, and the engine keeps serving."""
    env = dict(os.environ, PYTHONIOENCODING="utf-8")  # strict decoding, as on a UTF-8 desktop
    process = subprocess.Popen([sys.executable, str(SCRIPT), "--opponent", "random", "--seed", "7"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               cwd=REPO_ROOT, env=env)
    answers: queue.Queue[bytes | None] = queue.Queue()

    def pump():
        for line in process.stdout:
            answers.put(line)
        answers.put(None)

    threading.Thread(target=pump, daemon=True).start()

    def until_about() -> list[str]:
        seen = []
        while True:
            raw = answers.get(timeout=READ_TIMEOUT)
            assert raw is not None, f"engine exited; stderr: {process.stderr.read().decode(errors='replace')[-2000:]}"
            assert raw.endswith(b"\n") and raw.isascii(), raw
            text = raw.decode("ascii").rstrip("\n")
            if text == ABOUT:
                return seen
            seen.append(text)

    try:
        for line in fuzz_lines(np.random.default_rng(12), 300):
            process.stdin.write(line + b"\nABOUT\n")
            process.stdin.flush()
            for answer in until_about():
                is_move = answer.replace(",", "").isdigit()
                assert answer.startswith(ANSWER_PREFIXES) or is_move, (line, answer)
        # One undecodable byte gets its own ERROR, and play goes on.
        process.stdin.write(b"\xff\nSTART 9\nBEGIN\nABOUT\n")
        process.stdin.flush()
        seen = until_about()
        assert seen[0].startswith("ERROR") and "UTF-8" in seen[0] and seen[1] == "OK", seen
        parse_move(Board(), seen[2])
        process.stdin.write(b"END\n")
        process.stdin.flush()
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_in_process_fuzz_never_raises_and_answers_ascii_lines():
    out: list[str] = []
    engine = PbrainEngine(EngineOptions(player_spec="random", seed=1), write=out.append)
    for line in fuzz_lines(np.random.default_rng(3), 2000):
        assert engine.handle_line(line) is True, line
    assert all(answer.isascii() and "\n" not in answer for answer in out)
    assert engine.handle_line(b"\xef\xbb\xbfEND\r\n") is False  # a byte-order mark and CRLF are fine


def test_protocol_parses_lines_into_records():
    from gomoku.pbrain import protocol as p

    assert p.parse_line(b"start 9\r\n") == p.Start(9, 9)
    assert p.parse_line("RECTSTART 9, 7") == p.Start(9, 7)
    assert p.parse_line(b"TURN 3,4") == p.Turn(3, 4)
    assert p.parse_line(b"INFO timeout_turn 500") == p.Info("timeout_turn", "500", 500)
    assert p.parse_line(b"INFO folder /tmp/x y") == p.Info("folder", "/tmp/x y")
    assert isinstance(p.parse_line(b"INFO timeout_turn 1_000"), p.BadInfo)
    assert isinstance(p.parse_line("TURN \u0664,\u0664"), p.Malformed)  # Arabic-Indic digits are not moves
    assert isinstance(p.parse_line(b"TURN 4,\xff4"), p.Undecodable)
    assert isinstance(p.parse_line(b"a" * (p.MAX_LINE_BYTES + 1)), p.Undecodable)
    assert p.parse_line(b"HELLO there") == p.Unknown("HELLO")
    assert p.parse_line(b"  ") == p.Blank()
    assert p.parse_line(b"1,2,1", in_board=True) == p.Stone("1,2,1")
    assert p.parse_line(b"done", in_board=True) == p.Done()
    assert p.parse_line(b"ABOUT", in_board=True) == p.NotAStone("ABOUT")
    assert p.encode_answer("UNKNOWN command 'h\u00e9'\n") == b"UNKNOWN command 'h\\xe9'\n"


class SlowRounds:
    """A search player whose second round takes far longer than any turn: the engine must answer
    with the first round's statistics at the hard deadline."""

    name = "slow"

    def __init__(self):
        self.release = threading.Event()

    def reset(self):
        pass

    def analyse(self, board, on_progress=None, should_stop=None, time_left=None, playouts=None):
        from mcts import SearchResult

        visits = np.zeros(board.width * board.height)
        visits[board.legal_moves()[0]] = 1
        result = SearchResult(visits=visits, priors=visits, value=0.0, playouts=1)
        if on_progress is not None:
            on_progress(result)
        self.release.wait(timeout=10)  # the long round
        return result


def test_answers_by_the_hard_deadline_when_a_round_overruns():
    """Past the hard deadline the engine answers from the round's statistics so far, leaving the
    round running (its clock is fake: the move was received 1 s ago, the turn is 300 ms)."""
    out: list[str] = []
    now = [0.0]
    engine = PbrainEngine(EngineOptions(player_spec="random", shortcuts=False, report=False),
                          write=out.append, clock=lambda: now[0])
    engine.handle_line("START 9")
    slow = engine.player = SlowRounds()
    engine.handle_line("INFO timeout_turn 300")
    now[0] = 1.0
    engine.handle_line("TURN 8,8", received_at=0.0)
    assert out[-1] == "0,0", out  # the round's best move, answered while the round runs on
    assert engine._search_thread is not None and engine._search_thread.is_alive()
    slow.release.set()  # the next command waits for the round left running, then goes on
    engine.handle_line("TURN 8,7")
    assert out[-1] == "1,0"


def test_net_runs_on_one_torch_thread_unless_told(random_model):
    import torch

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        engine = PbrainEngine(EngineOptions(model=random_model, playouts=8), write=lambda line: None)
        engine.handle_line("START 9")
        assert torch.get_num_threads() == 1
        engine = PbrainEngine(EngineOptions(model=random_model, playouts=8, threads=2), write=lambda line: None)
        engine.handle_line("START 9")
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_a_model_for_four_in_a_row_does_not_play_five(tmp_path):
    from nets import NetConfig, build_net, save_model

    model = tmp_path / "four.pt"
    save_model(model, build_net(NetConfig()), n_in_row=4)
    out: list[str] = []
    engine = PbrainEngine(EngineOptions(model=model, playouts=8), write=out.append)
    engine.handle_line("START 9")
    assert out[-1].startswith("ERROR") and "trained for 4 in a row" in out[-1], out
    engine = PbrainEngine(EngineOptions(model=model, playouts=8, fallback_spec="pure:20"), write=out.append)
    engine.handle_line("START 9")
    assert out[-2].startswith("MESSAGE") and "4 in a row" in out[-2] and out[-1] == "OK", out
    assert engine.player.name == "pure:20"


def test_default_model_is_the_shipped_one():
    from gomoku.pbrain.loader import DEFAULT_MODEL

    assert DEFAULT_MODEL == REPO_ROOT / "models" / "9x9.pt"


def test_the_default_model_plays_from_its_int8_export_on_onnxruntime(tmp_path, monkeypatch):
    """Without --model the engine plays models/9x9.pt from models/9x9-int8.onnx beside it (the
    shipped pair); with --torch, or without that file, from the .pt itself."""
    import gomoku.pbrain.loader as loader_module

    shipped = REPO_ROOT / "models" / "9x9.pt"
    assert loader_module.default_net(shipped, onnx=True) == REPO_ROOT / "models" / "9x9-int8.onnx"
    engine = PbrainEngine(EngineOptions(playouts=8, seed=0), write=[].append)
    engine.handle_line("START 9")
    assert "9x9-int8.onnx" in engine.player.name and "(onnxruntime)" in engine.player.name
    torch_engine = PbrainEngine(EngineOptions(playouts=8, seed=0, onnx=False), write=[].append)
    torch_engine.handle_line("START 9")
    assert "9x9.pt" in torch_engine.player.name and "(torch)" in torch_engine.player.name
    (tmp_path / "9x9.pt").write_bytes((REPO_ROOT / "models" / "9x9.pt").read_bytes())
    monkeypatch.setattr(loader_module, "DEFAULT_MODEL", tmp_path / "9x9.pt")
    alone = PbrainEngine(EngineOptions(playouts=8, seed=0), write=[].append)
    alone.handle_line("START 9")
    assert str(tmp_path / "9x9.pt") in alone.player.name


# ---------------------------------------------------------------------------- clock, memory, START
@pytest.mark.parametrize("script", [b"START 9\nEND\n", b"START 15\n"])
def test_start_is_answered_whatever_follows(script):
    """END (or the end of input) right after START, while the default model loads: START is still
    answered (15x15 by models/15x15.pt, the model named for that board)."""
    done = subprocess.run([sys.executable, str(SCRIPT)], input=script, capture_output=True, timeout=120, cwd=REPO_ROOT)
    answers = [line for line in done.stdout.decode().splitlines() if not line.startswith("MESSAGE")]
    assert answers == ["OK"] and done.returncode == 0, (done.stdout, done.stderr[-2000:])


def test_start_moves_the_loaded_objects_out_of_the_collectors_reach():
    """A collection of the oldest generation walked every object of the loaded player (167 ms in
    the middle of a move: answers 123 ms past a 1000 ms turn): after START they are frozen."""
    import gc

    gc.unfreeze()
    try:
        engine = PbrainEngine(EngineOptions(player_spec="random"), write=[].append)
        engine.handle_line("START 9")
        assert gc.get_freeze_count() > 1000
        assert not any(o is engine.__dict__ for o in gc.get_objects())  # frozen: no collection walks it
        engine.handle_line("BEGIN")
        other = ["made after START"]  # a list is always tracked
        assert any(o is other for o in gc.get_objects())  # what comes later is collected as before
    finally:
        gc.unfreeze()


def test_max_memory_bounds_the_search_tree():
    from gomoku.players.search import tree_bytes_per_playout

    out: list[str] = []
    engine = PbrainEngine(EngineOptions(player_spec="pure:300000", seed=1), write=out.append)
    for line in ("START 32", "INFO timeout_turn 200"):
        engine.handle_line(line)
    assert engine.tree_bytes() == budget.DEFAULT_TREE_BYTES  # bounded even without max_memory
    engine.handle_line(f"INFO max_memory {engine._base_memory + 100 * 2**20}")
    assert engine.tree_bytes() == int(budget.TREE_SHARE * 100 * 2**20)
    engine.handle_line("BEGIN")
    assert out[-1].count(",") == 1, out
    engine.close()  # a search still running its round at the deadline (a loaded machine) ends
    search = engine.player._search
    cap = int(engine.tree_bytes() // tree_bytes_per_playout(32, 32, 5))
    assert search.config.n_playout == cap < 300000
    arrays = (search.prior, search.visits, search.value_sum, search.children, search.node_visits)
    assert sum(a.nbytes for a in arrays) <= engine.tree_bytes() * 1.01
    engine.handle_line(f"INFO max_memory {engine._base_memory // 2}")  # less than the process takes
    assert engine.tree_bytes() == budget.MIN_TREE_BYTES
    engine.handle_line("INFO max_memory 100000000000000")  # 100 TB: the default stays, no failed allocation
    assert engine.tree_bytes() == budget.DEFAULT_TREE_BYTES
    engine.handle_line("INFO max_memory 0")  # no limit: the default budget
    assert engine.tree_bytes() == budget.DEFAULT_TREE_BYTES


def test_no_playout_cap_under_a_clock_and_the_tree_is_kept(random_model):
    out: list[str] = []
    engine = PbrainEngine(EngineOptions(model=random_model, seed=2, report=True, onnx=False), write=out.append)
    engine.handle_line("START 9")
    player = engine.player
    assert player.n_playout is None and engine.loaded.untimed_playouts == AZ_PLAYOUTS
    engine.handle_line("INFO timeout_turn 300")
    engine.handle_line(f"INFO max_memory {engine._base_memory + 20 * 2**20}")
    engine.handle_line("BEGIN")
    assert out[-2].startswith(f"MESSAGE {player.last_result.playouts} playouts")
    # The evaluation cache (on by default) gets its share of the memory too.
    from mcts.evaluators import CachedEvaluator, cache_entry_bytes

    assert isinstance(player.evaluator, CachedEvaluator) and player.evaluator.misses > 0
    entries = int(budget.CACHE_SHARE * engine.tree_bytes() // cache_entry_bytes(81))
    assert player.evaluator.max_entries == entries < engine.options.cache
    # A cap asked for, and without a clock that many playouts; the tree is kept from move to move.
    capped = PbrainEngine(EngineOptions(model=random_model, playouts=200, seed=2, onnx=False, shortcuts=False),
                          write=out.append)
    for line in ("START 9", "BOARD", "0,0,2", "0,1,1", "1,0,2", "1,1,1", "2,0,2", "2,1,1", "3,0,2", "DONE"):
        capped.handle_line(line)  # the block at 4,0 is the only move: every playout goes below it
    assert out[-1] == "4,0"
    player = capped.player
    first = player.last_result
    assert first.playouts == 200 and player.n_playout == 200
    search = player._search
    node = search.children[0, 0, first.best_move()]
    children = search.children[0, node]
    reply = int(np.argmax(np.where(children >= 0, search.node_visits[0, children], 0)))  # its deepest reply
    assert search.node_visits[0, children[reply]] >= 2  # searched below (edge visits there)
    capped.handle_line(f"TURN {xy(reply)}")
    second = player.last_result
    assert second.visits.sum() > second.playouts  # the subtree under the two moves was kept


def test_the_models_search_runs_the_net_on_its_own_thread_unless_asked_to_pipeline(random_model):
    """The engine's search runs the net on its own thread (one core: faster here than the pipeline,
    docs/engine.md); --pipeline (with leaves above 1) puts the net on a thread of its own. Either
    way its rounds under a clock are at most TIMED_ROUND_MAX_PLAYOUTS."""
    states = {}
    for name, options in (("default", {}), ("pipeline", {"pipeline": True}),
                          ("one leaf", {"leaves": 1, "pipeline": True})):
        engine = PbrainEngine(EngineOptions(model=random_model, seed=1, onnx=False, **options), write=lambda line: None)
        engine.handle_line("START 9")
        states[name] = (engine.player.config.pipeline, engine.player.ROUND_PLAYOUTS)
    assert states == {"default": (False, TIMED_ROUND_MAX_PLAYOUTS), "pipeline": (True, TIMED_ROUND_MAX_PLAYOUTS),
                      "one leaf": (False, TIMED_ROUND_MAX_PLAYOUTS)}
    from tests.fakes import load_script

    assert load_script("pbrain").parse_args(["--pipeline"]).pipeline
    assert not load_script("pbrain").parse_args(["--no-pipeline"]).pipeline
    assert not load_script("pbrain").parse_args([]).pipeline


def test_a_decided_move_stops_the_search_early(random_model):
    out: list[str] = []
    engine = PbrainEngine(EngineOptions(model=random_model, shortcuts=False, seed=3, onnx=False), write=out.append)
    for line in ("START 9", "INFO timeout_turn 30000", "BOARD", "0,0,2", "0,1,1", "1,0,2", "1,1,1", "2,0,2",
                 "2,1,1", "3,0,2", "DONE"):
        engine.handle_line(line)
    assert out[-1] == "4,0"  # the only move that does not lose at once (forced-move rules)...
    assert engine.player.last_result.playouts == TIMED_ROUND_PLAYOUTS  # ...after one round, a short one


# ---------------------------------------------------------------------------- INFO, blocks, END, limits
def test_info_is_answered_only_when_refused(caplog):
    """A good INFO gets no answer; a bad value is answered ERROR and the previous value kept; an
    unplayable rule refuses the moves asked for under it (a BOARD too, leaving the position as it was)."""
    out: list[str] = []
    engine = PbrainEngine(EngineOptions(player_spec="random", seed=1), write=out.append)
    engine.handle_line("START 9")
    for line in ("INFO rule 1", "INFO rule 4"):
        assert engine.handle_line(line) is True
    assert out == ["OK"]
    bad = ("INFO timeout_turn 1000ms", "INFO time_left soon", "INFO", "INFO max_memory 1e9", "INFO rule \u0661")
    for line in bad:  # refused: ERROR, and the previous value kept
        assert engine.handle_line(line) is True
    assert len(out) == 1 + len(bad) and all(line.startswith("ERROR ") for line in out[1:])
    assert engine.rule == 4 and engine.timeout_turn is None and engine.time_left is None and engine.max_memory is None
    assert "INFO timeout_turn expects an integer, got '1000ms'; the previous value is kept" in caplog.text
    del out[1:]
    engine.handle_line("BEGIN")
    assert out[-1] == "ERROR rule 4 (renju) is not supported; send INFO rule 0"
    for line in ("BOARD", "4,4,2", "DONE"):
        engine.handle_line(line)
    assert out[-1] == "ERROR rule 4 (renju) is not supported; send INFO rule 0"
    engine.handle_line("INFO rule 0")
    engine.handle_line("BEGIN")  # the refused BOARD left the board empty
    assert len(out) == 4 and engine.board.moves == [parse_move(Board(), out[-1])]


def test_swap2board_is_one_block_answered_once():
    out: list[str] = []
    engine = PbrainEngine(EngineOptions(player_spec="random", seed=1), write=out.append)
    for line in ("START 9", "SWAP2BOARD", "7,7", "", "8,8", "6,6", "DONE"):
        engine.handle_line(line)
    assert out == ["OK", "UNKNOWN command 'SWAP2BOARD'"]
    # Broken by a line that is not a stone: answered, and that line runs as a command of its own.
    for line in ("SWAP2BOARD", "7,7", "ABOUT"):
        engine.handle_line(line)
    assert out[2:] == ["UNKNOWN command 'SWAP2BOARD'", ABOUT]
    engine.handle_line("TURN 0,0")  # the blocks left the game as it was
    assert engine.board.moves[0] == 0 and len(engine.board.moves) == 2 and len(out) == 5


def serve_bytes(script: bytes, engine: PbrainEngine) -> list[str]:
    """The lines ``serve`` writes for ``script`` (the join is a hang guard)."""
    stdout = io.BytesIO()
    thread = threading.Thread(target=serve, args=(engine, io.BytesIO(script), stdout), daemon=True)
    thread.start()
    thread.join(timeout=60)
    assert not thread.is_alive(), "serve did not return"
    return stdout.getvalue().decode("ascii").splitlines()


class LiveServe:
    """``serve`` on a pipe that stays open: lines are sent one at a time, answers read as they come."""

    def __init__(self, engine: PbrainEngine):
        read_end, self._write_end = os.pipe()
        self.engine = engine
        self.answers: queue.Queue[str] = queue.Queue()
        self._stdin = os.fdopen(read_end, "rb")
        self.thread = threading.Thread(target=serve, args=(engine, self._stdin, self), daemon=True)
        self.thread.start()

    def write(self, data: bytes) -> None:  # serve()'s stdout
        for line in data.decode("ascii").splitlines():
            self.answers.put(line)

    def flush(self) -> None:
        pass

    def send(self, line: str) -> None:
        os.write(self._write_end, line.encode() + b"\n")

    def read(self, skip_messages: bool = True) -> str:
        while True:
            line = self.answers.get(timeout=READ_TIMEOUT)
            if not (skip_messages and line.startswith("MESSAGE")):
                return line

    def close(self) -> list[str]:
        """End the input; the answers not read yet."""
        os.close(self._write_end)
        self.thread.join(timeout=60)
        assert not self.thread.is_alive(), "serve did not return"
        self._stdin.close()
        return list(self.answers.queue)


def test_nothing_is_written_after_an_end_that_came_during_the_search():
    """A search that only END can stop (far more playouts than any machine makes) is not answered
    once END came while it ran."""
    options = EngineOptions(player_spec=f"pure:{UNREACHABLE_PLAYOUTS}", seed=1, report=True)
    live = LiveServe(PbrainEngine(options))
    live.send("START 9")
    assert live.read() == "OK"
    searching = threading.Event()
    player = live.engine.player
    analyse = player.analyse
    player.analyse = lambda *args, **kwargs: (searching.set(), analyse(*args, **kwargs))[1]
    live.send("TURN 4,4")
    assert searching.wait(READ_TIMEOUT)
    live.send("END")
    assert live.close() == []


@pytest.mark.parametrize("ending", [b"END\n", b""])
def test_commands_read_before_end_are_answered_in_full(ending):
    """``START 9``, ``BEGIN``, ``END`` piped in at once: BEGIN is answered (its move was not written
    when END had been read before it was handled); so is a TURN whose search only END (or the end
    of input) would stop: it searches for ENDING_SECONDS."""
    options = EngineOptions(player_spec=f"pure:{UNREACHABLE_PLAYOUTS}", seed=1)
    assert serve_bytes(b"START 9\nBEGIN\n" + ending, PbrainEngine(options)) == ["OK", "4,4"]
    engine = PbrainEngine(dataclasses.replace(options, report=True))
    answers = serve_bytes(b"START 9\nTURN 4,4\n" + ending, engine)
    assert answers[0] == "OK" and len(answers) == 3, answers
    assert re.fullmatch(r"MESSAGE \d+ playouts in \d+ ms, value [-+]\d\.\d\d", answers[1])
    assert engine.player.last_result.playouts > 0
    parse_move(Board.from_moves([40]), answers[2])


def test_a_turns_clock_starts_when_the_engine_can_search(monkeypatch):
    """A TURN read while START was still loading (a piped game) has its whole time to search:
    its clock started when START was answered, not when the line was read."""
    options = EngineOptions(player_spec=f"pure:{UNREACHABLE_PLAYOUTS}", seed=1, report=True)
    live = LiveServe(PbrainEngine(options))
    slow_start = threading.Event()
    monkeypatch.setattr(engine_module, "freeze_loaded_objects", lambda: slow_start.wait(READ_TIMEOUT))
    live.send("START 9")
    live.send("INFO timeout_turn 300")
    live.send("TURN 4,4")  # all read while START is still busy: a turn's time passes before it is handled
    while live.engine.stop_event is None or live.engine.stop_event.taken < 1:
        time.sleep(0.01)  # until START is taken up...
    time.sleep(0.5)  # ...and longer than the turn's time
    slow_start.set()
    assert live.read() == "OK"
    report = live.read(skip_messages=False)
    assert re.fullmatch(r"MESSAGE \d+ playouts in \d+ ms, value [-+]\d\.\d\d", report), report
    parse_move(Board.from_moves([40]), live.read())
    live.close()


def test_info_out_of_range_is_refused_and_the_previous_value_kept():
    out: list[str] = []
    engine = PbrainEngine(EngineOptions(player_spec="random"), write=out.append)
    engine.handle_line("INFO timeout_turn 1000")
    for key in ("timeout_turn", "timeout_match", "max_memory", "rule", "game_type"):
        assert engine.handle_line(f"INFO {key} -5") is True
        assert out[-1] == f"ERROR INFO {key} must be at least 0, got -5; the previous value is kept"
    assert engine.timeout_turn == 1000 and engine.timeout_match is None and engine.max_memory is None
    assert engine.rule == 0 and engine.game_type is None
    assert engine.handle_line("INFO time_left -5") is True and len(out) == 5  # a manager may report an overrun


def test_end_with_an_argument_is_refused_and_the_engine_goes_on():
    out: list[str] = []
    engine = PbrainEngine(EngineOptions(player_spec="random"), write=out.append)
    for line in ("END x", "BEGIN now", "ABOUT please"):
        assert engine.handle_line(line) is True
    word = line.split()[1]
    assert out[0] == "ERROR END takes no argument, got 'x'" and out[2] == f"ERROR ABOUT takes no argument, got {word!r}"
    assert serve_bytes(b"END x\nABOUT\n", PbrainEngine(EngineOptions(player_spec="random")))[-1] == ABOUT


@pytest.mark.parametrize(("size", "centre"), [(9, "4,4"), (15, "7,7"), (20, "10,10")])
def test_the_first_move_of_a_game_is_the_centre(size, centre):
    """START 20 + BEGIN played 4,14 (and 15x15 opened at L13): flat priors on an empty board."""
    out: list[str] = []
    engine = PbrainEngine(EngineOptions(player_spec="random", seed=3), write=out.append)
    for line in (f"START {size}", "BEGIN"):
        engine.handle_line(line)
    assert out == ["OK", centre] and Board(size, size).centre == engine.board.moves[0]


def test_end_without_a_net_does_not_import_torch():
    """Exiting clears the net exports only when a net was loaded: importing them for nothing took
    most of a second at END (torch)."""
    done = subprocess.run([sys.executable, "-X", "importtime", str(SCRIPT), "--opponent", "heuristic"],
                          input=b"START 9\nEND\n", capture_output=True, timeout=120, cwd=REPO_ROOT)
    assert done.stdout == b"OK\n" and done.returncode == 0, done.stderr[-2000:]
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.decode().splitlines()
                if line.startswith("import time:")]
    assert "gomoku.pbrain.engine" in imported
    assert not [name for name in imported if name.split(".")[0] == "torch" or name == "nets.loading"]


def test_huge_info_numbers_are_capped():
    out: list[str] = []
    engine = PbrainEngine(EngineOptions(player_spec="pure:20", seed=1), write=out.append)
    huge = "9" * 400
    engine.handle_line(f"INFO max_memory {huge}")
    engine.handle_line("START 9")
    assert out == ["OK"] and engine.tree_bytes() == budget.DEFAULT_TREE_BYTES
    engine.handle_line(f"INFO timeout_turn {huge}")
    engine.handle_line(f"INFO time_left {huge}")
    assert engine.time_limit(Board()) == budget.MAX_LIMIT
    engine.handle_line(f"INFO time_left -{huge}")  # time_left runs out (a negative one is taken)
    assert engine.think_seconds(Board()) == budget.MIN_THINK
    assert out == ["OK"]


def test_text_lines_are_bounded_and_digits_are_ascii():
    from gomoku.pbrain import protocol as p

    assert isinstance(p.parse_line("INFO timeout_turn " + "9" * 5000), p.Undecodable)  # int() refuses 4300 digits
    assert isinstance(p.parse_line("START " + "9" * 5000), p.Undecodable)
    assert isinstance(p.parse_line("START \u0661\u0662"), p.Malformed)  # Arabic-Indic 12
    assert isinstance(p.parse_line("INFO timeout_turn \u0661\u0662"), p.BadInfo)
    assert p.parse_line("START 12") == p.Start(12, 12)
    out: list[str] = []
    engine = PbrainEngine(EngineOptions(player_spec="random"), write=out.append)
    assert engine.handle_line("TURN 1," + "1" * 5000) is True
    assert out == [f"ERROR line longer than {p.MAX_LINE_BYTES} characters"]


def test_every_refused_board_leaves_the_position_unchanged_and_says_so():
    out: list[str] = []
    engine = PbrainEngine(EngineOptions(player_spec="random", seed=1), write=out.append)
    for line in ("START 9", "TURN 4,4"):
        engine.handle_line(line)
    moves = list(engine.board.moves)
    for stones in (["10,1,2"], ["1,-1,2"], ["1,1"], ["1,1,7"], ["1,1,3"], ["1,1,1", "1,1,2"], ["4,4,1", "0,0,1"],
                   ["\u0661,1,2"], [f"{x},0,2" for x in range(5)] + [f"{x},8,1" for x in range(4)]):
        for line in ("BOARD", *stones, "DONE"):
            engine.handle_line(line)
        assert out[-1].startswith("ERROR BOARD: ") and out[-1].endswith("; position unchanged"), (stones, out[-1])
        assert engine.board.moves == moves


def test_a_tab_or_several_spaces_separate_a_command_from_its_argument():
    """START\t9 and INFO\ttimeout_turn 500 were UNKNOWN commands."""
    from gomoku.pbrain.protocol import Info, Start, parse_command

    assert parse_command("START\t9") == Start(9, 9) == parse_command("START   9")
    assert parse_command("INFO\ttimeout_turn\t500") == Info("timeout_turn", "500", 500)
    assert parse_command("INFO folder C:\\games  x") == Info("folder", "C:\\games  x", None)  # the rest kept
