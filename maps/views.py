"""Public map pages (pt-BR). Thin: parse, call services and builders, render.

Each serves every municipality of the platform (maps.municipal): at its own
address (/m/<IBGE code>/…) or, without one, for the municipality of the location searched,
else the default. Public data only (DataScope.PUBLIC)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.http import Http404
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_safe

from config.br import br_number
from jurisdiction.access import DataScope, declare
from pev_network import public_layers, services
from pev_network.models import Municipality, MunicipalParameters

from . import bounds, municipal, network
from .base import render_parts
from .formats import format_distance
from .forms import NearestFacilityForm
from .legend import BASIN_STYLE, KIND_STYLES, kind_legend


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
    # "Lorena/SP" when the facility lies in another municipality than the page's.
    elsewhere: str = ""


def _result_rows(nearby: list, here: Municipality | None = None) -> list[ResultRow]:
    """Rows for the page from nearest_legal_facilities(): facilities carrying `distance_m`."""
    rows = []
    for rank, facility in enumerate(nearby, start=1):
        other = facility.municipality
        elsewhere = str(other) if other is not None and here is not None and other != here else ""
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
                accepted_classes=network.class_labels(facility.accepted_classes),
                lon=anchor.x,
                lat=anchor.y,
                elsewhere=elsewhere,
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
    for kind, style in KIND_STYLES.items():
        items = [
            {
                **f["properties"],
                "license": network.license_text(f["properties"]),
                "classes": network.class_labels(f["properties"]["accepted_classes"]),
            }
            for f in facilities["features"]
            if f["properties"]["kind"] == kind
        ]
        if items:
            groups.append({"kind": kind, "label": style.layer_name, "items": items})
    return groups


@declare(DataScope.PUBLIC)
@require_safe
def home(request, ibge: str | None = None):
    """The public home page: the platform's (/), or a municipality's (/m/<IBGE code>/, its
    name at the top and its pages behind each card)."""
    place = municipal.place(ibge)
    context = {"nav": "home", **place.context()}
    if not ibge:
        context["municipality_choices"] = municipal.choices()
    return render(request, "maps/home.html", context)


@declare(DataScope.PUBLIC)
@require_safe
def choose_municipality(request):
    """/m/?municipio=<IBGE code>: the home page's "your municipality" box, without JavaScript,
    to that municipality's home page (404 for one the platform does not serve)."""
    code = request.GET.get("municipio", "").strip()
    if not code:
        return redirect("maps:home")
    if not (len(code) == 7 and code.isdigit()):
        raise Http404("Município não atendido por esta plataforma.")
    return redirect("maps:home", ibge=municipal.served(code).ibge_code)


@declare(DataScope.PUBLIC)
@require_safe
def onde_descartar(request, ibge: str | None = None):
    """Where do I take my rubble? The licensed network of the municipality on a map, and the
    nearest legal points for a load (a point and a volume, no address). The municipality is
    the address's, else the searched point's, else the default."""
    day = timezone.localdate()
    status = 200
    rows: list[ResultRow] | None = None
    nearby = None
    search_point = None
    point = None
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
                point = None
            else:
                search_point = (point.x, point.y)
        if form.errors:
            status = 400
    else:
        form = NearestFacilityForm()

    place = municipal.place(ibge, point)
    here = place.municipality
    if nearby is not None:
        rows = _result_rows(nearby, here)
    outline = public_layers.municipality_outline_geojson(here.ibge_code, day) if here else None
    window = bounds.window(outline)
    # Its own network, not its neighbours': without a municipality loaded,
    # every licensed facility, as before.
    facilities = public_layers.licensed_facilities_geojson(day, window, here and here.pk)
    basins = public_layers.catchment_basins_geojson(day, window, here and here.pk)

    if outline:
        small_volume_limit = Decimal(outline["properties"]["small_volume_limit_m3"])
    else:
        small_volume_limit = MunicipalParameters._meta.get_field("small_volume_limit_m3").default

    m = network.public_network_map(
        facilities,
        basins,
        outline,
        search_point=search_point,
        search_results=_results_geojson(rows) if rows else None,
    )
    context = {
        **place.context(),
        "nav": "onde-descartar",
        "form": form,
        "map": render_parts(m),
        "legend": kind_legend(),
        "basin_legend": {"colour": BASIN_STYLE.colour, "label": "Bacia de captação"},
        "municipality": outline["properties"] if outline else None,
        "facility_count": len(facilities["features"]),
        "facility_list": _facility_list(facilities),
        "small_volume_limit": br_number(small_volume_limit),
        "volume": br_number(volume) if volume is not None else None,
        "over_small_volume": volume is not None and volume > small_volume_limit,
        "results": rows,
    }
    return render(request, "maps/onde_descartar.html", context, status=status)
