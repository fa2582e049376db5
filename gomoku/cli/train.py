"""Train an AlphaZero gomoku player: python scripts/train.py --config configs/9x9.yaml

Prints where the run is (its directory, device, workers, what stops it), a progress line (games
of the target, run time, self-play speed, ETA to the next evaluation and to the end), each
evaluation's result, and at the end the command that plays the run's best model."""

from __future__ import annotations

import argparse
import logging
import math
import signal
import sys
from pathlib import Path

from gomoku.cli import REPO_ROOT, failed
from gomoku.matches.stops import EXIT_INTERRUPTED, stop_on_signals
from gomoku.training.config import ConfigError, load_config


def _parsed(text: str, parse, expected: str):
    """``parse(text)``, or the argparse error that says what was expected."""
    try:
        return parse(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None


def positive_int(text: str) -> int:
    value = _parsed(text, int, "a whole number")
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def positive_minutes(text: str) -> float:
    value = _parsed(text, float, "a number of minutes")
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return value


def longer_hint(pipeline, target, max_minutes: float | None) -> str:
    """How to train on past the limit that stopped the run (``pipeline.stopped_by``) at ``target``
    (``pipeline.target(...)``)."""
    from gomoku.training.progress import StopLimit, format_duration

    if pipeline.stopped_by is StopLimit.GAMES:  # (the last iteration's workers may have played past the target)
        return f"--resume --set train.game_batch_num=N, N above {max(target.games, pipeline.games_played):,}"
    if pipeline.stopped_by is StopLimit.WALL_TIME:
        own = pipeline.config.train.max_minutes
        limits = ([] if max_minutes is None else ["a larger --max-minutes"]) + (
            [f"--set train.max_minutes=M, M above {own:g}"] if own > 0 else [])
        return (f"--resume and {' and '.join(limits)}: "
                f"{'it counts' if len(limits) == 1 else 'the smaller wins; both count'} the run's time over all "
                f"its sessions, {format_duration(pipeline.wall_time)} so far")
    return "--resume: --max-iterations counts the iterations of one session"


def no_best_reason(pipeline) -> str:
    """Why the run has no best.pt: no evaluation yet, or none that ``eval.select_by`` chose."""
    e, games = pipeline.config.eval, pipeline.games_played
    if games < e.check_freq:
        return f"the first evaluation comes at {e.check_freq:,} games"
    rule = ("no evaluation has yet scored above 0 against the pure-MCTS ladder" if e.select_by == "ladder" else
            f"no evaluation so far was chosen as best by its score against {', '.join(e.opponents)}")
    return f"{rule}; the next comes at {(games // e.check_freq + 1) * e.check_freq:,} games"


def default_run_dir(config_path: str) -> Path:
    """runs/NAME for configs/NAME.yaml, in this checkout: relative when run from its root (as the
    docs show it), else the full path."""
    folder = Path("runs") / Path(config_path).stem
    return folder if Path.cwd().resolve() == REPO_ROOT else REPO_ROOT / folder


def end_message(pipeline, run_dir: Path, target=None, max_minutes: float | None = None) -> str:
    """The last line: why the run stopped, and what to run to play it (or when best.pt comes and
    how to train on: ``target`` is what stopped it, ``max_minutes`` the --max-minutes given)."""
    from gomoku.training.pipeline import BEST_MODEL
    from gomoku.training.progress import format_duration

    done = (f"done: {pipeline.stop_reason}; {pipeline.games_played:,} games, "
            f"{format_duration(pipeline.wall_time)} run time, in {run_dir}")
    best = run_dir / BEST_MODEL
    if best.exists():
        return f"{done}\nplay its best model: python scripts/play.py --model {best}"
    hint = longer_hint(pipeline, target or pipeline.target(), max_minutes)
    return f"{done}\nno {BEST_MODEL} yet: {no_best_reason(pipeline)} (train longer: the same command with {hint})"


def _ignore_signals() -> None:
    """A second Ctrl-C (or kill) must not cut the message that the first one stopped the run."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


class UsageError(Exception):
    """A bad config or --device: the message says why, in one line."""


def _prepare(args: argparse.Namespace):
    """The config (None on --resume without --config), checked, with the modules training needs
    imported (torch among them: seconds, in which an interrupt is likely)."""
    try:
        # On resume the run's own config is used, with --set applied to it (in the pipeline); the
        # --config given, with the same --set, is only checked against it: the command line that
        # started a run resumes it.
        config = load_config(args.config, args.set) if args.config is not None else None
    except ConfigError as error:  # an unreadable file too
        raise UsageError(error) from None
    from gomoku.training.backends.actors import device_error

    if args.device is not None and (problem := device_error(args.device)):
        raise UsageError(problem)
    import tqdm.contrib.logging  # noqa: F401  (imported here, where an interrupt is expected)

    import gomoku.training.pipeline  # noqa: F401
    import gomoku.training.rundir  # noqa: F401
    return config


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--config", help="YAML config, e.g. configs/9x9.yaml (with --resume: optional, the run "
                                         "keeps its own config; only checked against it)")
    parser.add_argument("--run-dir", help="run directory (default runs/<config name>)")
    parser.add_argument("--resume", action="store_true",
                        help="continue the run in --run-dir with its own config; --set changes keys other than "
                             "seed, board.* and net.*")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override a config value (repeatable), e.g. --set search.n_playout=200")
    parser.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: cuda when available)")
    parser.add_argument("--max-iterations", type=positive_int,
                        help="stop after this many iterations (at least 1) of this session")
    parser.add_argument("--max-minutes", type=positive_minutes,
                        help="stop once the run's wall time (all its sessions, as in metrics.jsonl) reaches this "
                             "(as train.max_minutes; the smaller of the two wins)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    if args.config is None and not args.resume:
        parser.error("--config is required for a new run")
    if args.config is None and args.run_dir is None:
        parser.error("--resume without --config needs --run-dir")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # Ctrl-C and a plain `kill` both stop the run (gomoku.matches.stops; a stop that Python dropped
    # in a __del__ comes again). Every completed iteration is already saved.
    stop_on_signals()
    try:
        config = _prepare(args)
    except UsageError as error:
        return failed(error, 2)
    except KeyboardInterrupt:  # in an import (torch's takes seconds) or while reading the config
        _ignore_signals()
        print("\ninterrupted before training started; nothing was written", file=sys.stderr)
        return EXIT_INTERRUPTED
    from tqdm.contrib.logging import logging_redirect_tqdm

    from gomoku.training.backends.messages import WorkerError
    from gomoku.training.pipeline import CHECKPOINT, TrainPipeline
    from gomoku.training.updates import TrainingDiverged
    from gomoku.training.rundir import RunLockedError

    run_dir = Path(args.run_dir) if args.run_dir else default_run_dir(args.config)
    had_checkpoint = (run_dir / CHECKPOINT).is_file()
    pipeline = None
    try:
        pipeline = TrainPipeline(config, run_dir, device=args.device, resume=args.resume,
                                 progress=not args.no_progress, overrides=args.set if args.resume else None)
        target = pipeline.target(args.max_iterations, None if args.max_minutes is None else 60 * args.max_minutes)
        for line in pipeline.describe(target, args.config):
            print(line)
        sys.stdout.flush()
        with logging_redirect_tqdm():  # log lines above the progress bar, not through it
            pipeline.run(max_iterations=target.iterations, max_wall_s=target.wall_s)
    except KeyboardInterrupt:
        _ignore_signals()
        if pipeline is None and not had_checkpoint and (run_dir / CHECKPOINT).is_file():
            # stopped in the constructor, after the new run's first save (iteration 0)
            print(f"\ninterrupted; the new run is saved in {run_dir} at iteration 0 (continue with --resume)",
                  file=sys.stderr)
        elif pipeline is None:
            print(f"\ninterrupted before training started; nothing new in {run_dir}", file=sys.stderr)
        else:  # each completed iteration was committed (atomically) before this could be raised
            print(f"\ninterrupted; the run is saved in {run_dir} at iteration {pipeline.committed_iteration} "
                  f"(continue with --resume)", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (FileExistsError, ValueError, RunLockedError) as error:
        return failed(error, 2)
    except (TrainingDiverged, WorkerError, OSError) as error:
        return failed(error, 1)
    print(end_message(pipeline, run_dir, target, args.max_minutes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
