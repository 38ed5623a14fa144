"""The Núcleo's worksites in a real headless Chromium, on a phone (390×844)
and a desktop: the list and its filter, a worksite's page (alerts, chart, comparison, CTRs),
and the map's worksite layers, which the layer list switches. No page scrolls sideways and
every tap target is at least 44 px (tests/e2e/measure_layout.js)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generators.models import PlanStatus
from nucleo import layers
from tests.builders import offset, point
from tests.ctr_world import build_world
from tests.e2e.conftest import Recorder, log_in, map_ready
from tests.generators.suspects_world import days, load, plan, site

# The world issues CTRs against registrations of fixed dates: the clock on TODAY.
pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db", "frozen_today")]

WIDTHS = {"phone": (390, 844), "desktop": (1366, 900)}
MEASURE = (Path(__file__).parent / "measure_layout.js").read_text(encoding="utf-8")


@pytest.fixture
def world():
    world = build_world()
    world.low = site(world, "Avenida Marechal Deodoro da Fonseca, 1200 — bloco B",
                     start=days(-150), end=days(150), permit="ALV-2026-0042")  # fmt: skip
    plan(world.low, A="240", B="60")
    for day, volume in ((-120, "5"), (-90, "4"), (-40, "6"), (-5, "3")):
        load(world, world.low, volume, day=days(day))
    # Apart on the map, each with its own circle.
    world.late = site(
        world,
        "Rua das Palmeiras, 15",
        start=days(-300),
        end=days(-45),
        large=False,
        location=point(*offset(*world.origin.coords, 600, 300)),
    )
    world.idle = site(world, "Rua Parada, 3", start=days(-60), end=days(200),
                      location=point(*offset(*world.origin.coords, -400, 700)))  # fmt: skip
    plan(world.idle, status=PlanStatus.SUBMITTED, A="10")
    return world


def open_page(chromium, live_server, user, path, width):
    w, h = WIDTHS[width]
    context = chromium.new_context(viewport={"width": w, "height": h}, locale="pt-BR")
    page = context.new_page()
    page.recorder = Recorder(page, live_server.url)
    log_in(page, live_server, user)
    response = page.goto(f"{live_server.url}{path}", wait_until="load")
    assert response.status == 200, path
    return context, page


def layout_problems(page, label: str) -> list[str]:
    measured = page.evaluate(MEASURE)
    problems = []
    if measured["scrollWidth"] > measured["innerWidth"]:
        problems.append(f"{label}: scrolls sideways: {measured['wide'][:3]}")
    return problems + [f"{label}: tap target under 44 px: {s}" for s in measured["small"]]


@pytest.mark.parametrize("width", list(WIDTHS))
def test_the_list_filters_and_fits(chromium, live_server, world, shot, width):
    context, page = open_page(chromium, live_server, world.nucleo, "/nucleo/obras/", width)
    assert page.locator("tbody tr").count() == 3
    problems = layout_problems(page, "list")
    shot(page, f"nucleo_obras_{width}.png")
    page.select_option("#id_reason", "suspect")
    with page.expect_navigation():
        page.get_by_role("button", name="Filtrar").click()
    rows = page.locator("tbody tr")
    assert rows.count() == 2
    assert "Volume baixo" in page.inner_text("tbody")
    problems += layout_problems(page, "list filtered")
    shot(page, f"nucleo_obras_suspeitas_{width}.png")
    assert problems == []
    assert page.recorder.js_errors() == []
    context.close()


@pytest.mark.parametrize("width", list(WIDTHS))
def test_the_worksite_page_fits(chromium, live_server, world, shot, width):
    path = f"/nucleo/obras/{world.low.pk}/"
    context, page = open_page(chromium, live_server, world.nucleo, path, width)
    assert page.locator("h1").inner_text().startswith("Avenida Marechal Deodoro")
    assert page.locator(".worksite-alert-low_volume").count() == 1
    assert page.locator("figure.chart svg").count() == 1
    assert page.locator("#previsto-transportado").count() == 1
    assert page.locator("#obra-ctrs ~ .table-wrap tbody tr, #obra-ctrs + div tbody tr").count() == 4
    problems = layout_problems(page, "worksite")
    shot(page, f"nucleo_obra_{width}.png")
    assert problems == []
    assert page.recorder.js_errors() == []
    context.close()


# Where each value of the comparison's first class row and of its totals row starts: the x of
# the cell's text (the label is the cell's ::before, in the grid's first column).
VALUE_LEFT = """() => {
  const left = (cell) => { const range = document.createRange();
    const text = [...cell.childNodes].filter((n) => n.nodeType === 3 && n.textContent.trim());
    range.selectNodeContents(text[text.length - 1]); return range.getBoundingClientRect().left; };
  const table = document.querySelector("#previsto-transportado table");
  const row = (selector) => Object.fromEntries([...table.querySelectorAll(selector)]
    .map((cell) => [cell.dataset.label, left(cell)]));
  return {body: row("tbody tr:first-child td"), total: row("tfoot tr td"),
          totalDisplay: getComputedStyle(table.tFoot).display,
          totalTitle: table.tFoot.querySelector("th").getAttribute("data-label")};
}"""


def test_the_totals_line_up_with_the_classes_on_a_phone(chromium, live_server, world):
    # The totals row (the table's footer) was left a table footer while its rows became cards:
    # its values started ~20 px left of the classes' above them.
    path = f"/nucleo/obras/{world.low.pk}/"
    context, page = open_page(chromium, live_server, world.nucleo, path, "phone")
    measured = page.evaluate(VALUE_LEFT)
    assert measured["totalDisplay"] == "block"
    assert measured["totalTitle"] is None  # "Total" is the card's title, not a "Classe"
    assert set(measured["total"]) == set(measured["body"]) == {
        "Previsto", "Transportado", "Recebido", "Destinado", "Transportado / previsto",
    }  # fmt: skip
    for label, left in measured["total"].items():
        assert abs(left - measured["body"][label]) < 1, (label, left, measured["body"][label])
    context.close()


def worksite_points(page) -> list[dict]:
    """The worksite circles drawn on the map now: their fill colour and popup."""
    name = map_ready(page)
    return page.evaluate(
        """(name) => { const m = window[name]; const out = [];
            m.eachLayer((l) => { const p = l.feature && l.feature.properties;
              if (p && p.popup_html && p.popup_html.includes("Abrir a obra") && l.getLatLng) {
                out.push({fill: l.options.fillColor, popup: p.popup_html}); } });
            return out; }""",
        name,
    )


@pytest.mark.parametrize("width", list(WIDTHS))
def test_the_map_switches_the_worksites_from_plan_to_alert(
    chromium, live_server, world, shot, width
):
    context, page = open_page(chromium, live_server, world.nucleo, "/nucleo/mapa/", width)
    points = worksite_points(page)
    assert len(points) == 3  # by the plan's state only: the alert layer starts off
    assert {p["fill"] for p in points} == {
        layers.PLAN_COLOURS["approved"],
        layers.PLAN_COLOURS["none"],
        layers.PLAN_COLOURS["submitted"],
    }
    problems = layout_problems(page, "map")
    shot(page, f"nucleo_mapa_obras_{width}.png")
    if width == "phone":
        page.locator(".leaflet-control-layers").hover()  # opens the phone's collapsed list
    page.get_by_label(layers.LAYER_WORKSITES).uncheck()
    page.get_by_label(layers.LAYER_SUSPECT_WORKSITES).check()
    points = worksite_points(page)
    assert {p["fill"] for p in points} == {
        layers.ALERT_COLOURS["low_volume"],
        layers.ALERT_COLOURS["overdue"],
        layers.ALERT_COLOURS["idle"],
    }
    assert any("Volume baixo" not in p["popup"] and "Transportados" in p["popup"] for p in points)
    shot(page, f"nucleo_mapa_obras_alerta_{width}.png")
    assert problems == []
    assert page.recorder.js_errors() == []
    context.close()


@pytest.mark.parametrize("width", list(WIDTHS))
def test_the_inspector_sees_the_suspect_worksites_near_a_report(
    chromium, live_server, world, shot, width
):
    from fiscalization.models import DumpingReport

    report = DumpingReport.objects.create(
        municipality=world.town,
        location=point(*offset(*world.origin.coords, 200, 100)),
        category="LOTE_VAGO",
    )
    path = f"/fiscalizacao/denuncias/{report.pk}/suspeitos/"
    context, page = open_page(chromium, live_server, world.fiscal, path, width)
    section = page.locator("section", has=page.locator("#worksites-title"))
    assert section.locator("tbody tr").count() == 3
    assert "Volume baixo" in section.inner_text()
    map_ready(page, ".suspects-map")  # measured whole (the map is built in steps)
    page.evaluate("window.scrollTo(0, 0)")
    problems = layout_problems(page, "suspects")
    shot(page, f"fiscalizacao_suspeitos_obras_{width}.png")
    assert problems == []
    assert page.recorder.js_errors() == []
    context.close()
