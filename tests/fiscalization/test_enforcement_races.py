"""Races in the enforcement procedure, with real concurrent database connections: five
inspectors assessing the same embargo's daily fines at once make one charge, and every day of
breach is charged once (art. 31); the others are told there is nothing left to charge."""

from decimal import Decimal

import pytest
from django.db import connection

from fiscalization import enforcement
from fiscalization.models.enforcement import EmbargoBreach, EmbargoFineCharge
from tests.ctr.test_ctr_races import all_at_once
from tests.ctr_world import build_world
from tests.enforcement_world import D, ensure_frameworks, record_for

pytestmark = pytest.mark.django_db(transaction=True)


def test_five_concurrent_assessments_make_one_charge():
    ensure_frameworks()
    world = build_world()
    record = record_for(world, codes=("INF-01",))
    embargo = enforcement.apply_embargo(
        record, D(2025, 3, 10), "Obra da Rua A, 1", by=world.authority
    )
    for day in (D(2025, 3, 11), D(2025, 3, 12), D(2025, 3, 14)):
        enforcement.register_embargo_breach(embargo, day)

    def assess(_):
        try:
            return enforcement.assess_embargo_fine(embargo, D(2025, 3, 20)).pk
        except enforcement.EnforcementError as error:
            return error.code
        finally:
            connection.close()

    results = all_at_once(5, assess)
    charges = list(EmbargoFineCharge.objects.filter(penalty=embargo))
    assert len(charges) == 1
    assert charges[0].amount_ufesp == Decimal("3")  # one UFESP a day (art. 31)
    assert sorted(map(str, results)) == sorted([str(charges[0].pk)] + ["no_breach"] * 4)
    assert set(EmbargoBreach.objects.filter(penalty=embargo).values_list("charge", flat=True)) == {
        charges[0].pk
    }
