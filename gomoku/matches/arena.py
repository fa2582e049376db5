"""Evaluation matches: ``evaluate`` builds players from spec strings with seeds derived from one
seed, which is what ``scripts/evaluate.py`` runs (in worker processes or not, the same games).
Ctrl-C during ``evaluate`` stops its worker processes at once and raises
``EvaluationInterrupted`` with the results of the games finished by then; ``stops.stop_on_signals``
and ``stop_reason`` give a match script the same stop on SIGTERM. The games themselves are
``gomoku.matches.games``, their records ``gomoku.matches.records``.
"""

from __future__ import annotations

import sys
from typing import Callable, Sequence

import numpy as np

from gomoku.game.board import DEFAULT_N_IN_ROW, DEFAULT_SIZE, Board
from gomoku.matches.games import play_game
from gomoku.matches.processes import run_in_processes
from gomoku.matches.records import GameRecord, MatchResult
from gomoku.matches.stops import EXIT_INTERRUPTED, EXIT_TERMINATED, Terminated
from gomoku.players import Player, make_player, parse_spec, trained_n_in_row, trained_size
from gomoku.players.classical import HumanPlayer, InputEnded

MAX_MATCH_GAMES = 100_000  # games a match of ``evaluate`` may have (each is planned, and seeded, up front)


def derive_seeds(seed: int | None, count: int) -> list[int | None]:
    """``count`` independent seeds from one (all None when ``seed`` is None)."""
    if seed is None:
        return [None] * count
    return [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(count)]


def stop_reason(stop: BaseException | None) -> tuple[str, int]:
    """How an interrupted match ended, in words, and its exit status."""
    if isinstance(stop, Terminated):
        return "stopped by SIGTERM", EXIT_TERMINATED
    if isinstance(stop, InputEnded):
        return f"stopped ({stop})", EXIT_INTERRUPTED
    return "interrupted", EXIT_INTERRUPTED


class EvaluationInterrupted(KeyboardInterrupt):
    """Ctrl-C (any KeyboardInterrupt: ``cause``) during ``evaluate``: ``results`` are the matches
    over the games finished by then (``played`` of ``planned``)."""

    def __init__(self, results: list[MatchResult], played: int, planned: int,
                 cause: KeyboardInterrupt | None = None):
        super().__init__(f"interrupted after {played} of {planned} games")
        self.results, self.played, self.planned, self.cause = results, played, planned, cause


def _play_one(job: tuple) -> tuple[int, int, GameRecord]:
    """One game of an ``evaluate`` match, with players built fresh from their specs and seeds."""
    match, index, player_spec, opponent_spec, seeds, width, height, n_in_row, options = job
    player = make_player(player_spec, seed=seeds[0], **options)
    opponent = make_player(opponent_spec, seed=seeds[1], **options)
    first, second = (player, opponent) if index % 2 == 0 else (opponent, player)
    try:
        return match, index, play_game(first, second, Board(width, height, n_in_row, start_player=1))
    finally:
        close_players(player, opponent)


def home_board(spec: str, size: int | None = None, n_in_row: int | None = None) -> tuple[int, int]:
    """The board (size, n_in_row) a match of the player ``spec`` is played on: ``size`` and
    ``n_in_row`` where given, else those its net was trained on (an az spec; a square board), else
    9x9 and 5 in a row. Loads an az spec's model to read them; a bad spec raises ValueError."""
    if size is not None and n_in_row is not None:
        return size, n_in_row
    player = make_player(spec) if parse_spec(spec).kind == "az" else None
    if player is not None:
        close_players(player)
    if size is None:
        size = trained_size(player) or DEFAULT_SIZE
    if n_in_row is None:
        n_in_row = trained_n_in_row(player) or DEFAULT_N_IN_ROW
    return size, n_in_row  # a given 0 stays 0, for the board's own check to refuse


def close_players(*players: Player) -> None:
    """End what the players hold (an external engine's process)."""
    for player in players:
        close = getattr(player, "close", None)
        if callable(close):
            close()


def evaluate(player_spec: str, opponent_specs: Sequence[str], games: int, seed: int | None = 0,
             width: int = DEFAULT_SIZE, height: int = DEFAULT_SIZE, n_in_row: int = DEFAULT_N_IN_ROW,
             progress: bool = False, workers: int = 1, seconds: float | None = None, leaves_per_step: int = 1,
             forced_moves: bool = True, vcf: bool = True, vct: bool = True,
             check_nodes: int | None = None, c_puct: float | None = None,
             on_game: Callable[[int, int, GameRecord], None] | None = None) -> list[MatchResult]:
    """One match of ``player_spec`` against each opponent spec, colours alternating.

    Every game gets fresh players with seeds derived from ``seed`` and the game's place, so the
    results are the same whatever ``workers`` (processes playing games in parallel) is.
    ``seconds`` caps the thinking time per move of the search players; ``leaves_per_step``,
    ``forced_moves``, ``vcf``, ``vct``, ``check_nodes`` and ``c_puct`` are passed to the az players (see
    ``make_player``).

    A bad spec, a checkpoint that does not load or a board one of the players cannot play (an
    az net trained for another size or ``n_in_row``) raises ValueError before any game. Ctrl-C
    raises ``EvaluationInterrupted`` (a KeyboardInterrupt) holding the finished games' results.
    ``on_game(match, index, record)`` is called after each finished game (in the order they finish:
    with workers, not necessarily the match order), with the opponent's place in
    ``opponent_specs`` and the game's in its match.
    """
    if not 1 <= games <= MAX_MATCH_GAMES:
        raise ValueError(f"games must be from 1 to {MAX_MATCH_GAMES:,}, got {games:,}")
    board = Board(width, height, n_in_row)  # a bad size raises here
    for spec in (player_spec, *opponent_specs):  # fail at once on a bad spec, checkpoint or board
        built = make_player(spec, seed=0, seconds=seconds)
        if workers > 1 and isinstance(built, HumanPlayer):
            raise ValueError(f"{spec.strip()!r} plays from the keyboard, which worker processes do not "
                             "have: use one worker")
        check_board = getattr(built, "check_board", None)
        if check_board is not None:
            check_board(board)
    if workers <= 1 and "torch" in sys.modules:
        # Search players evaluate one position at a time: one thread is faster than several there.
        sys.modules["torch"].set_num_threads(1)
    seeds = derive_seeds(seed, 2 * len(opponent_specs) * games)
    options = {"seconds": seconds, "leaves_per_step": leaves_per_step, "forced_moves": forced_moves, "vcf": vcf,
               "vct": vct, "check_nodes": check_nodes, "c_puct": c_puct}
    jobs = [(m, i, player_spec, spec, seeds[2 * (m * games + i): 2 * (m * games + i) + 2], width, height,
             n_in_row, options) for m, spec in enumerate(opponent_specs) for i in range(games)]
    records: dict[tuple[int, int], GameRecord] = {}
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(jobs), desc=f"{player_spec} vs {len(opponent_specs)} opponent(s)", unit="game")
    if workers > 1:
        uses_torch = any(spec.strip().startswith("az:") for spec in (player_spec, *opponent_specs))
        outcomes = run_in_processes(_play_one, jobs, workers, uses_torch)
    else:
        outcomes = map(_play_one, jobs)
    try:
        for match, index, record in outcomes:
            records[match, index] = record
            if on_game is not None:
                on_game(match, index, record)
            if bar is not None:
                bar.update(1)
    except KeyboardInterrupt as stop:  # Ctrl-C, or what the caller turned into one (SIGTERM, end of input)
        if hasattr(outcomes, "close"):
            outcomes.close()  # stops the workers now, not when the generator is collected
        raise EvaluationInterrupted(match_results(player_spec, opponent_specs, records), len(records),
                                    len(jobs), stop) from None
    finally:
        if hasattr(outcomes, "close"):
            outcomes.close()
        if bar is not None:
            bar.close()
    return match_results(player_spec, opponent_specs, records)


def match_results(player_spec: str, opponent_specs: Sequence[str],
                   records: dict[tuple[int, int], GameRecord]) -> list[MatchResult]:
    """One MatchResult per opponent over the finished games, in game order (so the same games
    give the same results whatever order the workers finished them in)."""
    results = [MatchResult(player_spec, spec) for spec in opponent_specs]
    for (match, index), record in sorted(records.items()):
        result = results[match]
        result.player, result.opponent = record.players[index % 2], record.players[1 - index % 2]
        result.add(record, player_first=index % 2 == 0, index=index)
    return results
