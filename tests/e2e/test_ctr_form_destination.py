"""The "Emitir CTR" form on a phone (390×844) in a real headless Chromium: the map sits
between the worksite and the origin/destination fields it fills; a facility's popup offers
"Usar como destino", which selects the facility and puts the discharge point inside its area;
choosing a facility in the select does the same; the CTR issued carries that point."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from ctr.models import CTR
from tests.ctr_world import TODAY, build_world
from tests.e2e.conftest import Recorder, log_in, map_ready

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db")]


def as_float(text: str) -> float:
    return float(text.replace(",", "."))


def box(page, selector: str) -> dict:
    return page.locator(selector).first.bounding_box()


def test_popup_and_select_choose_the_destination_on_a_phone(chromium, live_server):
    world = build_world()
    context = chromium.new_context(viewport={"width": 390, "height": 844}, locale="pt-BR")
    page = context.new_page()
    recorder = Recorder(page, live_server.url)
    log_in(page, live_server, world.alfa_user)
    page.goto(f"{live_server.url}/transportador/ctrs/novo/")
    map_ready(page)
    page.wait_for_selector("#mapa .leaflet-overlay-pane svg path")
    page.evaluate("window.scrollTo(0, 0)")  # the boxes below are measured from the top

    # The map comes right after the worksite and right before the coordinates it fills.
    worksite, frame = box(page, "#id_worksite_address"), box(page, "#mapa")
    origin_lat = box(page, "#id_origin_lat")
    assert worksite["y"] < frame["y"] and frame["y"] + frame["height"] < origin_lat["y"]
    # Between them only the map's legend and the "clicking the map sets" toggle, no field.
    between = page.evaluate(
        """([top, bottom]) => [...document.querySelectorAll("#form-ctr input, #form-ctr select")]
            .filter((el) => el.type !== "hidden" && el.name !== "map_target")
            .filter((el) => { const y = el.getBoundingClientRect().top + window.scrollY;
                              return y > top && y < bottom; })
            .map((el) => el.name)""",
        [frame["y"] + frame["height"], origin_lat["y"]],
    )
    assert between == []

    # A tap on the ATT's symbol opens its popup; "Usar como destino" picks it.
    name = map_ready(page)
    inside = world.att.area.point_on_surface
    page.locator("#mapa").scroll_into_view_if_needed()
    xy = page.evaluate(f"window['{name}'].latLngToContainerPoint([{inside.y}, {inside.x}])")
    page.locator("#mapa .leaflet-container").click(position={"x": xy["x"], "y": xy["y"]})
    button = page.get_by_role("button", name="Usar como destino")
    button.wait_for()
    popup, zoom = box(page, ".leaflet-popup-content-wrapper"), box(page, ".leaflet-control-zoom")
    # The popup does not open under the zoom buttons.
    assert popup["y"] >= zoom["y"] + zoom["height"] or popup["x"] >= zoom["x"] + zoom["width"]
    button.click()
    assert page.input_value("#id_destination_facility") == str(world.att.pk)
    lon, lat = (
        as_float(page.input_value("#id_destination_lon")),
        as_float(page.input_value("#id_destination_lat")),
    )
    assert (lon, lat) == (pytest.approx(inside.x, abs=1e-5), pytest.approx(inside.y, abs=1e-5))
    assert "Ponto de descarga marcado dentro da área" in page.inner_text("#mapa-status")
    page.wait_for_selector(".leaflet-popup", state="detached")  # closed (after its fade)

    # Choosing another area in the select moves the point into that area, and back.
    page.select_option("#id_destination_facility", str(world.pev.pk))
    pev_inside = world.pev.area.point_on_surface
    assert as_float(page.input_value("#id_destination_lon")) == pytest.approx(
        pev_inside.x, abs=1e-5
    )
    page.select_option("#id_destination_facility", str(world.att.pk))
    assert as_float(page.input_value("#id_destination_lat")) == pytest.approx(inside.y, abs=1e-5)

    # The rest of the form; the CTR is issued to the ATT with the point inside its area.
    origin = world.origin
    page.fill("#id_origin_lat", f"{origin.y:.6f}".replace(".", ","))
    page.fill("#id_origin_lon", f"{origin.x:.6f}".replace(".", ","))
    page.fill("#id_transport_date", TODAY.isoformat())
    page.select_option("#id_vehicle", label="ABC-1D23")
    page.select_option("#id_equipment", index=1)
    page.fill("#id_generator_name", "Maria da Obra")
    page.fill("#id_generator_document", "529.982.247-25")
    page.fill("#id_worksite_address", "Rua das Flores, 10")
    page.select_option("#id_waste-0-waste_class", "A")
    page.fill("#id_waste-0-volume_m3", "2,5")
    with page.expect_navigation():
        page.get_by_role("button", name="Emitir CTR").click()
    ctr = CTR.objects.get()
    assert urlsplit(page.url).path == f"/transportador/ctrs/{ctr.number}/"
    assert ctr.destination_facility == world.att
    assert world.att.area.covers(ctr.destination)
    assert recorder.js_errors() == []
    context.close()
