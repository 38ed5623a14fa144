"""Maps that other apps' pages embed, built here from the network's layers: cross-app calls
come through this module (a page asks for a map, maps/ queries the layers and builds it)."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

import folium
from django.utils import timezone

from pev_network import public_layers

from . import bounds, markers, network
from .base import MapParts, base_map, render_parts
from .legend import kind_legend


@dataclass(frozen=True)
class DestinationMap:
    """The CTR form's map, rendered, with what the page shows beside it."""

    parts: MapParts
    # The facilities on the map as a list (the map's text alternative): id, name, kind_label,
    # classes and anchor.
    facilities: list[dict]
    # A point inside each facility's area ([lon, lat]) by id: choosing the facility, in the
    # select or in its popup, puts the discharge point there.
    facility_points: dict[str, list[float]]
    legend: list[dict]


def ctr_form_map(ibge_code: str, day: datetime.date | None = None) -> DestinationMap:
    """The licensed network around the transporter's municipality (`ibge_code`) on `day`
    (today by default), for clicking the origin and the destination: a facility's popup
    offers "Usar como destino"."""
    outline = public_layers.municipality_outline_geojson(ibge_code)
    facilities = public_layers.licensed_facilities_geojson(
        day or timezone.localdate(), bounds.window(outline)
    )
    m = network.public_network_map(facilities, None, outline, destination_picker=True)
    listed = [
        {
            "id": f["properties"]["id"],
            "name": f["properties"]["name"],
            "kind_label": f["properties"]["kind_label"],
            "classes": network.class_labels(f["properties"]["accepted_classes"]),
            "anchor": f["properties"].get("anchor"),
        }
        for f in facilities["features"]
    ]
    return DestinationMap(
        parts=render_parts(m),
        facilities=listed,
        facility_points={str(f["id"]): f["anchor"] for f in listed if f["anchor"]},
        legend=kind_legend(),
    )


ORIGIN_COLOUR = "#111827"  # as the issue form's origin pin
DISCHARGE_COLOUR = "#facc15"  # as the issue form's destination pin


def ctr_route_map(
    origin: tuple[float, float] | None,
    discharge: tuple[float, float] | None,
    facility_area: dict | None = None,
    facility_colour: str = "#0f766e",
) -> MapParts:
    """A CTR's page: its origin and its discharge point ((lon, lat)),
    the line between them and the destination facility's area (GeoJSON), fitted to them."""
    m = base_map()
    view: list[list[float]] = []
    if facility_area:
        folium.GeoJson(
            facility_area,
            style_function=lambda _f: {
                "color": facility_colour,
                "weight": 2,
                "fillColor": facility_colour,
                "fillOpacity": 0.3,
            },
            interactive=False,
        ).add_to(m)
        view += bounds.feature_bounds([{"geometry": facility_area}]) or []
    ends = [(origin, ORIGIN_COLOUR, "Origem"), (discharge, DISCHARGE_COLOUR, "Ponto de descarga")]
    located = [[p[1], p[0]] for p, _c, _t in ends if p]
    if len(located) == 2:
        folium.PolyLine(located, color="#111827", weight=2, dash_array="6 6").add_to(m)
    for point, colour, label in ends:
        if point:
            markers.spot([point[1], point[0]], colour, label).add_to(m)
    bounds.fit(m, bounds.points_bounds(view + located), padding=(32, 32), point_margin_deg=0.005)
    return render_parts(m)
