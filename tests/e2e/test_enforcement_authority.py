"""The authority's queue of records awaiting its decision (Lei 3.978/2007 art. 35) and a case page's
steps not possible yet, in a real headless Chromium at a phone's and a desktop's width: the page
fits, the fine is applied in one tap, nothing waits in the queue after it. Screenshots in the run's
folder (tests/e2e/conftest.py: shot)."""

from __future__ import annotations

import datetime

import pytest
from django.utils import timezone

from fiscalization.models.enforcement import InfractionRecord
from tests.ctr_world import build_world
from tests.e2e.conftest import Recorder, log_in
from tests.e2e.test_phone_layout import MEASURE, MIN_TARGET, WIDTHS
from tests.enforcement_world import record_for

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db")]


@pytest.fixture
def record():
    world = build_world()
    found = record_for(world, opened_at=timezone.now() - datetime.timedelta(days=5), applied=False)
    return world, found


def fits(page) -> list[str]:
    measured = page.evaluate(MEASURE)
    problems = [f"tap target under {MIN_TARGET} px: {s}" for s in measured["small"]]
    if measured["scrollWidth"] > measured["innerWidth"]:
        problems.append(f"scrolls sideways: {measured['wide'][:3]}")
    return problems


@pytest.mark.parametrize("width", list(WIDTHS))
def test_the_authority_applies_the_fine_from_its_queue_in_one_tap(
    chromium, live_server, record, width, shot
):
    world, found = record
    w, h = WIDTHS[width]
    context = chromium.new_context(viewport={"width": w, "height": h}, locale="pt-BR")
    page = context.new_page()
    recorder = Recorder(page, live_server.url)
    log_in(page, live_server, world.authority)
    try:
        page.goto(f"{live_server.url}/fiscalizacao/processos/{found.case_id}/")
        waiting = page.locator(".steps-waiting li").all_inner_texts()
        assert any(t.startswith("Registrar pagamento: depois da aplicação") for t in waiting)
        assert fits(page) == []
        shot(page, f"processo-aguardando-autoridade-{width}.png")

        response = page.goto(f"{live_server.url}/fiscalizacao/autos/aguardando-autoridade/")
        assert response.status == 200
        row = page.locator("tr", has_text=found.number)
        assert row.count() == 1
        assert fits(page) == []
        shot(page, f"fila-autoridade-{width}.png")
        with page.expect_navigation():
            row.get_by_role("button", name="Aplicar a multa").click()
        assert f"Multa do auto {found.number} aplicada" in page.inner_text("body")
        assert page.locator("tr", has_text=found.number).count() == 0
        shot(page, f"fila-autoridade-aplicada-{width}.png")
    finally:
        context.close()
    assert InfractionRecord.objects.get(pk=found.pk).fine_applied_by_id == world.authority.pk
    assert recorder.page_errors == []
