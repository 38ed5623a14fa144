"""The Núcleo's view of where the waste went: the flow diagram from the
bacias through the first areas to the final destinations, the recycling rate of class A by
month (art. 18 sole §), each ATT's stock over the period with its stale-stock alerts, and the
map's layer of final destinations."""

import csv
import datetime
import io
import json
import re
from decimal import Decimal

import folium
import pytest
from django.test import Client

from ctr import analytics
from ctr.custody.chain import Flow, Outcome
from maps.base import render_parts
from nucleo import charts, flows, layers
from pev_network.models import CatchmentBasin
from tests.builders import multi, offset, square
from tests.ctr_world import build_world
from tests.nucleo.flows_world import build_flows

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen_today")]

D = datetime.date
PERIOD = "date_from=2026-10-01&date_to=2026-11-30"


@pytest.fixture
def world():
    return build_flows(build_world())


def nucleo(world) -> Client:
    client = Client()
    client.force_login(world.nucleo)
    return client


def table(world, name: str, query: str = PERIOD) -> list[dict]:
    response = nucleo(world).get(f"/nucleo/?{query}&csv={name}")
    assert response.status_code == 200
    text = response.content.decode("utf-8-sig")
    return list(csv.DictReader(io.StringIO(text), delimiter=";"))


def br(text: str) -> Decimal:
    return Decimal(text.replace(".", "").replace(",", "."))


def test_recycling_rate_is_what_reached_recycling_of_what_reached_a_final_destination(world):
    rows = {r["mês"]: r for r in table(world, "reciclagem")}
    october, november = rows["10/2026"], rows["11/2026"]
    # October: its 4 m³ were the first out of the ATT, to the recycling area.
    assert october["taxa de reciclagem (%)"] == "100,0"
    # November: 2 m³ to recycling and 1 recycled at the ATT, against 2 m³ the ATT sent to the
    # landfill and 3 m³ taken straight there; the 5 m³ still at the ATT wait outside the rate.
    assert br(november["reciclada ou reutilizada (m³)"]) == 3
    assert br(november["em aterro de RCC (m³)"]) == 5
    assert november["taxa de reciclagem (%)"] == "37,5"
    assert br(november["em estoque ou trânsito (m³)"]) == 5


def flow(outcome, m3, kind="ATT", waste_class="A") -> Flow:
    return Flow(None, 1, "ATT", 2, kind, outcome, waste_class, D(2026, 9, 1), Decimal(m3))


def test_a_month_with_nothing_at_a_final_destination_yet_has_no_rate():
    [september] = flows.recycling_by_month(
        [flow(Outcome.STOCK, "4"), flow(Outcome.TRANSIT, "1"), flow(Outcome.REFUSED, "2"),
         flow(Outcome.DESTINED, "9", "LANDFILL", waste_class="B")]
    )  # fmt: skip
    assert september.rate_pct is None
    assert (september.final, september.pending, september.unknown) == (0, 5, 2)


def test_recycled_on_site_and_at_a_recycling_area_both_count_as_recycled():
    [month] = flows.recycling_by_month(
        [flow(Outcome.PROCESSED, "1"), flow(Outcome.DESTINED, "2", "RECYCLING"),
         flow(Outcome.DESTINED, "1", "LANDFILL")]
    )  # fmt: skip
    assert (month.recycled, month.landfilled, month.rate_pct) == (3, 1, 75.0)


def test_only_class_a_counts_in_the_rate(world):
    months = [r["mês"] for r in table(world, "reciclagem", f"{PERIOD}&waste_class=B")]
    assert months == []


def test_the_flow_table_adds_up_to_what_the_worksites_carried(world):
    rows = table(world, "fluxos")
    assert sum(br(r["volume (m³)"]) for r in rows) == 19  # 4 + 10 + 3 + 2
    routes = {(r["bacia de origem"], r["primeira área"], r["onde está agora"]): r for r in rows}
    assert routes["Bacia Centro", "ATT", "Reciclagem"]["situação"] == "reciclado ou reutilizado"
    assert br(routes["Bacia Centro", "ATT", "Reciclagem"]["volume (m³)"]) == 6
    assert br(routes["Bacia Centro", "Direto ao destino final", "Aterro"]["volume (m³)"]) == 3
    assert br(routes["Bacia Centro", "ATT", "Em estoque"]["volume (m³)"]) == 7  # 5 A + 2 B
    assert routes["Bacia Centro", "ATT", "Beneficiado na própria área"]["volume (m³)"] == "1,0"


def test_the_flow_diagram_is_drawn_for_the_phone_and_the_desktop_in_portuguese(world):
    html = nucleo(world).get(f"/nucleo/?{PERIOD}").content.decode()
    assert html.count('<svg xmlns="http://www.w3.org/2000/svg" role="img"') == 2
    assert re.search(r'class="flow-diagram" viewBox="0 0 960 ', html)
    assert re.search(r'class="flow-diagram" viewBox="0 0 350 ', html)
    # Each section a <details>, so the key figures read first and a section opens on a tap.
    sections = re.findall(r'<details class="dashboard-section" id="(?:fluxos|reciclagem|estoque)"'
                          r".*?</details>", html, re.S)  # fmt: skip
    assert len(sections) == 3
    text = " ".join(sections)
    assert "Bacia Centro" in text and "Direto ao destino final" in text
    for code in ("RECYCLING", "LANDFILL", "destined", "processed", ">recycled", "landfilled"):
        assert code not in text, code


def test_stale_stock_is_listed_with_its_area_class_volume_and_since_when(world):
    [alert] = table(world, "estoque_parado")
    assert alert == {"área": "ATT", "classe": "Classe A", "volume (m³)": "5,0",
                     "acima de zero desde": "10/10/2026", "dias": "51"}  # fmt: skip
    # Class B, above zero since 03/11 (27 days), is under the town's 30 days.


def test_the_stock_of_each_day_per_class(world):
    rows = table(world, "estoque_diario")
    by_day = {(r["classe"], r["dia"]): br(r["estoque (m³)"]) for r in rows}
    assert by_day["Classe A", "09/10/2026"] == 0
    assert by_day["Classe A", "01/11/2026"] == 14
    assert by_day["Classe A", "05/11/2026"] == 8
    assert by_day["Classe A", "30/11/2026"] == 5
    assert by_day["Classe B", "30/11/2026"] == 2
    assert {r["área"] for r in rows} == {"ATT"}  # the landfill is an end, not a passage
    [a, b] = table(world, "estoque")
    assert (a["classe"], a["no último dia (m³)"], a["máximo no período (m³)"]) == (
        "Classe A", "5,0", "14,0")  # fmt: skip


def test_the_bacia_of_an_att_is_not_the_origin_of_what_the_att_ships_on(world):
    CatchmentBasin.objects.create(
        municipality=world.town, name="Bacia da ATT", served_by=world.pev,
        area=multi(square(*offset(*world.att.area.centroid.coords, -400, -400), 800)),
    )  # fmt: skip
    rows = {r["bacia"]: r for r in table(world, "bacias")}
    assert set(rows) == {"Bacia Centro"}  # the ATT's 8 m³ onward are not the bacia's waste
    assert rows["Bacia Centro"]["volume (m³)"] == "19,0"


def test_a_long_period_is_sampled_weekly():
    days = flows.series_days(D(2026, 1, 1), D(2026, 12, 31))
    assert days[0] == D(2026, 1, 1) and days[1] == D(2026, 1, 4)  # the first Sunday
    assert days[-1] == D(2026, 12, 31)
    assert len(days) == 54
    assert len(flows.series_days(D(2026, 9, 1), D(2026, 11, 30))) == 91  # daily up to 92


def in_script(text: str) -> str:
    """`text` as the map's script writes it (JSON, non-ASCII escaped)."""
    return json.dumps(text)[1:-1]


def test_the_map_layer_of_final_destinations_starts_off(world):
    html = nucleo(world).get(f"/nucleo/mapa/?{PERIOD}").content.decode()
    assert in_script(layers.LAYER_DESTINATIONS) in html
    assert in_script("Bacia Centro → ATT → Reciclagem") in html
    assert "4 linha(s) de destinação final" in html


def test_map_lines_run_from_the_bacia_through_the_first_area_to_the_end(world):
    flt = analytics.CTRFilter(D(2026, 10, 1), D(2026, 11, 30), world.town.pk)
    found = analytics.custody_flows(flt)
    names = flows.Names.of(found)
    lines, omitted, _ = flows.map_lines(found, names)
    by_route = {line.route: line for line in lines}
    assert set(by_route) == {
        "Bacia Centro → ATT → Reciclagem", "Bacia Centro → ATT → Aterro",
        "Bacia Centro → ATT", "Bacia Centro → Aterro",
    }  # fmt: skip
    assert by_route["Bacia Centro → ATT → Reciclagem"].volume_m3 == 6
    assert len(by_route["Bacia Centro → ATT → Reciclagem"].coordinates) == 3
    assert by_route["Bacia Centro → ATT"].fate == flows.Fate.RECYCLED  # recycled at the ATT
    assert omitted == 0
    # A window far away keeps none; the stock at the ATT is never a line.
    far, *_ = flows.map_lines(found, names, bbox=(-50.0, -30.0, -49.0, -29.0))
    assert far == []


def test_the_final_destinations_layer_is_off_until_turned_on():
    line = flows.MapLine([(-45.2, -22.8), (-45.1, -22.7)], "Bacia → Aterro", "landfilled", 3.0)
    m = layers.nucleo_map(
        facilities={"type": "FeatureCollection", "features": []}, basins=None, outline=None,
        flows=[], overdue=[], reports=[], facility_admin_url="/admin/{id}/",
        ctr_list_url="/ctrs/?f={facility}", destinations=[line],
    )  # fmt: skip
    script = render_parts(m).script
    assert in_script("Bacia → Aterro") in script and "aterro de RCC" in script
    [group] = [
        child for child in m._children.values()
        if isinstance(child, folium.FeatureGroup) and layers.LAYER_DESTINATIONS in child.layer_name
    ]  # fmt: skip
    assert group.show is False
    assert f"{group.get_name()}.addTo(" not in script


def test_the_diagram_gives_each_node_the_height_of_its_volume():
    svg = charts.flow_diagram(
        ("de", "por", "para"), [["a"], ["b", "c"], ["d"]],
        [(0, "a", "b", "x", 30.0), (0, "a", "c", "x", 10.0), (1, "b", "d", "x", 30.0),
         (1, "c", "d", "x", 10.0)],
        {"x": "#000000"}, {"x": "tudo"}, "teste", width=600,
    )  # fmt: skip
    heights = {
        name: float(h)
        for h, name in re.findall(r'height="([\d.]+)" fill="#344054"><title>(\w)', str(svg))
    }
    assert heights["a"] == pytest.approx(heights["d"])
    assert heights["b"] == pytest.approx(3 * heights["c"])
    assert heights["a"] == pytest.approx(heights["b"] + heights["c"])
    assert str(svg).count("<path ") == 4


def test_a_route_is_told_in_the_words_of_the_law():
    flow = Flow(None, 1, "ATT", 2, "RECYCLING", Outcome.DESTINED, "A", D(2026, 11, 1), Decimal(2))
    names = flows.Names({}, {1: ("ATT Vale", "ATT", (0, 0)), 2: ("Recicla", "RECYCLING", (1, 1))})
    [route] = flows.routes([flow], names)
    assert (route.basin, route.first, route.end, route.fate) == (
        "fora das bacias", "ATT Vale", "Recicla", flows.Fate.RECYCLED)  # fmt: skip


def test_onward_ctrs_are_not_counted_again_in_the_volume_by_class_and_month(world):
    # The worksites carried 4 + 10 + 3 m³ of A and 2 m³ of B; the ATT shipped 6 + 2 m³ of A
    # on: the same waste, not more of it.
    flt = analytics.CTRFilter(date_from=D(2026, 10, 1), date_to=D(2026, 11, 30))
    by_class = {}
    for _month, waste_class, volume in analytics.volume_by_class_and_month(flt):
        by_class[waste_class] = by_class.get(waste_class, 0) + volume
    assert by_class == {"A": 17.0, "B": 2.0}
    totals = analytics.totals(flt)
    assert (totals["onward_ctrs"], totals["onward_volume_m3"]) == (2, 8.0)
    assert totals["ctrs"] == 6
    page = nucleo(world).get(f"/nucleo/?{PERIOD}").content.decode()
    assert "2 CTR(s) de saída de ATT ou PEV com 8,0 m³" in page
