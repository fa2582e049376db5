"""Players: legal moves, no board changes, tactics (wins, blocks), spec parsing, the human prompt."""

import subprocess
import sys
import types

import numpy as np
import pytest

from gomoku.game.board import Board
from gomoku.players import minimax
from gomoku.players.classical import InputEnded
from gomoku.players.minimax import MAX_MINIMAX_DEPTH
from gomoku.players import (PLAYER_SPECS_HELP, HeuristicPlayer, HumanPlayer, MinimaxPlayer, RandomPlayer,
                            format_point, make_player, parse_point)
from boards import at, position, random_midgame


def snapshot(board: Board):
    return list(board.moves), dict(board.states), board.game_end(), board.current_state().tobytes()


def all_players():
    return [RandomPlayer(np.random.default_rng(0)), HeuristicPlayer(), HeuristicPlayer(np.random.default_rng(1)),
            MinimaxPlayer(1), MinimaxPlayer(2), MinimaxPlayer(2, np.random.default_rng(2))]


BOARDS = [
    ("empty 9x9", lambda: Board()),
    ("one stone", lambda: Board.from_moves([0])),
    ("midgame 9x9", lambda: random_midgame(1, 24)),
    ("6x6/4 start 2", lambda: Board(6, 6, 4, start_player=2)),
    ("midgame 6x6/4", lambda: random_midgame(2, 14, 6, 6, 4)),
    ("midgame 7x10/5", lambda: random_midgame(3, 20, 10, 7, 5)),
    ("almost full 4x4/4", lambda: Board.from_moves([0, 2, 1, 3, 6, 4, 7, 5, 8, 10, 9, 11, 14, 12], 4, 4, 4)),
]


@pytest.mark.parametrize("make_board", [b for _, b in BOARDS], ids=[name for name, _ in BOARDS])
def test_players_return_legal_moves_and_leave_the_board_alone(make_board):
    for player in all_players():
        board = make_board()
        before = snapshot(board)
        move = player.get_action(board)
        assert snapshot(board) == before, player.name
        assert isinstance(move, int) and move in board.availables, (player.name, move)


def test_players_refuse_a_finished_game():
    board = Board.from_moves([0, 9, 1, 10, 2, 11, 3, 12, 4])
    for player in all_players():
        with pytest.raises(ValueError, match="no legal move"):
            player.get_action(board)


# X to move. X can win at E5 (row 5, col E: X X . X X on row 5); O threatens on row 8.
WIN_IN_ONE = dict(xs=[(4, 2), (4, 3), (4, 5), (4, 6)], os_=[(7, 0), (7, 1), (7, 2), (7, 3)])


@pytest.mark.parametrize("player", [HeuristicPlayer(), HeuristicPlayer(np.random.default_rng(5)), MinimaxPlayer(1),
                                    MinimaxPlayer(2), MinimaxPlayer(3), MinimaxPlayer(2, np.random.default_rng(5))],
                         ids=lambda p: p.name)
def test_takes_a_win_in_one(player):
    board = position(**WIN_IN_ONE)
    assert player.get_action(board) == board.location_to_move((4, 4))


@pytest.mark.parametrize("os_,blocks", [
    ([(7, 0), (7, 1), (7, 2), (7, 3)], [(7, 4)]),  # closed four at the edge
    ([(2, 1), (3, 2), (5, 4), (6, 5)], [(4, 3)]),  # broken diagonal four: the gap
    ([(1, 7), (2, 7), (3, 7), (4, 7)], [(0, 7), (5, 7)]),  # open four: either end (lost anyway)
], ids=["closed", "broken", "open"])
@pytest.mark.parametrize("player", [HeuristicPlayer(), MinimaxPlayer(1), MinimaxPlayer(2), MinimaxPlayer(3)],
                         ids=lambda p: p.name)
def test_blocks_a_four(player, os_, blocks):
    # O (player 2) has four stones; X has scattered stones and no threat. X to move.
    board = position(xs=[(0, 0), (8, 8), (0, 4), (8, 1), (6, 8)], os_=os_)
    assert player.get_action(board) in at(board, *blocks)


@pytest.mark.parametrize("player", [MinimaxPlayer(1), MinimaxPlayer(2)], ids=lambda p: p.name)
def test_minimax_blocks_an_open_three(player):
    # O has an open three on row 4 (cols C-E); X must stop it from becoming an open four.
    board = position(xs=[(0, 0), (8, 8), (0, 8)], os_=[(4, 2), (4, 3), (4, 4)])
    assert board.move_to_location(player.get_action(board)) in [(4, 1), (4, 5), (4, 0), (4, 6)]


@pytest.mark.parametrize("player", [MinimaxPlayer(1), MinimaxPlayer(2)], ids=lambda p: p.name)
def test_minimax_makes_an_open_four(player):
    # X has an open three on row 5 and O nothing: X wins by making an open four.
    board = position(xs=[(4, 3), (4, 4), (4, 5)], os_=[(0, 0), (8, 8)])
    assert board.move_to_location(player.get_action(board)) in [(4, 2), (4, 6)]


def test_minimax_plays_the_centre_on_an_empty_board():
    assert MinimaxPlayer(2).get_action(Board()) == 40
    assert MinimaxPlayer(2).get_action(Board(10, 7)) == 3 * 10 + 5


def test_minimax_rejects_bad_depths():
    for depth in [0, -1, 1.5, True, MAX_MINIMAX_DEPTH + 1]:
        with pytest.raises(ValueError):
            MinimaxPlayer(depth)
    with pytest.raises(ValueError, match=f"DEPTH must be from 1 to {MAX_MINIMAX_DEPTH}, got 50"):
        make_player("minimax:50")  # it searched for ever (issue 28)
    for seconds in [0, -1, float("nan"), float("inf")]:
        with pytest.raises(ValueError, match="seconds"):
            MinimaxPlayer(2, seconds=seconds)


class TickingClock:
    """time.perf_counter for the minimax module: every reading is ``step`` seconds after the last."""

    def __init__(self, step):
        self.now, self.step, self.readings = 0.0, step, 0

    def __call__(self):
        self.now += self.step
        self.readings += 1
        return self.now


@pytest.mark.parametrize("seed", range(3))
def test_minimax_with_a_time_limit_plays_the_deepest_search_that_ended(monkeypatch, seed):
    """Issue 28: minimax:50 ignored --seconds. With a limit it deepens ply by ply and plays the
    choice of the deepest search that ended in time, the move of a player without a limit at that
    depth; a clock that runs out at once still leaves the one-ply choice."""
    board = random_midgame(seed, 8)
    depths = []
    for step, seconds in ((1.0, 1e-6), (1e-3, 0.03), (1e-9, 1e9)):
        clock = TickingClock(step)
        monkeypatch.setattr(minimax.time, "perf_counter", clock)
        player = MinimaxPlayer(MAX_MINIMAX_DEPTH if step > 1e-9 else 3, seconds=seconds)
        move = player.get_action(board)
        monkeypatch.undo()
        assert 1 <= player.last_depth <= player.depth and clock.readings > 0
        assert move == MinimaxPlayer(player.last_depth).get_action(board), (step, player.last_depth)
        depths.append(player.last_depth)
    assert depths[0] == 1 and depths[1] < MAX_MINIMAX_DEPTH and depths[2] == 3  # the last: all the time it needs
    assert make_player("minimax:3", seconds=2.0).seconds == 2.0  # --seconds reaches it


@pytest.mark.parametrize("seed,shape", [(0, (9, 9, 5)), (1, (7, 7, 4)), (2, (5, 5, 2))])
def test_minimax_is_the_one_negamax_in_its_own_style(seed, shape):
    """minimax:DEPTH searches with the classical players' one negamax (``gomoku.players.negamax``),
    in MINIMAX_STYLE: moves played and taken back keep the window counts, shapes and pattern sums
    of a recount (lines of 2 too, where an empty window is already a three), and its values with
    and without pruning agree."""
    from gomoku.players.negamax import NegamaxSearch

    rng = np.random.default_rng(seed)
    board = random_midgame(rng, 2 if shape[2] == 2 else 6, *shape)
    search = NegamaxSearch(board, minimax.MINIMAX_STYLE)
    state = lambda s: (s.counts, s.fours, s.threes, s.pattern, s.near, s.cells.tolist())
    for _ in range(12):
        if search.board.moves and (search.board.game_end()[0] or rng.random() < 0.4):
            search.undo()
        else:
            search.play(int(rng.choice(search.board.availables)))
        assert state(search) == state(NegamaxSearch(search.board, minimax.MINIMAX_STYLE))
    pruned, plain = (NegamaxSearch(board, minimax.MINIMAX_STYLE, prune=prune) for prune in (True, False))
    moves = pruned.ordered_moves(board.current_player, 6)
    assert max(pruned.root_scores(moves, 2)) == max(plain.root_scores(moves, 2))


def test_human_player_at_the_end_of_the_input_stops_the_game():
    """Issue 28: an end of input (Ctrl-D, a closed pipe) gave an EOFError traceback."""
    def closed(prompt):
        raise EOFError

    output = []
    with pytest.raises(InputEnded, match="the input of human ended") as info:
        HumanPlayer(input_fn=closed, output_fn=output.append).get_action(Board())
    assert isinstance(info.value, KeyboardInterrupt) and output[-1] == ""


def test_seeded_players_repeat():
    board = random_midgame(4, 10)
    for spec in ["random", "heuristic", "minimax:2"]:
        first = [make_player(spec, seed=7).get_action(board) for _ in range(3)]
        assert len(set(first)) == 1, spec


# --------------------------------------------------------------------------- specs
@pytest.mark.parametrize("spec,cls,name", [
    ("random", RandomPlayer, "random"),
    ("heuristic", HeuristicPlayer, "heuristic"),
    ("minimax:1", MinimaxPlayer, "minimax:1"),
    (" minimax:3 ", MinimaxPlayer, "minimax:3"),
    ("human", HumanPlayer, "human"),
])
def test_make_player(spec, cls, name):
    player = make_player(spec, seed=0)
    assert type(player) is cls and player.name == name
    assert make_player(spec).name == name


@pytest.fixture
def fake_ai(monkeypatch):
    """A stand-in gomoku.players.search that records how make_player calls it."""
    calls = []

    class PureMCTSPlayer:
        def __init__(self, n_playout, seed=None, seconds=None):
            calls.append(("pure", n_playout, seed) + (() if seconds is None else (f"{seconds:g} s",)))
            self.name = f"pure:{n_playout}"

    class AlphaZeroPlayer:
        @classmethod
        def from_checkpoint(cls, path, n_playout, seed=None, seconds=None, leaves_per_step=1, forced_moves=True,
                            vcf=True, threads=1, vct=True, pipeline=False):
            calls.append(("az", path, n_playout, seed) + (() if seconds is None else (f"{seconds:g} s",))
                         + (("pipelined",) if pipeline else ())
                         + (() if forced_moves else ("no forced moves",))
                         + (() if vcf else ("no vcf",)) + (() if threads == 1 else (f"{threads} threads",))
                         + (() if vct else ("no vct",)))
            return cls()

    module = types.ModuleType("gomoku.players.search")
    module.PureMCTSPlayer, module.AlphaZeroPlayer = PureMCTSPlayer, AlphaZeroPlayer
    monkeypatch.setitem(sys.modules, "gomoku.players.search", module)
    return calls


def test_make_player_wires_pure_and_az(fake_ai):
    make_player("pure:1000", seed=3)
    make_player("az:models/9x9.pt:400", seed=4)
    make_player("az:runs/a:b/best.pt:50")
    make_player("az:m.pt:8", forced_moves=False)
    make_player("az:m.pt:8", vcf=False)
    make_player("az:m.pt:8", threads=2)
    assert fake_ai == [("pure", 1000, 3), ("az", "models/9x9.pt", 400, 4), ("az", "runs/a:b/best.pt", 50, None),
                       ("az", "m.pt", 8, None, "no forced moves"), ("az", "m.pt", 8, None, "no vcf"),
                       ("az", "m.pt", 8, None, "2 threads")]


def test_time_limited_specs(fake_ai):
    make_player("pure:1s", seed=1)
    make_player("pure:250ms")
    make_player("az:models/9x9.pt:1.5s")
    make_player("az:runs/a:b/best.pt:500ms", seconds=9.0)  # the spec's time wins over --seconds
    make_player("pure:100", seconds=2.0)  # a cap and a time
    assert fake_ai == [("pure", None, 1, "1 s"), ("pure", None, None, "0.25 s"), ("az", "models/9x9.pt", None, None, "1.5 s"),
                       ("az", "runs/a:b/best.pt", None, None, "0.5 s"), ("pure", 100, None, "2 s")]
    from gomoku.players import is_timed

    assert [is_timed(s) for s in ("pure:1s", "az:m.pt:200ms", "pbrain:x", "pure:100", "az:m.pt:400", "random")] == [
        True, True, True, False, False, False]


@pytest.mark.parametrize("spec", ["", "foo", "random:3", "random:", "heuristic:", "human:", "heuristic:1", "human:me", "minimax", "minimax:",
                                  "minimax:0", "minimax:-1", "minimax:x", "minimax:2:3", "pure", "pure:",
                                  "pure:0", "pure:1e3", "minimax:²", "pure:²", "az", "az:model.pt", "az::400", "az:model.pt:",
                                  "az:model.pt:many", "AZ:m.pt:4", "Random", "pure:0s", "pure:1 s", "pure:-1s",
                                  "az:m.pt:1h", "pure:ms"])
def test_bad_specs_list_the_valid_forms(spec, fake_ai):
    with pytest.raises(ValueError, match="valid forms") as info:
        make_player(spec)
    assert PLAYER_SPECS_HELP in str(info.value) and repr(spec) in str(info.value)
    assert fake_ai == []


def test_pbrain_specs_name_a_missing_or_not_executable_engine(tmp_path):
    text = tmp_path / "engine.txt"
    text.write_text("not an engine")
    for path, why in ((tmp_path / "nope", "no engine at"), (text, "is not executable (nor a .py script)")):
        with pytest.raises(ValueError, match="valid forms") as info:
            make_player(f"pbrain:{path}:100")
        assert why in str(info.value)
    for turn in ("-5", "abc"):  # not a turn time, so part of the path: the message says what MS must be
        with pytest.raises(ValueError) as info:
            make_player(f"pbrain:{tmp_path / 'nope'}:{turn}")
        assert f"no engine at '{tmp_path / 'nope'}:{turn}' (MS after the last ':' is a whole number" in str(info.value)
    script = tmp_path / "engine.py"  # a Python script runs with this interpreter: no execute bit needed
    script.write_text("")
    assert make_player(f"pbrain:{script}:100").name == f"pbrain:{script}:100"


def test_pure_mcts_with_the_real_module():
    pytest.importorskip("gomoku.players.search")
    player = make_player("pure:50", seed=0)
    board = random_midgame(5, 12)
    before = snapshot(board)
    assert player.get_action(board) in board.availables and snapshot(board) == before


def test_az_players_use_the_vcf_rules_and_pure_mcts_does_not():
    search = pytest.importorskip("gomoku.players.search")
    from mcts import UniformEvaluator

    assert search.AlphaZeroPlayer(UniformEvaluator()).tactics.vcf
    assert not search.AlphaZeroPlayer(UniformEvaluator(), vcf=False).tactics.vcf
    assert not search.AlphaZeroPlayer(UniformEvaluator(), forced_moves=False).tactics.vcf  # VCF needs them
    assert not search.PureMCTSPlayer(50).tactics.vcf  # the classic baseline
    for switched_off in ({"vct": False}, {"vcf": False}, {"forced_moves": False}):  # no VCT, no deep checks
        player = search.AlphaZeroPlayer(UniformEvaluator(), **switched_off)
        assert not player.tactics.vct and player.check_nodes == 0
    assert search.AlphaZeroPlayer(UniformEvaluator()).check_nodes == search.CHECK_NODES


@pytest.mark.parametrize("spec", ["pure:1", "az:1"])
def test_one_playout_plays_a_legal_move(spec):
    """One playout on a fresh root only expands it: no edge is visited, the priors choose."""
    search = pytest.importorskip("gomoku.players.search")
    from mcts import UniformEvaluator

    player = make_player(spec, seed=0) if spec.startswith("pure") else search.AlphaZeroPlayer(UniformEvaluator(), 1)
    board = Board.from_moves([0, 40, 1])
    assert player.get_action(board) in board.availables


def test_importing_players_and_arena_skips_torch_and_pygame():
    code = ("import sys, gomoku.players, gomoku.matches.arena; "
            "assert 'torch' not in sys.modules and 'pygame' not in sys.modules, sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)


# --------------------------------------------------------------------------- human
def test_point_names():
    board = Board()
    assert format_point(board, 40) == "E5" and parse_point(board, " e5 ") == 40
    # standard notation: row 1 is the bottom row (the last row of move = row * width + col)
    assert parse_point(board, "A1") == 72 and parse_point(board, "I9") == 8 and parse_point(board, "A9") == 0
    assert [format_point(board, m) for m in (0, 8, 72, 80)] == ["A9", "I9", "A1", "I1"]
    for text in ["", "5,5", "E", "55", "J1", "A10", "A0", "EE5"]:
        with pytest.raises(ValueError):
            parse_point(board, text)
    wide = Board(10, 7)
    assert parse_point(wide, "J7") == 9 and format_point(wide, 9) == "J7" and format_point(wide, 69) == "J1"


def test_human_player_asks_again_until_the_move_is_legal():
    board = Board.from_moves([40])  # E5 taken
    answers = iter(["hello", "Z9", "E5", "A10", "c2"])
    prompts, output = [], []

    def fake_input(prompt):
        prompts.append(prompt)
        return next(answers)

    player = HumanPlayer(input_fn=fake_input, output_fn=output.append)
    assert player.get_action(board) == board.location_to_move((board.height - 2, 2))  # C2
    assert board.moves == [40]
    assert len(prompts) == 5 and "O" in prompts[0] and "E5" in prompts[0]
    text = "\n".join(output)
    assert str(board) in text and "last move: E5" in text
    assert "bad input 'hello'" in text and "bad input 'Z9'" in text and "bad input 'A10'" in text
    assert "E5 is already taken" in text



def test_a_time_limited_search_has_no_cap_but_its_memory():
    search = pytest.importorskip("gomoku.players.search")
    from mcts import SearchResult, UniformEvaluator

    player = make_player("pure:50ms", seed=0)
    assert player.name == "pure:50ms" and player.n_playout is None
    board = random_midgame(5, 12)
    before = snapshot(board)
    assert player.get_action(board) in board.availables and snapshot(board) == before
    assert player.last_playouts >= search.TIMED_ROUND_PLAYOUTS  # the first round at least, all of it
    # The cap follows the tree's memory: the default budget, or tree_bytes.
    per_playout = search.tree_bytes_per_playout(9, 9, 5)
    assert player.playout_cap(board) == int(search.DEFAULT_TREE_BYTES // per_playout)
    player.tree_bytes = int(1000 * per_playout)
    assert player.playout_cap(board) == 1000
    assert search.tree_bytes_per_playout(32, 32, 5) > 10 * per_playout
    capped = search.AlphaZeroPlayer(UniformEvaluator(), n_playout=5000)
    assert capped.playout_cap(board) == 5000  # a cap asked for, and no memory limit given
    capped.tree_bytes = int(200 * per_playout)
    assert capped.playout_cap(board) == 200
    # Decided: one move searched, or a lead the playouts left cannot overturn.
    priors = np.zeros(81)
    priors[[3, 4]] = 0.5
    visits = np.zeros(81)
    visits[[3, 4]] = (30, 10)
    result = SearchResult(visits=visits, priors=priors, value=0.0, playouts=40)
    assert search.decided(result, playouts_left=19) and not search.decided(result, playouts_left=20)
    priors[4] = 0.0
    assert search.decided(result, playouts_left=10**6)


def test_a_time_limited_search_stops_once_one_move_is_left():
    search = pytest.importorskip("gomoku.players.search")
    from mcts import UniformEvaluator

    # The second player to move must block the first player's four at 4: the only move searched.
    board = Board.from_moves([0, 9, 1, 10, 2, 11, 3])
    player = search.AlphaZeroPlayer(UniformEvaluator(), n_playout=None, seconds=30.0)
    assert player.get_action(board) == 4
    assert player.last_playouts == search.TIMED_ROUND_PLAYOUTS  # one round, the first, not 30 seconds
    player.early_stop = False  # without the early stop it searches on while its clock allows
    player.reset()
    ticks = iter(range(60, -10**9, -1))  # a fake clock: sixty readings with time left, then none
    result = player.analyse(board, time_left=lambda: next(ticks))
    assert result.best_move() == 4 and result.playouts > player.ROUND_PLAYOUTS  # rounds of the most


def test_the_evaluation_cache_answers_exactly_and_counts():
    search = pytest.importorskip("gomoku.players.search")
    from mcts.evaluators import CachedEvaluator

    class Counting:
        """Priors and a value that depend on the whole input; counts the positions it is asked."""

        calls = 0

        def evaluate_batch(self, planes, legal):
            Counting.calls += len(planes)
            weights = np.arange(1, legal.shape[1] + 1) * (1 + planes[:, :2].sum(axis=(1, 2, 3)))[:, None]
            priors = np.where(legal, weights % 7 + 1.0, 0.0)
            return priors / priors.sum(axis=1, keepdims=True), np.tanh(planes[:, 0].sum(axis=(1, 2)) - 3.0)

    def play(cache_entries: int) -> tuple[list[int], list[np.ndarray]]:
        player = search.AlphaZeroPlayer(Counting(), n_playout=120, seed=0, cache_entries=cache_entries)
        board, visits = Board(), []
        for _ in range(6):
            player.reset()  # a fresh tree each move: the positions of the last search come again
            result = player.analyse(board)
            visits.append(result.visits)
            board.do_move(result.best_move())
        return list(board.moves), visits

    Counting.calls = 0
    moves, visits = play(0)
    plain_calls = Counting.calls
    Counting.calls = 0
    cached_moves, cached_visits = play(1000)
    assert cached_moves == moves and all((a == b).all() for a, b in zip(visits, cached_visits))
    assert Counting.calls < plain_calls  # positions met again cost no call

    # Hits and misses; a full memory is cleared, and a different mask is another position.
    cache = CachedEvaluator(Counting(), max_entries=2)
    boards = [Board.from_moves(m) for m in ([], [40], [40, 41])]
    planes = np.stack([b.current_state() for b in boards])
    legal = np.ones((3, 81), dtype=bool)
    first = cache.evaluate_batch(planes[:2], legal[:2])
    again = cache.evaluate_batch(planes[:2], legal[:2])
    assert (cache.hits, cache.misses) == (2, 2) and all((a == b).all() for a, b in zip(first, again))
    legal[0, 5] = False
    cache.evaluate_batch(planes, legal)  # one hit, two new keys: more than the memory holds
    assert (cache.hits, cache.misses) == (3, 4) and len(cache._memory) == 2  # cleared, then the two stored


def test_the_evaluation_cache_copies_and_pickles():
    import copy
    import pickle

    from mcts import UniformEvaluator
    from mcts.evaluators import CachedEvaluator

    cached = CachedEvaluator(UniformEvaluator(), 10)
    planes, legal = np.zeros((1, 4, 9, 9), dtype=np.float32), np.ones((1, 81), dtype=bool)
    cached.evaluate_batch(planes, legal)
    for twin in (copy.copy(cached), pickle.loads(pickle.dumps(cached))):
        assert isinstance(twin.evaluator, UniformEvaluator) and twin.misses == 1
        twin.evaluate_batch(planes, legal)
        assert twin.hits == 1


def test_minimax_says_no_search_chose_a_win_in_one():
    """last_depth kept the previous move's depth when a win in one was taken without a search."""
    player = MinimaxPlayer(3)
    player.get_action(Board.from_moves([40, 0]))
    assert player.last_depth == 3
    four = Board.from_moves([0, 9, 1, 10, 2, 11, 3, 12])  # Black to move completes A..E on the first row
    assert player.get_action(four) == 4 and player.last_depth == 0
