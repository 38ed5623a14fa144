"""Two municipalities on one platform: the test world's town (A, Guaratinguetá) and
a neighbour (B, Aparecida) east of it, each with its own staff, and the people whose roles
cross the line on purpose (a consortium's inspector of both, the state's auditor of A)."""

from __future__ import annotations

from dataclasses import dataclass

from ctr import roles
from pev_network.models import Municipality
from tests.builders import municipality
from tests.ctr_world import World, build_world, make_user

NEIGHBOUR_IBGE = "3502507"


@dataclass
class TwoTowns:
    a: World  # build_world(): the town, its network, transporters and staff
    b: Municipality
    nucleo_b: object
    fiscal_b: object
    authority_b: object
    auditor_a: object  # reads A, acts on nothing
    consortium_fiscal: object  # an inspector of A and of B


def build_two_towns() -> TwoTowns:
    a = build_world()
    b = municipality(NEIGHBOUR_IBGE, "Aparecida (teste)", east_m=20_000)
    consortium = make_user("fiscal_consorcio", roles.FISCAL, a.town)
    from jurisdiction.models import StaffRole

    StaffRole.objects.create(user=consortium, municipality=b, role=roles.FISCAL)
    return TwoTowns(
        a=a,
        b=b,
        nucleo_b=make_user("nucleo_b", roles.NUCLEO, b),
        fiscal_b=make_user("fiscal_b", roles.FISCAL, b),
        authority_b=make_user("autoridade_b", roles.AUTORIDADE, b),
        auditor_a=make_user("auditor_a", roles.AUDITOR, a.town),
        consortium_fiscal=consortium,
    )
