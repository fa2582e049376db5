"""External pbrain engines as players (``pbrain:PATH[:MS]``): our own engine through the protocol,
and small fake engines (scripts written here) that crash, stay silent, answer late or illegally."""

from __future__ import annotations

import os
import re
import signal
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from gomoku.matches.arena import evaluate
from gomoku.matches.games import play_game, play_match
from gomoku.game.board import Board
from gomoku.players import RandomPlayer, format_point, make_player
from gomoku.players.forfeit import Forfeit, ForfeitReason
from gomoku.players.external import MAX_TURN_MS, READ_BYTES, STDERR_LINE_BYTES, PbrainPlayer, _pump

REPO_ROOT = Path(__file__).resolve().parent.parent
WRAPPER = REPO_ROOT / "scripts" / "pbrain-gomoku-zero"

# A fake engine: plays the first empty point it knows of, except that at its ``BAD_AT``-th move
# it misbehaves as ``MODE`` says. It logs every line it reads to ``LOG`` (to check the protocol),
# writes its process id to ``LOG.pid`` and ends its answers with ``EOL``.
FAKE = textwrap.dedent("""\
    import os, sys, time
    MODE, BAD_AT, LOG, EOL = {mode!r}, {bad_at}, {log!r}, {eol!r}
    size, taken, moves = 9, set(), 0
    with open(LOG + ".pid", "w") as pid:
        pid.write(str(os.getpid()))
    def answer(text):
        sys.stdout.write(text + EOL); sys.stdout.flush()
    def play():
        global moves
        moves += 1
        if moves == BAD_AT:
            if MODE == "crash": sys.exit(3)
            if MODE == "silent": time.sleep(60)
            if MODE == "late": time.sleep(0.6)
            if MODE == "occupied": return answer("%d,%d" % min(taken, default=(0, 0)))
            if MODE == "garbage": return answer("ERROR I am confused")
            if MODE == "offboard": return answer("%d,0" % size)
        if MODE.startswith("suggest"):  # the move is left to the manager, which sends PLAY
            return answer("SUGGEST %d,%d" % next((x, y) for y in range(size) for x in range(size)
                                                 if (x, y) not in taken))
        if MODE == "chatty":  # 4 MB of stderr a move, in lines of 1 MB
            for _ in range(4):
                sys.stderr.write("x" * 2**20 + "\\n")
            sys.stderr.flush()
        answer("DEBUG thinking")
        point = next((x, y) for y in range(size) for x in range(size) if (x, y) not in taken)
        taken.add(point)
        if MODE == "double" and moves == BAD_AT:  # a stray second move, in the same write
            spare = next((x, y) for y in range(size) for x in range(size) if (x, y) not in taken)
            return answer("%d,%d%s%d,%d" % (point + (EOL,) + spare))
        answer("%d,%d" % point)
    board_block = False
    for line in sys.stdin:
        line = line.strip()
        with open(LOG, "a") as log:
            log.write(line + "\\n")
        word = line.split(" ")[0].upper()
        if board_block:
            if word == "DONE":
                board_block = False
                play()
            else:
                x, y, who = map(int, line.split(","))
                taken.add((x, y))
        elif word == "START":
            size = int(line.split()[1]); taken.clear()
            while MODE == "slowstart" and not os.path.exists(LOG + ".go"):  # loading, until told
                time.sleep(0.01)
            answer("OK - everything is good" if MODE == "verboseok" else "OK")
        elif word == "RESTART":
            taken.clear()
            answer({{"norestart": "ERROR no RESTART here", "unknown": "UNKNOWN RESTART",
                    "badrestart": "what?"}}.get(MODE, "OK"))
        elif word == "BEGIN":
            play()
        elif word == "TURN":
            taken.add(tuple(map(int, line.split()[1].split(","))))
            play()
        elif word == "BOARD":
            board_block = True
        elif word == "PLAY":  # answered with the point, except a wrong one at BAD_AT
            x, y = map(int, line.split()[1].split(","))
            taken.add((x, y))
            answer("%d,%d" % ((x + 1, y) if MODE == "suggestwrong" and moves == BAD_AT else (x, y)))
        elif word == "END":
            break
    """)


def fake_engine(tmp_path: Path, mode: str = "good", bad_at: int = 0, eol: str = "\n") -> tuple[Path, Path]:
    script, log = tmp_path / f"fake_{mode}.py", tmp_path / f"fake_{mode}.log"
    script.write_text(FAKE.format(mode=mode, bad_at=bad_at, log=str(log), eol=eol))
    return script, log


@pytest.fixture
def players():
    made: list[PbrainPlayer] = []

    def make(*args, **kwargs) -> PbrainPlayer:
        player = PbrainPlayer(*args, **kwargs)
        made.append(player)
        return player

    yield make
    for player in made:
        player.close()
        assert player.process is None


def test_spec_forms(tmp_path, monkeypatch):
    engine = tmp_path / "pbrain-x"
    engine.write_text("")
    engine.chmod(0o755)  # an engine that is not a .py script must be executable
    player = make_player(f"pbrain:{engine}:250")
    assert isinstance(player, PbrainPlayer) and player.turn_ms == 250 and player.path == str(engine)
    assert player.process is None  # nothing starts before the first move
    monkeypatch.chdir(tmp_path)
    (tmp_path / "C:").mkdir()
    (tmp_path / "C:" / "x.exe").write_text("")
    (tmp_path / "C:" / "x.exe").chmod(0o755)
    assert make_player("pbrain:C:/x.exe").path == "C:/x.exe"  # no MS: the default turn
    assert make_player("pbrain:C:/x.exe").turn_ms == 1000
    (tmp_path / "engine.py").write_text("")
    assert make_player("pbrain:engine.py").command == [sys.executable, "engine.py"]
    for bad in ("pbrain:", "pbrain::500", "pbrain:pbrain-x:0", "pbrain:no-such-engine:100"):
        with pytest.raises(ValueError, match="valid forms"):
            make_player(bad)
    # A turn longer than MAX_TURN_MS (a day) is refused here, not by an OverflowError mid-game.
    assert make_player(f"pbrain:{engine}:{MAX_TURN_MS}").turn_ms == MAX_TURN_MS
    with pytest.raises(ValueError, match=f"at most {MAX_TURN_MS} ms.*valid forms"):
        make_player(f"pbrain:{engine}:99999999999999")


def test_a_fake_engine_plays_whole_games_with_turn_board_and_restart(tmp_path, players):
    script, log = fake_engine(tmp_path)
    engine = players(str(script), 500)
    first = play_game(engine, RandomPlayer(np.random.default_rng(0)))
    assert first.forfeit is None and first.board().game_end()[0]
    assert first.stats[0].moves == (len(first.moves) + 1) // 2
    lines = log.read_text().splitlines()
    assert lines[:5] == ["START 9", "INFO timeout_turn 500", "INFO timeout_match 0", "INFO rule 0",
                         "INFO game_type 1"]
    assert lines[5] == "BEGIN" and all(line.startswith("TURN ") for line in lines[6:])
    # A game from a position: RESTART (the running engine's new game), then the stones with BOARD
    # (1 = its own), then TURNs.
    board = Board.from_moves([40, 41, 30])
    process = engine.process
    second = play_game(RandomPlayer(np.random.default_rng(1)), engine, board=board)
    assert second.forfeit is None and second.moves[:3] == (40, 41, 30)
    lines = log.read_text().splitlines()
    start = lines.index("RESTART")
    assert lines[start: start + 6] == ["RESTART", "BOARD", "4,4,2", "5,4,1", "3,3,2", "DONE"]
    assert lines.count("START 9") == 1 and engine.process is process  # one process for both games
    # Another board size: RESTART would keep the old one, so a fresh process is sent START 7.
    assert engine.get_action(Board(7, 7, 5)) == 0
    assert process.returncode == 0 and engine.process is not process
    assert log.read_text().splitlines()[-7:] == ["END", "START 7", "INFO timeout_turn 500", "INFO timeout_match 0",
                                                 "INFO rule 0", "INFO game_type 1", "BEGIN"]
    process = engine.process
    engine.close()
    assert process.returncode == 0 and log.read_text().splitlines()[-1] == "END"


@pytest.mark.parametrize("mode, reason", [
    ("crash", ForfeitReason.CRASHED), ("silent", ForfeitReason.SILENT), ("late", ForfeitReason.LATE),
    ("occupied", ForfeitReason.ILLEGAL), ("garbage", ForfeitReason.ILLEGAL), ("offboard", ForfeitReason.ILLEGAL),
    ("suggestwrong", ForfeitReason.ILLEGAL)])
def test_a_misbehaving_engine_forfeits(tmp_path, players, mode, reason):
    script, _ = fake_engine(tmp_path, mode, bad_at=3)
    engine = players(str(script), 300, silent_wait=0.5)
    result = play_match(engine, RandomPlayer(np.random.default_rng(2)), games=2)
    [(index, who, forfeit), *rest] = result.forfeits()
    assert (index, who, forfeit.reason) == (0, "player", reason), forfeit
    assert result.losses >= 1 and result.records[0].forfeit.stone == 1
    assert len(result.records[0].moves) == 4  # its two good moves and the random player's two
    if mode == "crash":
        assert "exit code 3" in forfeit.detail
    if mode in ("silent", "garbage"):  # the TURN's point named as on the board too
        board = Board.from_moves(result.records[0].moves)
        last = board.last_move
        said = f"TURN {last % board.width},{last // board.width} ({format_point(board, last)})"
        assert f"to {said}" in forfeit.detail, forfeit.detail
    if mode == "occupied":  # the point named as on the board too, not only in protocol coordinates
        match = re.fullmatch(r"played (\d+),(\d+) \(([A-Z]\d+)\), an occupied point", forfeit.detail)
        board = Board.from_moves(result.records[0].moves)
        x, y = int(match.group(1)), int(match.group(2))
        assert match.group(3) == format_point(board, y * board.width + x)
    assert "forfeits: game 1 player " + reason.value in result.format_row()
    assert result.to_dict()["forfeits"][0]["reason"] == reason.value
    assert result.to_dict()["forfeits"][0]["game"] == 1  # numbered as in the table and --games-out
    # The next game starts a fresh process, which misbehaves again at its third move.
    assert [r.forfeit.reason for r in result.records if r.forfeit] == [reason, reason]


def test_an_engine_is_starting_until_it_answers_start(tmp_path, players):
    """``starting`` (the window's "Starting the engine") holds while START waits for its answer."""
    import threading

    script, log = fake_engine(tmp_path, "slowstart")
    engine = players(str(script), 300)
    moves = []
    asking = threading.Thread(target=lambda: moves.append(engine.get_action(Board())))
    assert not engine.starting
    asking.start()
    deadline = time.monotonic() + 30
    while not engine.starting and time.monotonic() < deadline:
        time.sleep(0.01)
    assert engine.starting and asking.is_alive() and not moves
    Path(str(log) + ".go").write_text("")
    asking.join(30)
    assert moves == [0] and not engine.starting


def test_an_engine_that_cannot_start_forfeits(tmp_path, players):
    engine = players(str(tmp_path / "no-such-engine"), 300)
    record = play_game(RandomPlayer(np.random.default_rng(3)), engine)
    assert record.forfeit.reason is ForfeitReason.CRASHED and record.winner == 1 and len(record.moves) == 1


@pytest.mark.parametrize("eol", ["\r", "\r\n"])
def test_answers_may_end_with_cr_or_cr_lf(tmp_path, players, eol):
    script, _ = fake_engine(tmp_path, eol=eol)
    record = play_game(players(str(script), 500), RandomPlayer(np.random.default_rng(5)))
    assert record.forfeit is None and record.board().game_end()[0]


class Pipe:
    """A pipe's read end that hands out ``chunks`` (at most ``n`` bytes a read), counting reads."""

    def __init__(self, *chunks: bytes):
        self.chunks, self.reads = [chunk for chunk in chunks if chunk], 0

    def read(self, n: int) -> bytes:
        self.reads += 1
        if not self.chunks:
            return b""
        chunk, self.chunks[0] = self.chunks[0][:n], self.chunks[0][n:]
        if not self.chunks[0]:
            self.chunks.pop(0)
        return chunk


def test_the_pump_splits_lines_on_crlf_lf_and_cr_and_cuts_long_ones():
    got: list[bytes | None] = []
    # CR LF split across two reads is one line end; CR CR LF is a line end, then an empty line.
    _pump(Pipe(b"OK\r", b"\n1,2\r\n\r\n3,4\r5,6\n", b"7,", b"8\r", b"\r\n9,9"), got.append, 100)
    assert got == [b"OK", b"1,2", b"", b"3,4", b"5,6", b"7,8", b"", b"9,9", None]
    got.clear()
    _pump(Pipe(b"abcdefgh", b"ij\nklmnop", b"q\rr"), got.append, 4)
    assert got == [b"abcd", b"klmn", b"r", None]
    # Read in chunks: a 1 MB line takes a read per READ_BYTES (and one for the end), not one a byte.
    got.clear()
    pipe = Pipe(b"x" * 2**20 + b"\n")
    _pump(pipe, got.append, 10)
    assert got == [b"x" * 10, None] and pipe.reads == 2**20 // READ_BYTES + 2


def test_a_chatty_engine_is_heard_and_its_stderr_lines_are_cut(tmp_path, players):
    script, _ = fake_engine(tmp_path, "chatty")
    engine = players(str(script), 1000)
    record = play_game(engine, RandomPlayer(np.random.default_rng(6)))  # 4 MB of stderr a move
    assert record.forfeit is None and record.board().game_end()[0]
    kept = list(engine._stderr)
    assert kept and all(line == "x" * STDERR_LINE_BYTES for line in kept)


def _gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (a zombie nobody reaped yet counts as ended)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in "ZX"
    except (OSError, IndexError):
        return False


@pytest.mark.skipif(not hasattr(os, "killpg") or not os.path.exists("/bin/sh"), reason="POSIX process groups")
def test_an_engine_behind_a_wrapper_is_killed_with_its_children(tmp_path, players):
    script, log = fake_engine(tmp_path, "silent", bad_at=2)
    wrapper = tmp_path / "pbrain-wrapped"  # runs the engine as its child: no exec
    wrapper.write_text(f'#!/bin/sh\n"{sys.executable}" "{script}"\n')
    wrapper.chmod(0o755)
    engine = players(str(wrapper), 300, silent_wait=0.5)
    record = play_game(engine, RandomPlayer(np.random.default_rng(7)))
    assert record.forfeit.reason is ForfeitReason.SILENT and engine.process is None
    pid = int(Path(str(log) + ".pid").read_text())
    deadline = time.monotonic() + 10  # SIGKILL was sent; give a busy machine time to deliver it
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(pid)
    while engine._lines.get(timeout=10)[1] is not None:  # its output ended: the pump is done
        pass


def test_without_process_groups_the_engine_itself_is_killed(tmp_path, players, monkeypatch):
    monkeypatch.delattr(os, "killpg", raising=False)
    script, _ = fake_engine(tmp_path, "silent", bad_at=2)
    engine = players(str(script), 300, silent_wait=0.5)
    engine.get_action(Board())
    process = engine.process
    with pytest.raises(Forfeit):
        engine.get_action(Board.from_moves([0, 40]))
    assert engine.process is None and process.returncode == -signal.SIGKILL


def test_a_board_the_protocol_does_not_play_is_refused_before_any_game(tmp_path):
    script, log = fake_engine(tmp_path)
    player = PbrainPlayer(str(script), 300)
    player.check_board(Board(9, 9, 5))
    player.check_board(Board(9, 7, 5))  # a rectangle: RECTSTART
    with pytest.raises(ValueError, match="five in a row.*not 4"):
        player.check_board(Board(9, 9, 4))
    for player_spec, opponent in ((f"pbrain:{script}:300", "random"), ("random", f"pbrain:{script}:300")):
        with pytest.raises(ValueError, match="five in a row.*not 6"):
            evaluate(player_spec, [opponent], games=1, n_in_row=6)
    assert player.process is None and not log.exists()  # the engine never started


def test_a_position_that_does_not_follow_is_sent_after_restart(tmp_path, players):
    script, log = fake_engine(tmp_path)
    engine = players(str(script), 500)
    board = Board()
    assert engine.get_action(board) == 0  # BEGIN: the fake plays 0,0
    board.do_move(0)
    board.do_move(40)
    assert engine.get_action(board) == 1  # TURN 4,4: 1,0
    board.undo_move()  # taken back (as in the play window): 4,4 and the engine's answer
    board.do_move(50)
    assert engine.get_action(board) == 1  # the engine's game has stones: RESTART, then BOARD
    assert engine.get_action(Board()) == 0  # back to the empty board: RESTART, then BEGIN
    assert log.read_text().splitlines()[5:] == ["BEGIN", "TURN 4,4", "RESTART", "BOARD", "0,0,1", "5,5,2", "DONE",
                                                "RESTART", "BEGIN"]


@pytest.mark.parametrize("mode", ["unknown", "norestart"])
def test_an_engine_without_restart_is_run_again(tmp_path, players, mode):
    """RESTART is optional: answered UNKNOWN (or ERROR), the engine is ended and run again (START)."""
    script, log = fake_engine(tmp_path, mode)
    engine = players(str(script), 500)
    assert engine.get_action(Board()) == 0
    first = engine.process
    assert engine.get_action(Board.from_moves([40])) == 0  # a take-back: RESTART, refused
    second = engine.process
    engine.reset()
    assert engine.get_action(Board()) == 0  # a new game: RESTART, refused
    assert first.returncode == 0 and second.returncode == 0 and engine._alive()  # each ended by END
    start = ["START 9", "INFO timeout_turn 500", "INFO timeout_match 0", "INFO rule 0", "INFO game_type 1"]
    assert log.read_text().splitlines() == [*start, "BEGIN", "RESTART", "END", *start, "TURN 4,4",
                                            "RESTART", "END", *start, "BEGIN"]


def test_an_ok_with_words_after_it_is_an_ok(tmp_path, players):
    """The protocol's example answer to START reads "OK - everything is good": it forfeited."""
    script, _ = fake_engine(tmp_path, "verboseok")
    engine = players(str(script), 500)
    assert engine.get_action(Board()) in range(81)


def test_an_engine_that_answers_restart_with_garbage_forfeits(tmp_path, players):
    script, _ = fake_engine(tmp_path, "badrestart")
    engine = players(str(script), 500)
    engine.get_action(Board())
    with pytest.raises(Forfeit) as raised:
        engine.get_action(Board.from_moves([40]))
    assert raised.value.reason is ForfeitReason.ILLEGAL and "RESTART answered 'what?'" in raised.value.detail
    assert engine.process is None


def test_a_suggest_answer_is_played(tmp_path, players):
    """SUGGEST x,y leaves the move to the manager: it sends PLAY x,y, and the engine answers x,y."""
    script, log = fake_engine(tmp_path, "suggest")
    engine = players(str(script), 500)
    record = play_game(engine, RandomPlayer(np.random.default_rng(8)))
    assert record.forfeit is None and record.board().game_end()[0]
    assert record.moves[0] == 0 and all(0 <= seconds for seconds in engine.answer_times)
    lines = log.read_text().splitlines()
    assert lines[5:7] == ["BEGIN", "PLAY 0,0"] and lines.count("PLAY 0,0") == 1
    assert sum(line.startswith("PLAY ") for line in lines) == record.stats[0].moves


def test_a_stray_line_is_not_the_answer_to_the_next_command(tmp_path, players, caplog):
    """An engine that answers BEGIN with two moves: the second is dropped, not taken as its next move."""
    script, _ = fake_engine(tmp_path, "double", bad_at=1)
    engine = players(str(script), 500)
    assert engine.get_action(Board()) == 0  # BEGIN: 0,0 and a stray 1,0
    assert engine.get_action(Board.from_moves([0, 40])) == 1  # TURN 4,4: 1,0 (the stray one dropped)
    assert engine.get_action(Board.from_moves([0, 40, 1, 50])) == 2
    assert len(engine.answer_times) == 3 and min(engine.answer_times) >= 0
    assert "stray line '1,0'" in caplog.text


def test_our_engine_is_sent_restart_after_a_take_back(players):
    """Our engine refuses BEGIN on a board with stones: a take-back to the empty board needs RESTART."""
    engine = players(str(REPO_ROOT / "scripts" / "pbrain.py"), 1000, args=("--opponent", "heuristic", "--no-report"))
    board = Board()
    first = engine.get_action(board)
    board.do_move(first)
    board.do_move(next(move for move in board.availables if move != first))
    board.do_move(engine.get_action(board))  # TURN
    board.undo_move()
    board.undo_move()
    board.do_move(next(move for move in reversed(board.availables)))
    assert board.stone(engine.get_action(board)) == 0  # RESTART, BOARD
    assert engine.get_action(Board()) == first  # RESTART, BEGIN: the same opening move
    assert engine._alive()


@pytest.mark.skipif(not os.access(WRAPPER, os.X_OK), reason="scripts/pbrain-gomoku-zero is not executable")
def test_our_engine_as_the_external_one(tmp_path, monkeypatch):
    """gomoku-zero behind its own protocol at a short turn, through evaluate (as evaluate.py runs it)."""
    monkeypatch.setenv("PYTHON", sys.executable)
    spec = f"pbrain:{WRAPPER}:300"
    [result] = evaluate(spec, ["random"], games=2, seed=0)
    assert result.games == 2 and result.side_stats().moves >= 8
    # Never crashed, silent or illegal; a late answer (a heavily loaded machine) is the only forfeit
    # allowed here, since this test does not time anything. Every game played out is won.
    forfeits = result.forfeits()
    assert all(f.reason is ForfeitReason.LATE and who == "player" for _, who, f in forfeits), forfeits
    assert result.wins == 2 - len(forfeits)
    assert result.side_stats().playouts > 0  # read from the engine's MESSAGE lines


def test_play_game_records_playouts_and_forfeits_in_process():
    from gomoku.players.forfeit import Forfeit
    from gomoku.players import HeuristicPlayer
    from gomoku.players.search import PureMCTSPlayer

    class GivesUp(RandomPlayer):
        """Forfeits (as an external engine would) at its third move."""

        def __init__(self):
            super().__init__(np.random.default_rng(4))
            self.name, self.moves = "gives-up", 0

        def get_action(self, board):
            self.moves += 1
            if self.moves == 3:
                raise Forfeit(ForfeitReason.ILLEGAL, "no move")
            return super().get_action(board)

    record = play_game(PureMCTSPlayer(30, seed=0), GivesUp())
    assert record.winner == 1 and record.forfeit.stone == 2 and record.forfeit.reason is ForfeitReason.ILLEGAL
    assert len(record.moves) == 5 and record.stats[0].moves == 3 and record.stats[1].moves == 2
    assert record.stats[0].playouts == 90 and record.stats[0].playouts_per_move == 30  # every move searched
    assert record.stats[1].playouts == 0 and record.stats[1].playouts_per_move == 0
    result = play_match(HeuristicPlayer(), PureMCTSPlayer(20, seed=1), games=2)
    opponent = result.side_stats(opponent=True)
    assert opponent.moves == sum(r.stats[1 - i % 2].moves for i, r in enumerate(result.records))
    assert opponent.playouts == 20 * opponent.searched and result.side_stats().searched == 0
    assert result.forfeits() == [] and "forfeits" not in result.format_row()
