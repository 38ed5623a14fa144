"""Public map pages (pt-BR). Thin: parse, call services and builders, render."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_safe

from config.br import br_number
from pev_network import public_layers, services
from pev_network.models import Municipality

from . import builders
from .formats import format_distance
from .forms import NearestFacilityForm

# Facilities and bacias this far (degrees, ~20 km) beyond the municipality's extent are drawn
# too: a legal destination may lie in a neighbouring municipality.
DISPLAY_MARGIN_DEG = 0.2


@dataclass(frozen=True)
class ResultRow:
    rank: int
    name: str
    kind: str
    kind_label: str
    distance: str
    address: str
    operator: str
    accepted_classes: list[str]
    lon: float
    lat: float


def _result_rows(nearby: list) -> list[ResultRow]:
    """Rows for the page from nearest_legal_facilities(): facilities carrying `distance_m`."""
    rows = []
    for rank, facility in enumerate(nearby, start=1):
        # A point inside the area (its centroid may fall outside an L-shaped yard).
        anchor = facility.area.point_on_surface
        rows.append(
            ResultRow(
                rank=rank,
                name=facility.name,
                kind=facility.kind,
                kind_label=facility.get_kind_display(),
                distance=format_distance(facility.distance_m),
                address=facility.address,
                operator=facility.operator,
                accepted_classes=builders.class_labels(facility.accepted_classes),
                lon=anchor.x,
                lat=anchor.y,
            )
        )
    return rows


def _results_geojson(rows: list[ResultRow]) -> dict:
    return {
        "type": "FeatureCollection",
        "features": [
            {
                "type": "Feature",
                "id": f"result-{row.rank}",
                "geometry": {"type": "Point", "coordinates": [row.lon, row.lat]},
                "properties": {
                    "rank": row.rank,
                    "name": row.name,
                    "kind_label": row.kind_label,
                    "distance_label": row.distance,
                },
            }
            for row in rows
        ],
    }


def _facility_list(facilities: dict) -> list[dict]:
    """The map's facilities as a list grouped by kind: the page's text alternative to the map
    (screen readers, keyboards, slow connections)."""
    groups = []
    for kind, style in builders.KIND_STYLES.items():
        items = [
            {
                **f["properties"],
                "license": builders.license_text(f["properties"]),
                "classes": builders.class_labels(f["properties"]["accepted_classes"]),
            }
            for f in facilities["features"]
            if f["properties"]["kind"] == kind
        ]
        if items:
            groups.append({"kind": kind, "label": style.layer_name, "items": items})
    return groups


def _display_window(outline: dict | None) -> tuple[float, float, float, float] | None:
    if not outline or not outline.get("bbox"):
        return None
    min_lon, min_lat, max_lon, max_lat = outline["bbox"]
    m = DISPLAY_MARGIN_DEG
    return (min_lon - m, min_lat - m, max_lon + m, max_lat + m)


def home(request):
    return render(request, "maps/home.html", {"nav": "home"})


@require_safe
def onde_descartar(request):
    """Where do I take my rubble? The licensed network on a map, and the nearest legal points
    for a load (a point and a volume, no address)."""
    day = timezone.localdate()
    ibge = settings.DEFAULT_MUNICIPALITY_IBGE
    outline = public_layers.municipality_outline_geojson(ibge) if ibge else None
    window = _display_window(outline)
    facilities = public_layers.licensed_facilities_geojson(day, window)
    basins = public_layers.catchment_basins_geojson(day, window)

    if outline:
        small_volume_limit = Decimal(outline["properties"]["small_volume_limit_m3"])
    else:
        small_volume_limit = Municipality._meta.get_field("small_volume_limit_m3").default

    status = 200
    rows: list[ResultRow] | None = None
    search_point = None
    volume = None
    # Bound only when the search was submitted: other query parameters (campaign tags, etc.)
    # must not turn the bare page into a form error.
    if any(name in request.GET for name in NearestFacilityForm.field_names):
        form = NearestFacilityForm(request.GET)
        if form.is_valid():
            point = form.point()
            volume = form.cleaned_data["volume_m3"]
            try:
                services.check_search_point(point)
                nearby = services.nearest_legal_facilities(
                    point, volume, form.cleaned_data["waste_class"] or None, on=day
                )
            except services.NetworkError as error:
                form.add_error(None, error.message)
            else:
                rows = _result_rows(nearby)
                search_point = (point.x, point.y)
        if form.errors:
            status = 400
    else:
        form = NearestFacilityForm()

    m = builders.public_network_map(
        facilities,
        basins,
        outline,
        search_point=search_point,
        search_results=_results_geojson(rows) if rows else None,
    )
    context = {
        "nav": "onde-descartar",
        "form": form,
        "map": builders.render_parts(m),
        "legend": [
            {"colour": style.colour, "label": style.layer_name, "kind": kind}
            for kind, style in builders.KIND_STYLES.items()
        ],
        "basin_legend": {"colour": builders.BASIN_STYLE.colour, "label": "Bacia de captação"},
        "municipality": outline["properties"] if outline else None,
        "facility_count": len(facilities["features"]),
        "facility_list": _facility_list(facilities),
        "small_volume_limit": br_number(small_volume_limit),
        "volume": br_number(volume) if volume is not None else None,
        "over_small_volume": volume is not None and volume > small_volume_limit,
        "results": rows,
    }
    return render(request, "maps/onde_descartar.html", context, status=status)
