"""`gomoku-train` from a checkout (the package installed): gomoku/cli/train.py."""

from gomoku.cli.train import main

if __name__ == "__main__":
    raise SystemExit(main())
