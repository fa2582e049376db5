"""Games and matches between players, with scores and confidence intervals.

``play_game`` plays one game and returns a GameRecord; ``play_match`` plays several with colours
alternating and returns a MatchResult; ``evaluate`` builds players from spec strings with seeds
derived from one seed, which is what ``scripts/evaluate.py`` runs. Ctrl-C during ``evaluate``
stops its worker processes at once and raises ``EvaluationInterrupted`` with the results of the
games finished by then.
"""

from __future__ import annotations

import logging
import math
import os
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from gomoku.game.board import DEFAULT_N_IN_ROW, DEFAULT_SIZE, DRAW, Board, IllegalMoveError, other
from gomoku.matches.processes import run_in_processes
from gomoku.players.forfeit import Forfeit, ForfeitReason, ForfeitRecord  # noqa: F401  (ForfeitReason: re-exported)
from gomoku.players import Player, format_point, make_player, parse_spec, trained_n_in_row, trained_size
from gomoku.players.classical import HumanPlayer, InputEnded

log = logging.getLogger(__name__)

MAX_MATCH_GAMES = 100_000  # games a match of ``evaluate`` may have (each is planned, and seeded, up front)
OPENING_TRIES = 1000  # draws per opening asked for before random_openings gives up

Z_95 = 1.959963984540054  # two-sided 95% quantile of the standard normal
NAME_WIDTH = 24  # column width for player names in tables


@dataclass(frozen=True)
class SideStats:
    """One player's moves in one game: how many, their playouts (0 for players that do not
    report any), and their thinking time (total and slowest, wall-clock seconds: left out of
    comparisons, so that the same games compare equal)."""

    moves: int = 0
    playouts: int = 0
    searched: int = 0  # moves with playouts reported (not those played without a search)
    seconds: float = field(default=0.0, compare=False)
    slowest: float = field(default=0.0, compare=False)

    def add(self, seconds: float, playouts: int | None) -> "SideStats":
        return SideStats(self.moves + 1, self.playouts + (playouts or 0), self.searched + bool(playouts),
                         self.seconds + seconds, max(self.slowest, seconds))

    def __add__(self, other: "SideStats") -> "SideStats":
        return SideStats(self.moves + other.moves, self.playouts + other.playouts, self.searched + other.searched,
                         self.seconds + other.seconds, max(self.slowest, other.slowest))

    @property
    def playouts_per_move(self) -> float:
        """Playouts per searched move."""
        return self.playouts / self.searched if self.searched else 0.0


@dataclass(frozen=True)
class GameRecord:
    """One finished game. ``players`` = (name of the player with stones 1, name with stones 2).
    ``stats`` = (stones 1's SideStats, stones 2's); ``forfeit`` when a player lost by forfeit."""

    moves: tuple[int, ...]
    winner: int  # 1 or 2, or -1 (DRAW)
    start_player: int
    width: int
    height: int
    n_in_row: int
    players: tuple[str, str]
    stats: tuple[SideStats, SideStats] = (SideStats(), SideStats())
    forfeit: ForfeitRecord | None = None
    opening: int = 0  # the first moves were the start position's (an opening), not the players'
    # After each move, the mover's own estimate of its result (-1 lost .. 1 won: a search player's
    # root value, ``last_value``); None for the opening's stones and from a player that gives none.
    values: tuple[float | None, ...] = ()

    def board(self) -> Board:
        """The final position, replayed from the moves."""
        return Board.from_moves(self.moves, self.width, self.height, self.n_in_row, self.start_player)


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


def wilson_interval(score: float, games: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval for a success rate ``score`` over ``games`` trials (draws as half wins)."""
    if games <= 0:
        return 0.0, 1.0
    z2_n = z * z / games
    centre = (score + z2_n / 2) / (1 + z2_n)
    half = z / (1 + z2_n) * math.sqrt(score * (1 - score) / games + z2_n / (4 * games))
    # The interval always holds the score; min/max only guard against rounding.
    return max(0.0, min(score, centre - half)), min(1.0, max(score, centre + half))


@dataclass
class MatchResult:
    """A match from ``player``'s point of view."""

    player: str
    opponent: str
    wins: int = 0
    draws: int = 0
    losses: int = 0
    records: list[GameRecord] = field(default_factory=list, repr=False)
    own_stones: list[int] = field(default_factory=list, repr=False)  # ``player``'s stones, per record
    # Each record's game index in the match (0-based): its number is index + 1, and after an
    # interrupted run with workers, the games finished need not be the first ones.
    indices: list[int] = field(default_factory=list, repr=False)

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    def add(self, record: GameRecord, player_first: bool, index: int | None = None) -> None:
        """Count a game in which ``player`` had the first stones (id 1) when ``player_first``;
        ``index``: its index in the match (default: the next)."""
        own_stone = 1 if player_first else 2
        self.own_stones.append(own_stone)
        self.indices.append(len(self.records) if index is None else index)
        if record.winner == DRAW:
            self.draws += 1
        elif record.winner == own_stone:
            self.wins += 1
        else:
            self.losses += 1
        self.records.append(record)

    @property
    def distinct_games(self) -> int:
        """How many of the games differ (the player's colour or a move): a deterministic player
        against one that varies only its opening can play the same game more than once, and then
        the interval counts each repeat as new evidence."""
        return len({(own, record.moves) for record, own in zip(self.records, self.own_stones)})

    @property
    def score(self) -> float:
        """(wins + draws / 2) / games; 0.0 before any game."""
        return (self.wins + self.draws / 2) / self.games if self.games else 0.0

    @property
    def ci95(self) -> tuple[float, float]:
        return wilson_interval(self.score, self.games)

    def side_stats(self, opponent: bool = False) -> SideStats:
        """``player``'s moves over the match (``opponent``'s with ``opponent=True``)."""
        total = SideStats()
        for record, own in zip(self.records, self.own_stones):
            total = total + record.stats[(own if not opponent else other(own)) - 1]
        return total

    def forfeits(self) -> list[tuple[int, str, ForfeitRecord]]:
        """(game index in the match, "player" or "opponent", the forfeit) of each game lost by forfeit."""
        return [(index, "player" if record.forfeit.stone == own else "opponent", record.forfeit)
                for index, record, own in zip(self.indices, self.records, self.own_stones) if record.forfeit]

    def format_row(self, width: int = NAME_WIDTH) -> str:
        """The match's row of ``format_table``, the opponent's name in a column ``width`` wide."""
        counts = f"{self.opponent:<{width}} {f'+{self.wins} ={self.draws} -{self.losses}':>14} "
        if not self.games:  # an interrupted evaluation that never reached this opponent
            return counts + f"{'-':>6}   no games played"
        low, high = self.ci95
        row = counts + f"{self.score:>6.3f}   [{low:.3f}, {high:.3f}]"
        if (distinct := self.distinct_games) < len(self.records):
            row += f"   {distinct} distinct games"
        forfeits = self.forfeits()
        if forfeits:
            row += "   forfeits: " + ", ".join(f"game {index + 1} {who} {forfeit.reason.value}"
                                              for index, who, forfeit in forfeits)
        return row

    def format_stats(self, timing: bool = True, width: int | None = None) -> str:
        """One line per side: playouts reached per move, and with ``timing`` the thinking time
        (mean and slowest move; wall-clock, so it differs from run to run); the names in a column
        ``width`` wide (default: wide enough for both)."""
        width = width or name_width([self.player, self.opponent])
        return "\n".join(format_side(name, side, timing, width) for name, side in (
            (self.player, self.side_stats()), (self.opponent, self.side_stats(opponent=True))))

    def to_dict(self, timing: bool = False) -> dict:
        """The match as JSON data (no score and no interval, None, before any game); ``timing`` adds
        each side's seconds per move and slowest move (wall-clock: they differ from run to run)."""
        low, high = self.ci95
        played = self.games > 0
        sides = {}
        for key, side in (("player_moves", self.side_stats()), ("opponent_moves", self.side_stats(opponent=True))):
            sides[key] = {"moves": side.moves, "searched_moves": side.searched,
                          "playouts_per_searched_move": side.playouts_per_move}
            if timing:
                sides[key].update(seconds_per_move=side.seconds / side.moves if side.moves else 0.0,
                                  slowest_move_s=side.slowest)
        return {"player": self.player, "opponent": self.opponent, "games": self.games,
                "distinct_games": self.distinct_games if self.records else None,
                "wins": self.wins, "draws": self.draws, "losses": self.losses,
                "score": self.score if played else None, "ci95": [low, high] if played else None, **sides,
                "forfeits": [{"game": index + 1, "by": who, "reason": forfeit.reason.value, "detail": forfeit.detail}
                             for index, who, forfeit in self.forfeits()]}


def name_width(names: Sequence[str]) -> int:
    """The width of a column of these player names: NAME_WIDTH, or the longest name's."""
    return max([NAME_WIDTH, *(len(name) for name in names)])


def table_header(width: int = NAME_WIDTH) -> str:
    return f"{'opponent':<{width}} {'+W =D -L':>14} {'score':>6}   95% CI"


def game_lines(results: Sequence[MatchResult], common: dict | None = None) -> list[dict]:
    """Every game of ``results`` as JSON data (``game_line``), one dict a game in match and game order."""
    return [game_line(result.player, result.opponent, index, record, own, common)
            for result in results for index, record, own in zip(result.indices, result.records, result.own_stones)]


def game_line(player: str, opponent: str, index: int, record: GameRecord, own: int,
              common: dict | None = None) -> dict:
    """One game of ``player`` (on stones ``own``) against ``opponent`` as JSON data: the opponent,
    the game's place in its match (``index`` + 1), the board, the player's colour (black moves
    first), the result from the player's side, the moves in standard notation (``play.py --moves``
    replays them), how many of them were the opening's (not played by either side), each mover's
    own estimate after its move (``GameRecord.values``, one a move), a forfeit's reason, and then
    ``common``: what every game shares (the command's seed and search options), so that a line
    alone says how to play its game again."""
    board = Board(record.width, record.height, record.n_in_row, start_player=record.start_player)
    outcome = "draw" if record.winner == DRAW else "win" if record.winner == own else "loss"
    return {"player": player, "opponent": opponent, "game": index + 1,
            "width": record.width, "height": record.height, "n_in_row": record.n_in_row,
            "player_colour": "black" if own == record.start_player else "white",
            "result": outcome, "plies": len(record.moves),
            "moves": ",".join(format_point(board, move) for move in record.moves),
            "opening": record.opening,
            "values": [None if v is None else round(v, 3) for v in record.values],
            "forfeit": record.forfeit.reason.value if record.forfeit else None, **(common or {})}


def colours_note(results: Sequence[MatchResult]) -> str:
    """The note " (colours are not balanced)" when, in a match of ``results``, the player had the
    first stones in more (or fewer) of its games than the second ones; else ""."""
    unbalanced = [r for r in results if r.own_stones.count(1) != r.own_stones.count(2)]
    return " (colours are not balanced)" if unbalanced else ""


def format_match_stats(results: Sequence[MatchResult], timing: bool = True) -> str:
    """The playouts (and with ``timing`` the thinking time) of a player's matches: its own line
    once, over all of its games, then one line per opponent (matches without games left out)."""
    played = [result for result in results if result.games]
    if len(played) == 1:
        return played[0].format_stats(timing=timing)
    width = name_width([name for result in played for name in (result.player, result.opponent)])
    lines = []
    for player in dict.fromkeys(result.player for result in played):
        own = [result for result in played if result.player == player]
        total = sum((result.side_stats() for result in own), SideStats())
        lines.append(format_side(f"{player} (all games)", total, timing, width + len(" (all games)")))
        lines.extend(format_side(result.opponent, result.side_stats(opponent=True), timing,
                                 width + len(" (all games)")) for result in own)
    return "\n".join(lines)


def format_side(name: str, side: SideStats, timing: bool, width: int) -> str:
    """One side's line of ``MatchResult.format_stats``: playouts per move, and the thinking time."""
    line = f"  {name:<{width}} " + (f"{side.playouts_per_move:8.0f} playouts/searched move"
                                    if side.playouts else f"{'-':>8} playouts/searched move")
    if timing:
        mean = side.seconds / side.moves if side.moves else 0.0
        line += f"  {mean:6.3f} s/move  slowest {side.slowest:6.3f} s"
    return line


def output_problem(path: Path, option: str = "--json") -> str | None:
    """Why ``option``'s file could not be written to ``path`` (None: it can), checked before the games."""
    folder = path.parent
    if path.is_dir():
        return f"{option} {path} is a folder, not a file"
    if not folder.is_dir():
        return f"{option} {path}: there is no folder {folder}"
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        return f"{option} {path}: not writable"
    try:  # what the permissions do not tell (as root, /proc): try it, and leave no new file behind
        if not path.exists():
            path.touch(exist_ok=False)
            path.unlink()
        elif path.is_file():  # (not a pipe or a device, which opening could block or change)
            path.open("a").close()
    except OSError as error:
        return f"{option} {path}: cannot be written ({error.strerror or error})"
    return None


def format_table(results: Sequence[MatchResult]) -> str:
    """A table with one row per match (player named in the title line)."""
    players = sorted({r.player for r in results})
    title = f"player: {', '.join(players)}"
    width = name_width([r.opponent for r in results])
    return "\n".join([title, table_header(width), *(r.format_row(width) for r in results)])


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


def derive_seeds(seed: int | None, count: int) -> list[int | None]:
    """``count`` independent seeds from one (all None when ``seed`` is None)."""
    if seed is None:
        return [None] * count
    return [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(count)]


EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a Ctrl-C
EXIT_TERMINATED = 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM, turned into an interrupt: a match's finished games are kept as on Ctrl-C."""


def _terminate(signum, frame) -> None:
    raise Terminated()


def stop_on_signals() -> None:
    """Make Ctrl-C and a plain ``kill`` both interrupt a match script (a shell starts background
    jobs with SIGINT ignored: put Python's handler back; SIGTERM raises ``Terminated``)."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _terminate)


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
