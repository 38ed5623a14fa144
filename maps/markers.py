"""Markers, popups and tooltips: circles drawn by Leaflet itself, never folium.Marker (its icons
need images, jQuery or awesome-markers from a CDN; maps.base)."""

from __future__ import annotations

from collections.abc import Sequence

import folium
from folium.utilities import JsCode

OUTLINE_WHITE = "#ffffff"  # a white border: the circle stands out on any base map or layer

# A tap target around a small point: 22 px of radius is 44 px across (WCAG 2.5.5), drawn
# transparent (a fill of opacity 0 still takes the taps).
TAP_TARGET_RADIUS = 22
TAP_TARGET_STYLE = {"stroke": False, "fill": True, "fillColor": "#000000", "fillOpacity": 0}


def spot(
    location: Sequence[float], colour: str, tooltip: str, radius: int = 9
) -> folium.CircleMarker:
    """The one point a map is about (the user's point, a report's place): a solid circle with
    a thick white border, above everything around it. location: [lat, lon]."""
    return _white_bordered(location, colour, tooltip, radius, weight=3, opacity=1)


def dot(
    location: Sequence[float], colour: str, tooltip: str, radius: int = 6
) -> folium.CircleMarker:
    """One point among many (an origin, a destination): a circle with a thin white border.
    location: [lat, lon]."""
    return _white_bordered(location, colour, tooltip, radius, weight=2, opacity=0.95)


def _white_bordered(location, colour, tooltip, radius, weight, opacity) -> folium.CircleMarker:
    return folium.CircleMarker(
        location=list(location),
        radius=radius,
        color=OUTLINE_WHITE,
        weight=weight,
        fill=True,
        fill_color=colour,
        fill_opacity=opacity,
        tooltip=tooltip,
    )


def dot_style(colour: str) -> dict:
    """The style of `dot` for a GeoJson layer of points (`circles`)."""
    return {
        "color": OUTLINE_WHITE,
        "weight": 2,
        "fill": True,
        "fillColor": colour,
        "fillOpacity": 0.95,
    }


def circles(
    collection: dict,
    style_function,
    radius: int = 7,
    popup: folium.GeoJsonPopup | None = None,
    tooltip: folium.GeoJsonTooltip | None = None,
    on_each_feature: JsCode | None = None,
) -> folium.GeoJson:
    """A FeatureCollection of points drawn as circles: one GeoJson layer, however many points
    (one folium element per point would write its script once per point)."""
    return folium.GeoJson(
        collection,
        marker=folium.CircleMarker(radius=radius),
        style_function=style_function,
        popup=popup,
        tooltip=tooltip,
        on_each_feature=on_each_feature,
    )


def popup(field: str = "popup_html", max_width: int | None = 320) -> folium.GeoJsonPopup:
    """A popup showing one property of each feature, as it is: the property is HTML the
    builder escaped (format_html), or plain text."""
    options = {} if max_width is None else {"max_width": max_width}
    return folium.GeoJsonPopup(fields=[field], labels=False, localize=False, **options)


def tooltip(field: str = "label", class_name: str | None = None) -> folium.GeoJsonTooltip:
    """A tooltip showing one property of each feature, as it is."""
    options = {} if class_name is None else {"class_name": class_name}
    return folium.GeoJsonTooltip(fields=[field], labels=False, localize=False, **options)
