"""The Núcleo's map and dashboard in a real headless Chromium, logged in as the Núcleo:
layers and charts present, no JavaScript errors; screenshots in the run's
folder (tests/e2e/conftest.py: shot)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from fiscalization.models import DumpingReport
from tests.builders import point
from tests.ctr_world import build_world, ctr_payload
from tests.e2e.conftest import Recorder, log_in, map_ready

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db")]


@pytest.fixture
def world():
    world = build_world()
    client = APIClient()
    client.force_authenticate(world.alfa_user)
    for facility in (world.att, world.landfill, world.att):
        assert (
            client.post(
                "/api/v1/ctrs/", ctr_payload(world, facility=facility), format="json"
            ).status_code
            == 201
        )
    DumpingReport.objects.create(
        municipality=world.town, location=point(*world.origin.coords), category="LOTE_VAGO"
    )
    return world


def test_nucleo_map_shows_every_layer(browser_page, live_server, world, shot):
    page = browser_page
    log_in(page, live_server, world.nucleo)
    response = page.goto(
        f"{live_server.url}/nucleo/mapa/?date_from=2026-01-01&date_to=2026-12-31", wait_until="load"
    )
    assert response.status == 200
    map_ready(page)
    labels = page.locator(".leaflet-control-layers-overlays label").all_inner_texts()
    text = " ".join(labels)
    for layer in ("Fluxos de CTR", "Origens de CTRs em atraso", "Denúncias de descarte",
                  "Áreas de Transbordo e Triagem", "Aterros de RCC"):  # fmt: skip
        assert layer in text, labels
    # Flow lines and the dumping-report cell are drawn as SVG paths in the overlay pane.
    assert page.locator(".leaflet-overlay-pane path").count() >= 5
    shot(page, "nucleo-mapa.png")
    assert page.recorder.js_errors() == []


def test_nucleo_dashboard_shows_charts_and_choropleth(browser_page, live_server, world, shot):
    page = browser_page
    log_in(page, live_server, world.nucleo)
    response = page.goto(
        f"{live_server.url}/nucleo/?date_from=2026-01-01&date_to=2026-12-31", wait_until="load"
    )
    assert response.status == 200
    assert page.locator("figure.chart svg[role=img]").count() >= 2
    map_ready(page, ".choropleth-map")
    assert page.locator(".choropleth-map .leaflet-container").count() == 1
    # the five of before, and those of the flows, the recycling rate and the stock
    assert page.locator("table.data-table").count() == 9
    shot(page, "nucleo-painel.png")
    assert page.recorder.js_errors() == []


def test_transporter_is_refused(browser_page, live_server, world):
    page = browser_page
    log_in(page, live_server, world.alfa_user)
    response = page.goto(f"{live_server.url}/nucleo/")
    assert response.status == 403
    assert "Acesso restrito" in page.content()


# The flow diagram's text is drawn at 12 user units: at either width it must reach the screen
# at 11 px or more (a drawing scaled down to fit would make it unreadable on a phone).
MIN_FONT_PX = 11
FLOW_SHOWN = """() => {
  const shown = [...document.querySelectorAll("svg.flow-diagram")]
    .filter((svg) => svg.getBoundingClientRect().width > 0);
  return shown.map((svg) => {
    const box = svg.getBoundingClientRect();
    return {width: box.width, right: box.right, scale: box.width / svg.viewBox.baseVal.width,
            labels: [...svg.querySelectorAll("tspan")].map((t) => t.textContent)};
  });
}"""


@pytest.fixture
def flows_world(frozen_today):
    from tests.nucleo.flows_world import build_flows

    return build_flows(build_world())


@pytest.mark.parametrize(("width", "height"), [(1366, 900), (390, 844)])
def test_dashboard_flow_chart_fits_phone_and_desktop(
    chromium, live_server, flows_world, shot, width, height
):
    context = chromium.new_context(viewport={"width": width, "height": height}, locale="pt-BR")
    page = context.new_page()
    page.recorder = Recorder(page, live_server.url)
    log_in(page, live_server, flows_world.nucleo)
    response = page.goto(
        f"{live_server.url}/nucleo/?date_from=2026-10-01&date_to=2026-11-30", wait_until="load"
    )
    assert response.status == 200
    [flow] = page.evaluate(FLOW_SHOWN)  # one drawing shown: the one made for this width
    assert flow["right"] <= width and flow["scale"] * 12 >= MIN_FONT_PX, flow
    for label in ("Bacia Centro", "ATT", "Reciclagem", "Aterro", "Em estoque", "Direto ao"):
        assert any(label in text for text in flow["labels"]), (label, flow["labels"])
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    for section in ("#fluxos", "#reciclagem", "#estoque"):
        text = page.locator(section).inner_text()
        for code in ("RECYCLING", "LANDFILL", "destined", "recycled", "landfilled", "stock"):
            assert code not in text, (section, code)
    assert "37,5" in page.locator("#reciclagem table").inner_text()
    full = shot(page, f"nucleo-painel-fluxos-{width}.png")
    for section in ("fluxos", "reciclagem", "estoque"):
        page.locator(f"#{section}").screenshot(path=str(full.with_name(f"{section}-{width}.png")))
    assert page.recorder.js_errors() == []
    context.close()
