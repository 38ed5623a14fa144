"""The fine's payment in reais at the value of its unit on the payment date (Lei 3.978/2007
art. 36: the UFESP), less the framework's early-payment discount if any, or Dívida Ativa
(art. 22 IV); the same for the daily fines of a disobeyed embargo (art. 31)."""

from __future__ import annotations

import datetime
from decimal import ROUND_HALF_UP, Decimal

from django.db import transaction
from django.utils import timezone

from config.br import br_date

from .. import deadlines, fines
from ..models.enforcement import (
    ChargeStatus,
    EmbargoFineCharge,
    InfractionRecord,
    RecordStatus,
    TreasuryPayment,
)
from ..models.frameworks import PenaltyFramework
from .actions import check
from .authorship import sign
from .errors import EnforcementError
from .facts import appeal_last_day, charge_last_day, payment_last_day
from .procedure import close_if_settled


def _unit_value(paid_on: datetime.date, framework: PenaltyFramework) -> Decimal:
    """The reais of one unit of the fine on the payment date (1 for a fine in reais)."""
    if framework.money_unit == "BRL":
        return Decimal(1)
    try:
        return fines.fiscal_unit_value(framework.money_unit, paid_on)
    except fines.UfespRateMissing as exc:
        # The same refusal as every other of the payment, on the field that carries the year.
        raise EnforcementError(exc.message, exc.code, "paid_on") from None


GUIDE_MAX = 60


def _record_payment(
    subject: TreasuryPayment,
    owed_units: Decimal,
    paid_on: datetime.date,
    amount_brl: Decimal | None,
    guide: str,
    framework: PenaltyFramework,
) -> bool:
    """A payment as the treasury records it (art. 36: "recolhida em guia própria"): what is
    still due on `paid_on` (the units not yet covered, at that date's value), the amount paid
    (the amount due when not given) and its guia/DAM, compared. True when the fine is settled
    (paid exactly or more); a short payment leaves the rest open."""
    guide = (guide or "").strip()
    if len(guide) > GUIDE_MAX:
        raise EnforcementError(
            f"O número da guia/DAM tem no máximo {GUIDE_MAX} caracteres.", "guide", "guide"
        )
    value = _unit_value(paid_on, framework)
    remaining = max(owed_units - subject.paid_units, Decimal(0))
    due = (remaining * value).quantize(fines.CENT, rounding=ROUND_HALF_UP)
    amount = due if amount_brl is None else Decimal(amount_brl)
    if amount <= 0:
        raise EnforcementError("Informe o valor pago, maior que zero.", "amount", "amount_brl")
    if subject.paid_on is not None and paid_on < subject.paid_on:
        raise EnforcementError(
            f"O pagamento não pode ser anterior ao último registrado ({br_date(subject.paid_on)}).",
            "date",
            "paid_on",
        )
    settled = amount >= due
    subject.paid_units = owed_units if settled else subject.paid_units + amount / value
    subject.paid_brl = (subject.paid_brl or Decimal(0)) + amount
    subject.due_brl, subject.payment_difference_brl = due, amount - due
    subject.paid_on = paid_on
    guides = [g for g in (subject.payment_guide, guide) if g]
    subject.payment_guide = "; ".join(guides)
    return settled


PAYMENT_FIELDS = [
    "paid_on",
    "paid_brl",
    "due_brl",
    "payment_difference_brl",
    "paid_units",
    "payment_guide",
    "status",
]


def _check_paid_on(paid_on: datetime.date, earliest: datetime.date, of: str) -> None:
    if paid_on > timezone.localdate():
        raise EnforcementError("A data do pagamento está no futuro.", "future", "paid_on")
    if paid_on < earliest:
        raise EnforcementError(f"O pagamento não pode ser anterior {of}.", "date", "paid_on")


def _check_due(on: datetime.date, last: datetime.date | None, what: str) -> None:
    """Dívida Ativa only once the payment deadline has passed (art. 36, art. 22 IV)."""
    if last is None:
        raise EnforcementError(
            f"O prazo de pagamento ainda não começou a correr: só depois dele {what} à Dívida "
            "Ativa (art. 22 IV).",
            "payment_not_started",
        )
    if on <= last:
        raise EnforcementError(
            f"O prazo de pagamento vai até {br_date(last)}: só depois {what} à Dívida Ativa "
            "(art. 36, art. 22 IV).",
            "payment_running",
        )


@transaction.atomic
def register_payment(
    record: InfractionRecord,
    paid_on: datetime.date,
    amount_brl: Decimal | None = None,
    guide: str = "",
    *,
    by=None,
) -> InfractionRecord:
    """The fine paid in reais at its unit's value on the payment date (art. 36), less the
    framework's discount when paid within its days (Rio de Janeiro art. 183), compared with the
    amount the treasury received (`amount_brl`, with its guia/DAM): paid in full or more, the
    record is paid; short, it stays open for the rest. Paid after the deadline it is late
    (paid_late), but still a payment while not sent to Dívida Ativa."""
    record = InfractionRecord.objects.select_for_update().get(pk=record.pk)
    check("register_payment", record, by)
    _check_paid_on(paid_on, deadlines.local_date(record.drawn_up_at), "ao auto")
    framework = record.case.framework
    owed = fines.with_discount(record.total_ufesp, record.drawn_up_at, paid_on, framework)
    if _record_payment(record, owed, paid_on, amount_brl, guide, framework):
        record.status = RecordStatus.PAID
    record.save(update_fields=[*PAYMENT_FIELDS, *sign(record, "payment", by)])
    close_if_settled(record.case, paid_on)
    return record


@transaction.atomic
def send_to_divida_ativa(record: InfractionRecord, on: datetime.date | None = None, *, by=None):
    """Unpaid after the payment deadline (and, where an appeal suspends collection, with no
    appeal pending or possible): to Dívida Ativa (art. 22 IV)."""
    record = InfractionRecord.objects.select_for_update().get(pk=record.pk)
    on = on or timezone.localdate()
    check("send_to_divida_ativa", record, by)
    _check_due(on, payment_last_day(record), "o auto pode ser enviado")
    if record.status == RecordStatus.ISSUED and record.case.framework.appeal_suspensive:
        appeal_last = appeal_last_day(record)
        if appeal_last is None or on <= appeal_last:
            raise EnforcementError(
                "O prazo de recurso ainda corre (ou a entrega do auto não foi registrada): "
                "aguarde-o antes de enviar à Dívida Ativa.",
                "appeal_running",
            )
    record.status = RecordStatus.DIVIDA_ATIVA
    record.save(update_fields=["status", *sign(record, "divida_ativa", by)])
    close_if_settled(record.case, on)
    return record


def _lock_charge(charge: EmbargoFineCharge) -> EmbargoFineCharge:
    return (
        EmbargoFineCharge.objects.select_for_update(of=("self",))
        .select_related("penalty__record__case")
        .get(pk=charge.pk)
    )


@transaction.atomic
def register_charge_payment(
    charge: EmbargoFineCharge,
    paid_on: datetime.date,
    amount_brl: Decimal | None = None,
    guide: str = "",
    *,
    by=None,
):
    """The daily fines of the embargo paid in reais at the UFESP of the payment date
    (art. 31, art. 36), compared with the amount received as the record's; after the due
    date it is late, but a payment while not in Dívida Ativa."""
    charge = _lock_charge(charge)
    check("register_charge_payment", charge, by)
    _check_paid_on(paid_on, charge.assessed_on, "ao lançamento da multa diária")
    framework = charge.penalty.record.case.framework
    if _record_payment(charge, charge.amount_ufesp, paid_on, amount_brl, guide, framework):
        charge.status = ChargeStatus.PAID
    charge.save(update_fields=[*PAYMENT_FIELDS, *sign(charge, "payment", by)])
    close_if_settled(charge.penalty.record.case, paid_on)
    return charge


@transaction.atomic
def send_charge_to_divida_ativa(
    charge: EmbargoFineCharge, on: datetime.date | None = None, *, by=None
):
    """Daily fines unpaid after their payment days: to Dívida Ativa (art. 22 IV), as the
    record's."""
    charge = _lock_charge(charge)
    on = on or timezone.localdate()
    check("send_charge_to_divida_ativa", charge, by)
    _check_due(on, charge_last_day(charge), "a multa diária pode ser enviada")
    if on > timezone.localdate():
        raise EnforcementError("A data do envio está no futuro.", "future", "on")
    charge.status = ChargeStatus.DIVIDA_ATIVA
    charge.save(update_fields=["status", *sign(charge, "divida_ativa", by)])
    close_if_settled(charge.penalty.record.case, on)
    return charge
