"""An int8 export of a net (``nets.onnx_quant``), calibrated on real positions: those of seeded games
between heuristic players, each from a random two-stone opening. The quantised model is an ONNX
model like any other: ``--model`` of the window and the engine, and az specs, take its file.
docs/engine.md has its speed and its agreement with the float32 net.
"""

from __future__ import annotations

import numpy as np

from gomoku.game.board import DEFAULT_N_IN_ROW, DEFAULT_SIZE, Board

CALIBRATION_GAMES = 20  # ~1,300 positions; calibrating on 480 more of az games changes nothing measured
OPENING_STONES = 2


def calibration_planes(width: int = DEFAULT_SIZE, height: int = DEFAULT_SIZE, n_in_row: int = DEFAULT_N_IN_ROW,
                       games: int = CALIBRATION_GAMES, seed: int = 0) -> np.ndarray:
    """The planes (``Board.current_state()``, float32 [N, 4, height, width]) of every position
    before the end of ``games`` seeded games between heuristic players from random openings."""
    from gomoku.players import HeuristicPlayer

    rng = np.random.default_rng(seed)
    planes = []
    for _ in range(games):
        players = [HeuristicPlayer(np.random.default_rng(rng.integers(2**32))) for _ in range(2)]
        board = Board(width, height, n_in_row)
        for move in rng.choice(board.size, OPENING_STONES, replace=False):
            board.do_move(int(move))
        while not board.game_end()[0]:
            planes.append(board.current_state())
            board.do_move(players[len(board.moves) % 2].get_action(board))
    return np.array(planes, dtype=np.float32)


def int8_model(model: bytes, width: int, height: int, n_in_row: int = DEFAULT_N_IN_ROW,
               games: int = CALIBRATION_GAMES, seed: int = 0) -> bytes:
    """``model`` (a serialised float32 ONNX export of a net for ``width`` x ``height``) quantised
    to int8, calibrated on ``calibration_planes``."""
    from nets.onnx_quant import quantize_int8

    return quantize_int8(model, calibration_planes(width, height, n_in_row, games, seed))
