"""Distances as a Brazilian reader writes them (config.br: decimal comma, dot for thousands)."""

from __future__ import annotations

from config.br import br_number


def format_distance(metres: float) -> str:
    """350 m, 1,5 km, 12,3 km, 134 km."""
    if metres < 999.5:
        return f"{round(metres):d} m"
    km = metres / 1000
    if km < 99.95:
        return br_number(km, 1) + " km"
    return br_number(km, 0) + " km"
