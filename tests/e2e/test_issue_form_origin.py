"""The issue form never moves the origin by surprise (issue 25 point 10), in a real Chromium at
a phone's and a desktop's width: the driver chooses a recent worksite (the origin fills), then
taps an ATT on the map and "Usar como destino". The map's toggle used to stay on "Origem", so
the tap moved the origin onto the ATT and the CTR left 3 km from the worksite. Once the origin
is filled the map works on the destination, and the toggle sits above the map."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from ctr.models import CTR
from tests.ctr_world import build_world
from tests.e2e.conftest import log_in
from tests.e2e.test_offline_ctr import comma, recent_worksite_ctr
from tests.e2e.test_offline_list import WIDTHS, sized_page

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.usefixtures("transactional_db"),
    pytest.mark.usefixtures("frozen_today"),
]


def tap_facility(page, name: str, facility, dx: int = 0) -> None:
    """A tap on a point inside `facility`, the map centred there first."""
    inside = facility.area.point_on_surface
    page.locator("#mapa").scroll_into_view_if_needed()
    page.evaluate(f"window['{name}'].setView([{inside.y}, {inside.x}], 16, {{animate: false}})")
    xy = page.evaluate(f"window['{name}'].latLngToContainerPoint([{inside.y}, {inside.x}])")
    page.locator("#mapa .leaflet-container").click(position={"x": xy["x"] + dx, "y": xy["y"]})


@WIDTHS
def test_a_tap_on_a_facility_after_a_recent_worksite_leaves_the_origin_alone(
    chromium, live_server, shot, viewport
):
    world = build_world()
    recent_worksite_ctr(world)
    width = viewport[0]
    context, page, recorder = sized_page(chromium, live_server, viewport)
    log_in(page, live_server, world.alfa_user)
    page.goto(f"{live_server.url}/transportador/ctrs/novo/")
    page.wait_for_selector("#mapa .leaflet-overlay-pane svg path")
    page.wait_for_selector("#obra-recente", state="attached", timeout=20_000)

    # The toggle is shown above the map (on a phone too), where the tap happens.
    toggle, frame = page.locator("#alvo-mapa"), page.locator("#mapa")
    assert toggle.is_visible()
    assert (
        toggle.bounding_box()["y"] + toggle.bounding_box()["height"] <= (frame.bounding_box()["y"])
    )

    # Before any origin, with "Origem" chosen, a tap on the ATT opens its popup and moves no
    # point: a receiving area is not a worksite.
    name = page.get_attribute("#mapa", "data-map-var")
    tap_facility(page, name, world.att)
    page.get_by_role("button", name="Usar como destino").wait_for()
    assert page.input_value("#id_origin_lat") == page.input_value("#id_origin_lon") == ""
    page.evaluate(f"window['{name}'].closePopup()")

    # A recent worksite fills the origin: the map now works on the destination.
    page.select_option("#obra-recente", index=1)
    origin = (comma(world.origin.y), comma(world.origin.x))
    assert (page.input_value("#id_origin_lat"), page.input_value("#id_origin_lon")) == origin
    assert page.is_checked("input[name=map_target][value=destination]")

    # The tap on the ATT and "Usar como destino": the destination, never the origin.
    tap_facility(page, name, world.att)
    page.get_by_role("button", name="Usar como destino").click()
    assert page.input_value("#id_destination_facility") == str(world.att.pk)
    assert (page.input_value("#id_origin_lat"), page.input_value("#id_origin_lon")) == origin
    shot(page, f"emitir-origem-preservada-{width}.png")

    # A second tap elsewhere on the map still works on the destination.
    tap_facility(page, name, world.att, dx=5)
    assert (page.input_value("#id_origin_lat"), page.input_value("#id_origin_lon")) == origin

    page.select_option("#id_destination_facility", str(world.att.pk))
    page.select_option("#id_vehicle", label="ABC-1D23")
    page.select_option("#id_equipment", index=1)
    page.select_option("#id_waste-0-waste_class", "A")
    page.fill("#id_waste-0-volume_m3", "2,5")
    with page.expect_navigation():
        page.get_by_role("button", name="Emitir CTR").click()
    ctr = CTR.objects.latest("created_at")
    assert urlsplit(page.url).path == f"/transportador/ctrs/{ctr.number}/"
    assert ctr.origin.distance(world.origin) < 1e-6
    assert ctr.destination_facility == world.att
    assert recorder.js_errors() == []
    context.close()
