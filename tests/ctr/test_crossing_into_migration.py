"""Migration ctr 0021: the CTRs already issued get the municipality they
cross into from their destination facility; back, the column, its index and the trigger go."""

from __future__ import annotations

import pytest
from django.db import connection

from ctr.models import CTR
from tests.ctr.test_consortium_destinations import b_origin, build_consortium
from tests.ctr.test_ctr_api import issue
from tests.migrations import migrate

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("frozen_today")]

BEFORE = [("ctr", "0020_transporter_licences")]


@pytest.fixture(autouse=True)
def latest_schema_afterwards():
    yield
    migrate()


def scalar(sql: str, params=()):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()[0]


def schema() -> tuple[int, int, int]:
    """The column, its partial index and the trigger that keeps it: how many of each."""
    return (
        scalar(
            "SELECT count(*) FROM information_schema.columns "
            "WHERE table_name = 'ctr_ctr' AND column_name = 'crossing_into_id'"
        ),
        scalar("SELECT count(*) FROM pg_indexes WHERE indexname = 'ctr_crossing_into'"),
        scalar("SELECT count(*) FROM pg_trigger WHERE tgname = 'ctr_crossing_follows_facility'"),
    )


def test_the_crossings_already_issued_are_filled_and_go_back():
    consortium = build_consortium()
    world, a, b = consortium["world"], consortium["a"], consortium["b"]
    consortium["b"].accepted_destinations.add(a)
    expected = {
        issue(world, facility=consortium["landfill_b"]).json()["number"]: b.pk,  # A into B
        issue(world).json()["number"]: None,  # A at home
        issue(world, origin=b_origin(world)).json()["number"]: a.pk,  # B into A
        issue(world, origin=b_origin(world), facility=consortium["landfill_b"]).json()[
            "number"
        ]: None,  # B at home
    }
    assert schema() == (1, 1, 1)

    migrate(BEFORE)
    assert schema() == (0, 0, 0)
    assert scalar("SELECT count(*) FROM ctr_ctr") == len(expected)

    migrate()
    assert schema() == (1, 1, 1)
    assert dict(CTR.objects.values_list("number", "crossing_into")) == expected
