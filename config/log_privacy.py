"""Logs without personal data (LGPD): CPF, CNPJ, e-mail addresses and phone numbers are masked
in every record, and the values of query strings are dropped, before a handler writes them.

settings.LOGGING puts `MaskPersonalData` on the handlers (it rewrites the record itself, so every
handler after it sees the masked text too) and `MaskingFormatter` on their output (tracebacks
included). Names cannot be recognised by a pattern: the code never logs them, request bodies
are never logged, and query strings (where a search by name would go) lose their values.
"""

from __future__ import annotations

import logging
import re

# Not a word character, a dot or a hyphen on either side: a CTR number (CTR-3518404-2026-…),
# a protocol (2026-AB2C-…) or coordinates (-45.1921…) are not documents or phones.
_B = r"(?<![\w.\-])"
_E = r"(?![\w\-])"
PATTERNS: tuple[tuple[re.Pattern, str], ...] = (
    (re.compile(r"[\w.+\-]+(?:@|%40)[\w\-]+(?:\.[\w\-]+)+", re.IGNORECASE), "[e-mail]"),
    (re.compile(_B + r"\d{2}\.\d{3}\.\d{3}(?:/|%2F)\d{4}-\d{2}" + _E, re.IGNORECASE), "[CNPJ]"),
    (re.compile(_B + r"\d{3}\.\d{3}\.\d{3}-\d{2}" + _E), "[CPF]"),
    (re.compile(_B + r"\d{9}-\d{2}" + _E), "[CPF]"),
    # (12) 99123-4567, 12 3122-4567, +55 12 99123 4567, %2812%29+99123-4567
    (
        re.compile(
            r"(?:\+?55[\s.+\-]?)?(?:(?:\(|%28)\d{2}(?:\)|%29)|" + _B + r"\d{2})"
            r"(?:[\s.+\-]|%20)?9?\d{4}(?:[\s.+\-]|%20)?\d{4}" + _E,
            re.IGNORECASE,
        ),
        "[telefone]",
    ),
    # Bare digits: a CPF (11), a CNPJ (14), a phone with its area code (10 or 11).
    (re.compile(_B + r"\d{10,14}" + _E), "[número]"),
)

# Query-string parameters whose values are kept in logs: paging, formats and codes that name
# no one. Every other value becomes ***.
SAFE_PARAMETERS = frozenset(
    {"page", "pagina", "page_size", "format", "kind", "status", "situacao", "ordering"}
)
_QUERY = re.compile(r"\?([^\s\"'#]*)")


def _mask_query(match: re.Match) -> str:
    pairs = []
    for pair in match.group(1).split("&"):
        if not pair:
            continue
        key, sep, value = pair.partition("=")
        if sep and key.lower() not in SAFE_PARAMETERS:
            value = "***"
        pairs.append(f"{key}{sep}{value}")
    return "?" + "&".join(pairs)


def mask(text: str) -> str:
    """The text with personal data replaced by a placeholder."""
    if not text:
        return text
    text = _QUERY.sub(_mask_query, text)
    for pattern, placeholder in PATTERNS:
        text = pattern.sub(placeholder, text)
    return text


class MaskPersonalData(logging.Filter):
    """Rewrites the record's message (and its traceback text) masked; never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "_ctr_masked", False):
            return True
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: keep what there is, masked
            message = str(record.msg)
        record.msg = mask(message)
        record.args = ()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = mask(record.exc_text)
        if record.stack_info:
            record.stack_info = mask(record.stack_info)
        record._ctr_masked = True
        return True


class MaskingFormatter(logging.Formatter):
    """The formatted line masked as a whole (a second net for what the filter did not see)."""

    def format(self, record: logging.LogRecord) -> str:
        return mask(super().format(record))
