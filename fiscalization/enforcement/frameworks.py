"""Which penalty framework governs a case: the municipality's own in force on the day the case
opens. The case keeps it. A municipality without a framework of its own gets none
(no municipality's procedure borrows another's law): no case opens there until it has one."""

from __future__ import annotations

import datetime

from django.db.models import Q

from config.br import br_date
from pev_network.models import Municipality

from ..models.frameworks import PenaltyFramework
from .errors import EnforcementError


def _in_force(day: datetime.date):
    return PenaltyFramework.objects.filter(
        Q(valid_from__lte=day) & (Q(valid_until__isnull=True) | Q(valid_until__gte=day))
    ).order_by("-valid_from")


def own_framework_in_force(
    municipality: Municipality, day: datetime.date
) -> PenaltyFramework | None:
    return _in_force(day).filter(ibge_code=municipality.ibge_code).first()


def missing_framework_message(municipality: Municipality, day: datetime.date) -> str | None:
    """Why no case can open in `municipality` on `day`, or None when its framework is in force."""
    own = PenaltyFramework.objects.filter(ibge_code=municipality.ibge_code)
    if own_framework_in_force(municipality, day) is not None:
        return None
    if own.exists():
        return (
            f"Não há regime de penalidades vigente em {br_date(day)} para {municipality.name}: "
            "o administrador deve cadastrar a versão em vigor em “Regimes de penalidades” antes "
            "de abrir o processo."
        )
    return (
        f"{municipality.name} não tem regime de penalidades cadastrado: nenhum processo de "
        "fiscalização pode ser aberto no município até que o administrador cadastre, em "
        "“Regimes de penalidades”, o procedimento da lei municipal (a lei de outro município "
        "não se aplica)."
    )


def framework_in_force(municipality: Municipality, day: datetime.date) -> PenaltyFramework:
    """The framework of `municipality` in force on `day`; refused when it has none."""
    framework = own_framework_in_force(municipality, day)
    if framework is None:
        raise EnforcementError(
            missing_framework_message(municipality, day), "no_framework", status=409
        )
    return framework
