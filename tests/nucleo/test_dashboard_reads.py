"""The Núcleo's dashboard reads in a minute: the key figures come first,
each section opens and closes, and a long table is paged (its CSV keeps every row)."""

from __future__ import annotations

import re

import pytest

from tests.nucleo.test_nucleo_dashboard import csv_rows, nucleo, world  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen_today")]
PERIOD = "date_from=2026-10-01&date_to=2026-11-30"


def key_figure(html: str, key: str) -> str:
    found = re.search(rf'data-key="{key}">(.*?)</(?:dd|span)>', html, re.S)
    assert found, key
    return re.sub(r"<[^>]+>", " ", found[1]).strip()


def test_key_figures_come_before_every_section(world):  # noqa: F811
    html = nucleo(world).get(f"/nucleo/?{PERIOD}").content.decode()
    summary = html.index('id="resumo"')
    first_section = html.index('class="dashboard-section"')
    assert summary < first_section
    # The frozen day is in November: this month's CTRs are the two of November.
    assert key_figure(html, "month_ctrs") == "2"
    assert "A: 9,5 m³" in key_figure(html, "by_class").replace(".", ",")
    assert key_figure(html, "open") == "0"
    for key in ("overdue", "recycling", "stock_alerts"):
        key_figure(html, key)
    # The queues are there too, with their counts.
    assert 'data-waiting="declarations"' in html[summary:first_section]


def test_each_section_opens_and_closes(world):  # noqa: F811
    html = nucleo(world).get(f"/nucleo/?{PERIOD}").content.decode()
    sections = re.findall(r'<(\w+) class="dashboard-section" id="([a-z]+)"', html)
    assert sections and all(tag == "details" for tag, _ in sections), sections
    for _tag, name in sections:
        block = html[html.index(f'id="{name}"') :]
        assert re.match(r'id="[a-z]+" open>\s*<summary><h2', block), name


def test_a_long_table_is_paged_and_its_csv_keeps_every_row(world, settings):  # noqa: F811
    from nucleo import views

    client = nucleo(world)
    full = csv_rows(client.get(f"/nucleo/?{PERIOD}&csv=classes"))[1:]
    assert len(full) >= 2
    size = len(full) - 1  # one row on the second page
    original, views.TABLE_PAGE_SIZE = views.TABLE_PAGE_SIZE, size
    try:
        first = client.get(f"/nucleo/?{PERIOD}").content.decode()
        second = client.get(f"/nucleo/?{PERIOD}&pagina-classes=2").content.decode()
    finally:
        views.TABLE_PAGE_SIZE = original

    def rows(html: str) -> int:
        table = re.search(r'id="tabela-classes".*?</table>', html, re.S)[0]
        return len(re.findall(r"<tr><td>", table))

    assert rows(first) == size and rows(second) == 1
    assert "pagina-classes=2#tabela-classes" in first
    assert "csv=classes" in first
