"""/denunciar/ in a real headless Chromium: a citizen clicks the map, fills the form, attaches a
photo and sees the protocol; near an open report, the page first asks "É uma destas?" without
losing the chosen photo. Then an inspector sees the report on /fiscalizacao/ with its photo.
No network beyond the live server (the base-map tiles are aborted), no JavaScript errors."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from django.core.cache import cache

from fiscalization.models import DumpingReport
from tests import dumping_fixtures as fx
from tests.ctr_world import build_world
from tests.e2e.conftest import log_in, map_ready

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db")]

PROTOCOL = re.compile(r"/denuncia/(\d{4}-[A-Z0-9]{4}-[A-Z0-9]{4})/$")


@pytest.fixture(autouse=True)
def media_and_limits(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    # The cache table is not flushed between transactional tests: start each one clean.
    cache.clear()
    yield
    cache.clear()


def click_on_map(page, lon: float, lat: float) -> None:
    name = map_ready(page)
    xy = page.evaluate(f"window['{name}'].latLngToContainerPoint([{lat}, {lon}])")
    page.locator("#mapa .leaflet-container").click(position={"x": xy["x"], "y": xy["y"]})


def as_float(text: str) -> float:
    return float(text.replace(",", "."))


def photo_file(name: str = "calcada.jpg") -> dict:
    return {"name": name, "mimeType": "image/jpeg", "buffer": fx.jpeg_with_gps((640, 480))}


def fill_report(page) -> None:
    page.get_by_label("Onde está o descarte").select_option("VIA_PUBLICA")
    page.get_by_label("Descrição (opcional)").fill("Restos de reforma e um sofá na calçada.")
    page.get_by_label("Volume estimado em m³ (opcional)").fill("1,5")
    page.set_input_files("#id_photos", [photo_file()])


def test_citizen_clicks_the_map_and_gets_a_protocol(browser_page, live_server, shot):
    page = browser_page
    build_world()
    target = fx.at(east_m=-800, north_m=-600)

    response = page.goto(f"{live_server.url}/denunciar/", wait_until="load")
    assert response.status == 200
    map_ready(page)
    assert page.evaluate("typeof L !== 'undefined'")
    page.wait_for_selector("#mapa .leaflet-overlay-pane svg path")  # the municipal outline

    click_on_map(page, target.x, target.y)
    assert as_float(page.input_value("#id_longitude")) == pytest.approx(target.x, abs=2e-4)
    assert as_float(page.input_value("#id_latitude")) == pytest.approx(target.y, abs=2e-4)
    assert "Local marcado" in page.inner_text("#geo-status")
    fill_report(page)
    page.get_by_label("Seu nome (opcional)").fill("Ana")
    shot(page, "denunciar-formulario.png")

    with page.expect_navigation():
        page.get_by_role("button", name="Enviar denúncia").click()

    match = PROTOCOL.search(urlsplit(page.url).path)
    assert match, page.url
    protocol = match.group(1)
    assert protocol in page.inner_text("h1")
    assert f"Denúncia registrada com o protocolo {protocol}" in page.inner_text("main")
    assert "Nova" in page.inner_text(".intake-status-line")
    shot(page, "denunciar-protocolo.png")

    report = DumpingReport.objects.get(protocol=protocol)
    assert report.category == "VIA_PUBLICA" and report.contact_name == "Ana"
    assert report.photos.count() == 1
    assert report.photos.get().exif_location is not None
    assert page.recorder.js_errors() == []
    assert {urlsplit(u).netloc for u in page.recorder.aborted} <= {"tile.openstreetmap.org"}


def test_near_an_open_report_the_page_asks_first_and_keeps_the_photo(
    browser_page, live_server, shot
):
    page = browser_page
    world = build_world()
    target = fx.at(east_m=-800, north_m=-600)
    existing = DumpingReport.objects.create(
        municipality=world.town,
        location=fx.geodesic_offset(target.x, target.y, 45, 150),
        category="LOTE_VAGO",
        contact="vizinho@example.org",
    )

    page.goto(f"{live_server.url}/denunciar/", wait_until="load")
    click_on_map(page, target.x, target.y)
    fill_report(page)
    page.get_by_role("button", name="Enviar denúncia").click()

    nearby = page.locator("#proximas")
    nearby.wait_for(state="visible")
    text = nearby.inner_text()
    assert "É uma destas?" in text
    assert existing.protocol in text and "Lote vago" in text
    assert "vizinho@example.org" not in page.content()
    assert DumpingReport.objects.count() == 1  # nothing sent yet
    assert page.evaluate("document.getElementById('id_photos').files.length") == 1
    shot(page, "denunciar-proximas.png")

    with page.expect_navigation():
        page.get_by_role("button", name="É outra, enviar mesmo assim").click()
    assert PROTOCOL.search(urlsplit(page.url).path)
    assert DumpingReport.objects.count() == 2
    new = DumpingReport.objects.exclude(pk=existing.pk).get()
    assert new.photos.count() == 1  # the photo went along
    assert page.recorder.js_errors() == []


def test_form_on_a_phone(chromium, live_server, shot):
    build_world()
    context = chromium.new_context(
        viewport={"width": 390, "height": 844}, locale="pt-BR", is_mobile=True, has_touch=True
    )
    page = context.new_page()
    server = urlsplit(live_server.url).netloc
    page.route(
        "**/*",
        lambda route: (
            route.continue_() if urlsplit(route.request.url).netloc == server else route.abort()
        ),
    )
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{live_server.url}/denunciar/", wait_until="load")
    # Nothing wider than the screen.
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    shot(page, "denunciar-celular.png")
    context.close()
    assert errors == []


def test_inspector_sees_the_report_on_the_map_and_its_photo(browser_page, live_server, shot):
    from fiscalization import intake, photos

    page = browser_page
    world = build_world()
    report = intake.create_report(
        intake.NewReport(fx.at(east_m=-800, north_m=-600), "LOTE_VAGO", "Sofá e entulho"),
        photos.check_photos([fx.upload("a.jpg", fx.jpeg_with_gps((640, 480)))]),
    )
    intake.create_report(intake.NewReport(fx.at(east_m=900, north_m=700), "ENCOSTA"))
    log_in(page, live_server, world.fiscal)

    response = page.goto(f"{live_server.url}/fiscalizacao/", wait_until="load")
    assert response.status == 200
    map_ready(page)
    page.wait_for_selector("#mapa .leaflet-overlay-pane svg path")
    assert page.locator(".leaflet-control-layers-overlays label").count() >= 1
    assert report.protocol in page.inner_text(".intake-table")
    shot(page, "fiscalizacao-mapa.png")

    with page.expect_navigation():
        page.get_by_role("link", name=report.protocol).click()
    image = page.locator(".intake-photos img").first
    image.wait_for()
    # Not wait_for_function: Playwright compiles its predicate with `new Function`, which the
    # site's Content-Security-Policy (no 'unsafe-eval') rightly refuses. Poll instead.
    loaded = "(() => { const i = document.querySelector('.intake-photos img');"
    loaded += " return !!i && i.complete && i.naturalWidth > 0; })()"
    for _ in range(100):
        if page.evaluate(loaded):
            break
        page.wait_for_timeout(100)
    assert page.evaluate("document.querySelector('.intake-photos img').naturalWidth") == 640
    assert "Local no EXIF" in page.inner_text("main")
    shot(page, "fiscalizacao-denuncia.png")
    assert page.recorder.js_errors() == []
