"""The page benchmark of `make bench` (bench/pages.py) on one page of the test database:
gunicorn with the production configuration, the local tile server, Lighthouse (installed from
the lockfile when `make test` left it out) driving Debian's Chromium, and the table row read
back. Scores are asserted to be scores and the row to carry them, never their values (those
are the benchmark's business)."""

from __future__ import annotations

import secrets
import urllib.request

import pytest
from django.db import connection

from bench import pages
from tests.app_servers import database_url, server_environment

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_tile_server_answers_any_tile_with_a_png():
    with pages.TileServer() as tiles:
        url = tiles.url.format(z=14, x=6110, y=9290)
        with urllib.request.urlopen(url, timeout=10) as response:
            body = response.read()
    assert body.startswith(b"\x89PNG\r\n\x1a\n") and response.headers["Cache-Control"]


def test_lighthouse_scores_a_page_of_the_production_server_and_the_table_shows_it():
    pages.ensure_lighthouse()
    env = server_environment(
        database_url(connection.settings_dict),
        f"test-{secrets.token_urlsafe(32)}",
        # One worker of the production configuration; no TLS for the browser to upgrade to.
        {"WEB_CONCURRENCY": "1", "GUNICORN_THREADS": "4", "DJANGO_SECURE_SSL_REDIRECT": "false"},
    )
    verify = [p for p in pages.PAGES if p[3] == "/verificar/"]
    with pages.TileServer() as tiles:
        env["CTR_MAP_TILE_URL"] = tiles.url
        measures, server = pages.measure(verify, env)

    (m,) = measures
    for score in (m.performance, m.accessibility, m.best_practices):
        assert 0 <= score <= 100
    assert m.lcp_s > 0 and m.cls >= 0 and m.tbt_ms >= 0
    assert m.bytes > 1000, "the page, its styles and scripts were weighed"
    text = pages.render(
        measures, {"CPU": "teste"}, "agora", "python -m bench.pages --only /verificar/", server
    )
    row = next(line for line in text.splitlines() if "(`/verificar/`)" in line)
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[1] == "visitante"
    assert cells[2:5] == [str(m.performance), str(m.accessibility), str(m.best_practices)]
    assert cells[6] == f"{m.cls:.3f}".replace(".", ",")
    assert cells[9] == "atingidas" if not m.missed() else cells[9].startswith("**não**")
    assert "gunicorn -c deploy/gunicorn.conf.py" in text


def test_the_median_run_is_the_middle_one_by_performance_with_the_spread():
    def run(performance, lcp):
        return pages.Measure("Início", "visitante", "/", performance, 100, 100, lcp, 0, 0, 1)

    chosen = pages.median_run([run(100, 1.0), run(94, 2.1), run(98, 1.5)])
    assert (chosen.performance, chosen.lcp_s, chosen.spread) == (98, 1.5, (94, 100))
    assert "| 98 (94–100) |" in pages.row(chosen)
    assert pages.median_run([run(90, 1.0)]).spread is None
