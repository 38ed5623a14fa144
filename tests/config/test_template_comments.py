"""Django's `{# … #}` comment ends on its own line: one that runs onto the next is printed on
the page as text (the issue form showed the start of one on 02/12/2026). Longer comments use
`{% comment %}`."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SKIPPED = {".venv", "node_modules", "staticfiles", ".local", ".git"}


def our_templates() -> list[Path]:
    return [
        path
        for path in ROOT.rglob("templates/**/*.html")
        if not SKIPPED.intersection(path.relative_to(ROOT).parts)
    ]


def test_there_are_templates_to_read():
    assert len(our_templates()) > 50


def test_no_one_line_comment_runs_onto_the_next_line():
    open_comments = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in our_templates()
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "{#" in line and "#}" not in line[line.index("{#") :]
    ]
    assert open_comments == []
