"""Suspects of a dumping report (or of a hotspot): the CTRs that could have brought the waste.

A CTR is a suspect when, in one set-based query:

- its transport date lies in the window: from `window_days` days before the report's date up
  to that date (for a hotspot: before its first report, up to its last one), and it was
  issued before the report was received (a load that left afterwards cannot have caused it);
- its origin lies within `radius_km` of the spot (ST_DWithin on geography, metres on the
  spheroid; for a hotspot, of its hull);
- and at least one of these reasons holds:
  - OVERDUE: still issued (never received) and, at the report's time, open longer than its
    municipality's alert hours, with the same "open since" as ctr.alerts.overdue (the later
    of the issue time and the start of the transport day). A CTR received since then is not
    overdue: the facility confirmed the load.
  - REFUSED / CANCELLED: the facility refused the load, or the transporter cancelled the CTR:
    either way the waste left the site without a receipt.
  - ON_THE_WAY: the spot lies on the way from the origin to the declared destination. The
    bearing origin→spot and the bearing origin→destination differ by less than
    ON_THE_WAY_MAX_ANGLE degrees, and the spot is closer to the origin than the destination
    is. Bearings are geodesic (ST_Azimuth on geography); for a hotspot the spot is its centre.
    It holds whatever the CTR's status: a received load may have been lightened on the way.
    It is undefined (so false) when the origin is the spot or the destination itself.
  - SLOW_TRIP: received, but its reception found the trip too slow for the distance
    (TRAVEL_TOO_SLOW, ctr.plausibility): the load likely went elsewhere
    first, and was perhaps lightened on the way.

The rows are grouped by transporter and vehicle with counts per reason; the CTRs with a reason
other than ON_THE_WAY come first in each group. The candidate CTRs are found through the GiST
index on the origin (a box around the spot in degrees, a little wider than the radius) before
the exact distance on geography.
"""

from __future__ import annotations

import datetime
import math
from dataclasses import dataclass, field

from django.contrib.gis.geos import GEOSGeometry
from django.db import connection
from django.db.models.expressions import RawSQL
from django.utils import timezone

from ctr.alerts import open_since_sql
from ctr.models import CTR, CTRStatus, Transporter, TransporterLicence, Vehicle, Worksite
from generators import suspects as worksite_alerts
from pev_network.models import ReceivingFacility, parameters_sql

from .hotspots import Hotspot
from .models import DumpingReport

DEFAULT_WINDOW_DAYS = 7
DEFAULT_RADIUS_KM = 3.0
ON_THE_WAY_MAX_ANGLE = 45.0
MAX_ITEMS_PER_VEHICLE = 100

REASONS = ("OVERDUE", "REFUSED", "CANCELLED", "ON_THE_WAY", "SLOW_TRIP")
REASON_LABELS = {
    "OVERDUE": "em atraso (não recebido no prazo)",
    "REFUSED": "recusado no destino",
    "CANCELLED": "cancelado",
    "ON_THE_WAY": "ponto no caminho do destino declarado",
    "SLOW_TRIP": "viagem lenta demais para a distância (possível desvio)",
}
# The reception's finding that makes a received CTR a SLOW_TRIP suspect (a jsonb containment
# on CTR.findings, as the reception wrote it).
SLOW_TRIP_FINDING = '[{"code": "TRAVEL_TOO_SLOW"}]'

METRES_PER_DEGREE = 111_320.0


@dataclass(frozen=True)
class Spot:
    """Where and when the dumping was seen: a point (a report) or a hull (a hotspot)."""

    geometry: GEOSGeometry  # 4326
    first_at: datetime.datetime  # the window starts window_days before this day
    last_at: datetime.datetime  # up to this day; overdue is judged at this time
    report: DumpingReport | None = None
    hotspot: Hotspot | None = None

    @classmethod
    def of_report(cls, report: DumpingReport) -> Spot:
        return cls(report.location, report.created_at, report.created_at, report=report)

    @classmethod
    def of_hotspot(cls, hotspot: Hotspot) -> Spot:
        return cls(
            hotspot.hull_geometry, hotspot.first_report_at, hotspot.last_report_at, hotspot=hotspot
        )


@dataclass
class SuspectCTR:
    id: int
    number: str
    status: str
    transport_date: datetime.date
    created_at: datetime.datetime
    origin: tuple[float, float]
    destination: tuple[float, float]
    facility_name: str
    origin_distance_m: float
    destination_distance_m: float
    bearing_difference_deg: float | None
    hours_open_at_report: float | None
    reasons: list[str]

    def as_dict(self) -> dict:
        return {
            "id": self.id,
            "number": self.number,
            "status": self.status,
            "transport_date": self.transport_date.isoformat(),
            "created_at": self.created_at.isoformat(),
            "origin": [round(self.origin[0], 6), round(self.origin[1], 6)],
            "destination": [round(self.destination[0], 6), round(self.destination[1], 6)],
            "destination_facility": self.facility_name,
            "origin_distance_m": round(self.origin_distance_m),
            "destination_distance_m": round(self.destination_distance_m),
            "bearing_difference_deg": None
            if self.bearing_difference_deg is None
            else round(self.bearing_difference_deg, 1),
            "hours_open_at_report": None
            if self.hours_open_at_report is None
            else round(self.hours_open_at_report, 1),
            "reasons": self.reasons,
        }


def _reason_counts(ctrs: list[SuspectCTR]) -> dict[str, int]:
    return {reason: sum(reason in c.reasons for c in ctrs) for reason in REASONS}


@dataclass
class VehicleGroup:
    id: int
    plate: str
    ctrs: list[SuspectCTR] = field(default_factory=list)

    @property
    def display_plate(self) -> str:
        return f"{self.plate[:3]}-{self.plate[3:]}"

    @property
    def counts(self) -> dict[str, int]:
        return _reason_counts(self.ctrs)

    def as_dict(self) -> dict:
        return {
            "id": self.id,
            "plate": self.plate,
            "ctrs": len(self.ctrs),
            "reasons": self.counts,
            "items": [c.as_dict() for c in self.ctrs[:MAX_ITEMS_PER_VEHICLE]],
            "items_truncated": len(self.ctrs) > MAX_ITEMS_PER_VEHICLE,
        }


@dataclass
class TransporterGroup:
    id: int
    name: str
    document: str
    # Its licence number in the municipality the inspector works in (art. 13), None without.
    licence_number: str | None
    vehicles: list[VehicleGroup] = field(default_factory=list)

    @property
    def all_ctrs(self) -> list[SuspectCTR]:
        return [c for v in self.vehicles for c in v.ctrs]

    @property
    def counts(self) -> dict[str, int]:
        return _reason_counts(self.all_ctrs)

    @property
    def total(self) -> int:
        return sum(len(v.ctrs) for v in self.vehicles)

    def as_dict(self) -> dict:
        return {
            "id": self.id,
            "name": self.name,
            "document": self.document,
            "licence_number": self.licence_number,
            "ctrs": self.total,
            "reasons": self.counts,
            "vehicles": [v.as_dict() for v in self.vehicles],
        }


@dataclass
class Suspects:
    spot: Spot
    window_from: datetime.date
    window_to: datetime.date
    radius_km: float
    transporters: list[TransporterGroup]

    @property
    def total(self) -> int:
        return sum(t.total for t in self.transporters)

    @property
    def counts(self) -> dict[str, int]:
        return _reason_counts([c for t in self.transporters for c in t.all_ctrs])

    def as_dict(self) -> dict:
        return {
            "window": {"from": self.window_from.isoformat(), "to": self.window_to.isoformat()},
            "radius_km": self.radius_km,
            "criteria": {
                "on_the_way_max_angle_deg": ON_THE_WAY_MAX_ANGLE,
                "reasons": REASON_LABELS,
            },
            "ctrs": self.total,
            "reasons": self.counts,
            "transporters": [t.as_dict() for t in self.transporters],
        }


def _sql(
    window_days: int,
    radius_m: float,
    spot: Spot,
    municipality_ids=None,
    licence_municipality_id: int | None = None,
) -> tuple[str, list]:
    local_from = timezone.localtime(spot.first_at).date() - datetime.timedelta(days=window_days)
    local_to = timezone.localtime(spot.last_at).date()
    # A box in degrees around the spot, a little wider than the radius, for the GiST index on
    # the origin; the exact test is ST_DWithin on geography.
    extent = spot.geometry.extent
    worst_lat = max(abs(extent[1]), abs(extent[3]))
    dy = radius_m / METRES_PER_DEGREE * 1.02
    dx = radius_m / (METRES_PER_DEGREE * max(math.cos(math.radians(worst_lat)), 0.01)) * 1.02
    since_sql, since_params = open_since_sql("c")
    # The CTRs the user sees: of its municipalities by origin, or arriving at one of
    # their facilities, as ctr.models.CTRQuerySet.municipal_q says; on the rows already joined
    # here (a subquery of every CTR of the municipality would be read whole).
    seen, seen_params = "", []
    if municipality_ids is not None:
        ids = sorted(municipality_ids)
        seen = "AND (c.municipality_id = ANY(%s) OR f.municipality_id = ANY(%s))"
        seen_params = [ids, ids]
    sql = f"""
        WITH spot AS (
            SELECT g, g::geography AS gg, ST_Centroid(g)::geography AS cg
            FROM (SELECT ST_GeomFromEWKB(%s) AS g) s
        ),
        candidates AS (
            SELECT c.id, c.number, c.status, c.transport_date, c.created_at, c.origin,
                   c.destination, c.transporter_id, c.vehicle_id, f.name AS facility_name,
                   ST_Distance(c.origin::geography, spot.gg) AS origin_m,
                   ST_Distance(c.origin::geography, spot.cg) AS centre_m,
                   ST_Distance(c.origin::geography, c.destination::geography) AS destination_m,
                   degrees(ST_Azimuth(c.origin::geography, spot.cg)) AS bearing_spot,
                   degrees(ST_Azimuth(c.origin::geography, c.destination::geography))
                       AS bearing_destination,
                   CASE WHEN c.status = %s
                        THEN EXTRACT(EPOCH FROM (%s - {since_sql})) / 3600 END AS hours_open,
                   mp.open_ctr_alert_hours AS alert_hours,
                   c.findings @> %s::jsonb AS slow
            FROM {CTR._meta.db_table} c
            CROSS JOIN spot
            -- The open-CTR alert of the set in force on each CTR's own transport date.
            JOIN LATERAL {parameters_sql("c.municipality_id", "c.transport_date")} AS mp ON true
            JOIN {ReceivingFacility._meta.db_table} f ON f.id = c.destination_facility_id
            WHERE c.transport_date BETWEEN %s AND %s AND c.created_at <= %s
              AND c.origin && ST_Expand(spot.g, %s, %s)
              AND ST_DWithin(c.origin::geography, spot.gg, %s)
              {seen}
        ),
        angled AS (
            SELECT candidates.*,
                   abs(abs(bearing_spot - bearing_destination) - 180) AS supplement
            FROM candidates
        ),
        flagged AS (
            SELECT angled.*, 180 - supplement AS bearing_difference,
                   array_remove(ARRAY[
                       CASE WHEN hours_open > alert_hours THEN 'OVERDUE' END,
                       CASE WHEN status = %s THEN 'REFUSED' END,
                       CASE WHEN status = %s THEN 'CANCELLED' END,
                       CASE WHEN 180 - supplement < %s AND centre_m < destination_m
                            THEN 'ON_THE_WAY' END,
                   CASE WHEN slow THEN 'SLOW_TRIP' END
                   ], NULL) AS reasons
            FROM angled
        )
        SELECT f.transporter_id, t.name, t.document, tl.number,
               f.vehicle_id, v.plate,
               f.id, f.number, f.status, f.transport_date, f.created_at,
               ST_X(f.origin), ST_Y(f.origin), ST_X(f.destination), ST_Y(f.destination),
               f.facility_name, f.origin_m, ST_Distance(f.destination::geography, spot.cg),
               f.bearing_difference, f.hours_open, f.reasons
        FROM flagged f
        CROSS JOIN spot
        JOIN {Transporter._meta.db_table} t ON t.id = f.transporter_id
        JOIN {Vehicle._meta.db_table} v ON v.id = f.vehicle_id
        LEFT JOIN {TransporterLicence._meta.db_table} tl
          ON tl.transporter_id = t.id AND tl.municipality_id = %s
        WHERE cardinality(f.reasons) > 0
        ORDER BY f.transporter_id, f.vehicle_id,
                 (f.reasons = ARRAY['ON_THE_WAY']), f.transport_date DESC, f.number
    """
    params = [
        bytes(spot.geometry.ewkb),
        CTRStatus.ISSUED,
        spot.last_at,
        *since_params,
        SLOW_TRIP_FINDING,
        local_from,
        local_to,
        spot.last_at,
        dx,
        dy,
        radius_m,
        *seen_params,
        CTRStatus.REFUSED,
        CTRStatus.CANCELLED,
        ON_THE_WAY_MAX_ANGLE,
        licence_municipality_id,
    ]
    return sql, params


def find_suspects(
    spot: Spot,
    window_days: int = DEFAULT_WINDOW_DAYS,
    radius_km: float = DEFAULT_RADIUS_KM,
    municipality_ids=None,
    licence_municipality_id: int | None = None,
) -> Suspects:
    """The suspect CTRs of a spot, grouped by transporter then vehicle; the transporters with
    most suspects first, and within one the vehicles likewise. Only the CTRs of
    `municipality_ids` (the user's: jurisdiction's readable_ids; None: every one); each
    transporter with its licence in `licence_municipality_id` (the inspector's current
    municipality, art. 13), or None."""
    sql, params = _sql(
        window_days, radius_km * 1000, spot, municipality_ids, licence_municipality_id
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    transporters: dict[int, TransporterGroup] = {}
    vehicles: dict[int, VehicleGroup] = {}
    for r in rows:
        group = transporters.get(r[0])
        if group is None:
            group = transporters[r[0]] = TransporterGroup(r[0], r[1], r[2], r[3])
        vehicle = vehicles.get(r[4])
        if vehicle is None:
            vehicle = vehicles[r[4]] = VehicleGroup(r[4], r[5])
            group.vehicles.append(vehicle)
        vehicle.ctrs.append(
            SuspectCTR(
                id=r[6],
                number=r[7],
                status=r[8],
                transport_date=r[9],
                created_at=r[10],
                origin=(r[11], r[12]),
                destination=(r[13], r[14]),
                facility_name=r[15],
                origin_distance_m=float(r[16]),
                destination_distance_m=float(r[17]),
                bearing_difference_deg=None if r[18] is None else float(r[18]),
                hours_open_at_report=None if r[19] is None else float(r[19]),
                reasons=list(r[20]),
            )
        )
    ordered = sorted(transporters.values(), key=lambda t: (-t.total, t.name))
    for group in ordered:
        group.vehicles.sort(key=lambda v: (-len(v.ctrs), v.plate))
    local_from = timezone.localtime(spot.first_at).date() - datetime.timedelta(days=window_days)
    return Suspects(
        spot=spot,
        window_from=local_from,
        window_to=timezone.localtime(spot.last_at).date(),
        radius_km=radius_km,
        transporters=ordered,
    )


# --- suspect worksites near the spot ----------------------------------------------------------


@dataclass
class NearbyWorksite:
    """A worksite with an alert (generators.suspects) within the radius of the spot: its waste
    may be what was dumped there."""

    worksite: Worksite
    figures: worksite_alerts.WorksiteFigures
    distance_m: float


def suspect_worksites_near(
    spot: Spot, radius_km: float, today: datetime.date, municipality_ids=None
) -> list[NearbyWorksite]:
    """The worksites within `radius_km` of the spot with an alert on `today` (not at the
    report's time: what the inspector can act on now), nearest first; only those of
    `municipality_ids` (the user's; None: every one)."""
    found = worksite_alerts.measure(
        today,
        worksite_alerts.Scope(
            near=spot.geometry, radius_m=radius_km * 1000, municipality_ids=municipality_ids
        ),
        only_flagged=True,
    )
    figures = {f.worksite_id: f for f in found}
    # The distance on geography (metres), to the point or the hotspot's hull.
    sites = (
        Worksite.objects.filter(pk__in=figures)
        .select_related("generator")
        .defer("area")
        .annotate(
            distance_m=RawSQL(
                f"ST_Distance({Worksite._meta.db_table}.location::geography, "
                "ST_GeomFromEWKB(%s)::geography)",
                [bytes(spot.geometry.ewkb)],
            )
        )
    )
    nearby = [NearbyWorksite(w, figures[w.pk], float(w.distance_m)) for w in sites]
    return sorted(nearby, key=lambda n: (n.distance_m, n.worksite.pk))
