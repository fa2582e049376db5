"""The command lines, one module a command, each with its ``main(argv) -> exit status``.

pyproject.toml's ``[project.scripts]`` installs them as commands (``gomoku-train``, ``gomoku-play``,
...); ``scripts/NAME.py`` runs the same ``main`` from a checkout, the package installed (the
README's set-up). Command lines print; the library below them logs.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]  # the checkout: its models/, runs/, data/ (an editable install's)


def failed(error: object, code: int) -> int:
    """Say ``error`` on stderr in one line, as every command does, and give the exit status ``code``."""
    print(f"error: {error}", file=sys.stderr)
    return code
