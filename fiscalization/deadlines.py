"""Deadlines of the enforcement procedure: pure date arithmetic, no database.

Which day counts as the offender's receipt of a notice or record, and when each deadline ends:

- Presumed receipt (Lei 3.190/2013 de Ferraz de Vasconcelos art. 11-12, same procedure family;
  Lei 3.978/2007 art. 28 §2 for the public notice):
    HAND           the date and hour on the signed receipt;
    MAIL           the date and hour of delivery on the returned AR (aviso de recebimento);
    PUBLIC_NOTICE  the publication date in the official paper, which only supplies an
                   individual notice that failed (art. 28 §2: "quando negativas ou
                   impraticáveis"; fiscalization.enforcement refuses it otherwise).
- Counting. A deadline in days leaves out the day of receipt and starts on the next day (Código
  Civil art. 132; CPC art. 224). For the public notice, art. 28 §2 says "contando-se os prazos
  a partir do primeiro dia útil da publicação": we read it as the CPC reads publication
  (art. 224 §3): counting starts on the first *working* day after the publication day. A notice
  published on a Friday before a holiday Monday starts counting on Tuesday.
- 72 hours to repair (art. 28 §1). Hours run minute by minute (Código Civil art. 132 §4): handed
  over at 10:00, due three days later at 10:00. By mail the same, from the date and hour the
  postman wrote on the AR. By public notice no hour of receipt exists: the 72 hours run from
  00:00 of the first working day after the publication and end at 00:00 three days later, i.e.
  at the end of the third day.
- 30 calendar days to appeal from receipt (Lei 3.190/2013 art. 13, "dias corridos"): day 1 is
  the first counting day, the appeal filed on day 30 is in time, on day 31 it is not.
- The fine is paid within 30 days of the drawing up of the record (Lei 3.978/2007 art. 36):
  paid on day 30 is on time, on day 31 it is late, and unpaid it goes to Dívida Ativa
  (art. 22 IV). Guaratinguetá's law grants no discount for early payment: the 30% for payment
  within 10 days is in the Rio de Janeiro law and does not apply here.
- A deadline that ends on a weekend or holiday is NOT carried to the next working day: the laws
  count calendar days ("dias corridos") and do not say so (Lei 9.784/1999 art. 66 §1, federal,
  would; the municipality may decide to follow it).

Working days are Monday to Friday except Brazil's national and São Paulo state holidays (the
`holidays` package) and the municipality's own holidays (fiscalization.MunicipalHoliday), which
the caller passes in a WorkCalendar.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

import holidays
from django.utils import timezone

REPAIR_HOURS = 72  # art. 28 §1
APPEAL_DAYS = 30  # Lei 3.190/2013 art. 13
PAYMENT_DAYS = 30  # art. 36
SUSPENSION_MAX_DAYS = 15  # art. 25 IV

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
    calendar: WorkCalendar = DEFAULT_CALENDAR,
) -> Receipt:
    """The presumed receipt of a notice or record delivered by `method` at `delivered` (the
    receipt's date and hour, the AR's date and hour, or the publication date)."""
    day = local_date(delivered)
    if method in (HAND, MAIL):
        if not isinstance(delivered, datetime.datetime):
            raise ValueError(
                "A entrega pessoal exige data e hora do recibo."
                if method == HAND
                else "A entrega pelo correio exige data e hora do AR."
            )
        return Receipt(method, day, day + ONE_DAY, delivered)
    if method == PUBLIC_NOTICE:
        # Art. 28 §2: "a partir do primeiro dia útil da publicação".
        first = calendar.next_working_day_after(day)
        return Receipt(method, day, first, start_of_day(first))
    raise ValueError(f"Forma de entrega desconhecida: {method}")


def repair_deadline(receipt: Receipt) -> datetime.datetime:
    """The instant the 72 hours to repair end (art. 28 §1). Repaired at that instant is in
    time; a minute later is not."""
    return receipt.counting_from + datetime.timedelta(hours=REPAIR_HOURS)


def repaired_in_time(receipt: Receipt, repaired_at: datetime.datetime) -> bool:
    return repaired_at <= repair_deadline(receipt)


def appeal_last_day(receipt: Receipt) -> datetime.date:
    """The last day to appeal: day 30 counted from the first counting day as day 1."""
    return receipt.first_day + datetime.timedelta(days=APPEAL_DAYS - 1)


def appeal_in_time(receipt: Receipt, filed_on: datetime.date) -> bool:
    return filed_on <= appeal_last_day(receipt)


def payment_last_day(
    drawn_up: datetime.datetime | datetime.date, upheld_on: datetime.date | None = None
) -> datetime.date:
    """The last day to pay the fine: day 30 after the record was drawn up (art. 36).

    An appeal filed in time suspends collection; when the record is upheld the offender gets
    the same 30 days from the decision (never fewer than from the record). The law is silent
    on this; the sibling Lei 3.190/2013 art. 15 counts the payment from the final decision."""
    last = local_date(drawn_up) + datetime.timedelta(days=PAYMENT_DAYS)
    if upheld_on is not None:
        last = max(last, upheld_on + datetime.timedelta(days=PAYMENT_DAYS))
    return last


def paid_on_time(
    paid_on: datetime.date,
    drawn_up: datetime.datetime | datetime.date,
    upheld_on: datetime.date | None = None,
) -> bool:
    return paid_on <= payment_last_day(drawn_up, upheld_on)


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
