"""What may leave a facility's stock of a class on a day (ctr.custody.stock reads the stock): the
stock with the municipality's sorting tolerance (origin_stock, read by OVER_FACILITY_STOCK), the
bound the later days' outflows set (later_shortfall), and the facility's lock that queues
whoever takes from it."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from decimal import Decimal

from pev_network.models import DEFAULT_SORTING_TOLERANCE_PCT, FIRST_SET_FROM, ReceivingFacility

from .. import rules
from . import stock


def lock_facility(facility: ReceivingFacility) -> None:
    ReceivingFacility.objects.select_for_update().filter(pk=facility.pk).values("pk").first()


def origin_stock(facility: ReceivingFacility, day: datetime.date) -> dict[str, rules.OriginStock]:
    """Each class's stock at the facility at the end of `day`, with what it received of it and
    its municipality's sorting tolerance in force that day (ctr.custody.stock)."""
    tolerance_on = sorting_tolerances(facility)  # one read for every class
    return {
        waste_class: rules.OriginStock(
            line.closing, line.received_to_date, tolerance_on(waste_class, day)
        )
        for waste_class, line in stock.stock_on(facility, day).items()
    }


def later_shortfall(
    facility: ReceivingFacility, waste_class: str, day: datetime.date, volume_m3: Decimal
) -> tuple[stock.Outflow, Decimal] | None:
    """A volume taken from a class on `day` is gone on every later day too: the first later
    day on which what had left the class would then pass OVER_FACILITY_STOCK's bound, and the
    most that could leave on `day` without that (the least of the later days' bounds). The
    bound only falls on a day something leaves, so those days are the ones to read."""
    tolerance_on = sorting_tolerances(facility)
    later = [
        (
            outflow,
            rules.OriginStock(
                outflow.closing, outflow.received_to_date, tolerance_on(waste_class, outflow.day)
            ),
        )
        for outflow in stock.outflows(facility)
        if outflow.waste_class == waste_class and outflow.day > day
    ]
    short = [outflow for outflow, bound in later if volume_m3 > bound.allowed_m3]
    if not short:
        return None
    return short[0], min(bound.allowed_m3 for _, bound in later)


def sorting_tolerances(
    facility: ReceivingFacility,
) -> Callable[[str, datetime.date], Decimal]:
    """sorting_tolerance for many days (each outflow of a facility on its own day) from one
    read of its municipality's sets: each day gets the set Municipality.parameters_on would
    choose, the latest that starts on or before it, else the first."""
    place = facility.municipality
    if place is None:
        return lambda waste_class, day: Decimal(DEFAULT_SORTING_TOLERANCE_PCT)
    # Without a set (a municipality made by bulk_create), the law's defaults.
    sets = list(place.parameter_sets.order_by("valid_from"))
    sets = sets or [place.parameters_on(FIRST_SET_FROM)]

    def tolerance_on(waste_class: str, day: datetime.date) -> Decimal:
        started = [s for s in sets if s.valid_from <= day]
        return (started[-1] if started else sets[0]).sorting_tolerance_of(waste_class)

    return tolerance_on


def sorting_tolerance(facility: ReceivingFacility, waste_class: str, day: datetime.date) -> Decimal:
    """How far sorting may change a class's volume at the facility (%) on `day` (an onward
    CTR's transport date, the day of an outflow): its municipality's set in force then."""
    place = facility.municipality
    if place is None:
        return Decimal(DEFAULT_SORTING_TOLERANCE_PCT)
    return place.parameters_on(day).sorting_tolerance_of(waste_class)
