"""Payments and Dívida Ativa: of a record's fine (art. 36) and of an embargo's daily-fine
charge (art. 31)."""

from __future__ import annotations

from decimal import Decimal

from django import forms

from config.br import br_date, br_money, br_number
from config.br_forms import BRDecimalField

from .. import enforcement
from .fields import DateOnlyForm, StepForm, date_field


class MoneyField(BRDecimalField):
    """Reais as a treasury's guia writes them: "R$ 3.702,00", "3702,00" or "3702.00" (with a
    decimal comma, the points group thousands)."""

    def to_python(self, value):
        if isinstance(value, str):
            value = value.replace("R$", "").strip()
            if "," in value:
                value = value.replace(".", "")
        return super().to_python(value)


def amount_field() -> MoneyField:
    return MoneyField(
        label="Valor pago (R$)",
        min_value=Decimal("0.01"),
        max_digits=12,
        decimal_places=2,
        example="740,40",
        help_text="O valor que a tesouraria recebeu, como está na guia paga.",
    )


def guide_field() -> forms.CharField:
    return forms.CharField(
        label="Nº da guia/DAM",
        max_length=60,
        help_text="O número da guia (DAM) em que a multa foi recolhida (art. 36: “guia própria”).",
    )


def payment_done(subject, what: str, late: bool) -> str:
    """The payment compared with the amount due on its date, as the page says it."""
    when = " fora do prazo" if late else " no prazo"
    result = subject.payment_result
    paid, due = br_money(subject.paid_brl), br_money(subject.due_brl)
    if result == "a menor":
        rest = br_money(-subject.payment_difference_brl)
        return (
            f"Pagamento{when} {what} registrado a menor: faltam {rest} dos {due} devidos na "
            "data; continua em aberto pelo restante."
        )
    if result == "a maior":
        over = br_money(subject.payment_difference_brl)
        return f"Pagamento{when} {what} registrado a maior: {over} além dos {due} devidos."
    return f"Pagamento{when} {what} registrado: {paid}, exato."


def paid_so_far(subject, units: Decimal, unit: str) -> str:
    """After a short payment: what was paid and what remains, in the fine's unit."""
    if not subject.paid_on:
        return ""
    rest = br_number(max(units - subject.paid_units, Decimal(0)), 2)
    return (
        f" Já pago: {br_money(subject.paid_brl)} (guia/DAM {subject.payment_guide}); restam "
        f"{rest} {unit}, em reais pelo valor da data do pagamento."
    )


class PaymentForm(StepForm):
    paid_on = date_field(
        "Pago em", "O valor devido é calculado pela {unit} da data do pagamento ({money_cite})."
    )
    amount_brl = amount_field()
    guide = guide_field()

    def heading(self) -> str:
        return f"Pagamento da multa — auto {self.subject.number}"

    def intro(self) -> str:
        record = self.subject
        framework = record.case.framework
        last = enforcement.payment_last_day(record)
        due = f"a pagar até {br_date(last)}" if last else "prazo de pagamento ainda não iniciado"
        if framework.payment_days is None:
            due = "sem prazo de pagamento na lei"
        discount = enforcement.discount_last_day(record)
        offer = (
            f"Desconto de {framework.discount_percent}% se pago até {br_date(discount)} "
            f"({framework.cite('discount_percent')})."
            if discount
            else "Não há desconto por pagamento antecipado."
        )
        return (
            f"{br_number(record.total_ufesp, 2)} {enforcement.unit_label(framework)}, {due} "
            f"({framework.cite('payment_days')}), em reais pelo valor da data do pagamento. "
            + offer
            + paid_so_far(record, record.total_ufesp, enforcement.unit_label(framework))
        )

    def done(self, record) -> str:
        return payment_done(record, "da multa", enforcement.paid_late(record))


class DividaAtivaForm(DateOnlyForm):
    submit = "Enviar"

    def heading(self) -> str:
        return f"Enviar o auto {self.subject.number} à Dívida Ativa"

    def intro(self) -> str:
        last = enforcement.payment_last_day(self.subject)
        return f"O prazo de pagamento venceu em {br_date(last)}."

    def done(self, record) -> str:
        return f"Auto {record.number} enviado à Dívida Ativa."


class ChargePaymentForm(StepForm):
    paid_on = date_field(
        "Paga em", "O valor devido é calculado pela {unit} da data do pagamento ({money_cite})."
    )
    amount_brl = amount_field()
    guide = guide_field()

    def heading(self) -> str:
        return "Pagamento da multa diária do embargo"

    def intro(self) -> str:
        charge = self.subject
        return (
            f"{br_number(charge.amount_ufesp)} {self.terms['unit']}, a pagar até "
            f"{br_date(enforcement.charge_last_day(charge))}, em reais pelo valor da data do "
            "pagamento." + paid_so_far(charge, charge.amount_ufesp, self.terms["unit"])
        )

    def done(self, charge) -> str:
        return payment_done(charge, "da multa diária", enforcement.charge_paid_late(charge))


class ChargeDividaAtivaForm(DateOnlyForm):
    submit = "Enviar"

    def heading(self) -> str:
        return "Enviar a multa diária do embargo à Dívida Ativa"

    def intro(self) -> str:
        last = enforcement.charge_last_day(self.subject)
        return f"O prazo de pagamento vence em {br_date(last)}."

    def done(self, charge) -> str:
        return "Multa diária do embargo enviada à Dívida Ativa."
