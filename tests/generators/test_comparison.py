"""Declared against transported against destined: the approved PGRCC's
volumes by class, the worksite's CTRs (declared and received) and what the chain of custody
took to a final destination, by class and month."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest

from ctr import closing, services
from ctr.models import Worksite
from generators.comparison import worksite_comparison
from generators.models import PlannedVolume, PlanStatus, WastePlan
from tests.ctr.onward_world import inbound, onward
from tests.ctr_world import build_world, make_user

pytestmark = pytest.mark.django_db

D = datetime.date
M3 = Decimal
ADDRESS = "Rua do Plano, 5"


@pytest.fixture
def world(frozen_today):
    world = build_world()
    world.recycling_operator = make_user("operador_reciclagem", facility=world.recycling)
    return world


OCTOBER_5 = D(2026, 10, 5)


def load(world, lines, received=None, day=OCTOBER_5):
    site = services.WorksiteData(ADDRESS, world.origin)
    return inbound(world, lines, received=received, day=day, worksite=site)


def plan_for(worksite, status=PlanStatus.APPROVED, version=1, **volumes):
    plan = WastePlan.objects.create(worksite=worksite, version=version, status=status)
    for waste_class, volume in volumes.items():
        PlannedVolume.objects.create(plan=plan, waste_class=waste_class, volume_m3=M3(volume))
    return plan


def test_expected_transported_received_and_destined_by_class_and_month(world):
    first = load(world, {"A": "4", "B": "1"}, received="5", day=D(2026, 10, 5))
    load(world, {"A": "2"}, received="1", day=D(2026, 11, 3))  # 1 of the 2 m³ received
    cancelled = load(world, {"A": "3"}, day=D(2026, 11, 4))
    closing.cancel(cancelled, world.alfa_user, "desistência")
    worksite = Worksite.objects.get(pk=first.worksite_id)
    plan_for(worksite, A="20", B="2", C="1")
    plan_for(worksite, status=PlanStatus.SUPERSEDED, version=0, A="999")
    # 3 m³ of class A leave the ATT for the recycling area and are received there: the FIFO
    # takes the worksite's October load first.
    shipped = onward(world, {"A": "3"}, day=D(2026, 11, 10), destination=world.recycling)
    closing.receive(shipped, world.recycling_operator, shipped.total_volume_m3)

    comparison = worksite_comparison(worksite)

    a, b, c = (comparison.of_class(x) for x in "ABC")
    assert (a.expected_m3, a.transported_m3, a.received_m3) == (M3(20), M3(6), M3(5))
    assert (b.expected_m3, b.transported_m3, b.received_m3) == (M3(2), M3(1), M3(1))
    assert (c.expected_m3, c.transported_m3) == (M3(1), M3(0))
    assert a.destined_m3 == M3(3) and b.destined_m3 == 0
    assert a.transported_pct == M3(30)
    assert comparison.expected_m3 == M3(23) and comparison.transported_m3 == M3(7)
    assert [m.month for m in comparison.months] == [D(2026, 10, 1), D(2026, 11, 1)]
    october, november = comparison.months
    assert october.transported == {"A": M3(4), "B": M3(1)}
    assert october.destined == {"A": M3(3)}  # the October load is the one shipped (FIFO)
    assert november.transported == {"A": M3(2)} and november.received == {"A": M3(1)}
    assert not comparison.destinations.conclusive


def test_without_an_approved_plan_nothing_is_expected(world):
    ctr = load(world, {"A": "2"})
    worksite = Worksite.objects.get(pk=ctr.worksite_id)
    plan_for(worksite, status=PlanStatus.SUBMITTED, A="50")

    comparison = worksite_comparison(worksite)

    assert comparison.plan is None and comparison.expected_m3 is None
    assert comparison.of_class("A").expected_m3 is None
    assert comparison.of_class("A").transported_m3 == M3(2)
    assert comparison.transported_pct is None
