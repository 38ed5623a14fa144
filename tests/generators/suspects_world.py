"""Worksites with dates, approved plans and loads, built directly (not through the generator's
forms or the PGRCC workflow): what the suspect-worksite tests, the Núcleo's pages and their
browser tests measure."""

from __future__ import annotations

import datetime
from decimal import Decimal

from ctr import services
from ctr.models import WorkKind, Worksite
from ctr.rules import WasteLine
from generators.models import PlannedVolume, PlanStatus, WastePlan
from tests.ctr_world import TODAY, World

M3 = Decimal


def days(n: int) -> datetime.date:
    """TODAY moved by `n` days."""
    return TODAY + datetime.timedelta(days=n)


def site(
    world: World,
    address: str,
    start=None,
    end=None,
    large=True,
    ended=None,
    location=None,
    kind=WorkKind.NEW_BUILDING,
    permit="",
    generator=None,
    municipality=None,
) -> Worksite:
    """A worksite of Gama (or `generator`) in the world's town, registered with its dates."""
    return Worksite.objects.create(
        generator=generator or world.gama,
        address=address,
        location=location or world.origin,
        municipality=municipality or world.town,
        permit_number=permit,
        built_area_m2=M3("1000"),
        work_kind=kind,
        start_date=start,
        expected_end=end,
        ended_on=ended,
        is_large_generator=large,
    )


def plan(worksite: Worksite, status=PlanStatus.APPROVED, version: int = 1, **volumes) -> WastePlan:
    """A PGRCC version of the worksite with the volumes by class (m³)."""
    created = WastePlan.objects.create(worksite=worksite, version=version, status=status)
    for waste_class, volume in volumes.items():
        PlannedVolume.objects.create(plan=created, waste_class=waste_class, volume_m3=M3(volume))
    return created


def load(world: World, worksite: Worksite, volume: str, day=TODAY, waste_class="A"):
    """A CTR of Alfa from the worksite to the ATT."""
    return services.issue(
        world.alfa,
        world.alfa_user,
        services.IssueRequest(
            transport_date=day,
            vehicle_plate="ABC1D23",
            origin=worksite.location,
            destination=world.inside(world.att),
            waste=[WasteLine(waste_class, M3(volume), "entulho")],
            worksite_id=worksite.pk,
        ),
    )
