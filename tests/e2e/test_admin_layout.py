"""The admin's facility page in a real Chromium at 1366 px: nothing wider than the screen
(the licenses' inline table overflowed it), accepted classes as checkboxes."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from tests.ctr_world import build_world
from tests.e2e.conftest import log_in

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
