"""Demo data loading (fixtures/README.md: the network and bacias are fictitious)."""

import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.gis.geos import GEOSGeometry
from django.db import transaction

from .models import CatchmentBasin, ReceivingFacility
from .services import as_multipolygon, municipality_id_at

# Listed in the README; for local demonstration only. Every demo account shares this password
# (ctr/demo.py reads it from here).
DEMO_ADMIN = ("admin", "demo12345")


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
