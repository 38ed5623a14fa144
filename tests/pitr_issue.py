"""CTRs issued through the service code into the database of $DATABASE_URL, for the
point-in-time recovery test (tests/config/test_pitr.py), which runs this in a subprocess
against a throwaway cluster of its own:

    python -m tests.pitr_issue before-and-after N   the test world, N CTRs, the database's clock,
                                                    N more CTRs; prints them as JSON
    python -m tests.pitr_issue next                 one more CTR in that world; prints its number

Each CTR is committed on its own, as the application commits each issue."""

from __future__ import annotations

import json
import os
import sys
from decimal import Decimal

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.pop("CTR_TEST_DB", None)

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402

from ctr import services  # noqa: E402
from ctr.models import Transporter  # noqa: E402
from ctr.rules import WasteLine  # noqa: E402
from pev_network.models import FacilityKind, ReceivingFacility  # noqa: E402
from tests.builders import ORIGIN, offset, point  # noqa: E402
from tests.ctr_world import CNPJ_ALFA, CPF_GENERATOR, TODAY, build_world  # noqa: E402


def issue_one(transporter, user, destination) -> str:
    origin = point(*offset(*ORIGIN, -500, -500))
    ctr = services.issue(
        transporter,
        user,
        services.IssueRequest(
            transport_date=TODAY,
            vehicle_plate="ABC1D23",
            equipment_code="C-01",
            origin=origin,
            destination=destination,
            waste=[WasteLine("A", Decimal("3"), "entulho de alvenaria")],
            generator=services.GeneratorData(name="Maria da Obra", document=CPF_GENERATOR),
            worksite=services.WorksiteData(
                address="Rua das Flores, 10", location=origin, neighbourhood="Centro"
            ),
        ),
    )
    return ctr.number


def database_clock() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT clock_timestamp()::text")
        return cursor.fetchone()[0]


def main(command: str, count: int = 0) -> dict:
    if command == "before-and-after":
        world = build_world()
        alfa, user, att = world.alfa, world.alfa_user, world.att
        destination = world.inside(att)
        before = [issue_one(alfa, user, destination) for _ in range(count)]
        noted = database_clock()
        after = [issue_one(alfa, user, destination) for _ in range(count)]
        return {"before": before, "noted": noted, "after": after}
    alfa = Transporter.objects.get(document=CNPJ_ALFA)
    user = get_user_model().objects.get(username="alfa")
    att = ReceivingFacility.objects.get(kind=FacilityKind.ATT)
    return {"next": issue_one(alfa, user, att.area.point_on_surface)}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0)))
