"""/verificar/ at a phone's and a desktop's width (issue 25 point 17): the box says what it
takes, offers the municipality for the last digits, and the last digits lead to the CTR."""

from __future__ import annotations

import pytest

from tests.ctr_world import build_world
from tests.e2e.test_offline_ctr import recent_worksite_ctr
from tests.e2e.test_offline_list import WIDTHS, sized_page

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.usefixtures("transactional_db"),
    pytest.mark.usefixtures("frozen_today"),
]


@WIDTHS
def test_the_last_digits_and_the_municipality_find_the_ctr(chromium, live_server, shot, viewport):
    world = build_world()
    ctr = recent_worksite_ctr(world)
    width = viewport[0]
    context, page, recorder = sized_page(chromium, live_server, viewport)
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
