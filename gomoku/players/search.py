"""The search-based players: pure MCTS and the AlphaZero player (net-guided MCTS).

Both run the same array-based search from ``mcts``; they differ only in the evaluator, and the
AlphaZero player's deep threat checks around its search (``gomoku.players.checks``).
"""

from __future__ import annotations

import functools
import logging
import time
from dataclasses import replace
from typing import Callable

import numpy as np

from gomoku.game.board import Board
from gomoku.players.checks import CHECK_NODES, CHECK_TIME_SHARE, ThreatChecks
from gomoku.players.classical import Player
from gomoku.tactics import (COMPILED, DEFAULT_VCF_NODES, DEFAULT_VCT_NODES, NO_TACTICS, RolloutEvaluator,
                            TacticsConfig, TacticsSettings, make_rules)
from gomoku.tactics.threats import NO_MOVE
from mcts import BatchedMCTS, SearchConfig, SearchResult, SearchSettings, UniformEvaluator
from mcts.evaluators import CachedEvaluator
from mcts.search import CAPACITY_PER_PLAYOUT

PLAYER_VCT_LEAF_DEPTH = 2  # the az player's VCT leaf checks (gomoku.tactics.rules; docs/threats.md: ~1.4x a move)

log = logging.getLogger(__name__)

PURE_C_PUCT = 5.0
PLAYER_C_PUCT = 5.0  # the az player's PUCT exploration weight (2.5 measured no stronger: docs/results/ladder.md)


DEFAULT_TREE_BYTES = 512 * 2**20  # the tree of a search without a playout cap (time-limited)
MIN_PLAYOUT_CAP = 16  # the smallest cap a memory budget makes
TIMED_ROUND_PLAYOUTS = 16  # the first round's playouts when the clock ends the search (read between rounds)
TIMED_ROUND_MAX_PLAYOUTS = 64  # the most a round then: each round costs ~0.3 ms besides its playouts
ROUND_SAFETY = 1.25  # a round must end in time at the last round's pace times this (else the search stops)


@functools.lru_cache(maxsize=None)
def tree_bytes_per_playout(width: int, height: int, n_in_row: int) -> float:
    """Bytes of search tree one playout of a ``width`` x ``height`` search reserves (read off a
    tiny search's arrays, so it follows the search's layout)."""
    probe = BatchedMCTS(UniformEvaluator(), make_rules(width, height, n_in_row), SearchConfig(n_playout=1))
    arrays = (probe.prior, probe.visits, probe.value_sum, probe.children, probe.node_visits)
    return sum(array.nbytes for array in arrays) / probe.capacity * CAPACITY_PER_PLAYOUT


def decided(result: SearchResult, playouts_left: float) -> bool:
    """Whether more playouts cannot change the move: a single move searched at the root (the
    forced-move, win and VCF rules left one), or a visit lead over the runner-up larger than the
    playouts that remain."""
    if np.count_nonzero(result.priors > 0) <= 1:
        return True
    second, first = np.partition(result.visits, -2)[-2:]
    return first - second > playouts_left


class SearchPlayer(Player):
    """Plays the most visited move of a search; keeps the tree between moves when configured to.

    ``n_playout`` caps the playouts per move; None (time-limited players, the engine's player,
    whose clock comes with each move) leaves the cap to the memory budget. ``seconds`` (optional) limits the thinking time per move: the search then runs
    in rounds and stops before the round that would end after the time is up, after the cap, or
    as soon as the move is decided (``decided``; with ``early_stop``). ``tree_bytes`` bounds the
    tree's memory (the cap is lowered to fit; default ``DEFAULT_TREE_BYTES`` without a cap).
    ``tactics``: the forced-move and threat rules the search plays by (default none).
    """

    ROUND_PLAYOUTS = 50

    def __init__(self, name: str, make_evaluator, config: SearchConfig, seed: int | None = None,
                 seconds: float | None = None, n_playout: int | None = None, tactics: TacticsConfig = NO_TACTICS):
        self.name = name
        self.config = config
        self.tactics = tactics
        self.n_playout = n_playout
        self.seed = seed
        self.seconds = seconds
        self.tree_bytes: int | None = None
        self.early_stop = True
        self._make_evaluator = make_evaluator
        self._search: BatchedMCTS | None = None
        self._shape: tuple[int, int, int] | None = None
        self.last_result: SearchResult | None = None
        self.last_threatened = False  # whether the last search ran the final check (``final_check_nodes``)
        if n_playout is None:
            self.ROUND_PLAYOUTS = TIMED_ROUND_MAX_PLAYOUTS

    @property
    def last_playouts(self) -> int | None:
        """Playouts of the last search (None before one)."""
        return None if self.last_result is None else int(self.last_result.playouts)

    @property
    def last_value(self) -> float | None:
        """The last search's root value for the side that moved: -1 lost .. 1 won (None before one)."""
        return None if self.last_result is None else float(self.last_result.value)

    def reset(self) -> None:
        if self._search is not None:
            self._search.reset()

    def check_board(self, board: Board) -> None:
        """Raise ValueError when this player cannot play on ``board`` (the net's size, say)."""

    def playout_cap(self, board: Board) -> int:
        """The most playouts one move may take on ``board``: ``n_playout``, lowered to what
        ``tree_bytes`` holds (``DEFAULT_TREE_BYTES`` when there is no ``n_playout``)."""
        budget = self.tree_bytes
        if budget is None and self.n_playout is None:
            budget = DEFAULT_TREE_BYTES
        if budget is None:
            return self.n_playout
        fits = max(MIN_PLAYOUT_CAP, int(budget // tree_bytes_per_playout(board.width, board.height, board.n_in_row)))
        return fits if self.n_playout is None else min(self.n_playout, fits)

    def _searcher(self, board: Board) -> BatchedMCTS:
        self.check_board(board)
        shape = (board.width, board.height, board.n_in_row)
        cap = self.playout_cap(board)
        if self._search is None or self._shape != shape or self._search.config.n_playout != cap:
            rng = np.random.default_rng(self.seed)
            self._search = BatchedMCTS(self._make_evaluator(board, rng), make_rules(*shape, self.tactics),
                                       replace(self.config, n_playout=cap), rng=rng)
            self._shape = shape
        return self._search

    def analyse(self, board: Board, on_progress: Callable[[SearchResult], None] | None = None,
                should_stop: Callable[[], bool] | None = None, time_left: Callable[[], float] | None = None,
                playouts: int | None = None) -> SearchResult:
        """Search the position and return the statistics (the board is not changed).

        ``playouts``: this move's most playouts (default: the cap). ``time_left()``: the seconds
        the search may still take (default: from ``seconds``, when set). With a time limit, a
        progress callback or a stop check, the search runs in rounds of ``ROUND_PLAYOUTS``
        playouts: ``on_progress`` sees the statistics after each round, and the search ends once
        ``should_stop()`` is true, not even a short round would fit the time left, or (``early_stop``,
        with a time limit) the move is decided. Rounds add up to the same search as one call (the
        tree is kept between the rounds of one move). ``result.playouts`` counts the playouts run.
        Once ``should_stop()`` is true or the time is up, the threat checks of the round running
        give up (counted as out of budget: a root VCT defence check of every move, say, may take
        most of a second), so that the round ends once its playouts are run. Under a clock the
        first round has at most TIMED_ROUND_PLAYOUTS playouts, the next ones as many as fit in
        the time left at the last round's pace (ROUND_SAFETY), at most ``ROUND_PLAYOUTS``.
        """
        if time_left is None and self.seconds is not None:  # the clock starts before the tree is built
            deadline = time.perf_counter() + self.seconds
            time_left = lambda: deadline - time.perf_counter()  # noqa: E731
        search = self._searcher(board)
        limit = search.config.n_playout if playouts is None else max(1, min(playouts, search.config.n_playout))
        interrupt = _interrupt(should_stop, time_left)
        # Under a clock the two checks before the search take at most CHECK_TIME_SHARE of the time
        # together, the first at most half of it.
        check_stop = _interrupt(should_stop, _share(time_left, CHECK_TIME_SHARE))
        win = self.deep_win(board, _interrupt(should_stop, _share(time_left, CHECK_TIME_SHARE / 2)))
        if win != NO_MOVE:  # a forced win: no search needed
            self.last_threatened = False
            self.last_result = proven_win(board, win)
            return self.last_result
        check_nodes = self.final_check_nodes(board, check_stop)
        self.last_threatened = check_nodes > 0
        if check_nodes and time_left is not None:  # keep a share of the time for the final check
            time_left = _share(time_left, 1 - CHECK_TIME_SHARE)
        if time_left is None and on_progress is None and should_stop is None:
            result = search.search([board], n_playout=limit)[0]
        else:
            if not self.config.reuse_tree:
                search.reset()
            done, started = 0, time.perf_counter()
            round_stop = _interrupt(should_stop, time_left)
            # Under a clock the first round is small (its pace is not known yet); the next ones are
            # as long as ROUND_PLAYOUTS allows within the time left, at the pace of the last one.
            step = self.ROUND_PLAYOUTS if time_left is None else min(self.ROUND_PLAYOUTS, TIMED_ROUND_PLAYOUTS)
            while done < limit:
                step = min(step, limit - done)
                round_started = time.perf_counter()
                result = search.search([board], n_playout=step, keep_tree=True, stop=round_stop)[0]
                now = time.perf_counter()
                done += step
                result = replace(result, playouts=done)
                if on_progress is not None:
                    on_progress(result)
                if should_stop is not None and should_stop():
                    break
                if time_left is not None:
                    left = time_left()
                    fits = int(left / (ROUND_SAFETY * max(now - round_started, 1e-9) / step))  # playouts
                    if fits < min(step, TIMED_ROUND_PLAYOUTS):
                        break
                    step = min(self.ROUND_PLAYOUTS, fits)
                    if self.early_stop and decided(result, min(limit - done, done / (now - started) * left)):
                        log.debug("%s: decided after %d playouts", self.name, done)
                        break
        if check_nodes:
            result = self.final_check(board, result, interrupt, check_nodes)
        self.last_result = result
        return result

    def deep_win(self, board: Board, stop: Callable[[], bool] | None) -> int:
        """The first move of a forced win to play without a search (never here: see AlphaZeroPlayer)."""
        return NO_MOVE

    def final_check_nodes(self, board: Board, stop: Callable[[], bool] | None) -> int:
        """The final check's budget per candidate move, 0 when the search's chosen move needs no
        check (always here: see AlphaZeroPlayer)."""
        return 0

    def final_check(self, board: Board, result: SearchResult, stop: Callable[[], bool] | None,
                    nodes: int) -> SearchResult:
        """``result`` with the moves to pass over ``refuted`` (none here: see AlphaZeroPlayer)."""
        return result

    def get_action(self, board: Board) -> int:
        return self.analyse(board).best_move()


class PureMCTSPlayer(SearchPlayer):
    """The classic pure MCTS: uniform priors, random rollouts, c_puct 5, a fresh tree every move.
    ``n_playout`` None: searches for ``seconds`` a move (the tree's memory bounds it)."""

    def __init__(self, n_playout: int | None = 1000, c_puct: float = PURE_C_PUCT, seed: int | None = None,
                 seconds: float | None = None):
        config = SearchConfig(n_playout=n_playout or 1, c_puct=c_puct, reuse_tree=False)
        super().__init__(f"pure:{spec_amount(n_playout, seconds)}", self._rollouts, config, seed, seconds,
                         n_playout)

    @staticmethod
    def _rollouts(board: Board, rng: np.random.Generator) -> RolloutEvaluator:
        return RolloutEvaluator(board.width, board.height, board.n_in_row, rng)


def proven_win(board: Board, move: int) -> SearchResult:
    """The result of a move that wins by force (a proved VCT): all the weight on ``move``, value +1,
    no playouts."""
    visits = np.zeros(board.width * board.height)
    visits[move] = 1.0
    q = np.where(visits > 0, 1.0, np.nan)
    return SearchResult(visits=visits, priors=visits.copy(), value=1.0, playouts=0, q=q, lines=((move,),))


def _interrupt(should_stop: Callable[[], bool] | None,
               time_left: Callable[[], float] | None) -> Callable[[], bool] | None:
    """What stops a round's threat checks (``BatchedMCTS.search``'s ``stop``): the caller's stop,
    or the time being up (None when neither is given)."""
    if should_stop is None and time_left is None:
        return None
    return lambda: (should_stop is not None and should_stop()) or (time_left is not None and time_left() <= 0)


def _share(time_left: Callable[[], float] | None, share: float) -> Callable[[], float] | None:
    """A clock that runs out once ``1 - share`` of the time ``time_left`` gives now has passed."""
    if time_left is None:
        return None
    keep = (1 - share) * time_left()
    return lambda: time_left() - keep


def spec_amount(n_playout: int | None, seconds: float | None) -> str:
    """The last part of a search player's spec: its playouts, or its time (``1s``, ``500ms``)."""
    if n_playout is not None:
        return str(n_playout)
    if seconds is None:
        return "clock"  # the caller's clock (the engine's) gives each move its time
    return f"{seconds:g}s" if seconds >= 1 else f"{seconds * 1000:g}ms"


class AlphaZeroPlayer(SearchPlayer):
    """Net-guided PUCT search, no noise, most visited move, the tree reused between moves.

    ``forced_moves`` (default on) applies the search's exact forced-move rules: take a five, block
    a four; ``vcf`` (default on, only together with ``forced_moves``) adds the exact VCF rules: a
    win by continuous fours is valued as won and played, and at the root the opponent's is
    stopped (see ``gomoku.tactics.rules``; ``vcf_nodes`` is the solver's budget per call); ``vct`` (default
    on, only together with ``vcf``) does the same at the root for wins by continuous threats (fours
    and threes, ``gomoku.tactics.vct``, ``vct_nodes`` per call), and values positions two moves down where
    the player to move has one as won. ``cache_entries`` > 0 puts a ``CachedEvaluator`` of that
    size in front of the evaluator (a position met again, in this search or an earlier one of the
    game, costs no net call; the answers are the same). ``pipeline`` (with ``leaves_per_step`` > 1;
    ignored otherwise) runs the net on a thread of its own while the search gathers the next
    leaves (``SearchConfig.pipeline``: two cores). ``check_nodes`` (with ``vct``; 0 off) is
    the budget of the deep checks: a VCT of its own is played at once (``deep_win``), and the move
    is checked against the opponent's (``final_check_nodes``, ``final_check``). ``tactics``: the
    threat solvers, "compiled" or "reference" (``gomoku.tactics``: the same answers)."""

    def __init__(self, evaluator, n_playout: int | None = 400, c_puct: float = PLAYER_C_PUCT, seed: int | None = None,
                 seconds: float | None = None, leaves_per_step: int = 1, name: str | None = None,
                 forced_moves: bool = True, vcf: bool = True, vcf_nodes: int = DEFAULT_VCF_NODES,
                 vct: bool = True, vct_nodes: int = DEFAULT_VCT_NODES, cache_entries: int = 0,
                 check_nodes: int = CHECK_NODES, pipeline: bool = False, tactics: str = COMPILED):
        if cache_entries:
            evaluator = CachedEvaluator(evaluator, cache_entries)
        settings = SearchSettings(n_playout=n_playout or 1, c_puct=c_puct, leaves_per_step=leaves_per_step)
        config = SearchConfig.of(settings, noise=False, reuse_tree=True, pipeline=pipeline and leaves_per_step > 1)
        tactics = TacticsConfig.of(TacticsSettings(forced_moves=forced_moves, vcf=vcf, vcf_nodes=vcf_nodes, vct=vct,
                                                   vct_nodes=vct_nodes, tactics=tactics))
        tactics = replace(tactics, vct_leaf_depth=PLAYER_VCT_LEAF_DEPTH if tactics.vct else 0)
        self.evaluator = evaluator
        self.net_config = None  # set when loaded from a checkpoint: the board sizes the net plays
        self.n_in_row: int | None = None  # likewise: the rule it was trained for
        # The deep checks (check_nodes a solve): VCT needs VCF, which needs forced moves.
        self.checks = ThreatChecks(check_nodes if tactics.vct else 0, tactics.tactics)
        super().__init__(name or f"az:{spec_amount(n_playout, seconds)}", lambda board, rng: evaluator, config, seed,
                         seconds, n_playout, tactics)

    @property
    def check_nodes(self) -> int:
        """The deep checks' budget of one solve (0: off)."""
        return self.checks.nodes

    @classmethod
    def searching_as(cls, evaluator, settings: SearchSettings, n_playout: int, seed: int | None = None,
                     **kwargs) -> "AlphaZeroPlayer":
        """The player searching with a run's ``settings`` (a run's search section, the search's and
        the rules' settings: its c_puct and exact rules; one leaf per evaluator call and a PUCT
        root), ``n_playout`` playouts a move."""
        return cls(evaluator, n_playout=n_playout, c_puct=settings.c_puct, seed=seed,
                   forced_moves=settings.forced_moves, vcf=settings.vcf, vcf_nodes=settings.vcf_nodes,
                   vct=settings.vct, vct_nodes=settings.vct_nodes, tactics=settings.tactics, **kwargs)

    def deep_win(self, board: Board, stop: Callable[[], bool] | None) -> int:
        """The first check (``ThreatChecks.own_win``): a VCT of its own, played without a search."""
        return self.checks.own_win(board, stop)

    def final_check_nodes(self, board: Board, stop: Callable[[], bool] | None) -> int:
        """The final check's budget per candidate (``ThreatChecks.threat_budget``)."""
        return self.checks.threat_budget(board, stop)

    def final_check(self, board: Board, result: SearchResult, stop: Callable[[], bool] | None,
                    nodes: int) -> SearchResult:
        """``result`` passing over the moves after which the opponent has a VCT
        (``ThreatChecks.refuted``)."""
        refuted = self.checks.refuted(board, result, stop, nodes)
        if not refuted:
            return result
        log.debug("%s: the final check passes over %s", self.name, refuted)
        return replace(result, refuted=refuted)

    def check_board(self, board: Board) -> None:
        """Refuse a board the net does not play (``NetConfig.plays``: an fc net only the size it
        was trained on, a pooled net any), or a rule it was not trained for."""
        c = self.net_config
        if c is not None and not c.plays(board.width, board.height):
            raise ValueError(f"{self.name}: the net is for {c.sizes_played()}, "
                             f"not {board.width}x{board.height}")
        if self.n_in_row is not None and board.n_in_row != self.n_in_row:
            raise ValueError(f"{self.name}: the net was trained for {self.n_in_row} in a row, "
                             f"not {board.n_in_row}")

    @classmethod
    def from_checkpoint(cls, path: str, n_playout: int | None = 400, seed: int | None = None,
                        device: str | None = None, runtime: str = "auto", threads: int = 1,
                        **kwargs) -> "AlphaZeroPlayer":
        """Load a model or training checkpoint (torch is imported only here), or an exported
        ``.onnx`` model, which runs on onnxruntime.

        ``runtime``: where a ``.pt`` net runs on the CPU: "torch", "onnx" (exported in memory
        and checked against torch first), or "auto" = onnx on a CPU when onnxruntime is
        installed (about twice as fast for one position at a time), torch otherwise.
        ``threads``: onnxruntime's intra-op threads (1 where several searches share the cores).
        The player keeps the rule the net was trained for (``n_in_row``, 5 for files that record
        none) and refuses, with a ValueError, a board with another rule or size."""
        from nets.loading import load_evaluator

        loaded = load_evaluator(path, runtime, device, threads)
        evaluator, net_config, n_in_row = loaded.evaluator, loaded.config, loaded.n_in_row
        name = f"az:{path}:{spec_amount(n_playout, kwargs.get('seconds'))}"
        player = cls(evaluator, n_playout=n_playout, seed=seed, name=name, **kwargs)
        player.net_config = net_config
        player.n_in_row = n_in_row
        return player
