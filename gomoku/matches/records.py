"""What games and matches leave: a game's ``GameRecord`` (with each side's ``SideStats``), a
match's ``MatchResult`` (counts, score, Wilson 95% interval), and their forms for people and files:
the results table, the stats lines, a game's JSON line (``game_line``, what ``--games-out`` writes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

from gomoku.game.board import DRAW, Board, other
from gomoku.players import format_point
from gomoku.players.forfeit import ForfeitRecord

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



def format_table(results: Sequence[MatchResult]) -> str:
    """A table with one row per match (player named in the title line)."""
    players = sorted({r.player for r in results})
    title = f"player: {', '.join(players)}"
    width = name_width([r.opponent for r in results])
    return "\n".join([title, table_header(width), *(r.format_row(width) for r in results)])
