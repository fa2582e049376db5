"""`gomoku-review` from a checkout (the package installed): gomoku/cli/review.py."""

from gomoku.cli.review import main

if __name__ == "__main__":
    raise SystemExit(main())
