"""The documentation that promises things about the code must keep up with it."""

from pathlib import Path

from django.conf import settings

from ctr.rules import REGISTRY


def test_legal_traceability_lists_every_rule():
    text = (Path(settings.BASE_DIR) / "docs" / "legal.md").read_text()
    missing = [code for code in REGISTRY if f"| {code} |" not in text]
    assert missing == []
