"""folium maps of the dumping-report pages: plain functions, data in, folium.Map out.

Built on maps.builders (Leaflet from our static files, the configured tiles, the municipal
outline and bacias). Only plain-Leaflet features, as there (no jQuery/awesome-markers icons).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import folium
from django.utils.html import format_html
from folium.map import FitBounds

from maps import builders

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


def _swatch(colour: str, text: str, style: str = "solid") -> str:
    return format_html(
        '<span class="ctr-swatch ctr-swatch-{}" style="--swatch: {}" aria-hidden="true"></span>{}',
        style,
        colour,
        text,
    )


def _fit(m: folium.Map, bounds: list[list[float]] | None, padding=(24, 24)) -> None:
    if not bounds:
        return
    (s, w), (n, e) = bounds
    if s == n and w == e:  # one point: some context around it
        bounds = [[s - 0.003, w - 0.003], [n + 0.003, e + 0.003]]
    fit = FitBounds(bounds, padding=padding, max_zoom=FIT_MAX_ZOOM)
    fit.options["animate"] = False
    m.add_child(fit)


def _outline_bounds(outline: dict | None) -> list[list[float]] | None:
    if not outline or not outline.get("bbox"):
        return None
    min_lon, min_lat, max_lon, max_lat = outline["bbox"]
    return [[min_lat, min_lon], [max_lat, max_lon]]


def _centre(outline: dict | None) -> tuple[float, float]:
    bounds = _outline_bounds(outline)
    if not bounds:
        return builders.DEFAULT_CENTRE
    (s, w), (n, e) = bounds
    return ((s + n) / 2, (w + e) / 2)


def report_form_map(outline: dict | None, chosen: tuple[float, float] | None = None):
    """The citizen's map on /denunciar/: the municipality, and the chosen point if any
    (lon, lat). Nothing clickable but the map itself: a click picks the point."""
    m = builders.base_map(_centre(outline), builders.DEFAULT_ZOOM)
    if outline:
        builders.add_outline(m, outline)
    if chosen is not None:
        lon, lat = chosen
        _fit(m, [[lat - 0.004, lon - 0.004], [lat + 0.004, lon + 0.004]], (8, 8))
    else:
        _fit(m, _outline_bounds(outline), (8, 8))
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
    m = builders.base_map(_centre(outline), builders.DEFAULT_ZOOM)
    if outline:
        builders.add_outline(m, outline)
    if basins:
        builders.add_basins(m, basins)
    lats: list[float] = []
    lons: list[float] = []
    if cells:
        group = folium.FeatureGroup(
            name=_swatch(CELL_COLOUR, "Denúncias por área (agregadas)"), show=True
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
            lats.append(lat)
            lons.append(lon)
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
                name=_swatch(colour, f"{labels[status]} ({len(items)})"), show=True
            )
            folium.GeoJson(
                collection,
                marker=folium.CircleMarker(radius=7),
                style_function=lambda _f, c=colour: {
                    "color": "#ffffff",
                    "weight": 2,
                    "fill": True,
                    "fillColor": c,
                    "fillOpacity": 0.95,
                },
                popup=folium.GeoJsonPopup(
                    fields=["popup_html"], labels=False, localize=False, max_width=320
                ),
            ).add_to(group)
            group.add_to(m)
            lats += [p.lat for p in items]
            lons += [p.lon for p in items]
    if lats:
        pad = (cell_size_deg or 0) / 2
        _fit(m, [[min(lats) - pad, min(lons) - pad], [max(lats) + pad, max(lons) + pad]])
    else:
        _fit(m, _outline_bounds(outline), (8, 8))
    folium.LayerControl(collapsed=False, position="topright").add_to(m)
    return m


def report_detail_map(
    point: tuple[float, float], exif_points: Sequence[tuple[float, float, str]] = ()
):
    """One report: its point, and where each photo says it was taken (EXIF), joined by a
    dashed line. point: (lon, lat); exif_points: (lon, lat, label)."""
    lon, lat = point
    m = builders.base_map((lat, lon), 17)
    group = folium.FeatureGroup(name=_swatch(REPORT_COLOUR, "Local informado"), show=True)
    folium.CircleMarker(
        location=[lat, lon],
        radius=9,
        color="#ffffff",
        weight=3,
        fill=True,
        fill_color=REPORT_COLOUR,
        fill_opacity=1,
        tooltip="Local informado na denúncia",
    ).add_to(group)
    group.add_to(m)
    lats, lons = [lat], [lon]
    if exif_points:
        exif = folium.FeatureGroup(
            name=_swatch(EXIF_COLOUR, "Local das fotos (EXIF)", "ring"), show=True
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
            lats.append(y)
            lons.append(x)
        exif.add_to(m)
    _fit(m, [[min(lats), min(lons)], [max(lats), max(lons)]], (32, 32))
    folium.LayerControl(collapsed=False, position="topright").add_to(m)
    return m
