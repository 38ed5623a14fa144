"""The webhooks' page in a real headless Chromium at a phone's 390×844 and a desktop's 1280×800: an
operator registers a webhook, sees its secret once, a delivery to a real receiver on loopback fails
and its attempt is listed with the answer, the replay puts it back in the queue. No sideways
scrolling, tap targets of 44 px, no JavaScript errors."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.ctr_world import build_world, issue_hours_ago
from tests.e2e.conftest import Recorder, log_in
from tests.webhooks.receiver import Receiver
from webhooks import delivery, outbox
from webhooks.models import Delivery, Endpoint

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db", "frozen_today")]

WIDTHS = {"phone": (390, 844), "desktop": (1280, 800)}
MEASURE = (Path(__file__).parent / "measure_layout.js").read_text(encoding="utf-8")


def check_layout(page, label: str) -> None:
    measured = page.evaluate(MEASURE)
    assert measured["scrollWidth"] <= measured["innerWidth"], (label, measured["wide"])
    assert measured["small"] == [], (label, measured["small"])


def submit(page, button: str) -> None:
    with page.expect_navigation():
        page.get_by_role("button", name=button).first.click()


@pytest.mark.parametrize("width", list(WIDTHS))
def test_operator_registers_a_webhook_and_replays_a_failed_delivery(
    chromium, live_server, shot, width
):
    world = build_world()
    receiver = Receiver(statuses=[500]).start()
    w, h = WIDTHS[width]
    context = chromium.new_context(viewport={"width": w, "height": h}, locale="pt-BR")
    page = context.new_page()
    recorder = Recorder(page, live_server.url)
    try:
        log_in(page, live_server, world.operator)
        page.goto(f"{live_server.url}/recebimentos/")
        with page.expect_navigation():
            page.get_by_role("link", name="Webhooks").first.click()
        assert urlsplit(page.url).path == "/integracoes/webhooks/"
        check_layout(page, "list")
        shot(page, f"webhooks-list-{width}.png")

        # Without an event: sent back beside the field, the URL kept.
        page.fill("#id_url", receiver.url)
        submit(page, "Cadastrar")
        assert "Escolha ao menos um evento" in page.inner_text("main")
        assert page.input_value("#id_url") == receiver.url
        check_layout(page, "list with errors")

        page.get_by_label("CTR emitido", exact=True).check()
        page.get_by_label("CTR recebido").check()
        submit(page, "Cadastrar")
        endpoint = Endpoint.objects.get()
        assert page.input_value("#segredo") == endpoint.secret
        check_layout(page, "secret")
        shot(page, f"webhooks-secret-{width}.png")

        outbox.subscriptions.clear()
        issue_hours_ago(world, 1)
        receiver.secret = endpoint.secret
        assert delivery.deliver_due() == {"retry": 1}
        with page.expect_navigation():
            page.get_by_role("link", name="Ver o webhook").click()
        text = page.inner_text("main")
        assert endpoint.secret not in page.content()
        assert "HTTP 500" in text and "resposta 500" in text and "ctr.issued" in text
        check_layout(page, "detail")
        shot(page, f"webhooks-detail-{width}.png")

        submit(page, "Reenviar")
        assert "recolocada na fila" in page.inner_text("main")
        assert Delivery.objects.get().attempts == 0
        assert receiver.received[0].signature_ok
        check_layout(page, "detail after replay")
    finally:
        context.close()
        receiver.stop()
    # The form sent back without an event answers 400: the page that said why.
    refusals = "Failed to load resource: the server responded with a status of 400"
    assert [e for e in recorder.js_errors() if not e.startswith(refusals)] == [], (
        recorder.console_errors
    )
