"""The dashboard's charts are drawn on the server as SVG by hand (the dashboard in ≤ 1 s; matplotlib
took about a second for five charts): what they draw is what the tables say, their text is text, and
their scales hold the values."""

from __future__ import annotations

import datetime
import re

import pytest

from nucleo import charts
from tests.nucleo.test_nucleo_dashboard import nucleo, world  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen_today")]


def svg_of(html: str, label: str) -> str:
    found = re.search(rf'<svg role="img" aria-label="{label}".*?</svg>', html, re.S)
    assert found, label
    return found[0]


def numbers(texts: list[str]) -> list[float]:
    return [float(t.replace(".", "").replace(",", ".")) for t in texts]


def test_the_class_chart_draws_the_tables_volumes_as_text_and_bars(world):  # noqa: F811
    html = nucleo(world).get("/nucleo/?date_from=2026-09-01&date_to=2026-11-30").content.decode()
    svg = svg_of(html, "Volume por classe e mês")
    # The legend and the months are text a reader can select (and a screen reader reads).
    assert ">Classe A</text>" in svg
    assert ">10/2026</text>" in svg and ">11/2026</text>" in svg
    # One bar segment per month and class, named with the table's volume (Brazilian format).
    table = re.search(r'id="tabela-classes".*?</table>', html, re.S)[0]
    rows = re.findall(r"<tr><td>(\d\d/\d{4})</td><td>([^<]+)</td><td>([^<]+)</td></tr>", table)
    assert rows
    for month, waste_class, volume in rows:
        assert f"<title>{month} — {waste_class}: {volume} m³</title>" in svg
    # The value axis starts at zero and reaches the largest month.
    ticks = numbers(re.findall(r'text-anchor="end" fill="#475467">([\d.,]+)</text>', svg))
    assert ticks[0] == 0 and ticks == sorted(ticks)
    assert ticks[-1] >= max(numbers([v for _m, _c, v in rows]))


def test_a_bar_and_its_reference_line_share_one_scale():
    svg = str(charts.horizontal_bars(["Área Norte", "Área Sul"], [50, 25], "Uso", "%", 100))
    left = float(re.search(r'<rect x="([\d.]+)"', svg)[1])
    widths = [float(w) for w in re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="([\d.]+)"', svg)]
    reference = float(re.search(r'<line x1="([\d.]+)"[^>]*stroke="#B42318"', svg)[1])
    # 50 % is half the way to the 100 % line, 25 % a quarter.
    assert widths[0] == pytest.approx((reference - left) / 2, abs=0.2)
    assert widths[1] == pytest.approx((reference - left) / 4, abs=0.2)
    assert ">Área Norte</text>" in svg


def test_the_stock_chart_holds_each_days_balance_until_the_next():
    days = [datetime.date(2026, 11, d) for d in (1, 2, 3, 4)]
    svg = str(charts.lines_by_panel(days, {"ATT": {"Classe A": [0, 2, 2, 5]}}, "Estoque", "m³"))
    path = re.search(r'<path d="([^"]+)"', svg)[1]
    # Steps: each level held from its day to the day it changes (H, then V), across the
    # drawing: 0 on the 1st, 2 from the 2nd to the 3rd, 5 from the 4th to the end.
    start_x, start_y = (float(v) for v in re.match(r"M([\d.]+),([\d.]+)", path).groups())
    steps = [(float(x), float(y)) for x, y in re.findall(r"H([\d.]+)V([\d.]+)", path)]
    end_x = float(re.search(r"H([\d.]+)$", path)[1])
    day = (end_x - start_x) / 4
    assert [x for x, _y in steps] == pytest.approx([start_x + day, start_x + 3 * day], abs=0.2)
    (_, two), (_, five) = steps
    assert start_y > two > five  # SVG's y grows downwards
    # 2 m³ is 2/5 of the way from zero to 5 m³.
    assert start_y - two == pytest.approx((start_y - five) * 2 / 5, abs=0.2)
    assert ">01/11</text>" in svg and ">ATT</text>" in svg


def test_the_stock_panels_share_one_time_axis():
    """A panel of tens of m³ and one of a few (wider and narrower tick labels) start and end
    their days at the same x, the dates below them."""
    days = [datetime.date(2026, 11, d) for d in range(1, 11)]
    panels = {"ATT": {"Classe A": [30.0] * 10}, "PEV": {"Classe A": [2.5] * 10}}
    svg = str(charts.lines_by_panel(days, panels, "Estoque", "m³"))
    starts = [float(x) for x in re.findall(r'<path d="M([\d.]+),', svg)]
    ends = [float(x) for x in re.findall(r'<path d="[^"]*H([\d.]+)"', svg)]
    first_day = float(re.search(r'<text x="([\d.]+)"[^>]*>01/11</text>', svg)[1])
    assert len(starts) == 2 and starts[0] == starts[1] == first_day
    assert ends[0] == ends[1]
