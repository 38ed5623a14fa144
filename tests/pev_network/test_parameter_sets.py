"""A municipality's parameters are sets with a start date: the set in force on a day is the
latest that starts on or before it (before the first, the first), the same in Python and in
SQL; a new municipality starts with the law's defaults."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest
from django.db import connection

from pev_network.models import (
    FIRST_SET_FROM,
    MunicipalParameters,
    parameter_names,
    parameters_sql,
)
from tests.builders import municipality as a_municipality

pytestmark = pytest.mark.django_db

D = datetime.date


def sql_tolerance(municipality_id: int, day: datetime.date) -> Decimal:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT mp.gps_tolerance_m FROM {parameters_sql('%(m)s', '%(day)s')} mp",
            {"m": municipality_id, "day": day},
        )
        return cursor.fetchone()[0]


def test_a_new_municipality_has_the_defaults_from_the_first_day():
    town = a_municipality()
    (first,) = MunicipalParameters.objects.filter(municipality=town)
    assert first.valid_from == FIRST_SET_FROM
    assert first.gps_tolerance_m == MunicipalParameters._meta.get_field("gps_tolerance_m").default
    assert town.parameters_on(D(2026, 3, 1)) == first


@pytest.mark.parametrize(
    ("day", "tolerance"),
    [
        (D(2026, 2, 28), Decimal("15.0")),  # the first set (the defaults)
        (D(2026, 3, 1), Decimal("25.0")),  # a set is in force from its first day
        (D(2026, 6, 30), Decimal("25.0")),
        (D(2026, 7, 1), Decimal("40.0")),
        (D(2030, 1, 1), Decimal("40.0")),
    ],
)
def test_the_set_in_force_is_the_latest_started(day, tolerance):
    town = a_municipality()
    MunicipalParameters.objects.create(
        municipality=town, valid_from=D(2026, 3, 1), gps_tolerance_m=Decimal("25.0")
    )
    MunicipalParameters.objects.create(
        municipality=town, valid_from=D(2026, 7, 1), gps_tolerance_m=Decimal("40.0")
    )
    assert town.parameters_on(day).gps_tolerance_m == tolerance
    assert sql_tolerance(town.pk, day) == tolerance


def test_before_the_first_set_the_first_one_holds():
    town = a_municipality()
    MunicipalParameters.objects.filter(municipality=town).update(
        valid_from=D(2026, 3, 1), gps_tolerance_m=Decimal("25.0")
    )
    assert town.parameters_on(D(2025, 1, 1)).gps_tolerance_m == Decimal("25.0")
    assert sql_tolerance(town.pk, D(2025, 1, 1)) == Decimal("25.0")


def test_another_municipalitys_sets_are_not_read():
    town, neighbour = a_municipality(), a_municipality("9999998", "Vizinho", east_m=30_000)
    MunicipalParameters.objects.create(
        municipality=neighbour, valid_from=D(2026, 3, 1), gps_tolerance_m=Decimal("99.0")
    )
    assert town.parameters_on(D(2026, 6, 1)).gps_tolerance_m == Decimal("15.0")
    assert sql_tolerance(town.pk, D(2026, 6, 1)) == Decimal("15.0")


def test_without_any_set_the_defaults_hold():
    town = a_municipality()
    MunicipalParameters.objects.filter(municipality=town).delete()
    found = town.parameters_on(D(2026, 6, 1))
    assert found.pk is None
    assert {name: getattr(found, name) for name in parameter_names()} == {
        name: MunicipalParameters._meta.get_field(name).get_default() for name in parameter_names()
    }
