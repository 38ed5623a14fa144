"""No button the server will refuse: a case page offers only the steps
possible now and lists the others with the reason and the date they open; the table's guard
decides both, so a step listed as waiting is refused by its service, with the same reason.

And the embargo's daily fines under appeal (Lei 3.978/2007 art. 31): not to Dívida
Ativa while an appeal that suspends collection is pending."""

from __future__ import annotations

import datetime
import html
import re

import pytest
from django.urls import reverse
from django.utils import timezone

from fiscalization import enforcement
from fiscalization.enforcement import EnforcementError
from fiscalization.models.enforcement import ChargeStatus, DeliveryMethod
from tests.ctr_world import build_world
from tests.enforcement_world import D, at, client_for, fine_applied, open_case, record_for

pytestmark = pytest.mark.django_db
HOUR = datetime.timedelta(hours=1)


@pytest.fixture
def world():
    return build_world()


def case_page(user, case) -> str:
    response = client_for(user).get(reverse("enforcement:case-detail", args=[case.pk]))
    assert response.status_code == 200
    return re.sub(r"\s+", " ", html.unescape(response.content.decode()))


def waiting_items(page: str) -> list[str]:
    block = re.search(r'<ul class="steps-waiting"[^>]*>(.*?)</ul>', page)
    return re.findall(r"<li>(.*?)</li>", block.group(1)) if block else []


def test_before_the_notice_the_record_is_listed_as_waiting_not_offered(world):
    case = open_case(world, timezone.now() - 2 * HOUR)
    page = case_page(world.fiscal, case)
    assert reverse("enforcement:record-new", args=[case.pk]) not in page
    assert "Lavrar auto de infração: depois da notificação para reparar e das 72 h dela" in (
        waiting_items(page)
    )
    with pytest.raises(EnforcementError) as refused:
        enforcement.check("draw_up_record", case, world.fiscal)
    assert refused.value.code == "notice_required"


def test_during_the_72_hours_the_record_waits_until_they_end(world):
    case = open_case(world, timezone.now() - 2 * HOUR)
    notice = enforcement.issue_notice(
        case, "Remover o entulho.", DeliveryMethod.HAND, timezone.now() - HOUR, by=world.fiscal
    )
    page = case_page(world.fiscal, case)
    assert reverse("enforcement:record-new", args=[case.pk]) not in page
    assert any(
        w.startswith("Lavrar auto de infração: depois de registrada a entrega da notificação")
        for w in waiting_items(page)
    )
    notice = enforcement.register_notice_delivery(notice, timezone.now() - HOUR, by=world.fiscal)
    opens = timezone.localtime(enforcement.notice_due(notice) + datetime.timedelta(minutes=1))
    page = case_page(world.fiscal, case)
    assert reverse("enforcement:record-new", args=[case.pk]) not in page
    assert (
        f"Lavrar auto de infração: depois das 72 h da notificação, a partir de "
        f"{opens:%d/%m %H:%M}" in waiting_items(page)
    )
    with pytest.raises(EnforcementError) as refused:
        enforcement.check("draw_up_record", case, world.fiscal)
    assert refused.value.code == "notice_running"


def test_while_the_payment_runs_divida_ativa_is_listed_with_the_day_it_opens(world):
    record = record_for(world, opened_at=timezone.now() - datetime.timedelta(days=5))
    last = enforcement.payment_last_day(record)
    assert last >= timezone.localdate()
    page = case_page(world.fiscal, record.case)
    assert reverse("enforcement:divida-ativa", args=[record.pk]) not in page
    assert reverse("enforcement:payment", args=[record.pk]) in page
    opens = last + datetime.timedelta(days=1)
    assert f"Enviar à Dívida Ativa: depois do prazo de pagamento, a partir de {opens:%d/%m/%Y}" in (
        waiting_items(page)
    )
    with pytest.raises(EnforcementError) as refused:
        enforcement.check("send_to_divida_ativa", record, world.fiscal)
    assert refused.value.code == "payment_running"


def test_a_fine_awaiting_the_authority_lists_payment_as_waiting_for_it(world):
    record = record_for(world, opened_at=timezone.now() - datetime.timedelta(days=5), applied=False)
    page = case_page(world.fiscal, record.case)
    assert reverse("enforcement:payment", args=[record.pk]) not in page
    assert reverse("enforcement:apply-fine", args=[record.pk]) not in page  # the authority's
    assert any(
        w.startswith("Registrar pagamento: depois da aplicação da multa pela autoridade")
        for w in waiting_items(page)
    )
    page = case_page(world.authority, record.case)
    assert reverse("enforcement:apply-fine", args=[record.pk]) in page
    fine_applied(world, record, timezone.now())
    page = case_page(world.fiscal, record.case)
    assert reverse("enforcement:payment", args=[record.pk]) in page


def test_once_the_deadlines_are_over_divida_ativa_is_offered_and_nothing_waits(world):
    record = record_for(world)  # 2025: every deadline long over
    page = case_page(world.fiscal, record.case)
    assert reverse("enforcement:divida-ativa", args=[record.pk]) in page
    assert not any(w.startswith("Enviar à Dívida Ativa") for w in waiting_items(page))


# --- the embargo's daily fines under a suspensive appeal (art. 31) ---------------------------


def embargo_charge(world):
    """A record by hand on 06/03/2025, an embargo disobeyed on 08/03 and its daily fine
    assessed on 10/03 (due by 09/04/2025)."""
    record = record_for(world)
    embargo = enforcement.apply_embargo(record, D(2025, 3, 7), "Obra", by=world.authority)
    enforcement.register_embargo_breach(embargo, D(2025, 3, 8), by=world.fiscal)
    charge = enforcement.assess_embargo_fine(embargo, D(2025, 3, 10), by=world.fiscal)
    return record, embargo, charge


def test_daily_fines_do_not_go_to_divida_ativa_while_a_suspensive_appeal_is_pending(world):
    record, _, charge = embargo_charge(world)
    assert record.case.framework.appeal_suspensive
    enforcement.file_appeal(record, D(2025, 3, 20), "Não descumpri.", by=world.fiscal)
    with pytest.raises(EnforcementError) as refused:
        enforcement.send_charge_to_divida_ativa(charge, D(2025, 5, 1), by=world.fiscal)
    assert refused.value.code == "appeal_pending"
    charge.refresh_from_db()
    assert charge.status == ChargeStatus.OPEN
    page = case_page(world.fiscal, record.case)
    assert reverse("enforcement:charge-divida-ativa", args=[charge.pk]) not in page
    assert (
        "Enviar a multa diária à Dívida Ativa: depois da decisão do recurso contra o auto"
        in waiting_items(page)
    )
    enforcement.decide_appeal(
        record, D(2025, 5, 10), upheld=True, decision="Mantido.", by=world.authority
    )
    enforcement.send_charge_to_divida_ativa(charge, D(2025, 5, 11), by=world.fiscal)
    charge.refresh_from_db()
    assert charge.status == ChargeStatus.DIVIDA_ATIVA


def test_the_embargo_is_cancelled_with_the_requirements_met_and_their_date(world):
    _, embargo, _ = embargo_charge(world)
    with pytest.raises(EnforcementError) as refused:
        enforcement.lift_penalty(embargo, D(2025, 3, 12), by=world.fiscal)
    assert refused.value.code == "requirements"
    with pytest.raises(EnforcementError) as refused:
        enforcement.lift_penalty(embargo, D(2025, 3, 12), "Obra regularizada.", by=world.fiscal)
    assert refused.value.code == "requirements_met_on"
    with pytest.raises(EnforcementError) as refused:
        enforcement.lift_penalty(
            embargo, D(2025, 3, 12), "Obra regularizada.", D(2025, 3, 13), by=world.fiscal
        )
    assert refused.value.code == "date"
    enforcement.lift_penalty(
        embargo, D(2025, 3, 12), "Entulho removido; alvará apresentado.", D(2025, 3, 11),
        by=world.fiscal,
    )  # fmt: skip
    embargo.refresh_from_db()
    assert embargo.lifted_on == D(2025, 3, 12)
    assert embargo.requirements_met == "Entulho removido; alvará apresentado."
    assert embargo.requirements_met_on == D(2025, 3, 11)
    timeline = enforcement.case_timeline(embargo.record.case, at(2025, 3, 13, 9))
    cancelled = next(s for s in timeline.steps if s.label == "Embargo cancelado")
    assert "Exigências cumpridas em 11/03/2025: Entulho removido" in cancelled.detail
