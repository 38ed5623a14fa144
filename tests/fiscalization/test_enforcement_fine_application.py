"""Who imposes the fine (Lei 3.978/2007 art. 35: "As penalidades … serão
aplicadas pelo Secretário Municipal de Serviços Urbanos"; the fine of art. 25 I is one): the
inspector draws up the record and proposes the fine, the authority applies it, and the payment
deadline and the Dívida Ativa count from that act. The frameworks say, as data, who applies
each penalty."""

from __future__ import annotations

import io

import pytest
from django.urls import reverse
from pypdf import PdfReader

from fiscalization import enforcement
from fiscalization.enforcement import AuthorityRequired, EnforcementError
from fiscalization.models.enforcement import DeliveryMethod, RecordStatus
from fiscalization.models.frameworks import APPLIED_PENALTIES, PenaltyFramework
from tests.builders import municipality
from tests.ctr_world import build_world
from tests.enforcement_world import FERRAZ, D, at, client_for, entries, govern_by, open_case

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    return build_world()


def record_by_inspector(world):
    case = open_case(world, at(2025, 3, 3, 9))
    notice = enforcement.issue_notice(
        case, "Remover o entulho.", DeliveryMethod.HAND, at(2025, 3, 3, 10), by=world.fiscal
    )
    enforcement.register_notice_delivery(notice, at(2025, 3, 3, 10), by=world.fiscal)
    return enforcement.draw_up_record(
        case,
        entries("INF-01"),
        delivery_method=DeliveryMethod.HAND,
        signed_by_offender=True,
        drawn_up_at=at(2025, 3, 7, 10),
        by=world.fiscal,
    )


def test_every_shipped_framework_says_who_applies_each_penalty():
    for framework in PenaltyFramework.objects.all():
        assert set(framework.applied_by) == set(APPLIED_PENALTIES), framework.name
        assert framework.cite("applied_by"), framework.name
        framework.full_clean()
    guaratingueta = PenaltyFramework.objects.get(ibge_code="3518404")
    assert guaratingueta.applier("FINE") == "AUTHORITY"
    assert "art. 35" in guaratingueta.cite("applied_by")


def test_the_record_proposes_the_fine_and_nothing_is_due_until_the_authority_applies_it(world):
    record = record_by_inspector(world)
    assert record.fine_applied_at is None
    assert enforcement.payment_last_day(record) is None
    with pytest.raises(EnforcementError) as refused:
        enforcement.register_payment(record, D(2025, 3, 20), by=world.fiscal)
    assert refused.value.code == "fine_not_applied"
    assert "Secretário Municipal de Serviços Urbanos" in str(refused.value)
    with pytest.raises(EnforcementError) as refused:
        enforcement.send_to_divida_ativa(record, D(2025, 6, 20), by=world.fiscal)
    assert refused.value.code == "fine_not_applied"


def test_only_the_authority_applies_the_fine_and_is_its_author(world):
    record = record_by_inspector(world)
    with pytest.raises(AuthorityRequired):
        enforcement.apply_fine(record, at(2025, 3, 10, 9), by=world.fiscal)
    enforcement.apply_fine(record, at(2025, 3, 10, 9), by=world.authority)
    record.refresh_from_db()
    assert record.fine_applied_at == at(2025, 3, 10, 9)
    assert record.fine_applied_by == world.authority
    assert record.fine_applied_as.startswith("Autoridade: Secretário Municipal")
    with pytest.raises(EnforcementError) as refused:
        enforcement.apply_fine(record, at(2025, 3, 11, 9), by=world.authority)
    assert refused.value.code == "fine_applied"


def test_the_payment_and_the_divida_ativa_count_from_the_application(world):
    record = record_by_inspector(world)
    enforcement.apply_fine(record, at(2025, 3, 20, 9), by=world.authority)
    record.refresh_from_db()
    # Art. 36: 30 calendar days; day 1 is the day after the act that imposes the fine.
    assert enforcement.payment_last_day(record) == D(2025, 4, 19)
    with pytest.raises(EnforcementError) as refused:
        enforcement.send_to_divida_ativa(record, D(2025, 4, 19), by=world.fiscal)
    assert refused.value.code == "payment_running"
    enforcement.send_to_divida_ativa(record, D(2025, 4, 20), by=world.fiscal)
    record.refresh_from_db()
    assert record.status == RecordStatus.DIVIDA_ATIVA


def test_the_fine_cannot_be_applied_before_the_record(world):
    record = record_by_inspector(world)
    with pytest.raises(EnforcementError) as refused:
        enforcement.apply_fine(record, at(2025, 3, 6, 9), by=world.authority)
    assert refused.value.code == "date"


def test_where_the_framework_gives_the_fine_to_the_record_it_is_applied_when_drawn_up(world):
    govern_by(FERRAZ, world.town)
    case = open_case(world, at(2025, 3, 3, 9))
    record = enforcement.draw_up_record(
        case,
        entries("INF-01"),
        delivery_method=DeliveryMethod.HAND,
        signed_by_offender=True,
        drawn_up_at=at(2025, 3, 3, 11),
        by=world.fiscal,
    )
    assert record.fine_applied_at == at(2025, 3, 3, 11)
    assert not enforcement.allowed("apply_fine", record)
    assert enforcement.records_awaiting_authority([world.town.pk]) == 0


def test_the_queue_lists_the_records_awaiting_the_authority_and_applies_in_one_step(world):
    record = record_by_inspector(world)
    assert enforcement.records_awaiting_authority([world.town.pk]) == 1
    queue = reverse("enforcement:records-awaiting")
    page = client_for(world.authority).get(queue)
    assert page.status_code == 200
    assert record.number in page.content.decode()
    done = client_for(world.authority).post(queue, {"record": record.pk})
    assert done.status_code == 302
    record.refresh_from_db()
    assert record.fine_applied_by == world.authority
    assert enforcement.records_awaiting_authority([world.town.pk]) == 0
    assert record.number not in client_for(world.authority).get(queue).content.decode()


def test_the_inspector_sees_the_queue_but_cannot_apply(world):
    record = record_by_inspector(world)
    queue = reverse("enforcement:records-awaiting")
    page = client_for(world.fiscal).get(queue)
    assert page.status_code == 200
    assert record.number in page.content.decode()
    refused = client_for(world.fiscal).post(queue, {"record": record.pk})
    assert refused.status_code == 403
    record.refresh_from_db()
    assert record.fine_applied_at is None


def test_the_queue_post_of_an_unknown_record_is_a_404_not_a_500(world):
    queue = reverse("enforcement:records-awaiting")
    assert client_for(world.authority).post(queue, {"record": "999999"}).status_code == 404
    assert client_for(world.authority).post(queue, {"record": "x"}).status_code == 400


def test_the_case_page_offers_the_application_to_the_authority_only(world):
    record = record_by_inspector(world)
    url = reverse("enforcement:case-detail", args=[record.case_id])
    apply_url = reverse("enforcement:apply-fine", args=[record.pk])
    assert apply_url in client_for(world.authority).get(url).content.decode()
    assert apply_url not in client_for(world.fiscal).get(url).content.decode()


def test_the_count_is_of_the_municipalities_asked_for(world):
    record_by_inspector(world)
    other = municipality("3500105", "Outra", east_m=30_000)
    assert enforcement.records_awaiting_authority([other.pk]) == 0
    assert enforcement.records_awaiting_authority([world.town.pk, other.pk]) == 1


def record_pdf_text(user, record) -> str:
    response = client_for(user).get(reverse("enforcement:record-pdf", args=[record.pk]))
    text = " ".join(page.extract_text() for page in PdfReader(io.BytesIO(response.content)).pages)
    return " ".join(text.split())


def test_the_record_prints_the_fine_as_proposed_then_as_applied_by_the_authority(world):
    record = record_by_inspector(world)
    text = record_pdf_text(world.fiscal, record)
    assert "Multa proposta pelo agente; aguarda a aplicação pela autoridade" in text
    assert "art. 35" in text
    enforcement.apply_fine(record, at(2025, 3, 10, 9), by=world.authority)
    text = record_pdf_text(world.fiscal, record)
    assert "Multa aplicada em 10/03/2025 09:00 por" in text
    assert "Multa proposta pelo agente" not in text
