"""`gomoku-evaluate` from a checkout (the package installed): gomoku/cli/evaluate.py."""

from gomoku.cli.evaluate import main

if __name__ == "__main__":
    raise SystemExit(main())
