"""The README and docs/*.md: every relative link points at a file (and heading) that exists, the
README stays short, and CI runs the test command the README gives."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
RESULTS = ROOT / "docs" / "results"
PAGES = [README, ROOT / "models" / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted(RESULTS.glob("*.md"))]
SHIPPED = {"9x9.pt", "9x9.onnx", "9x9-int8.onnx", "15x15.pt", "README.md", "9x9-run", "15x15-run"}  # models/'s top level
SECTION = re.compile(r"^### `([\w./-]+)/`\n(.*?)(?=^#)", re.MULTILINE | re.DOTALL)
ROW_FILES = re.compile(r"^\| ([^|]+) \|", re.MULTILINE)
README_MAX_LINES = 300

FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")  # [text](target) and ![alt](target)
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*$", re.MULTILINE)
EXTERNAL = ("http://", "https://", "mailto:")


def prose(text: str) -> str:
    """The text without code blocks and code spans, where brackets are not links."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {slug(h) for h in HEADING.findall(FENCE.sub("", page.read_text(encoding="utf-8")))}


def relative_links(page: Path) -> list[str]:
    return [t for t in LINK.findall(prose(page.read_text(encoding="utf-8"))) if not t.startswith(EXTERNAL)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    broken = []
    for target in relative_links(page):
        path_part, _, anchor = target.partition("#")
        file = (page.parent / path_part).resolve() if path_part else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading #{anchor} in {file.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_link_checker_sees_links_and_headings(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# A title: `x.py`\n\n[ok](page.md#a-title-xpy) ![pic](gone.png) `[not](a-link)`\n"
                    "```\n[also](not-a-link)\n```\n[web](https://example.com)\n", encoding="utf-8")
    assert relative_links(page) == ["page.md#a-title-xpy", "gone.png"]
    assert anchors(page) == {"a-title-xpy"}


def indexed_files(index: str) -> set[str]:
    """The files the index names: under each ``### `FOLDER/``` heading, the first cell of each
    table row, ``a/b.json`` relative to that folder and a bare ``c.json`` beside the last path
    named in the cell."""
    named = set()
    for folder, section in SECTION.findall(index + "\n#"):
        for cell in ROW_FILES.findall(section):
            here = folder
            for name in re.findall(r"`([^`]+)`", cell):
                path = f"{folder}/{name}" if "/" in name else f"{here}/{name}"
                here = path.rsplit("/", 1)[0]
                named.add(path)
    return named


def test_every_results_file_is_in_the_index():
    index = (RESULTS / "README.md").read_text(encoding="utf-8")
    files = {str(p.relative_to(RESULTS)) for p in RESULTS.rglob("*") if p.is_file() and p.suffix != ".md"}
    assert files and not files - indexed_files(index), sorted(files - indexed_files(index))
    assert not indexed_files(index) - files, sorted(indexed_files(index) - files)  # no row names a file not there
    pages = {p.name for p in RESULTS.glob("*.md")} - {"README.md"}
    assert pages and all(f"]({page})" in index for page in pages)  # the results page links every log


def test_the_index_reads_its_rows():
    index = "### `runs/`\n\n| file | what |\n|---|---|\n| `a/x.pt`, `y.json` | z |\n| `b.json` | `not.me` |\n\n# end\n"
    assert indexed_files(index) == {"runs/a/x.pt", "runs/a/y.json", "runs/b.json"}


def test_models_holds_only_what_ships():
    models = ROOT / "models"
    assert {p.relative_to(models).parts[0] for p in models.rglob("*") if p.is_file()} <= SHIPPED


def test_readme_is_short():
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines < README_MAX_LINES, f"README.md has {lines} lines; move details to docs/"


def test_ci_runs_the_readme_test_command():
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    ci_commands = [line for line in ci if line and not line.startswith("#")]
    test_command = ci_commands[-1]
    readme = README.read_text(encoding="utf-8")
    setup_lines = [line for line in FENCE.findall(readme)[0].splitlines() if "pytest" in line]
    assert setup_lines, "the README's set-up block has no test command"
    assert setup_lines[0].split("&&")[-1].strip() == test_command
    assert "python -m pip install torch==2.13.0" in ci_commands
