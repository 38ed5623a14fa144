"""The Content Security Policy in a real headless Chromium: the pages with maps and forms load
with the policy header, Chromium reports no violation (console messages and
`securitypolicyviolation` events), Leaflet is there and a click on the map does what it should.
Also the API docs (Swagger UI) and an admin change form with its django-leaflet widget."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache

from tests.ctr_world import build_world
from tests.e2e.conftest import log_in, map_ready

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db")]

# Runs before any script of the page: keeps every violation the browser reports.
RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__cspViolations.push(e.violatedDirective + " " + (e.blockedURI || "inline"));
});
"""


@pytest.fixture
def world():
    cache.clear()
    return build_world()


@pytest.fixture
def page(browser_page):
    page = browser_page
    page.csp_messages = []
    page.on(
        "console",
        lambda msg: (
            page.csp_messages.append(msg.text) if "Content Security Policy" in msg.text else None
        ),
    )
    page.add_init_script(RECORD_VIOLATIONS)
    return page


def open_page(page, url: str) -> dict:
    response = page.goto(url, wait_until="load")
    assert response.status == 200, url
    header = response.header_value("content-security-policy")
    assert header and "'nonce-" in header and "frame-ancestors 'none'" in header
    return response


def assert_no_violations(page) -> None:
    assert page.csp_messages == []
    assert page.evaluate("window.__cspViolations") == []
    assert page.recorder.js_errors() == []


def click_map(page, lon: float, lat: float) -> None:
    name = map_ready(page)
    assert page.evaluate(f"typeof L !== 'undefined' && window['{name}'] instanceof L.Map")
    xy = page.evaluate(f"window['{name}'].latLngToContainerPoint([{lat}, {lon}])")
    page.locator("#mapa .leaflet-container").click(position={"x": xy["x"], "y": xy["y"]})


def as_float(text: str) -> float:
    # The click lands on a pixel: at the zoom the pages open on, ~1e-4° wide.
    return float(text.replace(",", "."))


def test_onde_descartar_under_the_policy(page, live_server, world):
    open_page(page, f"{live_server.url}/onde-descartar/")
    map_ready(page)
    page.wait_for_selector("#mapa .leaflet-overlay-pane svg path")
    lon, lat = world.origin.coords
    click_map(page, lon, lat)
    assert as_float(page.input_value("#id_longitude")) == pytest.approx(lon, abs=1e-3)
    assert as_float(page.input_value("#id_latitude")) == pytest.approx(lat, abs=1e-3)
    assert_no_violations(page)


def test_denunciar_under_the_policy(page, live_server, world):
    open_page(page, f"{live_server.url}/denunciar/")
    lon, lat = world.origin.coords
    click_map(page, lon, lat)
    assert as_float(page.input_value("#id_longitude")) == pytest.approx(lon, abs=1e-3)
    # The page asks the server for open reports near the point (connect-src 'self').
    page.wait_for_load_state("networkidle")
    assert_no_violations(page)


def test_nucleo_map_under_the_policy(page, live_server, world):
    log_in(page, live_server, world.nucleo)
    open_page(page, f"{live_server.url}/nucleo/mapa/")
    map_ready(page)
    assert page.evaluate("typeof L") == "object"
    page.locator(".leaflet-container").first.click()
    page.locator(".leaflet-control-zoom-in").first.click()
    assert_no_violations(page)


def test_ctr_form_under_the_policy(page, live_server, world):
    log_in(page, live_server, world.alfa_user)
    open_page(page, f"{live_server.url}/transportador/ctrs/novo/")
    map_ready(page)
    page.wait_for_selector("#mapa .leaflet-overlay-pane svg path")
    lon, lat = world.origin.coords
    click_map(page, lon, lat)
    assert as_float(page.input_value("#id_origin_lon")) == pytest.approx(lon, abs=1e-3)
    # The "add a waste line" button (inline template cloned by ctr-form.js).
    page.get_by_role("button", name="Adicionar resíduo").click()
    assert_no_violations(page)


def test_api_docs_under_the_policy(page, live_server):
    open_page(page, f"{live_server.url}/api/v1/docs/")
    page.wait_for_selector(".swagger-ui .opblock", timeout=20_000)
    assert_no_violations(page)


def test_admin_map_widget_under_the_policy(page, live_server, world):
    admin = get_user_model().objects.create_superuser("chefe", "chefe@example.org", "x")
    log_in(page, live_server, admin)
    open_page(page, f"{live_server.url}/admin/pev_network/receivingfacility/{world.att.pk}/change/")
    page.wait_for_selector(".leaflet-container")
    assert page.evaluate("typeof L") == "object"
    assert_no_violations(page)
