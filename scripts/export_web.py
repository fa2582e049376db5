"""`gomoku-export-web` from a checkout (the package installed): gomoku/cli/export_web.py."""

from gomoku.cli.export_web import main

if __name__ == "__main__":
    raise SystemExit(main())
