"""Many loads at once: a period's worksite loads followed to where they
are now, summed per bacia, first facility, end, class and month (custody.flows); and each
facility's stock day by day (stock.stock_series), which must agree with the balance."""

import datetime
from decimal import Decimal

import pytest

from ctr import analytics, closing, services
from ctr.custody import chain as custody
from ctr.custody import stock
from ctr.custody.chain import Outcome
from pev_network.models import CatchmentBasin
from tests.builders import multi, offset, square
from tests.ctr.onward_world import inbound, onward
from tests.ctr_world import build_world
from tests.nucleo.flows_world import build_flows

pytestmark = pytest.mark.django_db

D = datetime.date
M3 = Decimal


@pytest.fixture
def world(frozen_today):
    return build_flows(build_world())


def flows_of(world, **filters) -> list[custody.Flow]:
    flt = analytics.CTRFilter(D(2026, 10, 1), D(2026, 11, 30), world.town.pk, **filters)
    return analytics.custody_flows(flt)


def summary(flows) -> dict:
    """{(first facility, end facility, outcome, class, month): m³}."""
    result = {}
    for f in flows:
        key = (f.first_facility_id, f.facility_id, f.outcome, f.waste_class, f.month.month)
        result[key] = result.get(key, 0) + f.volume_m3
    return result


def test_the_loads_of_a_period_end_where_the_fifo_took_them(world):
    att, recycling, landfill = world.att.pk, world.recycling.pk, world.landfill.pk
    flows = flows_of(world)
    assert {f.basin_id for f in flows} == {world.basin.pk}
    assert summary(flows) == {
        (att, recycling, Outcome.DESTINED, "A", 10): M3("4.000"),  # October's first out
        (att, recycling, Outcome.DESTINED, "A", 11): M3("2.000"),
        (att, landfill, Outcome.DESTINED, "A", 11): M3("2.000"),
        (att, att, Outcome.PROCESSED, "A", 11): M3("1.000"),
        (att, att, Outcome.STOCK, "A", 11): M3("5.000"),
        (landfill, landfill, Outcome.DESTINED, "A", 11): M3("3.000"),
        (att, att, Outcome.STOCK, "B", 11): M3("2.000"),
    }
    # Every cubic metre the worksites carried, once: 4 + 10 + 3 + 2.
    assert sum(f.volume_m3 for f in flows) == M3("19.000")


def test_the_onward_ctrs_are_followed_not_counted_as_loads_of_their_own(world):
    # The ATT's own CTRs (its operator is their generator) are not worksite loads.
    first_facilities = {f.first_facility_id for f in flows_of(world)}
    assert first_facilities == {world.att.pk, world.landfill.pk}


def test_the_class_filter_keeps_only_that_class_of_a_mixed_load(world):
    inbound(world, {"A": "1", "B": "1"}, received="2", day=D(2026, 11, 20))
    flows = flows_of(world, waste_class="B")
    assert {f.waste_class for f in flows} == {"B"}
    assert sum(f.volume_m3 for f in flows) == M3("3.000")  # November's 2 m³ and this 1


def test_a_load_on_the_border_of_two_bacias_counts_once(world):
    # A second bacia whose edge runs through the loads' origin (the first bacia's corner).
    CatchmentBasin.objects.create(
        municipality=world.town, name="Bacia Vizinha", area=multi(
            square(*offset(*world.origin.coords, -300, -300), 300)),
    )  # fmt: skip
    assert CatchmentBasin.objects.filter(area__intersects=world.origin).count() == 2
    flows = flows_of(world)
    assert sum(f.volume_m3 for f in flows) == M3("19.000")
    assert {f.basin_id for f in flows} == {world.basin.pk}  # the first of the two, by id


def test_a_load_outside_every_bacia_has_no_bacia(world):
    far = services.WorksiteData("Estrada Rural, km 3", world.origin)
    load = inbound(world, {"A": "2"}, received="2", day=D(2026, 11, 21), worksite=far)
    load.origin = load.origin.__class__(*offset(*world.origin.coords, 2000, 2000), srid=4326)
    load.save(update_fields=["origin"])
    outside = [f for f in flows_of(world) if f.basin_id is None]
    assert [(f.outcome, f.volume_m3) for f in outside] == [(Outcome.STOCK, M3("2.000"))]


def test_the_daily_stock_is_the_balance_of_each_day(world):
    # A refused onward CTR gives its volume back: the series follows, like the balance.
    back = onward(world, {"A": "2"}, day=D(2026, 11, 10))
    closing.refuse(back, world.recycling_operator, "fora de especificação")
    days = [D(2026, 10, 9), D(2026, 10, 10), D(2026, 11, 5), D(2026, 11, 10), D(2026, 11, 30)]
    series = {(p.waste_class, p.day): p.volume_m3 for p in stock.stock_series([world.att.pk], days)}
    for day in days:
        for line in stock.balance(world.att, None, day):
            assert series[line.waste_class, day] == line.closing, (line.waste_class, day)
    assert series["A", D(2026, 10, 9)] == 0  # before the first load: zero, not missing
    assert series["A", D(2026, 11, 30)] == M3("5.000")


def test_the_daily_stock_of_several_facilities_in_one_query(world, django_assert_num_queries):
    days = [D(2026, 11, 1), D(2026, 11, 30)]
    with django_assert_num_queries(1):
        points = stock.stock_series([world.att.pk, world.pev.pk, world.landfill.pk], days)
    facilities = {p.facility_id for p in points}
    assert facilities == {world.att.pk, world.landfill.pk}  # the PEV never moved anything
    landfill = [p.volume_m3 for p in points if p.facility_id == world.landfill.pk]
    assert landfill == [M3("0.000"), M3("5.000")]  # 3 m³ straight from the worksite, 2 on
