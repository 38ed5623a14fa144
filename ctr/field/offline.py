"""The offline provisional CTR: what a driver's phone needs to fill the
issue form without a connection, and the checks of a CTR that the phone kept and sends later.

A phone without signal keeps the CTR with a provisional number of its own ("PROV-AB12-0007":
a device id it drew once, and its counter) and the time the load left; when the connection
comes back it posts the CTR to /api/v1/ctrs/ with the provisional number as its
Idempotency-Key. The CTR is then issued like any other, through every rule, dated by its
departure (the departure's day is the transport date, in the past if need be), and the rule
PROVISIONAL_SYNC_LATE warns when it arrived later than the municipality allows
(MunicipalParameters.provisional_sync_max_hours). The JavaScript side is ctr/static/ctr/offline/.
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import re
from collections.abc import Callable
from decimal import ROUND_DOWN, Decimal

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from config.br import br_datetime
from config.errors import DomainError
from pev_network.models import (
    FacilityKind,
    Municipality,
    MunicipalParameters,
    ReceivingFacility,
    licensed_sql,
)

from ..models import CTR, Equipment, Generator, Transporter, Vehicle, Worksite

# A device id of 4 letters or digits, drawn once on the phone, and its counter.
PROVISIONAL_RE = re.compile(r"^PROV-[A-Z0-9]{4}-\d{4,6}$")
# A phone's clock runs a little ahead or behind: a departure up to this far in the future is
# taken as now, not refused.
CLOCK_SKEW = datetime.timedelta(minutes=10)
# What the bundle carries: the worksites the transporter served lately, and the licensed
# facilities within reach of them (a load of debris does not travel further than this).
RECENT_DAYS = 90
RECENT_WORKSITES = 50
FACILITY_RADIUS_M = 30_000


class ProvisionalError(DomainError):
    """A provisional CTR refused before its rules (its number, its departure)."""

    code = "provisional"


# --- the provisional CTR ------------------------------------------------------------------


def check_provisional(
    number: str,
    departure: datetime.datetime | None,
    transport_date: datetime.date,
    now: datetime.datetime | None = None,
) -> None:
    """The provisional number and departure as the phone sends them: both or neither, the
    number in the device's format, the departure not in the future (beyond a phone clock's
    drift) and on the transport date (the CTR is dated by when the load left)."""
    if not number and departure is None:
        return
    if not number:
        raise ProvisionalError(
            "Informe o número provisório (provisional_number) junto com a hora de saída.",
            field="provisional_number",
        )
    if not PROVISIONAL_RE.match(number):
        raise ProvisionalError(
            f"Número provisório “{number}” fora do formato PROV-XXXX-0000 (identificador do "
            "aparelho com 4 letras ou algarismos e o contador).",
            field="provisional_number",
        )
    if departure is None:
        raise ProvisionalError(
            "Informe a hora de saída (provisional_departure_at) do CTR provisório.",
            field="provisional_departure_at",
        )
    now = now or timezone.now()
    if departure > now + CLOCK_SKEW:
        raise ProvisionalError(
            "A hora de saída do CTR provisório está no futuro: confira o relógio do aparelho.",
            field="provisional_departure_at",
        )
    day = timezone.localdate(departure)
    if transport_date != day:
        raise ProvisionalError(
            f"A data do transporte ({transport_date:%d/%m/%Y}) deve ser a da saída do CTR "
            f"provisório ({day:%d/%m/%Y}).",
            field="transport_date",
        )


def refuse_synced_twice(transporter: Transporter, number: str) -> None:
    """A provisional number the transporter already sent: the CTR it became (a retry without
    its Idempotency-Key, or another phone with the same number). The unique constraint
    ctr_provisional_number_unique backs this under races."""
    if not number:
        return
    official = (
        CTR.objects.filter(transporter=transporter, provisional_number=number)
        .values_list("number", flat=True)
        .first()
    )
    if official:
        raise ProvisionalError(
            f"O CTR provisório {number} já foi enviado: é o {official}.",
            code="provisional_synced",
            field="provisional_number",
            status=409,
        )


@contextlib.contextmanager
def provisional_sent_once(transporter: Transporter, number: str):
    """Around the insert of an issued CTR: a second sync of the same provisional CTR racing
    the first (two tabs, a retry under another key) passes refuse_synced_twice before the first
    commits, then waits on ctr_provisional_number_unique and fails there; it gets the same 409
    naming the official number as a later send, not a 500. The savepoint
    keeps the transaction usable for the read; the caller's transaction then rolls back the
    number it drew. Without a provisional number nothing can race: no savepoint (the issue
    path's queries stay as they were)."""
    if not number:
        yield
        return
    try:
        with transaction.atomic():  # a savepoint
            yield
    except IntegrityError as error:
        constraint = getattr(getattr(error.__cause__, "diag", None), "constraint_name", None)
        if constraint != "ctr_provisional_number_unique":
            raise
        refuse_synced_twice(transporter, number)
        raise


def sync_facts(
    number: str,
    departure: datetime.datetime | None,
    parameters: MunicipalParameters | None,
    now: datetime.datetime | None = None,
) -> dict:
    """The facts of PROVISIONAL_SYNC_LATE for the CTRDraft: the provisional number, the hours
    from departure to arrival here (cut to a tenth, never rounded up past the limit) and the
    limit of the municipality's set in force on the transport date (`parameters`; None
    without a municipality)."""
    if not number or departure is None:
        return {}
    now = now or timezone.now()
    hours = Decimal((now - departure).total_seconds()) / 3600
    limit = (
        parameters.provisional_sync_max_hours
        if parameters
        else MunicipalParameters._meta.get_field("provisional_sync_max_hours").default
    )
    return {
        "provisional_number": number,
        "provisional_hours": max(hours, Decimal(0)).quantize(Decimal("0.1"), ROUND_DOWN),
        "provisional_late": hours > limit,
        "provisional_max_hours": limit,
    }


def print_fields(ctr: CTR) -> list[tuple[str, str]]:
    """The printed CTR's line for a CTR issued offline: the phone's number and departure."""
    if not ctr.provisional_number:
        return []
    departure = br_datetime(ctr.provisional_departure_at)
    return [("CTR provisório", f"{ctr.provisional_number}, saída em {departure}")]


# --- the offline bundle -------------------------------------------------------------------

# The licensed facilities within reach of the worksites, each with a point inside it (the
# form's discharge point when the driver picks it offline). Geography for metres; the
# point-on-surface, not the centroid, which may fall outside an L-shaped area.
NEAR_FACILITIES_SQL = f"""
SELECT f.id, f.name, f.kind, ST_X(p.spot), ST_Y(p.spot)
FROM {ReceivingFacility._meta.db_table} f
CROSS JOIN LATERAL (SELECT ST_PointOnSurface(f.area) AS spot) p
WHERE {licensed_sql("f.id")}
  AND EXISTS (
    SELECT 1 FROM unnest(%(lons)s::float8[], %(lats)s::float8[]) w(lon, lat)
    WHERE ST_DWithin(f.area::geography,
                     ST_SetSRID(ST_MakePoint(w.lon, w.lat), 4326)::geography, %(radius)s))
ORDER BY f.kind, f.name
"""


def recent_worksites(transporter: Transporter, today: datetime.date) -> list[Worksite]:
    """The worksites of the transporter's CTRs of the last RECENT_DAYS, latest first."""
    since = today - datetime.timedelta(days=RECENT_DAYS)
    latest = (
        CTR.objects.filter(
            transporter=transporter, transport_date__gte=since, worksite__isnull=False
        )
        .order_by("worksite_id", "-created_at")
        .distinct("worksite_id")
        .values_list("worksite_id", "created_at")
    )
    ids = [pk for pk, _ in sorted(latest, key=lambda row: row[1], reverse=True)]
    ids = ids[:RECENT_WORKSITES]
    by_id = Worksite.objects.select_related("generator", "municipality").in_bulk(ids)
    return [by_id[pk] for pk in ids if pk in by_id]


def registered_shape(
    site: Worksite, parameters_of: Callable[[Municipality], MunicipalParameters]
) -> dict:
    """What the issue form needs to warn, before issuing, of an origin outside a registered
    worksite: its polygon ([lon, lat] rings) or none, and the GPS tolerance
    ORIGIN_OUTSIDE_WORKSITE applies (`parameters_of` its municipality: the set in force on the
    day the bundle is made, as no CTR has a date yet; services.worksite_facts). A worksite without a
    registration has no location to hold the origin to: nothing."""
    if site.registered_at is None:
        return {"registered": False, "tolerance_m": None, "area": None}
    tolerance = (
        parameters_of(site.municipality).gps_tolerance_m
        if site.municipality is not None
        else MunicipalParameters._meta.get_field("gps_tolerance_m").default
    )
    area = None
    if site.area is not None:
        area = [[[round(x, 6), round(y, 6)] for x, y in ring] for ring in site.area.coords]
    return {"registered": True, "tolerance_m": float(tolerance), "area": area}


def near_facilities(points: list[tuple[float, float]], day: datetime.date) -> list[dict]:
    if not points:
        return []
    kinds = dict(FacilityKind.choices)
    with connection.cursor() as cursor:
        cursor.execute(
            NEAR_FACILITIES_SQL,
            {
                "lons": [lon for lon, _ in points],
                "lats": [lat for _, lat in points],
                "radius": FACILITY_RADIUS_M,
                "day": day,
            },
        )
        return [
            {
                "id": pk,
                "name": name,
                "kind": kind,
                "kind_label": str(kinds.get(kind, kind)),
                "point": [round(lon, 6), round(lat, 6)],
            }
            for pk, name, kind, lon, lat in cursor.fetchall()
        ]


def bundle(
    transporter: Transporter, now: datetime.datetime | None = None
) -> tuple[dict, list[Generator]]:
    """What the phone keeps to fill the issue form offline: the active fleet, the recent
    worksites with their generators, and the licensed facilities near them (or near the
    transporter's first licence's municipality when it has none yet), with that municipality's
    sync limit; and the generators whose name and document it shows (for the LGPD access
    log)."""
    now = now or timezone.now()
    today = timezone.localdate(now)
    sites = recent_worksites(transporter, today)
    points = [(s.location.x, s.location.y) for s in sites]
    municipality = transporter.home_municipality()
    # Today's set of each worksite's municipality, read once per municipality.
    in_force = functools.cache(lambda town: town.parameters_on(today))
    if not points and municipality is not None:
        centre = Municipality.objects.filter(pk=municipality.pk).values_list("boundary", flat=True)[
            0
        ]
        points = [(centre.point_on_surface.x, centre.point_on_surface.y)]
    data = {
        "generated_at": now.isoformat(),
        "transporter": {"id": transporter.pk, "name": transporter.name},
        # Today's set: the CTRs the phone keeps will mostly be for today.
        "provisional_sync_max_hours": (
            municipality.parameters_on(today).provisional_sync_max_hours
            if municipality
            else MunicipalParameters._meta.get_field("provisional_sync_max_hours").default
        ),
        "vehicles": [
            {"id": v.pk, "plate": v.plate}
            for v in Vehicle.objects.filter(transporter=transporter, active=True).order_by("plate")
        ],
        "equipment": [
            {"id": e.pk, "code": e.code, "capacity_m3": str(e.nominal_capacity_m3)}
            for e in Equipment.objects.filter(transporter=transporter, active=True).order_by("code")
        ],
        "worksites": [
            {
                "id": s.pk,
                "address": s.address,
                "neighbourhood": s.neighbourhood,
                "generator": {"name": s.generator.name, "document": s.generator.document},
                "point": [round(s.location.x, 6), round(s.location.y, 6)],
                **registered_shape(s, in_force),
            }
            for s in sites
        ],
        "facilities": near_facilities(points, today),
    }
    generators = list({s.generator_id: s.generator for s in sites}.values())
    return data, generators
