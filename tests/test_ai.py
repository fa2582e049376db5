"""The search players: pure MCTS and the AlphaZero player built from checkpoints."""

import pytest
import torch

from gomoku import Board
from gomoku.players.search import AlphaZeroPlayer, PureMCTSPlayer
from gomoku.players import make_player
from nets import NetConfig, build_net, save_model

BOTH_FOUR = [36, 72, 37, 73, 38, 74, 39, 75]  # black to move wins at 40


@pytest.fixture
def model_path(tmp_path):
    path = tmp_path / "random9.pt"
    save_model(path, build_net(NetConfig()))
    return path


def test_pure_player_is_seeded_and_leaves_the_board_alone():
    board = Board.from_moves([40, 41])
    moves = [PureMCTSPlayer(200, seed=5).get_action(board) for _ in range(2)]
    assert moves[0] == moves[1] and board.moves == [40, 41]
    assert make_player("pure:1000", seed=1).get_action(Board.from_moves(BOTH_FOUR)) == 40


def test_az_player_from_checkpoint(model_path):
    player = make_player(f"az:{model_path}:100", seed=0)
    assert isinstance(player, AlphaZeroPlayer)
    assert not player.config.noise  # noise is for self-play only
    board = Board.from_moves(BOTH_FOUR)
    assert player.get_action(board) == 40
    assert player.last_result.playouts == 0 and player.last_result.value == 1.0  # a won line: no search
    result = player.analyse(Board.from_moves([40, 41]))
    assert result.visits.sum() == 99 and -1 <= result.value <= 1
    with pytest.raises(ValueError, match="9x9 board, not 7x7"):
        player.get_action(Board(7, 7, 5))


def test_analyse_in_rounds_reports_progress_and_stops(model_path):
    player = AlphaZeroPlayer.from_checkpoint(str(model_path), n_playout=400, seed=0)
    seen = []
    result = player.analyse(Board(), on_progress=lambda r: seen.append(r.visits.sum()),
                            should_stop=lambda: len(seen) >= 3)
    assert len(seen) == 3 and result.playouts == 150
    assert seen == sorted(seen)


def test_time_budget_caps_the_search():
    player = make_player("pure:100000", seed=0, seconds=0.05)
    player.get_action(Board())
    assert player.last_result.playouts < 100000


def test_window_opponent_searches_with_several_leaves_and_threads(model_path):
    from gomoku.players import WINDOW_LEAVES, WINDOW_THREADS
    from gomoku.ui.ai import build_opponent

    player = build_opponent(f"az:{model_path}:64", size=9, seed=0)
    assert player.config.leaves_per_step == WINDOW_LEAVES > 1
    if torch.cuda.is_available():  # a GPU machine's default runtime is torch on CUDA (nets.loading)
        assert player.evaluator.device.type == "cuda"
    else:  # onnxruntime is a core dependency: the default runtime on a CPU
        session = player.evaluator.session
        assert session.get_session_options().intra_op_num_threads == WINDOW_THREADS
    assert player.get_action(Board.from_moves(BOTH_FOUR)) == 40
    assert make_player(f"az:{model_path}:64", seed=0).config.leaves_per_step == 1  # elsewhere: exact search


def test_a_time_cap_is_kept_on_every_step_of_the_strength_ladder():
    """With --seconds 1 the capped strength sorted after every uncapped preset: - gave "6400
    playouts" (no cap), + went past the cap to 3 and 10 s a move."""
    from gomoku.ui.ai import SECONDS_PLAYOUT_CAP, STRENGTH_PRESETS, Strength, strength_ladder

    ladder = strength_ladder(Strength(400, 1.0), 1.0)
    assert [s.label for s in ladder] == ["100 playouts, at most 1 s", "400 playouts, at most 1 s",
                                         "1600 playouts, at most 1 s", "6400 playouts, at most 1 s", "1 s a move"]
    assert strength_ladder(Strength(50)) == [Strength(50), *STRENGTH_PRESETS]  # no cap: the presets
    assert strength_ladder(Strength(SECONDS_PLAYOUT_CAP, 0.5)).index(Strength(SECONDS_PLAYOUT_CAP, 0.5)) == 4


def test_a_timed_spec_has_a_time_strength():
    """az:PATH:1s and pure:500ms were "fixed": + and - did nothing."""
    from gomoku.ui.ai import SECONDS_PLAYOUT_CAP, Strength, spec_strength

    assert spec_strength("az:models/9x9.pt:1s") == Strength(SECONDS_PLAYOUT_CAP, 1.0)
    assert spec_strength("pure:500ms", 3.0) == Strength(SECONDS_PLAYOUT_CAP, 0.5)  # the spec's time comes first
    assert spec_strength("az:runs/a:b/best.pt:400", 2.0) == Strength(400, 2.0)
    assert spec_strength("minimax:2") is None and spec_strength("pure:x") is None


def test_a_timed_search_job_counts_its_playouts_without_a_target():
    """A time-limited search showed 1/1 playouts while it ran: its target was the config's 1."""
    from gomoku.ui.thinking import SearchJob

    job = SearchJob(make_player("pure:100ms", seed=0), Board())
    job.start()
    job.thread.join()  # a search of 0.1 s, in rounds
    assert job.target_playouts() is None
    assert job.live().playouts == job.answer().analysis.playouts > 1
    assert SearchJob(make_player("pure:300", seed=0), Board()).target_playouts() == 300
    assert SearchJob(make_player("pure:300", seed=0, seconds=1.0), Board()).target_playouts() is None


@pytest.mark.parametrize("size", [9, 15, 20])
def test_the_ais_first_move_is_the_centre(size):
    """On 15x15 the AI opened at L13 (flat priors on an empty board): the first move is the centre."""
    from gomoku.ui.thinking import SearchJob

    board = Board(size, size)
    for spec in ("random", "pure:50"):
        job = SearchJob(make_player(spec, seed=1), board)
        job.start()
        job.thread.join()
        assert job.answer().move == board.centre == (size // 2) * size + size // 2, spec
