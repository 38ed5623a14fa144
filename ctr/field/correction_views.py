"""Pages of the corrections of a received CTR (ctr/field/corrections.py): the CTR's
corrections page (propose; approve, refuse, send to the Núcleo), and the Núcleo's queue of the
corrections sent to it. Thin: parse, call ctr.field.corrections, render."""

from __future__ import annotations

from decimal import Decimal

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.gis.geos import Point
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST, require_safe

import audit
from config.br_forms import BRDecimalField, CoordinateField
from config.errors import DomainError, add_to_form
from jurisdiction.access import DataScope, declare
from jurisdiction.scope import jurisdiction_of

from .. import roles
from ..models import CTR, CorrectionSide, CTRCorrection, CTRWasteClass, Equipment
from ..rules import WasteLine
from . import corrections
from .corrections import CorrectionStatus, Proposal

# Empty rows offered below the CTR's lines, for a class the load also had.
EXTRA_LINES = 1


# --- forms -------------------------------------------------------------------------------------


class ProposalForm(forms.Form):
    """The CTR's current values, to be edited where they are wrong, and the reason."""

    received_volume_m3 = BRDecimalField(
        label="Volume recebido (m³)", decimal_places=3, required=False
    )
    equipment = forms.ChoiceField(label="Equipamento", required=False)
    destination_lat = CoordinateField("lat", decimal_places=7, required=False)
    destination_lon = CoordinateField("lon", decimal_places=7, required=False)
    reason = forms.CharField(
        label="Motivo da correção",
        max_length=1000,
        widget=forms.Textarea({"rows": 3}),
        help_text="Obrigatório: a outra parte lê o motivo antes de aprovar ou recusar.",
    )

    def __init__(self, ctr: CTR, *args, **kwargs):
        self.ctr = ctr
        self.lines = list(ctr.waste.order_by("pk"))
        initial = {
            "received_volume_m3": ctr.received_volume_m3,
            "equipment": ctr.equipment.code if ctr.equipment else "",
            "destination_lat": Decimal(str(round(ctr.destination.y, 7))),
            "destination_lon": Decimal(str(round(ctr.destination.x, 7))),
        }
        for index, line in enumerate(self.lines):
            initial[f"line-{index}-class"] = line.waste_class
            initial[f"line-{index}-volume"] = line.volume_m3
        super().__init__(*args, initial=initial, **kwargs)
        codes = Equipment.objects.filter(transporter_id=ctr.transporter_id, active=True)
        choices = [(e.code, str(e)) for e in codes.order_by("code")]
        if not ctr.equipment:
            choices.insert(0, ("", "— sem equipamento —"))
        self.fields["equipment"].choices = choices
        classes = [("", "— nenhuma —"), *CTRWasteClass.choices]
        for index in range(len(self.lines) + EXTRA_LINES):
            self.fields[f"line-{index}-class"] = forms.ChoiceField(
                label=f"Classe (linha {index + 1})", choices=classes, required=False
            )
            self.fields[f"line-{index}-volume"] = BRDecimalField(
                label=f"Volume (m³, linha {index + 1})", decimal_places=3, required=False
            )

    def line_fields(self):
        return [
            (self[f"line-{i}-class"], self[f"line-{i}-volume"])
            for i in range(len(self.lines) + EXTRA_LINES)
        ]

    def clean(self):
        data = super().clean()
        for index in range(len(self.lines) + EXTRA_LINES):
            klass, volume = data.get(f"line-{index}-class"), data.get(f"line-{index}-volume")
            if klass and volume is None and f"line-{index}-volume" not in self.errors:
                self.add_error(f"line-{index}-volume", "Informe o volume desta linha.")
            if volume is not None and not klass:
                self.add_error(f"line-{index}-class", "Escolha a classe desta linha.")
        lat, lon = data.get("destination_lat"), data.get("destination_lon")
        if (lat is None) != (lon is None):
            raise ValidationError("Informe a latitude e a longitude do ponto de descarga.")
        return data

    def proposal(self) -> Proposal:
        data = self.cleaned_data
        waste = []
        for index in range(len(self.lines) + EXTRA_LINES):
            klass, volume = data.get(f"line-{index}-class"), data.get(f"line-{index}-volume")
            if klass and volume is not None:
                description = self.lines[index].description if index < len(self.lines) else ""
                waste.append(WasteLine(klass, volume, description))
        lat, lon = data.get("destination_lat"), data.get("destination_lon")
        return Proposal(
            received_volume_m3=data.get("received_volume_m3"),
            # Every line emptied: the service refuses a CTR without waste (a 400 on "waste").
            waste=waste,
            equipment_code=data.get("equipment") or None,
            destination=Point(float(lon), float(lat), srid=4326) if lat is not None else None,
        )

    def fields_of(self, error: DomainError) -> dict[str, str]:
        """The service's field names (ctr.field.corrections) to this form's."""
        names = {
            "equipment_code": "equipment",
            "destination": "destination_lat",
            "received_volume_m3": "received_volume_m3",
            "reason": "reason",
        }
        field = error.field or ""
        if field.startswith("waste["):
            index = field[len("waste[") : field.index("]")]
            names[field] = f"line-{index}-{'class' if field.endswith('class') else 'volume'}"
        return names


class RefusalForm(forms.Form):
    reason = forms.CharField(label="Motivo da recusa", max_length=1000)


class EscalationForm(forms.Form):
    note = forms.CharField(label="Observação para o Núcleo", max_length=1000, required=False)


class DecisionForm(forms.Form):
    decision = forms.ChoiceField(
        label="Decisão",
        choices=[("approve", "Aprovar a correção"), ("refuse", "Recusar a correção")],
        widget=forms.RadioSelect,
    )
    note = forms.CharField(label="Nota da decisão", max_length=1000)


# --- pages -------------------------------------------------------------------------------------


def _ctr_for(request, number: str) -> CTR:
    queryset = corrections.readable_ctrs(request.user).select_related(
        "transporter", "destination_facility", "equipment", "municipality"
    )
    return get_object_or_404(queryset, number=number)


def _nav(user) -> dict:
    if roles.transporter_of(user) is not None:
        return {"nav": "ctrs", "subnav": "ctr/_transporter_nav.html", "section": "ctrs"}
    if roles.facility_of(user) is not None:
        return {"nav": "recebimentos", "subnav": "ctr/_operator_nav.html", "section": "receptions"}
    return {"nav": "nucleo", "subnav": "", "section": ""}


def _rows(ctr: CTR, user, bound: dict) -> list[dict]:
    items = list(ctr.corrections.select_related("proposed_by", "answered_by", "decided_by"))
    open_exists = any(item.is_open for item in items)
    rows = []
    for item in reversed(items):  # the newest first
        mine = bound.get("pk") == item.pk
        rows.append(
            {
                "correction": item,
                "changes": corrections.describe(item.original, item.changes),
                "can": corrections.allowed(item, user, open_exists),
                "waits_for": dict(CorrectionSide.choices).get(corrections.deciding_side(item)),
                "refusal_form": bound.get("refuse") if mine else None,
                "escalation_form": bound.get("escalate") if mine else None,
                "decision_form": bound.get("decide") if mine else None,
            }
        )
    return rows


def _render(request, ctr: CTR, form: ProposalForm | None = None, bound=None, status=200):
    bound = bound or {}
    can_propose = corrections.can_propose(ctr, request.user)
    if form is None and can_propose:
        form = ProposalForm(ctr)
    return render(
        request,
        "ctr/corrections/page.html",
        {
            **_nav(request.user),
            "ctr": ctr,
            "waste": ctr.waste.order_by("pk"),
            "rows": _rows(ctr, request.user, bound),
            "form": form if can_propose else None,
            "side": corrections.side_of(request.user, ctr),
            "refusal_form": RefusalForm(),
            "escalation_form": EscalationForm(),
            "decision_form": DecisionForm(),
        },
        status=status,
    )


@declare(DataScope.SIGNED_IN)
@require_safe
@login_required
def corrections_page(request, number: str):
    ctr = _ctr_for(request, number)
    audit.record(request, ctr, "Correções do CTR")
    return _render(request, ctr)


@declare(DataScope.SIGNED_IN)
@require_POST
@login_required
def correction_propose(request, number: str):
    ctr = _ctr_for(request, number)
    if refusal := corrections.why_not_propose(ctr, request.user):
        messages.error(request, refusal.message)
        return _render(request, ctr, status=refusal.status)
    form = ProposalForm(ctr, request.POST)
    if not form.is_valid():
        return _render(request, ctr, form, status=400)
    try:
        corrections.propose(ctr, request.user, form.proposal(), form.cleaned_data["reason"])
    except DomainError as error:
        add_to_form(form, error, form.fields_of(error))
        return _render(request, ctr, form, status=error.status)
    messages.success(request, "Correção proposta: aguarda a decisão da outra parte.")
    return redirect("ctr_web:corrections", number=ctr.number)


def _correction_for(request, pk: int) -> CTRCorrection:
    return get_object_or_404(corrections.readable(request.user), pk=pk)


DONE = {
    "approve": "Correção aprovada: o CTR passou a ter os valores corrigidos.",
    "refuse": "Correção recusada. Qualquer das partes pode enviá-la ao Núcleo.",
    "escalate": "Correção enviada ao Núcleo Permanente de Gestão, que decidirá.",
    "decide": "Decisão registrada.",
}
FORMS = {"refuse": RefusalForm, "escalate": EscalationForm, "decide": DecisionForm}


@declare(DataScope.SIGNED_IN)
@require_POST
@login_required
def correction_action(request, pk: int, action: str):
    """Approve, refuse, send to the Núcleo or decide one correction, back to its CTR's page
    (the Núcleo's decision back to its queue)."""
    correction = _correction_for(request, pk)
    ctr = correction.ctr
    form = FORMS[action](request.POST) if action in FORMS else None
    back = ("ctr_web:corrections", {"number": ctr.number})
    if action == "decide":
        back = ("ctr_web:nucleo-corrections", {})
    try:
        corrections.check_actor(correction, request.user, action)
    except DomainError as error:
        messages.error(request, error.message)
        return _render(request, ctr, status=error.status)
    if form is not None and not form.is_valid():
        if action == "decide":
            return _render_queue(request, {"pk": pk, "decide": form}, status=400)
        return _render(request, ctr, bound={"pk": pk, action: form}, status=400)
    data = form.cleaned_data if form is not None else {}
    try:
        if action == "approve":
            corrections.approve(correction, request.user)
        elif action == "refuse":
            corrections.refuse(correction, request.user, data["reason"])
        elif action == "escalate":
            corrections.escalate(correction, request.user, data["note"])
        else:
            corrections.decide(
                correction, request.user, data["decision"] == "approve", data["note"]
            )
    except DomainError as error:
        messages.error(request, error.message)
        if action == "decide":
            return _render_queue(request, status=error.status)
        return _render(request, ctr, status=error.status)
    messages.success(request, DONE[action])
    return redirect(back[0], **back[1])


# --- the Núcleo's queue ------------------------------------------------------------------------


def _render_queue(request, bound: dict | None = None, status: int = 200):
    bound = bound or {}
    # The current municipality's corrections: its Núcleo decides them.
    mine = CTRCorrection.objects.visible_to(request.user, current=True)
    waiting = (
        mine.filter(status=CorrectionStatus.ESCALATED)
        .select_related("ctr", "ctr__transporter", "ctr__destination_facility", "proposed_by")
        .order_by("escalated_at", "pk")
    )
    rows = [
        {
            "correction": item,
            "changes": corrections.describe(item.original, item.changes),
            "form": bound["decide"] if bound.get("pk") == item.pk else DecisionForm(),
        }
        for item in waiting
    ]
    decided = (
        mine.filter(status=CorrectionStatus.DECIDED)
        .select_related("ctr", "decided_by")
        .order_by("-decided_at", "-pk")[:20]
    )
    return render(
        request,
        "ctr/corrections/nucleo_queue.html",
        {
            "nav": "nucleo",
            "rows": rows,
            "decided": decided,
            "can_decide": roles.is_nucleo(request.user, jurisdiction_of(request.user).current_id),
        },
        status=status,
    )


@require_safe
@roles.municipal_only
def nucleo_queue(request):
    return _render_queue(request)
