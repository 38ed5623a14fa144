"""Small inline spatial fixtures: squares in metres around a point, facilities with licenses,
transporters' licences."""

from __future__ import annotations

import datetime
import math

from django.contrib.gis.geos import MultiPolygon, Point, Polygon

from pev_network.models import (
    FIRST_SET_FROM,
    FacilityLicense,
    Municipality,
    MunicipalParameters,
    ReceivingFacility,
)

METRES_PER_DEGREE_LAT = 111_320.0
# Near Guaratinguetá (SP), where the demo and the law live.
ORIGIN = (-45.19, -22.81)


def offset(lon: float, lat: float, east_m: float = 0, north_m: float = 0) -> tuple[float, float]:
    """Move a WGS 84 position by metres (a local flat approximation; fine at these sizes)."""
    dlat = north_m / METRES_PER_DEGREE_LAT
    dlon = east_m / (METRES_PER_DEGREE_LAT * math.cos(math.radians(lat)))
    return lon + dlon, lat + dlat


def square(lon: float, lat: float, size_m: float) -> Polygon:
    """An axis-aligned square of side `size_m` with its south-west corner at lon/lat."""
    east, north = offset(lon, lat, size_m, size_m)
    poly = Polygon.from_bbox((lon, lat, east, north))
    poly.srid = 4326
    return poly


def multi(*polygons: Polygon) -> MultiPolygon:
    return MultiPolygon(*polygons, srid=4326)


def point(lon: float, lat: float) -> Point:
    return Point(lon, lat, srid=4326)


def licensed_facility(
    kind: str,
    area,
    name: str = "",
    municipality: Municipality | None = None,
    valid_from: datetime.date = datetime.date(2020, 1, 1),
    valid_until: datetime.date | None = datetime.date(2099, 12, 31),
    status: str = FacilityLicense.Status.ACTIVE,
    status_since: datetime.date | None = None,
    **fields,
) -> ReceivingFacility:
    if isinstance(area, Polygon):
        area = multi(area)
    facility = ReceivingFacility.objects.create(
        kind=kind, name=name or f"{kind} de teste", area=area, municipality=municipality, **fields
    )
    FacilityLicense.objects.create(
        facility=facility,
        number=f"LO-{facility.pk}",
        issuer="CETESB",
        valid_from=valid_from,
        valid_until=valid_until,
        status=status,
        status_since=status_since,
    )
    return facility


def municipality(
    ibge_code: str = "9999999", name: str = "Município de Teste", size_m=20_000, east_m=0
):
    """A square municipality of `size_m` around ORIGIN (moved `east_m` metres east: a
    neighbour), with the law's default parameters."""
    from pev_network.services import save_municipality

    lon, lat = offset(*ORIGIN, -size_m / 2 + east_m, -size_m / 2)
    municipality, _ = save_municipality(ibge_code, name, "SP", multi(square(lon, lat, size_m)))
    # The tests' CTRs are received seconds after they are issued, which the travel-time check
    # would flag on every one: tests/ctr/test_travel_time.py turns it on.
    set_parameters(municipality, travel_check_enabled=False)
    return municipality


def set_parameters(municipality: Municipality, **values) -> MunicipalParameters:
    """Changes the municipality's first set of parameters (in force on every day until a later
    set starts) and returns it."""
    first = MunicipalParameters.objects.get(municipality=municipality, valid_from=FIRST_SET_FROM)
    for name, value in values.items():
        setattr(first, name, value)
    # The fields' rules only: a test's world rewrites its first set, which the model's clean()
    # refuses as a set in force (its CTRs' figures never change after the fact).
    first.clean_fields()
    first.save()
    return first


def licence(
    transporter,
    municipality: Municipality,
    number: str = "",
    valid_from: datetime.date = datetime.date(2025, 1, 1),
    valid_until: datetime.date | None = None,
    **fields,
):
    """The transporter's licence in the municipality (art. 13), active unless `fields` say
    otherwise (status, status_since, suspended_until)."""
    from ctr.models import TransporterLicence

    return TransporterLicence.objects.create(
        transporter=transporter,
        municipality=municipality,
        number=number or f"TL-{municipality.ibge_code}-{transporter.pk}",
        valid_from=valid_from,
        valid_until=valid_until,
        **fields,
    )
