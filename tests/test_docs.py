"""The README and docs/*.md: every relative link points at a file (and heading) that exists, the
README stays short, and CI runs the test command the README gives."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, ROOT / "models" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
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
