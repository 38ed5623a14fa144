"""Web pages of the CTR (pt-BR) for transporters and receiving-facility operators, the sign-in
pages and the public rule catalogue. Thin: parse with ctr.forms, call ctr.services, render.

Here: who may enter (transporter_required, operator_required), sign-in, the dashboard, the rule
catalogue, the no-JavaScript confirmation, and a CTR's page (render_detail, both sides) with the
transporter's list. The other pages are in modules of their own: issuing and the CSV import
(ctr.issue_views), the fleet (ctr.fleet_views), the receptions (ctr.reception_views), the
onward CTRs and the stock (ctr.onward_views)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.gis.db.models.functions import Distance
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

import audit
from config.br import br_number
from config.errors import errors_back_to
from config.list_order import Column, ListOrder
from jurisdiction.access import DataScope, declare
from maps import services as maps

from . import closing, lifecycle, reports, roles, rules
from .field import corrections
from .forms import CTRFilterForm, ReasonForm, SignInForm
from .models import CTR, CTRAction

PAGE_SIZE = 25


# --- access ----------------------------------------------------------------------------------


def forbidden(request, message: str):
    return render(request, "ctr/forbidden.html", {"message": message}, status=403)


# Signed in, and acting for a transporter (request.transporter) or operating a receiving
# facility (request.facility).
transporter_required = roles.acting_for(
    roles.transporter_of,
    "transporter",
    "Esta área é dos transportadores. O seu usuário não está vinculado a um transportador "
    "cadastrado.",
)
operator_required = roles.acting_for(
    roles.facility_of,
    "facility",
    "Esta área é dos operadores das áreas de recebimento. O seu usuário não está vinculado a "
    "uma área de recebimento.",
)


# --- sign in and out -------------------------------------------------------------------------


class SignInView(auth_views.LoginView):
    data_scope = DataScope.PUBLIC  # the sign-in form: no one's data
    template_name = "ctr/login.html"
    authentication_form = SignInForm
    redirect_authenticated_user = True
    extra_context = {"nav": "entrar"}


class SignOutView(auth_views.LogoutView):
    """POST signs out (CSRF-protected); GET asks for confirmation instead of a bare 405."""

    data_scope = DataScope.PUBLIC  # no one's data
    http_method_names = ["get", "post", "options"]

    def get(self, request, *args, **kwargs):
        return render(request, "ctr/logout_confirm.html")


@declare(DataScope.SIGNED_IN)
@login_required
def dashboard(request):
    """/painel/: where each role works."""
    user = request.user
    if roles.transporter_of(user) is not None:
        return redirect("ctr_web:ctr-list")
    if roles.facility_of(user) is not None:
        return redirect("ctr_web:receptions")
    if roles.generator_of(user) is not None:
        # Its pages are the generators app's (by URL name: ctr imports nothing of it).
        return redirect("generators:home")
    if roles.is_inspector(user):
        # An inspector's work starts from the reports (art. 21-22); the Núcleo's from the map.
        return redirect("intake:inspect")
    if roles.is_municipal(user):
        return redirect("nucleo:painel")
    return forbidden(
        request,
        "O seu usuário ainda não tem perfil: peça ao Núcleo Permanente de Gestão que o vincule "
        "a um transportador ou a uma área de recebimento.",
    )


# --- rule catalogue --------------------------------------------------------------------------


@declare(DataScope.PUBLIC)
@require_safe
def rule_catalogue(request):
    """Every rule of ctr.rules.REGISTRY, grouped by the stage where it runs."""
    groups = []
    for stage, stage_label in rules.Stage.LABELS.items():
        items = [
            {
                "code": rule.code,
                "severity": rule.severity,
                "severity_label": rules.Severity.LABELS.get(rule.severity, rule.severity),
                "title": rule.title,
                "description": " ".join(rule.description.split()),
                "article": rule.article,
            }
            for rule in rules.REGISTRY.values()
            if rule.stage == stage
        ]
        if items:
            groups.append({"stage": stage, "label": stage_label, "rules": items})
    return render(
        request,
        "ctr/rules.html",
        {"nav": "regras", "groups": groups, "count": len(rules.REGISTRY)},
    )


# --- confirm before an irreversible step ---------------------------------------------------


def wants_review(request) -> bool:
    """The page's forms send etapa=revisar: without JavaScript (which asks in a dialog and
    drops the field) the post first gets a confirmation page; API clients and confirmed posts
    act at once."""
    return request.POST.get("etapa") == "revisar"


def confirm_page(request, *, title, question, yes, verb, back, details=(), danger=False):
    """The same post again, without etapa, behind a "Sim" button (the no-JS confirmation)."""
    fields = [
        (name, value)
        for name, values in request.POST.lists()
        if name not in ("csrfmiddlewaretoken", "etapa")
        for value in values
    ]
    return render(
        request,
        "ctr/confirm.html",
        {
            "title": title,
            "question": question,
            "yes": yes,
            "verb": verb,
            "back": back,
            "details": details,
            "danger": danger,
            "action": request.path,
            "fields": fields,
        },
    )


# --- transporter: CTR list and detail --------------------------------------------------------


def _transporter_ctrs(request):
    return (
        roles.visible_ctrs(request.user, CTR.objects.all())
        .filter(transporter=request.transporter)
        .select_related("vehicle", "equipment", "generator", "destination_facility")
        .defer("destination_facility__area")
    )


def _querystring(request, **changes) -> str:
    params = request.GET.copy()
    for key, value in changes.items():
        params[key] = value
    return params.urlencode()


# Numbers sort by (year, sequence), not as text: sequence 1000000 comes after 999999.
BY_NUMBER = ("year", "sequence", "number")
CTR_LIST_ORDER = ListOrder(
    [
        Column("numero", "Número", BY_NUMBER, first_desc=True),
        # Newest transport first and, within a day, the latest number first.
        Column("transporte", "Transporte", ("transport_date", *BY_NUMBER), first_desc=True),
        Column("situacao", "Situação", ("status", "transport_date", *BY_NUMBER)),
        Column("veiculo", "Veículo", ("vehicle__plate", "transport_date", *BY_NUMBER)),
        Column("gerador", "Gerador", ("generator__name", "transport_date", *BY_NUMBER)),
        Column("destino", "Destino", ("destination_facility__name", "transport_date", *BY_NUMBER)),
        Column("volume", "Volume (m³)", ("total_volume_m3", *BY_NUMBER), first_desc=True),
    ],
    default="-transporte",
)


@require_safe
@transporter_required
def ctr_list(request):
    filters = CTRFilterForm(request.GET or None)
    queryset = CTR_LIST_ORDER.apply(_transporter_ctrs(request), request.GET)
    if request.GET:
        queryset = filters.apply(queryset)
    page = Paginator(queryset, PAGE_SIZE).get_page(request.GET.get("pagina"))
    query = request.GET.copy()
    query.pop("pagina", None)
    filter_keys = [k for k in query if k != "ordem"]
    return render(
        request,
        "ctr/ctr_list.html",
        {
            "nav": "ctrs",
            "section": "ctrs",
            "filters": filters,
            "page": page,
            "query": query.urlencode(),
            "sort": CTR_LIST_ORDER.headers(request.GET),
            "filtered": any(query.get(k) for k in filter_keys),
        },
        status=400 if request.GET and filters.errors else 200,
    )


@dataclass(frozen=True)
class DetailSide:
    """Whose page of a CTR it is: its menu, where "Voltar" goes and where a cancellation posts
    (who may cancel is ctr.lifecycle's, as closing.cancel reads it)."""

    nav: str
    subnav: str
    section: str
    detail_url: str
    back_url: str
    back_label: str
    cancel_url: str


TRANSPORTER_SIDE = DetailSide(
    nav="ctrs",
    subnav="ctr/_transporter_nav.html",
    section="ctrs",
    detail_url="ctr_web:ctr-detail",
    back_url="ctr_web:ctr-list",
    back_label="Voltar à lista",
    cancel_url="ctr_web:ctr-cancel",
)
OPERATOR_SIDE = DetailSide(
    nav="recebimentos",
    subnav="ctr/_operator_nav.html",
    section="stock",
    detail_url="ctr_web:onward-detail",
    back_url="ctr_web:facility-stock",
    back_label="Voltar ao estoque",
    cancel_url="ctr_web:onward-cancel",
)


def render_detail(
    request,
    ctr: CTR,
    cancel_form: ReasonForm | None = None,
    status: int = 200,
    side: DetailSide = TRANSPORTER_SIDE,
    template_form=None,
):
    return render(
        request,
        "ctr/ctr_detail.html",
        {
            "nav": side.nav,
            "section": side.section,
            "side": side,
            "ctr": ctr,
            "waste": ctr.waste.all(),
            "findings": reports.finding_rows(ctr.findings),
            "events": reports.event_rows(ctr),
            "cancel_form": cancel_form or ReasonForm(prefix="cancel"),
            "can_cancel": lifecycle.offered(CTRAction.CANCEL, ctr, request.user),
            "cancel_action": lifecycle.row(CTRAction.CANCEL),
            "pdf_url": f"/ctrs/{ctr.number}/pdf/",
            # The corrections after reception.
            "corrections": corrections.summary(ctr, request.user),
            **_route(ctr),
            # "Salvar como modelo" sent back with its error (ctr.field.template_views).
            "template_form": template_form,
        },
        status=status,
    )


def _route(ctr: CTR) -> dict:
    """The CTR's small map and the distance from its origin to its
    discharge point on the earth's surface, in km. The CTR is the page's, already scoped."""
    if ctr.origin is None or ctr.destination is None:
        return {}
    facility = ctr.destination_facility
    area = json.loads(facility.area.geojson) if facility and facility.area else None
    metres = (
        CTR.objects.filter(pk=ctr.pk)
        .annotate(metres=Distance("origin", "destination"))
        .values_list("metres", flat=True)
        .get()
        .m
    )
    return {
        "route_map": maps.ctr_route_map(
            (ctr.origin.x, ctr.origin.y), (ctr.destination.x, ctr.destination.y), area
        ),
        "route_km": br_number(Decimal(str(metres / 1000)), 1),
    }


def detail_cancel(request, ctr: CTR, side: DetailSide):
    """The cancellation form of a CTR's page: asked again without JavaScript, then done."""
    form = ReasonForm(request.POST, prefix="cancel")
    if not form.is_valid():
        return render_detail(request, ctr, form, status=400, side=side)
    if wants_review(request) and lifecycle.in_state(CTRAction.CANCEL, ctr):
        return confirm_page(
            request,
            title=f"Cancelar o {ctr.number}?",
            question="O cancelamento não pode ser desfeito: o CTR deixa de valer para o "
            "transporte.",
            details=[("Motivo", form.cleaned_data["reason"])],
            yes="Sim, cancelar o CTR",
            verb="cancelar",
            back=reverse(side.detail_url, args=[ctr.number]),
            danger=True,
        )
    closing.cancel(ctr, request.user, form.cleaned_data["reason"])
    messages.success(request, f"{ctr.number} cancelado.")
    return redirect(side.detail_url, number=ctr.number)


@require_safe
@transporter_required
def ctr_detail(request, number: str):
    ctr = get_object_or_404(_transporter_ctrs(request), number=number)
    audit.record(request, ctr, "Detalhe do CTR")
    return render_detail(request, ctr)


@require_POST
@transporter_required
@errors_back_to("ctr_web:ctr-detail", "number")  # refused (received already, say)
def ctr_cancel(request, number: str):
    return detail_cancel(
        request, get_object_or_404(_transporter_ctrs(request), number=number), TRANSPORTER_SIDE
    )
