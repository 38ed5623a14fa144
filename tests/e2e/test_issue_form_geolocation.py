"""A driver at the worksite puts the CTR's origin where the phone is: "Usar minha localização" on
the issue form, in a real headless Chromium whose context grants (or refuses) the geolocation and
sets the device's position. Granted: the origin fields hold the position as a map click would write
them, the marker and the map's centre are there, the status line says the precision, and the CTR
issued has that origin, at a phone's 390×844 and a desktop's 1280×800. Refused: a message in
Portuguese in the page (no alert), and the origin is still marked on the map. Without a connection
(the form reloaded from the service worker) the button still works: the position comes from the
device. A browser without geolocation shows no button. No sideways scrolling, no network beyond the
live server, no JS errors."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from ctr.models import CTR
from tests.ctr_world import build_world
from tests.e2e.conftest import Recorder, log_in, map_ready
from tests.e2e.test_issue_ctr import click_on_map

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db", "frozen_today")]

WIDTHS = {"phone": (390, 844), "desktop": (1280, 800)}
BUTTON = "#usar-localizacao"
MIN_TARGET = 44


def comma(value: float) -> str:
    return f"{value:.6f}".replace(".", ",")


def as_float(text: str) -> float:
    return float(text.replace(",", "."))


def fits(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def open_form(chromium, live_server, world, width, granted, where=None, accuracy=12, scroll=True):
    """The issue form of Alfa's user in a context that grants the geolocation (or not) with
    the device at `where`; dialogs (an alert) are recorded, and must not happen. With
    `scroll`, the map is scrolled to and built."""
    w, h = WIDTHS[width]
    options = {"viewport": {"width": w, "height": h}, "locale": "pt-BR"}
    if where is not None:
        options["geolocation"] = {"longitude": where.x, "latitude": where.y, "accuracy": accuracy}
    context = chromium.new_context(**options)
    if granted:
        context.grant_permissions(["geolocation"])
    page = context.new_page()
    page.recorder = Recorder(page, live_server.url)
    page.dialogs = []
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    log_in(page, live_server, world.alfa_user)
    page.goto(f"{live_server.url}/transportador/ctrs/novo/")
    if scroll:
        map_ready(page)
        page.wait_for_selector("#mapa .leaflet-overlay-pane svg path")
    return page


def fill_the_rest(page, world):
    """Everything but the origin: the fleet, the generator, the destination area, the waste."""
    page.select_option("#id_vehicle", label="ABC-1D23")
    page.select_option("#id_equipment", index=1)
    page.fill("#id_generator_name", "Maria da Obra")
    page.fill("#id_generator_document", "529.982.247-25")
    page.fill("#id_worksite_address", "Rua das Flores, 10")
    page.select_option("#id_destination_facility", str(world.att.pk))
    page.select_option("#id_waste-0-waste_class", "A")
    page.fill("#id_waste-0-volume_m3", "2,5")


def location_refused(page):
    """For test_mobile_first's Visit: the button tapped in a context without the permission,
    the refusal said in the page. The button is offered once the map above it is built (the
    thumb scrolls past it on the way)."""
    map_ready(page)
    page.click(BUTTON)
    page.wait_for_function(
        "() => document.getElementById('localizacao-status').textContent.includes('não permitida')"
    )


@pytest.mark.parametrize("width", list(WIDTHS))
def test_granted_location_is_the_origin_of_the_ctr_issued(chromium, live_server, shot, width):
    world = build_world()
    here = world.origin
    page = open_form(chromium, live_server, world, width, granted=True, where=here)
    try:
        button = page.get_by_role("button", name="Usar minha localização")
        assert button.is_visible()
        size = button.bounding_box()
        assert size["height"] >= MIN_TARGET and size["width"] >= MIN_TARGET, size
        assert page.is_checked("input[name=map_target][value=origin]")
        button.click()
        page.wait_for_function(
            "() => document.getElementById('localizacao-status').textContent.includes('precisão')"
        )
        # As a click on the map writes them: the pt-BR comma, six decimals.
        assert page.input_value("#id_origin_lat") == comma(here.y)
        assert page.input_value("#id_origin_lon") == comma(here.x)
        assert page.inner_text("#localizacao-status") == (
            f"Localização do aparelho: latitude {comma(here.y)}, longitude {comma(here.x)},"
            " precisão de ±\u00a012\u00a0m."
        )
        assert "Origem marcada" in page.inner_text("#mapa-status")
        assert page.locator(".leaflet-tooltip.ctr-pin-label").all_inner_texts() == ["Origem"]
        # After the origin, a click on the map sets the destination (as after a map click).
        assert page.is_checked("input[name=map_target][value=destination]")
        name = map_ready(page)
        page.wait_for_function(
            """([name, lat, lon]) => { const c = window[name].getCenter();
                 return Math.abs(c.lat - lat) < 1e-5 && Math.abs(c.lng - lon) < 1e-5; }""",
            arg=[name, here.y, here.x],
        )
        assert page.evaluate(f"window['{name}'].getZoom()") >= 17
        assert fits(page), "the issue form scrolls sideways"
        shot(page, f"ctr-emitir-localizacao-{width}.png")

        fill_the_rest(page, world)
        with page.expect_navigation():
            page.get_by_role("button", name="Emitir CTR").click()
        ctr = CTR.objects.get()
        assert urlsplit(page.url).path == f"/transportador/ctrs/{ctr.number}/"
        # Six decimals of a degree: within 0.1 m of the device's position.
        assert ctr.origin.x == pytest.approx(here.x, abs=1e-6)
        assert ctr.origin.y == pytest.approx(here.y, abs=1e-6)
        assert page.dialogs == []
        assert page.recorder.js_errors() == []
        assert {urlsplit(u).netloc for u in page.recorder.aborted} <= {"tile.openstreetmap.org"}
    finally:
        page.context.close()


def test_refused_location_is_said_in_the_page_and_the_map_still_works(chromium, live_server, shot):
    world = build_world()
    page = open_form(chromium, live_server, world, "phone", granted=False, where=world.origin)
    try:
        location_refused(page)
        assert page.inner_text("#localizacao-status") == (
            "Localização não permitida neste navegador: marque o ponto no mapa ou digite as "
            "coordenadas."
        )
        assert page.input_value("#id_origin_lat") == ""
        assert page.is_enabled(BUTTON)
        assert fits(page)
        shot(page, "ctr-emitir-localizacao-negada-phone.png")

        # The origin by map, as before.
        name = map_ready(page)
        page.locator("#mapa").scroll_into_view_if_needed()
        page.evaluate(f"window['{name}'].setView([{world.origin.y}, {world.origin.x}], 16)")
        click_on_map(page, name, world.origin.x, world.origin.y)
        assert as_float(page.input_value("#id_origin_lat")) == pytest.approx(
            world.origin.y, abs=1e-4
        )
        fill_the_rest(page, world)
        with page.expect_navigation():
            page.get_by_role("button", name="Emitir CTR").click()
        ctr = CTR.objects.get()
        assert ctr.origin.distance(world.origin) < 1e-4
        assert page.dialogs == []
        assert page.recorder.js_errors() == []
    finally:
        page.context.close()


def test_no_fix_in_time_is_said_in_the_page(chromium, live_server):
    """The device finds no position before the timeout: said in Portuguese, the button again
    usable (the page's getCurrentPosition made to time out, as a GPS indoors does)."""
    world = build_world()
    page = open_form(chromium, live_server, world, "phone", granted=True, where=world.origin)
    try:
        page.evaluate(
            """() => { navigator.geolocation.getCurrentPosition = (ok, fail) =>
                 setTimeout(() => fail({ code: 3, message: "Timeout expired" }), 10); }"""
        )
        page.click(BUTTON)
        page.wait_for_function("() => !document.getElementById('usar-localizacao').disabled")
        assert page.inner_text("#localizacao-status").startswith(
            "A localização demorou demais para chegar: marque o ponto no mapa"
        )
        assert page.input_value("#id_origin_lat") == ""
        assert page.dialogs == []
    finally:
        page.context.close()


def test_without_geolocation_there_is_no_button(chromium, live_server):
    world = build_world()
    context = chromium.new_context(viewport={"width": 390, "height": 844}, locale="pt-BR")
    context.add_init_script("delete Navigator.prototype.geolocation;")
    page = context.new_page()
    recorder = Recorder(page, live_server.url)
    try:
        log_in(page, live_server, world.alfa_user)
        page.goto(f"{live_server.url}/transportador/ctrs/novo/")
        map_ready(page)
        page.wait_for_selector("#mapa .leaflet-overlay-pane svg path")
        assert page.evaluate("'geolocation' in navigator") is False
        assert page.locator(BUTTON).count() == 1
        assert not page.is_visible(BUTTON)
        assert not page.is_visible("#localizacao-status")
        # The map picker itself is there as always.
        assert page.is_visible("#alvo-mapa")
        assert recorder.js_errors() == []
    finally:
        context.close()


def test_the_location_works_offline(chromium, live_server, shot):
    """The form reloaded without a connection (from the service worker): the button is there
    and puts the origin at the device's position; a CTR kept on the phone carries it. Online
    the phone never scrolled to the map (below the fold, not built, Leaflet not fetched): the
    app kept Leaflet all the same, and offline the map is built when scrolled to."""
    world = build_world()
    here = world.origin
    page = open_form(chromium, live_server, world, "phone", granted=True, where=here, scroll=False)
    try:
        page.wait_for_selector("html[data-offline=pronto]", timeout=20_000)
        page.wait_for_function("() => navigator.serviceWorker.controller !== null", timeout=20_000)
        page.context.set_offline(True)
        page.reload()
        assert page.evaluate("navigator.onLine") is False
        assert page.inner_text("h1") == "Emitir CTR"
        map_ready(page)
        page.get_by_role("button", name="Usar minha localização").click()
        page.wait_for_function(
            "() => document.getElementById('localizacao-status').textContent.includes('precisão')"
        )
        assert page.input_value("#id_origin_lat") == comma(here.y)
        assert page.input_value("#id_origin_lon") == comma(here.x)
        assert fits(page)
        shot(page, "ctr-emitir-localizacao-offline-phone.png")

        fill_the_rest(page, world)
        page.get_by_role("button", name="Emitir CTR").click()
        page.locator("#ctr-offline-aviso").wait_for(timeout=10_000)
        assert "guardado no aparelho" in page.inner_text("#ctr-offline-aviso")
        kept = page.evaluate("() => window.CTROfflineQueue.list()")
        assert [r["payload"]["origin"]["coordinates"] for r in kept] == [
            [pytest.approx(here.x, abs=1e-6), pytest.approx(here.y, abs=1e-6)]
        ]
        assert page.dialogs == []
        assert page.recorder.page_errors == []
    finally:
        page.context.close()
