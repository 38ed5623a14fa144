"""Migration pev_network 0016: a municipality's undated parameters become its first set of
parameters, from FIRST_SET_FROM; going back, the columns get the figures of the set in force
today (a municipality without a set gets the defaults) and are required again."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from pev_network.models import FIRST_SET_FROM, Municipality, MunicipalParameters
from tests.builders import ORIGIN, multi, square
from tests.migrations import migrate

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("pev_network", "0015_ufesp_one_home")]
AFTER = [("pev_network", "0016_municipal_parameters")]


@pytest.fixture(autouse=True)
def latest_schema_afterwards():
    yield
    migrate()


def old_municipality():
    executor = MigrationExecutor(connection)
    return executor.loader.project_state(BEFORE).apps.get_model("pev_network", "Municipality")


def column_is_nullable(column: str) -> bool:
    with connection.cursor() as cursor:
        description = connection.introspection.get_table_description(
            cursor, Municipality._meta.db_table
        )
    return next(c.null_ok for c in description if c.name == column)


def test_the_figures_become_the_first_set_and_come_back():
    migrate(BEFORE)
    Old = old_municipality()
    Old.objects.create(
        ibge_code="3518404",
        name="Guaratinguetá",
        uf="SP",
        boundary=multi(square(*ORIGIN, 500)),
        gps_tolerance_m=Decimal("22.5"),
        open_ctr_alert_hours=72,
        generator_confirmation_required=True,
        sorting_tolerance_pct={"A": "12"},
    )

    migrate(AFTER)
    municipality = Municipality.objects.get(ibge_code="3518404")
    (first,) = MunicipalParameters.objects.filter(municipality=municipality)
    assert first.valid_from == FIRST_SET_FROM
    assert (first.gps_tolerance_m, first.open_ctr_alert_hours) == (Decimal("22.5"), 72)
    assert first.generator_confirmation_required is True
    assert first.sorting_tolerance_pct == {"A": "12"}
    # The version still running during a deploy reads the columns; this one no longer fills
    # them.
    assert column_is_nullable("gps_tolerance_m")

    # A later set, in force today, and a municipality made after the migration without one.
    MunicipalParameters.objects.create(
        municipality=municipality,
        valid_from=datetime.date.today() - datetime.timedelta(days=1),
        gps_tolerance_m=Decimal("30.0"),
        open_ctr_alert_hours=24,
    )
    bare = Municipality.objects.create(
        ibge_code="3502507", name="Aparecida", uf="SP", boundary=multi(square(*ORIGIN, 500))
    )
    MunicipalParameters.objects.filter(municipality=bare).delete()

    migrate(BEFORE)
    Old = old_municipality()
    rows = dict(Old.objects.values_list("ibge_code", "gps_tolerance_m"))
    assert rows == {"3518404": Decimal("30.0"), "3502507": Decimal("15.0")}
    assert Old.objects.get(ibge_code="3518404").open_ctr_alert_hours == 24
    assert not column_is_nullable("gps_tolerance_m")
