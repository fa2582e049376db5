"""`gomoku-pbrain` from a checkout (the package installed): gomoku/cli/pbrain.py."""

from gomoku.cli.pbrain import run

if __name__ == "__main__":
    run()
