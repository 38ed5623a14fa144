"""The receiving facility operator's receptions: the open CTRs to receive or refuse (asked
again without JavaScript) and the recently closed ones."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Exists, OuterRef, Q
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from config.br import br_number
from config.list_order import Column, ListOrder

from . import closing, lifecycle, reports, roles
from .errors import CTRError, RuleViolation
from .forms import ReasonForm, ReceiveForm
from .models import CTR, CorrectionSide, CorrectionStatus, CTRAction, CTRCorrection, CTRStatus
from .views import BY_NUMBER, confirm_page, operator_required, wants_review

RECEPTION_PAGE_SIZE = 50
RECENTLY_CLOSED = 30  # closed CTRs shown below the open ones on /recebimentos/


def _facility_ctrs(request):
    return (
        roles.visible_ctrs(request.user, CTR.objects.all())
        .filter(destination_facility=request.facility)
        .select_related("transporter", "vehicle", "equipment", "generator", "worksite")
        .prefetch_related("waste")
    )


RECEPTION_ORDER = ListOrder(
    [
        Column("numero", "Número", BY_NUMBER, first_desc=True),
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
            ctr = closing.receive(
                ctr,
                request.user,
                form.cleaned_data["received_volume_m3"],
                location=form.location(),
                note=form.cleaned_data["note"],
            )
        else:
            ctr = closing.refuse(ctr, request.user, form.cleaned_data["reason"])
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
