"""Pages of the Núcleo Permanente de Gestão (and the inspectors, who see the same)."""

from __future__ import annotations

import shutil
import tempfile
from functools import wraps
from pathlib import Path

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import FileResponse, Http404, HttpResponseBadRequest
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_safe

from ctr import analytics, roles
from ctr.exports import export_ctrs
from fiscalization import services as fiscalization
from pev_network import management_layers, public_layers
from pev_network.exporting import export_basins, export_facilities
from pev_network.models import Municipality

from . import builders, nucleo
from .nucleo_forms import NucleoFilterForm

# Bacias and facilities this far beyond the municipality are drawn too (a destination may
# lie in the next municipality).
MARGIN_DEG = 0.2


def municipal_only(view):
    """Núcleo and Fiscalização only: anonymous users go to the login, others get a 403."""

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not roles.is_municipal(request.user):
            return render(request, "maps/sem_acesso.html", status=403)
        return view(request, *args, **kwargs)

    return wrapper


@require_safe
@municipal_only
def nucleo_map(request):
    form = NucleoFilterForm(request.GET or None)
    if request.GET and not form.is_valid():
        return render(request, "maps/nucleo_mapa.html", {"form": form, "nav": "nucleo"}, status=400)
    data = form.cleaned_data if request.GET else form.clean_defaults()
    municipality = data.get("municipality") or (
        Municipality.objects.defer("boundary")
        .filter(ibge_code=settings.DEFAULT_MUNICIPALITY_IBGE)
        .first()
    )
    outline = (
        public_layers.municipality_outline_geojson(municipality.ibge_code) if municipality else None
    )
    extent = tuple(outline["bbox"]) if outline else (-45.45, -23.02, -45.02, -22.61)
    window = (
        extent[0] - MARGIN_DEG,
        extent[1] - MARGIN_DEG,
        extent[2] + MARGIN_DEG,
        extent[3] + MARGIN_DEG,
    )
    cell = analytics.grid_size_degrees(extent)
    flt = analytics.CTRFilter(
        date_from=data["date_from"],
        date_to=data["date_to"],
        municipality_id=municipality.pk if municipality else None,
        waste_class=data.get("waste_class") or None,
        transporter_id=data["transporter"].pk if data.get("transporter") else None,
        facility_id=data["facility"].pk if data.get("facility") else None,
    )
    now = timezone.now()
    flows = analytics.flows(flt, cell)
    overdue = analytics.overdue_origin_cells(flt, cell, now)
    reports = [
        analytics.Cell(lon, lat, n)
        for lon, lat, n in fiscalization.report_cells(
            flt.date_from, flt.date_to, cell, flt.municipality_id
        )
    ]
    the_map = nucleo.nucleo_map(
        facilities=management_layers.facilities_with_license_state_geojson(bbox=window),
        basins=public_layers.catchment_basins_geojson(bbox=window),
        outline=outline,
        flows=flows,
        overdue=overdue,
        reports=reports,
        facility_admin_url="/admin/pev_network/receivingfacility/{id}/change/",
        ctr_list_url=(
            f"/admin/ctr/ctr/?destination_facility__id__exact={{facility}}"
            f"&transport_date__gte={flt.date_from.isoformat()}"
            f"&transport_date__lte={flt.date_to.isoformat()}"
        ),
    )
    context = {
        "nav": "nucleo",
        "form": form,
        "filter": flt,
        "municipality": municipality,
        "map": builders.render_parts(the_map),
        "totals": analytics.totals(flt),
        "counts": {"flows": len(flows), "overdue": sum(c.count for c in overdue),
                   "reports": sum(c.count for c in reports)},
    }  # fmt: skip
    return render(request, "maps/nucleo_mapa.html", context)


EXPORT_NAMES = {
    "ctrs.csv": "text/csv; charset=utf-8",
    "ctrs.gpkg": "application/geopackage+sqlite3",
    "areas.gpkg": "application/geopackage+sqlite3",
    "bacias.gpkg": "application/geopackage+sqlite3",
}


@require_safe
@municipal_only
def nucleo_exports(request):
    form = NucleoFilterForm(request.GET or None)
    valid = not request.GET or form.is_valid()
    data = form.cleaned_data if request.GET and valid else form.clean_defaults()
    return render(
        request,
        "maps/nucleo_exportar.html",
        {"nav": "nucleo", "form": form, "period": data, "names": EXPORT_NAMES},
        status=200 if valid else 400,
    )


@require_safe
@municipal_only
def nucleo_export_file(request, name: str):
    """Build the file in a temporary folder and stream it; the folder goes when it is sent."""
    if name not in EXPORT_NAMES:
        raise Http404("Exportação desconhecida.")
    form = NucleoFilterForm(request.GET or None)
    if request.GET and not form.is_valid():
        return HttpResponseBadRequest(
            "Período inválido: " + " ".join(form.errors.get("__all__", ["verifique as datas."]))
        )
    data = form.cleaned_data if request.GET else form.clean_defaults()
    folder = tempfile.mkdtemp(prefix="ctr-export-")
    path = Path(folder) / name
    try:
        if name.startswith("ctrs."):
            municipality = data.get("municipality")
            export_ctrs(
                path, data["date_from"], data["date_to"], municipality.pk if municipality else None
            )
            filename = f"ctrs_{data['date_from']:%Y%m%d}_{data['date_to']:%Y%m%d}{path.suffix}"
        elif name == "areas.gpkg":
            export_facilities(path)
            filename = name
        else:
            export_basins(path)
            filename = name
        handle = path.open("rb")
    finally:
        # The open handle keeps the file readable after its name is gone (POSIX).
        shutil.rmtree(folder, ignore_errors=True)
    return FileResponse(
        handle, as_attachment=True, filename=filename, content_type=EXPORT_NAMES[name]
    )
