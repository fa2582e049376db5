"""Board rules, coordinates, encoding and errors, checked against a brute-force win scan."""

import numpy as np
import pytest

from gomoku.game.board import DRAW, Board, IllegalMoveError


def play(board: Board, moves) -> Board:
    for move in moves:
        board.do_move(move)
    return board


def line(start, step, length):
    """(row, col) points of a straight line."""
    (row, col), (d_row, d_col) = start, step
    return [(row + i * d_row, col + i * d_col) for i in range(length)]


def interleave(first, second):
    """first[0], second[0], first[1], ... (first may be one longer)."""
    out = []
    for i, move in enumerate(first):
        out.append(move)
        if i < len(second):
            out.append(second[i])
    return out


def snapshot(board: Board):
    return (list(board.moves), dict(board.states), board.current_player, board.game_end(),
            board.current_state().copy())


def brute_force_winner(board: Board) -> int:
    """Scan the whole board for a run of n_in_row; returns 1, 2 or DRAW (nobody)."""
    n = board.n_in_row
    grid = np.zeros((board.height, board.width), dtype=int)
    for move, player in board.states.items():
        grid[move // board.width, move % board.width] = player
    winners = set()
    for player in (1, 2):
        mask = grid == player
        h, w = mask.shape
        for d_row, d_col in ((0, 1), (1, 0), (1, 1), (1, -1)):
            rows = h - (n - 1) * d_row
            cols = w - (n - 1) * abs(d_col)
            if rows <= 0 or cols <= 0:
                continue
            col0 = (n - 1) if d_col < 0 else 0
            run = np.ones((rows, cols), dtype=bool)
            for i in range(n):
                r, c = i * d_row, col0 + i * d_col
                run &= mask[r:r + rows, c:c + cols]
            if run.any():
                winners.add(player)
    assert len(winners) <= 1, "both players have a line: the game should have stopped earlier"
    return winners.pop() if winners else DRAW


# --------------------------------------------------------------------------- wins
FILLER = [(8, 0), (8, 2), (8, 6), (8, 8), (6, 0), (6, 8)]  # O stones far from the lines below


@pytest.mark.parametrize("points", [
    line((0, 0), (0, 1), 5),  # horizontal, top-left corner
    line((8, 4), (0, 1), 5),  # horizontal, bottom edge to the corner
    line((0, 0), (1, 0), 5),  # vertical, left edge from the corner
    line((4, 8), (1, 0), 5),  # vertical, right edge to the bottom corner
    line((0, 0), (1, 1), 5),  # diagonal from the top-left corner
    line((3, 3), (1, 1), 5)[::-1],  # diagonal down to (7, 7), played backwards
    line((0, 8), (1, -1), 5),  # anti-diagonal from the top-right corner
    line((4, 4), (1, -1), 5),  # anti-diagonal to the bottom-left corner (8, 0)
], ids=["h-corner", "h-edge", "v-corner", "v-edge", "d-corner", "d-backwards", "a-corner", "a-corner2"])
def test_five_wins_in_every_direction(points):
    board = Board()
    xs = [board.location_to_move(p) for p in points]
    filler = [board.location_to_move(p) for p in FILLER if board.location_to_move(p) not in xs][:4]
    # Fill the middle of the line last, so the winning stone joins two runs.
    order = xs[:2] + xs[3:] + [xs[2]]
    play(board, interleave(order[:-1], filler))
    assert board.game_end() == (False, DRAW)
    board.do_move(order[-1])
    assert board.game_end() == (True, 1)
    assert board.winner == 1
    assert board.winning_line() == sorted(xs)
    assert board.legal_moves() == []


def test_second_player_wins():
    board = Board()
    os_ = [board.location_to_move((2, c)) for c in range(2, 7)]
    xs = [board.location_to_move(p) for p in [(8, 0), (8, 2), (8, 4), (6, 0), (6, 6), (0, 0)]]
    play(board, interleave(xs[:5], os_))
    assert board.game_end() == (True, 2)


def test_overline_of_six_wins():
    board = Board()
    xs = [board.location_to_move((0, c)) for c in (0, 1, 2, 4, 5)]
    os_ = [board.location_to_move((5, c)) for c in (0, 2, 4, 6, 8)]
    play(board, interleave(xs, os_))
    assert board.game_end() == (False, DRAW)
    board.do_move(board.location_to_move((0, 3)))
    assert board.game_end() == (True, 1)
    assert board.winning_line() == list(range(6))


def test_four_is_not_enough():
    board = play(Board(), interleave([0, 1, 2, 3], [72, 74, 76, 78]))
    assert board.game_end() == (False, DRAW)


# A full 4x4 board with no four in a row anywhere:
#   X X O O
#   O O X X
#   X X O O
#   O O X X
DRAWN_4X4 = ["XXOO", "OOXX", "XXOO", "OOXX"]


def test_full_board_without_a_line_is_a_draw():
    board = Board(4, 4, 4)
    xs = [r * 4 + c for r in range(4) for c in range(4) if DRAWN_4X4[r][c] == "X"]
    os_ = [r * 4 + c for r in range(4) for c in range(4) if DRAWN_4X4[r][c] == "O"]
    for move in interleave(xs, os_)[:-1]:
        board.do_move(move)
        assert board.game_end() == (False, DRAW)
    board.do_move(os_[-1])
    assert board.game_end() == (True, DRAW)
    assert board.winner == DRAW and board.winning_line() == []
    assert board.availables == [] and board.legal_moves() == []


# --------------------------------------------------------------------------- illegal moves
def test_illegal_moves_raise_and_leave_the_board_unchanged():
    board = play(Board(), [40, 41, 30])
    before = snapshot(board)
    for move, text in [(40, "40"), (41, "41"), (-1, "-1"), (81, "81"), (1000, "1000"), (1.5, "1.5"),
                       ("3", "'3'"), (None, "None"), (True, "True")]:
        with pytest.raises(IllegalMoveError, match=None) as info:
            board.do_move(move)
        assert text in str(info.value)
        after = snapshot(board)
        assert after[:4] == before[:4]
        np.testing.assert_array_equal(after[4], before[4])
    assert issubclass(IllegalMoveError, ValueError)


def test_no_move_after_the_game_ended():
    board = play(Board(), interleave([0, 1, 2, 3, 4], [72, 74, 76, 78]))
    assert board.game_end() == (True, 1)
    before = snapshot(board)
    with pytest.raises(IllegalMoveError, match="40"):
        board.do_move(40)
    assert snapshot(board)[:4] == before[:4]


def test_numpy_integers_are_accepted():
    board = Board()
    board.do_move(np.int64(40))
    assert board.moves == [40] and isinstance(board.moves[0], int)


def test_bad_board_arguments():
    for kwargs in [dict(width=0), dict(height=-1), dict(n_in_row=10), dict(start_player=3), dict(width=2.5),
                   dict(start_player=True), dict(start_player=1.0)]:
        with pytest.raises(ValueError):
            Board(**kwargs)


# --------------------------------------------------------------------------- coordinates and state
def test_location_round_trip_on_a_non_square_board():
    board = Board(width=7, height=4, n_in_row=4)
    for move in range(board.size):
        row, col = board.move_to_location(move)
        assert move == row * 7 + col
        assert board.location_to_move((row, col)) == move
    for bad in [(-1, 0), (0, -1), (4, 0), (0, 7)]:
        with pytest.raises(IllegalMoveError, match="off"):
            board.location_to_move(bad)
    for bad in [-1, 28]:
        with pytest.raises(IllegalMoveError, match=str(bad)):
            board.move_to_location(bad)


def test_current_state_planes():
    board = Board(width=7, height=5, n_in_row=4)
    state = board.current_state()
    assert state.shape == (4, 5, 7) and state.dtype == np.float32
    assert state[:3].sum() == 0 and (state[3] == 1).all()  # first player to move
    moves = [board.location_to_move(p) for p in [(0, 6), (4, 0), (2, 3)]]
    play(board, moves)  # X, O, X: O (player 2) to move
    state = board.current_state()
    assert board.current_player == 2
    for move, own, opponent in [(moves[0], 0, 1), (moves[1], 1, 0), (moves[2], 0, 1)]:
        row, col = divmod(move, 7)
        assert state[0, row, col] == own and state[1, row, col] == opponent
    assert state[0].sum() == 1 and state[1].sum() == 2
    assert state[2].sum() == 1 and state[2, 2, 3] == 1  # last move, plane[r][c] == r * width + c
    assert (state[3] == 0).all()  # not the first player's turn
    flat = state.reshape(4, -1)
    assert flat[1, moves[0]] == 1 and flat[0, moves[1]] == 1


def test_start_player_two():
    board = Board(start_player=2)
    assert board.current_player == 2 and board.last_move == -1
    board.do_move(10)
    assert board.stone(10) == 2 and board.current_player == 1 and board.last_move == 10
    state = board.current_state()
    assert state[1, 1, 1] == 1 and (state[3] == 0).all()
    play(board, [0, 11, 1, 12, 2, 13, 3, 14])
    assert board.game_end() == (True, 2)
    picture = str(board).splitlines()  # X is the first player, here player 2
    assert picture[1].split()[1:6] == ["O", "O", "O", "O", "."]
    assert picture[2].split()[1:8] == [".", "X", "X", "X", "X", "X", "."]
    wide = Board(30, 5, 5)  # past Z the columns are numbered
    wide.do_move(29)
    assert str(wide).splitlines()[:2] == ["   " + " ".join(f"{c:>2}" for c in range(1, 31)),
                                          " 5 " + " ".join(" ." for _ in range(29)) + "  X"]


def test_copy_is_independent():
    board = play(Board(), [40, 41])
    clone = board.copy()
    assert clone == board
    clone.do_move(42)
    assert board.moves == [40, 41] and board.stone(42) == 0
    board.do_move(50)
    assert clone.moves == [40, 41, 42] and clone.stone(50) == 0


def test_undo_move():
    board = Board()
    with pytest.raises(IllegalMoveError):
        board.undo_move()
    moves = [0, 72, 1, 74, 2, 76, 3, 78]
    play(board, moves)
    before = snapshot(board)
    board.do_move(4)
    assert board.game_end() == (True, 1)
    assert board.undo_move() == 4
    after = snapshot(board)
    assert after[:4] == before[:4]
    np.testing.assert_array_equal(after[4], before[4])
    assert board == Board.from_moves(moves)


# --------------------------------------------------------------------------- incremental vs brute force
@pytest.mark.parametrize("width,height,n_in_row,games", [
    (9, 9, 5, 30), (8, 8, 5, 20), (6, 6, 4, 30), (15, 15, 5, 6), (7, 10, 5, 20), (10, 7, 5, 10), (5, 5, 5, 20),
])
def test_win_check_matches_brute_force(width, height, n_in_row, games):
    rng = np.random.default_rng(width * 100 + height * 10 + n_in_row)
    results = set()
    for _ in range(games):
        board = Board(width, height, n_in_row, start_player=int(rng.integers(1, 3)))
        while True:
            move = int(rng.choice(board.availables))
            board.do_move(move)
            expected = brute_force_winner(board)
            full = len(board.moves) == board.size
            assert board.game_end() == (expected != DRAW or full, expected), (board.moves, str(board))
            if board.game_end()[0]:
                results.add(expected)
                if expected != DRAW:
                    assert len(board.winning_line()) >= n_in_row
                    assert {board.stone(m) for m in board.winning_line()} == {expected}
                break
    assert results & {1, 2}  # the random games did produce wins
