"""CTRs of Construtora Gama (the world's generator with an account, tests/ctr_world.py) for the
tests of its pages: issued by either transporter, from its worksite or naming it."""

from __future__ import annotations

import datetime
from decimal import Decimal

from rest_framework.test import APIClient

from ctr import services
from ctr.models import CTR, Worksite
from ctr.rules import WasteLine
from tests.ctr_world import CNPJ_GAMA, TODAY, World

GAMA = services.GeneratorData("Construtora Gama Ltda.", CNPJ_GAMA)
MARIA = services.GeneratorData("Maria da Obra", "52998224725")
GAMA_SITE = "Av. da Gama, 500"
FLEET = {"alfa": ("ABC1D23", "C-01"), "beta": ("XYZ9876", "B-01")}


def issue(
    world: World,
    by: str = "alfa",
    generator: services.GeneratorData | None = GAMA,
    address: str = GAMA_SITE,
    worksite: Worksite | None = None,
    facility=None,
    volume: str = "3",
    day: datetime.date = TODAY,
    at: datetime.datetime | None = None,
) -> CTR:
    """A CTR of `by` ("alfa" or "beta") to the ATT (or `facility`): from the worksite at
    `address` of `generator`, or from an existing `worksite` (naming `generator`, or the
    worksite's own when None)."""
    plate, equipment = FLEET[by]
    facility = facility or world.att
    return services.issue(
        getattr(world, by),
        getattr(world, f"{by}_user"),
        services.IssueRequest(
            transport_date=day,
            vehicle_plate=plate,
            equipment_code=equipment,
            origin=world.origin,
            destination=world.inside(facility),
            waste=[WasteLine("A", Decimal(volume), "entulho")],
            generator=generator,
            worksite=None if worksite else services.WorksiteData(address, world.origin, "Centro"),
            worksite_id=worksite.pk if worksite else None,
        ),
        at=at,
    )


def api_client(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def listed_numbers(response) -> set[str]:
    return {row["number"] for row in response.json()["results"]}
