"""folium layers of the hotspots and the suspects: plain functions, data in, map out.

`add_hotspots(m, collection)` also serves the Núcleo's map (nucleo.views): it adds one
layer and keeps the map's layer control last, so that it lists the new layer too.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Sequence

import folium
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from config.br import br_date
from maps import bounds, markers
from maps.base import add_layer_control, base_map, keep_control_last
from maps.legend import swatch_label
from maps.network import municipality_map

from . import hotspots

LAYER_HOTSPOTS = "Pontos críticos de descarte"
LAYER_SUSPECTS = "Origens e destinos dos CTRs suspeitos"
# Recurring after a cleaning: the gravest. Both stay distinct for colour-blind readers
# (dark red filled and solid border / orange with a dashed border).
RECURRING_COLOUR = "#9F1239"
HOTSPOT_COLOUR = "#E69F00"
SPOT_COLOUR = "#111827"
ORIGIN_COLOUR = "#0072B2"
DESTINATION_COLOUR = "#009E73"
RADIUS_COLOUR = "#6B7280"
# Closer than the network's maps: a hotspot is a few metres of kerb.
HOTSPOT_MAX_ZOOM = 17


def _when(value: str | None) -> str:
    if not value:
        return "—"
    return br_date(timezone.localtime(datetime.datetime.fromisoformat(value)))


def hotspot_popup_html(props: dict, suspects_url: str | None = None) -> str:
    rows = [
        ("Denúncias", props["reports"]),
        ("Primeira", _when(props.get("first_report_at"))),
        ("Última", _when(props.get("last_report_at"))),
        ("Limpezas", props.get("cleaned", 0)),
        ("Denúncias após limpeza", props.get("recurrence_after_cleaning", 0)),
        ("Bacia", (props.get("basin") or {}).get("name") or "fora das bacias"),
    ]
    link = (
        format_html('<p><a href="{}">Ver CTRs suspeitos</a></p>', suspects_url)
        if suspects_url
        else ""
    )
    return str(
        format_html(
            '<div class="ctr-popup"><p class="ctr-popup-title">Ponto crítico: {} denúncia(s)</p>'
            "<dl>{}</dl>{}</div>",
            props["reports"],
            format_html_join("", "<dt>{}</dt><dd>{}</dd>", rows),
            link,
        )
    )


def add_hotspots(
    m: folium.Map,
    collection: dict,
    suspects_url: str | None = None,
    name: str = LAYER_HOTSPOTS,
) -> None:
    """The hotspots' hulls, coloured by recurrence after cleaning, and a circle at the centre
    of each (a hull a few metres wide vanishes at city zoom). `collection` is
    hotspots_geojson(); `suspects_url` a template with {report} (the last report's id)."""
    features = []
    centres = []
    for feature in collection.get("features", []):
        props = feature["properties"]
        url = suspects_url.format(report=props["last_report"]["id"]) if suspects_url else None
        recurring = props.get("recurrence_after_cleaning", 0) > 0
        small = {
            "reports": props["reports"],
            "recurring": recurring,
            "label": f"{props['reports']} denúncia(s)"
            + (f", {props['recurrence_after_cleaning']} após limpeza" if recurring else ""),
            "popup_html": hotspot_popup_html(props, url),
        }
        features.append({**feature, "properties": small})
        centres.append(
            {
                "type": "Feature",
                "geometry": {"type": "Point", "coordinates": props["centre"]},
                "properties": small,
            }
        )
    group = folium.FeatureGroup(name=swatch_label(RECURRING_COLOUR, name), show=True)
    if features:

        def style(feature):
            recurring = feature["properties"]["recurring"]
            colour = RECURRING_COLOUR if recurring else HOTSPOT_COLOUR
            return {
                "color": colour,
                "weight": 3 if recurring else 2,
                "dashArray": None if recurring else "5 4",
                "fillColor": colour,
                "fillOpacity": 0.35,
            }

        folium.GeoJson(
            {"type": "FeatureCollection", "features": features},
            style_function=style,
            popup=markers.popup(),
            tooltip=markers.tooltip("label"),
        ).add_to(group)
        largest = max(f["properties"]["reports"] for f in features)

        def centre_style(feature):
            props = feature["properties"]
            return {
                "radius": round(4 + 8 * (props["reports"] / largest) ** 0.5, 1),
                "color": "#ffffff",
                "weight": 1.5,
                "fillColor": RECURRING_COLOUR if props["recurring"] else HOTSPOT_COLOUR,
                "fillOpacity": 0.8,
            }

        markers.circles(
            {"type": "FeatureCollection", "features": centres},
            centre_style,
            radius=6,
            popup=markers.popup(),
            tooltip=markers.tooltip("label"),
        ).add_to(group)
    group.add_to(m)
    keep_control_last(m)


def hotspots_collection(
    municipality=None,
    since: datetime.date | None = None,
    until: datetime.date | None = None,
    eps_m: float = hotspots.DEFAULT_EPS_M,
    min_points: int = hotspots.DEFAULT_MIN_POINTS,
    limit: int = hotspots.DEFAULT_LIMIT,
    with_report_ids: bool = True,
) -> dict:
    """The hotspots of a municipality (a Municipality, or None for all) for a map. A map that
    only draws them passes with_report_ids=False: a two-year hotspot of a big city lists
    thousands of ids, a megabyte of page for nothing drawn."""
    query = hotspots.HotspotQuery(
        eps_m=eps_m,
        min_points=min_points,
        since=since,
        until=until,
        municipality_id=municipality.pk if municipality else None,
        limit=limit,
    )
    try:
        collection = hotspots.hotspots_geojson(query)
    except hotspots.TooCostly:
        return {"type": "FeatureCollection", "features": []}
    if not with_report_ids:
        for feature in collection["features"]:
            feature["properties"].pop("report_ids", None)
    return collection


def hotspots_map(
    collection: dict,
    outline: dict | None = None,
    basins: dict | None = None,
    suspects_url: str | None = None,
    tile_url: str | None = None,
) -> folium.Map:
    """The fiscalization's map of hotspots: the municipality, its bacias and the hulls; it
    opens on the hotspots, else on the municipality."""
    m = municipality_map(outline, basins, tile_url)
    add_hotspots(m, collection, suspects_url)
    view = bounds.feature_bounds(collection.get("features", [])) or bounds.outline_bounds(outline)
    bounds.fit(m, view, max_zoom=HOTSPOT_MAX_ZOOM)
    add_layer_control(m)
    return m


def suspects_map(
    spot: Sequence[float],
    radius_km: float,
    rows: Sequence[dict],
    hull: dict | None = None,
    tile_url: str | None = None,
) -> folium.Map:
    """The spot (lon, lat), the search radius, and each suspect CTR as a dashed line from its
    origin (blue) to its declared destination (green). `rows`: dicts with number, origin,
    destination ([lon, lat]) and label. `hull`: the hotspot's polygon, if any."""
    lon, lat = float(spot[0]), float(spot[1])
    m = base_map((lat, lon), 14, tile_url=tile_url)
    folium.Circle(
        location=[lat, lon],
        radius=radius_km * 1000,
        color=RADIUS_COLOUR,
        weight=1.5,
        dash_array="6 4",
        fill=True,
        fill_opacity=0.04,
        interactive=False,
    ).add_to(m)
    if hull:
        folium.GeoJson(
            hull,
            style_function=lambda _f: {
                "color": RECURRING_COLOUR,
                "weight": 2,
                "fillColor": RECURRING_COLOUR,
                "fillOpacity": 0.3,
            },
            tooltip="Ponto crítico",
        ).add_to(m)
    group = folium.FeatureGroup(name=swatch_label(ORIGIN_COLOUR, LAYER_SUSPECTS), show=True)
    view = [(lat, lon)]
    for row in rows:
        (olon, olat), (dlon, dlat) = row["origin"], row["destination"]
        folium.PolyLine(
            [[olat, olon], [dlat, dlon]],
            color=ORIGIN_COLOUR,
            weight=1.5,
            opacity=0.6,
            dash_array="4 4",
            tooltip=row["label"],
        ).add_to(group)
        markers.dot([olat, olon], ORIGIN_COLOUR, f"Origem — {row['label']}").add_to(group)
        markers.dot(
            [dlat, dlon], DESTINATION_COLOUR, f"Destino declarado — {row['label']}", radius=5
        ).add_to(group)
        view += [(olat, olon), (dlat, dlon)]
    group.add_to(m)
    markers.spot([lat, lon], SPOT_COLOUR, "Local da denúncia").add_to(m)
    # The radius must show whole: fit to its box as well as to the suspects.
    dlat = radius_km / 111.32
    dlon = dlat / max(math.cos(math.radians(lat)), 0.01)
    view += [(lat + dlat, lon + dlon), (lat - dlat, lon - dlon)]
    bounds.fit(m, bounds.points_bounds(view), padding=(16, 16), max_zoom=HOTSPOT_MAX_ZOOM)
    return m
