"""The penalties of art. 25 II-V and their life: applying an embargo, seizure, suspension or
revocation, lifting it, an embargo's breach and daily fines, a seizure's costs and release
(art. 31-34)."""

from __future__ import annotations

from django import forms

from config.br import br_date, br_money, br_number
from config.br_forms import BRDecimalField

from .. import enforcement, fines
from ..models.enforcement import PenaltyKind
from .fields import DateOnlyForm, StepForm, date_field


class LiftForm(DateOnlyForm):
    """Cancelling an embargo, or lifting a suspension early."""

    submit = "Confirmar"

    @property
    def embargo(self) -> bool:
        return self.subject.kind == PenaltyKind.EMBARGO

    def heading(self) -> str:
        return "Cancelar o embargo" if self.embargo else "Levantar a suspensão"

    def intro(self) -> str:
        if self.embargo:
            return "O embargo é cancelado quando o infrator cumpre as exigências (art. 31 p.ú.)."
        return "A partir desta data o transportador ou a área voltam a operar."

    requirements_met = forms.CharField(
        label="Exigências do auto cumpridas",
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
        max_length=2000,
        help_text="Quais exigências do auto o infrator cumpriu, como constatado (art. 31 p.ú.).",
    )
    requirements_met_on = date_field("Exigências cumpridas em", required=False)

    def __init__(self, data=None, *, subject, **kwargs):
        super().__init__(data, subject=subject, **kwargs)
        if not self.embargo:  # a suspension is lifted by date alone
            del self.fields["requirements_met"], self.fields["requirements_met_on"]

    def legal(self, default: str) -> str:
        return default if self.embargo else "Lei 3.978/2007 art. 25 IV"

    def done(self, penalty) -> str:
        if self.embargo:
            return (
                f"Embargo cancelado em {br_date(penalty.lifted_on)}: exigências cumpridas em "
                f"{br_date(penalty.requirements_met_on)} (art. 31 p.ú.)."
            )
        return (
            f"Penalidade levantada: {penalty.get_kind_display()}, em {br_date(penalty.lifted_on)}."
        )


class PenaltyForm(StepForm):
    """Applying one of the penalties of art. 25 II-V to a record."""

    kind: PenaltyKind
    submit = "Aplicar"

    def heading(self) -> str:
        return f"{self.kind.label} — auto {self.subject.number}"

    def done(self, penalty) -> str:
        return (
            f"Penalidade aplicada: {penalty.get_kind_display()}, a partir de "
            f"{br_date(penalty.starts_on)}."
        )


class EmbargoForm(PenaltyForm):
    kind = PenaltyKind.EMBARGO
    lead = "Descumprido o embargo, multa diária: {daily_fine} ({daily_fine_cite})."

    starts_on = date_field("Início do embargo")
    details = forms.CharField(
        label="Obra embargada e exigências",
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=2000,
    )


class SeizureForm(PenaltyForm):
    kind = PenaltyKind.SEIZURE
    lead = (
        "Os equipamentos são liberados quando sanada a irregularidade e pagos os custos de "
        "apreensão, remoção e guarda (art. 32 p.ú.)."
    )

    starts_on = date_field("Data da apreensão")
    details = forms.CharField(
        label="Equipamentos apreendidos e local de guarda",
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=2000,
    )


class SuspensionForm(PenaltyForm):
    kind = PenaltyKind.SUSPENSION
    lead = (
        "Transportador ou área vinculados ficam impedidos de emitir e receber CTRs desde o "
        "primeiro dia."
    )

    starts_on = date_field("Primeiro dia da suspensão")
    days = forms.IntegerField(label="Dias de suspensão", min_value=1)
    details = forms.CharField(
        label="Observações", widget=forms.Textarea(attrs={"rows": 2}), required=False
    )

    def __init__(self, data=None, *, subject, **kwargs):
        super().__init__(data, subject=subject, **kwargs)
        framework = subject.case.framework
        if framework.suspension_max_days:
            self.fields["days"].help_text = (
                f"No máximo {framework.suspension_max_days} dias "
                f"({framework.cite('suspension_max_days')})."
            )


class RevocationForm(PenaltyForm):
    kind = PenaltyKind.REVOCATION
    lead = "Cassação do alvará: transportador ou área vinculados ficam impedidos desde a data."

    starts_on = date_field("Cassação a partir de")
    details = forms.CharField(
        label="Observações", widget=forms.Textarea(attrs={"rows": 2}), required=False
    )


class BreachForm(StepForm):
    title = "Descumprimento do embargo"
    lead = "Cada dia de descumprimento constatado soma a multa diária: {daily_fine}."

    day = date_field("Dia do descumprimento")
    note = forms.CharField(
        label="O que foi constatado", widget=forms.Textarea(attrs={"rows": 2}), required=False
    )

    def done(self, breach) -> str:
        if self.subject.record.case.framework.embargo_daily_fine is None:
            return f"Descumprimento de {br_date(breach.day)} registrado."
        total = br_number(enforcement.embargo_fine_ufesp(self.subject))
        unit = self.terms["unit"]
        return f"Descumprimento de {br_date(breach.day)} registrado: total de {total} {unit}."


class EmbargoFineForm(DateOnlyForm):
    """Making the daily fines of the days of breach not yet charged payable (art. 31)."""

    submit = "Lançar"

    def heading(self) -> str:
        return "Lançar a multa diária do embargo"

    def intro(self) -> str:
        days = enforcement.uncharged_breaches(self.subject).count()
        framework, terms = self.subject.record.case.framework, self.terms
        if framework.embargo_daily_fine is None:
            return f"Multa diária {terms['daily_fine']} ({terms['daily_fine_cite']})."
        return (
            f"{days} dia(s) de descumprimento ainda sem cobrança: "
            f"{br_number(fines.embargo_fine(days, framework))} {terms['unit']} "
            f"({terms['daily_fine']}, {terms['daily_fine_cite']}), a pagar em "
            f"{terms['payment']} ({terms['payment_cite']}), em reais pelo valor da data do "
            "pagamento."
        )

    def done(self, charge) -> str:
        return (
            f"Multa diária lançada: {br_number(charge.amount_ufesp)} {self.terms['unit']}, a "
            "pagar até "
            f"{br_date(enforcement.charge_last_day(charge))}."
        )


class CostsForm(StepForm):
    title = "Custos de apreensão, remoção e guarda"

    custody_costs_brl = BRDecimalField(
        label="Custos de apreensão, remoção e guarda (R$)",
        min_value=0,
        decimal_places=2,
        example="1250,00",
    )
    paid_on = date_field("Pagos em", "Deixe em branco enquanto não pagos.", required=False)

    def __init__(self, data=None, *, subject, **kwargs):
        initial = {"custody_costs_brl": subject.custody_costs_brl, "paid_on": subject.costs_paid_on}
        super().__init__(data, subject=subject, initial=initial, **kwargs)

    def done(self, penalty) -> str:
        paid = (
            f", pagos em {br_date(penalty.costs_paid_on)}."
            if penalty.costs_paid_on
            else ", ainda não pagos."
        )
        return f"Custos de {br_money(penalty.custody_costs_brl)} registrados{paid}"


class ReleaseForm(StepForm):
    title = "Liberação dos equipamentos apreendidos"
    lead = "Só depois de sanada a irregularidade e pagos os custos de apreensão, remoção e guarda."
    submit = "Liberar"

    on = date_field("Liberados em")
    irregularity_fixed = forms.BooleanField(
        label="A irregularidade objeto do auto foi sanada (art. 32 p.ú.)", required=False
    )

    def done(self, penalty) -> str:
        return f"Equipamentos liberados em {br_date(penalty.lifted_on)}."
