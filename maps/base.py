"""The map itself: Leaflet from our static files, the configured base-map tiles, the layer
control, and the pieces a Django template places.

No request objects here. Every asset the maps need comes from our own static files: folium
0.20 pulls Leaflet, jQuery, Bootstrap, awesome-markers and fonts from CDNs by default, which
municipal intranets and strict CSPs block (and a default folium page fails with
`L is not defined` there). So the maps use only plain-Leaflet features (GeoJson, GeoJsonPopup,
GeoJsonTooltip, FeatureGroup, LayerControl, CircleMarker, FitBounds); folium.Popup, Icon and
Marker icons need jQuery or awesome-markers and are not used. The base-map tiles are the only
external resource (settings.MAP_TILE_URL).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

import folium
from branca.element import Element, MacroElement
from django.conf import settings
from django.templatetags.static import static
from django.utils.safestring import SafeString, mark_safe
from folium.template import Template

# Near Guaratinguetá/SP, the law's municipality (lat, lon): where the map opens when the
# default municipality is not loaded.
DEFAULT_CENTRE = (-22.81, -45.19)
DEFAULT_ZOOM = 13
# The layer control as the page scripts find it: map.ctrLayerControl (site.js and
# point-input.js collapse it on phones, nucleo-map.js remembers the layers switched off).
LAYER_CONTROL_ATTRIBUTE = "ctrLayerControl"


class LocalAssetsMap(folium.Map):
    """A folium.Map whose Leaflet comes from our static files (django-leaflet ships it), and
    nothing else at all: no jQuery, Bootstrap, awesome-markers or fonts.

    The lists are set on the instance: folium's are class attributes shared by every map, and
    its add_js_link/add_css_link mutate them in place.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.default_js = [
            ("leaflet", static("leaflet/leaflet.js")),
            # Its controls in pt-BR, before any map is made.
            ("leaflet_pt", static("maps/leaflet-pt.js")),
        ]
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


def add_layer_control(m: folium.Map, expose: bool = True) -> folium.LayerControl:
    """The list of layers, expanded so that it doubles as a legend (every layer's name carries
    its colour sample, maps.legend.swatch_label). Add it after the layers: its script names
    the layers it lists. With `expose`, page scripts reach it as map.ctrLayerControl (and on
    a phone site.js collapses it)."""
    control = folium.LayerControl(collapsed=False, position="topright").add_to(m)
    if expose:
        m.add_child(ExposeOnMap(LAYER_CONTROL_ATTRIBUTE, control))
    return control


def keep_control_last(m: folium.Map) -> None:
    """folium renders children in insertion order and the layer control's script names the
    layers it lists: a layer added after it would be undefined there. Move it (and what
    exposes it to page scripts) to the end."""
    children = m._children
    for key, child in list(children.items()):
        if isinstance(child, folium.LayerControl):
            children.move_to_end(key)
    for key, child in list(children.items()):
        if isinstance(child, ExposeOnMap):
            children.move_to_end(key)


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
    # header keeps links and styles.
    inline = [match.group(1) for match in _INLINE_SCRIPT.finditer(header)]
    header = _INLINE_SCRIPT.sub("", header)
    # What a phone does not see above the fold waits. The header carries no
    # Leaflet <script>: its sources go to maps/map-loader.js (deferred), which loads them and
    # builds the map when the map's box comes near the viewport. Templates run `script` as an
    # inline module (`<script type="module" nonce=…>`), after the deferred scripts before it;
    # it only hands the loader a generator, one folium element per step (the loader runs each
    # step in a task of its own, so building a map is no single long task). The map is put on
    # `window` under its name, where the page scripts find it (data-map-var, CtrMaps.whenMap).
    sources = [match.group(1) for match in _SCRIPT_SRC.finditer(header)]
    header = _SCRIPT_SRC.sub("", header) + (
        f'<script src="{static("maps/map-loader.js")}" defer></script>'
    )
    name = m.get_name()
    steps = [*inline, *(child.render() for child in figure.script._children.values())]
    body = "\nyield;\n".join(steps)
    # folium escapes what it embeds (tojson escapes <, > and &), so the parts are safe HTML.
    return MapParts(
        name=name,
        header=mark_safe(header),
        html=mark_safe(figure.html.render()),
        script=mark_safe(
            f"CtrMaps.define({json.dumps(name)}, {json.dumps(sources)}, function* () {{\n"
            f"{body}\nwindow.{name} = {name};\n}});"
        ),
    )


# A <script src=…></script> element: its source.
_SCRIPT_SRC = re.compile(
    r"<script\b[^>]*\bsrc\s*=\s*[\"']?([^\"' >]+)[^>]*>\s*</script\s*>", re.IGNORECASE
)

# A <script> element without a src attribute, and its code.
_INLINE_SCRIPT = re.compile(
    r"<script(?![^>]*\bsrc\s*=)[^>]*>(.*?)</script\s*>", re.IGNORECASE | re.DOTALL
)
