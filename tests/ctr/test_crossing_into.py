"""CTR.crossing_into: the municipality a load crosses into, on an index of
its own, so that the scope of the CTRs (CTRQuerySet.municipal_q: the origin's municipality or
the destination facility's) rides on two indexes. Written alike by the issue path and the bulk
path, kept by the database when a facility moves, and read as the subquery of the facilities
was: the same rows for everyone."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client

from ctr.bulk import csv_import
from ctr.models import CTR
from jurisdiction.models import Role, StaffRole
from tests.ctr.test_consortium_destinations import b_origin, build_consortium
from tests.ctr.test_ctr_api import issue
from tests.ctr.test_ctr_bulk import csv_text
from tests.ctr_world import TODAY, make_user

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen_today")]


@pytest.fixture
def consortium():
    return build_consortium()


def subquery_scope(ids: list[int]) -> set[str]:
    """The rule as it was written before the column: the origin's municipality, or a facility
    of one of `ids` as destination (what crossing_into must reproduce)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.number FROM ctr_ctr c WHERE c.municipality_id = ANY(%s) OR "
            "c.destination_facility_id IN (SELECT f.id FROM pev_network_receivingfacility f "
            "WHERE f.municipality_id = ANY(%s))",
            [ids, ids],
        )
        return {row[0] for row in cursor.fetchall()}


def scoped(ids: list[int]) -> set[str]:
    return set(CTR.objects.in_municipalities(ids).values_list("number", flat=True))


def test_a_load_to_the_neighbours_landfill_crosses_into_it_and_one_at_home_does_not(consortium):
    world, a, b = consortium["world"], consortium["a"], consortium["b"]
    across = issue(world, facility=consortium["landfill_b"])
    home = issue(world)
    assert across.status_code == home.status_code == 201, (across.content, home.content)
    assert CTR.objects.get(number=across.json()["number"]).crossing_into == b
    assert CTR.objects.get(number=home.json()["number"]).crossing_into is None
    for ids in ([a.pk], [b.pk], [a.pk, b.pk]):
        assert scoped(ids) == subquery_scope(ids)


def csv_rows(world, consortium) -> list[dict]:
    """One row to the consortium's landfill in the neighbour, one to the town's own ATT."""
    rows = []
    for facility in (consortium["landfill_b"], world.att):
        target = world.inside(facility)
        rows.append(
            {
                "transport_date": TODAY.isoformat(),
                "vehicle_plate": "ABC1D23",
                "equipment_code": "C-01",
                "generator_name": "Maria da Obra",
                "generator_document": "52998224725",
                "worksite_address": "Rua das Flores, 10",
                "origin_lon": f"{world.origin.x:.6f}",
                "origin_lat": f"{world.origin.y:.6f}",
                "destination_lon": f"{target.x:.6f}",
                "destination_lat": f"{target.y:.6f}",
                "waste": "A=3",
            }
        )
    return rows


@pytest.mark.parametrize("per_row", [False, True], ids=["bulk", "per-row"])
def test_the_bulk_path_records_the_crossing_as_the_issue_path(consortium, per_row):
    world, b = consortium["world"], consortium["b"]
    data = csv_text(csv_rows(world, consortium)).encode()
    report = csv_import.import_ctrs(data, world.alfa, world.alfa_user, per_row=per_row)
    assert [r.problems for r in report.rows] == [[], []]
    crossing = list(CTR.objects.order_by("sequence").values_list("crossing_into", flat=True))
    assert crossing == [b.pk, None]


def test_a_facility_moved_to_another_municipality_takes_its_loads_with_it(consortium):
    """The database keeps the column (a trigger): the loads to a facility whose municipality
    is corrected are seen by the new one, no longer by the old, as with the subquery."""
    world, a, b = consortium["world"], consortium["a"], consortium["b"]
    landfill = consortium["landfill_b"]
    across = issue(world, facility=landfill).json()["number"]
    from_b = issue(world, origin=b_origin(world), facility=landfill).json()["number"]
    # The landfill was in the town after all: A's load stays home, B's now crosses into A.
    landfill.municipality = a
    landfill.save()
    assert CTR.objects.get(number=across).crossing_into is None
    assert CTR.objects.get(number=from_b).crossing_into == a
    assert across in scoped([a.pk]) and from_b in scoped([a.pk])
    assert across not in scoped([b.pk]) and from_b in scoped([b.pk])
    # A facility whose municipality is cleared is nobody's destination across a border.
    type(landfill).objects.filter(pk=landfill.pk).update(municipality=None)
    assert set(CTR.objects.values_list("crossing_into", flat=True)) == {None}
    for ids in ([a.pk], [b.pk]):
        assert scoped(ids) == subquery_scope(ids)


def test_the_ogc_count_of_a_consortium_adds_each_load_once(consortium):
    """numberMatched adds up the scope's parts (ogc.views.count_sql), each without the rows of
    the part before: a load from the town into the neighbour, read by someone of both, counts
    once, as the features list it once."""
    world, a, b = consortium["world"], consortium["a"], consortium["b"]
    issue(world, facility=consortium["landfill_b"])  # A into B
    issue(world)  # A at home
    issue(world, origin=b_origin(world), facility=consortium["landfill_b"])  # B at home
    both = make_user("consorcio", Role.AUDITOR, a)
    StaffRole.objects.create(user=both, municipality=b, role=Role.AUDITOR)
    expected = {
        (consortium["nucleo_a"], 2),
        (consortium["nucleo_b"], 2),
        (both, 3),
    }
    for user, count in expected:
        web = Client()
        web.force_login(user)
        body = web.get("/ogc/collections/ctr-origins/items").json()
        assert body["numberMatched"] == count == body["numberReturned"], user
        ids = [feature["id"] for feature in body["features"]]
        assert len(ids) == len(set(ids))


def test_a_ctr_created_without_the_issue_path_crosses_too(consortium):
    """CTR.save() fills it on creation (fixtures, the demo, the admin): no path forgets it."""
    world, b = consortium["world"], consortium["b"]
    number = issue(world).json()["number"]
    ctr = CTR.objects.get(number=number)
    ctr.pk, ctr.number, ctr.sequence = None, "CTR-3518404-2026-999999", 999_999
    ctr.destination_facility = consortium["landfill_b"]
    ctr.destination = world.inside(consortium["landfill_b"])
    ctr.crossing_into = None
    ctr._state.adding = True
    ctr.save()
    assert CTR.objects.get(number="CTR-3518404-2026-999999").crossing_into == b
