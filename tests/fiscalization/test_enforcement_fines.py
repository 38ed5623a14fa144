"""Fines of Lei 3.978/2007: cumulative (art. 30 §3), doubled for recidivism (art. 30) from
earlier FINAL records only, obstruction (art. 26 I) an aggravating circumstance with no factor,
daily fine of a disobeyed embargo (art. 31), reais at the UFESP of the payment date (art. 36).
The other frameworks' fines: test_penalty_frameworks.py."""

from decimal import Decimal

import pytest

from config.errors import DomainError
from fiscalization import enforcement, fines
from fiscalization.models.enforcement import (
    InfractionRecord,
    PenaltyTableEntry,
    RecordStatus,
    UfespRate,
)
from tests.ctr_world import build_world
from tests.enforcement_world import (
    CPF_OTHER,
    D,
    at,
    fixture_framework,
    record_for,
    transporter_offender,
)

pytestmark = pytest.mark.django_db
GUARA = fixture_framework()  # Lei 3.978/2007


@pytest.fixture
def world():
    return build_world()


# --- arithmetic -------------------------------------------------------------------------------


def test_three_simultaneous_infractions_add_up():
    fine = fines.record_fine([Decimal("100"), Decimal("30"), Decimal("20")], GUARA)
    assert fine.base_ufesp == Decimal("150")
    assert fine.total_ufesp == Decimal("150.00")  # Lei 3.978/2007 art. 30 §3


def test_recidivist_pays_double_the_sum():
    fine = fines.record_fine([Decimal("100"), Decimal("30"), Decimal("20")], GUARA, earlier=1)
    assert fine.total_ufesp == Decimal("300.00")  # Lei 3.978/2007 art. 30


def test_obstruction_has_no_factor_where_the_law_gives_none():
    # Lei 3.978/2007 art. 26 I names the aggravating circumstance without a figure: the
    # record notes it, the fine stays (no invented factor such as 1.5).
    assert GUARA.obstruction_factor is None
    fine = fines.record_fine([Decimal("100")], GUARA, obstructed=True)
    assert fine.obstruction_factor == 1
    assert fine.total_ufesp == Decimal("100.00")


def test_obstruction_factor_applies_only_when_the_framework_defines_one():
    framework = fixture_framework()
    framework.obstruction_factor = Decimal("1.5")
    fine = fines.record_fine([Decimal("100")], framework, earlier=1, obstructed=True)
    assert fine.total_ufesp == Decimal("300.00")
    assert fines.record_fine([Decimal("100")], framework).total_ufesp == Decimal("100.00")


def test_total_is_rounded_half_up_to_the_hundredth():
    framework = fixture_framework()
    framework.obstruction_factor = Decimal("1.5")
    fine = fines.record_fine([Decimal("33.33")], framework, obstructed=True)
    assert fine.total_ufesp == Decimal("50.00")  # 49.995


def test_embargo_disobeyed_three_days_is_three_ufesp():
    assert fines.embargo_fine(3, GUARA) == Decimal("3")  # Lei 3.978/2007 art. 31
    assert fines.embargo_fine(0, GUARA) == Decimal("0")


def test_conversion_uses_the_ufesp_of_the_payment_year():
    # Seeded rates: 2024 R$ 35,36; 2025 R$ 37,02.
    assert fines.to_brl(Decimal("150"), D(2024, 12, 31)) == Decimal("5304.00")
    assert fines.to_brl(Decimal("150"), D(2025, 1, 2)) == Decimal("5553.00")


def test_conversion_without_a_rate_for_the_year_is_a_clear_error():
    UfespRate.objects.filter(year=2025).delete()
    with pytest.raises(fines.UfespRateMissing, match="UFESP cadastrado para 2025"):
        fines.to_brl(Decimal("10"), D(2025, 6, 1))


def test_a_missing_rate_is_a_domain_error_the_pages_and_the_api_show():
    UfespRate.objects.filter(year=2025).delete()
    with pytest.raises(DomainError) as info:
        fines.ufesp_value(D(2025, 6, 1))
    assert (info.value.code, info.value.status) == ("ufesp_missing", 400)
    assert "UFESP cadastrado para 2025: cadastre-o em “Valores das unidades fiscais”" in (
        info.value.message
    )


# --- through the service ----------------------------------------------------------------------


def test_record_adds_up_three_lines_of_the_table(world):
    record = record_for(world, codes=("INF-02", "INF-03", "INF-04"))  # 50 + 80 + 30
    assert record.total_ufesp == Decimal("160.00")
    assert not record.recidivist
    assert [i.fine_ufesp for i in record.items.order_by("entry__code")] == [50, 80, 30]


def test_record_keeps_the_fine_of_its_day_when_the_table_changes(world):
    record = record_for(world, codes=("INF-01",))
    PenaltyTableEntry.objects.filter(code="INF-01").update(fine_ufesp=Decimal("999"))
    assert enforcement.record_fine(record).total_ufesp == Decimal("100.00")


def test_obstruction_recorded_in_the_case_is_noted_without_a_factor(world):
    record = record_for(world, codes=("INF-01",), obstructed=True)
    assert record.case.obstructed_inspection
    assert record.obstruction_multiplier == Decimal("1")  # art. 26 I: no figure in the law
    assert record.total_ufesp == Decimal("100.00")


def _earlier(world, status: str) -> InfractionRecord:
    record = record_for(world, opened_at=at(2025, 1, 6, 9), codes=("INF-01",))
    InfractionRecord.objects.filter(pk=record.pk).update(status=status)
    return record


@pytest.mark.parametrize(
    "status, recidivist",
    [
        (RecordStatus.UPHELD, True),
        (RecordStatus.PAID, True),
        (RecordStatus.DIVIDA_ATIVA, True),
        (RecordStatus.ANNULLED, False),
        (RecordStatus.APPEALED, False),
        # Delivered by hand on 09/01, its appeal window ended on 08/02 with no appeal: final,
        # paid or not (tests/fiscalization/test_enforcement_recidivism.py).
        (RecordStatus.ISSUED, True),
    ],
)
def test_only_an_earlier_final_record_makes_a_recidivist(world, status, recidivist):
    _earlier(world, status)
    record = record_for(world, opened_at=at(2025, 3, 3, 9), codes=("INF-01", "INF-04"))
    assert record.recidivist is recidivist
    assert record.total_ufesp == (Decimal("260.00") if recidivist else Decimal("130.00"))


def test_a_record_drawn_up_after_the_new_infraction_does_not_count(world):
    case = enforcement.open_case(
        municipality=world.town,
        inspector=world.fiscal,
        offender=transporter_offender(world),
        description="Segunda infração, constatada antes do auto da primeira.",
        opened_at=at(2025, 1, 6, 8),
    )
    _earlier(world, RecordStatus.PAID)  # drawn up 2025-01-09, after the case above
    assert not enforcement.is_recidivist(case)


def test_recidivism_is_per_document_not_per_name(world):
    _earlier(world, RecordStatus.PAID)
    other = transporter_offender(world)
    other.name = "Outro nome da mesma empresa"
    assert record_for(world, opened_at=at(2025, 3, 3), offender=other).recidivist
    stranger = transporter_offender(world)
    stranger.document, stranger.transporter = CPF_OTHER, None
    stranger.role = "DRIVER"
    assert not record_for(world, opened_at=at(2025, 3, 4), offender=stranger).recidivist


def test_embargo_breaches_on_three_days_cost_three_ufesp(world):
    record = record_for(world, codes=("INF-01",))
    embargo = enforcement.apply_embargo(
        record, D(2025, 3, 10), "Obra da Rua A, 1", by=world.authority
    )
    for day in (D(2025, 3, 11), D(2025, 3, 12), D(2025, 3, 14)):
        enforcement.register_embargo_breach(embargo, day)
    assert enforcement.embargo_fine_ufesp(embargo) == Decimal("3")
