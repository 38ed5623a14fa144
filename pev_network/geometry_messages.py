"""GEOS validity reasons in the user's language, shared by the facility import and the
inspectors' polygon filter."""

from __future__ import annotations

import re

from config.br_forms import format_point

# GEOS validity reasons (shapely.is_valid_reason, GEOSGeometry.valid_reason), in Portuguese.
GEOS_REASONS: dict[str, str] = {
    "Self-intersection": "auto-interseção",
    "Ring Self-intersection": "anel com auto-interseção",
    "Too few points in geometry component": "parte com pontos de menos",
    "Hole lies outside shell": "furo fora do contorno externo",
    "Nested holes": "furos aninhados",
    "Interior is disconnected": "interior desconexo",
    "Nested shells": "contornos externos aninhados",
    "Duplicate Rings": "anéis duplicados",
    "Invalid Coordinate": "coordenada inválida",
    "Ring is not closed": "anel não fechado",
}

_REASON_AT = re.compile(r"^(.*?)\[(.*)\]$")


def validity_reason_pt(raw: str) -> str:
    """'Self-intersection[-45.18 -22.8]' -> 'auto-interseção em (-22,8; -45,18)': the point as
    the coordinate fields show it (latitude first, decimal comma). A reason GEOS adds in a
    later version stays as GEOS wrote it."""
    match = _REASON_AT.match(raw.strip())
    text, where = (match.group(1), match.group(2)) if match else (raw.strip(), "")
    reason = GEOS_REASONS.get(text, text)
    if not where:
        return reason
    try:
        lon, lat = (float(n) for n in where.split()[:2])
    except ValueError:
        return f"{reason} em ({where})"
    return f"{reason} em {format_point(lon, lat, _places(where))}"


def _places(where: str) -> int:
    """As many decimals as GEOS wrote (it drops trailing zeros), at most 6."""
    decimals = [len(n.split(".")[1]) for n in where.split()[:2] if "." in n]
    return min(max(decimals, default=0), 6)
