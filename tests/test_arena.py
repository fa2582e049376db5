"""Games, matches, scores and intervals."""

import time

import numpy as np
import pytest

from gomoku.matches.arena import derive_seeds, evaluate
from gomoku.matches.games import play_game, play_match
from gomoku.matches.records import GameRecord, MatchResult, format_table, wilson_interval
from gomoku.game.board import DRAW, Board, IllegalMoveError
from gomoku.players import HeuristicPlayer, MinimaxPlayer, Player, RandomPlayer


class Scripted(Player):
    """Plays a fixed list of moves and counts resets."""

    def __init__(self, name, moves):
        self.name, self.moves, self.resets, self.turn = name, list(moves), 0, 0

    def reset(self):
        self.resets += 1
        self.turn = 0

    def get_action(self, board):
        move = self.moves[self.turn]
        self.turn += 1
        return move


def named(player, name):
    player.name = name
    return player


def replay(record: GameRecord) -> Board:
    board = Board(record.width, record.height, record.n_in_row, record.start_player)
    for move in record.moves:
        board.do_move(move)
    return board


def test_play_game_record_is_consistent():
    for seed in range(4):
        rng = np.random.default_rng(seed)
        x, o = named(HeuristicPlayer(rng), "h"), named(RandomPlayer(rng), "r")
        record = play_game(x, o)
        assert record.players == ("h", "r") and record.start_player == 1
        assert (record.width, record.height, record.n_in_row) == (9, 9, 5)
        board = replay(record)
        assert board.game_end() == (True, record.winner)
        assert record.board() == board
        assert record.winner == 1  # the heuristic beats random play


def test_play_game_scripted_win_and_reset():
    x = Scripted("x", [0, 1, 2, 3, 4])
    o = Scripted("o", [72, 73, 74, 75])
    record = play_game(x, o, Board(start_player=1))
    assert record.moves == (0, 72, 1, 73, 2, 74, 3, 75, 4) and record.winner == 1
    assert x.resets == 1 and o.resets == 1


def test_play_game_from_a_start_position_and_start_player_two():
    start = Board.from_moves([40, 41], start_player=2)
    x, o = Scripted("p1", [0, 1, 2, 3, 4]), Scripted("p2", [72, 73, 74, 75, 76])
    record = play_game(x, o, start)
    assert start.moves == [40, 41]  # the start board is not changed
    assert record.start_player == 2 and record.moves[:2] == (40, 41)
    assert record.moves[2:] == (72, 0, 73, 1, 74, 2, 75, 3, 76) and record.winner == 2
    assert replay(record).game_end() == (True, 2)
    # On a new board, start_player=2 lets player2 ("b") move first.
    record = play_game(Scripted("a", [0, 1, 2, 3]), Scripted("b", [72, 73, 74, 75, 76]), start_player=2)
    assert record.moves[:2] == (72, 0) and record.winner == 2 and record.players == ("a", "b")
    with pytest.raises(ValueError, match="start_player"):
        play_game(x, o, start, start_player=1)


def test_play_game_draw():
    # 4x4, four in a row: X X O O / O O X X / X X O O / O O X X fills the board with no line.
    xs, os_ = [0, 1, 6, 7, 8, 9, 14, 15], [2, 3, 4, 5, 10, 11, 12, 13]
    record = play_game(Scripted("x", xs), Scripted("o", os_), Board(4, 4, 4))
    assert record.winner == DRAW and len(record.moves) == 16


def test_illegal_move_names_the_player_and_the_move():
    with pytest.raises(IllegalMoveError, match=r"'cheat'.*stones 2.*40"):
        play_game(Scripted("x", [40, 41]), Scripted("cheat", [40]))
    with pytest.raises(IllegalMoveError, match=r"'wild'.*81"):
        play_game(Scripted("wild", [81]), Scripted("o", []))


class Meddler(Player):
    """Tries to change the board it is shown, then plays randomly."""

    name = "meddler"

    def __init__(self):
        self.rng = np.random.default_rng(0)

    def get_action(self, board):
        move = int(self.rng.choice(board.availables))
        board.do_move(move)  # on the copy it was given
        board.undo_move()
        board.moves.append(-5)
        return move


def test_players_see_a_copy():
    record = play_game(Meddler(), named(RandomPlayer(np.random.default_rng(1)), "r"))
    assert -5 not in record.moves and replay(record).game_end() == (True, record.winner)


def test_play_match_alternates_colours_and_counts():
    player = named(HeuristicPlayer(np.random.default_rng(0)), "hero")
    opponent = named(RandomPlayer(np.random.default_rng(1)), "villain")
    seen = []
    result = play_match(player, opponent, 5, on_game=lambda index, record: seen.append(index))
    assert seen == [0, 1, 2, 3, 4]
    assert (result.player, result.opponent, result.games) == ("hero", "villain", 5)
    assert len(result.records) == 5
    wins = draws = 0
    for index, record in enumerate(result.records):
        expected = ("hero", "villain") if index % 2 == 0 else ("villain", "hero")
        assert record.players == expected and record.start_player == 1
        hero_stone = 1 if index % 2 == 0 else 2
        wins += record.winner == hero_stone
        draws += record.winner == DRAW
    assert (result.wins, result.draws, result.losses) == (wins, draws, 5 - wins - draws)


def test_play_match_on_another_board_size_with_progress():
    result = play_match(RandomPlayer(np.random.default_rng(2)), RandomPlayer(np.random.default_rng(3)), 2,
                        width=6, height=5, n_in_row=4, progress=True)
    assert result.games == 2
    assert all((r.width, r.height, r.n_in_row) == (6, 5, 4) for r in result.records)
    with pytest.raises(ValueError):
        play_match(RandomPlayer(), RandomPlayer(), 0)


def test_minimax_beats_random():
    result = play_match(MinimaxPlayer(2, np.random.default_rng(0)), RandomPlayer(np.random.default_rng(1)), 4)
    assert result.wins == 4 and result.score == 1.0


# --------------------------------------------------------------------------- scores
def test_score_and_interval():
    result = MatchResult("a", "b", wins=3, draws=2, losses=5)
    assert result.games == 10 and result.score == pytest.approx(0.4)
    low, high = result.ci95
    assert 0 <= low < 0.4 < high <= 1
    row = result.format_row()
    assert row.startswith("b ") and "+3 =2 -5" in row and "0.400" in row and f"[{low:.3f}, {high:.3f}]" in row
    assert result.to_dict()["ci95"] == [low, high]
    table = format_table([result])
    assert table.splitlines()[0] == "player: a" and "95% CI" in table.splitlines()[1]


def test_repeated_games_are_counted_and_shown():
    """Two players without randomness play the same game each time they keep their colours: 4 games,
    2 distinct ones, which the row and the JSON say; random players' 4 games are 4, and no note."""
    from gomoku.players import make_player

    same = play_match(make_player("ab:1", None), make_player("ab:2", None), 4, width=7, height=7, n_in_row=4)
    assert same.games == 4 and same.distinct_games == 2
    assert same.records[0].moves == same.records[2].moves and same.records[1].moves == same.records[3].moves
    assert same.format_row().endswith("   2 distinct games") and same.to_dict()["distinct_games"] == 2
    varied = play_match(RandomPlayer(np.random.default_rng(1)), RandomPlayer(np.random.default_rng(2)), 4,
                        width=7, height=7, n_in_row=4)
    assert varied.distinct_games == 4 and "distinct" not in varied.format_row()
    assert MatchResult("a", "b", wins=1).to_dict()["distinct_games"] is None  # counts alone: no games to compare


def test_a_long_name_widens_its_column_so_the_rows_stay_aligned():
    """'pbrain:scripts/pbrain-gomoku-zero:200' (37 characters) pushed its row past the header's columns."""
    long = "pbrain:scripts/pbrain-gomoku-zero:200"
    table = format_table([MatchResult("az:m.pt:20", "random", wins=1), MatchResult("az:m.pt:20", long, draws=1)])
    header, *rows = table.splitlines()[1:]
    assert [row.index("+") for row in rows] == [header.index("+W")] * 2 and rows[1].startswith(long + " ")
    short = format_table([MatchResult("a", "random", wins=1)]).splitlines()
    assert short[1].index("+W") == short[2].index("+")  # the usual width otherwise


def test_wilson_interval_properties():
    # The textbook case: 5 successes in 10 trials -> [0.2366, 0.7634].
    assert wilson_interval(0.5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    for games in [1, 2, 10, 20, 100]:
        for successes in range(0, games + 1, max(1, games // 5)):
            score = successes / games
            low, high = wilson_interval(score, games)
            assert 0.0 <= low <= score <= high <= 1.0
            assert high - low > 0
    low, high = wilson_interval(1.0, 20)
    assert high == 1.0 and 0.8 < low < 0.9
    low, high = wilson_interval(0.0, 20)
    assert low == 0.0 and 0.1 < high < 0.2
    assert wilson_interval(0.5, 100)[1] - wilson_interval(0.5, 100)[0] < wilson_interval(0.5, 10)[1] - \
        wilson_interval(0.5, 10)[0]
    assert wilson_interval(0.0, 0) == (0.0, 1.0) and MatchResult("a", "b").score == 0.0


def test_derived_seeds_and_evaluate_are_reproducible():
    assert derive_seeds(3, 4) == derive_seeds(3, 4) and len(set(derive_seeds(3, 4))) == 4
    assert derive_seeds(None, 2) == [None, None]
    first = evaluate("heuristic", ["random", "minimax:1"], games=2, seed=11)
    again = evaluate("heuristic", ["random", "minimax:1"], games=2, seed=11)
    assert [r.records for r in first] == [r.records for r in again]
    assert [r.opponent for r in first] == ["random", "minimax:1"]
    with pytest.raises(ValueError, match="valid forms"):
        evaluate("heuristic", ["random", "nonsense"], games=1)


def test_evaluate_refuses_a_net_trained_for_another_rule_before_any_game(tmp_path):
    from gomoku.players import make_player
    from nets import NetConfig, build_net, save_model

    model = tmp_path / "four.pt"
    save_model(model, build_net(NetConfig()), n_in_row=4)
    with pytest.raises(ValueError, match="trained for 4 in a row, not 5"):
        evaluate(f"az:{model}:8", ["random"], games=2)
    player = make_player(f"az:{model}:8", seed=0)
    with pytest.raises(ValueError, match="trained for 4 in a row"):
        player.get_action(Board())
    assert player.n_in_row == 4
    assert Board(9, 9, 4).stone(player.get_action(Board(9, 9, 4))) == 0  # its own rule is fine


def test_ctrl_c_in_evaluate_gives_the_finished_games(monkeypatch):
    import gomoku.matches.arena as arena

    played = []
    real = arena._play_one

    def play_three(job):
        if len(played) == 3:
            raise KeyboardInterrupt
        played.append(job)
        return real(job)

    monkeypatch.setattr(arena, "_play_one", play_three)
    with pytest.raises(arena.EvaluationInterrupted) as caught:
        evaluate("heuristic", ["random", "minimax:1"], games=2, seed=4)
    stop = caught.value
    assert isinstance(stop, KeyboardInterrupt) and (stop.played, stop.planned) == (3, 4)
    assert [r.games for r in stop.results] == [2, 1]


def test_worker_processes_give_the_same_results():
    one = evaluate("heuristic", ["random"], games=4, seed=3)
    two = evaluate("heuristic", ["random"], games=4, seed=3, workers=2)
    assert [r.to_dict() for r in one] == [r.to_dict() for r in two]
    assert [r.records for r in one] == [r.records for r in two]


def test_starting_workers_puts_back_a_sigint_handler_python_cannot_read(monkeypatch):
    """Where SIGINT's handler was set outside Python, ``signal.signal`` returns None for it, which
    it refuses to install again: the workers start, and SIGINT gets the default action back."""
    import signal

    from gomoku.matches import processes

    real = signal.signal
    installed = []

    def signal_from_c(number, handler):
        installed.append(handler)
        real(number, handler)
        return None  # what Python reports for a handler a C library installed

    monkeypatch.setattr(signal, "signal", signal_from_c)
    processes.start_quietly([])
    assert installed[2:] == [signal.SIG_DFL, signal.SIG_DFL]  # SIGTERM's and SIGINT's, held while they start


class _HoldsALambda(Exception):
    def __init__(self):
        super().__init__("a job failed")
        self.callback = lambda: None


def _double_or_fail(job: int) -> int:
    if job == 1:
        raise _HoldsALambda()
    return 2 * job


def test_a_worker_error_that_does_not_pickle_reaches_the_parent():
    """``Queue.put`` pickles in a feeder thread that drops what fails: the parent would wait for
    ever. The worker pickles its outcome itself, so the error arrives (as a RuntimeError)."""
    import threading

    from gomoku.matches.processes import run_in_processes

    outcome = {}

    def consume():
        try:
            outcome["results"] = sorted(run_in_processes(_double_or_fail, [0, 1, 2], 1, uses_torch=False))
        except Exception as error:  # noqa: BLE001 - the error under test
            outcome["error"] = error

    thread = threading.Thread(target=consume, daemon=True)
    thread.start()
    thread.join(60)
    assert not thread.is_alive(), "the parent waits for an outcome that never comes"
    assert isinstance(outcome.get("error"), RuntimeError)
    assert "_HoldsALambda: a job failed (does not pickle)" in str(outcome["error"])


def test_random_openings_are_different_positions_without_a_line():
    from gomoku.matches.games import random_openings

    # 20 stones on 5x5: many draws make a five before their last stone; those are drawn again.
    openings = random_openings(30, 20, np.random.default_rng(2), 5, 5, 5)
    assert len(openings) == 30 and all(len(b.moves) == 20 and not b.game_end()[0] for b in openings)
    # Positions, not move orders: 3 stones on 3x3 (3 in a row) have 9 * 8 / 2 * 7 = 252 positions.
    openings = random_openings(252, 3, np.random.default_rng(0), 3, 3, 3)
    assert len({(frozenset(b.moves[0::2]), frozenset(b.moves[1::2])) for b in openings}) == 252
    with pytest.raises(ValueError, match="only 252 different opening"):
        random_openings(253, 3, np.random.default_rng(0), 3, 3, 3)
    with pytest.raises(ValueError, match="without a line of 1"):  # every stone makes a line: no opening
        random_openings(1, 1, np.random.default_rng(0), 3, 3, 1)
    # Two stones (what matches use): the same openings as drawn by move order, seed for seed.
    assert [b.moves for b in random_openings(3, 2, np.random.default_rng(10))] == [[77, 62], [16, 64], [41, 12]]


def test_random_openings_near_the_centre_keep_their_stones_there():
    from gomoku.matches.games import random_openings

    openings = random_openings(40, 4, np.random.default_rng(4), centre=2)  # the central 5x5 of 9x9
    assert all(max(abs(m % 9 - 4), abs(m // 9 - 4)) <= 2 for b in openings for m in b.moves)
    assert len({m for b in openings for m in b.moves}) == 25  # and every point of it is drawn
    # One black and one white stone on the central 3x3: 9 * 8 = 72 positions, no more.
    openings = random_openings(72, 2, np.random.default_rng(0), centre=1)
    assert len({tuple(b.moves) for b in openings}) == 72
    with pytest.raises(ValueError, match="only 72 different opening"):
        random_openings(73, 2, np.random.default_rng(0), centre=1)
    with pytest.raises(ValueError, match="10 stones do not fit the 9 point"):
        random_openings(1, 10, np.random.default_rng(0), centre=1)
    # On an even board the central square is even: centre=2 on 10x10 is its central 4x4.
    assert {m for b in random_openings(30, 2, np.random.default_rng(1), 10, 10, 5, centre=2)
            for m in b.moves} == {y * 10 + x for y in range(3, 7) for x in range(3, 7)}


def test_records_keep_each_search_players_own_estimate_of_the_game():
    from gomoku.matches.records import game_lines
    from gomoku.players.search import PureMCTSPlayer

    record = play_game(PureMCTSPlayer(n_playout=40, seed=1), RandomPlayer(np.random.default_rng(2)), Board(5, 5, 4))
    assert len(record.values) == len(record.moves)
    assert all(value is None for value in record.values[1::2])  # the random player gives none
    assert all(-1.0 <= value <= 1.0 for value in record.values[0::2])
    # the first is the root value of the same search from the empty board
    assert record.values[0] == PureMCTSPlayer(n_playout=40, seed=1).analyse(Board(5, 5, 4)).value
    result = MatchResult("pure", "random")
    result.add(record, player_first=True)
    [line] = game_lines([result])
    assert line["values"] == [None if v is None else round(v, 3) for v in record.values]


def test_game_lines_say_how_many_moves_were_the_openings():
    from gomoku.matches.games import play_openings, random_openings
    from gomoku.matches.records import game_lines

    openings = random_openings(2, 2, np.random.default_rng(3))
    result = play_openings(RandomPlayer(np.random.default_rng(1)), RandomPlayer(np.random.default_rng(2)), openings)
    assert [line["opening"] for line in game_lines([result])] == [2, 2, 2, 2]
    assert all(len(line["values"]) == line["plies"] and line["values"][:2] == [None, None]
               for line in game_lines([result]))  # one a move, none for the opening's stones
    plain = play_match(RandomPlayer(np.random.default_rng(1)), RandomPlayer(np.random.default_rng(2)), games=1)
    assert game_lines([plain])[0]["opening"] == 0


class _Engine:
    """Stands for a player holding an external engine, which a finalizer kills."""


def _leave_a_mark_at_exit(job: tuple[str, float]) -> int:
    import time
    import weakref
    from pathlib import Path

    path, sleep = job
    engine = _Engine()
    weakref.finalize(engine, Path(path).write_text, "closed")  # as PbrainPlayer's kills its engine's group
    Path(path).write_text("started")
    time.sleep(sleep)
    return 1


def _text(path) -> str | None:
    return path.read_text() if path.exists() else None


def test_workers_stopped_early_run_their_exit_handlers(tmp_path):
    """The parent ends its workers with SIGTERM when the caller stops early: a worker exits as a
    process does, so the finalizers of its players run (an external engine is not left running)."""
    from gomoku.matches.processes import run_in_processes

    marks = [tmp_path / "fast", tmp_path / "slow"]
    outcomes = run_in_processes(_leave_a_mark_at_exit, [(str(marks[0]), 0.0), (str(marks[1]), 60.0)], 2,
                                uses_torch=False)
    assert next(outcomes) == 1
    deadline = time.monotonic() + 30.0  # a worker may still be starting when the fast job is done
    while _text(marks[1]) != "started" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _text(marks[1]) == "started"
    outcomes.close()  # the slow job's worker is still sleeping: it is terminated
    assert marks[1].read_text() == "closed"


def test_games_keep_their_numbers_when_earlier_ones_did_not_finish():
    """An interrupted run with workers may finish games 1, 2 and 4 but not 3: the games file and
    the forfeits numbered the finished games 1, 2, 3 (game 4, played as White, came out as game 3,
    a Black game's number)."""
    from gomoku.matches.arena import match_results
    from gomoku.matches.records import game_lines
    from gomoku.players.forfeit import ForfeitReason, ForfeitRecord

    def record(index, forfeit=None):
        names = ("p", "o") if index % 2 == 0 else ("o", "p")  # the player has Black in even games
        return GameRecord((0, 9, 1, 10, 2, 11, 3, 12, 4), 2 if forfeit else 1, 1, 9, 9, 5, names, forfeit=forfeit)

    late = ForfeitRecord(1, ForfeitReason.LATE, "answered late")  # Black (the opponent in game 4) forfeits
    records = {(0, 0): record(0), (0, 1): record(1), (0, 3): record(3, late)}
    [result] = match_results("p", ["o"], records)
    lines = game_lines([result])
    assert [(line["game"], line["player_colour"]) for line in lines] == [(1, "black"), (2, "white"), (4, "white")]
    assert [(index, who) for index, who, _ in result.forfeits()] == [(3, "opponent")]
    assert "game 4 opponent late" in result.format_row() and result.to_dict()["forfeits"][0]["game"] == 4
