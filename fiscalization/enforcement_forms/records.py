"""The record (auto de infração) and what the authority decides on it: the entries of the
table (art. 23), the fine applied (art. 35), the appeal and its decision (Lei 3.190/2013
art. 13-14)."""

from __future__ import annotations

from decimal import Decimal

from django import forms

from config.br import br_date, br_number
from config.br_forms import BRDecimalField

from .. import enforcement, fines, penalty_table
from ..deadlines import local_date
from ..models.enforcement import PenaltyTableEntry
from .fields import StepForm, date_field, datetime_field
from .notices import INDIVIDUAL_CHOICES


class EntryChoiceField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, entry: PenaltyTableEntry) -> str:
        return (
            f"{entry.code} — {entry.description} ({entry.legal_reference}; "
            f"{br_number(entry.fine_ufesp, 2)} UFESP)"
        )


class RecordForm(StepForm):
    title = "Auto de infração"
    lead = "Escolha as infrações constatadas. A multa soma as linhas (art. 30 §3)."
    submit = "Lavrar auto"

    entries = EntryChoiceField(
        PenaltyTableEntry.objects.none(),
        label="Infrações (tabela do art. 23)",
        widget=forms.CheckboxSelectMultiple,
        help_text="Infrações simultâneas somam as multas (art. 30 §3).",
    )
    drawn_up_at = datetime_field("Lavrado em")
    delivery_method = forms.ChoiceField(
        label="Forma de entrega",
        choices=INDIVIDUAL_CHOICES,
        help_text="O edital vem depois, só se a entrega for frustrada (art. 28 §2).",
    )
    signed_by_offender = forms.BooleanField(label="Assinado pelo infrator", required=False)
    no_signature_reason = forms.CharField(
        label="Sem assinatura: o servidor certifica o motivo",
        widget=forms.Textarea(attrs={"rows": 2}),
        required=False,
        max_length=1000,
        help_text="Obrigatório quando o infrator não assina (art. 36 p.ú.).",
    )

    def __init__(self, data=None, *, subject, **kwargs):
        super().__init__(data, subject=subject, **kwargs)
        role = subject.offender.role
        # The lines the record may use (confirmed, active, of the case's municipality, valid
        # on the day of the finding) that name the offender's role, and those that name none.
        day = local_date(subject.opened_at)
        usable = PenaltyTableEntry.objects.usable(subject.municipality, day)
        self.no_usable_entry = not usable.exists()
        ids = [e.pk for e in usable if not e.offender_roles or role in e.offender_roles]
        field = self.fields["entries"]
        field.queryset = PenaltyTableEntry.objects.filter(pk__in=ids)
        if self.no_usable_entry:
            field.help_text = "Nenhuma linha da tabela pode ser usada: veja o aviso acima."

    def notes(self) -> list[str]:
        case, notes = self.subject, []
        if self.no_usable_entry:
            day = local_date(case.opened_at)
            notes.append(penalty_table.no_usable_entry_message(case.municipality, day))
        framework = case.framework
        earlier = enforcement.earlier_final_records(case).count()
        if earlier:
            factor = fines.recidivism_factor(earlier, framework)
            notes.append(
                f"Infrator reincidente ({earlier} auto(s) anterior(es) definitivo(s)): a multa "
                f"será multiplicada por {br_number(factor)} "
                f"({framework.cite('recidivism_escalation')})."
            )
        if case.obstructed_inspection:
            factor = fines.obstruction_factor(True, framework)
            notes.append(
                "Embaraço à fiscalização registrado como agravante "
                + (
                    f"de {br_number(factor)}× ({framework.cite('obstruction_factor')})."
                    if factor > 1
                    else f"sem fator: {framework.cite('obstruction_factor')}."
                )
            )
        suspension = enforcement.earlier_suspension(case)
        if suspension:
            notes.append(
                f"Nova infração após a suspensão de {br_date(suspension.starts_on)}: o auto "
                "proporá a cassação (art. 34)."
            )
        return notes

    def arguments(self) -> dict:
        return {**self.cleaned_data, "entries": list(self.cleaned_data["entries"])}

    def done(self, record) -> str:
        total = f"{br_number(record.total_ufesp, 2)} {self.terms['unit']}"
        if record.fine_applied_at is None:
            authority = self.subject.framework.authority
            return (
                f"Auto {record.number} lavrado: multa proposta de {total}, que aguarda a "
                f"aplicação pela autoridade — {authority}."
            )
        return f"Auto {record.number} lavrado: {total}."


class ApplyFineForm(StepForm):
    lead = (
        "O fiscal lavrou o auto e propôs a multa; as penalidades são aplicadas pela "
        "autoridade (art. 35). O prazo de pagamento conta da aplicação."
    )
    submit = "Aplicar a multa"

    applied_at = datetime_field("Aplicada em")

    def heading(self) -> str:
        record = self.subject
        total = f"{br_number(record.total_ufesp, 2)} {self.terms['unit']}"
        return f"Aplicar a multa do auto {record.number} ({total})"

    def legal(self, default: str) -> str:
        return self.subject.case.framework.cite("applied_by") or default

    def done(self, record) -> str:
        total = f"{br_number(record.total_ufesp, 2)} {self.terms['unit']}"
        return f"Multa de {total} do auto {record.number} aplicada (art. 35)."


class AppealForm(StepForm):
    filed_on = date_field("Apresentado em")
    text = forms.CharField(
        label="Razões do recurso", widget=forms.Textarea(attrs={"rows": 4}), max_length=8000
    )

    def heading(self) -> str:
        return f"Recurso contra o auto {self.subject.number}"

    def intro(self) -> str:
        last = enforcement.appeal_last_day(self.subject)
        terms = self.terms
        if not last:
            return ""
        return f"Prazo: {terms['appeal']}, até {br_date(last)} ({terms['appeal_cite']})."

    def done(self, appeal) -> str:
        return "Recurso registrado; o auto aguarda a decisão."


class DecisionForm(StepForm):
    lead = (
        "Mantido, o auto fica definitivo e a multa vence em {post_appeal} ({post_appeal_cite}). "
        "Com provimento parcial, o auto fica com a nova multa, que passa a ser a cobrada. "
        "Anulado, as penalidades caem."
    )

    decided_on = date_field("Decidido em")
    upheld = forms.ChoiceField(
        label="Decisão",
        choices=[
            ("1", "Auto mantido"),
            ("partial", "Provimento parcial: auto mantido com multa menor"),
            ("0", "Auto anulado"),
        ],
        widget=forms.RadioSelect,
    )
    new_total_ufesp = BRDecimalField(
        label="Nova multa (provimento parcial)",
        required=False,
        min_value=Decimal("0.01"),
        max_digits=10,
        decimal_places=2,
        example="50,00",
        help_text="Na unidade da multa ({unit}); só no provimento parcial.",
    )
    decision = forms.CharField(
        label="Fundamentos da decisão", widget=forms.Textarea(attrs={"rows": 4}), max_length=8000
    )

    def heading(self) -> str:
        return f"Decisão do recurso — auto {self.subject.number}"

    def clean(self):
        data = super().clean()
        partial = data.get("upheld") == "partial"
        if partial and data.get("new_total_ufesp") is None and "new_total_ufesp" not in self.errors:
            self.add_error("new_total_ufesp", "Informe a nova multa do provimento parcial.")
        if not partial and data.get("new_total_ufesp") is not None:
            self.add_error("new_total_ufesp", "A nova multa só cabe no provimento parcial.")
        return data

    def arguments(self) -> dict:
        data = dict(self.cleaned_data)
        data["upheld"] = data["upheld"] != "0"
        return data

    def done(self, appeal) -> str:
        if appeal.reduced_from_ufesp is not None:
            total = br_number(appeal.record.total_ufesp, 2)
            return f"Provimento parcial: auto mantido com multa de {total} {self.terms['unit']}."
        return "Auto mantido." if appeal.upheld else "Auto anulado."
