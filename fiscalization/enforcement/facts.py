"""What the steps of a case read about it: its documents' deadlines, recidivism, an earlier
suspension, the fines.

The deadline arithmetic has one home, fiscalization.deadlines (pure dates, no database); here
each notice or record is given to it with its delivery and its municipality's calendar."""

from __future__ import annotations

import datetime
from decimal import Decimal

from django.db.models import QuerySet

from pev_network.models import Municipality

from .. import deadlines, fines
from ..deadlines import ONE_DAY
from ..models.enforcement import (
    Appeal,
    ChargeStatus,
    EmbargoBreach,
    EmbargoFineCharge,
    EnforcementCase,
    InfractionRecord,
    MunicipalHoliday,
    Notice,
    Penalty,
    PenaltyKind,
    RecordStatus,
)


def calendar_for(municipality: Municipality) -> deadlines.WorkCalendar:
    """Working days in the municipality: national, state (its UF) and municipal holidays."""
    dates, yearly = set(), set()
    for day, every_year in MunicipalHoliday.objects.filter(municipality=municipality).values_list(
        "day", "yearly"
    ):
        if every_year:
            yearly.add((day.month, day.day))
        else:
            dates.add(day)
    return deadlines.WorkCalendar.with_holidays(dates, yearly, subdivision=municipality.uf or "SP")


# --- who is a recidivist, who was suspended ---------------------------------------------------


def earlier_final_records(case: EnforcementCase) -> QuerySet:
    """Records against the same offender document in the municipality that were final when
    this case's infraction was found (art. 26 II, art. 30): the earlier record makes a
    recidivist once the offender can no longer contest it, whether or not he paid.

    A record becomes final the day after its appeal window ends with no appeal filed
    (appeal_last_day), or on the day an appeal is decided against the offender (upheld).
    Annulled on appeal, still within its window, under an appeal not yet decided then, or not
    yet delivered (no window runs): it does not count. Only records drawn up within
    fines.RECIDIVISM_LOOKBACK of the new infraction count (no limit: the law gives none)."""
    found = case.opened_at
    candidates = (
        InfractionRecord.objects.filter(
            case__offender__document=case.offender.document,
            case__municipality=case.municipality,
            drawn_up_at__lt=found,
            delivered_on__isnull=False,
        )
        .exclude(case=case)
        .exclude(status__in=(RecordStatus.ANNULLED, RecordStatus.APPEALED))
        .select_related("case__municipality", "appeal")
    )
    if fines.RECIDIVISM_LOOKBACK is not None:
        candidates = candidates.filter(drawn_up_at__gte=found - fines.RECIDIVISM_LOOKBACK)
    day = deadlines.local_date(found)
    final = [r.pk for r in candidates if (final_on(r) or datetime.date.max) <= day]
    return InfractionRecord.objects.filter(pk__in=final)


def final_on(record: InfractionRecord) -> datetime.date | None:
    """The day the record became (or becomes) final, None while it cannot: not delivered,
    under an appeal not yet decided, or annulled."""
    if has_appeal(record):
        appeal = record.appeal
        return appeal.decided_on if appeal.upheld else None
    if record.status == RecordStatus.ANNULLED:
        return None
    last = appeal_last_day(record)
    return last + ONE_DAY if last is not None else None


def is_recidivist(case: EnforcementCase) -> bool:
    return earlier_final_records(case).exists()


def earlier_suspension(case: EnforcementCase) -> Penalty | None:
    """A suspension (art. 25 IV) already applied to the same offender document before this
    case's infraction: the new infraction calls for revocation (art. 34)."""
    return (
        Penalty.objects.filter(
            kind=PenaltyKind.SUSPENSION,
            record__case__offender__document=case.offender.document,
            record__case__municipality=case.municipality,
            starts_on__lte=deadlines.local_date(case.opened_at),
        )
        .exclude(record__status=RecordStatus.ANNULLED)
        .exclude(record__case=case)
        .order_by("-starts_on")
        .first()
    )


# --- deadlines of a notice and of a record ----------------------------------------------------


def receipt_of(document: Notice | InfractionRecord) -> deadlines.Receipt | None:
    """The presumed receipt of a notice or record, None while its delivery is not registered."""
    if document.delivered_on is None:
        return None
    return deadlines.presumed_receipt(
        document.delivery_method, document.delivered_on, calendar_for(document.case.municipality)
    )


def notice_due(notice: Notice) -> datetime.datetime | None:
    """When the 72 hours to repair end (art. 28 §1), None while not delivered."""
    receipt = receipt_of(notice)
    return deadlines.repair_deadline(receipt) if receipt else None


def appeal_last_day(record: InfractionRecord) -> datetime.date | None:
    receipt = receipt_of(record)
    return deadlines.appeal_last_day(receipt) if receipt else None


def _upheld_on(record: InfractionRecord) -> datetime.date | None:
    if not has_appeal(record):
        return None
    return record.appeal.decided_on if record.appeal.upheld else None


def has_appeal(record: InfractionRecord) -> bool:
    try:
        record.appeal  # noqa: B018 (the reverse one-to-one raises when absent)
    except Appeal.DoesNotExist:
        return False
    return True


def payment_last_day(record: InfractionRecord) -> datetime.date:
    return deadlines.payment_last_day(record.drawn_up_at, _upheld_on(record))


def paid_late(record: InfractionRecord) -> bool:
    return record.paid_on is not None and record.paid_on > payment_last_day(record)


# --- fines ------------------------------------------------------------------------------------


def record_fine(record: InfractionRecord) -> fines.Fine:
    """The record's fine as drawn up: its items' fines, recidivism, obstruction."""
    return fines.record_fine(
        [item.fine_ufesp for item in record.items.all()],
        record.recidivist,
        record.obstruction_multiplier,
    )


def embargo_fine_ufesp(penalty: Penalty) -> Decimal:
    return fines.embargo_fine(penalty.breaches.count())


def uncharged_breaches(penalty: Penalty) -> QuerySet:
    """The days of breach of an embargo whose daily fine (art. 31) no charge holds yet."""
    return penalty.breaches.filter(charge__isnull=True).order_by("day")


def charge_last_day(charge: EmbargoFineCharge) -> datetime.date:
    """The last day to pay a daily-fine charge: the 30 days of art. 36, counted from the
    charge as from the record (the daily fine is a fine like the record's)."""
    return deadlines.payment_last_day(charge.assessed_on)


def charge_paid_late(charge: EmbargoFineCharge) -> bool:
    return charge.paid_on is not None and charge.paid_on > charge_last_day(charge)


# --- what keeps a case open besides the fine --------------------------------------------------


def revocation_pending(record: InfractionRecord) -> bool:
    """A new infraction after a suspension: the revocation "deverá ser aplicada" (art. 34), so
    the record is not settled until it is (or the record falls on appeal)."""
    return (
        record.proposes_revocation
        and record.status != RecordStatus.ANNULLED
        and not any(p.kind == PenaltyKind.REVOCATION for p in record.penalties.all())
    )


def repair_owed(record: InfractionRecord) -> bool:
    """Paying the fine does not end the duty to repair the damage (art. 30 §2): owed until a
    repair is registered, on the case's notice (late, art. 29) or on the record itself."""
    if record.status == RecordStatus.ANNULLED or record.repaired_at is not None:
        return False
    return not any(n.repaired_at is not None for n in record.case.notices.all())


def charges_pending(record: InfractionRecord) -> bool:
    """Daily fines of the record's embargoes still owed: a day of breach not yet charged, or a
    charge neither paid nor in Dívida Ativa (art. 31)."""
    if record.status == RecordStatus.ANNULLED:
        return False
    return (
        EmbargoFineCharge.objects.filter(penalty__record=record, status=ChargeStatus.OPEN).exists()
        or EmbargoBreach.objects.filter(penalty__record=record, charge__isnull=True).exists()
    )
