"""Which penalty framework governs a case: the municipality's own in force on the day the case
opens, or else the default one (Lei 3.978/2007 of Guaratinguetá). The case keeps it."""

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


def framework_in_force(municipality: Municipality, day: datetime.date) -> PenaltyFramework:
    """The framework of `municipality` in force on `day`, or the default one in force then."""
    framework = (
        _in_force(day).filter(ibge_code=municipality.ibge_code).first()
        or _in_force(day).filter(is_default=True).first()
    )
    if framework is None:
        raise EnforcementError(
            f"Não há regime de penalidades vigente em {br_date(day)} para {municipality.name}: "
            "o administrador deve cadastrá-lo em “Regimes de penalidades” antes de abrir o "
            "processo.",
            "no_framework",
        )
    return framework
