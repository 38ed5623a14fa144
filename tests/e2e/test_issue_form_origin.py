"""The issue form never moves the origin by surprise, in a real Chromium at
a phone's and a desktop's width: the driver chooses a recent worksite (the origin fills), then
taps an ATT on the map and "Usar como destino". The map's toggle used to stay on "Origem", so
the tap moved the origin onto the ATT and the CTR left 3 km from the worksite. Once the origin
is filled the map works on the destination, and the toggle sits above the map."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from ctr.models import CTR
from tests.builders import offset, set_parameters, square
from tests.ctr_world import build_world
from tests.e2e.conftest import log_in, map_ready
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


def when_the_map_stands_still(page, name: str) -> None:
    """Until the pan a popup starts on opening (to fit it in the map) has ended: a click aimed at
    the popup's button while the map still glides lands on the map beside it (seen under load:
    the tap then marked a free destination point and no area)."""
    page.evaluate(
        """(name) => new Promise((done) => {
            const map = window[name];
            if (map._panAnim && map._panAnim._inProgress) map.once("moveend", () => done());
            else requestAnimationFrame(() => requestAnimationFrame(() => done()));
        })""",
        name,
    )


def tap_at(page, name: str, lon: float, lat: float, zoom: int) -> None:
    """A tap on the map at lon/lat, the map centred there first at `zoom`."""
    page.locator("#mapa").scroll_into_view_if_needed()
    page.evaluate(f"window['{name}'].setView([{lat}, {lon}], {zoom}, {{animate: false}})")
    xy = page.evaluate(f"window['{name}'].latLngToContainerPoint([{lat}, {lon}])")
    page.locator("#mapa .leaflet-container").click(position={"x": xy["x"], "y": xy["y"]})


def issue_form(chromium, live_server, viewport, world):
    """Alfa's issue form at `viewport`, its map drawn and its recent worksites offered."""
    context, page, recorder = sized_page(chromium, live_server, viewport)
    log_in(page, live_server, world.alfa_user)
    page.goto(f"{live_server.url}/transportador/ctrs/novo/")
    map_ready(page)
    page.wait_for_selector("#mapa .leaflet-overlay-pane svg path")
    page.wait_for_selector("#obra-recente", state="attached", timeout=20_000)
    return context, page, recorder


def registered_worksite_form(chromium, live_server, viewport, side_m: float = 0):
    """The issue form with Alfa's recent worksite registered (drawn as a square of `side_m`
    centred on its point, or not drawn),
    in a municipality whose GPS tolerance is 40 m, chosen in "Obra recente": the origin at
    the worksite's point, no warning yet."""
    world = build_world()
    site = recent_worksite_ctr(world).worksite
    site.registered_at = timezone.now()
    site.municipality = world.att.municipality
    corner = offset(world.origin.x, world.origin.y, -side_m / 2, -side_m / 2)
    site.area = square(*corner, side_m) if side_m else None
    site.save(update_fields=["registered_at", "municipality", "area"])
    set_parameters(site.municipality, gps_tolerance_m=40)
    context, page, recorder = issue_form(chromium, live_server, viewport, world)
    page.select_option("#obra-recente", index=1)
    assert page.input_value("#id_origin_lat") == comma(world.origin.y)
    assert page.locator("#aviso-origem-obra").is_hidden()
    return world, context, page, recorder


def move_origin(page, world, east_m: float, north_m: float, zoom: int) -> None:
    """ "Origem" chosen again, a tap `east_m` and `north_m` from the worksite's point."""
    name = map_ready(page)
    page.check("input[name=map_target][value=origin]")
    tap_at(page, name, *offset(world.origin.x, world.origin.y, east_m, north_m), zoom=zoom)


@WIDTHS
def test_an_origin_away_from_the_registered_worksite_is_said_before_issuing(
    chromium, live_server, shot, viewport
):
    """The recent worksite chosen is registered: a tap 3 km away puts the origin outside its
    point's tolerance (the municipality's 40 m, which ORIGIN_OUTSIDE_WORKSITE applies), and the
    page says so before issuing; back within 40 m, the warning goes."""
    world, context, page, recorder = registered_worksite_form(chromium, live_server, viewport)
    warning = page.locator("#aviso-origem-obra")

    move_origin(page, world, 0, -3000, zoom=13)
    assert page.input_value("#id_origin_lat") != comma(world.origin.y)
    warning.wait_for(state="visible")
    text = warning.inner_text()
    assert "A origem está a 3,0 km da obra cadastrada (Rua das Flores, 10)" in text
    assert "tolerância de 40 m" in text and "confira antes de emitir" in text
    warning.scroll_into_view_if_needed()
    shot(page, f"emitir-origem-fora-da-obra-{viewport[0]}.png")

    # Back 30 m from the worksite's point: within the 40 m, no warning.
    move_origin(page, world, 30, 0, zoom=17)
    warning.wait_for(state="hidden")
    assert recorder.js_errors() == []
    context.close()


def test_an_origin_away_from_the_registered_worksite_area_counts_from_its_edge(
    chromium, live_server
):
    """A worksite drawn on the map: the distance is the origin's to the polygon (as in
    ST_DWithin), 30 m beyond its edge is within the 40 m, 100 m is not."""
    world, context, page, recorder = registered_worksite_form(
        chromium, live_server, (390, 844), side_m=200
    )
    warning = page.locator("#aviso-origem-obra")

    move_origin(page, world, 200, 0, zoom=17)
    warning.wait_for(state="visible")
    assert re.search(
        r"A origem está a (9[7-9]|10[0-3]) m da área da obra cadastrada", warning.inner_text()
    )

    move_origin(page, world, 130, 0, zoom=17)
    warning.wait_for(state="hidden")
    move_origin(page, world, 50, 50, zoom=17)
    assert warning.is_hidden()
    assert recorder.js_errors() == []
    context.close()


@WIDTHS
def test_a_tap_on_a_facility_after_a_recent_worksite_leaves_the_origin_alone(
    chromium, live_server, shot, viewport
):
    world = build_world()
    recent_worksite_ctr(world)
    width = viewport[0]
    context, page, recorder = issue_form(chromium, live_server, viewport, world)

    # The toggle is shown above the map (on a phone too), where the tap happens.
    toggle, frame = page.locator("#alvo-mapa"), page.locator("#mapa")
    assert toggle.is_visible()
    assert (
        toggle.bounding_box()["y"] + toggle.bounding_box()["height"] <= (frame.bounding_box()["y"])
    )

    # Before any origin, with "Origem" chosen, a tap on the ATT opens its popup and moves no
    # point: a receiving area is not a worksite.
    name = map_ready(page)
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
    page.get_by_role("button", name="Usar como destino").wait_for()
    when_the_map_stands_still(page, name)
    page.get_by_role("button", name="Usar como destino").click()
    # Waits for the value (a run of four suites at once once read it before it was set).
    expect(page.locator("#id_destination_facility")).to_have_value(str(world.att.pk))
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
