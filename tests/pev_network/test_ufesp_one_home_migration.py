"""Migration pev_network 0015: the municipality's undated UFESP goes, the
UFESP by year (UfespRate) stays its one home. A value a municipality registered for a year the
table lacks is kept there; going back, each municipality gets the latest year's value."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from pev_network.models import Municipality, UfespRate
from tests.builders import ORIGIN, multi, square
from tests.migrations import migrate

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [
    ("pev_network", "0014_municipality_fee_collector"),
    ("fiscalization", "0014_ufesp_rate_moved_to_pev_network"),
]
AFTER = [("pev_network", "0015_ufesp_one_home")]


@pytest.fixture(autouse=True)
def latest_schema_afterwards():
    yield
    migrate()


def old_model(name: str):
    executor = MigrationExecutor(connection)
    return executor.loader.project_state(BEFORE).apps.get_model("pev_network", name)


def test_the_municipalitys_value_moves_to_the_year_table_and_back():
    migrate(BEFORE)
    Old, OldRate = old_model("Municipality"), old_model("UfespRate")
    OldRate.objects.update_or_create(unit="UFESP", year=2025, defaults={"value_brl": "37.02"})
    OldRate.objects.filter(year=2027).delete()
    for code, name, value, year in (
        ("3518404", "Guaratinguetá", "99.99", 2025),  # the table's 2025 value wins
        ("3502507", "Aparecida", "40.00", 2027),  # a year the table lacks: kept
    ):
        Old.objects.create(
            ibge_code=code,
            name=name,
            uf="SP",
            boundary=multi(square(*ORIGIN, 500)),
            ufesp_value=Decimal(value),
            ufesp_year=year,
        )

    migrate(AFTER)
    rates = dict(UfespRate.objects.filter(year__in=(2025, 2027)).values_list("year", "value_brl"))
    assert rates == {2025: Decimal("37.02"), 2027: Decimal("40.00")}
    with connection.cursor() as cursor:
        table = Municipality._meta.db_table
        columns = [c.name for c in connection.introspection.get_table_description(cursor, table)]
    assert "ufesp_value" not in columns and "ufesp_year" not in columns

    migrate(BEFORE)
    Old = old_model("Municipality")
    OldRate = old_model("UfespRate")
    latest = OldRate.objects.filter(unit="UFESP").order_by("-year").first()
    rows = set(Old.objects.values_list("ufesp_value", "ufesp_year"))
    assert rows == {(latest.value_brl, latest.year)}
