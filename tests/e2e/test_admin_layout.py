"""The admin's facility page in a real Chromium at 1366 px: nothing wider than the screen
(the licenses' inline table overflowed it), accepted classes as checkboxes; the drawing tools
of its maps in Portuguese."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from tests.ctr_world import build_world, large_generator_site
from tests.e2e.conftest import log_in
from tests.e2e.test_offline_list import WIDTHS, sized_page

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db")]


def test_facility_change_page_fits_a_desktop(browser_page, live_server):
    world = build_world()
    admin = get_user_model().objects.create_superuser("gestor", "gestor@example.org", "x")
    page = browser_page
    log_in(page, live_server, admin)
    url = f"{live_server.url}/admin/pev_network/receivingfacility/{world.att.pk}/change/"
    assert page.goto(url, wait_until="load").status == 200
    page.wait_for_selector(".leaflet-container")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 1366
    assert page.locator('input[type=checkbox][name="accepted_classes"]').count() == 5


@WIDTHS
def test_the_admin_drawing_tools_speak_portuguese(chromium, live_server, shot, viewport):
    """Leaflet.draw's toolbars and tooltips on the admin's geometry widgets
    (a worksite's point and its area, not drawn yet) in Portuguese, without console errors."""
    world = build_world()
    site = large_generator_site(world)
    admin = get_user_model().objects.create_superuser("gestor", "gestor@example.org", "x")
    context, page, recorder = sized_page(chromium, live_server, viewport)
    log_in(page, live_server, admin)
    url = f"{live_server.url}/admin/ctr/worksite/{site.pk}/change/"
    assert page.goto(url, wait_until="load").status == 200
    area = page.locator("#id_area-map")
    polygon = area.locator(".leaflet-draw-draw-polygon")
    polygon.wait_for()
    assert polygon.get_attribute("title") == "Desenhar um polígono"
    assert area.locator(".leaflet-draw-edit-edit").get_attribute("title") == (
        "Nenhuma camada para editar"
    )
    assert area.locator(".leaflet-control-zoom-in").get_attribute("title") == "Aproximar"
    assert area.locator("a[title='Voltar à vista inicial']").count() == 1

    area.scroll_into_view_if_needed()
    polygon.click()
    actions = area.locator(".leaflet-draw-actions a:visible")
    assert actions.all_inner_texts() == ["Concluir", "Apagar o último ponto", "Cancelar"]
    assert actions.nth(2).get_attribute("title") == "Cancelar o desenho"
    box = area.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    tooltip = area.locator(".leaflet-draw-tooltip")
    assert "Clique para começar a desenhar a forma." in tooltip.inner_text()
    shot(page, f"admin-desenho-pt-{viewport[0]}.png")
    assert recorder.js_errors() == []
    context.close()


@WIDTHS
def test_the_admin_selects_say_what_choosing_nothing_is(chromium, live_server, shot, viewport):
    """No "---------" in the admin's selects. A license's add page: its
    facility (a required foreign key) asks to choose; the licenses' list: its actions too."""
    build_world()
    admin = get_user_model().objects.create_superuser("gestor", "gestor@example.org", "x")
    context, page, recorder = sized_page(chromium, live_server, viewport)
    log_in(page, live_server, admin)
    base = f"{live_server.url}/admin/pev_network/facilitylicense/"
    assert page.goto(base + "add/", wait_until="load").status == 200
    facility = page.locator("select#id_facility")
    assert facility.locator("option").first.inner_text() == "Selecione…"
    assert "---------" not in page.content()
    facility.scroll_into_view_if_needed()
    shot(page, f"admin-licenca-nova-{viewport[0]}.png")
    assert page.goto(base, wait_until="load").status == 200
    action = page.locator("select[name=action]")
    assert action.locator("option").first.inner_text() == "Selecione…"
    assert "---------" not in page.content()
    shot(page, f"admin-licencas-{viewport[0]}.png")
    assert recorder.js_errors() == []
    context.close()
