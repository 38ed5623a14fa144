"""Loads of the tests' world followed to their final destinations: worksite loads in
a bacia to the ATT and straight to the landfill, the ATT's onward CTRs to the recycling area
and the landfill, processing at the ATT, and what is left there in stock.

At the ATT, class A comes in as 4 m³ (10/10) and 10 m³ (01/11) and leaves as 6 m³ to the
recycling area (05/11), 2 m³ to the landfill (06/11) and 1 m³ recycled on site (07/11); first
in, first out, October's 4 m³ all went to recycling, and of November's 10 m³, 2 went to
recycling, 2 to the landfill, 1 was recycled at the ATT and 5 are still there. November also
took 3 m³ straight to the landfill, and 2 m³ of class B to the ATT, still in stock."""

from __future__ import annotations

import datetime
from decimal import Decimal

from ctr import closing, services
from ctr.custody import processing
from ctr.models import ProcessingKind
from pev_network.models import CatchmentBasin
from tests.builders import multi, set_parameters, square
from tests.ctr.onward_world import inbound, onward
from tests.ctr_world import World, make_user

D = datetime.date


def build_flows(world: World) -> World:
    # The ATT's class A stock, above zero since 10/10, is an alert on TODAY (51 days); its
    # class B, since 03/11 (27 days), is not yet.
    set_parameters(world.town, stock_alert_days=30)
    world.basin = CatchmentBasin.objects.create(
        municipality=world.town, name="Bacia Centro", code="B-CENTRO", served_by=world.pev,
        area=multi(square(*world.origin.coords, 300)),
    )  # fmt: skip
    world.recycling_operator = recycling_operator = make_user(
        "operador_reciclagem", facility=world.recycling
    )
    landfill_operator = make_user("operador_aterro", facility=world.landfill)
    site = services.WorksiteData("Rua das Obras, 1", world.origin)
    inbound(world, {"A": "4"}, received="4", day=D(2026, 10, 10), worksite=site)
    inbound(world, {"A": "10"}, received="10", day=D(2026, 11, 1), worksite=site)
    inbound(world, {"A": "3"}, received="3", day=D(2026, 11, 2), worksite=site,
            facility=world.landfill)  # fmt: skip
    inbound(world, {"B": "2"}, received="2", day=D(2026, 11, 3), worksite=site)
    to_recycling = onward(world, {"A": "6"}, day=D(2026, 11, 5))
    closing.receive(to_recycling, recycling_operator, Decimal("6"))
    to_landfill = onward(world, {"A": "2"}, day=D(2026, 11, 6), destination=world.landfill)
    closing.receive(to_landfill, landfill_operator, Decimal("2"))
    processing.record_processing(
        world.operator, world.att, "A", Decimal("1"), D(2026, 11, 7), ProcessingKind.RECYCLED
    )
    world.onward = (to_recycling, to_landfill)
    return world
