"""Numbers as a Brazilian reader writes them (decimal comma, dot for thousands).

Explicit rather than django.utils.formats.number_format, which truncates floats instead of
rounding them and depends on the active locale.
"""

from __future__ import annotations

from decimal import Decimal


def _br(text: str) -> str:
    """Swap the separators of a Python-formatted number: 1,234.5 -> 1.234,5."""
    return text.replace(",", "\0").replace(".", ",").replace("\0", ".")


def format_distance(metres: float) -> str:
    """350 m, 1,5 km, 12,3 km, 134 km."""
    if metres < 999.5:
        return f"{round(metres):d} m"
    km = metres / 1000
    if km < 99.95:
        return _br(f"{km:.1f}") + " km"
    return _br(f"{km:,.0f}") + " km"


def format_decimal(value: Decimal | float | int) -> str:
    """1 (not 1,000), 0,5, 1.234,75: as many decimals as the value needs."""
    d = Decimal(str(value)).normalize()
    if d == d.to_integral():
        d = d.quantize(Decimal(1))
    return _br(f"{d:,f}")
