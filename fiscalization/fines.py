"""Fine arithmetic: amounts in the framework's money unit, converted to reais on payment.

The figures are the case's penalty framework's (fiscalization.models.frameworks), each citing
its article; what is fixed here is how they combine:

- Simultaneous infractions add up (Lei 3.978/2007 art. 30 §3): the base is the sum of the
  record's entries.
- Recidivism (who is a recidivist: enforcement.facts) multiplies the base by the framework's
  factor: once (Lei 3.978/2007 art. 30, "em dobro"), again at each new recidivism (Rio de
  Janeiro art. 177 §19, "novas multas em dobro"), or, when it persists, the framework's multiple
  of the last fine applied (Lei 3.190/2013 art. 9 §2: "3 (três) vezes o valor da última multa").
- Obstructing the inspection is an aggravating circumstance (Lei 3.978/2007 art. 26 I) for
  which none of the three laws gives a figure: the framework's obstruction factor is empty, the
  record notes the circumstance and the fine is not multiplied. A framework whose law gives a
  factor sets it.
- A disobeyed embargo costs the framework's daily fine per day of breach (art. 31: one UFESP).
- Paid in reais at the unit's value on the payment date (art. 36): the UfespRate of the unit and
  the payment's year, rounded to the cent; an amount in reais is paid as it is. An early-payment
  discount (Rio de Janeiro art. 183) applies when paid within its days.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING

from config.br import br_number
from config.errors import DomainError

from . import deadlines

if TYPE_CHECKING:
    from .models.frameworks import PenaltyFramework

CENT = Decimal("0.01")
FACTOR_PLACES = Decimal("0.000001")
ONE = Decimal(1)
UNIT_NAMES = {"UFESP": "UFESP", "UFIR_RIO": "UFIR-RJ", "BRL": "R$"}


class UfespRateMissing(DomainError):
    """No value of the fiscal unit for the payment's year: the fine cannot be converted to
    reais. A 400, as the payment refused for it has always answered (the input cannot be taken
    as is)."""

    code = "ufesp_missing"

    def __init__(self, year: int, unit: str = "UFESP"):
        self.year, self.unit = year, unit
        name = UNIT_NAMES.get(unit, unit)
        super().__init__(
            f"Não há valor da {name} cadastrado para {year}: cadastre-o em “Valores das "
            "unidades fiscais” antes de registrar o pagamento (art. 36)."
        )


@dataclass(frozen=True)
class Fine:
    """How a record's fine is made: base (sum of entries) × recidivism × obstruction, or the
    multiple of the last fine when recidivism persists (`persistent_of`: that last fine)."""

    base_ufesp: Decimal
    recidivism_factor: Decimal
    obstruction_factor: Decimal
    total_ufesp: Decimal
    persistent_of: Decimal | None = None


def cumulative(fines_ufesp: Iterable[Decimal]) -> Decimal:
    """Simultaneous infractions add up (art. 30 §3)."""
    return sum((Decimal(f) for f in fines_ufesp), Decimal(0))


def recidivism_factor(earlier: int, framework: PenaltyFramework) -> Decimal:
    """The factor for an offender with `earlier` final records before (0: none)."""
    if earlier == 0:
        return ONE
    if framework.recidivism_escalation == "REPEATED":
        return framework.recidivism_factor**earlier
    return framework.recidivism_factor


def is_persistent(earlier: int, framework: PenaltyFramework) -> bool:
    """Recidivism that persists (Lei 3.190/2013 art. 9 §2): a second recidivism or more."""
    return framework.recidivism_escalation == "PERSISTENT" and earlier >= 2


def obstruction_factor(obstructed: bool, framework: PenaltyFramework) -> Decimal:
    """The factor for obstructing the inspection: the framework's, 1 when it gives none."""
    if not obstructed or framework.obstruction_factor is None:
        return ONE
    return framework.obstruction_factor


def record_fine(
    fines_ufesp: Iterable[Decimal],
    framework: PenaltyFramework,
    earlier: int = 0,
    obstructed: bool = False,
    last_fine: Decimal | None = None,
) -> Fine:
    """The fine of a record under `framework`: the entries added up, times the recidivism
    factor for `earlier` final records and the obstruction factor, to the hundredth; when
    recidivism persists, the framework's multiple of `last_fine` instead (Lei 3.190/2013 art. 9
    §2: "aplicada uma multa de 3 (três) vezes o valor da última multa aplicada", whatever
    the doubled fine of §1 would be)."""
    base = cumulative(fines_ufesp)
    recidivism = recidivism_factor(earlier, framework)
    obstruction = obstruction_factor(obstructed, framework)
    total = (base * recidivism * obstruction).quantize(CENT, rounding=ROUND_HALF_UP)
    persistent_of = None
    if is_persistent(earlier, framework) and last_fine is not None:
        persistent_of = Decimal(last_fine)
        total = (framework.persistent_factor * persistent_of).quantize(CENT)
    return Fine(base, recidivism, obstruction, total, persistent_of)


def embargo_fine(breach_days: int, framework: PenaltyFramework) -> Decimal:
    """The daily fine of a disobeyed embargo times the days of breach (art. 31: one UFESP)."""
    if framework.embargo_daily_fine is None:
        raise DomainError(
            f"{framework.law} não prevê multa diária por embargo descumprido.",
            "no_daily_fine",
        )
    return framework.embargo_daily_fine * breach_days


def fiscal_unit_value(unit: str, day: datetime.date) -> Decimal:
    """The value in reais on `day` of the fiscal unit (the value of its year)."""
    from .models.enforcement import UfespRate

    rate = (
        UfespRate.objects.filter(unit=unit, year=day.year).values_list("value_brl", flat=True)
    ).first()
    if rate is None:
        raise UfespRateMissing(day.year, unit)
    return rate


def ufesp_value(day: datetime.date) -> Decimal:
    return fiscal_unit_value("UFESP", day)


def to_brl(amount: Decimal, paid_on: datetime.date, unit: str = "UFESP") -> Decimal:
    """The amount in reais at the unit's value of the payment date (art. 36), to the cent."""
    if unit == "BRL":
        return Decimal(amount).quantize(CENT, rounding=ROUND_HALF_UP)
    value = fiscal_unit_value(unit, paid_on)
    return (Decimal(amount) * value).quantize(CENT, rounding=ROUND_HALF_UP)


def with_discount(
    amount: Decimal,
    drawn_up: datetime.datetime | datetime.date,
    paid_on: datetime.date,
    framework: PenaltyFramework,
) -> Decimal:
    """The amount less the early-payment discount when paid within its days (Rio de Janeiro
    art. 183: 30 % if paid within 10 days of the record); unchanged otherwise."""
    last = deadlines.discount_last_day(drawn_up, framework)
    if last is None or paid_on > last:
        return Decimal(amount)
    rest = (100 - framework.discount_percent) / Decimal(100)
    return (Decimal(amount) * rest).quantize(CENT, rounding=ROUND_HALF_UP)


# --- yearly index update (Lei 3.190/2013 art. 9 §6) ------------------------------------------


@dataclass(frozen=True)
class IndexUpdate:
    """The update of the table's amounts for a fine drawn up in `year`: the variations the
    municipality entered for the years after the framework's base year up to `year` (applied,
    as (year, percent, source)), multiplied into `factor`; `missing`, the years not entered,
    which the record says instead of guessing them."""

    index: str
    base_year: int
    year: int
    applied: tuple[tuple[int, Decimal, str], ...]
    missing: tuple[int, ...]
    factor: Decimal
    citation: str

    @property
    def rounded_factor(self) -> Decimal:
        """The factor as printed and kept with the record (the amounts use it whole)."""
        return self.factor.quantize(FACTOR_PLACES, rounding=ROUND_HALF_UP)

    def amount(self, base: Decimal) -> Decimal:
        """A line's amount of the law, updated (to the cent)."""
        return (Decimal(base) * self.factor).quantize(CENT, rounding=ROUND_HALF_UP)

    def missing_text(self) -> str:
        return "; ".join(
            f"variação do {self.index} de {year} não cadastrada" for year in self.missing
        )

    @property
    def text(self) -> str:
        """The computation as the record and the case page print it."""
        head = f"Valores de {self.base_year} da lei atualizados ({self.citation})"
        if self.applied:
            steps = "; ".join(
                f"{year}: {br_number(percent, 4)}% ({source})"
                for year, percent, source in self.applied
            )
            body = f": {steps} — fator acumulado {br_number(self.rounded_factor, 6)}."
        else:
            body = ": nenhuma variação cadastrada — valores da lei, sem atualização."
        if self.missing:
            body += (
                f" Atenção: {self.missing_text()} (aplicadas só as variações cadastradas; "
                "cadastre-as em “Variações anuais do índice das multas”)."
            )
        return head + body


def index_update(framework: PenaltyFramework, municipality, year: int) -> IndexUpdate | None:
    """The yearly update of the framework's amounts for a fine drawn up in `year` in
    `municipality` (Lei 3.190/2013 art. 9 §6), None where the framework has none (Lei
    3.978/2007: UFESP; Rio de Janeiro)."""
    from .models.frameworks import IndexVariation

    if not framework.index_name or framework.index_base_year is None:
        return None
    years = range(framework.index_base_year + 1, year + 1)
    entered = {
        v.year: v
        for v in IndexVariation.objects.filter(municipality=municipality, year__in=list(years))
    }
    factor, applied = ONE, []
    for y in years:
        if (variation := entered.get(y)) is not None:
            factor *= ONE + variation.percent / 100
            applied.append((y, variation.percent, variation.source))
    return IndexUpdate(
        index=framework.index_name,
        base_year=framework.index_base_year,
        year=year,
        applied=tuple(applied),
        missing=tuple(y for y in years if y not in entered),
        factor=factor,
        citation=framework.cite("index_name"),
    )
