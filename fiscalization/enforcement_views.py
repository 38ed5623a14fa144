"""Inspectors' pages for the enforcement procedure (Lei 3.978/2007 art. 21-36), municipal only,
each within the user's municipalities: the case list of the one it works in now, a
case, notice or record of another is a 404, and its steps are taken only where it acts.

Thin: the case page shows the timeline, the deadlines, what is due next and the buttons of the
steps the table (fiscalization.enforcement.actions) offers; a step's page parses its form,
calls its service and goes back to the case."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.db.models import Q
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_safe

import audit
from config.errors import DomainError, add_to_form
from config.list_order import Column, ListOrder
from ctr.documents import format_document, normalize_plate
from ctr.roles import municipal_only
from jurisdiction.scope import AUDITOR_REFUSAL

from . import deadlines, enforcement, enforcement_pdf, intake, roadside
from .enforcement import EnforcementError, OffenderData, action_row, actions
from .enforcement.authorship import Authors
from .enforcement.facts import case_of
from .enforcement_forms import STEP_FORMS
from .enforcement_forms import cases as case_forms
from .models import DumpingReport
from .models.enforcement import (
    EmbargoFineCharge,
    EnforcementCase,
    InfractionRecord,
    Notice,
    OffenderRole,
    Penalty,
)

TEMPLATES = "fiscalization/enforcement/"
# The offender's fields as open_case names them, and as the case form does.
OFFENDER_FIELDS = {
    "document": "offender_document",
    "name": "offender_name",
    "role": "offender_role",
    "location": "latitude",
}


@dataclass
class Button:
    label: str
    url: str
    primary: bool = False


def _case_url(case: EnforcementCase) -> str:
    return reverse("enforcement:case-detail", args=[case.pk])


# --- cases ------------------------------------------------------------------------------------


CASE_LIST_ORDER = ListOrder(
    [
        Column("numero", "Número", ("number",), first_desc=True),
        Column("constatado", "Constatado em", ("opened_at",), first_desc=True),
        Column("infrator", "Infrator", ("offender__name", "opened_at")),
        Column("papel", "Papel (art. 24)", ("offender__role", "opened_at")),
        Column("situacao", "Situação", ("status", "opened_at")),
    ],
    default="-constatado",
)


@require_safe
@municipal_only
def case_list(request):
    filters = case_forms.CaseFilterForm(request.GET or None)
    cases = CASE_LIST_ORDER.apply(
        EnforcementCase.objects.visible_to(request.user, current=True).select_related(
            "offender", "municipality"
        ),
        request.GET,
    )
    if filters.is_valid():
        if filters.cleaned_data["status"]:
            cases = cases.filter(status=filters.cleaned_data["status"])
        q = filters.cleaned_data["q"].strip()
        if q:
            digits = "".join(c for c in q if c.isdigit())
            match = Q(number__icontains=q) | Q(offender__name__icontains=q)
            if len(digits) >= 5:
                match |= Q(offender__document__contains=digits)
            cases = cases.filter(match)
    page = Paginator(cases, 50).get_page(request.GET.get("page"))
    now = timezone.now()
    rows = []
    for case in page:
        timeline = enforcement.case_timeline(case, now)
        rows.append({"case": case, "next": timeline.next_due[:1]})
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        TEMPLATES + "case_list.html",
        {
            "filters": filters,
            "page": page,
            "rows": rows,
            "nav": "fiscalizacao",
            "sort": CASE_LIST_ORDER.headers(request.GET),
            "query": query.urlencode(),
        },
    )


def _case_initial(params, user) -> dict:
    """What an inspector opening a case from a report (?denuncia=<protocol>) or from a
    roadside check (?placa=<plate>) already knows: the form starts filled with it (a report
    of another municipality is not known)."""
    initial: dict = {}
    protocol = intake.normalize_protocol(params.get("denuncia", ""))
    report = (
        DumpingReport.objects.visible_to(user).filter(protocol=protocol).first()
        if protocol
        else None
    )
    if report is not None:
        initial.update(
            municipality=report.municipality_id,
            dumping_report=report.protocol,
            latitude=round(report.location.y, 6),
            longitude=round(report.location.x, 6),
            description=f"Descarte irregular ({report.get_category_display().lower()}) "
            f"denunciado sob o protocolo {report.protocol}, recebido em "
            f"{timezone.localtime(report.created_at):%d/%m/%Y}. ",
        )
    plate = params.get("placa", "")
    if plate:
        try:
            answer = roadside.check_plate(normalize_plate(plate), user=user)
        except ValidationError:
            answer = None
        if answer is not None:
            initial["description"] = (
                f"Abordagem do veículo de placa {answer.display_plate} em "
                f"{answer.day:%d/%m/%Y}: {answer.headline}. {answer.explanation} "
            )
            initial["offender_role"] = OffenderRole.DRIVER
            # The case is the municipality's where the vehicle was stopped (the inspector's),
            # not the transporter's registration's.
            if answer.transporter is not None:
                initial.update(
                    transporter=answer.transporter.pk,
                    offender_name=answer.transporter.name,
                    offender_document=format_document(answer.transporter.document),
                )
            if answer.municipality is not None:
                initial["municipality"] = answer.municipality.pk
    return initial


@require_http_methods(["GET", "POST"])
@municipal_only
def case_new(request):
    if request.method == "POST":
        form = case_forms.CaseForm(request.POST, user=request.user)
    else:
        form = case_forms.CaseForm(
            initial=_case_initial(request.GET, request.user), user=request.user
        )
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        # With a report or a location the case is the municipality's where they are; the
        # choice counts only without them (fiscalization.enforcement.facts_municipality).
        chosen = None if data["dumping_report"] or data["location"] else data["municipality"]
        try:
            case = enforcement.open_case(
                municipality=chosen,
                inspector=request.user,
                offender=OffenderData(
                    name=data["offender_name"],
                    document=data["offender_document"],
                    role=data["offender_role"],
                    address=data["offender_address"],
                    transporter=data["transporter"],
                    facility=data["facility"],
                    generator=data["generator"],
                ),
                description=data["description"],
                location=data["location"],
                dumping_report=data["dumping_report"],
                obstructed_inspection=data["obstructed_inspection"],
                opened_at=data["opened_at"],
            )
        except DomainError as exc:  # the procedure's, or the municipality's
            add_to_form(form, exc, fields=OFFENDER_FIELDS)
        else:
            messages.success(request, f"Processo {case.number} aberto.")
            return redirect(_case_url(case))
    # Where the user may open a case but the municipality has no framework
    # of its own, the page says so before the form is filled.
    today = timezone.localdate()
    no_framework = [
        message
        for place in form.fields["municipality"].queryset[:50]
        if (message := enforcement.missing_framework_message(place, today))
    ]
    return render(
        request,
        TEMPLATES + "case_form.html",
        {"form": form, "nav": "fiscalizacao", "no_framework": no_framework},
        status=400 if request.method == "POST" else 200,
    )


@require_safe
@municipal_only
def generator_suggestions(request):
    """GET ?q=: up to 10 generators for the case form's "Gerador vinculado" box, as JSON
    ({"results": [{"value": "CPF/CNPJ — nome", "id": …}]}). Municipal users only (the CPFs
    are personal data, LGPD)."""
    found = case_forms.search_generators(request.GET.get("q", "")[:100], request.user)
    response = JsonResponse(
        {"results": [{"id": g.pk, "value": case_forms.generator_label(g)} for g in found]},
        json_dumps_params={"ensure_ascii": False},
    )
    response["Cache-Control"] = "private, no-store"
    return response


class Steps(list):
    """The buttons of a subject's steps, and `waiting`: the steps not possible yet, each as
    “label: reason, a partir de …”."""

    def __init__(self, buttons, waiting):
        super().__init__(buttons)
        self.waiting = waiting


def _buttons(subject, user) -> Steps:
    """The buttons of the steps the table offers `user` for `subject` (a case, notice, record,
    penalty or daily-fine charge), in its order: an inspector sees no penalty (art. 35); and
    those it would offer but for what they wait for, with the reason and the date they open.
    The table's guard decides both: a step listed is refused by the service until then."""
    buttons = [
        Button(
            action.label_for(subject),
            reverse(action.url, args=[subject.pk, *action.url_args]),
            action.is_primary(subject),
        )
        for action in enforcement.offered(subject, user)
    ]
    waiting = [wait.text(row.label_for(subject)) for row, wait in actions.waiting(subject, user)]
    return Steps(buttons, waiting)


@require_safe
@municipal_only
def case_detail(request, pk: int):
    case = get_object_or_404(
        EnforcementCase.objects.visible_to(request.user).select_related(
            "offender__transporter", "offender__facility", "offender__generator", "municipality"
        ),
        pk=pk,
    )
    audit.record(request, case, "Processo de fiscalização: detalhe")
    now = timezone.now()
    timeline = enforcement.case_timeline(case, now)
    notices = []
    for notice in case.notices.order_by("issued_at"):
        due = enforcement.notice_due(notice)
        notices.append(
            {
                "notice": notice,
                "due": due,
                "due_text": deadlines.br_deadline(due) if due else "",
                "actions": _buttons(notice, request.user),
            }
        )
    records = []
    for record in case.records.order_by("drawn_up_at").prefetch_related(
        "items", "penalties__breaches"
    ):
        fine = enforcement.record_fine(record)
        records.append(
            {
                "record": record,
                "fine": fine,
                "appeal_last_day": enforcement.appeal_last_day(record),
                "payment_last_day": enforcement.payment_last_day(record),
                "discount_last_day": enforcement.discount_last_day(record),
                "paid_late": enforcement.paid_late(record),
                "appeal": record.appeal if enforcement.has_appeal(record) else None,
                "actions": _buttons(record, request.user),
                "penalties": [
                    {
                        "penalty": p,
                        "breach_fine": enforcement.embargo_fine_ufesp(p)
                        if case.framework.embargo_daily_fine is not None
                        else None,
                        "actions": _buttons(p, request.user),
                        "charges": [
                            {
                                "charge": c,
                                "last_day": enforcement.charge_last_day(c),
                                "days": len(c.breaches.all()),
                                "actions": _buttons(c, request.user),
                            }
                            for c in p.charges.prefetch_related("breaches")
                        ],
                    }
                    for p in record.penalties.order_by("starts_on")
                ],
            }
        )
    return render(
        request,
        TEMPLATES + "case_detail.html",
        {
            "case": case,
            "offender_document": format_document(case.offender.document),
            "recidivist": enforcement.is_recidivist(case),
            "unit": enforcement.unit_label(case.framework),
            "earlier_records": enforcement.earlier_final_records(case),
            "earlier_suspension": enforcement.earlier_suspension(case),
            "timeline": timeline,
            "notices": notices,
            "records": records,
            "actions": _buttons(case, request.user),
            "nav": "fiscalizacao",
        },
    )


# --- the authority's queue: records whose proposed fine awaits its decision (art. 35) ----------


@require_http_methods(["GET", "POST"])
@municipal_only
def records_awaiting(request):
    """The records of the municipality the user works in now whose fine, proposed by the
    inspector, awaits the authority (Lei 3.978/2007 art. 35), oldest first; the authority
    applies each in one step (POST `record`: the fine applied now, by it)."""
    status, error = 200, ""
    if request.method == "POST":
        try:
            pk = int(request.POST.get("record", ""))
        except ValueError:
            pk, status, error = None, 400, "Auto de infração inválido."
        if pk is not None:
            # The queue's act is the current municipality's, as its list: a record of another
            # municipality is not in it (404), even for a person who is that one's authority
            # too (it chooses that municipality to apply it there).
            record = get_object_or_404(
                InfractionRecord.objects.visible_to(request.user, current=True).select_related(
                    "case"
                ),
                pk=pk,
            )
            try:
                enforcement.apply_fine(record, by=request.user)
            except enforcement.AuthorityRequired as exc:
                return render(request, "ctr/forbidden.html", {"message": exc.message}, status=403)
            except EnforcementError as exc:
                status, error = 400, f"Auto {record.number}: {exc.message}"
            else:
                messages.success(request, f"Multa do auto {record.number} aplicada (art. 35).")
                return redirect("enforcement:records-awaiting")
    queue = enforcement.awaiting_authority(
        InfractionRecord.objects.visible_to(request.user, current=True)
    ).select_related("case__offender", "case__framework")
    queue = queue.prefetch_related("items")
    page = Paginator(queue.order_by("drawn_up_at", "pk"), 50).get_page(request.GET.get("page"))
    apply = actions.ACTIONS["apply_fine"]
    authors = Authors()
    rows = [
        {
            "record": record,
            "inspector": authors.text(record, "drawn_up") or "—",
            "unit": enforcement.unit_label(record.case.framework),
            "items": ", ".join(item.code for item in record.items.all()),
            "can_apply": apply.permits(request.user, record) and apply.allows(record),
        }
        for record in page
    ]
    return render(
        request,
        TEMPLATES + "records_awaiting.html",
        {"page": page, "rows": rows, "error": error, "nav": "fiscalizacao"},
        status=status,
    )


# --- the steps' pages (one per row of fiscalization.enforcement.actions) ------------------------

# Each kind of subject as a step's page loads it, and the case it belongs to.
# The case of each subject is facts.case_of's to find.
PAGE_SUBJECTS = {
    action_row.CASE: EnforcementCase.objects.select_related("offender"),
    action_row.NOTICE: Notice.objects.select_related("case__offender"),
    action_row.RECORD: InfractionRecord.objects.select_related("case__offender"),
    action_row.PENALTY: Penalty.objects.select_related("record__case__offender"),
    action_row.CHARGE: EmbargoFineCharge.objects.select_related("penalty__record__case__offender"),
}
# Who may take a step (Action.who), as a view decorator.
ROLE_CHECKS = {action_row.MUNICIPAL: municipal_only}


def step_view(action: action_row.Action):
    """The view of a step's page: GET shows its form, POST calls its service."""

    @require_http_methods(["GET", "POST"])
    @ROLE_CHECKS[action.who]
    def view(request, pk: int, **url_kwargs):
        return step_page(request, pk, action.url, *url_kwargs.values())

    return view


def step_page(request, pk: int, url: str, *url_args: str):
    action = enforcement.for_url(url, *url_args)
    if action is None:
        raise Http404
    # Another municipality's case does not exist for the user.
    subject = get_object_or_404(PAGE_SUBJECTS[action.subject].visible_to(request.user), pk=pk)
    if not action.permits(request.user, subject):
        # Who may take the step and why (art. 35: the case's framework names the authority;
        # the auditor reads the case and takes no step), before the page shows anything of it.
        message = (
            action_row.authority_refusal(action.needs(subject), subject)
            if action.needs(subject)
            else AUDITOR_REFUSAL
        )
        return render(request, "ctr/forbidden.html", {"message": message}, status=403)
    if not action.has_page(subject):
        raise Http404
    form = STEP_FORMS[action.form](request.POST or None, subject=subject)
    if request.method == "POST" and form.is_valid():
        try:
            service = getattr(enforcement, action.name)
            result = service(subject, **form.arguments(), by=request.user)
        except EnforcementError as exc:
            add_to_form(form, exc)
        else:
            messages.success(request, form.done(result))
            return redirect(_case_url(case_of(subject)))
    return render(
        request,
        action.template,
        {
            "form": form,
            "case": case_of(subject),
            "title": form.heading(),
            "lead": form.intro(),
            "legal": form.legal(action.legal),
            "submit": form.submit,
            "notes": form.notes(),
            "nav": "fiscalizacao",
        },
        status=400 if request.method == "POST" else 200,
    )


# --- printing ---------------------------------------------------------------------------------


@require_safe
@municipal_only
def notice_pdf(request, pk: int):
    notice = get_object_or_404(
        Notice.objects.visible_to(request.user).select_related(
            "case__offender", "case__municipality"
        ),
        pk=pk,
    )
    return _pdf(enforcement_pdf.notice_pdf(notice), f"notificacao-{notice.number}.pdf")


@require_safe
@municipal_only
def record_pdf(request, pk: int):
    record = get_object_or_404(
        InfractionRecord.objects.visible_to(request.user).select_related(
            "case__offender", "case__municipality"
        ),
        pk=pk,
    )
    return _pdf(enforcement_pdf.record_pdf(record), f"auto-{record.number}.pdf")


def _pdf(content: bytes, filename: str) -> HttpResponse:
    response = HttpResponse(content, content_type="application/pdf")
    response["Content-Disposition"] = f'inline; filename="{filename}"'
    return response
