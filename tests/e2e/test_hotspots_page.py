"""The hotspots map, a report's suspects and the roadside check in a real headless Chromium:
the map and its hull layer, no JavaScript errors, and the roadside page at phone size.
Screenshots go to the run's folder (tests/e2e/conftest.py: shot)."""

from __future__ import annotations

import datetime

import pytest
from django.utils import timezone

from ctr.models import LicenceStatus
from fiscalization.models import DumpingReport, ReportStatus
from tests.builders import offset, point
from tests.ctr_world import build_world, issue_hours_ago
from tests.e2e.conftest import Recorder, log_in, map_ready

# Issues CTRs on the day the clock says: frozen on TODAY (tests/clock.py); the server thread
# shares the clock.
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.usefixtures("transactional_db"),
    pytest.mark.usefixtures("frozen_today"),
]
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def world():
    world = build_world()
    now = timezone.now()
    base = world.origin.coords
    # Two hotspots: one cleaned and reported again, one not; and a lone report.
    for i, (east, north) in enumerate([(0, 0), (15, 5), (5, 20), (25, 25), (-10, 10)]):
        DumpingReport.objects.create(
            municipality=world.town,
            location=point(*offset(*base, east + 400, north + 300)),
            category="LOTE_VAGO",
            status=ReportStatus.CLEANED if i == 0 else ReportStatus.NEW,
            created_at=now - datetime.timedelta(days=30 - i * 5),
            cleaned_at=now - datetime.timedelta(days=28) if i == 0 else None,
        )
    for east, north in [(0, 0), (20, 0), (0, 20)]:
        DumpingReport.objects.create(
            municipality=world.town,
            location=point(*offset(*base, east + 900, north - 400)),
            category="VIA_PUBLICA",
            created_at=now - datetime.timedelta(days=1),
        )
    DumpingReport.objects.create(
        municipality=world.town, location=point(*offset(*base, -900, 900)), category="ENCOSTA"
    )
    # Issued 100 h ago and never received: overdue at the reports of yesterday. The other one
    # was issued after them.
    issue_hours_ago(world, 100)
    issue_hours_ago(world, 3)
    return world


def test_hotspots_map_shows_the_hulls(browser_page, live_server, world, shot):
    page = browser_page
    log_in(page, live_server, world.fiscal)
    response = page.goto(f"{live_server.url}/fiscalizacao/pontos-criticos/", wait_until="load")
    assert response.status == 200
    map_ready(page, ".hotspot-map")
    assert page.locator(".leaflet-container").count() == 1
    labels = " ".join(page.locator(".leaflet-control-layers-overlays label").all_inner_texts())
    assert "Pontos críticos de descarte" in labels
    # Two hulls (SVG paths) and their two centre circles.
    assert page.locator(".leaflet-overlay-pane path").count() >= 4
    assert "2 ponto(s) crítico(s)" in page.locator("#hotspot-summary").inner_text()
    rows = page.locator(".hotspot-table tbody tr")
    assert rows.count() == 2
    assert "recurring" in (rows.first.get_attribute("class") or "")
    shot(page, "pontos-criticos.png")
    # A click on a centre circle opens its popup, with the link to the suspects.
    page.locator(".leaflet-overlay-pane path.leaflet-interactive").last.click(force=True)
    popup = page.locator(".leaflet-popup-content")
    popup.wait_for()
    assert "Ponto crítico" in popup.inner_text()
    assert popup.locator("a", has_text="Ver CTRs suspeitos").count() == 1
    # The parameters as a form: a bad one is said in Portuguese, with no map.
    bad = f"{live_server.url}/fiscalizacao/pontos-criticos/?eps_m=0"
    assert page.goto(bad, wait_until="load").status == 400
    assert "maior ou igual a 1" in page.locator("main").inner_text()
    assert page.recorder.js_errors(expected_error_page=bad) == []


def test_suspects_page(browser_page, live_server, world, shot):
    page = browser_page
    log_in(page, live_server, world.fiscal)
    report = DumpingReport.objects.filter(category="VIA_PUBLICA").first()
    response = page.goto(
        f"{live_server.url}/fiscalizacao/denuncias/{report.pk}/suspeitos/?hotspot=1",
        wait_until="load",
    )
    assert response.status == 200
    map_ready(page, ".suspects-map")
    assert page.locator(".suspects-map .leaflet-container").count() == 1
    assert page.locator(".suspect-group").count() == 1
    assert "Em atraso" in page.locator(".suspect-group").inner_text()
    shot(page, "suspeitos.png")
    assert page.recorder.js_errors() == []


def open_phone(chromium, live_server, user):
    context = chromium.new_context(
        viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True, locale="pt-BR"
    )
    page = context.new_page()
    page.recorder = Recorder(page, live_server.url)
    log_in(page, live_server, user)
    return context, page


def no_horizontal_scroll(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_roadside_page_on_a_phone(chromium, live_server, world, shot):
    context, page = open_phone(chromium, live_server, world.fiscal)
    try:
        page.goto(f"{live_server.url}/fiscalizacao/veiculo/", wait_until="load")
        plate = page.get_by_label("Placa do veículo")
        assert plate.is_visible()
        assert float(plate.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")) >= 28
        plate.fill("abc-1d23")
        with page.expect_navigation():
            page.get_by_role("button", name="Consultar").click()
        verdict = page.locator("#verdict")
        assert verdict.inner_text() == "REGULAR"
        assert float(verdict.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")) >= 28
        assert page.locator(".open-ctr").count() == 2
        assert page.locator(".open-ctr-overdue").count() == 1
        assert no_horizontal_scroll(page)
        shot(page, "veiculo-celular-regular.png")

        world.alfa.licences.update(
            status=LicenceStatus.SUSPENDED,
            status_since=timezone.localdate(),
            suspended_until=timezone.localdate() + datetime.timedelta(days=10),
        )
        page.goto(f"{live_server.url}/fiscalizacao/veiculo/?plate=ABC1D23", wait_until="load")
        assert page.locator("#verdict").inner_text().startswith("SUSPENSO até ")
        assert no_horizontal_scroll(page)
        shot(page, "veiculo-celular-suspenso.png")

        bad = f"{live_server.url}/fiscalizacao/veiculo/?plate=12"
        assert page.goto(bad, wait_until="load").status == 400
        assert "Placa inválida" in page.locator(".roadside-error").inner_text()
        assert no_horizontal_scroll(page)
        shot(page, "veiculo-celular-placa-invalida.png")
        assert page.recorder.js_errors(expected_error_page=bad) == []
    finally:
        context.close()
