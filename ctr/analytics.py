"""Aggregations of CTRs for the Núcleo Permanente de Gestão (art. 15, art. 20): flows,
volumes and compliance, always computed in SQL and bounded in size, so that a page built
from them stays small whether the database holds ten thousand CTRs or a million."""

from __future__ import annotations

import dataclasses
import datetime
import math
from dataclasses import dataclass

from config.replica import read_connection
from pev_network.models import CatchmentBasin, ReceivingFacility, parameters_sql

from .alerts import open_since_sql
from .custody import chain as custody
from .models import CTR, CTRStatus, CTRWaste

CTR_TABLE = CTR._meta.db_table
WASTE_TABLE = CTRWaste._meta.db_table
FACILITY_TABLE = ReceivingFacility._meta.db_table
# The open-CTR alert hours of the set in force on a CTR `c`'s transport date. A scalar
# subquery, asked only of the issued CTRs (after `c.status = …` in an AND): a lateral join
# would choose a set for every CTR of the period (27 × the old join to the municipality on a
# million CTRs, against 2.6 × this way with 5 % still issued; docs/performance.md).
ALERT_HOURS_SQL = (
    "(SELECT mp.open_ctr_alert_hours FROM "
    + parameters_sql("c.municipality_id", "c.transport_date")
    + " mp)"
)
BASIN_TABLE = CatchmentBasin._meta.db_table


@dataclass(frozen=True)
class CTRFilter:
    """What the Núcleo chose to look at. Dates are transport dates, both inclusive."""

    date_from: datetime.date
    date_to: datetime.date
    municipality_id: int | None = None
    waste_class: str | None = None
    transporter_id: int | None = None
    facility_id: int | None = None

    def where(self, alias: str = "c") -> tuple[str, list]:
        clauses = [f"{alias}.transport_date BETWEEN %s AND %s"]
        params: list = [self.date_from, self.date_to]
        if self.municipality_id:
            clauses.append(f"{alias}.municipality_id = %s")
            params.append(self.municipality_id)
        if self.transporter_id:
            clauses.append(f"{alias}.transporter_id = %s")
            params.append(self.transporter_id)
        if self.facility_id:
            clauses.append(f"{alias}.destination_facility_id = %s")
            params.append(self.facility_id)
        if self.waste_class:
            clauses.append(
                f"EXISTS (SELECT 1 FROM {WASTE_TABLE} w "
                f"WHERE w.ctr_id = {alias}.id AND w.waste_class = %s)"
            )
            params.append(self.waste_class)
        return " AND ".join(clauses), params


def grid_size_degrees(extent: tuple[float, float, float, float], cells: int = 60) -> float:
    """A cell size that splits the larger side of the extent into about `cells` cells."""
    min_x, min_y, max_x, max_y = extent
    side = max(max_x - min_x, max_y - min_y, 1e-6)
    # Rounded to a "nice" value so that the same map gives the same cells.
    raw = side / cells
    magnitude = 10 ** math.floor(math.log10(raw))
    return min((m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw), default=raw)


@dataclass(frozen=True)
class Flow:
    origin_lon: float
    origin_lat: float
    facility_id: int
    facility_name: str
    facility_lon: float
    facility_lat: float
    volume_m3: float
    ctrs: int


def flows(flt: CTRFilter, cell: float, limit: int = 400) -> list[Flow]:
    """Volume carried from each origin cell to each facility, largest first.

    One line per (cell, facility) pair instead of one per CTR: the page's size depends on the
    grid and the network, not on how many CTRs there are. Cancelled CTRs carried nothing.
    """
    where, params = flt.where()
    sql = f"""
        WITH pairs AS (
            SELECT floor(ST_X(c.origin) / %s) AS gx, floor(ST_Y(c.origin) / %s) AS gy,
                   c.destination_facility_id AS facility_id,
                   sum(c.total_volume_m3) AS volume, count(*) AS ctrs
            FROM {CTR_TABLE} c
            WHERE {where} AND c.status <> %s
            GROUP BY 1, 2, 3
            ORDER BY volume DESC
            LIMIT %s
        )
        SELECT (p.gx + 0.5) * %s, (p.gy + 0.5) * %s, f.id, f.name,
               ST_X(ST_PointOnSurface(f.area)), ST_Y(ST_PointOnSurface(f.area)),
               p.volume, p.ctrs
        FROM pairs p JOIN {FACILITY_TABLE} f ON f.id = p.facility_id
        ORDER BY p.volume DESC
    """
    with read_connection.cursor() as cursor:
        cursor.execute(sql, [cell, cell, *params, CTRStatus.CANCELLED, limit, cell, cell])
        return [Flow(r[0], r[1], r[2], r[3], r[4], r[5], float(r[6]), r[7]) for r in cursor]


@dataclass(frozen=True)
class Cell:
    lon: float
    lat: float
    count: int


def overdue_origin_cells(
    flt: CTRFilter, cell: float, now: datetime.datetime, limit: int = 2000
) -> list[Cell]:
    """Origins of CTRs still open past the municipality's alert hours (OPEN_TOO_LONG),
    counted per grid cell."""
    where, params = flt.where()
    since_sql, since_params = open_since_sql("c")
    sql = f"""
        SELECT (floor(ST_X(c.origin) / %s) + 0.5) * %s AS lon,
               (floor(ST_Y(c.origin) / %s) + 0.5) * %s AS lat, count(*)
        FROM {CTR_TABLE} c
        WHERE {where} AND c.status = %s
          AND {since_sql} + make_interval(hours => {ALERT_HOURS_SQL}) < %s
        GROUP BY 1, 2 ORDER BY 3 DESC LIMIT %s
    """
    with read_connection.cursor() as cursor:
        cursor.execute(
            sql, [cell, cell, cell, cell, *params, CTRStatus.ISSUED, *since_params, now, limit]
        )
        return [Cell(float(r[0]), float(r[1]), r[2]) for r in cursor]


def totals(flt: CTRFilter) -> dict:
    """Counts and volume of the filtered CTRs, by status, and how many of them are onward CTRs
    (the same waste leaving an ATT or PEV: counting their volume again would add it twice)."""
    where, params = flt.where()
    with read_connection.cursor() as cursor:
        cursor.execute(
            f"SELECT c.status, c.origin_facility_id IS NOT NULL, count(*), "
            f"coalesce(sum(c.total_volume_m3), 0) "
            f"FROM {CTR_TABLE} c WHERE {where} GROUP BY 1, 2",
            params,
        )
        rows = cursor.fetchall()
    by_status: dict[str, dict] = {}
    for status, _onward, n, volume in rows:
        line = by_status.setdefault(status, {"ctrs": 0, "volume_m3": 0.0})
        line["ctrs"] += n
        line["volume_m3"] += float(volume)
    onward = [(n, float(volume)) for _, is_onward, n, volume in rows if is_onward]
    return {
        "by_status": by_status,
        "ctrs": sum(s["ctrs"] for s in by_status.values()),
        "volume_m3": sum(s["volume_m3"] for s in by_status.values()),
        "onward_ctrs": sum(n for n, _ in onward),
        "onward_volume_m3": sum(v for _, v in onward),
    }


# --- figures of the dashboard ------------------------------------------------------------


def _fetch(sql: str, params: list) -> list[tuple]:
    with read_connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def volume_by_class_and_month(flt: CTRFilter) -> list[tuple[datetime.date, str, float]]:
    """(first day of month, waste class, m³) of the worksite loads that carried something: an
    onward CTR carries waste already counted when it left its worksite."""
    where, params = flt.where()
    rows = _fetch(
        f"""
        SELECT date_trunc('month', c.transport_date)::date, w.waste_class, sum(w.volume_m3)
        FROM {CTR_TABLE} c JOIN {WASTE_TABLE} w ON w.ctr_id = c.id
        WHERE {where} AND c.status <> %s AND c.origin_facility_id IS NULL
        GROUP BY 1, 2 ORDER BY 1, 2
        """,
        [*params, CTRStatus.CANCELLED],
    )
    return [(month, waste_class, float(volume)) for month, waste_class, volume in rows]


@dataclass(frozen=True)
class FacilityUse:
    facility_id: int
    name: str
    kind: str
    volume_m3: float
    ctrs: int
    capacity_m3: float | None  # over the period: daily capacity × days

    @property
    def use_pct(self) -> float | None:
        if not self.capacity_m3:
            return None
        return 100 * self.volume_m3 / self.capacity_m3


def volume_by_facility(flt: CTRFilter) -> list[FacilityUse]:
    """Received volume per destination facility of the municipality, with its use of the
    capacity it declares: every load it received, from whichever municipality (a consortium's
    shared landfill takes its neighbours' too)."""
    where, params = dataclasses.replace(flt, municipality_id=None).where()
    if flt.municipality_id:
        where += " AND f.municipality_id = %s"
        params.append(flt.municipality_id)
    days = (flt.date_to - flt.date_from).days + 1
    rows = _fetch(
        f"""
        SELECT f.id, f.name, f.kind, sum(coalesce(c.received_volume_m3, c.total_volume_m3)),
               count(*), f.capacity_m3_per_day
        FROM {CTR_TABLE} c JOIN {FACILITY_TABLE} f ON f.id = c.destination_facility_id
        WHERE {where} AND c.status = %s
        GROUP BY f.id ORDER BY 4 DESC
        """,
        [*params, CTRStatus.RECEIVED],
    )
    return [
        FacilityUse(fid, name, kind, float(volume), n, float(cap) * days if cap else None)
        for fid, name, kind, volume, n, cap in rows
    ]


def volume_by_basin(flt: CTRFilter) -> dict[int, tuple[float, int]]:
    """{bacia id: (m³, CTRs)} of the CTRs whose origin lies in each bacia: the loads from its
    worksites, not the onward CTRs of an ATT or PEV that stands in it (their waste came from
    elsewhere, and was counted where it came from).

    The join is written with ST_Intersects (a point on the border counts in both bacias it
    touches, as it does on the map); the planner walks the bacias and uses the GiST index on
    CTR origins, instead of testing every origin against every bacia.
    """
    where, params = flt.where()
    if flt.municipality_id:
        where += " AND b.municipality_id = %s"
        params.append(flt.municipality_id)
    rows = _fetch(
        f"""
        SELECT b.id, sum(c.total_volume_m3), count(*)
        FROM {BASIN_TABLE} b JOIN {CTR_TABLE} c ON ST_Intersects(b.area, c.origin)
        WHERE {where} AND c.status <> %s AND c.origin_facility_id IS NULL
        GROUP BY b.id
        """,
        [*params, CTRStatus.CANCELLED],
    )
    return {bid: (float(volume), n) for bid, volume, n in rows}


@dataclass(frozen=True)
class Compliance:
    transporter_id: int
    name: str
    ctrs: int
    with_findings: int
    refused: int
    overdue: int

    @property
    def problems(self) -> int:
        return self.with_findings + self.refused + self.overdue

    @property
    def compliance_pct(self) -> float:
        """Share of CTRs without a finding, a refusal or a delay."""
        return 100 * max(self.ctrs - self.problems, 0) / self.ctrs if self.ctrs else 100.0


def transporter_compliance(flt: CTRFilter, now: datetime.datetime) -> list[Compliance]:
    """Per transporter: CTRs, those with findings (warnings at issue or reception), refused,
    and open past the alert hours; the least compliant first."""
    where, params = flt.where()
    since_sql, since_params = open_since_sql("c")
    rows = _fetch(
        f"""
        SELECT t.id, t.name, count(*),
               count(*) FILTER (WHERE jsonb_array_length(c.findings) > 0),
               count(*) FILTER (WHERE c.status = %s),
               count(*) FILTER (WHERE c.status = %s AND
                   {since_sql} + make_interval(hours => {ALERT_HOURS_SQL}) < %s)
        FROM {CTR_TABLE} c
        JOIN ctr_transporter t ON t.id = c.transporter_id
        WHERE {where} AND c.status <> %s
        GROUP BY t.id
        """,
        [CTRStatus.REFUSED, CTRStatus.ISSUED, *since_params, now, *params, CTRStatus.CANCELLED],
    )
    ranking = [Compliance(*row) for row in rows]
    return sorted(ranking, key=lambda c: (c.compliance_pct, -c.ctrs, c.name))


def custody_flows(flt: CTRFilter) -> list[custody.Flow]:
    """The filtered loads from worksites (not the onward CTRs, which the walk follows) taken
    to where they are now (ctr.custody.chain), per bacia, first facility, end, class and month."""
    where, params = flt.where()
    # The filter's positional parameters bound into the text (quoted by the driver): the walk
    # takes named ones, and psycopg2 cannot mix the two styles in one query.
    bound = read_connection.ops.compose_sql(where, params).replace("%", "%%")
    roots = f"SELECT c.id FROM {CTR_TABLE} c WHERE {bound} AND c.origin_facility_id IS NULL"
    return custody.flows(roots, {}, flt.waste_class)


# --- the reception's findings on the Núcleo's map ---------------------------------------------

AWAY_CODES = ("RECEPTION_AWAY_FROM_FACILITY",)
TRAVEL_CODES = ("TRAVEL_TOO_FAST", "TRAVEL_TOO_SLOW")


def reception_finding_cells(
    flt: CTRFilter, cell: float, codes: tuple[str, ...], at: str, limit: int = 2000
) -> list[Cell]:
    """CTRs whose reception found one of `codes` (ctr.plausibility), counted per grid cell of
    `at`: "received_location" (where the receiver's device was) or "origin"."""
    if at not in ("received_location", "origin"):
        raise ValueError(at)
    where, params = flt.where()
    sql = f"""
        SELECT (floor(ST_X(c.{at}) / %s) + 0.5) * %s AS lon,
               (floor(ST_Y(c.{at}) / %s) + 0.5) * %s AS lat, count(*)
        FROM {CTR_TABLE} c
        WHERE {where} AND c.status = %s AND c.{at} IS NOT NULL
          AND EXISTS (SELECT 1 FROM jsonb_array_elements(c.findings) f
                      WHERE f ->> 'code' = ANY(%s))
        GROUP BY 1, 2 ORDER BY 3 DESC LIMIT %s
    """
    with read_connection.cursor() as cursor:
        cursor.execute(
            sql, [cell, cell, cell, cell, *params, CTRStatus.RECEIVED, list(codes), limit]
        )
        return [Cell(float(r[0]), float(r[1]), r[2]) for r in cursor]
