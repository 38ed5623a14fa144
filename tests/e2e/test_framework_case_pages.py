"""The case page of the sibling frameworks in a real headless Chromium at a
phone's and a desktop's width: under Rio de Janeiro's law, no payment date but the statement
that the law sets none; under Ferraz de Vasconcelos', the yearly IGP update of art. 9 §6 with
the year not entered. The page fits; screenshots in the run's folder (conftest: shot)."""

from __future__ import annotations

import pytest

from tests.ctr_world import build_world
from tests.e2e.conftest import Recorder, log_in
from tests.e2e.test_enforcement_authority import fits
from tests.e2e.test_phone_layout import WIDTHS
from tests.enforcement_world import (
    RIO,
    at,
    ensure_frameworks,
    entries,
    fine_applied,
    govern_by,
    open_case,
)
from tests.fiscalization.test_ferraz_table_and_index import draw, enter, ferraz

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db")]


def rio_record(world):
    from fiscalization import enforcement

    govern_by(RIO, world.town)
    case = open_case(world, at(2025, 3, 10, 9))
    record = enforcement.draw_up_record(
        case, entries("INF-01"), delivery_method="HAND", signed_by_offender=True,
        drawn_up_at=at(2025, 3, 10, 11),
    )  # fmt: skip
    return fine_applied(world, record)


def ferraz_record(world):
    lines = ferraz(world, base_year=2024)
    enter(world, 2025, "3.5", "FGV, IGP-DI (exemplo de teste)")
    return draw(world, at(2026, 3, 10, 9), lines["ART9-I"])


@pytest.mark.parametrize("width", list(WIDTHS))
@pytest.mark.parametrize(
    "name, build, expected",
    [
        ("rio", rio_record, "A lei não fixa prazo de pagamento da multa"),
        ("ferraz", ferraz_record, "variação do IGP de 2026 não cadastrada"),
    ],
)
def test_the_case_page_says_what_the_law_gives(
    chromium, live_server, width, name, build, expected, shot
):
    ensure_frameworks()  # a transactional test's flush took the migration's frameworks
    world = build_world()
    record = build(world)
    w, h = WIDTHS[width]
    context = chromium.new_context(viewport={"width": w, "height": h}, locale="pt-BR")
    page = context.new_page()
    recorder = Recorder(page, live_server.url)
    log_in(page, live_server, world.fiscal)
    try:
        page.goto(f"{live_server.url}/fiscalizacao/processos/{record.case_id}/")
        assert expected in page.inner_text("body")
        assert fits(page) == []
        shot(page, f"processo-{name}-{width}.png")
    finally:
        context.close()
    assert recorder.page_errors == []
