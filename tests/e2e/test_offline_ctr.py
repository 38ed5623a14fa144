"""The offline provisional CTR in a real Chromium: a driver opens the issue
form once with a connection (the service worker keeps it, the phone keeps the offline
bundle), loses the connection, reloads the form, fills it from a recent worksite and submits:
the CTR stays on the phone with a provisional number and its departure time. Past the
municipality's limit the list shows it in red; when the connection returns it is sent by
itself (Idempotency-Key: its provisional number) and shows its official number and findings.

The browser's clock is the phone's: set to 30 h before the server's (frozen) clock when the
load leaves, then moved to the server's, so the CTR arrives late (PROVISIONAL_SYNC_LATE)."""

from __future__ import annotations

import datetime
import re
from decimal import Decimal
from urllib.parse import urlsplit

import pytest
from django.utils import timezone

from ctr import services
from ctr.models import CTR
from ctr.rules import WasteLine
from tests.clock import FROZEN_NOW
from tests.ctr_world import build_world
from tests.e2e.conftest import Recorder, log_in

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.usefixtures("transactional_db"),
    pytest.mark.usefixtures("frozen_today"),
]

PHONE = {"width": 390, "height": 844}
LEFT_AT = FROZEN_NOW - datetime.timedelta(hours=30)


def recent_worksite_ctr(world) -> CTR:
    """A CTR of Alfa from a worksite last week: the bundle's recent worksite."""
    at = timezone.now() - datetime.timedelta(days=7)
    request = services.IssueRequest(
        transport_date=timezone.localdate(at),
        vehicle_plate="ABC1D23",
        equipment_code="C-01",
        origin=world.origin,
        destination=world.inside(world.att),
        waste=[WasteLine("A", Decimal("3"), "entulho")],
        generator=services.GeneratorData("Maria da Obra", "52998224725"),
        worksite=services.WorksiteData("Rua das Flores, 10", world.origin, "Centro"),
    )
    return services.issue(world.alfa, world.alfa_user, request, at=at)


@pytest.fixture
def phone(chromium, live_server):
    context = chromium.new_context(viewport=PHONE, locale="pt-BR", timezone_id="America/Sao_Paulo")
    page = context.new_page()
    page.recorder = Recorder(page, live_server.url)
    yield page
    context.close()


def comma(value: float) -> str:
    return f"{value:.6f}".replace(".", ",")


def no_horizontal_scroll(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")


def test_a_ctr_issued_offline_is_kept_then_sent_when_the_connection_returns(
    phone, live_server, shot
):
    world = build_world()
    earlier = recent_worksite_ctr(world)
    page = phone
    # The phone's clock when the load leaves: 30 h before the server's.
    page.clock.install(time=LEFT_AT)
    log_in(page, live_server, world.alfa_user)
    form_url = f"{live_server.url}/transportador/ctrs/novo/"

    # First visit, online: the worker installs and keeps the form and what it loaded.
    page.goto(form_url)
    page.wait_for_selector("html[data-offline=pronto]", timeout=20_000)
    page.wait_for_function("navigator.serviceWorker.controller !== null", timeout=20_000)
    page.wait_for_selector("#obra-recente", state="attached", timeout=20_000)
    assert page.get_attribute("link[rel=manifest]", "href") == "/transportador/app.webmanifest"

    # No connection; the driver reloads the form: it opens from the phone.
    page.context.set_offline(True)
    assert page.evaluate("navigator.onLine") is False
    page.reload()
    assert page.inner_text("h1") == "Emitir CTR"
    page.wait_for_selector("#obra-recente", state="attached", timeout=20_000)

    # Filled offline: the recent worksite gives generator, address and origin.
    page.select_option("#obra-recente", index=1)
    assert page.input_value("#id_generator_name") == "Maria da Obra"
    assert page.input_value("#id_worksite_address") == "Rua das Flores, 10"
    assert page.input_value("#id_origin_lat") == comma(world.origin.y)
    target = world.inside(world.att)
    page.select_option("#id_vehicle", label="ABC-1D23")
    page.select_option("#id_equipment", index=1)
    page.fill("#id_destination_lat", comma(target.y))
    page.fill("#id_destination_lon", comma(target.x))
    page.select_option("#id_waste-0-waste_class", "A")
    page.fill("#id_waste-0-volume_m3", "2,5")
    page.get_by_role("button", name="Emitir CTR").click()

    notice = page.locator("#ctr-offline-aviso")
    notice.wait_for(timeout=10_000)
    text = notice.inner_text()
    number = re.search(r"PROV-[A-Z0-9]{4}-\d{4}", text).group(0)
    assert number.endswith("-0001")
    assert "CTR provisório, será enviado quando houver conexão." in text
    assert LEFT_AT.strftime("%d/%m/%Y %H:%M") in text
    item = page.locator(f"#ctr-offline li[data-numero='{number}']")
    assert "será enviado quando houver conexão" in item.inner_text()
    # Above the form, where the driver sees it first (below, it was ~5,800 px down).
    assert (
        page.locator("#ctr-offline").bounding_box()["y"]
        < (page.locator("#form-ctr").bounding_box()["y"])
    )
    assert urlsplit(page.url).path == "/transportador/ctrs/novo/"
    assert CTR.objects.count() == 1  # only last week's
    assert no_horizontal_scroll(page)
    shot(page, "ctr-offline-guardado-390.png")

    # 30 h later, still offline, the driver reloads: kept on the phone, in red (past 24 h).
    page.clock.set_system_time(FROZEN_NOW)
    page.reload()
    item = page.locator(f"#ctr-offline li[data-numero='{number}']")
    item.wait_for(timeout=10_000)
    assert "offline-late" in item.get_attribute("class")
    assert "não enviado há mais de 24 h" in item.inner_text()
    assert (
        page.evaluate(
            "getComputedStyle(document.querySelector("
            f"\"li[data-numero='{number}'] .offline-state\"))"
            ".color"
        )
        == "rgb(185, 28, 28)"
    )
    shot(page, "ctr-offline-atrasado-390.png")

    # The connection returns: sent by itself, official number and every finding shown.
    page.context.set_offline(False)
    official = page.locator(f"#ctr-offline li[data-numero='{number}'] .offline-official")
    official.wait_for(timeout=20_000)
    ctr = CTR.objects.get(provisional_number=number)
    assert ctr.pk != earlier.pk
    assert official.inner_text() == ctr.number
    # The phone's clock ticks from LEFT_AT while the driver fills the form.
    assert (
        datetime.timedelta(0)
        <= ctr.provisional_departure_at - LEFT_AT
        < datetime.timedelta(minutes=5)
    )
    assert ctr.transport_date == timezone.localdate(LEFT_AT)
    synced = page.locator(f"#ctr-offline li[data-numero='{number}']").inner_text()
    assert {f["code"] for f in ctr.findings} >= {"PROVISIONAL_SYNC_LATE"}
    for finding in ctr.findings:
        assert finding["message"] in synced and finding["code"] in synced
    assert no_horizontal_scroll(page)
    shot(page, "ctr-offline-enviado-390.png")

    # Its page shows the provisional number; nothing was sent twice.
    page.locator(f"#ctr-offline li[data-numero='{number}'] .offline-official").click()
    page.wait_for_url(f"**/transportador/ctrs/{ctr.number}/")
    assert page.inner_text("#numero-provisorio") == number
    assert CTR.objects.count() == 2
    assert page.recorder.page_errors == []
