"""A driver on a phone (390×844, touch) issues a CTR from a template in a handful of taps, and the
template pages fit the screen and the finger at both widths, in a real headless Chromium. The layout
rule is test_phone_layout's (measure_layout.js)."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pytest

from ctr import services
from ctr.field import templates as ctr_templates
from ctr.models import CTR
from ctr.rules import WasteLine
from tests.ctr_world import TODAY, build_world
from tests.e2e.conftest import Recorder, log_in

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db", "frozen_today")]

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
MAX_TAPS = 4
MEASURE = (Path(__file__).parent / "measure_layout.js").read_text(encoding="utf-8")


@pytest.fixture
def world():
    world = build_world()
    request = services.IssueRequest(
        transport_date=TODAY,
        vehicle_plate="ABC1D23",
        equipment_code="C-01",
        origin=world.origin,
        destination=world.inside(world.att),
        waste=[WasteLine("A", Decimal("3"), "entulho de alvenaria")],
        generator=services.GeneratorData("Maria da Obra", "52998224725"),
        worksite=services.WorksiteData("Rua das Flores, 10", world.origin, "Centro"),
    )
    world.ctr = services.issue(world.alfa, world.alfa_user, request)
    world.template = ctr_templates.from_ctr(world.ctr, world.alfa_user, "Flores → ATT")
    ctr_templates.from_ctr(world.ctr, world.alfa_user, "Obra da Rua das Flores, caçamba C-01")
    return world


def phone(chromium, live_server, user):
    context = chromium.new_context(
        viewport=PHONE, locale="pt-BR", has_touch=True, is_mobile=True, device_scale_factor=2
    )
    page = context.new_page()
    page.recorder = Recorder(page, live_server.url)
    log_in(page, live_server, user)
    return context, page


def test_a_driver_issues_from_a_template_in_four_taps(chromium, live_server, world, shot):
    context, page = phone(chromium, live_server, world.alfa_user)
    taps = 0

    def tap(locator):
        nonlocal taps
        locator.scroll_into_view_if_needed()
        box = locator.bounding_box()
        assert box["height"] >= 44 and box["width"] >= 44, box
        locator.tap()
        taps += 1

    try:
        page.goto(live_server.url + "/transportador/ctrs/")
        with page.expect_navigation():
            tap(page.locator(".subnav a", has_text="Emitir CTR"))
        # The templates are the first thing on the issue page.
        first = page.locator("main h2").first
        assert first.inner_text() == "Emitir de um modelo"
        shot(page, "modelos-emitir-escolha-390.png")
        with page.expect_navigation():
            tap(page.locator(".template-card", has_text="Flores → ATT"))
        assert page.locator("#id_transport_date").input_value() == TODAY.isoformat()
        volume = page.locator("#id_waste-0-volume_m3")
        assert volume.input_value() == "3"
        tap(volume)
        volume.fill("4,5")  # typing is not a tap
        shot(page, "modelos-emitir-confirmar-390.png")
        with page.expect_navigation():
            tap(page.get_by_role("button", name="Emitir CTR"))
        assert re.search(r"/transportador/ctrs/CTR-\d{7}-\d{4}-\d{6}/$", page.url), page.url
        number = page.locator("#numero-ctr").inner_text()
        shot(page, "modelos-emitido-390.png")
    finally:
        context.close()
    assert taps <= MAX_TAPS, taps
    issued = CTR.objects.get(number=number)
    assert issued.total_volume_m3 == Decimal("4.5")
    assert issued.transport_date == TODAY
    assert page.recorder.page_errors == []


def template_pages(world) -> list[str]:
    pk = world.template.pk
    return [
        "/transportador/ctrs/novo/",
        "/transportador/modelos/",
        f"/transportador/modelos/{pk}/emitir/",
        "/transportador/modelos/novo/",
        f"/transportador/modelos/{pk}/editar/",
        f"/transportador/ctrs/novo/?modelo={pk}",
        f"/transportador/ctrs/{world.ctr.number}/",
    ]


@pytest.mark.parametrize("width", ["phone", "desktop"])
def test_template_pages_fit_the_screen_and_the_finger(chromium, live_server, world, shot, width):
    viewport = PHONE if width == "phone" else DESKTOP
    context = chromium.new_context(viewport=viewport, locale="pt-BR")
    page = context.new_page()
    recorder = Recorder(page, live_server.url)
    log_in(page, live_server, world.alfa_user)
    problems = []
    try:
        for path in template_pages(world):
            response = page.goto(live_server.url + path)
            assert response.status == 200, f"{path}: HTTP {response.status}"
            page.wait_for_load_state("load")
            name = re.sub(r"[^a-z0-9]+", "-", path.strip("/").lower())
            shot(page, f"{name}-{viewport['width']}.png")
            measured = page.evaluate(MEASURE)
            if measured["scrollWidth"] > measured["innerWidth"]:
                problems.append(f"{path}: scrolls sideways: {measured['wide'][:3]}")
            problems += [f"{path}: tap target under 44 px: {s}" for s in measured["small"]]
    finally:
        context.close()
    assert not problems, "\n".join(problems)
    assert recorder.page_errors == []
