"""Corrections after reception in a real headless Chromium, at a phone's
390×844 and a desktop's 1280×800: the transporter opens its received CTR, proposes a smaller
received volume (a zero is sent back beside its field first), the ATT's operator finds it from
its receptions and refuses, the transporter sends it to the Núcleo, the Núcleo decides from
its queue, and the public verification page says "Corrigido em". No sideways scrolling, tap
targets of 44 px on the parties' pages, no JavaScript errors."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from django.utils import timezone

from ctr import closing
from ctr.models import CTR, CorrectionStatus
from tests.ctr_world import build_world, issue_hours_ago
from tests.e2e.conftest import Recorder, log_in

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db", "frozen_today")]

WIDTHS = {"phone": (390, 844), "desktop": (1280, 800)}
MEASURE = (Path(__file__).parent / "measure_layout.js").read_text(encoding="utf-8")


def check_layout(page, what: str, taps: bool = True) -> None:
    measured = page.evaluate(MEASURE)
    assert measured["scrollWidth"] <= measured["innerWidth"], (what, measured["wide"])
    if taps:
        assert not measured["small"], (what, measured["small"])


def submit(page, button: str) -> None:
    with page.expect_navigation():
        page.get_by_role("button", name=button).click()


@pytest.mark.parametrize("width", list(WIDTHS))
def test_a_correction_from_proposal_to_the_nucleo(chromium, live_server, shot, width):
    world = build_world()
    ctr = closing.receive(issue_hours_ago(world, 2), world.operator, Decimal("3"))
    w, h = WIDTHS[width]
    context = chromium.new_context(viewport={"width": w, "height": h}, locale="pt-BR")
    page = context.new_page()
    recorder = Recorder(page, live_server.url)
    try:
        log_in(page, live_server, world.alfa_user)
        page.goto(f"{live_server.url}/transportador/ctrs/{ctr.number}/")
        with page.expect_navigation():
            page.get_by_role("link", name="Propor ou ver correções").click()
        check_layout(page, "corrections page (transporter)")
        shot(page, f"corrections-propose-{width}.png")

        page.fill("#id_received_volume_m3", "0")
        page.fill("#id_reason", "Digitei o volume errado")
        submit(page, "Propor a correção")
        error = page.locator(".field-invalid", has=page.locator("#id_received_volume_m3"))
        assert "maior que zero" in error.inner_text()
        assert page.input_value("#id_reason") == "Digitei o volume errado"  # kept
        check_layout(page, "corrections page with an error")
        shot(page, f"corrections-error-{width}.png")

        page.fill("#id_received_volume_m3", "2,5")
        submit(page, "Propor a correção")
        assert "Correção proposta" in page.inner_text(".flash-messages")
        correction = CTR.objects.get(pk=ctr.pk).corrections.get()
        assert correction.status == CorrectionStatus.PROPOSED

        # The operator finds it from its receptions and refuses it, saying why.
        context.clear_cookies()
        log_in(page, live_server, world.operator)
        page.goto(f"{live_server.url}/recebimentos/")
        with page.expect_navigation():
            page.locator(f'a[href="/ctrs/{ctr.number}/correcoes/"]').click()
        check_layout(page, "corrections page (operator)")
        shot(page, f"corrections-answer-{width}.png")
        page.fill(f"#correcao-{correction.pk} #id_reason", "A balança marcou 3 m³")
        submit(page, "Recusar")
        assert "Correção recusada" in page.inner_text(".flash-messages")

        # The transporter sends it to the Núcleo.
        context.clear_cookies()
        log_in(page, live_server, world.alfa_user)
        page.goto(f"{live_server.url}/ctrs/{ctr.number}/correcoes/")
        submit(page, "Enviar ao Núcleo")
        assert "Núcleo" in page.inner_text(".flash-messages")

        # The Núcleo decides from its queue, linked from its dashboard.
        context.clear_cookies()
        log_in(page, live_server, world.nucleo)
        page.goto(f"{live_server.url}/nucleo/")
        with page.expect_navigation():
            page.get_by_role("link", name="Correções de CTR a decidir").click()
        check_layout(page, "Núcleo queue", taps=False)
        shot(page, f"corrections-nucleo-{width}.png")
        page.locator(f"#correcao-{correction.pk} label", has_text="Aprovar a correção").click()
        page.fill(f"#correcao-{correction.pk} #id_note", "Ticket da balança: 2,5 m³")
        submit(page, "Registrar a decisão")
        assert "Decisão registrada" in page.inner_text(".flash-messages")
        ctr.refresh_from_db()
        assert ctr.received_volume_m3 == Decimal("2.5")

        # Anyone with the paper sees it was corrected, and when.
        context.clear_cookies()
        page.goto(f"{live_server.url}/verificar/{ctr.number}/")
        today = timezone.localdate().strftime("%d/%m/%Y")
        assert f"Corrigido em {today}: volume recebido." in page.inner_text("#correcoes")
        check_layout(page, "public verification", taps=False)
        shot(page, f"corrections-verify-{width}.png")
        # The zero volume's page answered 400 (the form back with its error): expected.
        refused = f"{live_server.url}/ctrs/{ctr.number}/correcoes/propor/"
        assert not recorder.js_errors(refused), recorder.js_errors(refused)
    finally:
        context.close()
