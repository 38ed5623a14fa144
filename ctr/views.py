"""Web pages of the CTR (pt-BR) for transporters and receiving-facility operators, the sign-in
pages and the public rule catalogue. Thin: parse with ctr.forms, call ctr.services, render."""

from __future__ import annotations

import datetime
import functools
import json
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.gis.db.models.functions import Distance
from django.core.paginator import Paginator
from django.db.models import Exists, OuterRef, Q
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.views.decorators.http import require_POST, require_safe

import audit
from config import csv_reader
from config.br import br_number
from config.csv_safety import csv_response
from config.errors import add_to_form, errors_back_to
from config.list_order import Column, ListOrder
from jurisdiction.access import DataScope, declare
from maps import services as maps
from pev_network.models import ReceivingFacility, waste_class_short

from . import (
    fleet,
    lifecycle,
    reports,
    roles,
    rules,
    services,
)
from .bulk import csv_format, csv_import
from .custody import stock
from .errors import CTRError, RuleViolation
from .field import corrections
from .field import templates as ctr_templates
from .forms import (
    FINDING_FIELDS,
    ONWARD_FINDING_FIELDS,
    WASTE_LINE_RE,
    CTRFilterForm,
    CTRForm,
    EquipmentForm,
    ImportForm,
    OnwardForm,
    OnwardWasteFormSet,
    PeriodForm,
    ProcessingForm,
    ReasonForm,
    ReceiveForm,
    SignInForm,
    VehicleForm,
    WasteFormSet,
)
from .models import (
    CTR,
    CorrectionSide,
    CorrectionStatus,
    CTRAction,
    CTRCorrection,
    CTRStatus,
    Equipment,
    FacilityOperator,
    OnSiteProcessing,
    Vehicle,
)

PAGE_SIZE = 25
RECEPTION_PAGE_SIZE = 50
RECENTLY_CLOSED = 30  # closed CTRs shown below the open ones on /recebimentos/

FORM_LABELS = {
    "transport_date": "Data do transporte",
    "vehicle": "Veículo",
    "equipment": "Equipamento",
    "generator_name": "Nome do gerador",
    "generator_document": "CPF/CNPJ do gerador",
    "worksite_address": "Endereço da obra",
    "worksite_neighbourhood": "Bairro",
    "origin_lon": "Longitude da origem",
    "origin_lat": "Latitude da origem",
    "destination_lon": "Longitude do destino",
    "destination_lat": "Latitude do destino",
    "destination_facility": "Área de destino",
    "transporter": "Transportador",
}


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
_BY_NUMBER = ("year", "sequence", "number")
CTR_LIST_ORDER = ListOrder(
    [
        Column("numero", "Número", _BY_NUMBER, first_desc=True),
        # Newest transport first and, within a day, the latest number first.
        Column("transporte", "Transporte", ("transport_date", *_BY_NUMBER), first_desc=True),
        Column("situacao", "Situação", ("status", "transport_date", *_BY_NUMBER)),
        Column("veiculo", "Veículo", ("vehicle__plate", "transport_date", *_BY_NUMBER)),
        Column("gerador", "Gerador", ("generator__name", "transport_date", *_BY_NUMBER)),
        Column("destino", "Destino", ("destination_facility__name", "transport_date", *_BY_NUMBER)),
        Column("volume", "Volume (m³)", ("total_volume_m3", *_BY_NUMBER), first_desc=True),
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
    (who may cancel is ctr.lifecycle's, as services.cancel reads it)."""

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
            # "Salvar como modelo" sent back with its error (ctr.template_views).
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


def _cancel(request, ctr: CTR, side: DetailSide):
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
    services.cancel(ctr, request.user, form.cleaned_data["reason"])
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
    return _cancel(
        request, get_object_or_404(_transporter_ctrs(request), number=number), TRANSPORTER_SIDE
    )


# --- transporter: issuing --------------------------------------------------------------------


def _rule_message(finding: rules.Finding):
    """The finding's message and, linked to the catalogue, its rule and article."""
    return format_html(
        '{} <a class="rule-ref" href="{}#{}">{} · {}</a>',
        finding.message,
        reverse("ctr_web:rules"),
        finding.code,
        finding.code,
        finding.article,
    )


def _place_error(
    form, waste_forms, areas, top, field_name: str | None, message, fields=FINDING_FIELDS
):
    """Put one message beside the form field its `field_name` (an API name) concerns;
    `fields` maps those names to the form's, and what the form has no field for goes on top."""
    field_name = field_name or ""
    target = fields.get(field_name)
    line = WASTE_LINE_RE.match(field_name)
    if line and int(line.group(1)) < len(waste_forms):
        waste_forms[int(line.group(1))].add_error("waste_class", message)
    elif target in ("origin", "destination", "waste"):
        areas[target].append(message)
    elif target in form.fields:
        form.add_error(target, message)
    else:
        top.append(message)


@dataclass
class IssueAttempt:
    """What an issue form's post came to: the CTR, or the page's status and every problem in
    its place (`areas`: the origin, destination and waste boxes; `top`: above the form)."""

    ctr: CTR | None = None
    status: int = 200
    areas: dict = field(default_factory=lambda: defaultdict(list))
    top: list = field(default_factory=list)
    warnings: list = field(default_factory=list)

    def context(self, form, formset) -> dict:
        return {
            "form": form,
            "formset": formset,
            "areas": dict(self.areas),
            "summary": _error_summary(form, formset, self.areas, self.top)
            if self.status != 200
            else [],
            "warnings": self.warnings,
        }


def _issue_forms(request, make_form, make_formset):
    """The issue form and its waste lines, bound to the post (unbound on GET and HEAD); None
    for another method."""
    if request.method == "POST":
        return make_form(request.POST), make_formset(request.POST)
    if request.method in ("GET", "HEAD"):
        return make_form(), make_formset()
    return None


def _try_issue(request, form, formset, act, fields=FINDING_FIELDS) -> IssueAttempt:
    """On a post, validate the form and its waste lines and run `act(warnings)` (issue the
    CTR, or return None when the form must ask something first, with what it found among the
    warnings); a refusal puts every finding beside its field (errors, through `fields`) or
    among the warnings."""
    attempt = IssueAttempt()
    if request.method != "POST":
        return attempt
    attempt.status = 400
    form_ok = form.is_valid()
    if not (formset.is_valid() and form_ok):
        return attempt
    place = functools.partial(
        _place_error, form, formset.filled_forms(), attempt.areas, attempt.top, fields=fields
    )
    try:
        attempt.ctr = act(attempt.warnings)
    except RuleViolation as violation:
        attempt.status = 422
        for finding in violation.findings:
            if finding.severity == rules.Severity.ERROR:
                place(finding.field, _rule_message(finding))
            else:
                attempt.warnings.append(_rule_message(finding))
    except CTRError as error:
        attempt.status = error.status if error.status in (400, 409, 422) else 400
        place(error.field, error.message)
    return attempt


def _home_ibge(transporter) -> str:
    """The municipality the issue form's map opens on: the transporter's first licence's."""
    home = transporter.home_municipality()
    return home.ibge_code if home else settings.DEFAULT_MUNICIPALITY_IBGE


def _map_context(ibge_code: str) -> dict:
    """The issue forms' map of the licensed network around a municipality (its IBGE code)."""
    destination_map = maps.ctr_form_map(ibge_code)
    return {
        "map": destination_map.parts,
        "facilities": destination_map.facilities,
        "facility_points": destination_map.facility_points,
        "legend": destination_map.legend,
    }


def _error_summary(form, formset, areas, top) -> list[dict]:
    """Every problem of the submission, each linked to its field (for the box at the top)."""
    summary = [{"anchor": "", "label": "", "message": m} for m in top]
    summary += [{"anchor": "", "label": "", "message": m} for m in form.non_field_errors()]
    for name, errors in form.errors.items():
        if name == "__all__":
            continue
        for message in errors:
            summary.append(
                {"anchor": f"id_{name}", "label": FORM_LABELS.get(name, name), "message": message}
            )
    for area, anchor, label in (
        ("origin", "origem", "Origem"),
        ("destination", "destino", "Destino"),
    ):
        summary += [{"anchor": anchor, "label": label, "message": m} for m in areas[area]]
    waste_messages = list(formset.non_form_errors()) + areas["waste"]
    summary += [{"anchor": "residuos", "label": "Resíduos", "message": m} for m in waste_messages]
    for index, errors in enumerate(formset.errors):
        for name, messages_ in errors.items():
            label = f"Resíduo {index + 1}"
            for message in messages_:
                summary.append(
                    {"anchor": f"id_waste-{index}-{name}", "label": label, "message": message}
                )
    return summary


@transporter_required
def ctr_new(request):
    transporter = request.transporter
    # CTR templates: ?modelo=<id> fills the form from one of the transporter's templates.
    template, initial, waste = ctr_templates.requested(transporter, request.GET.get("modelo"))
    forms_ = _issue_forms(
        request,
        lambda *data: CTRForm(*data, transporter=transporter, initial=initial),
        lambda *data: WasteFormSet(*data, prefix="waste", initial=None if data else waste),
    )
    if forms_ is None:
        return HttpResponse(status=405, headers={"Allow": "GET, HEAD, POST"})
    form, formset = forms_

    def act(warnings: list):
        issue_request = form.to_request(formset.lines())
        registered = services.registered_generator_name(issue_request.generator)
        name = form.generator_name_to_use(registered)
        if name is None:
            # The document is registered under another name: ask which one goes on the CTR,
            # and say now what else the rules find, so that one more submission is enough.
            form.ask_generator_name(registered)
            _, findings = services.check(transporter, issue_request)
            if rules.has_errors(findings):
                raise RuleViolation(findings)
            warnings.extend(_rule_message(f) for f in findings)
            return None
        issue_request.generator.name = name
        return services.issue(transporter, request.user, issue_request)

    attempt = _try_issue(request, form, formset, act)
    if attempt.ctr is not None:
        messages.success(request, f"{attempt.ctr.number} emitido.")
        return redirect("ctr_web:ctr-detail", number=attempt.ctr.number)
    context = {
        "nav": "ctrs",
        "section": "new",
        **attempt.context(form, formset),
        "has_fleet": form.fields["vehicle"].queryset.exists(),
        **_map_context(_home_ibge(transporter)),
        # The templates come first on a fresh form: a repeated load in one tap.
        "ctr_templates": ctr_templates.of(transporter) if not (template or form.is_bound) else (),
        "ctr_template": template,
    }
    return render(request, "ctr/ctr_form.html", context, status=attempt.status)


# --- transporter: CSV import -----------------------------------------------------------------


@transporter_required
def ctr_import(request):
    report = None
    file_error = ""
    file_rows = ()
    status = 200
    if request.method == "POST":
        form = ImportForm(request.POST, request.FILES)
        if form.is_valid():
            upload = form.cleaned_data["file"]
            try:
                # Refused before it is read into memory.
                csv_reader.check_size(upload.size)
                data = upload.read(csv_reader.MAX_BYTES + 1)
                report = csv_import.import_ctrs(
                    data,
                    request.transporter,
                    request.user,
                    dry_run=form.cleaned_data["dry_run"],
                )
            except csv_reader.CSVFileError as error:
                file_error = error.message
                file_rows = error.rows  # the rows that refuse the whole file, if any
                status = error.status
        else:
            status = 400
    elif request.method in ("GET", "HEAD"):
        form = ImportForm()
    else:
        return HttpResponse(status=405, headers={"Allow": "GET, HEAD, POST"})
    facilities = (
        ReceivingFacility.objects.licensed_on(timezone.localdate())
        .defer("area")
        .order_by("kind", "name")
    )
    return render(
        request,
        "ctr/ctr_import.html",
        {
            "nav": "ctrs",
            "section": "import",
            "form": form,
            "report": report,
            "file_error": file_error,
            "file_rows": file_rows,
            "columns": [
                {
                    "name": name,
                    "portuguese": csv_format.PORTUGUESE_NAMES[name],
                    "help": csv_format.COLUMN_HELP[name],
                    "required": name in csv_format.REQUIRED_COLUMNS,
                }
                for name in csv_format.COLUMNS
            ],
            "max_rows": br_number(csv_reader.MAX_ROWS),
            "max_mb": csv_reader.MAX_BYTES // (1024 * 1024),
            "facilities": facilities,
        },
        status=status,
    )


@require_safe
@transporter_required
def ctr_import_example(request):
    # The importer drops the BOM csv_response puts for Excel.
    return csv_response(
        "exemplo-ctrs.csv",
        *csv_format.example_table(
            csv_import.example_rows(request.transporter, timezone.localdate())
        ),
    )


# --- transporter: fleet ----------------------------------------------------------------------


def _fleet_page(request, form_class, add, section: str, what: str, order: str):
    """The list of the transporter's vehicles or equipment and the form that adds one; `add`
    (ctr.fleet) holds the rules and writes, scoped to the transporter of the request."""
    transporter = request.transporter
    model = form_class.model
    status = 200
    if request.method == "POST":
        form = form_class(request.POST)
        if form.is_valid():
            try:
                item = add(transporter, **form.cleaned_data)
            except fleet.FleetError as error:
                add_to_form(form, error)
            else:
                label = item.code if model is Equipment else str(item)
                messages.success(request, f"{what} {label} cadastrado.")
                return redirect(f"ctr_web:{section}")
        status = 400
    else:
        form = form_class()
    return render(
        request,
        f"ctr/{section}.html",
        {
            "nav": "ctrs",
            "section": section,
            "form": form,
            "items": model.objects.filter(transporter=transporter).order_by("-active", order),
        },
        status=status,
    )


@transporter_required
def vehicles(request):
    return _fleet_page(request, VehicleForm, fleet.add_vehicle, "vehicles", "Veículo", "plate")


@transporter_required
def equipment(request):
    return _fleet_page(
        request, EquipmentForm, fleet.add_equipment, "equipment", "Equipamento", "code"
    )


def _set_active(request, model, pk: int, active: bool, redirect_to: str, what: str):
    item = get_object_or_404(model, pk=pk, transporter=request.transporter)
    if item.active != active:
        item.active = active
        item.save(update_fields=["active"])
    label = item.code if isinstance(item, Equipment) else str(item)
    state = "reativado" if active else "desativado"
    messages.success(request, f"{what} {label} {state}.")
    return redirect(redirect_to)


@require_POST
@transporter_required
def vehicle_active(request, pk: int, active: bool):
    return _set_active(request, Vehicle, pk, active, "ctr_web:vehicles", "Veículo")


@require_POST
@transporter_required
def equipment_active(request, pk: int, active: bool):
    return _set_active(request, Equipment, pk, active, "ctr_web:equipment", "Equipamento")


# --- facility operators ----------------------------------------------------------------------


def _facility_ctrs(request):
    return (
        roles.visible_ctrs(request.user, CTR.objects.all())
        .filter(destination_facility=request.facility)
        .select_related("transporter", "vehicle", "equipment", "generator", "worksite")
        .prefetch_related("waste")
    )


RECEPTION_ORDER = ListOrder(
    [
        Column("numero", "Número", _BY_NUMBER, first_desc=True),
        Column("placa", "Placa", ("vehicle__plate", "created_at")),
        Column("transportador", "Transportador", ("transporter__name", "created_at")),
        Column("volume", "m³", ("total_volume_m3", "created_at"), first_desc=True),
        # The load that was issued last is the one most likely at the gate now.
        Column("emissao", "Emitido em", ("created_at",), first_desc=True),
    ],
    default="-emissao",
)


def _render_receptions(request, bound: dict | None = None, alert: str = "", status: int = 200):
    """The open CTRs (newest issued first, or by the column chosen), then the recently closed
    ones; both narrowed by ?busca= (number or plate). `bound` holds the submitted forms of one
    CTR (number, receive form, refuse form) to show their errors."""
    bound = bound or {}
    search = request.GET.get("busca", "").strip()[:40]
    match = reports.lookup_q(search)
    base = _facility_ctrs(request)
    if match is not None:
        base = base.filter(match)
    # What the operator may still receive or refuse (ctr.lifecycle), then what it closed.
    receivable = Q(status__in=lifecycle.row(CTRAction.RECEIVE).allowed_from)
    issued = RECEPTION_ORDER.apply(base.filter(receivable), request.GET)
    page = Paginator(issued, RECEPTION_PAGE_SIZE).get_page(request.GET.get("pagina"))
    rows = []
    for ctr in page:
        mine = bound.get("number") == ctr.number
        rows.append(
            {
                "ctr": ctr,
                # "Classe A", not "Classe A (agregados: concreto, tijolo, solo…)": one line.
                "classes": sorted(
                    {line.get_waste_class_display().split(" (")[0] for line in ctr.waste.all()}
                ),
                "receive_form": bound["receive"]
                if mine and bound.get("receive")
                else ReceiveForm(
                    prefix=f"r-{ctr.pk}", initial={"received_volume_m3": ctr.total_volume_m3}
                ),
                "refuse_form": bound["refuse"]
                if mine and bound.get("refuse")
                else ReasonForm(prefix=f"x-{ctr.pk}"),
                "open": mine or (match is not None and page.paginator.count == 1),
                "open_refuse": mine and bound.get("refuse") is not None,
            }
        )
    # A received CTR whose correction waits for this operator's decision
    # comes first and says so, however long ago it was closed.
    to_decide = CTRCorrection.objects.filter(
        ctr=OuterRef("pk"),
        status=CorrectionStatus.PROPOSED,
        proposed_side=CorrectionSide.TRANSPORTER,
    )
    closed = (
        base.filter(~receivable)
        .annotate(correction_to_decide=Exists(to_decide))
        .order_by("-correction_to_decide", "-closed_at", "-pk")[:RECENTLY_CLOSED]
    )
    query = request.GET.copy()
    query.pop("pagina", None)
    return render(
        request,
        "ctr/receptions.html",
        {
            "nav": "recebimentos",
            "section": "receptions",
            "facility": request.facility,
            "page": page,
            "rows": rows,
            "receive_action": lifecycle.row(CTRAction.RECEIVE),
            "refuse_action": lifecycle.row(CTRAction.REFUSE),
            "closed": closed,
            "alert": alert,
            "search": search,
            "searched": match is not None,
            "sort": RECEPTION_ORDER.headers(request.GET),
            "query": query.urlencode(),
        },
        status=status,
    )


@require_safe
@operator_required
def receptions(request):
    return _render_receptions(request)


@require_POST
@operator_required
def reception_action(request, number: str, action: str):
    ctr = get_object_or_404(_facility_ctrs(request), number=number)
    if action == "receive":
        form = ReceiveForm(request.POST, prefix=f"r-{ctr.pk}")
        bound = {"number": ctr.number, "receive": form}
    else:
        form = ReasonForm(request.POST, prefix=f"x-{ctr.pk}")
        bound = {"number": ctr.number, "refuse": form}
    if not form.is_valid():
        return _render_receptions(
            request, bound, f"O {ctr.number} não foi registrado: corrija o formulário.", 400
        )
    if wants_review(request) and ctr.status == CTRStatus.ISSUED:
        back = reverse("ctr_web:receptions") + f"?busca={ctr.number}"
        if action == "receive":
            volume = br_number(form.cleaned_data["received_volume_m3"], grouping=False)
            return confirm_page(
                request,
                title=f"Confirmar o recebimento do {ctr.number}?",
                question="Depois de confirmado, o recebimento não pode ser desfeito.",
                details=[
                    ("Transportador", ctr.transporter.name),
                    ("Veículo", str(ctr.vehicle)),
                    ("Declarado", f"{br_number(ctr.total_volume_m3, grouping=False)} m³"),
                    ("Recebido", f"{volume} m³"),
                ],
                yes="Sim, confirmar o recebimento",
                verb="confirmar",
                back=back,
            )
        return confirm_page(
            request,
            title=f"Recusar a carga do {ctr.number}?",
            question="A recusa encerra o CTR e não pode ser desfeita.",
            details=[
                ("Transportador", ctr.transporter.name),
                ("Motivo", form.cleaned_data["reason"]),
            ],
            yes="Sim, recusar a carga",
            verb="recusar",
            back=back,
            danger=True,
        )
    try:
        if action == "receive":
            ctr = services.receive(
                ctr,
                request.user,
                form.cleaned_data["received_volume_m3"],
                location=form.location(),
                note=form.cleaned_data["note"],
            )
        else:
            ctr = services.refuse(ctr, request.user, form.cleaned_data["reason"])
    except RuleViolation as violation:
        text = " ".join(f.message for f in violation.findings)
        return _render_receptions(request, bound, text, violation.status)
    except CTRError as error:
        # A colleague may have received it first (409): say so plainly, on the same page.
        if error.field and error.field in form.fields:
            form.add_error(error.field, error.message)
            return _render_receptions(request, bound, error.message, error.status)
        return _render_receptions(request, {}, error.message, error.status)
    if action == "receive":
        messages.success(request, f"Recebimento do {ctr.number} confirmado.")
        for finding in ctr.findings:
            if finding.get("code") in ("RECEIVED_VOLUME_MISMATCH", "RECEPTION_AWAY_FROM_FACILITY"):
                messages.warning(request, f"Aviso: {finding['message']}")
    else:
        messages.success(request, f"{ctr.number} recusado.")
    return redirect("ctr_web:receptions")


# --- facility operators: onward CTRs and the stock --------------------------------------------


def _onward_ctrs(request):
    """The onward CTRs leaving the operator's facility (art. 3 III)."""
    return (
        roles.visible_ctrs(request.user, CTR.objects.all())
        .filter(origin_facility=request.facility)
        .select_related("transporter", "vehicle", "equipment", "generator", "destination_facility")
        .defer("destination_facility__area")
    )


def _stock_rows(facility, day) -> list[dict]:
    """Each class the facility received up to `day`: its stock then and how much of it may
    leave (plus the municipality's sorting tolerance), as the onward rules count them."""
    return [
        {
            "waste_class": waste_class,
            "stock": line.stock_m3,
            "allowed": line.allowed_m3.quantize(Decimal("0.001")),
            "tolerance": line.tolerance_pct,
        }
        for waste_class, line in sorted(services.origin_stock(facility, day).items())
        if line.received_m3 > 0
    ]


def _in_stock(rows: list[dict]) -> set[str]:
    return {row["waste_class"] for row in rows if row["stock"] > 0}


@operator_required
def onward_new(request):
    """ "Emitir CTR de saída": sorted waste leaving the operator's facility for a licensed
    destination, carried by a registered transporter (services.issue_onward)."""
    facility = request.facility
    operator = (
        FacilityOperator.objects.select_related("generator").filter(facility=facility).first()
    )
    operator = operator.generator if operator else None
    stock_rows = _stock_rows(facility, timezone.localdate())
    in_stock = _in_stock(stock_rows)
    forms_ = _issue_forms(
        request,
        lambda *data: OnwardForm(*data, facility=facility, operator=operator),
        lambda *data: OnwardWasteFormSet(*data, prefix="waste", form_kwargs={"in_stock": in_stock}),
    )
    if forms_ is None:
        return HttpResponse(status=405, headers={"Allow": "GET, HEAD, POST"})
    form, formset = forms_
    attempt = _try_issue(
        request,
        form,
        formset,
        lambda warnings: services.issue_onward(
            request.user, form.cleaned_data["transporter"].pk, form.to_request(formset.lines())
        ),
        ONWARD_FINDING_FIELDS,
    )
    if attempt.ctr is not None:
        messages.success(request, f"{attempt.ctr.number} emitido.")
        return redirect("ctr_web:onward-detail", number=attempt.ctr.number)
    municipality = facility.municipality
    context = {
        "nav": "recebimentos",
        "section": "onward",
        "facility": facility,
        "operator": operator,
        "stock_rows": stock_rows,
        **attempt.context(form, formset),
        **_map_context(municipality.ibge_code if municipality else ""),
    }
    return render(request, "ctr/onward_form.html", context, status=attempt.status)


@require_safe
@operator_required
def onward_detail(request, number: str):
    ctr = get_object_or_404(_onward_ctrs(request), number=number)
    audit.record(request, ctr, "Detalhe do CTR de saída")
    return render_detail(request, ctr, side=OPERATOR_SIDE)


@require_POST
@operator_required
@errors_back_to("ctr_web:onward-detail", "number")  # refused (received already, say)
def onward_cancel(request, number: str):
    return _cancel(request, get_object_or_404(_onward_ctrs(request), number=number), OPERATOR_SIDE)


ONWARD_PAGE_SIZE = 25
STOCK_DEFAULT_DAYS = 30


def _render_stock(request, processing: ProcessingForm | None = None, status: int = 200):
    """The facility's stock page: the balance per class over the period asked (the last 30
    days by default: on the first of a month "this month" would be one day), the stale-stock
    alerts of today, the onward CTRs and the on-site processing of the period, and the form
    that records processing."""
    facility = request.facility
    today = timezone.localdate()
    date_from, date_to = today - datetime.timedelta(days=STOCK_DEFAULT_DAYS - 1), today
    period = PeriodForm(request.GET or None, initial={"date_from": date_from, "date_to": date_to})
    if period.is_bound:
        if period.is_valid():
            date_from, date_to = period.cleaned_data["date_from"], period.cleaned_data["date_to"]
        elif status == 200:
            status = 400
    stock_rows = _stock_rows(facility, today)
    if processing is None:
        processing = ProcessingForm(prefix="b", in_stock=_in_stock(stock_rows))
    onward = _onward_ctrs(request).order_by("-transport_date", "-year", "-sequence")
    processed = OnSiteProcessing.objects.filter(facility=facility).select_related("recorded_by")
    if date_from:
        onward = onward.filter(transport_date__gte=date_from)
        processed = processed.filter(day__gte=date_from)
    if date_to:
        onward = onward.filter(transport_date__lte=date_to)
        processed = processed.filter(day__lte=date_to)
    page = Paginator(onward, ONWARD_PAGE_SIZE).get_page(request.GET.get("pagina"))
    query = request.GET.copy()
    query.pop("pagina", None)
    return render(
        request,
        "ctr/facility_stock.html",
        {
            "nav": "recebimentos",
            "section": "stock",
            "facility": facility,
            "period": period,
            "date_from": date_from,
            "date_to": date_to,
            "today": today,
            "balance": stock.balance(facility, date_from, date_to),
            "stale": stock.stale_stock(facility, today),
            "alert_days": stock.alert_days_of(facility, today),
            "stock_rows": stock_rows,
            "page": page,
            "query": query.urlencode(),
            "processed": processed[:100],
            "processing": processing,
        },
        status=status,
    )


@require_safe
@operator_required
def facility_stock(request):
    return _render_stock(request)


@require_POST
@operator_required
def processing_new(request):
    """Record volume recycled or reused at the facility (services.record_processing); its
    refusals go back to their fields on the stock page, with what was typed."""
    in_stock = _in_stock(_stock_rows(request.facility, timezone.localdate()))
    form = ProcessingForm(request.POST, prefix="b", in_stock=in_stock)
    if not form.is_valid():
        return _render_stock(request, form, status=400)
    data = form.cleaned_data
    try:
        done = services.record_processing(
            request.user,
            request.facility,
            data["waste_class"],
            data["volume_m3"],
            data["day"],
            data["kind"],
            data["note"].strip(),
        )
    except CTRError as error:
        add_to_form(form, error)
        return _render_stock(request, form, status=error.status)
    messages.success(
        request,
        f"Beneficiamento registrado: {br_number(done.volume_m3, grouping=False)} m³ de "
        f"{waste_class_short(done.waste_class)} em {done.day:%d/%m/%Y} "
        f"({done.get_kind_display().lower()}).",
    )
    return redirect("ctr_web:facility-stock")
