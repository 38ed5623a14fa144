"""A generator registers a worksite by drawing its contour on the map, in a real headless
Chromium: on a phone (390×844, by taps: a corner taken back with "Desfazer último canto", the
contour closed with "Fechar contorno") and on a desktop (by clicks, closed by clicking the
first corner). A submission refused comes back with the contour drawn again; the worksite's
page shows it. Every page of the part: no horizontal scrolling and tap targets of 44 px at
both widths (tests/e2e/measure_layout.js), no JavaScript errors, no network but the server."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest

from ctr.models import Worksite
from tests.ctr_world import build_world
from tests.e2e.conftest import Recorder, log_in, map_ready
from tests.generators.worksite_world import at, registered

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db", "frozen_today")]

MEASURE = (Path(__file__).parent / "measure_layout.js").read_text(encoding="utf-8")
PHONE = {"width": 390, "height": 844}
# The contour: a 120 m × 80 m lot south-west of the world's origin, corner by corner.
CORNERS = [(-60, -40), (60, -40), (60, 40), (-60, 40)]


@pytest.fixture
def world():
    return build_world()


@pytest.fixture
def phone(chromium, live_server):
    context = chromium.new_context(
        viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True, locale="pt-BR"
    )
    page = context.new_page()
    page.recorder = Recorder(page, live_server.url)
    yield page
    context.close()


def map_name(page) -> str:
    return map_ready(page)


def zoom_to_the_lot(page) -> None:
    """The form opens on the whole town; the generator scrolls to the map and zooms to its
    lot (the clicks and taps below land inside the window)."""
    page.evaluate("document.getElementById('mapa').scrollIntoView({block: 'center'})")
    lon, lat = at()
    page.evaluate(f"window['{map_name(page)}'].setView([{lat}, {lon}], 17, {{animate: false}})")


def screen_xy(page, east_m: float, north_m: float) -> tuple[float, float]:
    """Where on the page the point `east_m`, `north_m` of the world's origin is drawn."""
    lon, lat = at(east_m, north_m)
    xy = page.evaluate(f"window['{map_name(page)}'].latLngToContainerPoint([{lat}, {lon}])")
    box = page.locator("#mapa .leaflet-container").bounding_box()
    return box["x"] + xy["x"], box["y"] + xy["y"]


def tap(page, east_m: float, north_m: float) -> None:
    page.touchscreen.tap(*screen_xy(page, east_m, north_m))


def click(page, east_m: float, north_m: float) -> None:
    page.mouse.click(*screen_xy(page, east_m, north_m))


def fill_the_rest(page, built_area: str = "350,5") -> None:
    page.fill("#id_address", "Rua do Canteiro, 200")
    page.fill("#id_neighbourhood", "Centro")
    page.select_option("#id_work_kind", "new_building")
    page.fill("#id_built_area_m2", built_area)
    page.fill("#id_permit_number", "ALV-2026-015")
    page.fill("#id_start_date", "2026-09-01")
    page.fill("#id_expected_end", "2027-06-30")


def submit(page) -> None:
    with page.expect_navigation():
        page.evaluate("document.querySelector('#form-obra').requestSubmit()")


def area_corners(page) -> int:
    import json

    value = page.input_value("#id_area")
    return len(json.loads(value)["coordinates"][0]) - 1 if value else 0


def assert_fits(page, where: str) -> None:
    measured = page.evaluate(MEASURE)
    assert measured["scrollWidth"] <= measured["innerWidth"], (where, measured["wide"])
    assert not measured["small"], (where, measured["small"])


def assert_the_lot_was_registered(world) -> Worksite:
    site = Worksite.objects.get()
    assert site.generator == world.gama and site.registered_at is not None
    assert len(site.area.exterior_ring) == len(CORNERS) + 1
    for (east, north), (lon, lat) in zip(CORNERS, site.area.exterior_ring[:-1], strict=True):
        assert (lon, lat) == pytest.approx(at(east, north), abs=2e-5)  # about 2 m
    assert site.area.covers(site.location)
    return site


def test_a_generator_draws_its_worksite_on_a_phone_by_tapping_the_corners(
    phone, live_server, world, shot
):
    page = phone
    log_in(page, live_server, world.generator_user)
    page.goto(f"{live_server.url}/gerador/obras/nova/")
    map_ready(page)
    assert page.evaluate("typeof L !== 'undefined'")
    zoom_to_the_lot(page)
    page.locator("label[for=id_shape_1]").tap()
    assert page.is_visible("#fechar-contorno") and not page.is_visible("#id_location_lat")

    for east, north in CORNERS:
        tap(page, east, north)
    tap(page, 0, 0)  # a corner too many, in the middle of the lot
    assert page.locator("#mapa-status").inner_text() == (
        "Canto 5 marcado. Toque em “Fechar contorno” quando terminar."
    )
    page.locator("#desfazer-vertice").tap()
    page.locator("#fechar-contorno").tap()
    assert page.locator("#mapa-status").inner_text() == "Contorno fechado com 4 cantos."
    assert area_corners(page) == 4
    shot(page, "obra-contorno-celular.png")
    assert_fits(page, "nova obra, celular")

    fill_the_rest(page, built_area="0")  # refused: the contour must come back
    submit(page)
    assert page.locator("#erros").is_visible()
    assert "A área construída deve ser maior que zero" in page.inner_text("#erros")
    assert area_corners(page) == 4
    map_ready(page)
    assert page.locator("#mapa .leaflet-overlay-pane path").count() >= 1
    assert page.is_checked("#id_shape_1")
    shot(page, "obra-recusada-celular.png")
    assert_fits(page, "nova obra recusada, celular")

    page.fill("#id_built_area_m2", "350,5")
    submit(page)
    site = assert_the_lot_was_registered(world)
    assert urlsplit(page.url).path == f"/gerador/obras/{site.pk}/"
    map_ready(page)
    page.wait_for_selector("#mapa .leaflet-overlay-pane path")
    shot(page, "obra-pagina-celular.png")
    assert_fits(page, "página da obra, celular")
    page.goto(f"{live_server.url}/gerador/obras/")
    assert_fits(page, "lista de obras, celular")
    page.goto(f"{live_server.url}/gerador/obras/{site.pk}/editar/")
    assert area_corners(page) == 4
    shot(page, "obra-editar-celular.png")
    assert_fits(page, "alterar obra, celular")
    # The refused submission's own 400 is the one console error expected.
    assert page.recorder.js_errors(f"{live_server.url}/gerador/obras/nova/") == []
    assert all("tile" in url or "openstreetmap" in url for url in page.recorder.aborted)


def test_a_generator_draws_its_worksite_on_a_desktop_closing_on_the_first_corner(
    browser_page, live_server, world, shot
):
    page = browser_page
    log_in(page, live_server, world.generator_user)
    page.goto(f"{live_server.url}/gerador/obras/nova/")
    zoom_to_the_lot(page)
    page.check("#id_shape_1")
    click(page, *CORNERS[0])
    click(page, *CORNERS[1])
    assert page.is_disabled("#fechar-contorno")  # two corners are not a contour
    for corner in CORNERS[2:]:
        click(page, *corner)
    click(page, *CORNERS[0])  # on the first corner: closes
    assert page.locator("#mapa-status").inner_text() == "Contorno fechado com 4 cantos."
    assert area_corners(page) == 4
    fill_the_rest(page)
    shot(page, "obra-contorno-desktop.png")
    assert_fits(page, "nova obra, desktop")
    submit(page)
    assert_the_lot_was_registered(world)
    assert page.locator("h1").inner_text() == "Rua do Canteiro, 200"
    shot(page, "obra-pagina-desktop.png")
    assert_fits(page, "página da obra, desktop")
    assert page.recorder.js_errors() == []


def test_a_point_clicked_on_the_map_fills_the_coordinates(browser_page, live_server, world):
    page = browser_page
    other = registered(world.gama, "Rua Velha, 1", municipality=world.town)
    log_in(page, live_server, world.generator_user)
    page.goto(f"{live_server.url}/gerador/obras/{other.pk}/editar/")
    zoom_to_the_lot(page)
    click(page, 100, 0)
    lon, lat = at(100, 0)
    assert float(page.input_value("#id_location_lon").replace(",", ".")) == pytest.approx(
        lon, abs=2e-5
    )
    assert float(page.input_value("#id_location_lat").replace(",", ".")) == pytest.approx(
        lat, abs=2e-5
    )
    submit(page)
    other.refresh_from_db()
    assert other.location.x == pytest.approx(lon, abs=2e-5) and other.area is None
    assert page.recorder.js_errors() == []
