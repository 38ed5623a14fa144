"""The payment as the treasury records it and the partly upheld appeal, and the fee statement, in
Chromium at a phone's width and on a desktop: the forms take the amount and the guia, the case page
says how the payment compares, no page scrolls sideways and none has a script error."""

from __future__ import annotations

import datetime

import pytest
from django.contrib.auth import get_user_model

from fiscalization import enforcement
from pev_network.models import UfespRate
from tests.ctr_world import build_world
from tests.e2e.conftest import log_in
from tests.enforcement_world import D, record_for

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

WIDTHS = {"telefone": (390, 844), "desktop": (1366, 900)}


def fits(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


@pytest.mark.parametrize("name", WIDTHS)
def test_recording_a_short_payment_and_a_partial_decision(browser_page, live_server, shot, name):
    page = browser_page
    page.set_viewport_size(dict(zip(("width", "height"), WIDTHS[name], strict=True)))
    world = build_world()
    UfespRate.objects.update_or_create(unit="UFESP", year=2025, defaults={"value_brl": "37.02"})
    record = record_for(world)
    log_in(page, live_server, get_user_model().objects.get(pk=world.fiscal.pk))
    page.goto(f"{live_server.url}/fiscalizacao/autos/{record.pk}/pagamento/")
    page.fill("input[name=paid_on]", "2025-03-30")
    page.fill("input[name=amount_brl]", "3.000,00")
    page.fill("input[name=guide]", "DAM 2025/000123")
    assert fits(page)
    shot(page, f"pagamento-{name}.png")
    page.click("main form button[type=submit]")
    page.wait_for_load_state()
    body = page.inner_text("main")
    assert "registrado a menor: faltam R$ 702,00 dos R$ 3.702,00 devidos" in body
    assert "pago a menor, faltam R$ 702,00" in body
    assert fits(page)
    shot(page, f"processo-pago-a-menor-{name}.png")

    other = record_for(world)
    enforcement.file_appeal(other, D(2025, 3, 20), "Razões")
    log_in(page, live_server, get_user_model().objects.get(pk=world.authority.pk))
    page.goto(f"{live_server.url}/fiscalizacao/autos/{other.pk}/decisao/")
    page.fill("input[name=decided_on]", "2025-04-02")
    page.check("input[name=upheld][value=partial]")
    page.fill("input[name=new_total_ufesp]", "60,00")
    page.fill("textarea[name=decision]", "Uma das infrações não se provou.")
    assert fits(page)
    shot(page, f"decisao-parcial-{name}.png")
    page.click("main form button[type=submit]")
    page.wait_for_load_state()
    assert "Provimento parcial: auto mantido com multa de 60,00 UFESP." in page.inner_text("main")

    log_in(page, live_server, get_user_model().objects.get(pk=world.alfa_user.pk))
    page.goto(f"{live_server.url}/taxas/{datetime.date(2025, 12, 1):%Y-%m}/")
    assert "pelo valor da UFESP" in page.inner_text("main")
    assert fits(page)
    shot(page, f"extrato-taxas-{name}.png")
    assert page.recorder.js_errors() == []
