"""The edital when individual notice is impracticable (Lei 3.978/2007 art. 28 §2: "As notificações
individuais, quando negativas ou impraticáveis, serão supridas por editais"): the inspector records
that the offender or his address is unknown and goes to the edital without a failed attempt; the
documents quote the count as the law writes it ("a partir do primeiro dia útil da publicação")."""

from __future__ import annotations

import io

import pytest
from django.urls import reverse
from pypdf import PdfReader

from fiscalization import enforcement
from fiscalization.enforcement import EnforcementError
from fiscalization.models.enforcement import DeliveryMethod, DeliveryOutcome
from tests.ctr_world import build_world
from tests.enforcement_world import (
    HOUR,
    D,
    at,
    client_for,
    entries,
    notified_and_expired,
    open_case,
)

pytestmark = pytest.mark.django_db
LAW = "a partir do primeiro dia útil da publicação"


@pytest.fixture
def world():
    return build_world()


def notice_by_mail(world):
    case = open_case(world, at(2025, 3, 3, 9))
    return enforcement.issue_notice(
        case, "Remover o entulho do lote.", DeliveryMethod.MAIL, at(2025, 3, 3, 10)
    )


def pdf_text(user, url: str) -> str:
    response = client_for(user).get(url)
    text = " ".join(page.extract_text() for page in PdfReader(io.BytesIO(response.content)).pages)
    return " ".join(text.split())


def test_an_unknown_address_goes_to_the_edital_without_an_attempt(world):
    notice = notice_by_mail(world)
    enforcement.register_notice_failure(
        notice,
        DeliveryOutcome.NO_ADDRESS,
        at(2025, 3, 3, 11),
        "Lote sem número; o proprietário não consta do cadastro imobiliário.",
        by=world.fiscal,
    )
    # Friday 14/03/2025: the count starts on Monday 17/03; the 72 hours end with Wednesday.
    notice = enforcement.publish_notice_edital(notice, D(2025, 3, 14), by=world.fiscal)
    assert enforcement.notice_due(notice) == at(2025, 3, 20, 0, 0)
    text = pdf_text(world.fiscal, reverse("enforcement:notice-pdf", args=[notice.pk]))
    assert "Impraticável: endereço do infrator desconhecido" in text
    assert LAW in text


def test_an_unknown_offender_by_hand_is_impracticable_too_and_needs_its_reason(world):
    case = open_case(world, at(2025, 3, 3, 9))
    notice = enforcement.issue_notice(case, "Remover.", DeliveryMethod.HAND, at(2025, 3, 3, 10))
    with pytest.raises(EnforcementError) as refused:
        enforcement.register_notice_failure(
            notice, DeliveryOutcome.NO_OFFENDER, at(2025, 3, 3, 11), " ", by=world.fiscal
        )
    assert "impraticável" in refused.value.message
    enforcement.register_notice_failure(
        notice,
        DeliveryOutcome.NO_OFFENDER,
        at(2025, 3, 3, 11),
        "Entulho sem identificação; ninguém no local.",
        by=world.fiscal,
    )
    assert enforcement.allowed("publish_notice_edital", notice)


def test_the_failure_page_offers_impracticable_and_quotes_the_law(world):
    notice = notice_by_mail(world)
    page = client_for(world.fiscal).get(reverse("enforcement:notice-failure", args=[notice.pk]))
    text = page.content.decode()
    assert page.status_code == 200
    assert "Impraticável: endereço do infrator desconhecido" in text
    assert "Impraticável: infrator não identificado" in text
    assert "negativas ou" in text and "impraticáveis" in text


def test_the_record_quotes_the_edital_count_as_the_law_writes_it(world):
    case = open_case(world, at(2025, 3, 3, 9))
    record = enforcement.draw_up_record(
        case,
        entries("INF-01"),
        delivery_method=DeliveryMethod.MAIL,
        signed_by_offender=False,
        no_signature_reason="Infrator ausente.",
        drawn_up_at=notified_and_expired(case) + HOUR,
    )
    text = pdf_text(world.fiscal, reverse("enforcement:record-pdf", args=[record.pk]))
    assert LAW in text
    timeline_text = " ".join(
        s.detail
        for s in enforcement.case_timeline(_published(world, record), at(2025, 3, 20, 9)).steps
    )
    assert LAW in timeline_text


def _published(world, record):
    enforcement.register_record_failure(
        record, DeliveryOutcome.NO_ADDRESS, at(2025, 3, 7, 9), "Endereço desconhecido.",
        by=world.fiscal,
    )  # fmt: skip
    return enforcement.publish_record_edital(record, D(2025, 3, 12), by=world.fiscal).case
