"""The search-based players: pure MCTS and the AlphaZero player (net-guided MCTS).

Both run the same array-based search from ``mcts``; they differ only in the evaluator.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from typing import Callable

import numpy as np

from gomoku.game.board import Board
from gomoku.players.classical import Player
from mcts import BatchedMCTS, RolloutEvaluator, SearchConfig, SearchResult
from mcts.search import DEFAULT_VCF_NODES, DEFAULT_VCT_NODES

PLAYER_VCT_LEAF_DEPTH = 2  # the az player's VCT leaf checks (mcts.search; docs/threats.md: ~1.4x a move)

log = logging.getLogger(__name__)

PURE_C_PUCT = 5.0
RUNTIMES = ("auto", "torch", "onnx")  # where a .pt net runs on the CPU


class SearchPlayer(Player):
    """Plays the most visited move of a search; keeps the tree between moves when configured to.

    ``seconds`` (optional) caps the thinking time per move: the search then stops at the end of
    the first round of ``ROUND_PLAYOUTS`` playouts that ends after the time is up (or after
    ``n_playout`` playouts, whichever comes first).
    """

    ROUND_PLAYOUTS = 50

    def __init__(self, name: str, make_evaluator, config: SearchConfig, seed: int | None = None,
                 seconds: float | None = None):
        self.name = name
        self.config = config
        self.seed = seed
        self.seconds = seconds
        self._make_evaluator = make_evaluator
        self._search: BatchedMCTS | None = None
        self._shape: tuple[int, int, int] | None = None
        self.last_result: SearchResult | None = None

    def reset(self) -> None:
        if self._search is not None:
            self._search.reset()

    def check_board(self, board: Board) -> None:
        """Raise ValueError when this player cannot play on ``board`` (the net's size, say)."""

    def _searcher(self, board: Board) -> BatchedMCTS:
        self.check_board(board)
        shape = (board.width, board.height, board.n_in_row)
        if self._search is None or self._shape != shape:
            rng = np.random.default_rng(self.seed)
            self._search = BatchedMCTS(self._make_evaluator(board, rng), *shape, config=self.config, rng=rng)
            self._shape = shape
        return self._search

    def analyse(self, board: Board, on_progress: Callable[[SearchResult], None] | None = None,
                should_stop: Callable[[], bool] | None = None) -> SearchResult:
        """Search the position and return the statistics (the board is not changed).

        With a time limit, a progress callback or a stop check, the search runs in rounds of
        ``ROUND_PLAYOUTS`` playouts: ``on_progress`` sees the statistics after each round, and
        the search ends early once ``should_stop()`` is true or the time is up. Rounds add up to
        the same search as one call (the tree is kept between the rounds of one move).
        """
        search = self._searcher(board)
        if self.seconds is None and on_progress is None and should_stop is None:
            result = search.search([board])[0]
        else:
            deadline = None if self.seconds is None else time.perf_counter() + self.seconds
            if not self.config.reuse_tree:
                search.reset()
            done = 0
            while done < self.config.n_playout:
                step = min(self.ROUND_PLAYOUTS, self.config.n_playout - done)
                result = search.search([board], n_playout=step, keep_tree=True)[0]
                done += step
                if on_progress is not None:
                    on_progress(result)
                if (should_stop is not None and should_stop()) or (
                        deadline is not None and time.perf_counter() >= deadline):
                    break
            result.playouts = done
        self.last_result = result
        return result

    def get_action(self, board: Board) -> int:
        return self.analyse(board).best_move()


class PureMCTSPlayer(SearchPlayer):
    """The classic pure MCTS: uniform priors, random rollouts, c_puct 5, a fresh tree every move."""

    def __init__(self, n_playout: int = 1000, c_puct: float = PURE_C_PUCT, seed: int | None = None,
                 seconds: float | None = None):
        config = SearchConfig(n_playout=n_playout, c_puct=c_puct, reuse_tree=False)
        super().__init__(f"pure:{n_playout}", self._rollouts, config, seed, seconds)

    @staticmethod
    def _rollouts(board: Board, rng: np.random.Generator) -> RolloutEvaluator:
        return RolloutEvaluator(board.width, board.height, board.n_in_row, rng)


class AlphaZeroPlayer(SearchPlayer):
    """Net-guided PUCT search, no noise, most visited move, the tree reused between moves.

    ``forced_moves`` (default on) applies the search's exact forced-move rules: take a five, block
    a four; ``vcf`` (default on, only together with ``forced_moves``) adds the exact VCF rules: a
    win by continuous fours is valued as won and played, and at the root the opponent's is
    stopped (see ``mcts.search``; ``vcf_nodes`` is the solver's budget per call); ``vct`` (default
    on, only together with ``vcf``) does the same at the root for wins by continuous threats (fours
    and threes, ``mcts.vct``, ``vct_nodes`` per call), and values positions two moves down where
    the player to move has one as won."""

    def __init__(self, evaluator, n_playout: int = 400, c_puct: float = 5.0, seed: int | None = None,
                 seconds: float | None = None, leaves_per_step: int = 1, name: str | None = None,
                 forced_moves: bool = True, vcf: bool = True, vcf_nodes: int = DEFAULT_VCF_NODES,
                 vct: bool = True, vct_nodes: int = DEFAULT_VCT_NODES):
        config = SearchConfig(n_playout=n_playout, c_puct=c_puct, noise=False, reuse_tree=True,
                              leaves_per_step=leaves_per_step, forced_moves=forced_moves,
                              vcf=vcf and forced_moves, vcf_nodes=vcf_nodes,
                              vct=vct and vcf and forced_moves, vct_nodes=vct_nodes,
                              vct_leaf_depth=PLAYER_VCT_LEAF_DEPTH if vct and vcf and forced_moves else 0)
        self.evaluator = evaluator
        self.net_config = None  # set when loaded from a checkpoint: the board size the net is for
        self.n_in_row: int | None = None  # likewise: the rule it was trained for
        super().__init__(name or f"az:{n_playout}", lambda board, rng: evaluator, config, seed, seconds)

    def check_board(self, board: Board) -> None:
        """Refuse a board of another size, or another rule, than the net was trained for."""
        c = self.net_config
        if c is not None and (c.width, c.height) != (board.width, board.height):
            raise ValueError(f"{self.name}: the net is for a {c.width}x{c.height} board, "
                             f"not {board.width}x{board.height}")
        if self.n_in_row is not None and board.n_in_row != self.n_in_row:
            raise ValueError(f"{self.name}: the net was trained for {self.n_in_row} in a row, "
                             f"not {board.n_in_row}")

    @classmethod
    def from_checkpoint(cls, path: str, n_playout: int = 400, seed: int | None = None,
                        device: str | None = None, runtime: str = "auto", threads: int = 1,
                        **kwargs) -> "AlphaZeroPlayer":
        """Load a model or training checkpoint (torch is imported only here), or an exported
        ``.onnx`` model, which runs on onnxruntime.

        ``runtime``: where a ``.pt`` net runs on the CPU: "torch", "onnx" (exported to a temporary
        file and checked against torch first), or "auto" = onnx on a CPU when onnxruntime is
        installed (about twice as fast for one position at a time), torch otherwise.
        ``threads``: onnxruntime's intra-op threads (1 where several searches share the cores).
        The player keeps the rule the net was trained for (``n_in_row``, 5 for files that record
        none) and refuses, with a ValueError, a board with another rule or size."""
        if runtime not in RUNTIMES:
            raise ValueError(f"runtime must be one of {', '.join(RUNTIMES)}, got {runtime!r}")
        from nets.checkpoint import DEFAULT_N_IN_ROW

        if str(path).lower().endswith(".onnx"):
            from nets.onnx_evaluator import OnnxEvaluator

            evaluator = OnnxEvaluator(path, threads=threads)
            net_config, n_in_row = evaluator.config, evaluator.n_in_row
            if n_in_row is None:
                log.info("%s records no n_in_row: assuming %d in a row", path, DEFAULT_N_IN_ROW)
                n_in_row = DEFAULT_N_IN_ROW
        else:
            from nets import NetEvaluator, default_device
            from nets.checkpoint import load_model

            net, n_in_row = load_model(path)
            net_config = net.config
            device = device or default_device()
            if _use_onnx(runtime, device):
                from nets.onnx_evaluator import OnnxEvaluator
                from nets.onnx_export import export_temporary

                evaluator = OnnxEvaluator(export_temporary(net, n_in_row), threads=threads)
            else:
                evaluator = NetEvaluator(net, device)
        player = cls(evaluator, n_playout=n_playout, seed=seed, name=f"az:{path}:{n_playout}", **kwargs)
        player.net_config = net_config
        player.n_in_row = n_in_row
        return player


def _use_onnx(runtime: str, device: str) -> bool:
    if runtime == "torch" or not str(device).startswith("cpu"):
        return False
    if runtime == "onnx":
        return True
    from nets.onnx_export import onnx_available

    return onnx_available()
