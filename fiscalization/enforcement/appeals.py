"""The appeal against a record (Lei 3.190/2013 art. 13-14, the same procedure family)."""

from __future__ import annotations

import datetime
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from config.br import br_date, br_number

from ..models.enforcement import (
    Appeal,
    ChargeStatus,
    EmbargoFineCharge,
    InfractionRecord,
    RecordStatus,
)
from ..models.frameworks import DayCount
from .actions import check
from .authorship import sign, signed
from .errors import EnforcementError
from .facts import appeal_last_day, receipt_of
from .penalties import end_penalty
from .procedure import close_if_settled


@transaction.atomic
def file_appeal(record: InfractionRecord, filed_on: datetime.date, text: str, *, by=None) -> Appeal:
    """Recurso within the framework's days of receiving the record (Lei 3.190/2013 art. 13:
    30 calendar days; day 30 in time, day 31 not)."""
    record = InfractionRecord.objects.select_for_update().get(pk=record.pk)
    check("file_appeal", record, by)
    receipt = receipt_of(record)
    if receipt is None:
        raise EnforcementError(
            "Registre antes a entrega do auto: o prazo de recurso conta do recebimento.",
            "not_delivered",
        )
    if filed_on > timezone.localdate():
        raise EnforcementError("A data do recurso está no futuro.", "future", "filed_on")
    if filed_on < receipt.receipt_day:
        raise EnforcementError(
            "O recurso não pode ser anterior ao recebimento do auto.", "date", "filed_on"
        )
    framework = record.case.framework
    last = appeal_last_day(record)
    if filed_on > last:
        count = DayCount(framework.appeal_day_count).label
        raise EnforcementError(
            f"Recurso fora do prazo: os {framework.appeal_days} {count} contados do recebimento "
            f"terminaram em {br_date(last)} ({framework.cite('appeal_days')}).",
            "appeal_late",
            "filed_on",
        )
    if not text.strip():
        raise EnforcementError("Transcreva ou resuma as razões do recurso.", "text", "text")
    appeal = Appeal.objects.create(
        record=record, filed_on=filed_on, text=text.strip(), **signed("filed", by, record)
    )
    record.status = RecordStatus.APPEALED
    record.save(update_fields=["status"])
    return appeal


@transaction.atomic
def decide_appeal(
    record: InfractionRecord,
    decided_on: datetime.date,
    upheld: bool,
    decision: str,
    *,
    new_total_ufesp: Decimal | None = None,
    by=None,
) -> Appeal:
    """Upheld: the record stands and is final (the fine is due as the framework counts from
    the decision: Lei 3.190/2013 art. 15, 30 working days). Not upheld: the record is
    annulled and its penalties fall. Partly upheld (provimento parcial, `new_total_ufesp`):
    the record stands with the smaller fine, which it charges from then on (payment, Dívida
    Ativa, documents); the fine as drawn up stays on the appeal. The authority's (art. 35)."""
    record = InfractionRecord.objects.select_for_update().get(pk=record.pk)
    check("decide_appeal", record, by)
    appeal = Appeal.objects.select_for_update().get(record=record)
    if decided_on < appeal.filed_on:
        raise EnforcementError("A decisão não pode ser anterior ao recurso.", "date", "decided_on")
    if decided_on > timezone.localdate():
        raise EnforcementError("A data da decisão está no futuro.", "future", "decided_on")
    if not decision.strip():
        raise EnforcementError("Registre o teor da decisão.", "decision", "decision")
    if new_total_ufesp is not None:
        if not upheld:
            raise EnforcementError(
                "O provimento parcial mantém o auto com a nova multa.", "partial", "upheld"
            )
        if not (0 < new_total_ufesp < record.total_ufesp):
            raise EnforcementError(
                f"A nova multa deve ser maior que zero e menor que a do auto "
                f"({br_number(record.total_ufesp, 2)}).",
                "new_total",
                "new_total_ufesp",
            )
        appeal.reduced_from_ufesp = record.total_ufesp
        record.total_ufesp = new_total_ufesp
    appeal.decided_on, appeal.upheld, appeal.decision = decided_on, upheld, decision.strip()
    authored = sign(appeal, "decided", by, authority=True)
    appeal.save(update_fields=["decided_on", "upheld", "decision", "reduced_from_ufesp", *authored])
    record.status = RecordStatus.UPHELD if upheld else RecordStatus.ANNULLED
    record.save(update_fields=["status", "total_ufesp"])
    appeal.record = record  # the record as decided, not a copy read before
    if not upheld:
        for penalty in record.penalties.filter(lifted_on__isnull=True):
            end_penalty(penalty, decided_on, by, authority=True)
        # The embargo falls with the record, and the daily fines not yet paid with it.
        EmbargoFineCharge.objects.filter(penalty__record=record, status=ChargeStatus.OPEN).update(
            status=ChargeStatus.CANCELLED
        )
    close_if_settled(record.case, decided_on)
    return appeal
