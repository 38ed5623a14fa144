"""What the steps of a case read about it: its documents' deadlines, recidivism, an earlier
suspension, the fines.

The deadline arithmetic has one home, fiscalization.deadlines (pure dates, no database); here
each notice or record is given to it with its delivery, its municipality's calendar and the
case's penalty framework (frozen when the case opened), whose fields hold every figure."""

from __future__ import annotations

import datetime
from decimal import Decimal

from django.db.models import QuerySet
from django.utils import timezone

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
from ..models.frameworks import NoticeFirst, PenaltyFramework


def case_of(subject) -> EnforcementCase:
    """The case a step's subject (case, notice, record, penalty or charge) belongs to."""
    while not isinstance(subject, EnforcementCase):
        parents = ("case", "record", "penalty")
        subject = next(getattr(subject, n) for n in parents if hasattr(subject, n))
    return subject


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
    yet delivered (no window runs): it does not count. Only records drawn up within the
    framework's look-back period count (none of the three laws gives one: no limit)."""
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
    lookback = case.framework.recidivism_lookback_days
    if lookback is not None:
        candidates = candidates.filter(drawn_up_at__gte=found - datetime.timedelta(days=lookback))
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


def notice_possible(case: EnforcementCase) -> bool:
    """Whether the framework gives the offender a notice to repair before any record: to the
    non-recidivist (Lei 3.978/2007 art. 28), to anyone (Rio de Janeiro art. 146, optional), or
    never (Lei 3.190/2013 art. 11: the procedure starts with the record)."""
    rule = case.framework.notice_first
    if rule == NoticeFirst.NEVER:
        return False
    return rule == NoticeFirst.OPTIONAL or not is_recidivist(case)


def notice_running(case: EnforcementCase) -> bool:
    """A notice of the case not repaired whose hours to repair have not ended: not delivered
    yet, or delivered and still within them."""
    notice = case.notices.order_by("-issued_at").first()
    if notice is None or notice.repaired_at is not None:
        return False
    due = notice_due(notice)
    return due is None or timezone.now() <= due


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


def unit_label(framework: PenaltyFramework) -> str:
    """The money unit as documents print it after an amount."""
    return fines.UNIT_NAMES[framework.money_unit]


def receipt_of(document: Notice | InfractionRecord) -> deadlines.Receipt | None:
    """The presumed receipt of a notice or record, None while its delivery is not registered."""
    if document.delivered_on is None:
        return None
    case = document.case
    return deadlines.presumed_receipt(
        document.delivery_method,
        document.delivered_on,
        calendar_for(case.municipality),
        case.framework,
    )


def notice_due(notice: Notice) -> datetime.datetime | None:
    """When the hours to repair end (Lei 3.978/2007 art. 28 §1: 72), None while not
    delivered."""
    receipt = receipt_of(notice)
    if receipt is None:
        return None
    return deadlines.repair_deadline(receipt, notice.case.framework, notice_hours(notice))


def notice_hours(notice: Notice) -> int:
    """The hours `notice` gives: its own (set by the authority, Rio de Janeiro art. 155 p.ú.)
    or its framework's (Lei 3.978/2007 art. 28 §1: 72)."""
    return notice.repair_hours or notice.case.framework.repair_hours


def appeal_last_day(record: InfractionRecord) -> datetime.date | None:
    receipt = receipt_of(record)
    if receipt is None:
        return None
    case = record.case
    return deadlines.appeal_last_day(receipt, case.framework, calendar_for(case.municipality))


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


def payment_last_day(record: InfractionRecord) -> datetime.date | None:
    """The last day to pay the record's fine under its framework; None while it depends on a
    receipt or a final decision still to come."""
    case = record.case
    if record.fine_applied_at is None:
        return None  # a fine proposed, not yet applied by the authority (art. 35)
    payment = deadlines.PaymentFacts(
        # Counted "da lavratura" (art. 36) of the act that imposes the fine: the record where
        # the framework gives the fine to it, else the authority's application (art. 35).
        drawn_up=record.fine_applied_at,
        receipt=receipt_of(record),
        appeal_last=None if has_appeal(record) else appeal_last_day(record),
        upheld_on=_upheld_on(record),
        appeal_filed=record.appeal.filed_on if has_appeal(record) else None,
    )
    return deadlines.payment_last_day(payment, case.framework, calendar_for(case.municipality))


def discount_last_day(record: InfractionRecord) -> datetime.date | None:
    return deadlines.discount_last_day(record.drawn_up_at, record.case.framework)


def paid_late(record: InfractionRecord) -> bool:
    last = payment_last_day(record)
    return record.paid_on is not None and last is not None and record.paid_on > last


# --- fines ------------------------------------------------------------------------------------


def record_fine(record: InfractionRecord) -> fines.Fine:
    """The record's fine as drawn up: its items' fines and the factors frozen with it."""
    return fines.Fine(
        base_ufesp=fines.cumulative(item.fine_ufesp for item in record.items.all()),
        recidivism_factor=record.recidivism_factor,
        obstruction_factor=record.obstruction_multiplier,
        total_ufesp=record.total_ufesp,
        persistent_of=record.persistent_of_ufesp,
    )


def embargo_fine_ufesp(penalty: Penalty) -> Decimal:
    return fines.embargo_fine(penalty.breaches.count(), penalty.record.case.framework)


def uncharged_breaches(penalty: Penalty) -> QuerySet:
    """The days of breach of an embargo whose daily fine (art. 31) no charge holds yet."""
    return penalty.breaches.filter(charge__isnull=True).order_by("day")


def charge_last_day(charge: EmbargoFineCharge) -> datetime.date:
    """The last day to pay a daily-fine charge: the framework's payment days (Lei 3.978/2007
    art. 36: 30), counted from the day after the charge as from the record (the daily fine is
    a fine like the record's)."""
    case = charge.penalty.record.case
    framework = case.framework
    return deadlines.last_day(
        charge.assessed_on + ONE_DAY,
        framework.payment_days,
        framework.payment_day_count,
        calendar_for(case.municipality),
    )


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
