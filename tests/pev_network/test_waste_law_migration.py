"""Migration 0011: each municipality's waste law, printed on its documents.
Guaratinguetá's is filled in (the platform knows it); every other municipality's stays empty
until it is told, and going back leaves the municipalities as they were."""

from __future__ import annotations

from decimal import Decimal
from importlib import import_module

import pytest
from django.apps import apps
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from pev_network.models import Municipality
from tests.builders import ORIGIN, multi, square
from tests.migrations import migrate

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("pev_network", "0010_travel_time")]
AFTER = [("pev_network", "0011_municipality_waste_law")]


@pytest.fixture(autouse=True)
def latest_schema_afterwards():
    yield
    migrate()


def old_municipality_model():
    """Municipality as migration 0010 left it (no waste_law)."""
    executor = MigrationExecutor(connection)
    return executor.loader.project_state(BEFORE[0]).apps.get_model("pev_network", "Municipality")


def test_guaratingueta_gets_its_law_and_the_others_stay_empty_and_back():
    migrate(BEFORE)
    Old = old_municipality_model()
    for code, name, size in (("3518404", "Guaratinguetá", 1000), ("3502507", "Aparecida", 500)):
        Old.objects.create(
            ibge_code=code,
            name=name,
            uf="SP",
            boundary=multi(square(*ORIGIN, size)),
            ufesp_value=Decimal("38.00"),
        )

    migrate(AFTER)
    laws = dict(Municipality.objects.values_list("ibge_code", "waste_law"))
    assert laws == {"3518404": "Lei Municipal nº 3.978/2007", "3502507": ""}

    migrate(BEFORE)
    Old = old_municipality_model()
    rows = Old.objects.order_by("ibge_code").values_list("ibge_code", "name", "ufesp_value")
    assert list(rows) == [
        ("3502507", "Aparecida", Decimal("38.00")),
        ("3518404", "Guaratinguetá", Decimal("38.00")),
    ]
    with connection.cursor() as cursor:
        columns = [
            c.name
            for c in connection.introspection.get_table_description(
                cursor, Municipality._meta.db_table
            )
        ]
    assert "waste_law" not in columns


def test_a_law_already_filled_is_kept():
    """Run again on a database where someone typed the law (a re-run, a restored dump)."""
    migrate()
    Municipality.objects.create(
        ibge_code="3518404",
        name="Guaratinguetá",
        uf="SP",
        boundary=multi(square(*ORIGIN, 1000)),
        waste_law="Lei Municipal nº 3.978/2007, alterada pela Lei nº 4.699/2017",
    )
    step = import_module("pev_network.migrations.0011_municipality_waste_law")
    step.fill_known_laws(apps, None)
    assert Municipality.objects.get().waste_law.endswith("4.699/2017")
