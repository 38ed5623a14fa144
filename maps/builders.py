"""folium map builders: plain functions, data (GeoJSON dicts) in, folium.Map out.

No request objects here. Every asset the maps need comes from our own static files: folium
0.20 pulls Leaflet, jQuery, Bootstrap, awesome-markers and fonts from CDNs by default, which
municipal intranets and strict CSPs block (and a default folium page fails with
`L is not defined` there). So the maps use only plain-Leaflet features (GeoJson, GeoJsonPopup,
GeoJsonTooltip, FeatureGroup, LayerControl, CircleMarker, FitBounds); folium.Popup, Icon and
Marker icons need jQuery or awesome-markers and are not used. The base-map tiles are the only
external resource (settings.MAP_TILE_URL).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import folium
from branca.element import Element, MacroElement
from django.conf import settings
from django.templatetags.static import static
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from folium.map import FitBounds
from folium.template import Template
from folium.utilities import JsCode

from pev_network.models import FacilityKind, WasteClass

# Near Guaratinguetá/SP, the law's municipality (lat, lon): where the map opens when the
# default municipality is not loaded.
DEFAULT_CENTRE = (-22.81, -45.19)
DEFAULT_ZOOM = 13
# Do not zoom closer than this when fitting a few small facilities (a PEV is ~30 m across).
FIT_MAX_ZOOM = 16


@dataclass(frozen=True)
class KindStyle:
    colour: str
    layer_name: str  # pt-BR, shown in the layer control and the legend


# Okabe-Ito colours: distinguishable with the common colour-vision deficiencies.
KIND_STYLES: dict[str, KindStyle] = {
    FacilityKind.PEV: KindStyle("#009E73", "Pontos de Entrega Voluntária (PEV)"),
    FacilityKind.ATT: KindStyle("#D55E00", "Áreas de Transbordo e Triagem (ATT)"),
    FacilityKind.RECYCLING: KindStyle("#0072B2", "Áreas de reciclagem"),
    FacilityKind.LANDFILL: KindStyle("#CC79A7", "Aterros de RCC"),
}
BASIN_STYLE = KindStyle("#6B7280", "Bacias de captação")
OUTLINE_COLOUR = "#1F2937"
SEARCH_POINT_COLOUR = "#111827"
RESULT_RING_COLOUR = "#111827"
SEARCH_LAYER_NAME = "Resultado da busca"
RANK_TOOLTIP_JS = """function (feature, layer) {
    layer.bindTooltip(String(feature.properties.rank), {
        permanent: true, direction: "top", offset: [0, -12], className: "ctr-rank"
    });
}"""


class LocalAssetsMap(folium.Map):
    """A folium.Map whose Leaflet comes from our static files (django-leaflet ships it), and
    nothing else at all: no jQuery, Bootstrap, awesome-markers or fonts.

    The lists are set on the instance: folium's are class attributes shared by every map, and
    its add_js_link/add_css_link mutate them in place.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.default_js = [("leaflet", static("leaflet/leaflet.js"))]
        self.default_css = [("leaflet_css", static("leaflet/leaflet.css"))]

    def render(self, **kwargs):
        super().render(**kwargs)
        # folium's header styles the whole page (html/body at 100%, margin 0, and a viewport
        # that forbids zooming, bad for accessibility); our pages are more than a map. Keep only
        # the map's own size: it fills the element the page puts it in.
        self.get_root().header.add_child(
            Element(
                f"<style>#{self.get_name()} {{ position: relative; width: 100%; height: 100%; }}"
                "</style>"
            ),
            name=self.get_name(),
        )


class ExposeOnMap(MacroElement):
    """Attach a folium element's Leaflet object to the map as `map.<attribute>`, so page scripts
    can reach it: folium declares some objects (the layer control) with `let`, which is not a
    property of `window`."""

    _template = Template(
        """
        {% macro script(this, kwargs) %}
            {{ this._parent.get_name() }}.{{ this.attribute }} = {{ this.element.get_name() }};
        {% endmacro %}
        """
    )

    def __init__(self, attribute: str, element: MacroElement):
        super().__init__()
        self._name = "ExposeOnMap"
        self.attribute = attribute
        self.element = element


@dataclass(frozen=True)
class MapParts:
    """A rendered map cut into the pieces a Django template places: links and styles for the
    <head>, the map <div>, and the script that must run after it (at the end of <body>)."""

    name: str  # the map's JavaScript variable (a global), for page scripts
    header: SafeString
    html: SafeString
    script: SafeString


def render_parts(m: folium.Map) -> MapParts:
    figure = m.get_root()
    # Rendering the figure's children fills its header/html/script sections.
    for child in figure._children.values():
        child.render()
    header = "".join(
        child.render() for name, child in figure.header._children.items() if name != "meta_http"
    )
    # Content Security Policy: the only inline script a page may run is the one it writes with
    # the request's nonce, around `script`. An inline script some folium element put in the
    # header moves to the start of `script` (it ran before the body's scripts anyway); the
    # header keeps <script src> (our static files), links and styles.
    inline = [match.group(1) for match in _INLINE_SCRIPT.finditer(header)]
    header = _INLINE_SCRIPT.sub("", header)
    # folium escapes what it embeds (tojson escapes <, > and &), so the parts are safe HTML.
    return MapParts(
        name=m.get_name(),
        header=mark_safe(header),
        html=mark_safe(figure.html.render()),
        script=mark_safe("\n".join([*inline, figure.script.render()])),
    )


# A <script> element without a src attribute, and its code.
_INLINE_SCRIPT = re.compile(
    r"<script(?![^>]*\bsrc\s*=)[^>]*>(.*?)</script\s*>", re.IGNORECASE | re.DOTALL
)


def base_map(
    location: Sequence[float] = DEFAULT_CENTRE,
    zoom: int = DEFAULT_ZOOM,
    tile_url: str | None = None,
    tile_attribution: str | None = None,
) -> LocalAssetsMap:
    """An empty map with the configured base-map tiles, the only external resource."""
    m = LocalAssetsMap(location=list(location), zoom_start=zoom, tiles=None, control_scale=True)
    folium.TileLayer(
        tiles=tile_url or settings.MAP_TILE_URL,
        attr=tile_attribution or settings.MAP_TILE_ATTRIBUTION,
        name="Mapa base",
        control=False,
        max_zoom=19,
    ).add_to(m)
    return m


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


def _anchors(collection: dict) -> dict:
    """Point features at each feature's `anchor` ([lon, lat] inside its area)."""
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


def _popup() -> folium.GeoJsonPopup:
    return folium.GeoJsonPopup(fields=["popup_html"], labels=False, localize=False, max_width=320)


def _swatch_label(colour: str, text: str, style: str = "solid") -> str:
    """A layer-control label with a colour sample (style: solid, dashed or ring), so the
    control doubles as a legend."""
    return format_html(
        '<span class="ctr-swatch ctr-swatch-{}" style="--swatch: {}" aria-hidden="true"></span>{}',
        style,
        colour,
        text,
    )


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
        name=_swatch_label(BASIN_STYLE.colour, BASIN_STYLE.layer_name, "dashed"), show=True
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
        tooltip=folium.GeoJsonTooltip(
            fields=["popup_html"], labels=False, localize=False, class_name="ctr-tooltip"
        ),
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
        group = folium.FeatureGroup(name=_swatch_label(style.colour, style.layer_name), show=True)
        colour = style.colour
        folium.GeoJson(
            collection,
            style_function=lambda _f, c=colour: {
                "color": c,
                "weight": 2,
                "fillColor": c,
                "fillOpacity": 0.35,
            },
            popup=_popup(),
        ).add_to(group)
        folium.GeoJson(
            _anchors(collection),
            marker=folium.CircleMarker(radius=7),
            style_function=lambda _f, c=colour: {
                "color": "#ffffff",
                "weight": 2,
                "fill": True,
                "fillColor": c,
                "fillOpacity": 0.95,
            },
            popup=_popup(),
        ).add_to(group)
        group.add_to(m)


def add_search(m: folium.Map, point: Sequence[float], results: dict) -> list[list[float]]:
    """The user's point and rings around the facilities found, numbered as in the list.

    `point` is (lon, lat); `results` a FeatureCollection of points with properties rank,
    name, kind_label and distance_label. Returns the [lat, lon] pairs to fit the view to.
    """
    group = folium.FeatureGroup(
        name=_swatch_label(RESULT_RING_COLOUR, SEARCH_LAYER_NAME, "ring"), show=True
    )
    lon, lat = float(point[0]), float(point[1])
    folium.CircleMarker(
        location=[lat, lon],
        radius=8,
        color="#ffffff",
        weight=3,
        fill=True,
        fill_color=SEARCH_POINT_COLOUR,
        fill_opacity=1,
        tooltip="Seu ponto",
    ).add_to(group)
    bounds = [[lat, lon]]
    if results.get("features"):
        folium.GeoJson(
            _with_popups(results, result_popup_html),
            marker=folium.CircleMarker(radius=13),
            style_function=lambda _f: {
                "color": RESULT_RING_COLOUR,
                "weight": 3,
                "fill": False,
            },
            popup=_popup(),
            # One permanent tooltip per ring (bound to the whole GeoJson layer, Leaflet would
            # show a single one for the group).
            on_each_feature=JsCode(RANK_TOOLTIP_JS),
        ).add_to(group)
        bounds += [
            [f["geometry"]["coordinates"][1], f["geometry"]["coordinates"][0]]
            for f in results["features"]
        ]
    group.add_to(m)
    return bounds


def _bbox_bounds(bbox: Sequence[float]) -> list[list[float]]:
    min_lon, min_lat, max_lon, max_lat = bbox
    return [[min_lat, min_lon], [max_lat, max_lon]]


def _feature_bounds(features: Iterable[dict]) -> list[list[float]] | None:
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
    if outline and outline.get("bbox"):
        min_lon, min_lat, max_lon, max_lat = outline["bbox"]
        centre = ((min_lat + max_lat) / 2, (min_lon + max_lon) / 2)
    else:
        centre = DEFAULT_CENTRE
    m = base_map(centre, DEFAULT_ZOOM, tile_url, tile_attribution)
    # Drawn in this order, so facilities sit above bacias, and the search above everything.
    if outline:
        add_outline(m, outline)
    if basins:
        add_basins(m, basins)
    add_facilities(m, facilities, destination_picker)
    bounds = None
    if search_point is not None:
        bounds = add_search(m, search_point, search_results or {"features": []})
        if len(bounds) == 1:  # nothing found: show the point with some context around it
            lat, lon = bounds[0]
            bounds = [[lat - 0.01, lon - 0.01], [lat + 0.01, lon + 0.01]]
    elif outline and outline.get("bbox"):
        bounds = _bbox_bounds(outline["bbox"])
    else:
        bounds = _feature_bounds(facilities.get("features", []))
    if bounds:
        # Little padding: a municipality's outline should fill the frame; a search needs room
        # for the rank labels above its rings.
        padding = (32, 32) if search_point is not None else (8, 8)
        fit = FitBounds(bounds, padding=padding, max_zoom=FIT_MAX_ZOOM)
        # Jump, don't fly: the map is created at the centre first, and an animated zoom on
        # every page load is a distraction (and what a screenshot would catch mid-way).
        fit.options["animate"] = False
        m.add_child(fit)
    # Expanded, so that it doubles as a legend; the page script collapses it on phones.
    control = folium.LayerControl(collapsed=False, position="topright").add_to(m)
    m.add_child(ExposeOnMap("ctrLayerControl", control))
    return m
