"""The UFESP's years: which are missing now or soon, for the notices of the admin and of the
Núcleo's dashboard (issue 25 point 15). A year without its UFESP leaves its discharge fees
without a value in reais (Lei 3.978/2007 art. 12 §3) and its fines unpayable (art. 36)."""

from __future__ import annotations

import datetime

from django.utils import timezone

from config.br import br_date

from .models import FiscalUnit, UfespRate

# How many days before 1 January the next year's missing UFESP is announced: from 1 December.
NOTICE_DAYS = 31


def missing_years(today: datetime.date | None = None) -> list[int]:
    """This year, and next year within NOTICE_DAYS of it, when their UFESP is not registered."""
    today = today or timezone.localdate()
    years = [today.year]
    if datetime.date(today.year + 1, 1, 1) - today <= datetime.timedelta(days=NOTICE_DAYS):
        years.append(today.year + 1)
    known = set(
        UfespRate.objects.filter(unit=FiscalUnit.UFESP, year__in=years).values_list(
            "year", flat=True
        )
    )
    return [year for year in years if year not in known]


ADMIN_STEP = "Cadastre-o em “Valores das unidades fiscais”."
NUCLEO_STEP = "Peça ao administrador da plataforma que o cadastre."


def notice(today: datetime.date | None = None, *, step: str = ADMIN_STEP) -> str:
    """The warning for the missing years, "" when none is missing. `step`: what the reader
    does (the platform administrator registers it; the Núcleo asks for it)."""
    today = today or timezone.localdate()
    missing = missing_years(today)
    if not missing:
        return ""
    parts = []
    for year in missing:
        when = (
            f"a partir de {br_date(datetime.date(year, 1, 1))}"
            if year > today.year
            else "desde 1º de janeiro"
        )
        parts.append(
            f"O valor da UFESP de {year} não está cadastrado: {when}, as taxas de descarga "
            f"(Lei 3.978/2007 art. 12 §3) ficam sem valor em reais e as multas não podem ser "
            f"pagas (art. 36)."
        )
    return " ".join([*parts, step])
