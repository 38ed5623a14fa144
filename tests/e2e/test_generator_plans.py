"""The PGRCC in a real headless Chromium, at a phone's 390×844 and a desktop's 1280×800: the
generator opens its worksite's plan, finds the volumes estimated from the built area, ticks an
unlicensed transporter's id that a stale page still offered and is told its name and why beside the
list, with what it typed kept; it sends a licensed one; the Núcleo finds the plan in its queue,
reads the estimate beside the declared volumes, returns it without a note (refused at the field),
then approves it; the generator sees the history. No sideways scrolling, no network beyond the live
server, no JavaScript errors."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest

from ctr.models import WorkKind, Worksite
from generators.models import PlanStatus, WastePlan
from tests.ctr_world import build_world
from tests.e2e.conftest import Recorder, log_in
from tests.e2e.test_onward_pages import WIDTHS, fits, submit
from tests.e2e.test_phone_layout import MEASURE, MIN_TARGET

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db", "frozen_today")]


def small_targets(page) -> list[str]:
    """The tap targets under 44 px (tests/e2e/test_phone_layout.py's rule)."""
    return [f"{page.url}: {s}" for s in page.evaluate(MEASURE)["small"]]


@pytest.mark.parametrize("width", list(WIDTHS))
def test_generator_sends_its_plan_and_the_nucleo_decides(chromium, live_server, shot, width):
    world = build_world()
    site = Worksite.objects.create(
        generator=world.gama,
        address="Av. das Obras, 100 – Jardim do Vale",
        location=world.origin,
        municipality=world.town,
        built_area_m2=Decimal("2000"),
        work_kind=WorkKind.NEW_BUILDING,
        permit_number="ALV-2026-15",
    )
    w, h = WIDTHS[width]
    context = chromium.new_context(viewport={"width": w, "height": h}, locale="pt-BR")
    page = context.new_page()
    recorder = Recorder(page, live_server.url)
    try:
        log_in(page, live_server, world.generator_user)
        page.goto(f"{live_server.url}/gerador/obras/{site.pk}/pgrcc/")
        assert page.input_value("#id_volume_A") == "185"  # 2 000 m² × 0,0925
        assert page.input_value("#id_volume_B") == "47,5"
        assert fits(page), "the plan form scrolls sideways"
        shot(page, f"plan-form-{width}.png")
        small = small_targets(page)

        # A stale page: Beta was offered when it loaded, its licence lapsed since.
        page.get_by_label("Entulhos Beta ME").check()
        page.get_by_label("Caçambas Alfa Ltda.").check()
        page.get_by_label("ATT — ATT").check()
        world.beta.licences.update(valid_until=datetime.date(2026, 11, 29))
        page.fill("#id_volume_A", "150")
        submit(page, "Enviar ao Núcleo")
        message = (
            "O transportador “Entulhos Beta ME” não tem licença válida hoje em "
            "Guaratinguetá (teste)/SP (venceu em 29/11/2026)."
        )
        assert message in page.inner_text("fieldset.field-invalid")
        assert page.input_value("#id_volume_A") == "150"
        assert not WastePlan.objects.exists()
        assert fits(page), "the form with its errors scrolls sideways"
        shot(page, f"plan-form-refused-{width}.png")
        small += small_targets(page)

        page.get_by_label("Caçambas Alfa Ltda.").check()
        page.get_by_label("ATT — ATT").check()
        submit(page, "Enviar ao Núcleo")
        assert "PGRCC enviado ao Núcleo para análise." in page.inner_text(".flash-messages")
        plan = WastePlan.objects.get()
        assert plan.status == PlanStatus.SUBMITTED

        # The Núcleo: the queue, the review, a return without a note refused.
        context.clear_cookies()
        log_in(page, live_server, world.nucleo)
        page.goto(f"{live_server.url}/nucleo/pgrcc/")
        assert fits(page), "the queue scrolls sideways"
        shot(page, f"plan-queue-{width}.png")
        small += small_targets(page)
        with page.expect_navigation():
            page.get_by_role("link", name=site.address).click()
        review = (
            page.inner_text("main") if page.locator("main").count() else page.inner_text("body")
        )
        assert "Declarado" in review and "Estimado" in review
        assert fits(page), "the review scrolls sideways"
        shot(page, f"plan-review-{width}.png")
        small += small_targets(page)
        page.get_by_label("Devolver para ajustes").check()
        submit(page, "Registrar decisão")
        assert "Escreva no parecer o que o gerador deve ajustar." in page.inner_text("body")
        page.get_by_label("Aprovar").check()
        page.fill("#id_note", "De acordo com o alvará.")
        submit(page, "Registrar decisão")
        assert "PGRCC v1 aprovado." in page.inner_text(".flash-messages")
        plan.refresh_from_db()
        assert plan.status == PlanStatus.APPROVED
        page.goto(f"{live_server.url}/nucleo/pgrcc/indices/")
        assert page.input_value("#id_rate_new_building_A") == "0,0925"
        assert fits(page), "the rates page scrolls sideways"
        shot(page, f"plan-rates-{width}.png")
        small += small_targets(page)
        assert set(site.plan_transporters.all()) == {world.alfa}

        # The generator: the plan in force and its history.
        context.clear_cookies()
        log_in(page, live_server, world.generator_user)
        page.goto(f"{live_server.url}/gerador/obras/{site.pk}/pgrcc/")
        history = page.inner_text("#historico + div")
        assert "Aprovado" in history and "De acordo com o alvará." in history
        assert fits(page), "the page with its history scrolls sideways"
        shot(page, f"plan-history-{width}.png")
        small += small_targets(page)
        assert not small, f"tap targets under {MIN_TARGET} px:\n" + "\n".join(small)
        # The two refusals answer 400, as they should; anything else is an error.
        refusals = "Failed to load resource: the server responded with a status of 400"
        assert [e for e in recorder.js_errors() if not e.startswith(refusals)] == []
    finally:
        context.close()
