"""Where and when a reception was confirmed.

Two checks no system we know does, for the commonest frauds at the gate:

- **Where** (art. 13 p.ú.): the receiver's device may send its location with the
  confirmation (the browser's geolocation, the API's `location`). A confirmation given farther
  from the facility's polygon than the municipality's GPS tolerance is recorded, with the
  distance, as a warning for the Núcleo (RECEPTION_AWAY_FROM_FACILITY). It is not refused: a
  phone's fix indoors or under a metal roof can be off by hundreds of metres, and a receiver
  who confirms from the office across the road has still seen the load; what the Núcleo wants
  is the pattern, not a blocked gate.
- **When** (art. 3 VI, art. 13 p.ú., art. 2 §1): the time from departure to reception is
  compared with the road distance from the origin to the discharge point (the straight line
  times the municipality's detour factor). Faster than the top average speed is not physically
  possible (TRAVEL_TOO_FAST: the load did not come from where or when the CTR says); slower
  than the bottom speed plus a slack for queueing is a likely detour (TRAVEL_TOO_SLOW: the
  load may have been lightened on the way, art. 2 §1). Both are alerts for monitoring, never a
  refusal. The parameters are fields of pev_network.Municipality (docs/legal.md says where
  each default comes from).

ctr.closing.receive calls `reception_facts`; the rules in ctr.rules read what it returns.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from decimal import Decimal

from django.contrib.gis.geos import Point
from django.db import connection
from django.utils import timezone

from pev_network.models import MunicipalParameters, ReceivingFacility

from .models import CTR


@dataclass(frozen=True)
class Place:
    """Where the reception was confirmed: metres from the facility's polygon (0 inside)."""

    facility: str
    distance_m: float
    tolerance_m: Decimal

    @property
    def away(self) -> bool:
        return self.distance_m > float(self.tolerance_m)


@dataclass(frozen=True)
class Travel:
    """The trip from departure to reception, and the times its road distance allows."""

    straight_km: float
    road_km: float
    elapsed_min: float
    fastest_min: float  # the road distance at the top speed
    slowest_min: float  # at the bottom speed, plus the slack
    max_speed_kmh: Decimal
    min_speed_kmh: Decimal
    slack_min: int

    @property
    def too_fast(self) -> bool:
        return self.elapsed_min < self.fastest_min

    @property
    def too_slow(self) -> bool:
        return self.elapsed_min > self.slowest_min


def distance_to_facility_m(point: Point, facility: ReceivingFacility) -> float:
    """Metres from the point to the facility's polygon, 0 inside or on the fence.

    Geography (metres on the spheroid, as pev_network.services.point_within_facility), so
    that the distance and the tolerance it is compared with are the same measure.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT ST_Distance(area::geography,
                               ST_SetSRID(ST_MakePoint(%s, %s), 4326)::geography)
            FROM {ReceivingFacility._meta.db_table} WHERE id = %s
            """,
            [point.x, point.y, facility.pk],
        )
        return float(cursor.fetchone()[0])


def straight_km(ctr: CTR) -> float:
    """Kilometres on the spheroid from the CTR's origin to its discharge point, as stored
    (geography: metres, not degrees)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT ST_Distance(origin::geography, destination::geography) "
            f"FROM {CTR._meta.db_table} WHERE id = %s",
            [ctr.pk],
        )
        return float(cursor.fetchone()[0]) / 1000


def departure_of(ctr: CTR) -> datetime.datetime:
    """When the load left: the later of the issue time and the start of the transport day, as
    ctr.alerts.open_since_sql counts it (a CTR issued yesterday for today leaves today).

    HOOK: a CTR issued offline carries the device's departure time; once
    `CTR.provisional_departure_at` exists it is the departure, whatever the issue time.
    """
    provisional = getattr(ctr, "provisional_departure_at", None)
    if provisional is not None:
        return provisional
    day_start = timezone.make_aware(
        datetime.datetime.combine(ctr.transport_date, datetime.time.min)
    )
    return max(ctr.created_at, day_start)


def travel_of(
    ctr: CTR, received_at: datetime.datetime, parameters: MunicipalParameters | None = None
) -> Travel | None:
    """The trip of `ctr` from its departure to `received_at`, with the bounds of its
    municipality's set in force on the transport date (`parameters`, read when not given);
    None where that set turns the check off (MunicipalParameters.travel_check_enabled).

    The distance is from the origin to the declared discharge point (inside the facility,
    within the GPS tolerance), not to the polygon's nearest edge: the load goes to the gate.
    """
    parameters = parameters or ctr.parameters()
    if not parameters.travel_check_enabled:
        return None
    straight = straight_km(ctr)
    road = straight * float(parameters.travel_detour_factor)
    elapsed = (received_at - departure_of(ctr)).total_seconds() / 60
    return Travel(
        straight_km=straight,
        road_km=road,
        elapsed_min=elapsed,
        fastest_min=road / float(parameters.travel_max_speed_kmh) * 60,
        slowest_min=road / float(parameters.travel_min_speed_kmh) * 60
        + parameters.travel_slack_minutes,
        max_speed_kmh=parameters.travel_max_speed_kmh,
        min_speed_kmh=parameters.travel_min_speed_kmh,
        slack_min=parameters.travel_slack_minutes,
    )


def place_of(
    ctr: CTR, location: Point | None, parameters: MunicipalParameters | None = None
) -> Place | None:
    """Where the reception was confirmed, or None when the device sent no location (no
    permission, no fix, an API client that does not send it): then nothing is found. The GPS
    tolerance is the transport date's set's (`parameters`, read when not given)."""
    if location is None:
        return None
    facility = ctr.destination_facility
    return Place(
        facility.name,
        distance_to_facility_m(location, facility),
        (parameters or ctr.parameters()).gps_tolerance_m,
    )


def duration_text(minutes: float) -> str:
    """A duration as a finding says it: "42 min", "3 h 05 min", "2 dias 4 h"."""
    total = max(int(round(minutes)), 0)
    days, rest = divmod(total, 24 * 60)
    hours, mins = divmod(rest, 60)
    if days:
        return f"{days} dia{'s' if days > 1 else ''} {hours} h"
    if hours:
        return f"{hours} h {mins:02d} min"
    return f"{mins} min"


def reception_facts(
    ctr: CTR,
    location: Point | None,
    received_at: datetime.datetime,
    parameters: MunicipalParameters | None = None,
) -> tuple[Place | None, Travel | None]:
    """What the reception rules read besides the volumes (ctr.rules.ReceptionFacts), by the
    set in force on the CTR's transport date (`parameters`, read when not given)."""
    parameters = parameters or ctr.parameters()
    return place_of(ctr, location, parameters), travel_of(ctr, received_at, parameters)
