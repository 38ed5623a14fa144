"""The facility operator's onward transport and stock pages in a real headless Chromium, at a
phone's 390×844 and a desktop's 1280×800: from the reception page to "Emitir CTR de saída", the
transporter's fleet narrowed to it, the destination chosen in the list marked on the map, a volume
over the stock sent back beside its field with everything typed kept, then issued; on the stock
page, processing over the stock refused at its field, then recorded. No sideways scrolling, no
network beyond the live server, no JavaScript errors."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from ctr.models import CTR, OnSiteProcessing, Vehicle
from tests.ctr.onward_world import stocked_world
from tests.e2e.conftest import Recorder, log_in, map_ready

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db", "frozen_today")]

WIDTHS = {"phone": (390, 844), "desktop": (1280, 800)}


def fits(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def submit(page, button: str) -> None:
    with page.expect_navigation():
        page.get_by_role("button", name=button).click()


@pytest.mark.parametrize("width", list(WIDTHS))
def test_operator_ships_sorted_waste_and_records_processing(chromium, live_server, shot, width):
    world = stocked_world()
    w, h = WIDTHS[width]
    context = chromium.new_context(viewport={"width": w, "height": h}, locale="pt-BR")
    page = context.new_page()
    recorder = Recorder(page, live_server.url)
    try:
        log_in(page, live_server, world.operator)
        page.goto(f"{live_server.url}/recebimentos/")
        shot(page, f"receptions-{width}.png")
        with page.expect_navigation():
            page.get_by_role("link", name="Emitir CTR de saída").first.click()
        assert urlsplit(page.url).path == "/recebimentos/saidas/nova/"
        map_ready(page)
        page.wait_for_selector("#mapa .leaflet-overlay-pane svg path")
        assert fits(page), "the onward form scrolls sideways"
        shot(page, f"onward-form-{width}.png")

        # Beta's fleet only, and its one truck chosen for it.
        page.select_option("#id_transporter", label="Entulhos Beta ME (licença TR-002)")
        alfa_truck = Vehicle.objects.get(plate="ABC1D23")
        assert page.locator(f'#id_vehicle option[value="{alfa_truck.pk}"]').is_hidden()
        beta_truck = Vehicle.objects.get(plate="XYZ9876")
        assert page.input_value("#id_vehicle") == str(beta_truck.pk)

        # The destination from the list: the discharge point goes inside it, on the map.
        page.select_option("#id_destination_facility", label="Reciclagem (Área de Reciclagem)")
        lat = page.input_value("#id_destination_lat")
        assert lat, "choosing the destination did not mark the discharge point"
        assert page.locator("#mapa .leaflet-tooltip", has_text="Destino").count() == 1
        page.fill("#id_generator_name", "Triagem Vale Ltda.")
        page.fill("#id_generator_document", "12.345.678/0001-95")
        page.select_option("#id_waste-0-waste_class", "A")
        page.fill("#id_waste-0-volume_m3", "12")
        submit(page, "Emitir CTR de saída")

        # Over the stock: beside the waste lines, and nothing typed is lost.
        assert "Saída de 12 m³ de Classe A" in page.inner_text("#residuos_error")
        assert page.input_value("#id_waste-0-volume_m3") == "12"
        assert page.input_value("#id_generator_name") == "Triagem Vale Ltda."
        assert page.input_value("#id_destination_lat") == lat
        assert page.locator("#id_vehicle option:checked").inner_text().startswith("XYZ-9876")
        assert not CTR.objects.filter(origin_facility=world.att).exists()
        assert fits(page), "the form with its errors scrolls sideways"
        shot(page, f"onward-form-errors-{width}.png")

        page.fill("#id_waste-0-volume_m3", "6")
        submit(page, "Emitir CTR de saída")
        ctr = CTR.objects.get(origin_facility=world.att)
        assert urlsplit(page.url).path == f"/recebimentos/saidas/{ctr.number}/"
        assert f"{ctr.number} emitido." in page.inner_text("main")
        assert fits(page)
        shot(page, f"onward-detail-{width}.png")

        page.goto(f"{live_server.url}/recebimentos/estoque/")
        assert ctr.number in page.inner_text("#secao-saidas")
        page.select_option("#id_b-waste_class", "A")
        page.select_option("#id_b-kind", "recycled")
        page.fill("#id_b-volume_m3", "20")
        submit(page, "Registrar beneficiamento")
        assert "não tem 20 m³ de Classe A" in page.inner_text("#id_b-volume_m3_error")
        assert page.input_value("#id_b-volume_m3") == "20"
        assert not OnSiteProcessing.objects.exists()
        assert fits(page), "the stock page with its errors scrolls sideways"
        page.fill("#id_b-volume_m3", "2,5")
        submit(page, "Registrar beneficiamento")
        assert "Beneficiamento registrado: 2,5 m³ de Classe A" in page.inner_text("main")
        assert OnSiteProcessing.objects.get().volume_m3 == 2.5
        assert fits(page), "the stock page scrolls sideways"
        shot(page, f"facility-stock-{width}.png")
    finally:
        context.close()
    # Chromium reports the two refusals' own status (422): the pages that said why.
    refusals = "Failed to load resource: the server responded with a status of 422"
    assert [e for e in recorder.js_errors() if not e.startswith(refusals)] == []
