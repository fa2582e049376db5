"""The training run: config (YAML dataclasses), self-play (batched games, worker processes, the
inference server), the replay buffer, the 8 symmetries, ``TrainPipeline``, benchmarks and plots.

Wires ``mcts`` and ``nets`` together; imports torch (the pipeline, the workers), never pygame.
Import the modules themselves (``gomoku.training.pipeline``); this package imports nothing heavy.
"""
