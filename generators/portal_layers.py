"""The generator's map of its CTRs: each load as a line from its origin to where it was
discharged, coloured by its status, one layer per status (the layer control doubles as the
legend and lets the generator hide, say, the cancelled ones), and the destination facilities.
Data in, folium map out, built from the maps library (docs/architecture.md, "Adding a map
layer")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import folium
from django.utils.html import format_html

from config.br import br_date, br_number
from ctr.models import CTRStatus
from maps import bounds, markers
from maps.base import add_layer_control
from maps.legend import swatch_label
from maps.network import municipality_map

# Okabe-Ito blue, green and vermilion (told apart with the common colour-vision deficiencies)
# and a grey for what no longer counts, with the cancelled line dashed as well.
STATUS_STYLES = {
    CTRStatus.ISSUED: ("#0072B2", "solid"),
    CTRStatus.RECEIVED: ("#009E73", "solid"),
    CTRStatus.REFUSED: ("#D55E00", "solid"),
    CTRStatus.CANCELLED: ("#6B7280", "dashed"),
}
DESTINATION_COLOUR = "#111827"
LAYER_DESTINATIONS = "Áreas de destino"


@dataclass(frozen=True)
class MapCTR:
    """What the map draws of one CTR: (lon, lat) points, as GeoJSON writes them."""

    number: str
    status: str
    transport_date: object
    origin: tuple[float, float]
    destination: tuple[float, float]
    facility: str
    volume_m3: object
    url: str


def _popup(ctr: MapCTR) -> str:
    return str(
        format_html(
            '<div class="ctr-popup"><p class="ctr-popup-title">{}</p><dl>'
            "<dt>Situação</dt><dd>{}</dd><dt>Transporte</dt><dd>{}</dd>"
            "<dt>Destino</dt><dd>{}</dd><dt>Volume</dt><dd>{} m³</dd></dl>"
            '<p><a href="{}">Ver o CTR</a></p></div>',
            ctr.number,
            CTRStatus(ctr.status).label,
            br_date(ctr.transport_date),
            ctr.facility,
            br_number(ctr.volume_m3),
            ctr.url,
        )
    )


def _point(lon_lat: tuple[float, float]) -> list[float]:
    return [round(lon_lat[0], 6), round(lon_lat[1], 6)]


def add_ctrs(m: folium.Map, ctrs: Sequence[MapCTR]) -> None:
    """One layer per status with CTRs: the load's line and a dot at its origin, both opening
    the CTR's popup (a phone has no hover)."""
    for status, (colour, line_style) in STATUS_STYLES.items():
        own = [ctr for ctr in ctrs if ctr.status == status]
        if not own:
            continue
        label = f"{CTRStatus(status).label} ({len(own)})"
        group = folium.FeatureGroup(name=swatch_label(colour, label, line_style))
        lines = [
            {
                "type": "Feature",
                "geometry": {
                    "type": "LineString",
                    "coordinates": [_point(ctr.origin), _point(ctr.destination)],
                },
                "properties": {"popup_html": _popup(ctr)},
            }
            for ctr in own
        ]
        folium.GeoJson(
            {"type": "FeatureCollection", "features": lines},
            style_function=lambda _f, colour=colour, dashed=line_style == "dashed": {
                "color": colour,
                "weight": 3,
                "opacity": 0.8,
                "dashArray": "6 5" if dashed else None,
            },
            popup=markers.popup(),
        ).add_to(group)
        origins = [
            {
                "type": "Feature",
                "geometry": {"type": "Point", "coordinates": _point(ctr.origin)},
                "properties": {"popup_html": _popup(ctr)},
            }
            for ctr in own
        ]
        markers.circles(
            {"type": "FeatureCollection", "features": origins},
            lambda _f, colour=colour: markers.dot_style(colour),
            popup=markers.popup(),
        ).add_to(group)
        group.add_to(m)


def add_destinations(m: folium.Map, ctrs: Sequence[MapCTR]) -> None:
    """Where the loads were discharged: one dot per facility, named, with its load count."""
    per_facility: dict[str, list[MapCTR]] = {}
    for ctr in ctrs:
        per_facility.setdefault(ctr.facility, []).append(ctr)
    features = [
        {
            "type": "Feature",
            "geometry": {"type": "Point", "coordinates": _point(loads[0].destination)},
            "properties": {"label": f"{name}: {len(loads)} CTR(s)"},
        }
        for name, loads in sorted(per_facility.items())
    ]
    if not features:
        return
    group = folium.FeatureGroup(name=swatch_label(DESTINATION_COLOUR, LAYER_DESTINATIONS))
    markers.circles(
        {"type": "FeatureCollection", "features": features},
        lambda _f: markers.dot_style(DESTINATION_COLOUR),
        radius=6,
        tooltip=markers.tooltip("label"),
        popup=markers.popup("label"),
    ).add_to(group)
    group.add_to(m)


def generator_map(ctrs: Sequence[MapCTR], outline: dict | None) -> folium.Map:
    """The generator's CTRs over its municipality (`outline`, or None when not loaded); it
    opens on the loads, else on the municipality."""
    m = municipality_map(outline)
    add_destinations(m, ctrs)
    add_ctrs(m, ctrs)
    points = [(lat, lon) for ctr in ctrs for lon, lat in (ctr.origin, ctr.destination)]
    # A margin of a third of the loads' extent (at least ~200 m) on every side: a destination
    # at the corner of the fitted box would sit under the layer list, top right.
    # No load yet: no extent (the map opens on the municipality).
    span = (
        max(max(p[i] for p in points) - min(p[i] for p in points) for i in (0, 1)) if points else 0
    )
    bounds.fit(
        m,
        bounds.points_bounds(points, margin_deg=max(0.002, span / 3))
        or bounds.outline_bounds(outline),
    )
    add_layer_control(m)
    return m
