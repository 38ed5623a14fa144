"""The Núcleo's worksites: the list with its filters (and its CSV) and a worksite's page with
the declared/transported/destined comparison, its chart, its CTRs and its alerts. Municipal
users only, each within its municipalities (the list and the CSV of the one it works
in now, a worksite of another is a 404); the generator's name and document are personal data
(LGPD access log)."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.views.decorators.http import require_safe

import audit
from config.csv_safety import csv_response
from ctr import roles
from ctr.models import Worksite
from ctr.roles import municipal_only
from generators import suspects
from generators.comparison import worksite_comparison
from generators.models import WastePlan

from . import charts, worksites

PAGE_SIZE = 50
CTR_PAGE_SIZE = 50


@require_safe
@municipal_only
def worksite_list(request):
    params = request.GET.copy()
    as_csv = params.pop("csv", None) is not None
    page_number = params.pop("pagina", [None])[0]
    form = worksites.WorksiteFilterForm(params or None, user=request.user)
    if params and not form.is_valid():
        return render(request, "nucleo/obras.html", {"nav": "nucleo", "form": form}, status=400)
    today = timezone.localdate()
    queryset = form.filtered(today)
    if as_csv:
        audit.record(request, None, "Núcleo: obras (CSV)")
        rows = worksites.rows(queryset, today)
        return csv_response(
            f"obras_{today:%Y%m%d}.csv", worksites.CSV_HEADER, worksites.csv_rows(rows)
        )
    page = Paginator(queryset, PAGE_SIZE).get_page(page_number)
    audit.record(request, None, "Núcleo: lista de obras")
    query = params.urlencode()
    context = {
        "nav": "nucleo",
        "form": form,
        "page": page,
        "rows": worksites.rows(page.object_list, today),
        "query": query,
        "csv_url": f"?{query}&csv=1" if query else "?csv=1",
        "filtered": bool(query),
        "counts": suspects.counts(today, form.scope()),
        "today": today,
    }
    return render(request, "nucleo/obras.html", context)


@require_safe
@municipal_only
def worksite_page(request, pk: int):
    worksite = get_object_or_404(
        Worksite.objects.visible_to(request.user)
        .select_related("generator", "municipality")
        .defer("municipality__boundary"),
        pk=pk,
    )
    today = timezone.localdate()
    comparison = worksite_comparison(worksite)
    figures = suspects.of_worksite(worksite, today)
    lines = worksites.cumulative_lines(comparison, figures, today)
    ctrs = (
        roles.visible_ctrs(request.user, worksite.ctrs.all())
        .select_related("transporter", "destination_facility")
        .order_by("-transport_date", "-pk")
    )
    page = Paginator(ctrs, CTR_PAGE_SIZE).get_page(request.GET.get("pagina"))
    audit.record(request, worksite, "Núcleo: página da obra")
    context = {
        "nav": "nucleo",
        "worksite": worksite,
        "comparison": comparison,
        "figures": figures,
        "reasons": figures.explained() if figures else [],
        "latest_plan": WastePlan.objects.filter(worksite=worksite).order_by("-version").first(),
        "plan_states": suspects.PLAN_STATES,
        "chart": charts.lines_over_time(
            lines, "Volumes acumulados da obra: previsto, transportado e destinado", "m³", today
        )
        if lines
        else None,
        "page": page,
        "today": today,
    }
    return render(request, "nucleo/obra.html", context)
