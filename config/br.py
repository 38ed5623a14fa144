"""Numbers and dates as a Brazilian reader writes them: 1.234,5 m³; R$ 1.234,56; 31/12/2025.

Every number the platform shows (pages, PDFs, CSV files, messages, charts, commands) goes
through `br_number`. Explicit rather than django.utils.formats.number_format, which truncates
floats instead of rounding them and depends on the active locale.
"""

from __future__ import annotations

import datetime
from decimal import ROUND_HALF_UP, Decimal

from django.utils import timezone


def br_number(value, places: int | None = None, grouping: bool = True) -> str:
    """Decimal comma, and a dot between thousands unless `grouping` is off (a CSV cell, what a
    form field shows back, a volume in a rule's message).

    `places`: that many decimals, rounded; None: as many as the value has (1, not 1,000; never
    1E+1). A Decimal or an int (money, UFESP, declared m³) rounds half up, as a bill does. A
    float (coordinates, sums read from the database, chart ticks, sizes) rounds its binary
    value as Python's own formatting does, so br_number(x, 1) says what f"{x:.1f}" says; with no
    places it shows its shortest representation (0,1, not the binary expansion). None is zero
    (an empty sum).
    """
    if isinstance(value, float):
        if places is not None:
            return _swap_separators(f"{value:,.{places}f}" if grouping else f"{value:.{places}f}")
        d = Decimal(repr(value))
    elif isinstance(value, Decimal | int):
        d = Decimal(value)
    elif value is None:
        d = Decimal(0)
    else:  # a text, a numpy integer (Decimal refuses those)
        d = Decimal(str(value))
    if places is None:
        d = d.normalize()
        if d == d.to_integral():
            d = d.quantize(Decimal(1))
    else:
        d = d.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    return _swap_separators(f"{d:,f}" if grouping else f"{d:f}")


def _swap_separators(text: str) -> str:
    """1,234.5 (Python) -> 1.234,5 (Brazil)."""
    return text.replace(",", "\0").replace(".", ",").replace("\0", ".")


def br_money(value) -> str:
    """R$ 1.234,56."""
    text = br_number(value, 2)
    return f"-R$ {text[1:]}" if text.startswith("-") else f"R$ {text}"


def br_date(day: datetime.date | None) -> str:
    return day.strftime("%d/%m/%Y") if day else "—"


def br_datetime(moment: datetime.datetime | None) -> str:
    """In the municipality's time zone (settings.TIME_ZONE)."""
    return timezone.localtime(moment).strftime("%d/%m/%Y %H:%M") if moment else "—"
