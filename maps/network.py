"""The licensed receiving network on a map: the municipal outline, the bacias, the facilities
by kind, a search for the nearest legal destinations, and the public map that puts them
together. Plain functions: GeoJSON dicts in, folium layers and maps out (maps.base says why
only plain-Leaflet features)."""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Sequence

import folium
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from folium.utilities import JsCode

from pev_network.models import WasteClass

from . import bounds, markers
from .base import DEFAULT_ZOOM, LocalAssetsMap, add_layer_control, base_map
from .legend import BASIN_STYLE, KIND_STYLES, swatch_label

OUTLINE_COLOUR = "#1F2937"
SEARCH_POINT_COLOUR = "#111827"
RESULT_RING_COLOUR = "#111827"
SEARCH_LAYER_NAME = "Resultado da busca"
RANK_TOOLTIP_JS = """function (feature, layer) {
    layer.bindTooltip(String(feature.properties.rank), {
        permanent: true, direction: "top", offset: [0, -12], className: "ctr-rank"
    });
}"""


# Short pt-BR names of the waste classes for lists and popups; the full definitions
# (WasteClass labels) are long sentences.
SHORT_CLASS_LABELS = {
    WasteClass.A: "Classe A (entulho: concreto, tijolo, solo)",
    WasteClass.B: "Classe B (recicláveis)",
    WasteClass.C: "Classe C (não recicláveis)",
    WasteClass.D: "Classe D (perigosos)",
    WasteClass.VOLUMOSO: "Volumosos (móveis, podas)",
}


def class_labels(codes: Iterable[str]) -> list[str]:
    full = dict(WasteClass.choices)
    return [SHORT_CLASS_LABELS.get(code) or full.get(code, code) for code in codes]


# --- popups (escaped here: GeoJsonPopup puts the property into the page as HTML) ---------


def _format_date(value: str | None) -> str:
    if not value:
        return ""
    return datetime.date.fromisoformat(value).strftime("%d/%m/%Y")


def license_text(props: dict) -> str:
    """'nº 123/2024 (CETESB), válida até 31/12/2026' in pt-BR."""
    if not props.get("license_number"):
        return "sem licença válida"
    text = f"nº {props['license_number']}"
    if props.get("license_issuer"):
        text += f" ({props['license_issuer']})"
    until = _format_date(props.get("license_valid_until"))
    return text + (f", válida até {until}" if until else ", sem data de término")


def facility_popup_html(props: dict, destination_button: bool = False) -> SafeString:
    """The facility's name, kind, license and classes; with destination_button, a button
    "Usar como destino" (the CTR form's script selects the facility and puts the discharge
    point at its `anchor`, a point inside its area)."""
    rows = [
        ("Tipo", props.get("kind_label") or props.get("kind") or ""),
        ("Licença", license_text(props)),
        ("Recebe", "; ".join(class_labels(props.get("accepted_classes") or [])) or "—"),
    ]
    if props.get("operator"):
        rows.append(("Operador", props["operator"]))
    if props.get("address"):
        rows.append(("Endereço", props["address"]))
    button = ""
    if destination_button and props.get("id") is not None and props.get("anchor"):
        button = format_html(
            '<p class="ctr-popup-action"><button type="button" class="button ctr-use-destination"'
            ' data-facility="{}">Usar como destino</button></p>',
            props["id"],
        )
    return format_html(
        '<div class="ctr-popup"><p class="ctr-popup-title">{}</p>{}<dl>{}</dl></div>',
        props.get("name", ""),
        button,
        format_html_join("", "<dt>{}</dt><dd>{}</dd>", rows),
    )


def basin_popup_html(props: dict) -> SafeString:
    if props.get("served_by"):
        served = props["served_by"]
        if not props.get("served_by_licensed"):
            served += " (sem licença válida hoje)"
    else:
        served = "nenhum PEV definido"
    return format_html(
        '<div class="ctr-popup"><p class="ctr-popup-title">Bacia de captação: {}</p>'
        "<dl><dt>PEV que atende</dt><dd>{}</dd></dl></div>",
        props.get("name", ""),
        served,
    )


def result_popup_html(props: dict) -> SafeString:
    return format_html(
        '<div class="ctr-popup"><p class="ctr-popup-title">{}. {}</p>'
        "<dl><dt>Tipo</dt><dd>{}</dd><dt>Distância</dt><dd>{}</dd></dl></div>",
        props.get("rank", ""),
        props.get("name", ""),
        props.get("kind_label", ""),
        props.get("distance_label", ""),
    )


def _with_popups(collection: dict, popup) -> dict:
    """A copy of a FeatureCollection with a `popup_html` property on every feature."""
    return {
        "type": "FeatureCollection",
        "features": [
            {**f, "properties": {**f["properties"], "popup_html": str(popup(f["properties"]))}}
            for f in collection.get("features", [])
        ],
    }


def anchors(collection: dict) -> dict:
    """Point features at each feature's `anchor` ([lon, lat] inside its area): a facility a
    few metres across vanishes at city zoom, a circle there does not."""
    return {
        "type": "FeatureCollection",
        "features": [
            {
                "type": "Feature",
                "id": f"{f.get('id')}-anchor",
                "geometry": {"type": "Point", "coordinates": f["properties"]["anchor"]},
                "properties": f["properties"],
            }
            for f in collection["features"]
            if f["properties"].get("anchor")
        ],
    }


# --- layers -------------------------------------------------------------------------------


def add_outline(m: folium.Map, outline: dict) -> None:
    """The municipal boundary, drawn as a dashed line, not clickable (clicks pick points)."""
    name = outline.get("properties", {}).get("name", "")
    folium.GeoJson(
        outline,
        name=f"Limite municipal{': ' + name if name else ''}",
        control=False,
        style_function=lambda _f: {
            "color": OUTLINE_COLOUR,
            "weight": 2,
            "dashArray": "6 4",
            "fill": False,
        },
        interactive=False,
    ).add_to(m)


def add_basins(m: folium.Map, basins: dict) -> None:
    """The bacias, with a tooltip rather than a popup: Leaflet stops the map's click when it
    opens a popup, and bacias cover the town, so a popup would swallow every click meant to
    pick the load's point."""
    if not basins.get("features"):
        return
    group = folium.FeatureGroup(
        name=swatch_label(BASIN_STYLE.colour, BASIN_STYLE.layer_name, "dashed"), show=True
    )
    folium.GeoJson(
        _with_popups(basins, basin_popup_html),
        style_function=lambda _f: {
            "color": BASIN_STYLE.colour,
            "weight": 1.5,
            "dashArray": "4 4",
            "fillColor": BASIN_STYLE.colour,
            "fillOpacity": 0.06,
        },
        tooltip=markers.tooltip("popup_html", class_name="ctr-tooltip"),
    ).add_to(group)
    group.add_to(m)


def add_facilities(m: folium.Map, facilities: dict, destination_picker: bool = False) -> None:
    """One layer per kind, coloured by kind: the licensed areas and, since a PEV is a few
    metres across and vanishes at city zoom, a circle at a point inside each area. With
    destination_picker, each popup offers "Usar como destino" (the CTR form)."""
    by_kind: dict[str, list[dict]] = {}
    for feature in facilities.get("features", []):
        by_kind.setdefault(feature["properties"]["kind"], []).append(feature)
    for kind, style in KIND_STYLES.items():
        features = by_kind.get(kind)
        if not features:
            continue
        collection = _with_popups(
            {"features": features},
            lambda props: facility_popup_html(props, destination_button=destination_picker),
        )
        group = folium.FeatureGroup(name=swatch_label(style.colour, style.layer_name), show=True)
        colour = style.colour
        folium.GeoJson(
            collection,
            style_function=lambda _f, c=colour: {
                "color": c,
                "weight": 2,
                "fillColor": c,
                "fillOpacity": 0.35,
            },
            popup=markers.popup(),
        ).add_to(group)
        markers.circles(
            anchors(collection),
            lambda _f, c=colour: markers.dot_style(c),
            popup=markers.popup(),
        ).add_to(group)
        if destination_picker:
            # On the issue form a driver taps a facility with a thumb: an invisible target of
            # 44 px around its point (WCAG 2.5.5), above the drawn dot.
            markers.circles(
                anchors(collection),
                lambda _f: markers.TAP_TARGET_STYLE,
                radius=markers.TAP_TARGET_RADIUS,
                popup=markers.popup(),
            ).add_to(group)
        group.add_to(m)


def add_search(m: folium.Map, point: Sequence[float], results: dict) -> list[list[float]]:
    """The user's point and rings around the facilities found, numbered as in the list.

    `point` is (lon, lat); `results` a FeatureCollection of points with properties rank,
    name, kind_label and distance_label. Returns the [lat, lon] pairs to fit the view to.
    """
    group = folium.FeatureGroup(
        name=swatch_label(RESULT_RING_COLOUR, SEARCH_LAYER_NAME, "ring"), show=True
    )
    lon, lat = float(point[0]), float(point[1])
    markers.spot([lat, lon], SEARCH_POINT_COLOUR, "Seu ponto", radius=8).add_to(group)
    found = [[lat, lon]]
    if results.get("features"):
        folium.GeoJson(
            _with_popups(results, result_popup_html),
            marker=folium.CircleMarker(radius=13),
            style_function=lambda _f: {
                "color": RESULT_RING_COLOUR,
                "weight": 3,
                "fill": False,
            },
            popup=markers.popup(),
            # One permanent tooltip per ring (bound to the whole GeoJson layer, Leaflet would
            # show a single one for the group).
            on_each_feature=JsCode(RANK_TOOLTIP_JS),
        ).add_to(group)
        found += [
            [f["geometry"]["coordinates"][1], f["geometry"]["coordinates"][0]]
            for f in results["features"]
        ]
    group.add_to(m)
    return found


def municipality_map(
    outline: dict | None,
    basins: dict | None = None,
    tile_url: str | None = None,
    tile_attribution: str | None = None,
) -> LocalAssetsMap:
    """A base map on the municipality (outline: municipality_outline_geojson(), None when it
    is not loaded) with its outline and its bacias: the ground the network's, the Núcleo's
    and the fiscalization's maps start from. Their layers go above."""
    m = base_map(bounds.outline_centre(outline), DEFAULT_ZOOM, tile_url, tile_attribution)
    if outline:
        add_outline(m, outline)
    if basins:
        add_basins(m, basins)
    return m


def public_network_map(
    facilities: dict,
    basins: dict | None = None,
    outline: dict | None = None,
    search_point: Sequence[float] | None = None,
    search_results: dict | None = None,
    tile_url: str | None = None,
    tile_attribution: str | None = None,
    destination_picker: bool = False,
) -> LocalAssetsMap:
    """The public map of the licensed receiving network.

    facilities: licensed_facilities_geojson(); basins: catchment_basins_geojson(); outline:
    municipality_outline_geojson() (None when the municipality is not loaded); search_point
    (lon, lat) and search_results: the "onde descartar" answer. The view opens on the search
    when there is one, else on the municipality, else on the facilities, else near
    Guaratinguetá. destination_picker: facility popups get "Usar como destino" (CTR form).
    """
    m = municipality_map(outline, basins, tile_url, tile_attribution)
    # Drawn in this order, so facilities sit above bacias, and the search above everything.
    add_facilities(m, facilities, destination_picker)
    if search_point is not None:
        # Room for the rank labels above the rings; nothing found, the point with some
        # context around it.
        view = add_search(m, search_point, search_results or {"features": []})
        bounds.fit(m, view, padding=(32, 32), point_margin_deg=0.01)
    else:  # little padding: a municipality's outline should fill the frame
        view = bounds.outline_bounds(outline) or bounds.feature_bounds(
            facilities.get("features", [])
        )
        bounds.fit(m, view, padding=(8, 8))
    add_layer_control(m)
    return m
