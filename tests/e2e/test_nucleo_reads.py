"""The Núcleo's pages read in a minute, in a real headless Chromium at both widths: the dashboard's
key figures first, its sections close, its "baixar CSV" links are 44 px tall on a phone and its
counts are spaced from their words; the map's layer list closes and its legend is a key; the menu's
queues open with their counts. Screenshots in the run's folder."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Recorder, log_in, map_ready
from tests.e2e.test_nucleo_pages import world  # noqa: F401

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db")]
PERIOD = "date_from=2026-01-01&date_to=2026-12-31"
WIDTHS = [(1366, 900), (390, 844)]


def open_page(chromium, live_server, user, path: str, width: int, height: int):
    context = chromium.new_context(viewport={"width": width, "height": height}, locale="pt-BR")
    page = context.new_page()
    page.recorder = Recorder(page, live_server.url)
    log_in(page, live_server, user)
    response = page.goto(f"{live_server.url}{path}", wait_until="load")
    assert response.status == 200
    return context, page


@pytest.mark.parametrize(("width", "height"), WIDTHS)
def test_the_dashboard_reads_first_its_key_figures(
    chromium,
    live_server,
    world,  # noqa: F811
    shot,
    width,
    height,
):
    context, page = open_page(
        chromium, live_server, world.nucleo, f"/nucleo/?{PERIOD}", width, height
    )
    try:
        summary = page.locator("#resumo").bounding_box()
        first = page.locator(".dashboard-section").first.bounding_box()
        assert summary["y"] < first["y"]
        # A section closes from its title, and opens again.
        section = page.locator("details#classes")
        section.locator("summary").click()
        assert section.evaluate("d => d.open") is False
        assert not page.locator("#classes figure.chart").is_visible()
        section.locator("summary").click()
        assert section.evaluate("d => d.open") is True
        # The CSV links are 44 px tall on a phone.
        if width < 960:
            heights = page.locator("a.csv-link").evaluate_all(
                "links => links.map(a => a.getBoundingClientRect().height)"
            )
            assert heights and min(heights) >= 44, heights
        # "0 grande(s) gerador(es)", the count spaced from its words.
        idle = page.locator("#obras a", has_text="gerador(es)")
        if idle.count():
            text = idle.first.inner_text()
            assert " grande(s)" in text and not text[0].isalpha(), text
        shot(page, f"nucleo-painel-resumo-{width}.png")
        assert page.recorder.js_errors() == []
    finally:
        context.close()


@pytest.mark.parametrize(("width", "height"), WIDTHS)
def test_the_maps_layer_list_closes_and_its_legend_is_a_key(
    chromium,
    live_server,
    world,  # noqa: F811
    shot,
    width,
    height,
):
    path = f"/nucleo/mapa/?{PERIOD}"
    context, page = open_page(chromium, live_server, world.nucleo, path, width, height)
    try:
        map_ready(page)
        control = page.locator(".leaflet-control-layers")
        expanded = "c => c.classList.contains('leaflet-control-layers-expanded')"

        def open_list():
            # A phone's closed list opens when touched (Leaflet: mouseenter), a desktop's
            # from its icon.
            page.mouse.move(0, 0)
            control.hover()
            if not control.evaluate(expanded):
                page.locator(".leaflet-control-layers-toggle").click()
            assert control.evaluate(expanded)

        if not control.evaluate(expanded):  # a phone starts with it closed
            open_list()
        page.get_by_role("button", name="Recolher camadas").click()
        assert not control.evaluate(expanded)
        assert page.locator(".leaflet-control-layers-toggle").is_visible()
        open_list()
        # The legend: a colour and a few words per entry, no paragraph of prose.
        entries = page.locator(".map-key li")
        assert entries.count() >= 15
        assert entries.locator(".ctr-swatch").count() == entries.count()
        longest = max(len(text) for text in entries.all_inner_texts())
        assert longest <= 60, longest
        shot(page, f"nucleo-mapa-legenda-{width}.png")
        assert page.recorder.js_errors() == []
    finally:
        context.close()


@pytest.mark.parametrize(("width", "height"), WIDTHS)
def test_the_menu_lists_what_waits(
    chromium,
    live_server,
    world,  # noqa: F811
    shot,
    width,
    height,
):
    context, page = open_page(chromium, live_server, world.nucleo, "/nucleo/obras/", width, height)
    try:
        if page.locator("#menu-botao").is_visible():
            page.locator("#menu-botao").click()
        page.locator("#pendencias summary").click()
        links = page.locator("#pendencias a")
        assert links.count() == 4
        for link in links.all():
            box = link.bounding_box()
            assert box["height"] >= 44 and box["width"] > 0
        shot(page, f"menu-pendencias-{width}.png")
        links.filter(has_text="PGRCC").click()
        page.wait_for_url("**/nucleo/pgrcc/")
        assert page.recorder.js_errors() == []
    finally:
        context.close()
