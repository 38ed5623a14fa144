"""The stock of a receiving facility per waste class (Lei 3.978/2007 art. 3 III: the ATT sorts
the waste "e posterior remoção para adequada disposição"): what it received, what it shipped on,
what it recycled or reused itself, and what is left. Set-based SQL, one query per question.

A movement is dated by its CTR's transport date (the date the document declares; a reception's
timestamp is when someone pressed the button) or by the processing's day. A received CTR counts
its received volume, shared over its waste lines in proportion to what they declared; an onward
CTR counts while issued or received, so a refused or cancelled one returns its volume to the
stock simply by no longer counting.

moves_sql is the one description of the movements: the balance reads it here (MOVES_SQL, one
facility), the CSV import (ctr.bulk) for every facility its onward rows ship from, and the FIFO
allocation of inbound to onward CTRs is meant to read the same rows,
ordered by day within a class.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from decimal import Decimal

from django.db import connection

from pev_network.models import MunicipalParameters, ReceivingFacility

from ..models import CTR, CTRStatus, CTRWaste, OnSiteProcessing

# Counted as shipped from the stock: an onward CTR on its way or delivered.
SHIPPED_STATUSES = (CTRStatus.ISSUED.value, CTRStatus.RECEIVED.value)


def moves_sql(facilities: str) -> str:
    """One row per movement of the facilities whose id satisfies `facilities` (SQL after the
    column: "= %(facility)s", "IN (SELECT …)"): its facility, class, day, and the volume it
    adds to (received) or takes from (shipped, processed) the stock."""
    return f"""
    SELECT c.destination_facility_id AS facility_id, w.waste_class AS waste_class,
           c.transport_date AS day,
           CASE WHEN c.received_volume_m3 IS NULL THEN w.volume_m3
                ELSE w.volume_m3 * c.received_volume_m3 / c.total_volume_m3 END AS received,
           0::numeric AS shipped, 0::numeric AS processed
    FROM {CTR._meta.db_table} c JOIN {CTRWaste._meta.db_table} w ON w.ctr_id = c.id
    WHERE c.destination_facility_id {facilities} AND c.status = '{CTRStatus.RECEIVED.value}'
    UNION ALL
    SELECT c.origin_facility_id, w.waste_class, c.transport_date, 0, w.volume_m3, 0
    FROM {CTR._meta.db_table} c JOIN {CTRWaste._meta.db_table} w ON w.ctr_id = c.id
    WHERE c.origin_facility_id {facilities} AND c.status IN %(shipped_statuses)s
    UNION ALL
    SELECT p.facility_id, p.waste_class, p.day, 0, 0, p.volume_m3
    FROM {OnSiteProcessing._meta.db_table} p
    WHERE p.facility_id {facilities}
"""


# The movements of the facility %(facility)s.
MOVES_SQL = moves_sql("= %(facility)s")

BALANCE_SQL = f"""
    SELECT waste_class,
           round(coalesce(sum(received - shipped - processed)
                 FILTER (WHERE day < %(date_from)s), 0), 3) AS opening,
           round(coalesce(sum(received) FILTER (WHERE day >= %(date_from)s), 0), 3) AS received,
           round(coalesce(sum(shipped) FILTER (WHERE day >= %(date_from)s), 0), 3) AS shipped,
           round(coalesce(sum(processed) FILTER (WHERE day >= %(date_from)s), 0), 3)
               AS processed,
           round(sum(received - shipped - processed), 3) AS closing,
           round(sum(received), 3) AS received_to_date
    FROM ({MOVES_SQL}) moves
    WHERE day <= %(date_to)s
    GROUP BY waste_class
    ORDER BY waste_class
"""

# Since when each class has had stock above zero without a break at each facility of
# %(facilities)s, up to %(date_to)s: the running balance after each day's movements; the stock
# has been above zero since the first movement after the last day it was at or below zero (or
# since its first movement). Every facility at once (the Núcleo's dashboard asks for all the
# municipality's ATTs and PEVs).
STALE_SQL = f"""
    WITH daily AS (
        SELECT facility_id, waste_class, day, sum(received - shipped - processed) AS delta
        FROM ({moves_sql("= ANY(%(facilities)s::bigint[])")}) moves
        WHERE day <= %(date_to)s
        GROUP BY facility_id, waste_class, day
    ), running AS (
        SELECT facility_id, waste_class, day,
               sum(delta) OVER (PARTITION BY facility_id, waste_class ORDER BY day) AS balance
        FROM daily
    ), last_empty AS (
        SELECT facility_id, waste_class,
               max(day) FILTER (WHERE balance <= 0) AS emptied,
               (array_agg(balance ORDER BY day DESC))[1] AS balance
        FROM running
        GROUP BY facility_id, waste_class
    )
    SELECT e.facility_id, e.waste_class, round(e.balance, 3),
           (SELECT min(r.day) FROM running r
            WHERE r.facility_id = e.facility_id AND r.waste_class = e.waste_class
              AND (e.emptied IS NULL OR r.day > e.emptied)) AS since
    FROM last_empty e
    WHERE e.balance > 0
    ORDER BY e.facility_id, e.waste_class
"""


@dataclass(frozen=True)
class ClassBalance:
    """One class at a facility over a period: opening + received − shipped − processed =
    closing. `received_to_date` is everything received up to the period's end (the base of
    the sorting tolerance)."""

    waste_class: str
    opening: Decimal
    received: Decimal
    shipped: Decimal
    processed: Decimal
    closing: Decimal
    received_to_date: Decimal


def _params(facility_id: int, date_from, date_to) -> dict:
    return {
        "facility": facility_id,
        "shipped_statuses": SHIPPED_STATUSES,
        "date_from": date_from or datetime.date.min,
        "date_to": date_to or datetime.date.max,
    }


def balance(
    facility: ReceivingFacility | int,
    date_from: datetime.date | None = None,
    date_to: datetime.date | None = None,
) -> list[ClassBalance]:
    """The facility's balance per class between the two days (both included; open-ended
    without them): one query."""
    facility_id = getattr(facility, "pk", facility)
    with connection.cursor() as cursor:
        cursor.execute(BALANCE_SQL, _params(facility_id, date_from, date_to))
        return [ClassBalance(*row) for row in cursor.fetchall()]


def stock_on(facility: ReceivingFacility | int, day: datetime.date) -> dict[str, ClassBalance]:
    """Each class's balance at the end of `day`, by class."""
    return {line.waste_class: line for line in balance(facility, None, day)}


@dataclass(frozen=True)
class StaleStock:
    """Stock of a class above zero without a break since `since` (art. 3 III: an ATT is a
    place of passage, not a dump)."""

    waste_class: str
    volume_m3: Decimal
    since: datetime.date
    days: int


def alert_days_of(facility: ReceivingFacility, day: datetime.date) -> int:
    """How many days of stock above zero make an alert at the facility on `day`: its
    municipality's `stock_alert_days` in the set in force that day (the alert has no CTR: the
    day the stock is judged on, today on the stock page)."""
    municipality = facility.municipality
    if municipality is None:
        return MunicipalParameters._meta.get_field("stock_alert_days").default
    return municipality.parameters_on(day).stock_alert_days


def stale_stock(
    facility: ReceivingFacility, day: datetime.date, alert_days: int | None = None
) -> list[StaleStock]:
    """The classes whose stock has stayed above zero for more than the municipality's
    `stock_alert_days` on `day`."""
    return stale_stocks([facility], day, alert_days)[facility.pk]


def stale_stocks(
    facilities: list[ReceivingFacility], day: datetime.date, alert_days: int | None = None
) -> dict[int, list[StaleStock]]:
    """`stale_stock` of each facility, by id, in one query (each facility's own municipality's
    `stock_alert_days` unless `alert_days` is given)."""
    found: dict[int, list[StaleStock]] = {f.pk: [] for f in facilities}
    if not facilities:
        return found
    by_town: dict[int | None, int] = {}  # one read of the day's set per municipality
    limit = {}
    for f in facilities:
        if alert_days is None and f.municipality_id not in by_town:
            by_town[f.municipality_id] = alert_days_of(f, day)
        limit[f.pk] = alert_days if alert_days is not None else by_town[f.municipality_id]
    with connection.cursor() as cursor:
        cursor.execute(
            STALE_SQL,
            {
                "facilities": list(found),
                "shipped_statuses": SHIPPED_STATUSES,
                "date_to": day,
            },
        )
        rows = cursor.fetchall()
    for facility_id, waste_class, volume, since in rows:
        if (day - since).days > limit[facility_id]:
            found[facility_id].append(StaleStock(waste_class, volume, since, (day - since).days))
    return found


# The balance of each class at each facility of %(facilities)s at the end of each day of
# %(days)s (the days sorted): MOVES_SQL for every facility at once (a lateral join on its
# facility parameter), a zero movement at each day asked for, and one running sum per
# facility and class, so that a day without movements still shows the balance it carries.
SERIES_SQL = f"""
    WITH moves AS (
        SELECT f.id AS facility_id, m.waste_class, m.day,
               m.received - m.shipped - m.processed AS delta, 0 AS asked
        FROM unnest(%(facilities)s::bigint[]) AS f(id)
        CROSS JOIN LATERAL ({MOVES_SQL.replace("%(facility)s", "f.id")}) m
        WHERE m.day <= %(last_day)s
    ), asked AS (
        SELECT k.facility_id, k.waste_class, d.day, 0::numeric AS delta, 1 AS asked
        FROM (SELECT DISTINCT facility_id, waste_class FROM moves) k
        CROSS JOIN unnest(%(days)s::date[]) AS d(day)
    ), running AS (
        SELECT facility_id, waste_class, day, asked,
               sum(delta) OVER (PARTITION BY facility_id, waste_class
                                ORDER BY day, asked ROWS UNBOUNDED PRECEDING) AS balance
        FROM (SELECT * FROM moves UNION ALL SELECT * FROM asked) points
    )
    SELECT facility_id, waste_class, day, round(balance, 3)
    FROM running
    WHERE asked = 1
    ORDER BY facility_id, waste_class, day
"""


@dataclass(frozen=True)
class StockPoint:
    """The stock of a class at a facility at the end of `day`."""

    facility_id: int
    waste_class: str
    day: datetime.date
    volume_m3: Decimal


def stock_series(facility_ids: list[int], days: list[datetime.date]) -> list[StockPoint]:
    """Each facility's balance per class at the end of each of `days`: one query for all the
    facilities (the classes a facility never moved have no points)."""
    if not facility_ids or not days:
        return []
    days = sorted(days)
    with connection.cursor() as cursor:
        cursor.execute(
            SERIES_SQL,
            {
                "facilities": list(facility_ids),
                "days": days,
                "last_day": days[-1],
                "shipped_statuses": SHIPPED_STATUSES,
            },
        )
        return [StockPoint(*row) for row in cursor.fetchall()]


# Corrections after reception (ctr.field.corrections): a correction of a received CTR changes what
# its facility received of each class back to the CTR's transport date. Each class's totals at
# the end of each day something left the facility %(facility)s (an onward CTR, on-site
# processing): the balances OVER_FACILITY_STOCK and record_processing checked when it left.
OUTFLOW_SQL = f"""
    WITH daily AS (
        SELECT waste_class, day, sum(received) AS received, sum(shipped + processed) AS out
        FROM ({MOVES_SQL}) moves
        GROUP BY waste_class, day
    ), running AS (
        SELECT waste_class, day, out,
               sum(received) OVER w AS received_to_date,
               sum(out) OVER w AS out_to_date,
               sum(received - out) OVER w AS closing
        FROM daily
        WINDOW w AS (PARTITION BY waste_class ORDER BY day)
    )
    SELECT waste_class, day, round(received_to_date, 3), round(out_to_date, 3), round(closing, 3)
    FROM running
    WHERE out > 0
    ORDER BY waste_class, day
"""


@dataclass(frozen=True)
class Outflow:
    """A class at a facility at the end of a day something left it: what the facility had
    received of it and what had left it up to then, and the balance (received − left)."""

    waste_class: str
    day: datetime.date
    received_to_date: Decimal
    out_to_date: Decimal
    closing: Decimal


def outflows(facility: ReceivingFacility | int) -> list[Outflow]:
    """Each class's totals at the facility at the end of every day something left it: one
    query."""
    facility_id = getattr(facility, "pk", facility)
    with connection.cursor() as cursor:
        cursor.execute(OUTFLOW_SQL, _params(facility_id, None, None))
        return [Outflow(*row) for row in cursor.fetchall()]
