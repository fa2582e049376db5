"""Evaluation of the model during a run: the pure-MCTS ladder, the other opponents, the best model.

``evaluate(actors, eval_config, ladder, seed)`` plays ``eval.games`` games against pure MCTS at
the ladder's playouts and against each of ``eval.opponents`` (on the self-play workers) and
returns an ``EvalReport``: the scores, whether the model is the new best (``eval.select_by``) and
the ladder after it (a clean sweep raises the pure playouts). Nothing is written here: the
iteration's commit writes the model files (``write_model_files``) with the rest of the iteration.
``play_eval_games`` is what a worker runs for an ``EvalTask``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

import numpy as np

from gomoku.game.board import DRAW, Board
from gomoku.training.config import Config, EvalSection
from mcts import Evaluator

log = logging.getLogger(__name__)

CURRENT_MODEL = "current.pt"  # the model at the last evaluation
BEST_MODEL = "best.pt"  # the best model so far (eval.select_by)
MODEL_FILES = (CURRENT_MODEL, BEST_MODEL)  # what an evaluation writes
PENDING = ".pending-"  # a model file written before its iteration's commit: NAME.pending-ITERATION
NO_SCORE = -1.0  # the best opponents' score before any evaluation against eval.opponents


@dataclass(frozen=True)
class EvalTask:
    """Evaluation games ``indices`` of the model against ``opponent`` (a player spec); game ``i``'s
    seeds derive from ``seed`` and ``i`` only, so it does not matter which worker plays it."""

    indices: tuple[int, ...]
    opponent: str
    seed: int


@dataclass(frozen=True)
class EvalGame:
    index: int
    result: int  # for the model: 1 win, 0 draw, -1 loss


def play_eval_games(evaluator: Evaluator, config: Config, task: EvalTask,
                    on_game: Callable[[], None] | None = None) -> list[EvalGame]:
    """Play the model (no noise, greedy) against ``task.opponent`` (a player spec such as
    ``pure:1000`` or ``minimax:2``); game ``i`` even: the model moves first. Each game's seeds
    derive from ``task.seed`` and ``i``, so a game's result does not depend on which worker plays it."""
    from gomoku.matches.games import play_game
    from gomoku.players import make_player
    from gomoku.players.search import AlphaZeroPlayer

    b, s = config.board, config.search
    out = []
    for index in task.indices:
        model = AlphaZeroPlayer.searching_as(evaluator, s, n_playout=config.eval.n_playout,
                                             seed=task.seed + 2 * index)
        other = make_player(task.opponent, seed=task.seed + 2 * index + 1)
        model_first = index % 2 == 0
        first, second = (model, other) if model_first else (other, model)
        record = play_game(first, second, Board(b.width, b.height, b.n_in_row))
        model_id = 1 if model_first else 2
        out.append(EvalGame(index, 0 if record.winner == DRAW else (1 if record.winner == model_id else -1)))
        if on_game is not None:
            on_game()
    return out


@dataclass(frozen=True)
class LadderState:
    """The evaluation ladder of the classic pipeline, and the best scores that pick best.pt."""

    pure_playouts: int
    best_score: float = 0.0  # the best pure-MCTS score at this ladder level
    best_opponent_score: float = NO_SCORE  # the best mean score against eval.opponents so far


@dataclass(frozen=True)
class MatchScore:
    opponent: str
    wins: int
    draws: int
    losses: int
    score: float

    @classmethod
    def of(cls, opponent: str, games: tuple[EvalGame, ...], planned: int) -> "MatchScore":
        wins = sum(g.result == 1 for g in games)
        draws = sum(g.result == 0 for g in games)
        losses = sum(g.result == -1 for g in games)
        return cls(opponent, wins, draws, losses, (wins + 0.5 * draws) / planned)

    def counts(self) -> dict:
        return {"wins": self.wins, "draws": self.draws, "losses": self.losses, "score": self.score}

    def describe(self) -> str:
        return f"{self.opponent} +{self.wins}={self.draws}-{self.losses} ({self.score:.2f})"


@dataclass(frozen=True)
class EvalReport:
    """One evaluation: the ladder match (``pure:<pure_playouts>``), the other matches, the verdict."""

    pure_playouts: int
    ladder: MatchScore
    opponents: tuple[MatchScore, ...] = ()
    new_best: bool = False
    ladder_after: LadderState | None = field(default=None, compare=False)  # not in the metrics

    @property
    def opponents_score(self) -> float | None:
        """The mean score against ``eval.opponents`` (None without any)."""
        return float(np.mean([o.score for o in self.opponents])) if self.opponents else None

    def to_dict(self) -> dict:
        """The ``eval`` object of a metrics record."""
        data = {"pure_playouts": self.pure_playouts, **self.ladder.counts(), "new_best": self.new_best}
        if self.opponents:
            data["opponents"] = [{"opponent": o.opponent, **o.counts()} for o in self.opponents]
            data["opponents_score"] = self.opponents_score
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "EvalReport":
        playouts = data.get("pure_playouts")
        ladder = MatchScore(f"pure:{playouts}", *(data.get(k, 0) for k in ("wins", "draws", "losses", "score")))
        others = tuple(MatchScore(o.get("opponent", "?"), *(o.get(k, 0) for k in ("wins", "draws", "losses", "score")))
                       for o in data.get("opponents") or [] if isinstance(o, dict))
        return cls(playouts, ladder, others, bool(data.get("new_best")))

    def describe(self) -> str:
        return ", ".join(m.describe() for m in (self.ladder, *self.opponents))


def judge(e: EvalSection, ladder: LadderState, match: MatchScore, others: tuple[MatchScore, ...]) -> EvalReport:
    """The verdict on the matches: new best model or not (``eval.select_by``), and the ladder after
    them (the best pure-MCTS score so far; a clean sweep raises the playouts and starts it again)."""
    playouts = ladder.pure_playouts
    report = EvalReport(playouts, match, others)
    if e.select_by == "opponents":
        new_best = report.opponents_score >= ladder.best_opponent_score
    else:
        new_best = match.score > ladder.best_score
    after = ladder
    if new_best:
        after = replace(after, best_opponent_score=max(after.best_opponent_score,
                                                       report.opponents_score if others else NO_SCORE))
    if match.score > ladder.best_score:
        after = replace(after, best_score=match.score)
        if match.score == 1.0 and playouts < e.pure_cap:
            after = replace(after, pure_playouts=min(playouts + e.pure_step, e.pure_cap), best_score=0.0)
    return replace(report, new_best=new_best, ladder_after=after)


def evaluate(actors, e: EvalSection, ladder: LadderState, seed: int,
             on_phase: Callable[[str], None] | None = None) -> EvalReport:
    """Play the ladder's match and one against each of ``eval.opponents`` on ``actors`` (see
    ``gomoku.training.backends.actors``), all from ``seed``; the report says what they mean."""

    def match(opponent: str) -> MatchScore:
        played = 0

        def on_games(n: int = 1) -> None:
            nonlocal played
            played += n
            if on_phase is not None:
                on_phase(f"evaluation vs {opponent} {played}/{e.games}")

        on_games(0)
        return MatchScore.of(opponent, actors.evaluate(opponent, e.games, seed, on_games).games, e.games)

    ladder_match = match(f"pure:{ladder.pure_playouts}")
    others = tuple(match(spec) for spec in e.opponents)
    return judge(e, ladder, ladder_match, others)


def pending_model(run_dir: Path, name: str, iteration: int) -> Path:
    """Where iteration ``iteration``'s model file ``name`` waits for its iteration's commit."""
    return run_dir / f"{name}{PENDING}{iteration:06d}"


def write_model_files(run_dir: Path, net, n_in_row: int, report: EvalReport, iteration: int, games: int,
                      writing) -> None:
    """current.pt, and best.pt when the report says so, as files pending the iteration's commit
    (each atomically, inside ``writing(path)``): ``promote_model_files`` puts them in place. A net
    whose outputs on the probe positions are not finite and in range (``nets.probe``; the pipeline
    stops before its commit) is a ValueError and writes neither: it never becomes best.pt."""
    from nets import save_model
    from nets.probe import net_problem

    problem = net_problem(net)
    if problem is not None:
        raise ValueError(f"the net of iteration {iteration} is not written to {run_dir}: its outputs are {problem}")
    current = pending_model(run_dir, CURRENT_MODEL, iteration)
    with writing(current):
        save_model(current, net, n_in_row=n_in_row, iteration=iteration, games=games)
    if report.new_best:
        score, best = report.opponents_score, pending_model(run_dir, BEST_MODEL, iteration)
        with writing(best):
            save_model(best, net, n_in_row=n_in_row, iteration=iteration, games=games,
                       eval_pure_playouts=report.pure_playouts, eval_score=report.ladder.score,
                       eval_opponents_score=NO_SCORE if score is None else score)


def pending_model_files(run_dir: Path) -> list[Path]:
    """The model files in ``run_dir`` that wait for their iteration's commit."""
    return sorted(path for name in MODEL_FILES for path in run_dir.glob(f"{name}{PENDING}*"))


def promote_model_files(run_dir: Path, committed: int) -> None:
    """Put the pending model files of iterations up to ``committed`` (the checkpoint's) in place,
    oldest first, and delete those of later iterations: a kill between an evaluation's model files
    and its iteration's checkpoint leaves no best.pt the run has not committed."""
    pending = sorted((int(path.name.rpartition(PENDING)[2]), path) for path in pending_model_files(run_dir))
    for iteration, path in pending:
        if iteration <= committed:
            path.replace(run_dir / path.name.rpartition(PENDING)[0])
        else:
            log.warning("dropping %s: its iteration was not committed", path.name)
            path.unlink()
