"""folium maps of the dumping-report pages: plain functions, data in, folium.Map out.

Built with the maps library (Leaflet from our static files, the configured tiles, the
municipal outline and bacias, markers, legends and bounds). Only plain-Leaflet features, as
there (maps.base: no jQuery/awesome-markers icons).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import folium

from maps import bounds, markers
from maps.base import add_layer_control, base_map
from maps.legend import swatch_label
from maps.network import municipality_map

from .models import ReportStatus

# Okabe-Ito colours, distinguishable with the common colour-vision deficiencies.
STATUS_COLOURS = {
    ReportStatus.NEW: "#D55E00",
    ReportStatus.CONFIRMED: "#E69F00",
    ReportStatus.CLEANUP_SCHEDULED: "#0072B2",
    ReportStatus.CLEANED: "#009E73",
    ReportStatus.DUPLICATE: "#999999",
    ReportStatus.UNFOUNDED: "#6B7280",
}
CELL_COLOUR = "#D55E00"
EXIF_COLOUR = "#7B2CBF"
REPORT_COLOUR = "#111827"
FIT_MAX_ZOOM = 17


@dataclass(frozen=True)
class ReportPoint:
    lon: float
    lat: float
    status: str
    popup_html: str


def _fit(m: folium.Map, view, padding=(24, 24)) -> None:
    # A single report gets some context around it.
    bounds.fit(m, view, padding, max_zoom=FIT_MAX_ZOOM, point_margin_deg=0.003)


def report_form_map(outline: dict | None, chosen: tuple[float, float] | None = None):
    """The citizen's map on /denunciar/: the municipality, and the chosen point if any
    (lon, lat). Nothing clickable but the map itself: a click picks the point."""
    m = municipality_map(outline)
    if chosen is not None:
        lon, lat = chosen
        _fit(m, bounds.around(lat, lon, 0.004), (8, 8))
    else:
        _fit(m, bounds.outline_bounds(outline), (8, 8))
    return m


def inspection_map(
    outline: dict | None,
    basins: dict | None,
    points: Sequence[ReportPoint] = (),
    cells: Sequence[tuple[float, float, int]] = (),
    cell_size_deg: float | None = None,
):
    """The inspectors' map: one layer per status (the layer control is the legend), or, when
    too many reports match, circles per grid cell sized by the count."""
    m = municipality_map(outline, basins)
    drawn: list[tuple[float, float]] = []  # (lat, lon)
    if cells:
        group = folium.FeatureGroup(
            name=swatch_label(CELL_COLOUR, "Denúncias por área (agregadas)"), show=True
        )
        biggest = max(n for _x, _y, n in cells)
        for lon, lat, n in cells:
            folium.CircleMarker(
                location=[lat, lon],
                radius=4 + 16 * math.sqrt(n / biggest),
                color="#ffffff",
                weight=1,
                fill=True,
                fill_color=CELL_COLOUR,
                fill_opacity=0.75,
                tooltip=f"{n} denúncia{'s' if n > 1 else ''} nesta área",
            ).add_to(group)
            drawn.append((lat, lon))
        group.add_to(m)
    else:
        by_status: dict[str, list[ReportPoint]] = {}
        for p in points:
            by_status.setdefault(p.status, []).append(p)
        labels = dict(ReportStatus.choices)
        for status, colour in STATUS_COLOURS.items():
            items = by_status.get(status)
            if not items:
                continue
            collection = {
                "type": "FeatureCollection",
                "features": [
                    {
                        "type": "Feature",
                        "geometry": {"type": "Point", "coordinates": [p.lon, p.lat]},
                        "properties": {"popup_html": p.popup_html},
                    }
                    for p in items
                ],
            }
            group = folium.FeatureGroup(
                name=swatch_label(colour, f"{labels[status]} ({len(items)})"), show=True
            )
            markers.circles(
                collection, lambda _f, c=colour: markers.dot_style(c), popup=markers.popup()
            ).add_to(group)
            group.add_to(m)
            drawn += [(p.lat, p.lon) for p in items]
    if drawn:
        _fit(m, bounds.points_bounds(drawn, margin_deg=(cell_size_deg or 0) / 2))
    else:
        _fit(m, bounds.outline_bounds(outline), (8, 8))
    # Not exposed to the page scripts: the list stays open on phones too.
    add_layer_control(m, expose=False)
    return m


def report_detail_map(
    point: tuple[float, float], exif_points: Sequence[tuple[float, float, str]] = ()
):
    """One report: its point, and where each photo says it was taken (EXIF), joined by a
    dashed line. point: (lon, lat); exif_points: (lon, lat, label)."""
    lon, lat = point
    m = base_map((lat, lon), 17)
    group = folium.FeatureGroup(name=swatch_label(REPORT_COLOUR, "Local informado"), show=True)
    markers.spot([lat, lon], REPORT_COLOUR, "Local informado na denúncia").add_to(group)
    group.add_to(m)
    drawn = [(lat, lon)]
    if exif_points:
        exif = folium.FeatureGroup(
            name=swatch_label(EXIF_COLOUR, "Local das fotos (EXIF)", "ring"), show=True
        )
        for x, y, label in exif_points:
            folium.PolyLine(
                [[lat, lon], [y, x]], color=EXIF_COLOUR, weight=2, dash_array="5 5"
            ).add_to(exif)
            folium.CircleMarker(
                location=[y, x],
                radius=8,
                color=EXIF_COLOUR,
                weight=3,
                fill=True,
                fill_color="#ffffff",
                fill_opacity=0.9,
                tooltip=label,
            ).add_to(exif)
            drawn.append((y, x))
        exif.add_to(m)
    _fit(m, bounds.points_bounds(drawn), (32, 32))
    add_layer_control(m, expose=False)
    return m
