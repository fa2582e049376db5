"""The training run, in three rooms: the loop (this package), who plays its games (``backends``)
and, above both, the lab's tools (``gomoku.lab``: benchmarks, curves, ablations), which the loop
never imports.

One iteration of ``TrainPipeline`` (pipeline.py) reads as its stages: self-play -> 8 symmetries
(symmetry.py) into the replay buffer (buffer.py) -> KL-adaptive updates (updates.py) ->
evaluation when due -> commit (shard, metrics line, model files, checkpoint).

- config.py: the run's config, dataclasses from YAML; it goes to workers as the dataclass.
- samples.py: ``Samples``, training positions as they travel (self-play, symmetries, buffer, batches).
- selfplay.py: batched self-play games (``SelfPlayRunner``, ``SelfPlayGame``).
- evaluation.py: the pure-MCTS ladder, the other opponents, the best model: an ``EvalReport``.
- updates.py: the training stage (how many updates, the updates, the divergence rule).
- state.py: ``RunState``, the run's counters and ladder, checkpointed as one record.
- metrics.py: ``IterationRecord`` (with the iteration's ``TrainStats``), one metrics line.
- progress.py: what stops a run and the progress bar; rundir.py: the run lock, crash-safe files.
- backends/: ``Actors`` (actors.py), who plays the games: in-process, worker processes (pool.py,
  inference.py) or Ray actors (ray_backend.py, ray_session.py); worker.py is one worker, the same
  in a process and in a Ray actor; messages.py what the trainer and its workers exchange.

Only pipeline.py imports the backends; the backends play the loop's games (selfplay.py,
evaluation.py). Wires ``mcts`` and ``nets`` together; imports torch (the pipeline, the workers),
never pygame. Import the modules themselves (``gomoku.training.pipeline``); this package imports
nothing heavy.
"""
