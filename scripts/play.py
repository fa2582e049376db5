"""`gomoku-play` from a checkout (the package installed): gomoku/cli/play.py."""

from gomoku.cli.play import run

if __name__ == "__main__":
    run()
