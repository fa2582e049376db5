"""`gomoku-clock-match` from a checkout (the package installed): gomoku/cli/clock_match.py."""

from gomoku.cli.clock_match import main

if __name__ == "__main__":
    raise SystemExit(main())
