"""Self-play: many games advanced together, their leaves batched.

``SelfPlayRunner`` keeps ``parallel_games`` games going in one process: each step runs one
batched search over all of them (one network call per playout for the whole batch) and plays a
move in each. ``play`` returns a ``SelfPlayResult``: the finished games (``SelfPlayGame``, the
training samples of its recorded positions) and the moves made meanwhile; games still running are
kept for the next call. A ``Worker`` (gomoku.training.backends.worker) runs one in a worker
process or a Ray actor.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable

import numpy as np

from gomoku.game.board import DRAW, Board
from gomoku.tactics import TacticsConfig, make_rules
from gomoku.training.config import BoardConfig, SearchSection
from gomoku.training.samples import Samples
from mcts.game import Rules
from mcts import BatchedMCTS, Evaluator, SearchConfig, visit_policy

log = logging.getLogger(__name__)

GREEDY = 0.0  # temperature meaning "play the most visited move"
PLANES = 4  # the input planes of a position (Board.current_state)


@dataclass(frozen=True, eq=False)
class SelfPlayGame(Samples):
    """A finished game: the samples of its recorded positions (every move's, unless playout cap
    randomization records only the full searches: the search's visit distribution there, and +1 /
    -1 / 0 for the player to move there), its moves and its winner."""

    moves: tuple[int, ...]
    winner: int  # 1, 2 or -1 (draw)


@dataclass(frozen=True)
class SelfPlayResult:
    """Finished games, and the moves made meanwhile in all games (unfinished ones included)."""

    games: tuple[SelfPlayGame, ...] = ()
    moves: int = 0

    def __add__(self, other: "SelfPlayResult") -> "SelfPlayResult":
        return SelfPlayResult(self.games + other.games, self.moves + other.moves)


class SelfPlayRunner:
    def __init__(self, evaluator: Evaluator, board: BoardConfig, search: SearchSection,
                 parallel_games: int, rng: np.random.Generator, rules: Rules | None = None):
        """``rules``: the search's rules object (default: ``search``'s, from ``make_rules``)."""
        self.board_config = board
        self.search_section = search
        self.rng = rng
        if rules is None:
            rules = make_rules(board.width, board.height, board.n_in_row, TacticsConfig.of(search))
        self.search = BatchedMCTS(evaluator, rules, SearchConfig.of(search, noise=True), n_trees=parallel_games,
                                  rng=rng)
        self.boards = [self._new_board() for _ in range(parallel_games)]
        self.samples: list[list[tuple[np.ndarray, np.ndarray, int]]] = [[] for _ in range(parallel_games)]

    def _new_board(self) -> Board:
        b = self.board_config
        return Board(b.width, b.height, b.n_in_row)

    def set_rng(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.search.rng = rng

    def play(self, min_games: int, on_game: Callable[[SelfPlayGame], None] | None = None) -> SelfPlayResult:
        """Advance all games until at least ``min_games`` have finished; return the finished ones
        and the moves made in all games meanwhile (for speed figures)."""
        finished: list[SelfPlayGame] = []
        moves = 0
        s = self.search_section
        while len(finished) < min_games:
            # Playout cap randomization: one draw per step for all games (see SearchSection).
            full = s.fast_playouts == 0 or self.rng.random() < s.full_search_prob
            if full:
                results = self.search.search(self.boards)
            else:
                results = self.search.search(self.boards, noise=False, n_playout=s.fast_playouts)
            for i, (board, result) in enumerate(zip(self.boards, results)):
                if result.improved is not None:  # Gumbel root: its move, its improved policy
                    move, target = result.selected, result.improved
                else:
                    early = len(board.moves) < s.temperature_moves
                    move_probs = visit_policy(result.visits, s.temperature if early else GREEDY)
                    move = int(self.rng.choice(len(move_probs), p=move_probs))
                    target = result.policy(1.0)
                if full:
                    self.samples[i].append((board.current_state(), target.astype(np.float32), board.current_player))
                board.do_move(move)
                moves += 1
                ended, winner = board.game_end()
                if ended:
                    game = self._finish(i, winner)
                    finished.append(game)
                    if on_game is not None:
                        on_game(game)
        return SelfPlayResult(tuple(finished), moves)

    def _finish(self, i: int, winner: int) -> SelfPlayGame:
        samples, board = self.samples[i], self.boards[i]
        players = np.array([player for _, _, player in samples])
        outcomes = np.zeros(len(samples), dtype=np.float32)
        if winner != DRAW:
            outcomes[:] = np.where(players == winner, 1.0, -1.0)
        height, width = board.height, board.width
        states = np.stack([s for s, _, _ in samples]) if samples else np.zeros((0, PLANES, height, width), np.float32)
        probs = np.stack([p for _, p, _ in samples]) if samples else np.zeros((0, height * width), np.float32)
        game = SelfPlayGame(states, probs, outcomes, moves=tuple(board.moves), winner=winner)
        self.boards[i] = self._new_board()
        self.samples[i] = []
        self.search.reset(i)
        return game
