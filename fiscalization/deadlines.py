"""Deadlines of the enforcement procedure: pure date arithmetic, no database.

Every figure (hours, days, how they count, from which event) is a field of the case's penalty
framework (fiscalization.models.frameworks), passed in by the caller with the municipality's
WorkCalendar; the citation of each is in the framework. What is fixed here is how any deadline
is read:

- Presumed receipt: HAND, the date and hour on the signed receipt; MAIL, the date and hour of
  delivery on the returned AR (Lei 3.190/2013 art. 12 I-II); PUBLIC_NOTICE, the publication,
  read by the framework's edital rule. The edital only supplies an individual notice that
  failed (Lei 3.978/2007 art. 28 §2: "quando negativas ou impraticáveis"; Lei 3.190/2013
  art. 11 III: "quando improfícuo"); fiscalization.enforcement refuses it otherwise.
- Counting. A deadline in days leaves out the day of receipt and starts on the next day (Código
  Civil art. 132; CPC art. 224). Guaratinguetá's edital (art. 28 §2, "contando-se os prazos a
  partir do primeiro dia útil da publicação") is read as the CPC reads publication (art. 224
  §3): counting starts on the first *working* day after the publication day, so a notice
  published on a Friday before a holiday Monday starts counting on Tuesday.
- Hours run minute by minute (Código Civil art. 132 §4): handed over at 10:00, 72 hours are due
  three days later at 10:00; by mail from the date and hour on the AR. By edital no hour of
  receipt exists: the hours run from 00:00 of the first counting day.
- Days: in calendar days ("dias corridos") day N is the last, filed on day 30 of 30 is in time,
  on day 31 it is not; in working days the Nth working day is the last. A calendar-day deadline
  ending on a weekend or holiday is NOT carried to the next working day: the laws do not say so
  (the federal Lei 9.784/1999 art. 66 §1 would; a municipality following it sets its framework
  to working days).

Working days are Monday to Friday except Brazil's national and state holidays (the `holidays`
package) and the municipality's own holidays (fiscalization.MunicipalHoliday), which the
caller passes in a WorkCalendar.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

import holidays
from django.utils import timezone

if TYPE_CHECKING:
    from .models.frameworks import PenaltyFramework

HAND = "HAND"
MAIL = "MAIL"
PUBLIC_NOTICE = "PUBLIC_NOTICE"

ONE_DAY = datetime.timedelta(days=1)


@lru_cache(maxsize=64)
def _state_holidays(year: int, subdivision: str) -> frozenset[datetime.date]:
    """National and state holidays (public category only: Carnival and Corpus Christi are
    'pontos facultativos' unless the municipality lists them as its own holidays)."""
    return frozenset(holidays.country_holidays("BR", subdiv=subdivision, years=year).keys())


@dataclass(frozen=True)
class WorkCalendar:
    """Which days are working days: weekdays that are neither national, state nor municipal
    holidays."""

    subdivision: str = "SP"
    # Municipal holidays on one date, and those repeated every year as (month, day).
    dates: frozenset[datetime.date] = field(default_factory=frozenset)
    yearly: frozenset[tuple[int, int]] = field(default_factory=frozenset)

    @classmethod
    def with_holidays(
        cls,
        dates: Iterable[datetime.date] = (),
        yearly: Iterable[tuple[int, int]] = (),
        subdivision: str = "SP",
    ) -> WorkCalendar:
        return cls(subdivision, frozenset(dates), frozenset(yearly))

    def is_holiday(self, day: datetime.date) -> bool:
        return (
            day in _state_holidays(day.year, self.subdivision)
            or day in self.dates
            or (day.month, day.day) in self.yearly
        )

    def is_working_day(self, day: datetime.date) -> bool:
        return day.weekday() < 5 and not self.is_holiday(day)

    def next_working_day_after(self, day: datetime.date) -> datetime.date:
        day += ONE_DAY
        while not self.is_working_day(day):
            day += ONE_DAY
        return day


DEFAULT_CALENDAR = WorkCalendar()


def local_date(moment: datetime.datetime | datetime.date) -> datetime.date:
    """The day of `moment` in the municipality's time zone (settings.TIME_ZONE)."""
    if isinstance(moment, datetime.datetime):
        return timezone.localtime(moment).date() if timezone.is_aware(moment) else moment.date()
    return moment


def start_of_day(day: datetime.date) -> datetime.datetime:
    """00:00 of `day` in the municipality's time zone."""
    return timezone.make_aware(datetime.datetime.combine(day, datetime.time.min))


@dataclass(frozen=True)
class Receipt:
    """When a notice or record is presumed received and from when its deadlines run."""

    method: str
    receipt_day: datetime.date  # the presumed date of receipt
    first_day: datetime.date  # day 1 of deadlines counted in days
    counting_from: datetime.datetime  # the instant the 72 hours start


def presumed_receipt(
    method: str,
    delivered: datetime.datetime | datetime.date,
    calendar: WorkCalendar,
    framework: PenaltyFramework,
) -> Receipt:
    """The presumed receipt of a notice or record delivered by `method` at `delivered` (the
    receipt's date and hour, the AR's date and hour, or the publication date), under the
    framework's edital rule."""
    day = local_date(delivered)
    if method in (HAND, MAIL):
        if not isinstance(delivered, datetime.datetime):
            raise ValueError(
                "A entrega pessoal exige data e hora do recibo."
                if method == HAND
                else "A entrega pelo correio exige data e hora do AR."
            )
        return Receipt(method, day, day + ONE_DAY, delivered)
    if method != PUBLIC_NOTICE:
        raise ValueError(f"Forma de entrega desconhecida: {method}")
    rule = framework.edital_receipt
    if rule == "FIRST_WORKING_DAY":
        # Lei 3.978/2007 art. 28 §2: "a partir do primeiro dia útil da publicação".
        first = calendar.next_working_day_after(day)
        return Receipt(method, day, first, start_of_day(first))
    if rule == "END_OF_PERIOD":
        # Lei 3.190/2013 art. 11 III, art. 12 III: received when the edital's days, counted
        # from the publication, end; the deadlines run from the next day.
        received = day + datetime.timedelta(days=framework.edital_days)
        return Receipt(method, received, received + ONE_DAY, start_of_day(received + ONE_DAY))
    if rule == "PUBLICATION":
        # Rio de Janeiro's elevators law art. 148: "após ciência ou publicação".
        return Receipt(method, day, day + ONE_DAY, start_of_day(day + ONE_DAY))
    raise ValueError(f"Regra de edital desconhecida: {rule}")


def last_day(
    first_day: datetime.date, days: int, day_count: str, calendar: WorkCalendar
) -> datetime.date:
    """The last day of a deadline of `days` days whose day 1 is `first_day`: in calendar days
    day `days` itself; in working days the `days`-th working day from `first_day` on."""
    if day_count == "CALENDAR":
        return first_day + datetime.timedelta(days=days - 1)
    day = (
        first_day
        if calendar.is_working_day(first_day)
        else calendar.next_working_day_after(first_day)
    )
    for _ in range(days - 1):
        day = calendar.next_working_day_after(day)
    return day


def repair_deadline(
    receipt: Receipt, framework: PenaltyFramework, hours: int | None = None
) -> datetime.datetime:
    """The instant the hours to repair end (Lei 3.978/2007 art. 28 §1: 72; or the notice's
    own `hours`, Rio de Janeiro art. 155 p.ú.). Repaired at that instant is in time; a minute
    later is not."""
    return receipt.counting_from + datetime.timedelta(hours=hours or framework.repair_hours)


def repaired_in_time(
    receipt: Receipt, repaired_at: datetime.datetime, framework: PenaltyFramework
) -> bool:
    return repaired_at <= repair_deadline(receipt, framework)


def appeal_last_day(
    receipt: Receipt, framework: PenaltyFramework, calendar: WorkCalendar
) -> datetime.date:
    """The last day to appeal, the first counting day being day 1."""
    return last_day(receipt.first_day, framework.appeal_days, framework.appeal_day_count, calendar)


def appeal_in_time(
    receipt: Receipt,
    filed_on: datetime.date,
    framework: PenaltyFramework,
    calendar: WorkCalendar,
) -> bool:
    return filed_on <= appeal_last_day(receipt, framework, calendar)


@dataclass(frozen=True)
class PaymentFacts:
    """What the payment deadline counts from: the record's drawing up, its receipt (None
    while not delivered), the last day of its appeal window (None while no window runs) and
    the decision that upheld it (None without one)."""

    drawn_up: datetime.datetime | datetime.date
    receipt: Receipt | None = None
    appeal_last: datetime.date | None = None
    upheld_on: datetime.date | None = None
    appeal_filed: datetime.date | None = None  # of the appeal that upheld it, if any


def payment_last_day(
    facts: PaymentFacts, framework: PenaltyFramework, calendar: WorkCalendar
) -> datetime.date | None:
    """The last day to pay the fine, None while it cannot be known (counted from a receipt or
    a final decision that has not happened yet).

    RECORD (Lei 3.978/2007 art. 36): day 1 is the day after the record; a suspensive appeal
    decided against the offender gives him the framework's post-appeal days from the decision
    (never fewer than from the record) where its source gives such days; where it gives none,
    the law's own deadline ("prazo máximo de 30 dias, da lavratura") with the days the appeal
    held collection back (filing to decision) left out of the count: the rest runs after the
    decision, never more than the law's days in all. RECEIPT: from the day
    after the receipt. FINAL (Lei 3.190/2013 art. 15, "contados da decisão final"): from the
    day after the decision,
    or after the last day of the appeal window when nobody appealed. None for good where the
    law sets no payment deadline (framework.payment_days empty: Rio de Janeiro)."""
    if framework.payment_days is None:
        return None
    start = framework.payment_from
    if start == "RECORD":
        first = local_date(facts.drawn_up) + ONE_DAY
    elif start == "RECEIPT":
        if facts.receipt is None:
            return None
        first = facts.receipt.first_day
    elif start == "FINAL":
        final = facts.upheld_on or facts.appeal_last
        if final is None:
            return None
        first = final + ONE_DAY
    else:
        raise ValueError(f"Início do prazo de pagamento desconhecido: {start}")
    last = last_day(first, framework.payment_days, framework.payment_day_count, calendar)
    if (
        facts.upheld_on is not None
        and start != "FINAL"
        and framework.appeal_suspensive
        and not framework.post_appeal_payment_days
        and facts.appeal_filed is not None
        and facts.appeal_filed <= last
    ):
        # The days from the filing to the decision did not run: the rest of the law's days
        # (counted as its own, calendar or working) run from the day after the decision.
        used = _days_used(first, facts.appeal_filed, framework.payment_day_count, calendar)
        return last_day(
            facts.upheld_on + ONE_DAY,
            framework.payment_days - used,
            framework.payment_day_count,
            calendar,
        )
    if (
        facts.upheld_on is not None
        and start != "FINAL"
        and framework.appeal_suspensive
        and framework.post_appeal_payment_days
    ):
        after = last_day(
            facts.upheld_on + ONE_DAY,
            framework.post_appeal_payment_days,
            framework.post_appeal_day_count or framework.payment_day_count,
            calendar,
        )
        last = max(last, after)
    return last


def _days_used(
    first_day: datetime.date, filed: datetime.date, day_count: str, calendar: WorkCalendar
) -> int:
    """How many of a deadline's days (day 1 = `first_day`) had run before the appeal was filed
    on `filed`: the filing day itself is held back with the rest."""
    if filed <= first_day:
        return 0
    if day_count == "CALENDAR":
        return (filed - first_day).days
    day, used = first_day, 0
    while day < filed:
        used += calendar.is_working_day(day)
        day += ONE_DAY
    return used


def discount_last_day(
    drawn_up: datetime.datetime | datetime.date, framework: PenaltyFramework
) -> datetime.date | None:
    """The last day of the early-payment discount (Rio de Janeiro art. 183: 10 days of the
    record), None when the framework grants none."""
    if not framework.discount_days:
        return None
    return local_date(drawn_up) + datetime.timedelta(days=framework.discount_days)


def suspension_end(starts_on: datetime.date, days: int) -> datetime.date:
    """The last day of a suspension of `days` days, both ends included (art. 25 IV: up to 15)."""
    return starts_on + datetime.timedelta(days=days - 1)


def suspension_days(starts_on: datetime.date, ends_on: datetime.date) -> int:
    return (ends_on - starts_on).days + 1


def br_deadline(moment: datetime.datetime) -> str:
    """A deadline as people read it: a deadline ending at 00:00 is the end of the day before."""
    local = timezone.localtime(moment)
    if local.time() == datetime.time.min:
        return f"{(local.date() - ONE_DAY):%d/%m/%Y} às 23h59"
    return f"{local:%d/%m/%Y} às {local:%Hh%M}"
