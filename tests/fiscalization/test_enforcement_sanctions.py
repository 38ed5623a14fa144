"""Sanctions the law requires: the daily fines of a disobeyed embargo become
a charge (art. 31), paid at the UFESP of the payment date (art. 36) or sent to Dívida Ativa
(art. 22 IV); a case does not close while a revocation the law requires is pending (art. 34,
"deverá"), nor while the repair is owed after the fine is paid (art. 30 §2)."""

from decimal import Decimal

import pytest
from django.test import Client

from fiscalization import enforcement
from fiscalization.enforcement import EnforcementError
from fiscalization.models.enforcement import (
    CaseStatus,
    ChargeStatus,
    EnforcementCase,
    PenaltyKind,
)
from tests.ctr_world import build_world
from tests.enforcement_world import D, at, record_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    return build_world()


def status_of(record) -> str:
    return EnforcementCase.objects.get(pk=record.case_id).status


def embargo_disobeyed(world, *days):
    record = record_for(world)  # drawn up 06/03/2025, by hand
    embargo = enforcement.apply_embargo(
        record, D(2025, 3, 7), "Obra da Rua A, 1", by=world.authority
    )
    for day in days:
        enforcement.register_embargo_breach(embargo, day)
    return record, embargo


# --- art. 30 §2: paying does not end the duty to repair -----------------------------------------


def test_a_paid_fine_does_not_close_the_case_while_the_repair_is_owed(world):
    record = record_for(world)  # the notice expired unrepaired
    enforcement.register_payment(record, D(2025, 3, 20))
    assert status_of(record) == CaseStatus.RECORDED
    assert "register_repair" in [a.name for a in enforcement.offered(record)]
    timeline = enforcement.case_timeline(record.case, at(2025, 3, 21))
    assert any("art. 30 §2" in line for line in timeline.next_due)
    enforcement.register_repair(record, at(2025, 3, 25, 14))
    assert status_of(record) == CaseStatus.CLOSED


def test_a_repair_registered_late_on_the_notice_counts(world):
    record = record_for(world)
    notice = record.case.notices.get()
    notice.repaired_at = at(2025, 3, 6, 15)  # after the 72 hours: the record still stands
    notice.save(update_fields=["repaired_at"])
    assert not enforcement.repair_owed(record)
    enforcement.register_payment(record, D(2025, 3, 20))
    assert status_of(record) == CaseStatus.CLOSED
    with pytest.raises(EnforcementError, match="já foi registrada"):
        enforcement.register_repair(record, at(2025, 3, 25, 14))


# --- art. 34: after a suspension, a new infraction "deverá" bring the revocation ----------------


def test_a_case_does_not_close_while_the_required_revocation_is_pending(world):
    first = record_for(world, opened_at=at(2025, 1, 6, 9))
    enforcement.apply_suspension(first, D(2025, 1, 10), 5, by=world.authority)
    record = record_for(world, opened_at=at(2025, 3, 3, 9))  # recidivist: no notice
    assert record.recidivist and record.proposes_revocation
    enforcement.register_repair(record, at(2025, 3, 4, 9))
    enforcement.register_payment(record, D(2025, 3, 20))
    assert status_of(record) == CaseStatus.RECORDED
    assert enforcement.revocation_pending(record)
    enforcement.apply_revocation(
        record, D(2025, 3, 21), "Cassação do alvará (art. 34).", by=world.authority
    )
    assert status_of(record) == CaseStatus.CLOSED


# --- art. 31: the daily fine of a disobeyed embargo, payable -----------------------------------


def test_disobeyed_embargo_days_become_a_charge_paid_at_the_ufesp_of_the_payment_date(world):
    record, embargo = embargo_disobeyed(world, D(2025, 3, 8), D(2025, 3, 9), D(2025, 3, 11))
    charge = enforcement.assess_embargo_fine(embargo, D(2025, 3, 12))
    assert charge.amount_ufesp == Decimal("3")  # one UFESP a day (art. 31)
    assert enforcement.charge_last_day(charge) == D(2025, 4, 11)  # 30 days (art. 36)
    assert not enforcement.uncharged_breaches(embargo).exists()
    with pytest.raises(EnforcementError) as refused:  # each day is charged once
        enforcement.assess_embargo_fine(embargo, D(2025, 3, 12))
    assert refused.value.code == "no_breach"
    charge = enforcement.register_charge_payment(charge, D(2025, 4, 1))
    assert charge.status == ChargeStatus.PAID
    assert charge.paid_brl == Decimal("111.06")  # 3 × R$ 37,02 (UFESP 2025)


def test_an_unpaid_daily_fine_goes_to_divida_ativa_after_its_due_date(world):
    _, embargo = embargo_disobeyed(world, D(2025, 3, 8))
    charge = enforcement.assess_embargo_fine(embargo, D(2025, 3, 12))
    with pytest.raises(EnforcementError) as refused:
        enforcement.send_charge_to_divida_ativa(charge, D(2025, 4, 11))
    assert refused.value.code == "payment_running"
    charge = enforcement.send_charge_to_divida_ativa(charge, D(2025, 4, 12))
    assert charge.status == ChargeStatus.DIVIDA_ATIVA
    with pytest.raises(EnforcementError, match="não cabe registrar pagamento"):
        enforcement.register_charge_payment(charge, D(2025, 4, 13))


def test_a_case_does_not_close_while_daily_fines_are_owed(world):
    record, embargo = embargo_disobeyed(world, D(2025, 3, 8))
    enforcement.register_repair(record, at(2025, 3, 9, 9))
    enforcement.lift_penalty(embargo, D(2025, 3, 10), "Obra regularizada.", D(2025, 3, 10))
    enforcement.register_payment(record, D(2025, 3, 20))
    assert status_of(record) == CaseStatus.RECORDED  # the day of breach is not charged
    charge = enforcement.assess_embargo_fine(embargo, D(2025, 3, 21))
    assert status_of(record) == CaseStatus.RECORDED  # charged, not paid
    enforcement.register_charge_payment(charge, D(2025, 3, 25))
    assert status_of(record) == CaseStatus.CLOSED


def test_annulling_the_record_cancels_its_open_daily_fines(world):
    record, embargo = embargo_disobeyed(world, D(2025, 3, 8))
    charge = enforcement.assess_embargo_fine(embargo, D(2025, 3, 10))
    enforcement.file_appeal(record, D(2025, 3, 11), "Razões.")
    enforcement.decide_appeal(
        record, D(2025, 3, 12), upheld=False, decision="Anulado.", by=world.authority
    )
    charge.refresh_from_db()
    assert charge.status == ChargeStatus.CANCELLED
    assert status_of(record) == CaseStatus.CLOSED


def test_the_case_page_offers_the_charge_steps_and_the_timeline_lists_them(world):
    record, embargo = embargo_disobeyed(world, D(2025, 3, 8), D(2025, 3, 9))
    web = Client()
    web.force_login(world.fiscal)
    page = web.get(f"/fiscalizacao/processos/{record.case_id}/").content.decode()
    assert f"/fiscalizacao/penalidades/{embargo.pk}/multa-diaria/" in page
    response = web.post(
        f"/fiscalizacao/penalidades/{embargo.pk}/multa-diaria/", {"on": "2025-03-10"}
    )
    assert response.status_code == 302
    charge = embargo.charges.get()
    page = web.get(f"/fiscalizacao/processos/{record.case_id}/").content.decode()
    assert "2 dia(s) = 2,00 UFESP" in page or "2 dia(s) = 2 UFESP" in page
    assert f"/fiscalizacao/multas-diarias/{charge.pk}/pagamento/" in page
    assert f"/fiscalizacao/multas-diarias/{charge.pk}/divida-ativa/" in page
    for url in ("pagamento", "divida-ativa"):
        assert web.get(f"/fiscalizacao/multas-diarias/{charge.pk}/{url}/").status_code == 200
    timeline = enforcement.case_timeline(record.case, at(2025, 3, 11))
    labels = [step.label for step in timeline.steps]
    assert "Multa diária do embargo lançada: 2 UFESP" in labels
    assert "Pagamento da multa diária do embargo (2 UFESP) até 09/04/2025." in timeline.next_due
    assert embargo.kind == PenaltyKind.EMBARGO
