"""`gomoku-ablate` from a checkout (the package installed): gomoku/cli/ablate.py."""

from gomoku.cli.ablate import main

if __name__ == "__main__":
    raise SystemExit(main())
