"""/onde-descartar/ in a real headless Chromium: the Leaflet map loads from our own static files,
its facility layers are drawn, a click fills the form, and a search lists the PEV.

No network: every request that is not to the live server (the base-map tiles) is aborted, so a
page that needed a CDN would fail here with `L is not defined`.
"""

from __future__ import annotations

import datetime
from urllib.parse import urlsplit

import pytest
from django.contrib.gis.geos import MultiPolygon, Polygon
from django.utils import timezone

from pev_network.models import FacilityKind, FacilityLicense, ReceivingFacility
from tests.e2e.conftest import map_ready

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db")]

LON, LAT = -45.19, -22.81


def square(lon: float, lat: float, half: float = 0.0004) -> MultiPolygon:
    """A ~80 m square centred on (lon, lat), WGS 84."""
    ring = (
        (lon - half, lat - half),
        (lon + half, lat - half),
        (lon + half, lat + half),
        (lon - half, lat + half),
        (lon - half, lat - half),
    )
    return MultiPolygon(Polygon(ring), srid=4326)


def licensed(kind: str, name: str, lon: float, lat: float, number: str) -> ReceivingFacility:
    facility = ReceivingFacility.objects.create(
        kind=kind, name=name, area=square(lon, lat), address="Av. Teste, 1"
    )
    today = timezone.localdate()
    FacilityLicense.objects.create(
        facility=facility,
        number=number,
        issuer="CETESB",
        valid_from=today - datetime.timedelta(days=30),
        valid_until=today + datetime.timedelta(days=365),
    )
    return facility


@pytest.fixture
def network():
    """No municipality: the map opens on the facilities themselves."""
    return [
        licensed(FacilityKind.PEV, "PEV Jardim do Vale", LON, LAT, "PEV-001/2025"),
        licensed(FacilityKind.ATT, "ATT Vale do Paraíba", LON + 0.006, LAT - 0.003, "ATT-9/2025"),
    ]


@pytest.fixture
def page(browser_page):
    return browser_page


def map_var(page) -> str:
    return map_ready(page)


def test_onde_descartar_map_layers_click_and_search(page, live_server, network, shot):
    recorder = page.recorder
    response = page.goto(f"{live_server.url}/onde-descartar/", wait_until="load")
    assert response.status == 200

    # Leaflet came from our static files, and the folium map exists.
    map_ready(page)
    assert page.evaluate("typeof L !== 'undefined'")
    assert page.locator(".leaflet-container").count() == 1
    name = map_var(page)
    assert page.evaluate(f"window['{name}'] instanceof L.Map")

    # Facility layers: each facility is an area and a circle (SVG paths), one layer per kind.
    page.wait_for_selector(".leaflet-overlay-pane svg path")
    assert page.locator(".leaflet-overlay-pane svg path").count() >= 2 * len(network)
    labels = page.locator(".leaflet-control-layers-overlays label").all_inner_texts()
    labels = [label.strip() for label in labels]
    assert "Pontos de Entrega Voluntária (PEV)" in labels
    assert "Áreas de Transbordo e Triagem (ATT)" in labels

    # A click on the map (away from the facilities) fills the coordinates.
    target = page.evaluate(f"window['{name}'].latLngToContainerPoint([{LAT - 0.002}, {LON}])")
    page.locator(".leaflet-container").click(position={"x": target["x"], "y": target["y"]})
    lat_text = page.input_value("#id_latitude")
    lon_text = page.input_value("#id_longitude")
    assert lat_text and lon_text
    lat, lon = float(lat_text.replace(",", ".")), float(lon_text.replace(",", "."))
    assert lat == pytest.approx(LAT - 0.002, abs=1e-4)
    assert lon == pytest.approx(LON, abs=1e-4)

    # A facility's popup shows its license and what it takes.
    point = page.evaluate(f"window['{name}'].latLngToContainerPoint([{LAT}, {LON}])")
    page.locator(".leaflet-container").click(position={"x": point["x"], "y": point["y"]})
    popup = page.locator(".leaflet-popup-content")
    popup.wait_for()
    assert "PEV Jardim do Vale" in popup.inner_text()
    assert "PEV-001/2025" in popup.inner_text()
    assert "Classe A" in popup.inner_text()
    # (the click also moved the chosen point onto the PEV: a click anywhere picks a point)
    page.evaluate(f"window['{name}'].closePopup()")

    # Search a small load: the PEV is listed, first, and the results are on the map.
    lat_text = page.input_value("#id_latitude")
    page.fill("#id_volume_m3", "0,5")
    with page.expect_navigation():
        page.get_by_role("button", name="Buscar pontos").click()
    results = page.locator("#resultados")
    results.wait_for()
    names = page.locator("#resultados .result-name").all_inner_texts()
    assert names[0] == "PEV Jardim do Vale"
    assert "ATT Vale do Paraíba" in names
    map_ready(page)
    assert page.evaluate("typeof L !== 'undefined'")
    assert page.locator(".leaflet-tooltip.ctr-rank").count() == len(names)
    # The inputs keep the chosen point after the search.
    assert page.input_value("#id_latitude") == lat_text

    shot(page, "onde-descartar.png")

    assert recorder.js_errors() == []
    # Nothing but base-map tiles was requested outside our server.
    assert {urlsplit(u).netloc for u in recorder.aborted} <= {"tile.openstreetmap.org"}


def test_bad_input_shows_errors_and_the_map_still_works(page, live_server, network):
    recorder = page.recorder
    url = f"{live_server.url}/onde-descartar/?longitude=abc&latitude=-22.81&volume_m3=-2"
    response = page.goto(url)
    assert response.status == 400
    assert page.locator("[role=alert]").inner_text().startswith("Não foi possível buscar.")
    assert "Informe um número: só algarismos" in page.locator(".field-invalid").first.inner_text()
    map_ready(page)
    assert page.evaluate("typeof L !== 'undefined'")
    assert page.locator(".leaflet-overlay-pane svg path").count() >= 2 * len(network)
    assert recorder.js_errors(expected_error_page=url) == []
