"""Recidivism as Lei 3.978/2007 reads it (art. 26 II, art. 28, art. 30): an earlier record
counts once it is final when the new infraction is found: its appeal window ended with no
appeal (paid or not), or an appeal was decided against the offender."""

import datetime
from decimal import Decimal

import pytest

from fiscalization import enforcement
from fiscalization.models.enforcement import DeliveryMethod, InfractionRecord
from fiscalization.models.frameworks import PenaltyFramework
from tests.ctr_world import build_world
from tests.enforcement_world import GUARATINGUETA, HOUR, D, at, entries, open_case, record_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    return build_world()


def earlier(world) -> InfractionRecord:
    """A record handed over on 09/01/2025 at 10:00 (by hand): day 1 of the 30 days to appeal
    is 10/01, the last 08/02 (Lei 3.190/2013 art. 13); final from 09/02 if nobody appeals."""
    record = record_for(world, opened_at=at(2025, 1, 6, 9))
    assert enforcement.appeal_last_day(record) == D(2025, 2, 8)
    return record


def second_case(world, day: datetime.date):
    return open_case(world, at(day.year, day.month, day.day, 9))


def test_an_unappealed_unpaid_earlier_record_makes_a_recidivist(world):
    earlier(world)  # never appealed, never paid: still ISSUED
    case = second_case(world, D(2025, 3, 3))
    assert enforcement.is_recidivist(case)
    with pytest.raises(enforcement.EnforcementError) as refused:  # no notice (art. 28)
        enforcement.issue_notice(case, "Remover o entulho.", DeliveryMethod.HAND, case.opened_at)
    assert refused.value.code == "recidivist"
    record = enforcement.draw_up_record(
        case,
        entries("INF-01"),
        delivery_method=DeliveryMethod.HAND,
        signed_by_offender=True,
        drawn_up_at=case.opened_at + HOUR,
    )
    assert record.recidivist
    assert record.total_ufesp == Decimal("200.00")  # 100 UFESP in dobro (art. 30)


def test_the_earlier_record_counts_from_the_day_after_its_appeal_window(world):
    first = earlier(world)
    assert not enforcement.is_recidivist(second_case(world, D(2025, 2, 8)))  # last day to appeal
    case = second_case(world, D(2025, 2, 9))
    assert enforcement.is_recidivist(case)
    assert list(enforcement.earlier_final_records(case)) == [first]


def test_a_record_still_within_its_appeal_window_does_not_count_even_paid(world):
    # Paying does not waive the appeal (the law does not say it does): the record becomes
    # final only when its window ends.
    first = earlier(world)
    enforcement.register_payment(first, D(2025, 1, 15))
    assert not enforcement.is_recidivist(second_case(world, D(2025, 1, 20)))
    assert enforcement.is_recidivist(second_case(world, D(2025, 2, 9)))


def test_a_record_annulled_on_appeal_does_not_count(world):
    first = earlier(world)
    enforcement.file_appeal(first, D(2025, 1, 20), "O entulho não era nosso.")
    enforcement.decide_appeal(
        first, D(2025, 2, 1), upheld=False, decision="Auto anulado.", by=world.authority
    )
    assert not enforcement.is_recidivist(second_case(world, D(2025, 3, 3)))


def test_a_pending_appeal_does_not_count(world):
    first = earlier(world)
    enforcement.file_appeal(first, D(2025, 1, 20), "O entulho não era nosso.")
    assert not enforcement.is_recidivist(second_case(world, D(2025, 3, 3)))


def test_an_appeal_pending_when_the_new_infraction_was_found_does_not_count_once_upheld(world):
    first = earlier(world)
    enforcement.file_appeal(first, D(2025, 1, 20), "O entulho não era nosso.")
    enforcement.decide_appeal(
        first, D(2025, 3, 10), upheld=True, decision="Auto mantido.", by=world.authority
    )
    # Found while the appeal was pending (03/03), the new infraction is a first offence; found
    # on the day of the decision against the offender, a recidivism.
    assert not enforcement.is_recidivist(second_case(world, D(2025, 3, 3)))
    assert enforcement.is_recidivist(second_case(world, D(2025, 3, 10)))


def test_a_record_never_delivered_does_not_count(world):
    record_for(world, opened_at=at(2025, 1, 6, 9), delivery=DeliveryMethod.MAIL)  # AR never back
    assert not enforcement.is_recidivist(second_case(world, D(2025, 6, 2)))


def test_the_look_back_period_is_one_parameter_of_the_framework(world):
    earlier(world)  # drawn up 09/01/2025
    framework = PenaltyFramework.objects.get(ibge_code=GUARATINGUETA)
    # Lei 3.978/2007 gives no period: every earlier final record counts.
    assert framework.recidivism_lookback_days is None
    assert "não fixa período" in framework.cite("recidivism_lookback_days")
    assert enforcement.is_recidivist(second_case(world, D(2025, 6, 2)))
    PenaltyFramework.objects.filter(pk=framework.pk).update(recidivism_lookback_days=90)
    assert not enforcement.is_recidivist(second_case(world, D(2025, 6, 2)))
    assert enforcement.is_recidivist(second_case(world, D(2025, 3, 3)))
