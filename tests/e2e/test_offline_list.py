"""The CTRs kept on the phone in "Meus CTRs": the list page shows the provisional CTRs the phone
keeps (late ones in red), online and offline, without a script error. The panel used to be inserted
before a node that is not a child of <main> (the list's heading sits in .page-head), which threw and
hid it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.ctr_world import build_world
from tests.e2e.conftest import Recorder, log_in

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db")]

RED = "rgb(185, 28, 28)"

KEEP = """([transporter, hoursAgo]) => window.CTROfflineQueue.add({
  state: "pending",
  departure: new Date(Date.now() - hoursAgo * 3600 * 1000).toISOString(),
  summary: "ABC-1D23 · Rua das Flores, 10",
  payload: {},
  transporter: transporter,
}).then((record) => record.number)"""


WIDTHS = pytest.mark.parametrize("viewport", [(390, 844), (1366, 900)], ids=["390", "1366"])


def sized_page(chromium, live_server, viewport: tuple[int, int]):
    """A page of `viewport` in the municipality's time zone, its errors recorded."""
    width, height = viewport
    context = chromium.new_context(
        viewport={"width": width, "height": height},
        locale="pt-BR",
        timezone_id="America/Sao_Paulo",
    )
    page = context.new_page()
    return context, page, Recorder(page, live_server.url)


@WIDTHS
def test_my_ctrs_shows_the_ctrs_kept_on_the_phone_online_and_offline(
    chromium, live_server, shot, viewport
):
    world = build_world()
    width = viewport[0]
    context, page, recorder = sized_page(chromium, live_server, viewport)
    # The sends fail as without a network: the kept CTRs stay pending.
    page.route("**/api/v1/ctrs/", lambda route: route.abort())
    log_in(page, live_server, world.alfa_user)
    list_url = f"{live_server.url}/transportador/ctrs/"

    page.goto(list_url)
    page.wait_for_selector("html[data-offline=pronto]", timeout=20_000)
    page.wait_for_function("navigator.serviceWorker.controller !== null", timeout=20_000)
    late = page.evaluate(KEEP, [world.alfa.pk, 30])
    recent = page.evaluate(KEEP, [world.alfa.pk, 2])
    page.reload()

    late_item = page.locator(f"#ctr-offline li[data-numero='{late}']")
    late_item.wait_for(timeout=10_000)
    assert "offline-late" in late_item.get_attribute("class")
    assert "não enviado há mais de 24 h" in late_item.inner_text()
    # The list is drawn again when the failed send comes back: a retrying assertion reads the
    # element on the page, not one a redraw has just detached (whose computed style is empty).
    expect(late_item.locator(".offline-state")).to_have_css("color", RED)
    recent_item = page.locator(f"#ctr-offline li[data-numero='{recent}']")
    assert "será enviado quando houver conexão" in recent_item.inner_text()
    assert "offline-late" not in recent_item.get_attribute("class")
    # Above the list of issued CTRs, under the page's heading.
    assert page.locator("#ctr-offline").is_visible()
    assert (
        page.locator(".page-head").bounding_box()["y"]
        < page.locator("#ctr-offline").bounding_box()["y"]
    )
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    shot(page, f"meus-ctrs-guardados-{width}.png")

    # Offline: the page opens from the phone and still lists both.
    context.set_offline(True)
    page.goto(list_url)
    assert page.evaluate("navigator.onLine") is False
    page.locator(f"#ctr-offline li[data-numero='{late}']").wait_for(timeout=10_000)
    assert page.locator(f"#ctr-offline li[data-numero='{recent}']").is_visible()
    shot(page, f"meus-ctrs-guardados-offline-{width}.png")

    assert recorder.js_errors() == []
    context.close()
