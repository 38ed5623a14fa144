"""Every municipality's public pages in a real headless Chromium: those of two
municipalities side by side (the test town and a neighbour 20 km east), at a phone's 390×844 and a
desktop's 1366×900: no horizontal scrolling, every tap target at least 44 px (the rules of
tests/e2e/test_phone_layout.py), no JavaScript error, and the map of the neighbour's page drawn
around the neighbour with its own network. Screenshots of each page go to this run's folder
(tests/e2e/conftest.py)."""

from __future__ import annotations

import pytest

from fiscalization import intake
from pev_network.models import FacilityKind
from tests import dumping_fixtures as fx
from tests.builders import ORIGIN, licensed_facility, municipality, offset, square
from tests.ctr_world import build_world, issue_hours_ago
from tests.e2e.conftest import Recorder, map_ready
from tests.e2e.test_phone_layout import MEASURE, MIN_TARGET, WIDTHS

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db", "frozen_today")]

TOWN, NEIGHBOUR = "3518404", "3502507"


@pytest.fixture
def world():
    world = build_world()
    world.neighbour = municipality(NEIGHBOUR, "Aparecida (teste)", east_m=20_000)
    licensed_facility(
        FacilityKind.PEV,
        square(*offset(*ORIGIN, 20_000, 0), 30),
        "PEV Vizinho Norte",
        world.neighbour,
    )
    world.ctr = issue_hours_ago(world, 1)
    world.report = intake.create_report(
        intake.NewReport(fx.at(east_m=20_000, north_m=300), "LOTE_VAGO")
    )
    return world


def pages(world) -> list[str]:
    return [
        "/",
        f"/m/{TOWN}/",
        f"/m/{NEIGHBOUR}/",
        f"/m/{NEIGHBOUR}/onde-descartar/",
        "/onde-descartar/?latitude=-22.8073&longitude=-44.9950&volume_m3=0,5",
        f"/m/{NEIGHBOUR}/denunciar/",
        f"/denuncia/{world.report.protocol}/",
        f"/m/{NEIGHBOUR}/verificar/",
        f"/verificar/{world.ctr.number}/",
    ]


@pytest.mark.parametrize("width", list(WIDTHS))
def test_the_municipal_public_pages_fit_the_screen_and_the_finger(
    chromium, live_server, world, width, shot
):
    w, h = WIDTHS[width]
    context = chromium.new_context(viewport={"width": w, "height": h}, locale="pt-BR")
    page = context.new_page()
    recorder = Recorder(page, live_server.url)
    problems: list[str] = []
    try:
        for number, path in enumerate(pages(world)):
            response = page.goto(live_server.url + path)
            assert response.status == 200, f"{path}: HTTP {response.status}"
            page.wait_for_load_state("load")
            measured = page.evaluate(MEASURE)
            if measured["scrollWidth"] > measured["innerWidth"]:
                problems.append(
                    f"{path}: scrolls sideways ({measured['scrollWidth']} px in "
                    f"{measured['innerWidth']}): {measured['wide'][:3]}"
                )
            problems += [
                f"{path}: tap target under {MIN_TARGET} px: {s}" for s in measured["small"]
            ]
            shot(page, f"municipio-{width}-{number:02d}.png")
    finally:
        context.close()
    assert not problems, "\n".join(problems)
    assert recorder.js_errors() == []


def test_the_neighbours_map_is_drawn_around_it_with_its_own_network(chromium, live_server, world):
    context = chromium.new_context(viewport={"width": 390, "height": 844}, locale="pt-BR")
    page = context.new_page()
    recorder = Recorder(page, live_server.url)
    try:
        page.goto(live_server.url + f"/m/{NEIGHBOUR}/onde-descartar/")
        map_ready(page)
        assert page.locator("h1").inner_text().endswith("em Aparecida (teste)/SP")
        map_name = map_ready(page)
        centre_lon = page.evaluate(f"() => window['{map_name}'].getCenter().lng")
        # The neighbour's square runs from 10 to 30 km east of the town's centre.
        west, _ = offset(*ORIGIN, 10_000, 0)
        east, _ = offset(*ORIGIN, 30_000, 0)
        assert west < centre_lon < east
        page.locator("details.facility-list summary").click()
        listed = page.locator("details.facility-list .facility-name").all_inner_texts()
        assert listed == ["PEV Vizinho Norte"]
    finally:
        context.close()
    assert recorder.js_errors() == []
