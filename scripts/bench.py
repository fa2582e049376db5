"""`gomoku-bench` from a checkout (the package installed): gomoku/cli/bench.py."""

from gomoku.cli.bench import main

if __name__ == "__main__":
    raise SystemExit(main())
