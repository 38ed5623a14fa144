"""Migrations 0010-0012 keep the cases that existed before penalty frameworks valid: each gets
Guaratinguetá's framework, the procedure it was opened under; a recidivist record keeps its doubled
fine, now with the factor frozen beside it; nothing is lost."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import connection

from fiscalization import enforcement
from fiscalization.models.enforcement import EnforcementCase, InfractionRecord, RecordStatus
from tests.ctr_world import build_world
from tests.enforcement_world import GUARATINGUETA, at, ensure_frameworks, record_for
from tests.migrations import migrate

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("fiscalization", "0009_penalty_table_per_municipality")]


@pytest.fixture(autouse=True)
def latest_schema_afterwards():
    yield
    migrate()


def test_existing_cases_get_guaratinguetas_framework_and_keep_their_fines():
    ensure_frameworks()
    world = build_world()
    first = record_for(world, opened_at=at(2025, 1, 6, 9))
    InfractionRecord.objects.filter(pk=first.pk).update(status=RecordStatus.PAID)
    second = record_for(world, opened_at=at(2025, 3, 3, 9))
    assert second.recidivist and second.total_ufesp == Decimal("200.00")
    cases = sorted(EnforcementCase.objects.values_list("number", flat=True))

    migrate(BEFORE)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM fiscalization_enforcementcase")
        assert cursor.fetchone()[0] == 2
    migrate()

    assert sorted(EnforcementCase.objects.values_list("number", flat=True)) == cases
    for case in EnforcementCase.objects.select_related("framework"):
        assert case.framework.ibge_code == GUARATINGUETA
    second = InfractionRecord.objects.get(pk=second.pk)
    assert second.total_ufesp == Decimal("200.00")
    assert second.recidivism_factor == 2 and second.earlier_records == 1
    assert enforcement.record_fine(second).recidivism_factor == 2
    assert enforcement.payment_last_day(second) is not None
