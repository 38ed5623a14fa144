"""/verificar/ and the CTR page's map, at a phone's and a desktop's width: the box says what it
takes, offers the municipality for the last digits, and the last digits lead to the CTR; the CTR's
page shows its transport on a small map."""

from __future__ import annotations

import pytest

from tests.ctr_world import build_world
from tests.e2e.conftest import log_in, map_ready
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
    # The page's own requests (the offline bundle) finish before the database is flushed: one
    # still running in the live server deadlocked the flush in CI.
    page.wait_for_load_state("networkidle")
    context.close()


@WIDTHS
def test_the_ctr_page_shows_its_transport_on_a_map(chromium, live_server, shot, viewport):
    """Origin, discharge point and the facility's area on a small map."""
    world = build_world()
    ctr = recent_worksite_ctr(world)
    context, page, recorder = sized_page(chromium, live_server, viewport)
    log_in(page, live_server, world.alfa_user)
    page.goto(f"{live_server.url}/transportador/ctrs/{ctr.number}/")
    map_ready(page, "#mapa-ctr")
    page.wait_for_selector("#mapa-ctr .leaflet-overlay-pane svg path")
    name = map_ready(page, "#mapa-ctr")
    shown = page.evaluate(
        f"""() => {{
          const map = window['{name}'];
          const points = [];
          map.eachLayer((l) => {{ if (l instanceof L.CircleMarker) points.push(l.getLatLng()); }});
          return points.map((p) => map.getBounds().contains(p));
        }}"""
    )
    assert shown == [True, True]  # origin and discharge point, both in view
    assert "km em linha reta" in page.inner_text("#secao-mapa")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    page.locator("#secao-mapa").scroll_into_view_if_needed()
    shot(page, f"ctr-detalhe-mapa-{viewport[0]}.png")
    assert recorder.js_errors() == []
    # The page's own requests (the offline bundle) finish before the database is flushed: one
    # still running in the live server deadlocked the flush in CI.
    page.wait_for_load_state("networkidle")
    context.close()
