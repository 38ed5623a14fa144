"""The operator's reception page sends the device's location, in a real
headless Chromium at a phone's 390×844 and a desktop's 1280×800: with the permission granted
and the device 2 km from the ATT, the reception is confirmed and the CTR gets the warning with
the distance; with the permission granted inside the ATT, no finding; with the permission
denied, the reception still works, without a location. No sideways scrolling, no network
beyond the live server, no JavaScript errors."""

from __future__ import annotations

import pytest

from ctr.models import CTR
from tests.ctr_world import build_world, issue_hours_ago
from tests.e2e.conftest import Recorder, log_in

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db", "frozen_today")]

WIDTHS = {"phone": (390, 844), "desktop": (1280, 800)}


def fits(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def open_context(chromium, width, permissions, where):
    w, h = WIDTHS[width]
    options = {"viewport": {"width": w, "height": h}, "locale": "pt-BR"}
    if where is not None:
        options["geolocation"] = {"longitude": where.x, "latitude": where.y, "accuracy": 12}
    context = chromium.new_context(**options)
    if permissions:
        context.grant_permissions(permissions)
    return context


@pytest.mark.parametrize("width", list(WIDTHS))
def test_confirmation_away_from_the_facility_records_the_warning(
    chromium, live_server, shot, width
):
    world = build_world()
    ctr = issue_hours_ago(world, 1)
    context = open_context(chromium, width, ["geolocation"], world.origin)
    page = context.new_page()
    recorder = Recorder(page, live_server.url)
    try:
        log_in(page, live_server, world.operator)
        page.goto(f"{live_server.url}/recebimentos/")
        page.locator(f"li[id='{ctr.number}'] summary").first.click()
        page.wait_for_selector("body[data-location-ready='']", state="attached")
        assert "será enviada com o recebimento" in page.inner_text("#local-aparelho")
        lat = page.input_value(f"input[name='r-{ctr.pk}-location_lat']")
        assert float(lat) == pytest.approx(world.origin.y, abs=1e-6)
        assert fits(page), "the receptions page scrolls sideways"
        shot(page, f"reception-geolocation-{width}.png")
        page.get_by_role("button", name=f"Confirmar recebimento do {ctr.number}").click()
        with page.expect_navigation():
            page.get_by_role("button", name="Sim, confirmar").click()
        assert "Aviso: Recebimento confirmado a" in page.inner_text("main")
        shot(page, f"reception-geolocation-done-{width}.png")
        received = CTR.objects.get(pk=ctr.pk)
        assert received.status == "received"
        assert [f["code"] for f in received.findings] == ["RECEPTION_AWAY_FROM_FACILITY"]
        assert received.received_location.distance(world.origin) < 1e-5
        assert fits(page)
        assert recorder.js_errors() == []
    finally:
        context.close()


def test_confirmation_inside_the_facility_has_no_finding(chromium, live_server):
    world = build_world()
    ctr = issue_hours_ago(world, 1)
    context = open_context(chromium, "phone", ["geolocation"], world.inside(world.att))
    page = context.new_page()
    recorder = Recorder(page, live_server.url)
    try:
        log_in(page, live_server, world.operator)
        page.goto(f"{live_server.url}/recebimentos/")
        page.locator(f"li[id='{ctr.number}'] summary").first.click()
        page.wait_for_selector("body[data-location-ready='']", state="attached")
        page.get_by_role("button", name=f"Confirmar recebimento do {ctr.number}").click()
        with page.expect_navigation():
            page.get_by_role("button", name="Sim, confirmar").click()
        received = CTR.objects.get(pk=ctr.pk)
        assert received.status == "received" and received.findings == []
        assert received.received_location is not None
        assert recorder.js_errors() == []
    finally:
        context.close()


def test_without_permission_the_reception_still_works(chromium, live_server, shot):
    world = build_world()
    ctr = issue_hours_ago(world, 1)
    context = open_context(chromium, "phone", [], world.origin)  # the prompt is dismissed
    page = context.new_page()
    recorder = Recorder(page, live_server.url)
    try:
        log_in(page, live_server, world.operator)
        page.goto(f"{live_server.url}/recebimentos/")
        page.locator(f"li[id='{ctr.number}'] summary").first.click()
        page.wait_for_selector("body[data-location-ready='none']", state="attached")
        assert "o recebimento vale do mesmo jeito" in page.inner_text("#local-aparelho")
        shot(page, "reception-geolocation-denied-phone.png")
        page.get_by_role("button", name=f"Confirmar recebimento do {ctr.number}").click()
        with page.expect_navigation():
            page.get_by_role("button", name="Sim, confirmar").click()
        assert f"Recebimento do {ctr.number} confirmado" in page.inner_text("main")
        received = CTR.objects.get(pk=ctr.pk)
        assert received.status == "received" and received.findings == []
        assert received.received_location is None
        assert recorder.js_errors() == []
    finally:
        context.close()
