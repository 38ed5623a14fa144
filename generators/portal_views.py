"""The generator's pages of its CTRs (pt-BR, /gerador/): its home (worksites and recent CTRs),
the list of its CTRs with filters, their map, a CTR's page (status, reception, findings,
history, where the waste is now) with the confirmation of its departure where the
municipality asks for it; and the Núcleo's list of the CTRs left unconfirmed.

Read only: a generator issues, receives and cancels nothing (ctr.services refuses it). Which
CTRs are its own is ctr.roles.visible_ctrs' rule, the same the API and the printed CTR use.
Thin: parse, call generators.portal / generators.confirmation, render."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import OuterRef, Subquery
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

import audit
from config.errors import errors_back_to
from config.list_order import Column, ListOrder
from ctr import reports, roles
from ctr.models import CTR, CTRStatus
from jurisdiction.scope import jurisdiction_of
from maps.base import render_parts
from pev_network import public_layers

from . import confirmation, portal, portal_layers
from .models import UnconfirmedDepartureNotice
from .portal_forms import GeneratorCTRFilterForm

PAGE_SIZE = 25
# The map draws at most this many CTRs (the most recent of the filter): a line each.
MAP_LIMIT = 500
UNCONFIRMED_PAGE_SIZE = 50


# Signed in, and acting for a generator: request.generator is set.
generator_required = roles.acting_for(
    roles.generator_of,
    "generator",
    "Esta área é dos geradores de resíduos. O seu usuário não está vinculado a um gerador "
    "cadastrado.",
)


def _ctrs(request):
    return (
        roles.visible_ctrs(request.user, CTR.objects.all())
        .select_related("transporter", "vehicle", "destination_facility", "worksite")
        .defer("destination_facility__area", "worksite__location", "worksite__area")
    )


_BY_NUMBER = ("year", "sequence", "number")
LIST_ORDER = ListOrder(
    [
        Column("numero", "Número", _BY_NUMBER, first_desc=True),
        Column("transporte", "Transporte", ("transport_date", *_BY_NUMBER), first_desc=True),
        Column("situacao", "Situação", ("status", "transport_date", *_BY_NUMBER)),
        Column("obra", "Obra", ("worksite__address", "transport_date", *_BY_NUMBER)),
        Column("transportador", "Transportador", ("transporter__name", *_BY_NUMBER)),
        Column("destino", "Destino", ("destination_facility__name", *_BY_NUMBER)),
        Column("volume", "Volume (m³)", ("total_volume_m3", *_BY_NUMBER), first_desc=True),
    ],
    default="-transporte",
)


def _filtered(request):
    """The generator's CTRs narrowed by the page's filters, the form, and whether any filter
    was given (invalid ones are ignored, shown, and answered with a 400)."""
    filters = GeneratorCTRFilterForm(request.GET or None, generator=request.generator)
    queryset = _ctrs(request)
    if request.GET:
        queryset = filters.apply(queryset)
    query = request.GET.copy()
    query.pop("pagina", None)
    filtered = any(query.get(key) for key in query if key != "ordem")
    return queryset, filters, query, filtered


@require_safe
@generator_required
def home(request):
    ctrs = _ctrs(request)
    return render(
        request,
        "generators/portal/home.html",
        {
            "nav": "gerador",
            "section": "home",
            "generator": request.generator,
            "worksites": portal.worksites_of(request.generator),
            "recent": ctrs.order_by("-created_at", "-pk")[: portal.RECENT_CTRS],
            "counts": portal.status_counts(ctrs),
            "pending": confirmation.awaiting(ctrs).count(),
        },
    )


@require_safe
@generator_required
def ctr_list(request):
    queryset, filters, query, filtered = _filtered(request)
    page = Paginator(LIST_ORDER.apply(queryset, request.GET), PAGE_SIZE).get_page(
        request.GET.get("pagina")
    )
    return render(
        request,
        "generators/portal/ctr_list.html",
        {
            "nav": "gerador",
            "section": "ctrs",
            "filters": filters,
            "page": page,
            "query": query.urlencode(),
            "sort": LIST_ORDER.headers(request.GET),
            "filtered": filtered,
        },
        status=400 if request.GET and filters.errors else 200,
    )


@require_safe
@generator_required
def ctr_map(request):
    queryset, filters, query, filtered = _filtered(request)
    total = queryset.count()
    shown = list(
        queryset.select_related("municipality")
        .defer("municipality__boundary")
        .order_by("-transport_date", "-year", "-sequence", "-pk")[:MAP_LIMIT]
    )
    drawn = [
        portal_layers.MapCTR(
            number=ctr.number,
            status=ctr.status,
            transport_date=ctr.transport_date,
            origin=ctr.origin.coords,
            destination=ctr.destination.coords,
            facility=ctr.destination_facility.name,
            volume_m3=ctr.total_volume_m3,
            url=reverse("generators:ctr-detail", args=[ctr.number]),
        )
        for ctr in shown
    ]
    # The municipality of its latest load, else the platform's own.
    ibge = shown[0].municipality.ibge_code if shown else settings.DEFAULT_MUNICIPALITY_IBGE
    the_map = portal_layers.generator_map(drawn, public_layers.municipality_outline_geojson(ibge))
    return render(
        request,
        "generators/portal/ctr_map.html",
        {
            "nav": "gerador",
            "section": "map",
            "filters": filters,
            "query": query.urlencode(),
            "filtered": filtered,
            "map": render_parts(the_map),
            "total": total,
            "shown": len(shown),
            "counts": portal.status_counts(queryset),
            "styles": [
                {"label": label, "colour": colour, "dashed": line == "dashed"}
                for (status, label) in CTRStatus.choices
                for colour, line in [portal_layers.STATUS_STYLES[status]]
            ],
        },
        status=400 if request.GET and filters.errors else 200,
    )


def _detail_ctrs(request):
    return (
        _ctrs(request)
        .select_related("municipality", "generator", "equipment", "origin_facility", "created_by")
        .defer("municipality__boundary", "origin_facility__area")
    )


@require_safe
@generator_required
def ctr_detail(request, number: str):
    ctr = get_object_or_404(_detail_ctrs(request), number=number)
    # Whose data: the transporter (a person, when registered by CPF), its vehicle and the
    # usernames of who issued and received the load (LGPD, as the transporter's page).
    audit.record(request, ctr, "Gerador: detalhe do CTR")
    return render(
        request,
        "generators/portal/ctr_detail.html",
        {
            "nav": "gerador",
            "section": "ctrs",
            "ctr": ctr,
            "waste": ctr.waste.all(),
            "findings": reports.finding_rows(ctr.findings),
            "events": reports.event_rows(ctr),
            "destination": portal.destination_of(ctr),
            "can_confirm": confirmation.needs_confirmation(ctr),
            "pdf_url": reverse("ctr-pdf", args=[ctr.number]),
        },
    )


@require_POST
@generator_required
@errors_back_to("generators:ctr-detail", "number")  # refused: not required, done, cancelled
def ctr_confirm(request, number: str):
    ctr = get_object_or_404(_detail_ctrs(request), number=number)
    if request.POST.get("etapa") == "revisar" and confirmation.needs_confirmation(ctr):
        # Without JavaScript (which asks in a dialog and drops the field), the same question
        # on a page first, as every irreversible step of the CTR pages.
        return render(
            request,
            "ctr/confirm.html",
            {
                "title": f"Confirmar a saída do {ctr.number}?",
                "question": "A confirmação não pode ser desfeita: confirme só se esta carga "
                "saiu da sua obra.",
                "details": [
                    ("Transportador", ctr.transporter.name),
                    ("Veículo", str(ctr.vehicle)),
                    ("Obra", ctr.worksite.address if ctr.worksite else "—"),
                    ("Transporte", ctr.transport_date.strftime("%d/%m/%Y")),
                ],
                "yes": "Sim, confirmar a saída",
                "verb": "confirmar",
                "back": reverse("generators:ctr-detail", args=[ctr.number]),
                "action": request.path,
                "fields": [],
            },
        )
    confirmation.confirm_departure(ctr, request.user)
    messages.success(request, f"Saída do {ctr.number} confirmada.")
    return redirect("generators:ctr-detail", number=ctr.number)


# --- the Núcleo: CTRs left unconfirmed ---------------------------------------------------------


@require_safe
@roles.municipal_only
def unconfirmed_list(request):
    """The CTRs whose generator did not confirm the departure in the municipality's hours,
    the oldest first, each with when it was e-mailed (manage.py unconfirmed_ctrs).
    Of the municipality the user works in now, whose rule the confirmation is: its
    own CTRs, not those of another that arrive at its facilities."""
    mailed = UnconfirmedDepartureNotice.objects.filter(ctr=OuterRef("pk")).values("mailed_at")
    queryset = confirmation.unconfirmed(
        CTR.objects.visible_to(request.user, current=True)
        .filter(municipality_id=jurisdiction_of(request.user).current_id)
        .select_related("generator", "worksite", "transporter", "municipality")
        .defer("worksite__location", "worksite__area", "municipality__boundary")
        .annotate(mailed_at=Subquery(mailed))
    ).order_by("created_at", "pk")
    page = Paginator(queryset, UNCONFIRMED_PAGE_SIZE).get_page(request.GET.get("pagina"))
    return render(
        request,
        "generators/portal/unconfirmed.html",
        {"nav": "nucleo", "page": page, "query": ""},
    )
