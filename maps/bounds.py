"""Where a map opens, and which part of the world a page asks the database for.

Two orders meet here: GeoJSON and PostGIS write (lon, lat) and bounding boxes as
(min_lon, min_lat, max_lon, max_lat); Leaflet writes [lat, lon] and bounds as
[[south, west], [north, east]]. Functions named *_bounds return Leaflet's order, for `fit`;
`window` returns a bounding box, for queries.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import folium

from .base import DEFAULT_CENTRE

Bounds = list[list[float]]  # [[south, west], [north, east]], or any list of [lat, lon]
BBox = tuple[float, float, float, float]  # (min_lon, min_lat, max_lon, max_lat)

# Do not zoom closer than this when fitting a few small facilities (a PEV is ~30 m across).
FIT_MAX_ZOOM = 16
# Facilities and bacias this far (degrees, ~20 km) beyond the municipality are drawn too: a
# legal destination may lie in a neighbouring municipality.
NEIGHBOURS_MARGIN_DEG = 0.2


def bbox_bounds(bbox: Sequence[float]) -> Bounds:
    min_lon, min_lat, max_lon, max_lat = bbox
    return [[min_lat, min_lon], [max_lat, max_lon]]


def outline_bounds(outline: dict | None) -> Bounds | None:
    """The bounds of a municipality's outline (municipality_outline_geojson()), if loaded."""
    if not outline or not outline.get("bbox"):
        return None
    return bbox_bounds(outline["bbox"])


def outline_centre(outline: dict | None) -> tuple[float, float]:
    """The centre (lat, lon) of the outline's box, else near Guaratinguetá."""
    bounds = outline_bounds(outline)
    if not bounds:
        return DEFAULT_CENTRE
    (s, w), (n, e) = bounds
    return ((s + n) / 2, (w + e) / 2)


def feature_bounds(features: Iterable[dict]) -> Bounds | None:
    """The bounds of every coordinate of the features' geometries, any geometry type."""
    lons: list[float] = []
    lats: list[float] = []

    def walk(coords):
        if coords and isinstance(coords[0], (int, float)):
            lons.append(float(coords[0]))
            lats.append(float(coords[1]))
        else:
            for c in coords:
                walk(c)

    for f in features:
        if f.get("geometry"):
            walk(f["geometry"]["coordinates"])
    if not lons:
        return None
    return [[min(lats), min(lons)], [max(lats), max(lons)]]


def points_bounds(points: Iterable[Sequence[float]], margin_deg: float = 0.0) -> Bounds | None:
    """The bounds of (lat, lon) points, `margin_deg` wider on every side."""
    points = list(points)
    if not points:
        return None
    lats, lons = [p[0] for p in points], [p[1] for p in points]
    return [
        [min(lats) - margin_deg, min(lons) - margin_deg],
        [max(lats) + margin_deg, max(lons) + margin_deg],
    ]


def around(lat: float, lon: float, half_side_deg: float) -> Bounds:
    """A square of bounds centred on a point: a point with some context around it."""
    return [[lat - half_side_deg, lon - half_side_deg], [lat + half_side_deg, lon + half_side_deg]]


def expand(bbox: Sequence[float], margin_deg: float) -> BBox:
    min_lon, min_lat, max_lon, max_lat = bbox
    return (min_lon - margin_deg, min_lat - margin_deg, max_lon + margin_deg, max_lat + margin_deg)


def window(outline: dict | None, margin_deg: float = NEIGHBOURS_MARGIN_DEG) -> BBox | None:
    """The outline's bounding box `margin_deg` wider, to ask for the layers a map draws around
    the municipality; None (no limit) when the municipality is not loaded."""
    if not outline or not outline.get("bbox"):
        return None
    return expand(outline["bbox"], margin_deg)


def fit(
    m: folium.Map,
    bounds: Bounds | None,
    padding: tuple[int, int] = (24, 24),
    max_zoom: int | None = FIT_MAX_ZOOM,
    point_margin_deg: float | None = None,
) -> None:
    """Open the map on `bounds` (nothing happens without them). Bounds that are one point
    become a square `point_margin_deg` around it, when given: fitted as they are, Leaflet would
    zoom to max_zoom on the point, with nothing around it to recognise."""
    if not bounds:
        return
    first = bounds[0]
    if point_margin_deg is not None and all(b == first for b in bounds):
        bounds = around(first[0], first[1], point_margin_deg)
    fit_bounds = folium.FitBounds(bounds, padding=padding, max_zoom=max_zoom)
    # Jump, don't fly: the map is created at its centre first, and an animated zoom on every
    # page load is a distraction (and what a screenshot would catch mid-way).
    fit_bounds.options["animate"] = False
    m.add_child(fit_bounds)
