"""The Núcleo map in a real headless Chromium, usable on a phone: the filter keeps the layers
the user switched off and shows the period applied; a tap on an overdue circle opens that
circle's popup (not the popup of a flow line under it); on a phone the layer list starts
collapsed and the header's links sit behind a "Menu" button."""

from __future__ import annotations

import datetime

import pytest
from django.utils import timezone

from tests.ctr_world import build_world, issue_hours_ago
from tests.e2e.conftest import Recorder, log_in, map_ready

# The world issues CTRs against registrations of fixed dates: the clock on TODAY.
pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db", "frozen_today")]


@pytest.fixture
def world():
    world = build_world()
    issue_hours_ago(world, 100)  # past the alert: overdue
    return world


def open_map(chromium, live_server, user, width, height):
    context = chromium.new_context(viewport={"width": width, "height": height}, locale="pt-BR")
    page = context.new_page()
    page.recorder = Recorder(page, live_server.url)
    log_in(page, live_server, user)
    page.goto(f"{live_server.url}/nucleo/mapa/", wait_until="load")
    map_ready(page)
    return context, page


def overdue_circle_point(page) -> dict:
    name = map_ready(page)
    return page.evaluate(
        """(name) => { const m = window[name]; let out = null;
            m.eachLayer((l) => { const p = l.feature && l.feature.properties;
              if (!out && p && String(p.label || "").includes("em atraso")) {
                const pt = m.latLngToContainerPoint(l.getLatLng()); out = {x: pt.x, y: pt.y}; } });
            return out; }""",
        name,
    )


def test_filter_keeps_layers_and_circles_open_their_own_popup(chromium, live_server, world):
    context, page = open_map(chromium, live_server, world.nucleo, 1366, 900)
    # The period applied is in the date fields (the default: the last 90 days).
    today = timezone.localdate()
    assert page.input_value("#id_date_to") == today.isoformat()
    assert page.input_value("#id_date_from") == (today - datetime.timedelta(days=90)).isoformat()

    # A tap in the overdue circle, on the flow line that starts there: the circle's popup.
    page.locator("#mapa").scroll_into_view_if_needed()
    xy = overdue_circle_point(page)
    assert xy, "the overdue CTR's origin is on the map"
    page.locator("#mapa .leaflet-container").click(position=xy)
    popup = page.locator(".leaflet-popup-content")
    popup.wait_for()
    assert "1 CTR(s) em atraso" in popup.inner_text()
    assert "Para " not in popup.inner_text()

    # The user switches the flows off and applies the filter again: they stay off.
    flows = page.get_by_label("Fluxos de CTR (origem → destino)")
    flows.uncheck()
    with page.expect_navigation():
        page.get_by_role("button", name="Aplicar").click()
    assert "date_from=" in page.url
    # The layer list is drawn a few tasks before the map is ready and the page's script
    # switches the remembered layers off: read the boxes once it is.
    map_ready(page)
    assert not page.get_by_label("Fluxos de CTR (origem → destino)").is_checked()
    assert page.get_by_label("Origens de CTRs em atraso").is_checked()
    # And back on, after the next filter too.
    page.get_by_label("Fluxos de CTR (origem → destino)").check()
    with page.expect_navigation():
        page.get_by_role("button", name="Aplicar").click()
    map_ready(page)
    assert page.get_by_label("Fluxos de CTR (origem → destino)").is_checked()
    assert page.recorder.js_errors() == []
    context.close()


def test_phone_collapses_the_layer_list_and_the_menu(chromium, live_server, world):
    context, page = open_map(chromium, live_server, world.nucleo, 390, 844)
    assert page.locator(".leaflet-control-layers").count() == 1
    assert page.locator(".leaflet-control-layers-expanded").count() == 0
    # The header: a "Menu" button of at least 44 px, the links hidden until it is pressed.
    menu = page.get_by_role("button", name="Menu")
    box = menu.bounding_box()
    assert box["width"] >= 44 and box["height"] >= 44
    assert menu.get_attribute("aria-expanded") == "false"
    assert not page.get_by_role("link", name="Fiscalização").is_visible()
    menu.click()
    assert menu.get_attribute("aria-expanded") == "true"
    assert page.get_by_role("link", name="Fiscalização").is_visible()
    assert page.get_by_role("link", name="Onde descartar").is_visible()
    page.keyboard.press("Escape")
    assert not page.get_by_role("link", name="Fiscalização").is_visible()
    assert page.recorder.js_errors() == []
    context.close()


LAYER_DESTINATIONS = "Destinação final (bacia → área → destino)"


@pytest.fixture
def flows_world():
    from tests.nucleo.flows_world import build_flows

    return build_flows(build_world())


def destination_lines(page) -> list[str]:
    """The popups of the final destinations' lines drawn on the map now."""
    name = map_ready(page)
    return page.evaluate(
        """(name) => { const m = window[name]; const out = [];
            m.eachLayer((l) => { const p = l.feature && l.feature.properties;
              if (p && p.popup_html && l.getLatLngs && l.feature.geometry.type === "LineString"
                  && p.popup_html.includes("Destinação")) { out.push(p.popup_html); } });
            return out; }""",
        name,
    )


@pytest.mark.parametrize(("width", "height"), [(1366, 900), (390, 844)])
def test_final_destinations_layer_starts_off_and_stays_on(
    chromium, live_server, flows_world, shot, width, height
):
    context, page = open_map(chromium, live_server, flows_world.nucleo, width, height)
    with page.expect_navigation():
        page.goto(f"{live_server.url}/nucleo/mapa/?date_from=2026-10-01&date_to=2026-11-30")
    assert destination_lines(page) == []  # off until asked for
    page.locator(".leaflet-control-layers").hover()  # opens the phone's collapsed list
    page.get_by_label(LAYER_DESTINATIONS).check()
    lines = destination_lines(page)
    # Bacia → ATT → recycling, → landfill, recycled at the ATT; bacia → landfill directly.
    assert len(lines) == 4
    assert any("Bacia Centro → ATT → Reciclagem" in line and "reciclado" in line for line in lines)
    assert any("Bacia Centro → Aterro" in line and "aterro de RCC" in line for line in lines)
    page.locator("#mapa").scroll_into_view_if_needed()
    shot(page, f"nucleo-mapa-destinos-{width}.png")
    with page.expect_navigation():
        page.get_by_role("button", name="Aplicar").click()
    assert len(destination_lines(page)) == 4  # still on after the filter
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.recorder.js_errors() == []
    context.close()
