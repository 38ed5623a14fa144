"""The worksite's maps: the one its registration form draws on (the municipality, the worksite
as registered) and the one its page shows (the worksite and the origins of its CTRs). Built
from the maps library (docs/architecture.md, "Adding a map layer")."""

from __future__ import annotations

import json

import folium
from django.utils.html import format_html

from ctr.models import Worksite
from maps import bounds, markers
from maps.base import MapParts, add_layer_control, render_parts
from maps.legend import swatch_label
from maps.network import municipality_map
from pev_network.public_layers import municipality_outline_geojson

# Okabe-Ito, as the network's colours: the worksite blue, the origins black, those the rule
# flagged vermilion.
WORKSITE_COLOUR = "#0072B2"
ORIGIN_COLOUR = "#111827"
OUTSIDE_COLOUR = "#D55E00"
LAYER_WORKSITE = "Obra cadastrada"
LAYER_ORIGINS = "Origens dos CTRs da obra"
LAYER_OUTSIDE = "Origens fora da obra (aviso)"
WORKSITE_MAX_ZOOM = 18
# The finding of ctr.rules that marks an origin outside the worksite.
OUTSIDE_CODE = "ORIGIN_OUTSIDE_WORKSITE"


def worksite_feature(worksite: Worksite) -> dict:
    geometry = worksite.area if worksite.area is not None else worksite.location
    return {
        "type": "Feature",
        "geometry": json.loads(geometry.geojson),
        "properties": {"label": worksite.address},
    }


def add_worksite(m: folium.Map, worksite: Worksite) -> bounds.Bounds:
    """The worksite: its drawn area, or its point. Returns the bounds to fit."""
    group = folium.FeatureGroup(name=swatch_label(WORKSITE_COLOUR, LAYER_WORKSITE), show=True)
    feature = worksite_feature(worksite)
    if worksite.area is not None:
        folium.GeoJson(
            feature,
            style_function=lambda _f: {
                "color": WORKSITE_COLOUR,
                "weight": 3,
                "fillColor": WORKSITE_COLOUR,
                "fillOpacity": 0.2,
            },
            tooltip=markers.tooltip("label"),
        ).add_to(group)
    else:
        location = worksite.location
        markers.spot([location.y, location.x], WORKSITE_COLOUR, worksite.address).add_to(group)
    group.add_to(m)
    return bounds.feature_bounds([feature]) or []


def add_origins(m: folium.Map, ctrs) -> bounds.Bounds:
    """The origin of each CTR: black, or vermilion when the rule found it outside the
    worksite; a tooltip with the number and the day. Returns their bounds."""
    inside, outside = [], []
    for ctr in ctrs:
        flagged = any(f.get("code") == OUTSIDE_CODE for f in ctr.findings or [])
        (outside if flagged else inside).append(
            {
                "type": "Feature",
                "geometry": {"type": "Point", "coordinates": [ctr.origin.x, ctr.origin.y]},
                "properties": {
                    "label": str(
                        format_html("{} — {}", ctr.number, f"{ctr.transport_date:%d/%m/%Y}")
                    )
                },
            }
        )
    for features, colour, name in (
        (inside, ORIGIN_COLOUR, LAYER_ORIGINS),
        (outside, OUTSIDE_COLOUR, LAYER_OUTSIDE),
    ):
        if not features:
            continue
        group = folium.FeatureGroup(name=swatch_label(colour, name), show=True)
        markers.circles(
            {"type": "FeatureCollection", "features": features},
            lambda _f, c=colour: markers.dot_style(c),
            radius=6,
            tooltip=markers.tooltip("label"),
        ).add_to(group)
        group.add_to(m)
    return bounds.feature_bounds(inside + outside) or []


def worksite_map(worksite: Worksite, ctrs) -> MapParts:
    """The worksite's page: its municipality, the worksite and its CTRs' origins."""
    outline = _outline(worksite)
    m = municipality_map(outline)
    view = add_worksite(m, worksite) + add_origins(m, ctrs)
    # Closer than the network's maps: a worksite is a lot of a few dozen metres.
    bounds.fit(m, view, padding=(32, 32), max_zoom=WORKSITE_MAX_ZOOM, point_margin_deg=0.003)
    add_layer_control(m)
    return render_parts(m)


def form_map(worksite: Worksite | None, ibge_code: str) -> MapParts:
    """The map of the registration form: the municipality (the worksite's, else `ibge_code`),
    opened on the worksite when it has a location. The page's script draws on it."""
    outline = _outline(worksite) if worksite is not None else None
    outline = outline or municipality_outline_geojson(ibge_code)
    m = municipality_map(outline)
    if worksite is not None:
        feature = worksite_feature(worksite)
        bounds.fit(m, bounds.feature_bounds([feature]), padding=(48, 48), point_margin_deg=0.003)
    else:
        bounds.fit(m, bounds.outline_bounds(outline), padding=(8, 8))
    return render_parts(m)


def _outline(worksite: Worksite) -> dict | None:
    if worksite.municipality_id is None:
        return None
    return municipality_outline_geojson(worksite.municipality.ibge_code)
