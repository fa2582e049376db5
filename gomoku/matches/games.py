"""Games between players: ``play_game`` plays one and returns its GameRecord; ``play_match``
plays several with colours alternating, ``play_openings`` each of a list of start positions twice
(``random_openings`` draws them); both return a MatchResult.
"""

from __future__ import annotations

import logging
import math
import time
from typing import Callable, Sequence

import numpy as np

from gomoku.game.board import DEFAULT_N_IN_ROW, DEFAULT_SIZE, Board, IllegalMoveError, other
from gomoku.matches.records import GameRecord, MatchResult, SideStats
from gomoku.players import Player
from gomoku.players.forfeit import Forfeit, ForfeitRecord

log = logging.getLogger(__name__)

OPENING_TRIES = 1000  # draws per opening asked for before random_openings gives up


def player_name(player: Player) -> str:
    return getattr(player, "name", type(player).__name__)


def play_game(player1: Player, player2: Player, board: Board | None = None,
              start_player: int | None = None) -> GameRecord:
    """Play a game: ``player1`` has the stones of id 1, ``player2`` those of id 2.

    ``board`` is the start position (default: an empty 9x9 board, five in a row); it is copied, not
    changed. ``start_player`` says who moves first on a new board (default 1); with a given board it
    must match the board's own ``start_player`` when given. Both players are reset first. Raises
    IllegalMoveError naming the player when one returns an illegal move; a player that raises
    ``Forfeit`` (an external engine that crashed, was late, silent or illegal) loses the game.
    Each move's wall-clock time (an external engine's answer time, ``last_answer_seconds``) and
    the playouts a player reports (``last_playouts``) are kept in the record's ``stats``, its own
    estimate of the game (``last_value``) in its ``values``.
    """
    if board is None:
        board = Board(start_player=1 if start_player is None else start_player)
    else:
        if start_player is not None and start_player != board.start_player:
            raise ValueError(f"start_player={start_player} but the board starts with {board.start_player}")
        board = board.copy()
    opening = len(board.moves)
    players = {1: player1, 2: player2}
    for player in players.values():
        if hasattr(player, "reset"):
            player.reset()
    stats = {1: SideStats(), 2: SideStats()}
    values: list[float | None] = [None] * opening  # one per move, as ``moves``
    forfeit = None
    while not board.game_end()[0]:
        stone = board.current_player
        player = players[stone]
        started = time.perf_counter()
        try:
            move = player.get_action(board.copy())
        except Forfeit as lost:
            forfeit = ForfeitRecord(stone, lost.reason, lost.detail)
            log.info("%s (stones %d) forfeits: %s", player_name(player), stone, lost)
            break
        elapsed = time.perf_counter() - started
        answer = getattr(player, "last_answer_seconds", None)  # an external engine's answer, without its start
        stats[stone] = stats[stone].add(elapsed if answer is None else answer, getattr(player, "last_playouts", None))
        values.append(getattr(player, "last_value", None))
        try:
            board.do_move(move)
        except IllegalMoveError as error:
            raise IllegalMoveError(
                f"player {player_name(player)!r} (stones {stone}) returned illegal move {move!r}: {error}"
            ) from error
    winner = board.game_end()[1] if forfeit is None else other(forfeit.stone)
    record = GameRecord(tuple(board.moves), winner, board.start_player, board.width, board.height,
                        board.n_in_row, (player_name(player1), player_name(player2)), (stats[1], stats[2]), forfeit,
                        opening, tuple(values))
    log.debug("game over after %d moves, winner %s (%s vs %s)", len(record.moves), winner, *record.players)
    return record


def play_match(player: Player, opponent: Player, games: int, width: int = DEFAULT_SIZE,
               height: int = DEFAULT_SIZE, n_in_row: int = DEFAULT_N_IN_ROW, progress: bool = False,
               on_game: Callable[[int, GameRecord], None] | None = None) -> MatchResult:
    """Play ``games`` games, colours alternating: even games ``player`` moves first (black, stones 1),
    odd games ``opponent`` does. ``on_game(index, record)`` is called after each game."""
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    result = MatchResult(player_name(player), player_name(opponent))
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=games, desc=f"{result.player} vs {result.opponent}", unit="game")
    try:
        for index in range(games):
            player_first = index % 2 == 0
            first, second = (player, opponent) if player_first else (opponent, player)
            record = play_game(first, second, Board(width, height, n_in_row, start_player=1))
            result.add(record, player_first)
            if on_game is not None:
                on_game(index, record)
            if bar is not None:
                bar.set_postfix_str(f"+{result.wins} ={result.draws} -{result.losses}")
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    log.info("%s vs %s: +%d =%d -%d", result.player, result.opponent, result.wins, result.draws, result.losses)
    return result


def random_openings(count: int, stones: int, rng: np.random.Generator, width: int = DEFAULT_SIZE,
                    height: int = DEFAULT_SIZE, n_in_row: int = DEFAULT_N_IN_ROW,
                    centre: int | None = None) -> list[Board]:
    """``count`` different positions of ``stones`` random stones (colours alternating, first
    player to move next when ``stones`` is even), as Gomocup-style openings; a draw in which a
    stone makes a line is drawn again. ``centre``: the stones only on points within that many
    steps of the centre, in each direction (2: the central 5x5 of a 9x9 board); None: anywhere.
    A ValueError, before any draw, when ``stones`` leave no move or there are fewer than ``count``
    positions of them; after ``OPENING_TRIES`` draws an opening, when too few of them are free of lines."""
    cells = width * height
    if not 0 <= stones < cells:
        raise ValueError(f"stones must be from 0 to {cells - 1} on a {width}x{height} board (a move left), "
                         f"got {stones}")
    points = None if centre is None else np.array(
        [y * width + x for y in range(height) for x in range(width)
         if max(abs(x - (width - 1) / 2), abs(y - (height - 1) / 2)) <= centre])
    pool = cells if points is None else len(points)
    if stones > pool:
        raise ValueError(f"{stones} stones do not fit the {pool} point(s) within {centre} of the centre")
    first = (stones + 1) // 2
    if count > (ways := math.comb(pool, first) * math.comb(pool - first, stones - first)):
        raise ValueError(f"only {ways:,} different opening(s) of {stones} stone(s) exist, not {count:,}")
    openings: dict[tuple[frozenset[int], frozenset[int]], Board] = {}  # by position, not by move order
    for _ in range(OPENING_TRIES * count):
        if len(openings) == count:
            break
        picks = rng.choice(pool, stones, replace=False)  # with points=None the draws of before this option
        moves = [int(m) for m in (picks if points is None else points[picks])]
        board = Board(width, height, n_in_row)
        for move in moves:
            board.do_move(move)
            if board.game_end()[0]:
                break
        else:
            openings.setdefault((frozenset(moves[0::2]), frozenset(moves[1::2])), board)
    if len(openings) < count:
        raise ValueError(f"only {len(openings):,} different opening(s) of {stones} stone(s) without a line of "
                         f"{n_in_row} in {OPENING_TRIES * count:,} draws, not {count:,}")
    return list(openings.values())


def play_openings(player: Player, opponent: Player, openings: Sequence[Board],
                  on_game: Callable[[int, GameRecord], None] | None = None) -> MatchResult:
    """Each opening twice, colours swapped: game 2k has ``player`` on the first stones (id 1)."""
    result = MatchResult(player_name(player), player_name(opponent))
    for index in range(2 * len(openings)):
        board, player_first = openings[index // 2], index % 2 == 0
        first, second = (player, opponent) if player_first else (opponent, player)
        record = play_game(first, second, board)
        result.add(record, player_first)
        if on_game is not None:
            on_game(index, record)
    return result
