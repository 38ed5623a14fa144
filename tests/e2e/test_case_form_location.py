"""The inspector opening a case where the facts are: "Usar minha localização" on the case form puts
the device's position in the latitude and longitude, as the dumping report's form does, at a phone's
and a desktop's width; the case opened has it."""

from __future__ import annotations

import pytest
from django.utils import timezone

from fiscalization.models import EnforcementCase
from tests.ctr_world import build_world
from tests.e2e.conftest import Recorder, log_in
from tests.e2e.test_issue_form_geolocation import WIDTHS, as_float, comma, fits
from tests.enforcement_world import ensure_frameworks

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db", "frozen_today")]


@pytest.mark.parametrize("width", list(WIDTHS))
def test_the_inspector_puts_the_case_where_the_device_is(chromium, live_server, shot, width):
    ensure_frameworks()
    world = build_world()
    here = world.origin
    w, h = WIDTHS[width]
    context = chromium.new_context(
        viewport={"width": w, "height": h},
        locale="pt-BR",
        geolocation={"longitude": here.x, "latitude": here.y, "accuracy": 9},
    )
    context.grant_permissions(["geolocation"])
    page = context.new_page()
    page.recorder = Recorder(page, live_server.url)
    try:
        log_in(page, live_server, world.fiscal)
        page.goto(f"{live_server.url}/fiscalizacao/processos/novo/")
        button = page.get_by_role("button", name="Usar minha localização")
        assert button.is_visible()
        assert button.bounding_box()["height"] >= 44
        button.click()
        page.wait_for_function("() => document.getElementById('id_latitude').value !== ''")
        assert page.input_value("#id_latitude") == comma(here.y)
        assert page.input_value("#id_longitude") == comma(here.x)
        assert "precisão de ±\u00a09\u00a0m" in page.inner_text("#geo-status")
        assert fits(page)
        shot(page, f"processo-localizacao-{width}.png")
        page.fill("#id_opened_at", timezone.localtime().strftime("%Y-%m-%dT%H:%M"))
        page.fill("#id_description", "Caçamba deixada na calçada.")
        page.fill("#id_offender_name", "Fulano de Tal")
        page.fill("#id_offender_document", "529.982.247-25")
        with page.expect_navigation():
            page.get_by_role("button", name="Abrir processo").click()
        case = EnforcementCase.objects.get()
        assert abs(case.location.x - here.x) < 1e-5 and abs(case.location.y - here.y) < 1e-5
        assert abs(as_float(comma(case.location.y)) - here.y) < 1e-5
        assert page.recorder.js_errors() == []
    finally:
        context.close()
