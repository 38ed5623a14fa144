"""Payments as a treasury records them (Lei 3.978/2007 art. 36: "cobrado com
base na UFESP, na data do pagamento ... recolhida em guia própria"): the amount paid and the
guia/DAM, compared with what is due on the payment date; a short payment leaves the fine open
for the rest."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from fiscalization import enforcement
from fiscalization.enforcement.timeline import case_timeline
from fiscalization.models.enforcement import CaseStatus, RecordStatus
from tests.ctr_world import build_world
from tests.enforcement_world import D, at, record_for
from tests.fiscalization.test_enforcement_procedure import pdf_text

pytestmark = pytest.mark.django_db

DUE = Decimal("3702.00")  # 100 UFESP × R$ 37,02 (2025)


@pytest.fixture
def world():
    return build_world()


def web(user) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.get(pk=user.pk))
    return client


def test_a_short_payment_leaves_the_record_open_for_the_rest(world):
    record = record_for(world)  # drawn up 06/03/2025: 100 UFESP
    enforcement.register_repair(record, at(2025, 3, 20, 10))
    record = enforcement.register_payment(
        record, D(2025, 3, 30), Decimal("3000.00"), "DAM 2025/000123"
    )
    assert record.status == RecordStatus.ISSUED
    assert record.case.status != CaseStatus.CLOSED
    assert (record.paid_brl, record.due_brl, record.payment_result) == (
        Decimal("3000.00"),
        DUE,
        "a menor",
    )
    assert "pago a menor, faltam R$ 702,00" in record.payment_text
    # The rest, at the value of its own payment date, under a second guia: settled, exact.
    record = enforcement.register_payment(record, D(2025, 4, 4), Decimal("702.00"), "DAM 000124")
    assert record.status == RecordStatus.PAID and record.payment_result == "exato"
    assert record.due_brl == Decimal("702.00")
    assert record.paid_brl == DUE and record.paid_units == record.total_ufesp
    assert record.payment_guide == "DAM 2025/000123; DAM 000124"
    assert record.case.status == CaseStatus.CLOSED


def test_after_a_short_payment_the_deadline_is_not_met(world):
    record = enforcement.register_payment(
        record_for(world), D(2025, 3, 30), Decimal("3000.00"), "DAM 1"
    )
    timeline = case_timeline(record.case, at(2025, 4, 10, 12))
    (deadline,) = [s for s in timeline.steps if s.label.startswith("Prazo de pagamento da multa")]
    assert deadline.state == "expired"
    assert any(s.label == "Multa paga a menor" for s in timeline.steps)


def test_a_payment_above_the_amount_due_settles_and_says_so(world):
    record = enforcement.register_payment(
        record_for(world), D(2025, 3, 30), Decimal("4000.00"), "DAM 7"
    )
    assert record.status == RecordStatus.PAID and record.payment_result == "a maior"
    assert record.payment_difference_brl == Decimal("298.00")
    assert "pago a maior em R$ 298,00" in record.payment_text


def test_the_amount_due_follows_the_ufesp_of_the_payment_date(world):
    # Drawn up in December 2024, paid in January 2025: 2025's UFESP (art. 36).
    record = record_for(world, opened_at=at(2024, 12, 16, 9))
    record = enforcement.register_payment(record, D(2025, 1, 2), DUE, "DAM 1")
    assert record.due_brl == DUE and record.payment_result == "exato"


def test_the_form_asks_for_amount_and_guide_and_says_how_it_compares(world):
    record = record_for(world)
    page = web(world.fiscal)
    url = f"/fiscalizacao/autos/{record.pk}/pagamento/"
    form = page.get(url).content.decode()
    assert "Valor pago (R$)" in form and "Nº da guia/DAM" in form
    missing = page.post(url, {"paid_on": "2025-03-30"})
    assert missing.status_code == 400
    assert "Este campo é obrigatório." in missing.content.decode()
    bad = page.post(url, {"paid_on": "2025-03-30", "amount_brl": "abc", "guide": "DAM 9"})
    assert bad.status_code == 400
    record.refresh_from_db()
    assert record.paid_on is None
    done = page.post(
        url, {"paid_on": "2025-03-30", "amount_brl": "3.000,00", "guide": "DAM 9"}, follow=True
    )
    text = done.content.decode()
    assert "registrado a menor: faltam R$ 702,00 dos R$ 3.702,00 devidos" in text
    case_page = page.get(f"/fiscalizacao/processos/{record.case_id}/").content.decode()
    assert "pago a menor, faltam R$ 702,00" in case_page
    assert "guia/DAM DAM 9" in case_page
    # The payment step is still offered, for the rest.
    again = page.get(url).content.decode()
    assert "Já pago: R$ 3.000,00 (guia/DAM DAM 9)" in again


# --- provimento parcial -----------------------------------------------------------------------


def appealed(world):
    record = record_for(world)  # 100 UFESP
    enforcement.file_appeal(record, D(2025, 3, 20), "Razões")
    return record


def test_a_partly_upheld_appeal_charges_the_new_amount(world):
    record = appealed(world)
    appeal = enforcement.decide_appeal(
        record,
        D(2025, 4, 2),
        upheld=True,
        decision="Reduzida: uma das infrações não se provou.",
        new_total_ufesp=Decimal("60.00"),
        by=world.authority,
    )
    record.refresh_from_db()
    assert record.status == RecordStatus.UPHELD and record.total_ufesp == Decimal("60.00")
    assert (
        appeal.reduced_from_ufesp == Decimal("100.00") and appeal.outcome == "parcialmente provido"
    )
    paid = enforcement.register_payment(record, D(2025, 4, 10), Decimal("2221.20"), "DAM 60")
    assert paid.due_brl == Decimal("2221.20") and paid.status == RecordStatus.PAID  # 60 × 37,02
    # The record's document prints the decision and the amount charged.
    pdf = web(world.fiscal).get(f"/fiscalizacao/autos/{record.pk}/pdf/")
    text = pdf_text(pdf.content)
    assert "provimento parcial — multa reduzida de 100,00 para 60,00 UFESP" in text


@pytest.mark.parametrize("amount", ["100.00", "0", "150"])
def test_a_partial_upholding_must_lower_the_fine(world, amount):
    record = appealed(world)
    with pytest.raises(enforcement.EnforcementError) as info:
        enforcement.decide_appeal(
            record,
            D(2025, 4, 2),
            True,
            "Reduzida.",
            new_total_ufesp=Decimal(amount),
            by=world.authority,
        )
    assert info.value.code == "new_total"
    record.refresh_from_db()
    assert record.status == RecordStatus.APPEALED and record.total_ufesp == Decimal("100.00")


def test_the_decision_form_offers_partial_upholding_with_the_new_amount(world):
    record = appealed(world)
    page = web(world.authority)
    url = f"/fiscalizacao/autos/{record.pk}/decisao/"
    assert "Provimento parcial" in page.get(url).content.decode()
    form = {"decided_on": "2025-04-02", "upheld": "partial", "decision": "Reduzida."}
    missing = page.post(url, form)
    assert missing.status_code == 400
    assert "Informe a nova multa do provimento parcial." in missing.content.decode()
    done = page.post(url, {**form, "new_total_ufesp": "60,00"}, follow=True)
    assert "Provimento parcial: auto mantido com multa de 60,00 UFESP." in done.content.decode()
    case_page = page.get(f"/fiscalizacao/processos/{record.case_id}/").content.decode()
    assert "provimento parcial, multa reduzida de 100" in case_page
