"""The demonstration's network (fixtures/README.md: the network and bacias are fictitious): the
bacias, the demo licences kept in force, the consortium of the two towns, the admin account and
the UFESP of the years the demo uses. demo/loading.py runs it first, after the boundary and
facility files' imports."""

import datetime
import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.gis.geos import GEOSGeometry
from django.db import transaction

from pev_network.models import (
    CatchmentBasin,
    FacilityLicense,
    FiscalUnit,
    LicenseStatus,
    Municipality,
    ReceivingFacility,
    UfespRate,
)
from pev_network.services import as_multipolygon, municipality_id_at

# Listed in the README; for local demonstration only. Every demo account shares this password
# (demo/ctrs.py reads it from here).
DEMO_ADMIN = ("admin", "demo12345")


# The UFESP as published for each year (São Paulo's; migration fiscalization 0003 holds the
# same): a year after the last is a demonstration value, the last one repeated.
PUBLISHED_UFESP = {2023: "34.26", 2024: "35.36", 2025: "37.02"}
# The demos reach back this far: CTRs 90 days, the fiscalization's paid record about 200.
DEMO_HISTORY_DAYS = 400


def ensure_ufesp(today: datetime.date) -> list[int]:
    """The UFESP of every year the demos use, up to this one (art. 12 §3, art. 36); a year
    with a value already registered is left alone. Returns the years given a demonstration
    value (after the last published one), for the command to say so."""
    first = (today - datetime.timedelta(days=DEMO_HISTORY_DAYS)).year
    nearest = max(PUBLISHED_UFESP)
    invented = []
    for year in range(first, today.year + 1):
        value = PUBLISHED_UFESP.get(year, PUBLISHED_UFESP[min(nearest, max(year, 2023))])
        _, created = UfespRate.objects.get_or_create(
            unit=FiscalUnit.UFESP, year=year, defaults={"value_brl": value}
        )
        if created and year not in PUBLISHED_UFESP:
            invented.append(year)
    return invented


@transaction.atomic
def load_basins(path: Path) -> int:
    features = json.loads(path.read_text())["features"]
    pevs = {f.code: f for f in ReceivingFacility.objects.filter(kind="PEV")}
    for feature in features:
        props = feature["properties"]
        area = as_multipolygon(GEOSGeometry(json.dumps(feature["geometry"]), srid=4326))
        CatchmentBasin.objects.update_or_create(
            code=props["code"],
            defaults={
                "name": props["name"],
                "area": area,
                "served_by": pevs.get(props["served_by"]),
                "municipality_id": municipality_id_at(area.point_on_surface),
            },
        )
    return len(features)


# The demo network file (fixtures/demo_network.geojson) licenses its areas until this date; a
# demonstration started after it must still show a working network.
DEMO_LICENSES_UNTIL = datetime.date(2028, 12, 31)


@transaction.atomic
def renew_demo_licenses(today: datetime.date) -> int:
    """Carry the demo's valid licenses at least a year past `today` (to the end of the year
    after next), as a municipality renews them; the expired and suspended ones of the demo
    stay as the file has them. Returns how many were renewed."""
    renewed_until = datetime.date(today.year + 2, 12, 31)
    return FacilityLicense.objects.filter(
        status=LicenseStatus.ACTIVE,
        valid_until__gte=DEMO_LICENSES_UNTIL,
        valid_until__lt=today + datetime.timedelta(days=365),
    ).update(valid_until=renewed_until)


# Aparecida's CTRs may use Guaratinguetá's facilities (the demo's landfill,
# ATR-01, shared by the two), as a consortium agrees; not the other way round.
CONSORTIUM = (("3502507", "3518404"),)


def ensure_consortium() -> int:
    """The demo's agreement between neighbours (Municipality.accepted_destinations); returns
    how many municipalities accept another's facilities."""
    done = 0
    for origin_code, destination_code in CONSORTIUM:
        origin = Municipality.objects.filter(ibge_code=origin_code).first()
        destination = Municipality.objects.filter(ibge_code=destination_code).first()
        if origin is not None and destination is not None:
            origin.accepted_destinations.add(destination)
            done += 1
    return done


def ensure_demo_accounts() -> list[str]:
    """The admin account, with the demo password restored on every load (one hash check)."""
    user_model = get_user_model()
    username, password = DEMO_ADMIN
    user, created = user_model.objects.get_or_create(
        username=username, defaults={"is_staff": True, "is_superuser": True}
    )
    if created or not user.check_password(password):
        user.set_password(password)
        user.save()
    return [username]
