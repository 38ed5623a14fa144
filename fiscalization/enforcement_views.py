"""Inspectors' pages for the enforcement procedure (Lei 3.978/2007 art. 21-36), municipal only.

Thin: each view parses a form, calls one service of fiscalization.enforcement and redirects to
the case, whose page shows the timeline, the deadlines and what is due next."""

from __future__ import annotations

from collections.abc import Callable
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
from config.errors import add_to_form
from config.list_order import Column, ListOrder
from ctr.documents import format_document, normalize_plate
from ctr.reports import br_date, br_money, br_number
from maps.nucleo_views import municipal_only

from . import deadlines, enforcement, enforcement_pdf, fines, intake, roadside
from . import enforcement_forms as forms
from .enforcement import EnforcementError, OffenderData
from .models import DumpingReport
from .models.enforcement import (
    CaseStatus,
    DeliveryMethod,
    EnforcementCase,
    InfractionRecord,
    Notice,
    OffenderRole,
    Penalty,
    PenaltyKind,
    RecordStatus,
)

TEMPLATES = "fiscalization/enforcement/"
ACTION_TEMPLATE = TEMPLATES + "action_form.html"
# The offender's fields as open_case names them, and as the case form does.
OFFENDER_FIELDS = {
    "document": "offender_document",
    "name": "offender_name",
    "role": "offender_role",
}


@dataclass
class Action:
    label: str
    url: str
    primary: bool = False


def _case_url(case: EnforcementCase) -> str:
    return reverse("enforcement:case-detail", args=[case.pk])


def _act(
    request,
    *,
    form,
    case: EnforcementCase,
    title: str,
    call: Callable[[dict], object],
    success: Callable[[object], str],
    lead: str = "",
    legal: str = "",
    submit: str = "Registrar",
    context: dict | None = None,
):
    """The common shape of an action: validate, call the service, report its Portuguese error
    next to the field it names, or go back to the case with a message."""
    if request.method == "POST" and form.is_valid():
        try:
            result = call(form.cleaned_data)
        except EnforcementError as exc:
            add_to_form(form, exc)
        else:
            messages.success(request, success(result))
            return redirect(_case_url(case))
    return render(
        request,
        ACTION_TEMPLATE,
        {
            "form": form,
            "case": case,
            "title": title,
            "lead": lead,
            "legal": legal,
            "submit": submit,
            "nav": "fiscalizacao",
            **(context or {}),
        },
        status=400 if request.method == "POST" else 200,
    )


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
    filters = forms.CaseFilterForm(request.GET or None)
    cases = CASE_LIST_ORDER.apply(
        EnforcementCase.objects.select_related("offender", "municipality"), request.GET
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


def _case_initial(params) -> dict:
    """What an inspector opening a case from a report (?denuncia=<protocol>) or from a
    roadside check (?placa=<plate>) already knows: the form starts filled with it."""
    initial: dict = {}
    protocol = intake.normalize_protocol(params.get("denuncia", ""))
    report = DumpingReport.objects.filter(protocol=protocol).first() if protocol else None
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
            answer = roadside.check_plate(normalize_plate(plate))
        except ValidationError:
            answer = None
        if answer is not None:
            initial["description"] = (
                f"Abordagem do veículo de placa {answer.display_plate} em "
                f"{answer.day:%d/%m/%Y}: {answer.headline}. {answer.explanation} "
            )
            initial["offender_role"] = OffenderRole.DRIVER
            if answer.transporter is not None:
                initial.update(
                    transporter=answer.transporter.pk,
                    offender_name=answer.transporter.name,
                    offender_document=format_document(answer.transporter.document),
                    municipality=answer.transporter.municipality_id,
                )
    return initial


@require_http_methods(["GET", "POST"])
@municipal_only
def case_new(request):
    if request.method == "POST":
        form = forms.CaseForm(request.POST)
    else:
        form = forms.CaseForm(initial=_case_initial(request.GET))
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            case = enforcement.open_case(
                municipality=data["municipality"],
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
        except EnforcementError as exc:
            add_to_form(form, exc, fields=OFFENDER_FIELDS)
        else:
            messages.success(request, f"Processo {case.number} aberto.")
            return redirect(_case_url(case))
    return render(
        request,
        TEMPLATES + "case_form.html",
        {"form": form, "nav": "fiscalizacao"},
        status=400 if request.method == "POST" else 200,
    )


@require_safe
@municipal_only
def generator_suggestions(request):
    """GET ?q=: up to 10 generators for the case form's "Gerador vinculado" box, as JSON
    ({"results": [{"value": "CPF/CNPJ — nome", "id": …}]}). Municipal users only (the CPFs
    are personal data, LGPD)."""
    found = forms.search_generators(request.GET.get("q", "")[:100])
    response = JsonResponse(
        {"results": [{"id": g.pk, "value": forms.generator_label(g)} for g in found]},
        json_dumps_params={"ensure_ascii": False},
    )
    response["Cache-Control"] = "private, no-store"
    return response


def _notice_actions(notice: Notice, case: EnforcementCase) -> list[Action]:
    actions = [Action("Imprimir (PDF)", reverse("enforcement:notice-pdf", args=[notice.pk]))]
    if case.status == CaseStatus.NOTIFIED and not notice.repaired_at:
        label = "Corrigir a entrega" if notice.delivered_on else "Registrar a entrega"
        actions.append(
            Action(label, reverse("enforcement:notice-delivery", args=[notice.pk]), True)
        )
    if case.status == CaseStatus.NOTIFIED and notice.delivered_on and not notice.repaired_at:
        actions.append(
            Action(
                "Registrar a reparação", reverse("enforcement:notice-repaired", args=[notice.pk])
            )
        )
    return actions


def _record_actions(record: InfractionRecord) -> list[Action]:
    url = lambda name: reverse(f"enforcement:{name}", args=[record.pk])  # noqa: E731
    actions = [Action("Imprimir (PDF)", url("record-pdf"))]
    status = record.status
    if status == RecordStatus.ISSUED and record.delivery_method != DeliveryMethod.HAND:
        label = "Corrigir a entrega" if record.delivered_on else "Registrar a entrega"
        actions.append(Action(label, url("record-delivery"), not record.delivered_on))
    if status == RecordStatus.ISSUED and record.delivered_on:
        actions.append(Action("Registrar recurso", url("appeal-new")))
    if status == RecordStatus.APPEALED:
        actions.append(Action("Registrar a decisão do recurso", url("appeal-decision"), True))
    if status in (RecordStatus.ISSUED, RecordStatus.UPHELD):
        actions.append(Action("Registrar pagamento", url("payment"), True))
        actions.append(Action("Enviar à Dívida Ativa", url("divida-ativa")))
    if status != RecordStatus.ANNULLED:
        for slug, label in PENALTY_SLUGS.items():
            actions.append(
                Action(
                    f"Aplicar {PenaltyKind(label).label.lower()}",
                    reverse("enforcement:penalty-new", args=[record.pk, slug]),
                )
            )
    return actions


def _penalty_actions(penalty: Penalty) -> list[Action]:
    if penalty.lifted_on or penalty.record.status == RecordStatus.ANNULLED:
        return []
    url = lambda name: reverse(f"enforcement:{name}", args=[penalty.pk])  # noqa: E731
    if penalty.kind == PenaltyKind.EMBARGO:
        return [
            Action("Registrar descumprimento", url("embargo-breach")),
            Action("Cancelar o embargo", url("penalty-lift")),
        ]
    if penalty.kind == PenaltyKind.SEIZURE:
        return [
            Action("Custos de guarda", url("seizure-costs")),
            Action("Liberar equipamentos", url("seizure-release")),
        ]
    if penalty.kind == PenaltyKind.SUSPENSION and penalty.ends_on >= timezone.localdate():
        return [Action("Levantar a suspensão", url("penalty-lift"))]
    return []


@require_safe
@municipal_only
def case_detail(request, pk: int):
    case = get_object_or_404(
        EnforcementCase.objects.select_related(
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
                "actions": _notice_actions(notice, case),
            }
        )
    records = []
    for record in case.records.order_by("drawn_up_at").prefetch_related(
        "items__entry", "penalties__breaches"
    ):
        fine = enforcement.record_fine(record)
        records.append(
            {
                "record": record,
                "fine": fine,
                "appeal_last_day": enforcement.appeal_last_day(record),
                "payment_last_day": enforcement.payment_last_day(record),
                "paid_late": enforcement.paid_late(record),
                "appeal": record.appeal if enforcement.has_appeal(record) else None,
                "actions": _record_actions(record),
                "penalties": [
                    {
                        "penalty": p,
                        "breach_fine": enforcement.embargo_fine_ufesp(p),
                        "actions": _penalty_actions(p),
                    }
                    for p in record.penalties.order_by("starts_on")
                ],
            }
        )
    actions = []
    if case.status == CaseStatus.OPEN and not enforcement.is_recidivist(case):
        actions.append(
            Action(
                "Emitir notificação (72 h)", reverse("enforcement:notice-new", args=[case.pk]), True
            )
        )
    if case.status in (CaseStatus.OPEN, CaseStatus.NOTIFIED):
        actions.append(
            Action("Lavrar auto de infração", reverse("enforcement:record-new", args=[case.pk]))
        )
    return render(
        request,
        TEMPLATES + "case_detail.html",
        {
            "case": case,
            "offender_document": format_document(case.offender.document),
            "recidivist": enforcement.is_recidivist(case),
            "earlier_records": enforcement.earlier_final_records(case),
            "earlier_suspension": enforcement.earlier_suspension(case),
            "timeline": timeline,
            "notices": notices,
            "records": records,
            "actions": actions,
            "nav": "fiscalizacao",
        },
    )


# --- notice -----------------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
@municipal_only
def notice_new(request, pk: int):
    case = get_object_or_404(EnforcementCase, pk=pk)
    return _act(
        request,
        form=forms.NoticeForm(request.POST or None),
        case=case,
        title="Notificação para reparar o dano",
        lead="O infrator não reincidente tem 72 horas, contadas do recebimento, para reparar o "
        "dano; só depois cabem as penalidades (art. 27-29).",
        legal="Lei 3.978/2007 art. 28",
        submit="Emitir notificação",
        call=lambda d: enforcement.issue_notice(
            case, d["required_action"], d["delivery_method"], d["issued_at"]
        ),
        success=lambda n: (
            f"Notificação {n.number} emitida. Registre a entrega para o prazo começar a correr."
        ),
    )


def _delivery_lead(method: str) -> str:
    return {
        DeliveryMethod.HAND: "Entrega pessoal: vale a data e a hora do recibo; as 72 horas "
        "contam de minuto a minuto.",
        DeliveryMethod.MAIL: "Carta registrada: vale a data do aviso de recebimento (AR); os "
        "prazos começam no dia seguinte.",
        DeliveryMethod.PUBLIC_NOTICE: "Edital: os prazos contam a partir do primeiro dia útil "
        "após a publicação (art. 28 §2).",
    }[method]


@require_http_methods(["GET", "POST"])
@municipal_only
def notice_delivery(request, pk: int):
    notice = get_object_or_404(Notice.objects.select_related("case"), pk=pk)
    return _act(
        request,
        form=forms.DeliveryForm(request.POST or None, method=notice.delivery_method),
        case=notice.case,
        title=f"Entrega da notificação {notice.number}",
        lead=_delivery_lead(notice.delivery_method),
        legal="Lei 3.978/2007 art. 28 §2; Lei 3.190/2013 art. 11-12",
        call=lambda d: enforcement.register_notice_delivery(notice, d["delivered_on"]),
        success=lambda n: (
            "Entrega registrada: o prazo para reparar vence em "
            f"{deadlines.br_deadline(enforcement.notice_due(n))}."
        ),
    )


@require_http_methods(["GET", "POST"])
@municipal_only
def notice_repaired(request, pk: int):
    notice = get_object_or_404(Notice.objects.select_related("case"), pk=pk)
    due = enforcement.notice_due(notice)

    def success(n: Notice) -> str:
        if due and n.repaired_at <= due:
            return "Dano reparado no prazo: processo sem penalidade (art. 27)."
        return "Reparação registrada fora do prazo: o auto de infração ainda cabe (art. 29)."

    return _act(
        request,
        form=forms.RepairForm(request.POST or None),
        case=notice.case,
        title=f"Reparação do dano — notificação {notice.number}",
        lead=f"Prazo: {deadlines.br_deadline(due)}." if due else "",
        legal="Lei 3.978/2007 art. 27-28",
        call=lambda d: enforcement.mark_repaired(notice, d["repaired_at"]),
        success=success,
    )


@require_safe
@municipal_only
def notice_pdf(request, pk: int):
    notice = get_object_or_404(
        Notice.objects.select_related("case__offender", "case__municipality"), pk=pk
    )
    return _pdf(enforcement_pdf.notice_pdf(notice), f"notificacao-{notice.number}.pdf")


# --- record -----------------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
@municipal_only
def record_new(request, pk: int):
    case = get_object_or_404(EnforcementCase.objects.select_related("offender"), pk=pk)
    recidivist = enforcement.is_recidivist(case)
    suspension = enforcement.earlier_suspension(case)
    notes = []
    if recidivist:
        notes.append("Infrator reincidente: a multa será cobrada em dobro (art. 30).")
    if case.obstructed_inspection:
        notes.append(
            "Embaraço à fiscalização registrado: agravante de "
            f"{br_number(fines.obstruction_multiplier())}× (art. 26 I)."
        )
    if suspension:
        notes.append(
            f"Nova infração após a suspensão de {br_date(suspension.starts_on)}: o auto "
            "proporá a cassação (art. 34)."
        )
    return _act(
        request,
        form=forms.RecordForm(request.POST or None, role=case.offender.role),
        case=case,
        title="Auto de infração",
        lead="Escolha as infrações constatadas. A multa soma as linhas (art. 30 §3).",
        legal="Lei 3.978/2007 art. 22 III, 23, 26, 30, 36",
        submit="Lavrar auto",
        call=lambda d: enforcement.draw_up_record(
            case,
            list(d["entries"]),
            delivery_method=d["delivery_method"],
            signed_by_offender=d["signed_by_offender"],
            no_signature_reason=d["no_signature_reason"],
            drawn_up_at=d["drawn_up_at"],
        ),
        success=lambda r: f"Auto {r.number} lavrado: {br_number(r.total_ufesp, 2)} UFESP.",
        context={"notes": notes},
    )


def _record(pk: int) -> InfractionRecord:
    return get_object_or_404(InfractionRecord.objects.select_related("case"), pk=pk)


@require_http_methods(["GET", "POST"])
@municipal_only
def record_delivery(request, pk: int):
    record = _record(pk)
    if record.delivery_method == DeliveryMethod.HAND:
        raise Http404("Entregue pessoalmente na lavratura.")
    return _act(
        request,
        form=forms.DeliveryForm(request.POST or None, method=record.delivery_method),
        case=record.case,
        title=f"Entrega do auto {record.number}",
        lead=_delivery_lead(record.delivery_method),
        legal="Lei 3.978/2007 art. 28 §2; Lei 3.190/2013 art. 11-12",
        call=lambda d: enforcement.register_record_delivery(record, d["delivered_on"]),
        success=lambda r: (
            f"Entrega registrada: recurso até {br_date(enforcement.appeal_last_day(r))}."
        ),
    )


@require_http_methods(["GET", "POST"])
@municipal_only
def appeal_new(request, pk: int):
    record = _record(pk)
    last = enforcement.appeal_last_day(record)
    return _act(
        request,
        form=forms.AppealForm(request.POST or None),
        case=record.case,
        title=f"Recurso contra o auto {record.number}",
        lead=f"Prazo: 30 dias corridos do recebimento, até {br_date(last)}." if last else "",
        legal="Lei 3.190/2013 art. 13",
        call=lambda d: enforcement.file_appeal(record, d["filed_on"], d["text"]),
        success=lambda a: "Recurso registrado; o auto aguarda a decisão.",
    )


@require_http_methods(["GET", "POST"])
@municipal_only
def appeal_decision(request, pk: int):
    record = _record(pk)
    return _act(
        request,
        form=forms.DecisionForm(request.POST or None),
        case=record.case,
        title=f"Decisão do recurso — auto {record.number}",
        lead="Mantido, o auto fica definitivo e a multa vence 30 dias após a decisão. Anulado, "
        "as penalidades caem.",
        legal="Lei 3.190/2013 art. 14",
        call=lambda d: enforcement.decide_appeal(
            record, d["decided_on"], d["upheld"], d["decision"]
        ),
        success=lambda a: "Auto mantido." if a.upheld else "Auto anulado.",
    )


@require_http_methods(["GET", "POST"])
@municipal_only
def payment(request, pk: int):
    record = _record(pk)
    last = enforcement.payment_last_day(record)

    def success(r: InfractionRecord) -> str:
        late = " fora do prazo" if enforcement.paid_late(r) else " no prazo"
        return f"Pagamento{late} registrado: {br_money(r.paid_brl)}."

    return _act(
        request,
        form=forms.PaymentForm(request.POST or None),
        case=record.case,
        title=f"Pagamento da multa — auto {record.number}",
        lead=f"{br_number(record.total_ufesp, 2)} UFESP, a pagar até {br_date(last)}, em reais "
        "pela UFESP da data do pagamento. Não há desconto por pagamento antecipado.",
        legal="Lei 3.978/2007 art. 36",
        call=lambda d: enforcement.register_payment(record, d["paid_on"]),
        success=success,
    )


@require_http_methods(["GET", "POST"])
@municipal_only
def divida_ativa(request, pk: int):
    record = _record(pk)
    return _act(
        request,
        form=forms.DateOnlyForm(request.POST or None),
        case=record.case,
        title=f"Enviar o auto {record.number} à Dívida Ativa",
        lead=f"O prazo de pagamento venceu em {br_date(enforcement.payment_last_day(record))}.",
        legal="Lei 3.978/2007 art. 22 IV",
        submit="Enviar",
        call=lambda d: enforcement.send_to_divida_ativa(record, d["on"]),
        success=lambda r: f"Auto {r.number} enviado à Dívida Ativa.",
    )


@require_safe
@municipal_only
def record_pdf(request, pk: int):
    record = get_object_or_404(
        InfractionRecord.objects.select_related("case__offender", "case__municipality"), pk=pk
    )
    return _pdf(enforcement_pdf.record_pdf(record), f"auto-{record.number}.pdf")


def _pdf(content: bytes, filename: str) -> HttpResponse:
    response = HttpResponse(content, content_type="application/pdf")
    response["Content-Disposition"] = f'inline; filename="{filename}"'
    return response


# --- penalties --------------------------------------------------------------------------------

PENALTY_SLUGS = {
    "embargo": PenaltyKind.EMBARGO,
    "apreensao": PenaltyKind.SEIZURE,
    "suspensao": PenaltyKind.SUSPENSION,
    "cassacao": PenaltyKind.REVOCATION,
}


@require_http_methods(["GET", "POST"])
@municipal_only
def penalty_new(request, pk: int, kind: str):
    record = _record(pk)
    if kind not in PENALTY_SLUGS:
        raise Http404
    penalty_kind = PENALTY_SLUGS[kind]
    post = request.POST or None
    specs = {
        PenaltyKind.EMBARGO: (
            forms.EmbargoForm(post),
            "art. 25 II, art. 31",
            "Descumprido o embargo, multa diária de uma UFESP (art. 31).",
            lambda d: enforcement.apply_embargo(record, d["starts_on"], d["details"]),
        ),
        PenaltyKind.SEIZURE: (
            forms.SeizureForm(post),
            "art. 25 III, art. 32",
            "Os equipamentos são liberados quando sanada a irregularidade e pagos os custos de "
            "apreensão, remoção e guarda (art. 32 p.ú.).",
            lambda d: enforcement.apply_seizure(record, d["starts_on"], d["details"]),
        ),
        PenaltyKind.SUSPENSION: (
            forms.SuspensionForm(post),
            "art. 25 IV",
            "No máximo 15 dias. Transportador ou área vinculados ficam impedidos de emitir e "
            "receber CTRs desde o primeiro dia.",
            lambda d: enforcement.apply_suspension(record, d["starts_on"], d["days"], d["details"]),
        ),
        PenaltyKind.REVOCATION: (
            forms.RevocationForm(post),
            "art. 25 V, art. 34",
            "Cassação do alvará: transportador ou área vinculados ficam impedidos desde a data.",
            lambda d: enforcement.apply_revocation(record, d["starts_on"], d["details"]),
        ),
    }
    form, legal, lead, call = specs[penalty_kind]
    return _act(
        request,
        form=form,
        case=record.case,
        title=f"{penalty_kind.label} — auto {record.number}",
        lead=lead,
        legal=f"Lei 3.978/2007 {legal}",
        submit="Aplicar",
        call=call,
        success=lambda p: (
            f"Penalidade aplicada: {p.get_kind_display()}, a partir de {br_date(p.starts_on)}."
        ),
    )


def _penalty(pk: int) -> Penalty:
    return get_object_or_404(Penalty.objects.select_related("record__case"), pk=pk)


@require_http_methods(["GET", "POST"])
@municipal_only
def embargo_breach(request, pk: int):
    penalty = _penalty(pk)
    return _act(
        request,
        form=forms.BreachForm(request.POST or None),
        case=penalty.record.case,
        title="Descumprimento do embargo",
        lead="Cada dia de descumprimento constatado soma uma UFESP de multa diária.",
        legal="Lei 3.978/2007 art. 31",
        call=lambda d: enforcement.register_embargo_breach(penalty, d["day"], d["note"]),
        success=lambda b: (
            f"Descumprimento de {br_date(b.day)} registrado: total de "
            f"{br_number(enforcement.embargo_fine_ufesp(penalty))} UFESP."
        ),
    )


@require_http_methods(["GET", "POST"])
@municipal_only
def seizure_costs(request, pk: int):
    penalty = _penalty(pk)
    return _act(
        request,
        form=forms.CostsForm(
            request.POST or None,
            initial={
                "custody_costs_brl": penalty.custody_costs_brl,
                "paid_on": penalty.costs_paid_on,
            },
        ),
        case=penalty.record.case,
        title="Custos de apreensão, remoção e guarda",
        legal="Lei 3.978/2007 art. 32 p.ú.",
        call=lambda d: enforcement.register_seizure_costs(
            penalty, d["custody_costs_brl"], d["paid_on"]
        ),
        success=lambda p: (
            f"Custos de {br_money(p.custody_costs_brl)} registrados"
            + (
                f", pagos em {br_date(p.costs_paid_on)}."
                if p.costs_paid_on
                else ", ainda não pagos."
            )
        ),
    )


@require_http_methods(["GET", "POST"])
@municipal_only
def seizure_release(request, pk: int):
    penalty = _penalty(pk)
    return _act(
        request,
        form=forms.ReleaseForm(request.POST or None),
        case=penalty.record.case,
        title="Liberação dos equipamentos apreendidos",
        lead="Só depois de sanada a irregularidade e pagos os custos de apreensão, remoção e "
        "guarda.",
        legal="Lei 3.978/2007 art. 32 p.ú.",
        submit="Liberar",
        call=lambda d: enforcement.release_seizure(penalty, d["on"], d["irregularity_fixed"]),
        success=lambda p: f"Equipamentos liberados em {br_date(p.lifted_on)}.",
    )


@require_http_methods(["GET", "POST"])
@municipal_only
def penalty_lift(request, pk: int):
    penalty = _penalty(pk)
    embargo = penalty.kind == PenaltyKind.EMBARGO
    return _act(
        request,
        form=forms.DateOnlyForm(request.POST or None),
        case=penalty.record.case,
        title="Cancelar o embargo" if embargo else "Levantar a suspensão",
        lead="O embargo é cancelado quando o infrator cumpre as exigências (art. 31 p.ú.)."
        if embargo
        else "A partir desta data o transportador ou a área voltam a operar.",
        legal="Lei 3.978/2007 " + ("art. 31 p.ú." if embargo else "art. 25 IV"),
        submit="Confirmar",
        call=lambda d: enforcement.lift_penalty(penalty, d["on"]),
        success=lambda p: (
            f"Penalidade levantada: {p.get_kind_display()}, em {br_date(p.lifted_on)}."
        ),
    )
