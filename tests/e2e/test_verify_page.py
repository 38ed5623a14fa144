"""/verificar/ at a phone's and a desktop's width (issue 25 point 17): the box says what it
takes, offers the municipality for the last digits, and the last digits lead to the CTR."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest
from django.utils import timezone

from ctr import services
from ctr.rules import WasteLine
from tests.ctr_world import build_world
from tests.e2e.conftest import Recorder

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.usefixtures("transactional_db"),
    pytest.mark.usefixtures("frozen_today"),
]


@pytest.mark.parametrize("viewport", [(390, 844), (1366, 900)], ids=["390", "1366"])
def test_the_last_digits_and_the_municipality_find_the_ctr(chromium, live_server, shot, viewport):
    world = build_world()
    ctr = services.issue(
        world.alfa,
        world.alfa_user,
        services.IssueRequest(
            transport_date=timezone.localdate(),
            vehicle_plate="ABC1D23",
            equipment_code="C-01",
            origin=world.origin,
            destination=world.inside(world.att),
            waste=[WasteLine("A", Decimal("3"), "entulho")],
            generator=services.GeneratorData("Maria da Obra", "52998224725"),
            worksite=services.WorksiteData("Rua das Flores, 10", world.origin, "Centro"),
        ),
        at=timezone.now() - datetime.timedelta(hours=1),
    )
    width, height = viewport
    context = chromium.new_context(viewport={"width": width, "height": height}, locale="pt-BR")
    page = context.new_page()
    recorder = Recorder(page, live_server.url)
    page.goto(f"{live_server.url}/verificar/")
    assert "últimos dígitos" in page.inner_text("#numero-ajuda")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    shot(page, f"verificar-{width}.png")
    page.fill("#numero", str(ctr.sequence))
    page.select_option("#municipio", world.town.ibge_code)
    with page.expect_navigation():
        page.get_by_role("button", name="Verificar").click()
    assert page.url == f"{live_server.url}/verificar/{ctr.number}/"
    assert recorder.js_errors() == []
    context.close()
