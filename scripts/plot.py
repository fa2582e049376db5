"""`gomoku-plot` from a checkout (the package installed): gomoku/cli/plot.py."""

from gomoku.cli.plot import main

if __name__ == "__main__":
    raise SystemExit(main())
