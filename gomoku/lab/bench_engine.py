"""The engine's playouts a second under its clock, through the protocol: ``bench.py --engine``.

Each engine command (``scripts/pbrain.py`` with options, or any pbrain engine that reports its
playouts in ``MESSAGE N playouts ...`` lines) is asked for a move in the same middle-game positions
of real games, each sent as a ``BOARD`` block, at ``turn_ms`` a turn; its figure is its playouts
over its answering time, summed over the positions. The engines take turns position by position,
round after round, so that a change of the machine's load hits them alike; the median of the
rounds is kept.
"""

from __future__ import annotations

import gzip
import json
import shlex
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from gomoku.game.board import Board
from gomoku.ui.session import parse_game

# Real games of the engine under a clock (docs/results/README.md indexes the file); the positions
# are the first GAMES of them cut after each of CUTS moves, where the game went on at least
# MIN_LEFT moves more.
POSITIONS_FILE = Path("docs/results/clock/clock-int8-vs-previous-1000ms-seed10.games.jsonl.gz")
GAMES = 12
CUTS = (8, 14, 20)
MIN_LEFT = 3


@dataclass(frozen=True)
class EngineFigure:
    """One engine command's playouts and answering seconds in one round over the positions."""

    playouts: int
    seconds: float

    @property
    def playouts_per_s(self) -> float:
        return self.playouts / self.seconds if self.seconds else 0.0


def middle_game_positions(path: Path = POSITIONS_FILE, games: int = GAMES, cuts: tuple[int, ...] = CUTS) -> list[Board]:
    """The positions of the first ``games`` games of a games file (``--games-out``) after each of
    ``cuts`` moves, where the game went on MIN_LEFT moves more."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as lines:
        records = [json.loads(line) for line in lines if line.strip()][:games]
    positions = []
    for record in records:
        moves = parse_game(record["moves"], record["width"]).moves
        positions += [Board.from_moves(moves[:cut], record["width"], record["height"], record["n_in_row"])
                      for cut in cuts if len(moves) >= cut + MIN_LEFT]
    return positions


def run_engines(commands: list[str], positions: list[Board], turn_ms: int, rounds: int, log=print) -> dict:
    """Every command's playouts a second (median of ``rounds``) on ``positions`` at ``turn_ms``."""
    from gomoku.players.external import PbrainPlayer

    words = [shlex.split(command) for command in commands]
    engines = [PbrainPlayer(command[0], turn_ms=turn_ms, args=tuple(command[1:])) for command in words]
    figures: dict[str, list[EngineFigure]] = {command: [] for command in commands}
    try:
        for round_ in range(rounds):
            totals = {command: [0, 0.0] for command in commands}
            for board in positions:
                for command, engine in zip(commands, engines):
                    started = time.perf_counter()
                    engine.get_action(board)
                    totals[command][0] += engine.last_playouts or 0
                    totals[command][1] += engine.last_answer_seconds or time.perf_counter() - started
            for command, (playouts, seconds) in totals.items():
                figures[command].append(EngineFigure(playouts, seconds))
                log(f"round {round_ + 1}: {command:50s} {playouts / seconds:8.0f} playouts/s")
    finally:
        for engine in engines:
            engine.close()
    return {"turn_ms": turn_ms, "positions": len(positions), "rounds": rounds,
            "engines": {command: {"playouts_per_s": statistics.median(f.playouts_per_s for f in runs),
                                  "rounds": [{"playouts": f.playouts, "seconds": f.seconds,
                                              "playouts_per_s": f.playouts_per_s} for f in runs]}
                        for command, runs in figures.items()}}
