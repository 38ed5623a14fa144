"""A transporter issues a CTR through the web form in a real headless Chromium: signs in at
/entrar/, clicks the origin and then the destination (inside the ATT) on the Leaflet map,
fills the rest, submits and sees the issued number. No network beyond the live server (the
base-map tiles are aborted), and no JavaScript errors."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from ctr.models import CTR
from tests.ctr_world import TODAY, build_world
from tests.e2e.conftest import map_ready

# Issues CTRs on the day the clock says: frozen on TODAY (tests/clock.py); the server thread
# shares the clock.
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.usefixtures("transactional_db"),
    pytest.mark.usefixtures("frozen_today"),
]


@pytest.fixture
def page(browser_page):
    """tests/e2e/conftest.py's page: no network beyond the live server, errors recorded."""
    return browser_page


def click_on_map(page, name: str, lon: float, lat: float) -> None:
    """Click the map where (lon, lat) is, as the user would."""
    xy = page.evaluate(f"window['{name}'].latLngToContainerPoint([{lat}, {lon}])")
    page.locator("#mapa .leaflet-container").click(position={"x": xy["x"], "y": xy["y"]})


def as_float(text: str) -> float:
    return float(text.replace(",", "."))


def test_transporter_issues_a_ctr_by_clicking_the_map(page, live_server, shot):
    world = build_world()
    origin = world.origin
    target = world.inside(world.att)

    # Sign in through the form; /painel/ sends a transporter to its CTR list.
    page.goto(f"{live_server.url}/entrar/")
    page.get_by_label("Usuário").fill("alfa")
    page.get_by_label("Senha").fill("senha-teste")
    with page.expect_navigation():
        page.get_by_role("button", name="Entrar").click()
    assert urlsplit(page.url).path == "/transportador/ctrs/"

    with page.expect_navigation():
        page.get_by_role("link", name="Emitir CTR").first.click()
    assert urlsplit(page.url).path == "/transportador/ctrs/novo/"
    map_ready(page)
    assert page.evaluate("typeof L !== 'undefined'")
    name = map_ready(page)
    assert page.evaluate(f"window['{name}'] instanceof L.Map")
    page.wait_for_selector("#mapa .leaflet-overlay-pane svg path")
    # The transporter zooms to where the load goes (the town fills the frame at first).
    page.evaluate(
        f"window['{name}'].fitBounds([[{origin.y}, {origin.x}], [{target.y}, {target.x}]],"
        " {padding: [60, 60], animate: false})"
    )

    # The toggle starts on "origem"; a click sets it, then the toggle moves to "destino".
    assert page.is_checked("input[name=map_target][value=origin]")
    click_on_map(page, name, origin.x, origin.y)
    assert as_float(page.input_value("#id_origin_lon")) == pytest.approx(origin.x, abs=1e-4)
    assert as_float(page.input_value("#id_origin_lat")) == pytest.approx(origin.y, abs=1e-4)
    assert page.is_checked("input[name=map_target][value=destination]")
    click_on_map(page, name, target.x, target.y)
    assert as_float(page.input_value("#id_destination_lon")) == pytest.approx(target.x, abs=1e-4)
    assert as_float(page.input_value("#id_destination_lat")) == pytest.approx(target.y, abs=1e-4)
    # The origin did not move, and both markers are on the map.
    assert as_float(page.input_value("#id_origin_lon")) == pytest.approx(origin.x, abs=1e-4)
    assert page.locator(".leaflet-tooltip.ctr-pin-label").all_inner_texts() == [
        "Origem",
        "Destino",
    ]
    assert "Destino marcada" in page.inner_text("#mapa-status")
    page.evaluate(f"window['{name}'].closePopup()")

    # The rest of the form.
    page.fill("#id_transport_date", TODAY.isoformat())
    page.select_option("#id_vehicle", label="ABC-1D23")
    page.select_option("#id_equipment", index=1)
    page.fill("#id_generator_name", "Maria da Obra")
    page.fill("#id_generator_document", "529.982.247-25")
    page.fill("#id_worksite_address", "Rua das Flores, 10")
    page.fill("#id_worksite_neighbourhood", "Centro")
    page.select_option("#id_waste-0-waste_class", "A")
    page.fill("#id_waste-0-volume_m3", "2,5")
    page.fill("#id_waste-0-description", "entulho de alvenaria")
    # One more waste line through the "Adicionar resíduo" button.
    page.get_by_role("button", name="Adicionar resíduo").click()
    assert page.input_value("#id_waste-TOTAL_FORMS") == "4"
    page.select_option("#id_waste-3-waste_class", "B")
    page.fill("#id_waste-3-volume_m3", "0,5")
    page.evaluate("window.scrollTo(0, 0)")
    shot(page, "ctr-emitir-formulario.png")

    with page.expect_navigation():
        page.get_by_role("button", name="Emitir CTR").click()

    ctr = CTR.objects.get()
    assert ctr.number == f"CTR-3518404-{TODAY.year}-000001"
    assert urlsplit(page.url).path == f"/transportador/ctrs/{ctr.number}/"
    assert page.inner_text("#numero-ctr") == ctr.number
    assert f"{ctr.number} emitido." in page.inner_text(".flash-messages")
    assert ctr.destination_facility == world.att
    assert str(ctr.total_volume_m3) == "3.000"
    shot(page, "ctr-emitido.png")

    assert page.recorder.js_errors() == []
    assert {urlsplit(u).netloc for u in page.recorder.aborted} <= {"tile.openstreetmap.org"}


def test_typed_coordinates_and_broken_rules_shown_beside_the_fields(page, live_server, shot):
    """No clicks: coordinates typed with a decimal comma. 3 m³ to a PEV and a generator who is
    not this transporter's: the page comes back with each finding beside its field, the
    markers where the typed coordinates put them, and nothing issued."""
    world = build_world()
    target = world.inside(world.pev)
    page.goto(f"{live_server.url}/entrar/?next=/transportador/ctrs/novo/")
    page.get_by_label("Usuário").fill("alfa")
    page.get_by_label("Senha").fill("senha-teste")
    with page.expect_navigation():
        page.get_by_role("button", name="Entrar").click()
    assert urlsplit(page.url).path == "/transportador/ctrs/novo/"

    def comma(value: float) -> str:
        return f"{value:.6f}".replace(".", ",")

    page.fill("#id_transport_date", TODAY.isoformat())
    page.select_option("#id_vehicle", label="ABC-1D23")
    page.select_option("#id_equipment", index=1)
    page.fill("#id_generator_name", "Maria da Obra")
    page.fill("#id_generator_document", "52998224725")
    page.fill("#id_worksite_address", "Rua das Flores, 10")
    page.fill("#id_origin_lat", comma(world.origin.y))
    page.fill("#id_origin_lon", comma(world.origin.x))
    page.fill("#id_destination_lat", comma(target.y))
    page.fill("#id_destination_lon", comma(target.x))
    page.select_option("#id_waste-0-waste_class", "A")
    page.fill("#id_waste-0-volume_m3", "3")
    page.select_option("#id_waste-1-waste_class", "SAUDE")
    page.fill("#id_waste-1-volume_m3", "0,2")
    with page.expect_navigation():
        page.get_by_role("button", name="Emitir CTR").click()

    assert "O CTR não foi emitido." in page.inner_text("#erros")
    assert "LARGE_VOLUME_AT_PEV" in page.inner_text("#residuos_error")
    assert "PROHIBITED_WASTE" in page.inner_text("#id_waste-1-waste_class_error")
    map_ready(page)  # the typed points drawn once the map is built
    assert page.locator(".leaflet-tooltip.ctr-pin-label").count() == 2
    shot(page, "ctr-emitir-erros.png")
    assert CTR.objects.count() == 0
    # The only error Chromium reports is the page's own 422 status.
    form_url = f"{live_server.url}/transportador/ctrs/novo/"
    assert page.recorder.js_errors(expected_error_page=form_url) == []
