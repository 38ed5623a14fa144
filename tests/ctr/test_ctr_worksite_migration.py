"""Migration 0006 merges the duplicate worksites concurrent issues left behind
before it builds the unique index: the CTRs point to the oldest of each group, the PGRCC lists
and flags are joined, and every existing CTR gets the registry's name as its declared one."""

from __future__ import annotations

import pytest
from django.db import connection
from rest_framework.test import APIClient

from ctr.models import CTR, Worksite
from tests.ctr_world import CPF_GENERATOR, build_world, ctr_payload
from tests.migrations import migrate

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("ctr", "0005_municipality_transporter_index")]
AFTER = [("ctr", "0006_declared_generator_name_unique_worksite")]


@pytest.fixture(autouse=True)
def latest_schema_afterwards():
    """Going back to ctr 0005 also unapplies the migrations of other apps that depend on a later
    ctr one (fiscalization's): the tests after this one need the whole schema again."""
    yield
    migrate()


def test_duplicates_are_merged_into_the_oldest():
    world = build_world()
    api = APIClient()
    api.force_authenticate(world.alfa_user)
    for _ in range(3):
        assert api.post("/api/v1/ctrs/", ctr_payload(world), format="json").status_code == 201
    site = Worksite.objects.get()
    site.plan_transporters.set([world.alfa])
    numbers = list(CTR.objects.order_by("sequence").values_list("number", flat=True))

    migrate(BEFORE)
    with connection.cursor() as cursor:
        # Two duplicates as the race left them (one differing in case and spacing), each with
        # a CTR, a PGRCC transporter and a permit.
        for address, permit in (("Rua das Flores, 10", "ALV-1"), ("  RUA DAS  flores, 10", "")):
            cursor.execute(
                "INSERT INTO ctr_worksite (generator_id, address, neighbourhood, location, "
                "permit_number, is_large_generator) SELECT generator_id, %s, '', location, %s, "
                "true FROM ctr_worksite WHERE id = %s RETURNING id",
                [address, permit, site.pk],
            )
            duplicate = cursor.fetchone()[0]
            cursor.execute(
                "INSERT INTO ctr_worksite_plan_transporters (worksite_id, transporter_id) "
                "VALUES (%s, %s)",
                [duplicate, world.beta.pk],
            )
            cursor.execute(
                "UPDATE ctr_ctr SET worksite_id = %s WHERE number = %s",
                [duplicate, numbers.pop()],
            )
        # Another generator's site at the same address is not a duplicate.
        cursor.execute(
            "INSERT INTO ctr_generator (name, document) VALUES ('Outro', '11444777000161') "
            "RETURNING id"
        )
        other = cursor.fetchone()[0]
        cursor.execute(
            "INSERT INTO ctr_worksite (generator_id, address, neighbourhood, location, "
            "permit_number, is_large_generator) SELECT %s, address, '', location, '', false "
            "FROM ctr_worksite WHERE id = %s",
            [other, site.pk],
        )
    migrate(AFTER)
    # The models are today's: read the merged rows through the latest schema.
    migrate()

    assert Worksite.objects.filter(generator__document=CPF_GENERATOR).count() == 1
    kept = Worksite.objects.get(generator__document=CPF_GENERATOR)
    assert kept.pk == site.pk
    assert CTR.objects.filter(worksite=kept).count() == 3
    assert set(kept.plan_transporters.all()) == {world.alfa, world.beta}
    assert kept.is_large_generator and kept.permit_number == "ALV-1"
    assert Worksite.objects.count() == 2  # the other generator's site stays
    assert set(CTR.objects.values_list("generator_name", flat=True)) == {"Maria da Obra"}
