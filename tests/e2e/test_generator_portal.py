"""The generator's pages in a real headless Chromium, at a phone's 390×844 and a desktop's 1366×900:
from sign-in to its home (worksites, recent CTRs), the list narrowed to one worksite, the map of its
loads (a line per CTR, coloured by status), and a CTR's page with the reception and where the waste
is now, where it confirms the departure in the dialog. No sideways scrolling, every tap target at
least 44 px, no network beyond the live server, no JavaScript errors."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from ctr import closing
from tests.builders import set_parameters
from tests.ctr.onward_world import onward
from tests.ctr_world import build_world, make_user
from tests.e2e.conftest import Recorder, log_in, map_ready
from tests.generators.portal_world import MARIA, issue

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db", "frozen_today")]

WIDTHS = {"phone": (390, 844), "desktop": (1366, 900)}
MEASURE = (Path(__file__).parent / "measure_layout.js").read_text(encoding="utf-8")


def gama_world():
    world = build_world()
    set_parameters(world.town, generator_confirmation_required=True)
    recycling_operator = make_user("operador_reciclagem", facility=world.recycling)
    world.received = issue(world, "alfa")
    closing.receive(world.received, world.operator, Decimal("3"))
    closing.receive(onward(world, {"A": "2"}), recycling_operator, Decimal("2"))
    world.refused = issue(world, "beta", address="Rua Dois, 2")
    closing.refuse(world.refused, world.operator, "Carga misturada com lixo doméstico")
    world.issued = issue(world, "beta")
    issue(world, generator=MARIA, address="Rua das Flores, 10")  # someone else's
    return world


def layout_problems(page, label: str) -> list[str]:
    measured = page.evaluate(MEASURE)
    problems = [f"{label}: tap target under 44 px: {s}" for s in measured["small"]]
    if measured["scrollWidth"] > measured["innerWidth"]:
        problems.append(f"{label}: scrolls sideways: {measured['wide'][:3]}")
    return problems


@pytest.mark.parametrize("width", list(WIDTHS))
def test_generator_follows_its_loads_and_confirms_a_departure(chromium, live_server, shot, width):
    world = gama_world()
    w, h = WIDTHS[width]
    context = chromium.new_context(viewport={"width": w, "height": h}, locale="pt-BR")
    page = context.new_page()
    recorder = Recorder(page, live_server.url)
    problems: list[str] = []
    try:
        log_in(page, live_server, world.generator_user)
        page.goto(f"{live_server.url}/painel/")
        assert urlsplit(page.url).path == "/gerador/"
        assert "Construtora Gama Ltda." in page.inner_text("h1")
        assert "Rua Dois, 2" in page.inner_text("#secao-obras")
        assert world.received.number in page.inner_text("#secao-recentes")
        assert "Rua das Flores" not in page.inner_text("main")
        # The received and the refused load too: they did leave the worksite.
        assert "3 CTRs aguardam" in page.inner_text("#aguardando-confirmacao")
        problems += layout_problems(page, "home")
        shot(page, f"generator-home-{width}.png")

        with page.expect_navigation():
            page.locator("#secao-obras").get_by_role(
                "link", name="CTRs da obra Rua Dois, 2"
            ).click()
        table = page.inner_text("main table")
        assert world.refused.number in table and world.received.number not in table
        problems += layout_problems(page, "list")
        shot(page, f"generator-list-{width}.png")

        page.goto(f"{live_server.url}/gerador/mapa/")
        map_ready(page, "#mapa-ctrs")  # every layer drawn (a map is built in steps)
        # Three loads of its own: three lines (plus the bacias and outline there may be).
        assert page.locator("#mapa-ctrs .leaflet-overlay-pane path").count() >= 3
        assert "3 CTRs" in page.inner_text("#resumo-mapa")
        problems += layout_problems(page, "map")
        shot(page, f"generator-map-{width}.png")

        page.goto(f"{live_server.url}/gerador/ctrs/{world.received.number}/")
        assert "Destinação final: Reciclagem" in page.inner_text("#secao-destino")
        assert "Volume recebido: 3 m³" in page.inner_text("#secao-historico")
        problems += layout_problems(page, "detail")
        shot(page, f"generator-detail-{width}.png")

        page.goto(f"{live_server.url}/gerador/ctrs/{world.issued.number}/")
        page.get_by_role("button", name="Confirmar a saída da carga").click()
        dialog = page.locator("dialog.confirm-dialog")
        assert dialog.is_visible()
        shot(page, f"generator-confirm-dialog-{width}.png")
        with page.expect_navigation():
            dialog.get_by_role("button", name="Sim, confirmar a saída").click()
        assert f"Saída do {world.issued.number} confirmada." in page.inner_text("main")
        assert "Saída da carga confirmada em" in page.inner_text("#secao-confirmacao")
        problems += layout_problems(page, "detail after confirming")
        shot(page, f"generator-confirmed-{width}.png")
    finally:
        context.close()
    assert not problems, "\n".join(problems)
    assert recorder.js_errors() == []
    world.issued.refresh_from_db()
    assert world.issued.generator_confirmed_by == world.generator_user
