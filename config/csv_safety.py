"""CSV cells a spreadsheet will not run as formulas (CSV injection, OWASP).

A text cell starting with =, +, -, @, a tab or a carriage return is a formula to Excel and
LibreOffice (=HYPERLINK(...), =cmd|...): it gets a leading apostrophe, which spreadsheets show
as text. Numbers stay numbers: -45.19, -1,5 and -1.234,56 are written as they are.
"""

from __future__ import annotations

import csv
import datetime
import re
from collections.abc import Iterable
from decimal import Decimal

from django.http import HttpResponse

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
NUMBER = re.compile(
    r"[+-]?(?:\d+(?:[.,]\d*)?|[.,]\d+|\d{1,3}(?:\.\d{3})+(?:,\d*)?)(?:[eE][+-]?\d+)?"
)


def safe_cell(value):
    """The value to write in a CSV cell: text that a spreadsheet would take for a formula is
    prefixed with an apostrophe; numbers, dates and None go through as they are."""
    if value is None or isinstance(
        value, bool | int | float | Decimal | datetime.date | datetime.time
    ):
        return value
    text = str(value)
    if text.startswith(FORMULA_STARTS) and not NUMBER.fullmatch(text):
        return "'" + text
    return text


class SafeWriter:
    """csv.writer whose every cell goes through safe_cell."""

    def __init__(self, handle, **kwargs):
        self._writer = csv.writer(handle, **kwargs)

    def writerow(self, row: Iterable):
        return self._writer.writerow([safe_cell(value) for value in row])

    def writerows(self, rows: Iterable[Iterable]) -> None:
        for row in rows:
            self.writerow(row)


def writer(handle, **kwargs) -> SafeWriter:
    """Like csv.writer(handle, **kwargs), with formulas neutralized."""
    return SafeWriter(handle, **kwargs)


def csv_response(filename: str, header: list, rows: Iterable[Iterable]):
    """A CSV download a Brazilian spreadsheet opens as columns: `;` between cells (the comma
    is the decimal separator), CRLF lines, UTF-8 with a BOM (else Excel reads Latin-1), and
    no cell a formula. The one way the pages answer with a CSV."""
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response.write("\ufeff")
    table = writer(response, delimiter=";", lineterminator="\r\n")
    table.writerow(header)
    table.writerows(rows)
    return response
