"""Fine arithmetic of Lei 3.978/2007: amounts in UFESP, converted to reais on payment.

- Simultaneous infractions add up (art. 30 §3): the fine is the sum of the record's entries.
- Recidivism doubles it (art. 30, art. 26 II). Who is a recidivist is decided by
  enforcement.facts (earlier records of the same offender document in the municipality that
  were final when the new infraction was found), within RECIDIVISM_LOOKBACK (none by default).
- Obstructing the inspection is an aggravating factor (art. 26 I) for which the law gives no
  figure: we multiply the fine by settings.ENFORCEMENT_OBSTRUCTION_MULTIPLIER (default 1.5),
  after the doubling for recidivism, and keep the multiplier used with the record.
- A disobeyed embargo costs one UFESP per day of breach (art. 31).
- The fine is paid at the UFESP value of the payment date (art. 36): the UfespRate of the
  payment's year (the UFESP is set once a year), rounded to the cent.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from django.conf import settings

from config.errors import DomainError

RECIDIVISM_FACTOR = Decimal(2)  # art. 30: "em dobro"
# How far back an earlier final record makes a recidivist (art. 26 II, art. 30), counted from
# that record's drawing up to the new infraction; None: no limit. Lei 3.978/2007 gives no
# period (nor do the sibling Lei 3.190/2013 art. 9 §1-2 and the Rio de Janeiro law), so by
# default every earlier final record counts. A municipality that adopts one (the federal
# Decreto 6.514/2008 art. 11 uses five years from the earlier record, for environmental
# infractions) sets it here; issue 13 point 7 moves it into the municipality's framework.
RECIDIVISM_LOOKBACK: datetime.timedelta | None = None
DEFAULT_OBSTRUCTION_MULTIPLIER = Decimal("1.5")  # art. 26 I: no figure in the law
EMBARGO_DAILY_FINE_UFESP = Decimal(1)  # art. 31
CENT = Decimal("0.01")


class UfespRateMissing(DomainError):
    """No UFESP value for the payment's year: the fine cannot be converted to reais. A 400,
    as the payment refused for it has always answered (the input cannot be taken as is)."""

    code = "ufesp_missing"

    def __init__(self, year: int):
        self.year = year
        super().__init__(
            f"Não há valor da UFESP cadastrado para {year}: cadastre-o em “Valores da UFESP” "
            "antes de registrar o pagamento (art. 36)."
        )


def obstruction_multiplier() -> Decimal:
    """The multiplier for obstructing the inspection (art. 26 I), from the settings."""
    value = Decimal(
        str(getattr(settings, "ENFORCEMENT_OBSTRUCTION_MULTIPLIER", DEFAULT_OBSTRUCTION_MULTIPLIER))
    )
    if value < 1:
        raise ValueError("ENFORCEMENT_OBSTRUCTION_MULTIPLIER não pode reduzir a multa (< 1).")
    return value


@dataclass(frozen=True)
class Fine:
    """How a record's fine is made: base (sum of entries) × recidivism × obstruction."""

    base_ufesp: Decimal
    recidivism_factor: Decimal
    obstruction_factor: Decimal
    total_ufesp: Decimal


def cumulative(fines_ufesp: Iterable[Decimal]) -> Decimal:
    """Simultaneous infractions add up (art. 30 §3)."""
    return sum((Decimal(f) for f in fines_ufesp), Decimal(0))


def record_fine(
    fines_ufesp: Iterable[Decimal],
    recidivist: bool,
    obstruction_factor: Decimal = Decimal(1),
) -> Fine:
    """The fine of a record: the entries added up, doubled for a recidivist, multiplied by the
    obstruction factor (1 when there was none), rounded to the hundredth of a UFESP."""
    base = cumulative(fines_ufesp)
    recidivism = RECIDIVISM_FACTOR if recidivist else Decimal(1)
    total = (base * recidivism * obstruction_factor).quantize(CENT, rounding=ROUND_HALF_UP)
    return Fine(base, recidivism, Decimal(obstruction_factor), total)


def embargo_fine(breach_days: int) -> Decimal:
    """The daily fine of a disobeyed embargo: one UFESP per day of breach (art. 31)."""
    return EMBARGO_DAILY_FINE_UFESP * breach_days


def ufesp_value(day: datetime.date) -> Decimal:
    """The value of the UFESP in reais on `day` (the rate of its year)."""
    from .models.enforcement import UfespRate

    rate = UfespRate.objects.filter(year=day.year).values_list("value_brl", flat=True).first()
    if rate is None:
        raise UfespRateMissing(day.year)
    return rate


def to_brl(amount_ufesp: Decimal, paid_on: datetime.date) -> Decimal:
    """The amount in reais at the UFESP of the payment date (art. 36), to the cent."""
    return (Decimal(amount_ufesp) * ufesp_value(paid_on)).quantize(CENT, rounding=ROUND_HALF_UP)
