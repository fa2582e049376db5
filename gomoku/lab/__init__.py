"""The lab: tools that measure and compare, above the training run (which never imports them).

- bench.py (with bench_common.py, bench_threats.py, bench_tactics.py): speed figures of the
  search, self-play, the net and the tactics (scripts/bench.py).
- plot.py: a run's training curves as a PNG (scripts/plot.py); ablation.py: variants trained at
  equal wall time and rated (scripts/ablate.py); int8.py: the net's int8 ONNX export.

Import the modules themselves (``gomoku.lab.plot`` imports matplotlib); this package imports nothing.
"""
