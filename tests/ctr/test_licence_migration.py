"""Migration ctr 0020: each transporter's registration becomes its licence
in that municipality, with nothing lost, and back: the first licence returns to the fields."""

from __future__ import annotations

import datetime

import pytest
from django.db import connection
from django.db.migrations.exceptions import IrreversibleError

from ctr.models import Transporter, TransporterLicence
from tests.builders import licence, municipality
from tests.migrations import migrate

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("ctr", "0019_reception_location")]
AFTER = [("ctr", "0020_transporter_licences")]
D = datetime.date

# The old registration's columns, in the order REGISTRATIONS gives them.
COLUMNS = (
    "name, document, registration_number, municipality_id, valid_from, valid_until, status, "
    "status_since, suspended_until, is_self_generator"
)


@pytest.fixture(autouse=True)
def latest_schema_afterwards():
    yield
    migrate()


def registrations(town, neighbour) -> list[tuple]:
    """Registrations as the old schema kept them: every field, every status, both towns."""
    return [
        ("Alfa", "11222333000181", "TR-001", town.pk, D(2025, 1, 1), D(2027, 12, 31),
         "ACTIVE", None, None, False),
        ("Beta", "11444777000161", "TR-002", town.pk, D(2025, 1, 1), None,
         "SUSPENDED", D(2026, 6, 1), D(2026, 6, 30), False),
        ("Gama", "33644555000125", "AP-77", neighbour.pk, D(2024, 3, 1), D(2026, 2, 28),
         "REVOKED", D(2025, 9, 9), None, False),
        ("Maria", "52998224725", "TR-PROPRIO", town.pk, D(2025, 5, 5), None,
         "ACTIVE", None, None, True),
        # A status without its day, as the old form allowed: kept as it was.
        ("Delta", "11222333000262", "TR-004", neighbour.pk, D(2025, 1, 1), None,
         "SUSPENDED", None, None, False),
    ]  # fmt: skip


def rows(sql: str, params=()) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def test_each_registration_becomes_its_licence_and_comes_back():
    town = municipality("3518404", "Guaratinguetá (teste)")
    neighbour = municipality("3502507", "Aparecida (teste)", east_m=20_000)
    old = registrations(town, neighbour)
    migrate(BEFORE)
    with connection.cursor() as cursor:
        for row in old:
            cursor.execute(
                f"INSERT INTO ctr_transporter ({COLUMNS}) VALUES ({', '.join(['%s'] * 10)})",
                row,
            )
    migrate(AFTER)
    migrate()

    # Forward: one licence each, in its municipality, every field as it was.
    assert TransporterLicence.objects.count() == len(old)
    for name, document, number, place, start, end, status, since, until, own in old:
        transporter = Transporter.objects.get(document=document)
        assert (transporter.name, transporter.is_self_generator) == (name, own)
        held = transporter.licences.get()
        assert (held.municipality_id, held.number, held.valid_from, held.valid_until) == (
            place,
            number,
            start,
            end,
        )
        assert (held.status, held.status_since, held.suspended_until) == (status, since, until)
    # The rules read them as they read the registrations: Beta suspended in June only.
    beta = TransporterLicence.objects.get(number="TR-002")
    assert beta.restricted_on(D(2026, 6, 30)) == "SUSPENDED"
    assert beta.restricted_on(D(2026, 7, 1)) is None

    # A second licence, added after the migration, stays out of the way back.
    licence(Transporter.objects.get(document="11222333000181"), neighbour, "AP-900")
    migrate(BEFORE)
    back = rows(f"SELECT {COLUMNS} FROM ctr_transporter ORDER BY id")
    assert back == old


def test_going_back_stops_and_says_why_when_a_transporter_has_no_licence():
    town = municipality("3518404", "Guaratinguetá (teste)")
    licence(Transporter.objects.create(name="Alfa", document="11222333000181"), town, "TR-1")
    Transporter.objects.create(name="Sem licença", document="11444777000161")
    with pytest.raises(IrreversibleError, match="without a licence.*11444777000161"):
        migrate(BEFORE)
    # Nothing half done: the licences are all there.
    assert TransporterLicence.objects.count() == 1
