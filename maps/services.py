"""Maps that other apps' pages embed, built here from the network's layers: cross-app calls
come through this module (a page asks for a map, maps/ queries the layers and builds it)."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from django.utils import timezone

from pev_network import public_layers

from . import bounds, network
from .base import MapParts, render_parts
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
