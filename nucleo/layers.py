"""The Núcleo Permanente de Gestão's map: the network, the flows of waste, the alarms.

Plain functions: aggregated data in, folium.Map out. Every layer is bounded by the grid and
the network, never by the number of CTRs or reports, so the page weighs the same at ten
thousand CTRs as at a million.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import folium
from django.utils.html import format_html

from config.br import br_number
from ctr.analytics import Cell, Flow
from maps import bounds, markers
from maps.base import add_layer_control, base_map
from maps.legend import KIND_STYLES, swatch_label
from maps.network import add_outline, anchors, municipality_map
from pev_network.management_layers import LICENSE_STATE_LABELS

from .flows import Fate, MapLine

FLOW_COLOUR = "#4B0082"
OVERDUE_COLOUR = "#B42318"
REPORT_COLOUR = "#E69F00"
NOT_VALID_COLOUR = "#6B7280"

LAYER_FLOWS = "Fluxos de CTR (origem → destino)"

# Applies each feature's own `style` (a flow's width, a cell's radius) in the browser.
PER_FEATURE_STYLE = folium.JsCode(
    "function (feature, layer) { layer.setStyle(feature.properties.style); }"
)
LAYER_OVERDUE = "Origens de CTRs em atraso"
LAYER_DESTINATIONS = "Destinação final (bacia → área → destino)"
LAYER_REPORTS = "Denúncias de descarte irregular"


def _facility_popup(props: dict, admin_url: str) -> str:
    state = props.get("license_state", "none")
    return str(
        format_html(
            '<div class="ctr-popup"><p class="ctr-popup-title">{}</p><dl>'
            "<dt>Tipo</dt><dd>{}</dd><dt>Licença</dt><dd>{}{}</dd>"
            "<dt>Capacidade</dt><dd>{}</dd></dl>"
            '<p><a href="{}">Abrir cadastro</a></p></div>',
            props.get("name", ""),
            props.get("kind_label", ""),
            LICENSE_STATE_LABELS.get(state, state),
            f" (nº {props['license_number']})" if props.get("license_number") else "",
            f"{props['capacity_m3_per_day']} m³/dia" if props.get("capacity_m3_per_day") else "—",
            admin_url.format(id=props["id"]),
        )
    )


def add_facilities_with_state(m: folium.Map, facilities: dict, admin_url: str) -> None:
    """One layer per kind; a facility that may not receive today is drawn grey with a red
    dashed border, and its popup says why."""
    for kind, style in KIND_STYLES.items():
        features = [f for f in facilities.get("features", []) if f["properties"]["kind"] == kind]
        if not features:
            continue
        for f in features:
            f["properties"]["popup_html"] = _facility_popup(f["properties"], admin_url)
        group = folium.FeatureGroup(name=swatch_label(style.colour, style.layer_name))

        def style_for(feature, colour=style.colour):
            valid = feature["properties"].get("license_state") == "valid"
            return {
                "color": colour if valid else OVERDUE_COLOUR,
                "weight": 2 if valid else 3,
                "dashArray": None if valid else "4 3",
                "fillColor": colour if valid else NOT_VALID_COLOUR,
                "fillOpacity": 0.9 if valid else 0.6,
            }

        # The popup lives on the anchor only: one copy per facility, not two.
        polygons = [
            {**f, "properties": {"license_state": f["properties"].get("license_state")}}
            for f in features
        ]
        folium.GeoJson(
            {"type": "FeatureCollection", "features": polygons},
            style_function=style_for,
            interactive=False,
        ).add_to(group)
        markers.circles(anchors({"features": features}), style_for, popup=markers.popup()).add_to(
            group
        )
        group.add_to(m)


# Flows: the origin grid made this many times coarser, and at most this many lines drawn
# (the largest), so that a person can follow each line from its region to its destination.
FLOW_GRID_FACTOR = 4
FLOW_LINES = 15


def aggregate_flows(
    flows: Sequence[Flow], cell: float, factor: int = FLOW_GRID_FACTOR, limit: int = FLOW_LINES
) -> tuple[list[Flow], int, float]:
    """The flows regrouped on a grid `factor` times coarser than `cell` (degrees), one line per
    (region, facility) from the regions' volume-weighted centre, largest first; the first
    `limit` of them, and how many lines and m³ were left out."""
    size = cell * factor
    groups: dict[tuple[int, int, int], list] = {}
    for f in flows:
        key = (math.floor(f.origin_lon / size), math.floor(f.origin_lat / size), f.facility_id)
        g = groups.setdefault(key, [f, 0.0, 0.0, 0.0, 0])
        weight = f.volume_m3 or 0.0
        g[1] += f.origin_lon * weight
        g[2] += f.origin_lat * weight
        g[3] += weight
        g[4] += f.ctrs
    merged = []
    for first, lon_sum, lat_sum, volume, ctrs in groups.values():
        lon, lat = (
            (lon_sum / volume, lat_sum / volume) if volume else (first.origin_lon, first.origin_lat)
        )
        merged.append(
            Flow(lon, lat, first.facility_id, first.facility_name, first.facility_lon,
                 first.facility_lat, volume, ctrs)
        )  # fmt: skip
    merged.sort(key=lambda f: (-f.volume_m3, f.facility_id))
    kept, rest = merged[:limit], merged[limit:]
    return kept, len(rest), sum(f.volume_m3 for f in rest)


def width_for(volume: float, largest: float) -> float:
    """A line's width by its volume: the square root, so that small flows stay visible beside
    large ones."""
    return round(1 + 9 * math.sqrt(volume / largest), 1) if largest else 1.0


def add_flows(m: folium.Map, flows: Sequence[Flow], list_url: str) -> None:
    """Lines from origin cells to facilities, their width by volume (square root, so that
    small flows stay visible beside large ones)."""
    group = folium.FeatureGroup(name=swatch_label(FLOW_COLOUR, LAYER_FLOWS))
    largest = max((f.volume_m3 for f in flows), default=1) or 1
    features = []
    for flow in flows:
        weight = width_for(flow.volume_m3, largest)
        popup = format_html(
            '<div class="ctr-popup"><p class="ctr-popup-title">Para {}</p><dl>'
            "<dt>Volume</dt><dd>{} m³</dd><dt>CTRs</dt><dd>{}</dd></dl>"
            '<p><a href="{}">Ver os CTRs</a></p></div>',
            flow.facility_name,
            br_number(flow.volume_m3, 1),
            flow.ctrs,
            list_url.format(facility=flow.facility_id),
        )
        features.append({
            "type": "Feature",
            "geometry": {"type": "LineString", "coordinates": [
                [round(flow.origin_lon, 6), round(flow.origin_lat, 6)],
                [round(flow.facility_lon, 6), round(flow.facility_lat, 6)]]},
            "properties": {"style": {"weight": weight}, "popup_html": str(popup)},
        })  # fmt: skip
    if features:
        folium.GeoJson(
            {"type": "FeatureCollection", "features": features},
            style_function=lambda _f: {"color": FLOW_COLOUR, "weight": 2, "opacity": 0.55},
            # The width comes from each feature in the browser: a per-feature style in Python
            # would be written out once per feature by folium.
            on_each_feature=PER_FEATURE_STYLE,
            popup=markers.popup(max_width=None),
        ).add_to(group)
    group.add_to(m)


def add_destinations(m: folium.Map, lines: Sequence[MapLine]) -> None:
    """Where each bacia's waste ended (ctr.custody.chain): a line from the bacia through its first
    area to the final destination, in the colour of recycling areas or of landfills, its width
    by volume. Off until the user turns it on: over the CTR flows it would hide them."""
    group = folium.FeatureGroup(
        name=swatch_label(Fate.COLOURS[Fate.RECYCLED], LAYER_DESTINATIONS, "dashed"), show=False
    )
    largest = max((line.volume_m3 for line in lines), default=0)
    features = [
        {
            "type": "Feature",
            "geometry": {"type": "LineString",
                         "coordinates": [[round(x, 6), round(y, 6)] for x, y in line.coordinates]},
            "properties": {
                "style": {"weight": width_for(line.volume_m3, largest),
                          "color": Fate.COLOURS[line.fate]},
                "popup_html": str(format_html(
                    '<div class="ctr-popup"><p class="ctr-popup-title">{}</p><dl>'
                    "<dt>Volume</dt><dd>{} m³</dd><dt>Destinação</dt><dd>{}</dd></dl></div>",
                    line.route, br_number(line.volume_m3, 1), Fate.LABELS[line.fate])),
            },
        }
        for line in lines
    ]  # fmt: skip
    if features:
        folium.GeoJson(
            {"type": "FeatureCollection", "features": features},
            style_function=lambda _f: {"weight": 2, "opacity": 0.7},
            on_each_feature=PER_FEATURE_STYLE,
            popup=markers.popup(max_width=None),
        ).add_to(group)
    group.add_to(m)


def _cell_key(cell: Cell) -> tuple[float, float]:
    return (round(cell.lon, 5), round(cell.lat, 5))


def add_cells(
    m: folium.Map,
    cells: Sequence[Cell],
    name: str,
    colour: str,
    what: str,
    also: dict[tuple[float, float], str] | None = None,
) -> None:
    """Counts per grid cell as circles whose area grows with the count. `also`: what else the
    same cell holds (by rounded lon, lat), told in the popup too, since a circle drawn above
    another in the same cell takes the tap."""
    also = also or {}
    group = folium.FeatureGroup(name=swatch_label(colour, name, "ring"))
    largest = max((c.count for c in cells), default=1) or 1
    features = [
        {
            "type": "Feature",
            "geometry": {"type": "Point", "coordinates": [round(c.lon, 6), round(c.lat, 6)]},
            "properties": {
                "style": {"radius": round(4 + 16 * math.sqrt(c.count / largest), 1)},
                "label": f"{c.count} {what}"
                + (f"; {also[_cell_key(c)]}" if _cell_key(c) in also else ""),
            },
        }
        for c in cells
    ]
    if features:
        markers.circles(
            {"type": "FeatureCollection", "features": features},
            # Filled (folium's CircleMarker is not, by default): a tap anywhere inside the
            # circle is on the circle, not on a flow line or a bacia under it.
            lambda _f: {
                "color": colour,
                "weight": 1.5,
                "fill": True,
                "fillColor": colour,
                "fillOpacity": 0.25,
            },
            radius=6,
            on_each_feature=PER_FEATURE_STYLE,
            tooltip=markers.tooltip("label"),
            # Its own popup: a tap on a circle must tell about the circle, not open the popup
            # of a flow line under it (a phone has no hover for the tooltip).
            popup=markers.popup("label", max_width=None),
        ).add_to(group)
    group.add_to(m)


# The active worksites: by the state of their PGRCC, and, in a second layer
# the user switches on, the suspect ones by their first alert. A dark border tells them from
# the facilities' white-bordered circles.
LAYER_WORKSITES = "Obras ativas por situação do PGRCC"
LAYER_SUSPECT_WORKSITES = "Obras ativas com alerta"
WORKSITE_BORDER = "#1F2937"
PLAN_COLOURS = {
    "none": "#FFFFFF",
    "draft": "#F0E442",
    "submitted": "#56B4E9",
    "changes": "#E69F00",
    "approved": "#009E73",
    "superseded": "#009E73",
}
# The first alert a worksite has, in this order, gives its colour (the popup lists them all).
ALERT_COLOURS = {
    "low_volume": "#5B21B6",
    "overdue": "#9F1239",
    "idle": "#6B7280",
}


def _worksite_features(worksites: Sequence, colour_of) -> dict:
    return {
        "type": "FeatureCollection",
        "features": [
            {
                "type": "Feature",
                "geometry": {"type": "Point", "coordinates": [round(w.lon, 6), round(w.lat, 6)]},
                "properties": {"colour": colour_of(w), "popup_html": w.popup_html},
            }
            for w in worksites
        ],
    }


def _worksite_style(feature) -> dict:
    return {
        "color": WORKSITE_BORDER,
        "weight": 2,
        "fill": True,
        "fillColor": feature["properties"]["colour"],
        "fillOpacity": 0.95,
    }


def first_alert(reasons: Sequence[str]) -> str | None:
    return next((r for r in ALERT_COLOURS if r in reasons), None)


def add_worksites(m: folium.Map, worksites: Sequence) -> None:
    """Two layers of the same active worksites (nucleo.worksites.MapWorksite): coloured by the
    plan's state (on), and only those with an alert, coloured by it (off until switched on:
    drawn over the first, it would hide it)."""
    # Rings in the layer list: the worksites' circles have a border of their own.
    by_plan = folium.FeatureGroup(name=swatch_label(WORKSITE_BORDER, LAYER_WORKSITES, "ring"))
    flagged = [w for w in worksites if first_alert(w.reasons)]
    by_alert = folium.FeatureGroup(
        name=swatch_label(ALERT_COLOURS["low_volume"], LAYER_SUSPECT_WORKSITES, "ring"),
        show=False,
    )
    for group, listed, colour_of in (
        (by_plan, worksites, lambda w: PLAN_COLOURS.get(w.plan_status, "#FFFFFF")),
        (by_alert, flagged, lambda w: ALERT_COLOURS[first_alert(w.reasons)]),
    ):
        if listed:
            # A handful of styles (one per colour): folium writes each once, not per point.
            markers.circles(
                _worksite_features(listed, colour_of),
                _worksite_style,
                radius=6,
                popup=markers.popup(),
            ).add_to(group)
        group.add_to(m)


def nucleo_map(
    facilities: dict,
    basins: dict | None,
    outline: dict | None,
    flows: Sequence[Flow],
    overdue: Sequence[Cell],
    reports: Sequence[Cell],
    facility_admin_url: str,
    ctr_list_url: str,
    tile_url: str | None = None,
    destinations: Sequence[MapLine] = (),
    worksites: Sequence = (),
    away: Sequence[Cell] = (),
    implausible: Sequence[Cell] = (),
) -> folium.Map:
    """The management map. URLs are templates: facility_admin_url with {id}, ctr_list_url
    with {facility}."""
    m = municipality_map(outline, basins, tile_url)
    add_destinations(m, destinations)
    add_flows(m, flows, ctr_list_url)
    add_facilities_with_state(m, facilities, facility_admin_url)
    add_worksites(m, worksites)
    late = {_cell_key(c): f"{c.count} CTR(s) em atraso" for c in overdue}
    reported = {_cell_key(c): f"{c.count} denúncia(s)" for c in reports}
    add_cells(m, overdue, LAYER_OVERDUE, OVERDUE_COLOUR, "CTR(s) em atraso", reported)
    add_cells(m, reports, LAYER_REPORTS, REPORT_COLOUR, "denúncia(s)", late)
    add_reception_findings(m, away, implausible)
    # Open on where things happen (flows, alarms), else on the municipality.
    points = [(f.origin_lat, f.origin_lon) for f in flows]
    points += [(f.facility_lat, f.facility_lon) for f in flows]
    points += [(c.lat, c.lon) for c in (*overdue, *reports)]
    points += [(w.lat, w.lon) for w in worksites]
    points += [(c.lat, c.lon) for c in (*away, *implausible)]
    bounds.fit(m, bounds.points_bounds(points) or bounds.outline_bounds(outline))
    add_layer_control(m)
    return m


# The reception's findings (ctr.plausibility): where receptions were
# confirmed away from their facility (at the device's location), and the origins of trips too
# fast or too slow for their distance: alarms for monitoring, as the overdue CTRs' origins.
LAYER_AWAY = "Recebimentos confirmados longe da área"
LAYER_IMPLAUSIBLE = "Origens de viagens rápidas ou lentas demais"
AWAY_COLOUR = "#C2410C"
IMPLAUSIBLE_COLOUR = "#5B21B6"


def add_reception_findings(
    m: folium.Map, away: Sequence[Cell], implausible: Sequence[Cell]
) -> None:
    """Two layers of counts per grid cell, drawn like the overdue CTRs' origins."""
    add_cells(m, away, LAYER_AWAY, AWAY_COLOUR, "recebimento(s) longe da área")
    add_cells(m, implausible, LAYER_IMPLAUSIBLE, IMPLAUSIBLE_COLOUR, "viagem(ns) implausível(is)")


# Sequential blues (ColorBrewer "Blues", 5 classes): light = little, dark = much.
CHOROPLETH_COLOURS = ["#eff3ff", "#bdd7e7", "#6baed6", "#3182bd", "#08519c"]


def choropleth_breaks(values: Sequence[float], classes: int = 5) -> list[float]:
    """Upper bounds of equal-count classes (quantiles), so that every colour is used."""
    ordered = sorted(v for v in values if v > 0)
    if not ordered:
        return []
    return [ordered[min(len(ordered) - 1, math.ceil(len(ordered) * (i + 1) / classes) - 1)]
            for i in range(classes)]  # fmt: skip


def colour_for(value: float, breaks: Sequence[float]) -> str:
    if value <= 0 or not breaks:
        return "#ffffff"
    for colour, bound in zip(CHOROPLETH_COLOURS, breaks, strict=False):
        if value <= bound:
            return colour
    return CHOROPLETH_COLOURS[-1]


def basin_choropleth(basins: dict, volumes: dict[int, tuple[float, int]], outline: dict | None):
    """Bacias coloured by the volume that left them in the period (quantile classes)."""
    m = base_map()
    if outline:
        add_outline(m, outline)
    breaks = choropleth_breaks([v for v, _ in volumes.values()])
    features = []
    for feature in basins.get("features", []):
        volume, ctrs = volumes.get(feature["id"], (0.0, 0))
        props = feature["properties"]
        label = f"{props['name']}: {_br_volume(volume)} m³ em {ctrs} CTR(s)"
        features.append(
            {**feature, "properties": {"label": label, "colour": colour_for(volume, breaks)}}
        )
    if features:
        folium.GeoJson(
            {"type": "FeatureCollection", "features": features},
            name="Volume por bacia",
            style_function=lambda f: {"color": "#1F2937", "weight": 1,
                                      "fillColor": f["properties"]["colour"], "fillOpacity": 0.8},
            tooltip=markers.tooltip("label"),
        ).add_to(m)  # fmt: skip
        bounds.fit(m, bounds.feature_bounds(features), padding=(8, 8), max_zoom=None)
    return m, breaks


def _br_volume(value: float) -> str:
    return br_number(value, 1)
