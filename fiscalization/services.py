"""Business logic of fiscalization: plain functions used by views, API and commands."""

from __future__ import annotations

import datetime

from config.replica import read_connection

from .models import DumpingReport, ReportStatus

REPORT_TABLE = DumpingReport._meta.db_table
# Reports that do not stand for dumping on the ground.
NOT_DUMPING = (ReportStatus.DUPLICATE, ReportStatus.UNFOUNDED)


def report_cells(
    since: datetime.date,
    until: datetime.date,
    cell: float,
    municipality_id: int | None = None,
    limit: int = 2000,
) -> list[tuple[float, float, int]]:
    """Dumping reports counted per grid cell of `cell` degrees: (lon, lat, count), the
    busiest first. Bounded, so a map of 100,000 reports stays a few hundred kilobytes."""
    where = ["r.created_at::date BETWEEN %s AND %s", "r.status NOT IN %s"]
    params: list = [since, until, tuple(NOT_DUMPING)]
    if municipality_id:
        where.append("r.municipality_id = %s")
        params.append(municipality_id)
    sql = f"""
        SELECT (floor(ST_X(r.location) / %s) + 0.5) * %s,
               (floor(ST_Y(r.location) / %s) + 0.5) * %s, count(*)
        FROM {REPORT_TABLE} r WHERE {" AND ".join(where)}
        GROUP BY 1, 2 ORDER BY 3 DESC LIMIT %s
    """
    with read_connection.cursor() as cursor:
        cursor.execute(sql, [cell, cell, cell, cell, *params, limit])
        return [(float(x), float(y), n) for x, y, n in cursor]


def reports_by_basin(
    since: datetime.date, until: datetime.date, municipality_id: int | None = None
) -> list[tuple[int, str, str | None, int]]:
    """(bacia id, bacia, PEV that serves it, dumping reports inside it), most reports first:
    where the PEV network fails its purpose (art. 6 III: PEVs where dumping happens)."""
    where = ["r.created_at::date BETWEEN %s AND %s", "r.status NOT IN %s"]
    params: list = [since, until, tuple(NOT_DUMPING)]
    if municipality_id:
        where.append("b.municipality_id = %s")
        params.append(municipality_id)
    sql = f"""
        SELECT b.id, b.name, f.name, count(r.id)
        FROM pev_network_catchmentbasin b
        LEFT JOIN pev_network_receivingfacility f ON f.id = b.served_by_id
        JOIN {REPORT_TABLE} r ON ST_Intersects(b.area, r.location)
        WHERE {" AND ".join(where)}
        GROUP BY b.id, b.name, f.name
        ORDER BY 4 DESC, b.name
    """
    with read_connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()
