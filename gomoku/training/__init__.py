"""The training run. One iteration of ``TrainPipeline`` (pipeline.py) reads as its stages:
self-play -> 8 symmetries (symmetry.py) into the replay buffer (buffer.py) -> KL-adaptive updates
-> evaluation when due -> commit (shard, metrics line, model files, checkpoint).

- config.py: the run's config, dataclasses from YAML; it goes to workers as the dataclass.
- messages.py: what the trainer and its workers exchange, frozen records (``WorkerSpec``,
  ``Weights``, ``SelfPlayTask``/``SelfPlayResult``, ``EvalTask``/``EvalResult``).
- actors.py: ``Actors``, who plays the games (publish weights once per version, self-play games,
  evaluation games), one implementation in-process and one over a pool of workers; pool.py
  (worker processes, with inference.py's server for their leaves) and ray_backend.py (Ray actors;
  ray_session.py starts or joins Ray) are those pools; worker.py is one worker, built once from a
  spec, the same in a process and in a Ray actor; selfplay.py its batched games (``SelfPlayRunner``).
- evaluation.py: the pure-MCTS ladder, the other opponents, the best model: an ``EvalReport``.
- state.py: ``RunState``, the run's counters and ladder, checkpointed as one record.
- metrics.py: ``IterationRecord``, one metrics line, read back by plot.py and ablation.py.
- progress.py: what stops a run and the progress bar; rundir.py: the run lock, crash-safe files.
- bench.py, plot.py, ablation.py: measurements, curves, ablations at equal wall time.

Wires ``mcts`` and ``nets`` together; imports torch (the pipeline, the workers), never pygame.
Import the modules themselves (``gomoku.training.pipeline``); this package imports nothing heavy.
"""
