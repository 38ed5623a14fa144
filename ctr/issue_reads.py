"""What build_draft reads for one CTR, in one round trip.

The issue path read the vehicle, the equipment, the generator, the municipality under the
origin, the facility under the discharge point (with its municipality and whether it is
licensed) and the transporter's licence in that municipality with one ORM query each: six
round trips, and each query built anew by the ORM (most of the issue's Python time). Here
they are one statement of fixed text, LEFT JOIN LATERAL per read, each the same query as
before (same filters, same order, LIMIT 1), so the findings cannot differ; the rows become
model instances as the ORM would build them (config.rows.Columns).

Scope: every read is by the issuing transporter's id (vehicle, equipment, licence), by the
declared document (generator), or by the points of the request (municipality, facility), as
the ORM queries were: nothing of another transporter is read.
"""

from __future__ import annotations

import datetime
import functools
from dataclasses import dataclass
from decimal import Decimal

from django.contrib.gis.geos import Point
from django.db import connection

from config.rows import Columns, parts_of
from pev_network.models import (
    Municipality,
    MunicipalParameters,
    ReceivingFacility,
    licensed_sql,
    parameters_sql,
)
from pev_network.services import MUNICIPALITY_AT_SQL

from .models import Equipment, Generator, TransporterLicence, Vehicle

VEHICLE = Columns(Vehicle, "v")
EQUIPMENT = Columns(Equipment, "e")
GENERATOR = Columns(Generator, "g")
# The municipality's boundary is never read by the rules (build_draft deferred it).
MUNICIPALITY = Columns(Municipality, "m", deferred=("boundary",))
FACILITY = Columns(ReceivingFacility, "f")
FACILITY_MUNICIPALITY = Columns(Municipality, "fm", deferred=("boundary",))
LICENCE = Columns(TransporterLicence, "l")
# The parameters in force on the transport date of the origin's municipality and of the
# facility's (the rules judge a CTR by its own day's set): only the figures the issue reads
# (the GPS tolerance, the small-volume limit of the fee and the PEV, the offline sync limit);
# the other columns cost more to convert than the rest of the statement takes
# (docs/performance.md); another one read later is loaded then, as a deferred field.
READ_PARAMETERS = (
    "id", "municipality", "valid_from", "gps_tolerance_m", "small_volume_limit_m3",
    "provisional_sync_max_hours",
)  # fmt: skip
_UNREAD = tuple(
    f.name for f in MunicipalParameters._meta.concrete_fields if f.name not in READ_PARAMETERS
)
PARAMETERS = Columns(MunicipalParameters, "mp", deferred=_UNREAD)
FACILITY_PARAMETERS = Columns(MunicipalParameters, "fmp", deferred=_UNREAD)
PARTS = (
    VEHICLE, EQUIPMENT, GENERATOR, MUNICIPALITY, FACILITY, FACILITY_MUNICIPALITY, LICENCE,
    PARAMETERS, FACILITY_PARAMETERS,
)  # fmt: skip

_HERE = "ST_SetSRID(ST_MakePoint(%(dx)s, %(dy)s), 4326)::geography"


@functools.cache
def _sql() -> str:
    """The statement (built once: its text depends on the models only)."""
    facility_table = ReceivingFacility._meta.db_table
    return f"""
SELECT {", ".join(part.sql() for part in PARTS)}, f.is_licensed, f.distance_m
FROM (SELECT 1) AS one
LEFT JOIN LATERAL (
    SELECT {VEHICLE.inner("x")} FROM {Vehicle._meta.db_table} x
    WHERE x.active AND x.plate = %(plate)s AND x.transporter_id = %(transporter)s
    ORDER BY x.plate LIMIT 1
) v ON true
LEFT JOIN LATERAL (
    SELECT {EQUIPMENT.inner("x")} FROM {Equipment._meta.db_table} x
    WHERE x.active AND x.code = %(equipment)s AND x.transporter_id = %(transporter)s
    ORDER BY x.code LIMIT 1
) e ON true
LEFT JOIN LATERAL (
    SELECT {GENERATOR.inner("x")} FROM {Generator._meta.db_table} x
    WHERE x.document = %(document)s ORDER BY x.name LIMIT 1
) g ON true
LEFT JOIN LATERAL (
    SELECT {MUNICIPALITY.inner("x")} FROM {Municipality._meta.db_table} x
    WHERE x.id = ({MUNICIPALITY_AT_SQL.replace("%s, %s", "%(ox)s, %(oy)s")})
    ORDER BY x.uf, x.name LIMIT 1
) m ON true
LEFT JOIN LATERAL {parameters_sql("m.id", "%(day)s::date")} mp ON true
LEFT JOIN LATERAL (
    SELECT {FACILITY.inner("x")},
           {licensed_sql("x.id", "%(day)s")} AS is_licensed,
           ST_Distance(x.area::geography, {_HERE}) AS distance_m
    FROM {facility_table} x
    WHERE ST_DWithin(x.area::geography, {_HERE},
                     coalesce(mp.gps_tolerance_m, %(default_tolerance)s)::float8)
      AND (%(requested)s::bigint IS NULL OR x.id = %(requested)s::bigint)
      AND NOT %(requested_out_of_range)s
    ORDER BY is_licensed DESC, distance_m, x.id LIMIT 1
) f ON true
LEFT JOIN LATERAL (
    SELECT {FACILITY_MUNICIPALITY.inner("x")} FROM {Municipality._meta.db_table} x
    WHERE x.id = f.municipality_id
) fm ON true
LEFT JOIN LATERAL {parameters_sql("fm.id", "%(day)s::date")} fmp ON true
LEFT JOIN LATERAL (
    SELECT {LICENCE.inner("x")} FROM {TransporterLicence._meta.db_table} x
    WHERE x.transporter_id = %(transporter)s AND x.municipality_id = m.id
    ORDER BY x.municipality_id, x.transporter_id LIMIT 1
) l ON true
"""


@dataclass
class References:
    vehicle: Vehicle | None
    equipment: Equipment | None
    generator: Generator | None
    municipality: Municipality | None
    facility: ReceivingFacility | None
    facility_licensed: bool
    licence: TransporterLicence | None
    parameters: MunicipalParameters | None
    facility_parameters: MunicipalParameters | None


def fetch(
    transporter_id: int,
    plate: str,
    equipment_code: str,
    document: str | None,
    origin: Point,
    destination: Point,
    day: datetime.date,
    default_tolerance: Decimal,
    requested_id: int | None,
) -> References:
    """The reads of build_draft in one statement. An empty plate, code or document reads
    nothing (as build_draft asked nothing without them)."""
    # An id no primary key can hold matches nothing, as the ORM's lookup treats it (the SQL
    # cast would fail instead: a 500 for a client's typo).
    low, high = connection.ops.integer_field_range(ReceivingFacility._meta.pk.get_internal_type())
    out_of_range = requested_id is not None and not low <= requested_id <= high
    params = {
        "transporter": transporter_id,
        "plate": plate or None,
        "equipment": equipment_code or None,
        "document": document,
        "ox": origin.x,
        "oy": origin.y,
        "dx": destination.x,
        "dy": destination.y,
        "day": day,
        "default_tolerance": default_tolerance,
        "requested": None if out_of_range else requested_id,
        "requested_out_of_range": out_of_range,
    }
    with connection.cursor() as cursor:
        cursor.execute(_sql(), params)
        row = cursor.fetchone()
    built = parts_of(PARTS, row)
    vehicle, equipment, generator, municipality, facility, facility_town, licence = built[:7]
    parameters, facility_parameters = built[7:]
    start = sum(len(part) for part in PARTS)
    licensed = bool(row[start])
    if facility is not None:
        # As select_related("municipality") and the annotations left them.
        facility.is_licensed = licensed
        facility.distance_m = row[start + 1]
        facility.municipality = facility_town
    return References(
        vehicle, equipment, generator, municipality, facility, licensed and facility is not None,
        licence, parameters, facility_parameters if facility is not None else None,
    )  # fmt: skip
