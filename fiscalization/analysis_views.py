"""Pages of the inspectors' analysis: hotspots map, suspects of a report, roadside check.
Municipal users only (Núcleo and Fiscalização), each within its municipalities: the
hotspots of the one it works in now, the suspects among the CTRs and worksites it sees, a
report of another municipality is a 404."""

from __future__ import annotations

from urllib.parse import urlencode

from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_safe

import audit
from ctr.models import CTRStatus
from ctr.roles import municipal_only
from jurisdiction.scope import jurisdiction_of
from maps import bounds
from maps.base import render_parts
from pev_network import public_layers
from pev_network.models import Municipality

from . import hotspot_layers, hotspots, roadside, suspects
from .analysis_forms import HotspotForm, RoadsideForm, SuspectsForm
from .models import DumpingReport

# Bacias this far beyond the municipality are drawn too (degrees).
MARGIN_DEG = 0.05
# The table under the map lists this many hotspots; the map shows them all (up to the limit).
TABLE_ROWS = 50

REASON_CLASSES = {
    "OVERDUE": "reason-overdue",
    "REFUSED": "reason-refused",
    "CANCELLED": "reason-cancelled",
    "ON_THE_WAY": "reason-on-the-way",
    "SLOW_TRIP": "reason-slow-trip",  # an implausible trip
}
REASON_SHORT = {
    "OVERDUE": "Em atraso",
    "REFUSED": "Recusado",
    "CANCELLED": "Cancelado",
    "ON_THE_WAY": "No caminho",
    "SLOW_TRIP": "Viagem lenta",
}


def _hotspot_params(query: hotspots.HotspotQuery) -> dict:
    params = {"hotspot": "1", "eps_m": f"{query.eps_m:g}", "min_points": query.min_points}
    if query.since:
        params["since"] = query.since.isoformat()
    return params


def _suspects_url_template(query: hotspots.HotspotQuery) -> str:
    base = reverse("fiscalization_analysis:suspects", args=[0]).replace("/0/", "/{report}/")
    return f"{base}?{urlencode(_hotspot_params(query))}"


@require_safe
@municipal_only
def hotspots_page(request):
    form = HotspotForm(request.GET or None, user=request.user)
    if request.GET and not form.is_valid():
        context = {"nav": "fiscalizacao", "form": form}
        return render(request, "fiscalization/analysis/pontos_criticos.html", context, status=400)
    query = form.query()
    error = None
    try:
        found = hotspots.find_hotspots(query)
    except hotspots.TooCostly as exc:
        found, error = [], str(exc)
    municipality = (
        Municipality.objects.defer("boundary").filter(pk=query.municipality_id).first()
        if query.municipality_id
        else None
    )
    outline = (
        public_layers.municipality_outline_geojson(municipality.ibge_code) if municipality else None
    )
    basins = None
    if outline:
        basins = public_layers.catchment_basins_geojson(bbox=bounds.window(outline, MARGIN_DEG))
    collection = {"type": "FeatureCollection", "features": [h.feature() for h in found]}
    suspects_url = _suspects_url_template(query)
    the_map = hotspot_layers.hotspots_map(collection, outline, basins, suspects_url)
    rows = [
        {"hotspot": h, "suspects_url": suspects_url.format(report=h.last_report_id)}
        for h in found[:TABLE_ROWS]
    ]
    context = {
        "nav": "fiscalizacao",
        "form": form,
        "query": query,
        "since": query.since_or_default(),
        "municipality": municipality,
        "map": render_parts(the_map),
        "hotspots": found,
        "rows": rows,
        "recurring": sum(1 for h in found if h.recurrence_after_cleaning),
        "reports": sum(h.reports for h in found),
        "error": error,
        "limit": query.limit,
    }
    return render(request, "fiscalization/analysis/pontos_criticos.html", context)


def _chips(codes) -> list[dict]:
    return [
        {
            "text": REASON_SHORT[code],
            "css": REASON_CLASSES[code],
            "title": suspects.REASON_LABELS[code],
        }
        for code in codes
    ]


def _suspect_groups(found: suspects.Suspects) -> list[dict]:
    """The groups as the template shows them: reason chips and status labels resolved."""
    statuses = dict(CTRStatus.choices)
    return [
        {
            "transporter": t,
            "chips": [
                {**chip, "count": t.counts[code]}
                for code, chip in zip(suspects.REASONS, _chips(suspects.REASONS), strict=True)
                if t.counts[code]
            ],
            "vehicles": [
                {
                    "vehicle": v,
                    "rows": [
                        {"ctr": c, "status": statuses.get(c.status, c.status),
                         "chips": _chips(c.reasons)}
                        for c in v.ctrs[: suspects.MAX_ITEMS_PER_VEHICLE]
                    ],
                    "truncated": len(v.ctrs) > suspects.MAX_ITEMS_PER_VEHICLE,
                }
                for v in t.vehicles
            ],
        }
        for t in found.transporters
    ]  # fmt: skip


def _suspect_rows(found: suspects.Suspects) -> list[dict]:
    """For the map: one line per suspect CTR."""
    return [
        {
            "number": c.number,
            "origin": c.origin,
            "destination": c.destination,
            "label": f"{c.number} — {t.name}, {v.display_plate}",
        }
        for t in found.transporters
        for v in t.vehicles
        for c in v.ctrs[: suspects.MAX_ITEMS_PER_VEHICLE]
    ]


@require_safe
@municipal_only
def suspects_page(request, pk: int):
    report = get_object_or_404(
        DumpingReport.objects.visible_to(request.user).select_related("municipality"), pk=pk
    )
    form = SuspectsForm(request.GET or None)
    context = {
        "nav": "fiscalizacao",
        "form": form,
        "report": report,
        "max_angle": suspects.ON_THE_WAY_MAX_ANGLE,
    }
    template = "fiscalization/analysis/suspeitos.html"
    if request.GET and not form.is_valid():
        return render(request, template, context, status=400)
    values = form.values()
    hotspot = None
    if values["hotspot"]:
        try:
            hotspot = hotspots.hotspot_of_report(report, values["query"])
        except hotspots.TooCostly as exc:
            context["error"] = str(exc)
            return render(request, template, context, status=503)
        if hotspot is None:
            context["error"] = (
                "Esta denúncia não faz parte de nenhum ponto crítico com esses parâmetros "
                f"(raio {values['query'].eps_m:g} m, mínimo {values['query'].min_points} "
                "denúncias). Os suspeitos abaixo são os da denúncia."
            )
    spot = suspects.Spot.of_hotspot(hotspot) if hotspot else suspects.Spot.of_report(report)
    j = jurisdiction_of(request.user)
    # The CTRs the inspector sees; the transporters' licences in its current municipality.
    found = suspects.find_suspects(
        spot, values["window_days"], values["radius_km"], j.readable_ids, j.current_id
    )
    nearby = suspects.suspect_worksites_near(
        spot, values["radius_km"], timezone.localdate(), j.readable_ids
    )
    for site in nearby:  # the generator's name is shown (LGPD)
        audit.record(request, site.worksite, "Denúncia: obras suspeitas próximas")
    centre = hotspot.centre if hotspot else report.location.coords
    the_map = hotspot_layers.suspects_map(
        centre, values["radius_km"], _suspect_rows(found), hull=hotspot.hull if hotspot else None
    )
    context.update(
        {
            "hotspot": hotspot,
            "found": found,
            "groups": _suspect_groups(found),
            "worksites": nearby,
            "values": values,
            "map": render_parts(the_map),
        }
    )
    return render(request, template, context)


@require_safe
@municipal_only
def roadside_page(request):
    form = RoadsideForm(request.GET or None)
    context = {"nav": "fiscalizacao", "form": form}
    if not request.GET:
        return render(request, "fiscalization/analysis/veiculo.html", context)
    if not form.is_valid():
        form.fields["plate"].widget.attrs["aria-invalid"] = "true"
        return render(request, "fiscalization/analysis/veiculo.html", context, status=400)
    answer = roadside.check_plate(form.cleaned_data["plate"], user=request.user)
    # Show the plate as the inspector reads it on the vehicle.
    form = RoadsideForm({"plate": answer.display_plate})
    context.update({"form": form, "answer": answer})
    return render(request, "fiscalization/analysis/veiculo.html", context)
