"""The commands: pyproject.toml's [project.scripts] name a main() in gomoku/cli for every script,
and scripts/NAME.py is only a wrapper that runs it (no sys.path bootstrap anywhere)."""

from __future__ import annotations

import ast
import importlib
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def entry_points() -> dict[str, str]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]


def test_every_entry_point_is_a_function_of_gomoku_cli():
    for command, target in entry_points().items():
        module, _, function = target.partition(":")
        assert command.startswith("gomoku-") and module.startswith("gomoku.cli."), command
        assert callable(getattr(importlib.import_module(module), function)), target


def test_every_script_wraps_the_module_of_its_command():
    modules = {target.partition(":")[0].removeprefix("gomoku.cli.") for target in entry_points().values()}
    scripts = sorted((ROOT / "scripts").glob("*.py"))
    assert {path.stem for path in scripts} == modules == {path.stem for path in (ROOT / "gomoku" / "cli").glob("*.py")
                                                         if path.stem != "__init__"}
    for path in scripts:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imports = [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
        assert imports == [f"gomoku.cli.{path.stem}"], path.name  # nothing but its command
        assert len(path.read_text(encoding="utf-8").splitlines()) <= 8, path.name


def test_no_path_bootstrap_in_the_scripts_or_the_commands():
    for path in [*(ROOT / "scripts").glob("*.py"), *(ROOT / "gomoku" / "cli").glob("*.py")]:
        assert "sys.path" not in path.read_text(encoding="utf-8"), path
