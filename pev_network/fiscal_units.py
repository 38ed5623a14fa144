"""The UFESP's years: which are missing now or soon, for the notices of the admin and of the
Núcleo's dashboard. A year without its UFESP leaves its discharge fees
without a value in reais (Lei 3.978/2007 art. 12 §3) and its fines unpayable (art. 36)."""

from __future__ import annotations

import datetime

from django.utils import timezone

from config.br import br_date

from .models import FiscalUnit, UfespRate

# How many days before 1 January the next year's missing UFESP is announced: from 1 December.
NOTICE_DAYS = 31


def missing_years(today: datetime.date | None = None, unit: str = FiscalUnit.UFESP) -> list[int]:
    """This year, and next year within NOTICE_DAYS of it, when the unit's value (by default
    the UFESP's) is not registered."""
    today = today or timezone.localdate()
    years = [today.year]
    if datetime.date(today.year + 1, 1, 1) - today <= datetime.timedelta(days=NOTICE_DAYS):
        years.append(today.year + 1)
    known = set(UfespRate.objects.filter(unit=unit, year__in=years).values_list("year", flat=True))
    return [year for year in years if year not in known]


ADMIN_STEP = "Cadastre-o em “Valores das unidades fiscais”."
NUCLEO_STEP = "Peça ao administrador da plataforma que o cadastre."


def _when(year: int, today: datetime.date) -> str:
    if year > today.year:
        return f"a partir de {br_date(datetime.date(year, 1, 1))}"
    return "desde 1º de janeiro"


def short_label(unit: str) -> str:
    """ "UFIR-RJ" of "UFIR-RJ (valores convertidos …)"."""
    return FiscalUnit(unit).label.split(" (")[0]


def notice(
    today: datetime.date | None = None,
    *,
    step: str = ADMIN_STEP,
    fine_unit: str | None = FiscalUnit.UFESP,
) -> str:
    """The warning for the missing years, "" when none is missing. `step`: what the reader
    does (the platform administrator registers it; the Núcleo asks for it).

    Scope: the UFESP is São Paulo's, one value a year for every municipality (UfespRate has
    none), and every CTR's discharge fee is in it (Lei 3.978/2007 art. 12 §3): its missing
    year concerns everyone. `fine_unit` is the unit of the fines of the municipality the
    reader works in (its own framework's; None or "BRL" when they are not in a fiscal unit):
    the warning says the fines cannot be paid only where they are in the missing unit
    (art. 36), and warns of that unit's own missing years. The platform's administrator
    (no municipality) reads it for the UFESP's fines."""
    today = today or timezone.localdate()
    fines_in_ufesp = fine_unit == FiscalUnit.UFESP
    parts = [
        f"O valor da UFESP de {year} não está cadastrado: {_when(year, today)}, as taxas de "
        "descarga (Lei 3.978/2007 art. 12 §3) ficam sem valor em reais"
        + (" e as multas não podem ser pagas (art. 36)." if fines_in_ufesp else ".")
        for year in missing_years(today)
    ]
    if fine_unit in FiscalUnit.values and not fines_in_ufesp:
        parts += [
            f"O valor da {short_label(fine_unit)} de {year} não está cadastrado: "
            f"{_when(year, today)}, as multas do município não podem ser pagas."
            for year in missing_years(today, fine_unit)
        ]
    if not parts:
        return ""
    return " ".join([*parts, step])
