"""Hotspots of illegal dumping: the reports clustered with DBSCAN, in metres, inside PostGIS.

A hotspot is a group of at least `min_points` reports each within `eps_m` metres of another of
the group (ST_ClusterDBSCAN). Reports marked DUPLICATE or UNFOUNDED are not dumping on the
ground and stay out; CLEANED ones stay in, since a place that was cleaned and is reported again
is exactly what the inspectors look for (recurrence after cleaning).

Metres. ST_ClusterDBSCAN works in the units of the geometry, and the reports are stored in
degrees (EPSG:4326), where 100 m is 0.0009° north-south but ~0.00097° east-west here and more
towards the south. So the points are projected first, to the UTM zone of their municipality
(WGS 84 / UTM, EPSG:326zz north, 327zz south), chosen from the centre of the municipality's
bounding box: a municipality is far smaller than a 6° zone, inside its zone the scale error is
below 0.1 % (10 cm on 100 m), and for Brazil these coincide with SIRGAS 2000 / UTM (EPSG:319xx,
e.g. 31983 for zone 23S, Guaratinguetá) to the centimetre, since SIRGAS 2000 and WGS 84 differ
by less than that. Unlike a fixed EPSG:31983, this holds for every municipality the platform
serves (São Paulo is zone 23S too, but Mato Grosso is 21S). A local azimuthal projection would
be as good but needs a custom spatial_ref_sys row per municipality; UTM needs none.

One municipality, one clustering: the window is partitioned by municipality, so a hotspot never
straddles a border (each belongs to the municipality that must clean it and inspect it).

Cost (EXPLAIN ANALYZE, 100,000 reports in one municipality, 83k of them in the last 180 days,
eps 100 m, 3 points; measured by hand on a scratch database): 0.45 s in
SQL, ~0.5 s end to end. The WindowAgg of ST_ClusterDBSCAN dominates (~0.25 s with the
transform to UTM: it builds an in-memory tree over the partition's points); then the
per-cluster aggregates and convex hulls (~0.08 s), the sort by cluster (~0.04 s) and the scan
(~0.02 s). At 100k rows in one municipality the planner rightly reads the table sequentially;
for a short period the created_at and (municipality, status, -created_at) indexes serve the
filter. JIT is switched off for this query (it added 0.7 s). The bbox does not prune the
input: a cluster is a property of all its points, so clusters are computed first and kept
when their hull intersects the box. Large eps is the expensive case (5 km: ~10 s, every point
neighbouring thousands), hence the statement timeout.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass, field

from django.contrib.gis.geos import GEOSGeometry, Polygon
from django.db import OperationalError, connection, transaction
from django.utils import timezone
from psycopg2.errors import QueryCanceled

from pev_network.models import CatchmentBasin, Municipality

from .models import DumpingReport, ReportStatus
from .services import NOT_DUMPING

DEFAULT_EPS_M = 100.0
DEFAULT_MIN_POINTS = 3
DEFAULT_DAYS = 180
DEFAULT_LIMIT = 500
# A cluster of reports at one spot (or on a line) has a point or line for hull: buffer it by
# this many metres, so that every hotspot is a polygon a map can draw and a click can hit.
DEGENERATE_BUFFER_M = 5.0
# DBSCAN costs about the number of points times their neighbours within eps: 0.5 s at 100k
# reports and 100 m, 10 s at 5 km where every point neighbours a quarter of the town. Beyond
# this the query is cancelled and the caller asked for a smaller eps, period or area.
STATEMENT_TIMEOUT_MS = 20_000

REPORT_TABLE = DumpingReport._meta.db_table
MUNICIPALITY_TABLE = Municipality._meta.db_table
BASIN_TABLE = CatchmentBasin._meta.db_table

# UTM zone of a point, WGS 84: EPSG 32601-32660 north, 32701-32760 south.
UTM_SRID_SQL = (
    "(CASE WHEN ST_Y({c}) < 0 THEN 32700 ELSE 32600 END"
    " + LEAST(60, GREATEST(1, floor((ST_X({c}) + 180) / 6)::int + 1)))"
)


class TooCostly(Exception):
    """The clustering ran past STATEMENT_TIMEOUT_MS (message in pt-BR)."""


@dataclass(frozen=True)
class HotspotQuery:
    eps_m: float = DEFAULT_EPS_M
    min_points: int = DEFAULT_MIN_POINTS
    since: datetime.date | None = None  # default: DEFAULT_DAYS before today
    until: datetime.date | None = None  # inclusive; default: no end
    municipality_id: int | None = None
    # Or several: a user's (jurisdiction.scope.Jurisdiction.readable_ids).
    municipality_ids: frozenset[int] | tuple[int, ...] | None = None
    bbox: Polygon | None = None  # 4326; clusters whose hull intersects it
    limit: int = DEFAULT_LIMIT
    # Only the cluster that holds this report (the suspects of a hotspot).
    report_id: int | None = None

    def since_or_default(self) -> datetime.date:
        return self.since or timezone.localdate() - datetime.timedelta(days=DEFAULT_DAYS)


@dataclass(frozen=True)
class Hotspot:
    id: int  # the id of its oldest report: stable while the cluster keeps that report
    municipality_id: int
    municipality_ibge: str
    municipality_name: str
    reports: int
    first_report_at: datetime.datetime
    last_report_at: datetime.datetime
    last_report_id: int
    last_report_protocol: str
    cleaned: int  # reports of the cluster marked CLEANED
    first_cleaned_at: datetime.datetime | None
    last_cleaned_at: datetime.datetime | None
    recurrence_after_cleaning: int  # reports received after the first cleaning
    reports_since_last_cleaning: int  # ... and after the last one: dirty again now
    basin_id: int | None
    basin_name: str | None
    area_m2: float
    centre: tuple[float, float]  # lon, lat of the reports' centroid
    hull: dict  # GeoJSON Polygon, 4326
    report_ids: list[int] = field(default_factory=list, repr=False)

    @property
    def hull_geometry(self) -> GEOSGeometry:
        return GEOSGeometry(json.dumps(self.hull), srid=4326)

    def properties(self) -> dict:
        return {
            "municipality": {
                "id": self.municipality_id,
                "ibge_code": self.municipality_ibge,
                "name": self.municipality_name,
            },
            "reports": self.reports,
            "first_report_at": self.first_report_at.isoformat(),
            "last_report_at": self.last_report_at.isoformat(),
            "last_report": {"id": self.last_report_id, "protocol": self.last_report_protocol},
            "cleaned": self.cleaned,
            "first_cleaned_at": self.first_cleaned_at.isoformat()
            if self.first_cleaned_at
            else None,
            "last_cleaned_at": self.last_cleaned_at.isoformat() if self.last_cleaned_at else None,
            "recurrence_after_cleaning": self.recurrence_after_cleaning,
            "reports_since_last_cleaning": self.reports_since_last_cleaning,
            "basin": {"id": self.basin_id, "name": self.basin_name} if self.basin_id else None,
            "area_m2": round(self.area_m2, 1),
            "centre": [round(self.centre[0], 6), round(self.centre[1], 6)],
        }

    def feature(self) -> dict:
        return {
            "type": "Feature",
            "id": self.id,
            "geometry": self.hull,
            "properties": self.properties(),
        }


def _start_of(day: datetime.date) -> datetime.datetime:
    return datetime.datetime.combine(day, datetime.time.min, tzinfo=timezone.get_current_timezone())


def _sql(query: HotspotQuery) -> tuple[str, list]:
    where = ["r.created_at >= %s", "r.status NOT IN %s"]
    params: list = [_start_of(query.since_or_default()), tuple(NOT_DUMPING)]
    if query.until:
        where.append("r.created_at < %s")
        # The day after `until`, except at the calendar's end (9999-12-31 has no next day).
        day_after = min(query.until, datetime.date.max - datetime.timedelta(days=1))
        params.append(_start_of(day_after + datetime.timedelta(days=1)))
    if query.municipality_id:
        where.append("r.municipality_id = %s")
        params.append(query.municipality_id)
    muni_where, muni_params = "", []
    if query.municipality_id:
        muni_where, muni_params = "WHERE m.id = %s", [query.municipality_id]
    if query.municipality_ids is not None:
        ids = sorted(query.municipality_ids)
        where.append("r.municipality_id = ANY(%s)")
        params.append(ids)
        muni_where += (" AND " if muni_where else "WHERE ") + "m.id = ANY(%s)"
        muni_params.append(ids)
    outer = []
    outer_params: list = []
    if query.bbox is not None:
        outer.append("h.hull && ST_GeomFromEWKB(%s) AND ST_Intersects(h.hull, ST_GeomFromEWKB(%s))")
        box = bytes(query.bbox.ewkb)
        outer_params += [box, box]
    if query.report_id is not None:
        outer.append("%s = ANY(h.report_ids)")
        outer_params.append(query.report_id)
    cleaned = ReportStatus.CLEANED.value
    sql = f"""
        WITH muni AS (
            SELECT m.id, m.ibge_code, m.name,
                   {UTM_SRID_SQL.format(c="ST_Centroid(ST_Envelope(m.boundary))")} AS srid
            FROM {MUNICIPALITY_TABLE} m {muni_where}
        ),
        pts AS (
            SELECT r.id, r.protocol, r.municipality_id, r.created_at, r.status, r.location,
                   CASE WHEN r.status = '{cleaned}' THEN coalesce(r.cleaned_at, r.created_at)
                   END AS cleaned_at,
                   ST_Transform(r.location, mu.srid) AS geom_m
            FROM {REPORT_TABLE} r JOIN muni mu ON mu.id = r.municipality_id
            WHERE {" AND ".join(where)}
        ),
        clustered AS (
            SELECT pts.*, ST_ClusterDBSCAN(geom_m, eps => %s, minpoints => %s)
                          OVER (PARTITION BY municipality_id) AS cid
            FROM pts
        ),
        members AS (
            SELECT c.*, min(c.cleaned_at) OVER w AS first_clean,
                   max(c.cleaned_at) OVER w AS last_clean
            FROM clustered c WHERE c.cid IS NOT NULL
            WINDOW w AS (PARTITION BY c.municipality_id, c.cid)
        ),
        clusters AS (
            SELECT municipality_id, cid,
                   min(id) AS id, count(*) AS reports,
                   min(created_at) AS first_at, max(created_at) AS last_at,
                   (array_agg(id ORDER BY created_at DESC, id DESC))[1] AS last_id,
                   (array_agg(protocol ORDER BY created_at DESC, id DESC))[1] AS last_protocol,
                   count(cleaned_at) AS cleaned,
                   min(first_clean) AS first_clean, min(last_clean) AS last_clean,
                   count(*) FILTER (WHERE created_at > first_clean) AS recurrence,
                   count(*) FILTER (WHERE created_at > last_clean) AS since_last_clean,
                   array_agg(id ORDER BY id) AS report_ids,
                   ST_ConvexHull(ST_Collect(geom_m)) AS hull_m,
                   ST_Centroid(ST_Collect(location)) AS centre
            FROM members GROUP BY municipality_id, cid
        ),
        h AS (
            SELECT c.*, ST_Transform(
                       CASE WHEN ST_Dimension(c.hull_m) < 2 THEN ST_Buffer(c.hull_m, %s, 8)
                            ELSE c.hull_m END,
                       4326) AS hull,
                   ST_Area(CASE WHEN ST_Dimension(c.hull_m) < 2 THEN ST_Buffer(c.hull_m, %s, 8)
                                ELSE c.hull_m END) AS area_m2
            FROM clusters c
        )
        SELECT h.id, h.municipality_id, mu.ibge_code, mu.name, h.reports, h.first_at, h.last_at,
               h.last_id, h.last_protocol, h.cleaned, h.first_clean, h.last_clean, h.recurrence,
               h.since_last_clean, b.id, b.name, h.area_m2, ST_X(h.centre), ST_Y(h.centre),
               ST_AsGeoJSON(h.hull, 6), h.report_ids
        FROM h
        JOIN muni mu ON mu.id = h.municipality_id
        LEFT JOIN LATERAL (
            SELECT b.id, b.name FROM {BASIN_TABLE} b
            WHERE ST_Intersects(b.area, h.centre) ORDER BY b.id LIMIT 1
        ) b ON true
        {"WHERE " + " AND ".join(outer) if outer else ""}
        ORDER BY h.reports DESC, h.last_at DESC, h.id
        LIMIT %s
    """
    all_params = [
        *muni_params,
        *params,
        query.eps_m,
        query.min_points,
        DEGENERATE_BUFFER_M,
        DEGENERATE_BUFFER_M,
        *outer_params,
        query.limit,
    ]
    return sql, all_params


def find_hotspots(query: HotspotQuery) -> list[Hotspot]:
    """The hotspots, the largest first (then the most recently reported)."""
    sql, params = _sql(query)
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            # The cost PostGIS declares for ST_ClusterDBSCAN makes the planner JIT-compile the
            # query: 0.7 s more on a 0.5 s run at 100k reports, for nothing.
            cursor.execute("SET LOCAL jit = off")
            cursor.execute(f"SET LOCAL statement_timeout = {int(STATEMENT_TIMEOUT_MS)}")
            cursor.execute(sql, params)
            rows = cursor.fetchall()
    except OperationalError as exc:
        if not isinstance(exc.__cause__, QueryCanceled):
            raise
        raise TooCostly(
            f"O agrupamento passou de {STATEMENT_TIMEOUT_MS // 1000} s e foi interrompido: "
            "reduza o raio (eps_m), o período (since) ou a área (municipality, bbox)."
        ) from None
    return [
        Hotspot(
            id=r[0],
            municipality_id=r[1],
            municipality_ibge=r[2],
            municipality_name=r[3],
            reports=r[4],
            first_report_at=r[5],
            last_report_at=r[6],
            last_report_id=r[7],
            last_report_protocol=r[8],
            cleaned=r[9],
            first_cleaned_at=r[10],
            last_cleaned_at=r[11],
            recurrence_after_cleaning=r[12],
            reports_since_last_cleaning=r[13],
            basin_id=r[14],
            basin_name=r[15],
            area_m2=float(r[16]),
            centre=(float(r[17]), float(r[18])),
            hull=json.loads(r[19]),
            report_ids=list(r[20]),
        )
        for r in rows
    ]


def hotspot_of_report(report: DumpingReport, query: HotspotQuery) -> Hotspot | None:
    """The hotspot that holds `report` with these parameters (None when it is noise)."""
    scoped = HotspotQuery(
        eps_m=query.eps_m,
        min_points=query.min_points,
        since=query.since,
        until=query.until,
        municipality_id=report.municipality_id,
        limit=1,
        report_id=report.pk,
    )
    found = find_hotspots(scoped)
    return found[0] if found else None


def hotspots_geojson(query: HotspotQuery) -> dict:
    """A GeoJSON FeatureCollection of the hotspots' hulls, with the parameters used."""
    hotspots = find_hotspots(query)
    return {
        "type": "FeatureCollection",
        "features": [h.feature() for h in hotspots],
        "parameters": {
            "eps_m": query.eps_m,
            "min_points": query.min_points,
            "since": query.since_or_default().isoformat(),
            "until": query.until.isoformat() if query.until else None,
        },
        "numberReturned": len(hotspots),
        "limit": query.limit,
    }
