"""`gomoku-export-onnx` from a checkout (the package installed): gomoku/cli/export_onnx.py."""

from gomoku.cli.export_onnx import main

if __name__ == "__main__":
    raise SystemExit(main())
