"""The scoping benchmark (bench/scoping.py) on a small synthetic state: each
page answers both users, the scoped lists hold nothing of another municipality while the
administrator's are not restricted, and the report names the municipalities and the target."""

from __future__ import annotations

import pytest

from bench import BENCHMARKS, scoping
from bench.__main__ import parse
from synthetic import generator as synthetic
from tests.synthetic_world import load_municipalities

pytestmark = pytest.mark.django_db

# The capital, Osasco (its consortium's member) and three small towns.
CODES = {"3550308", "3534401", "3518404", "3500105", "3500204"}


@pytest.fixture
def state(tmp_path):
    load_municipalities(CODES, tmp_path)
    synthetic.generate(ctrs=800, reports=200, seed=5, municipality_limit=len(CODES))


def test_it_is_one_of_the_benchmarks_and_can_run_alone():
    assert "bench.scoping" in BENCHMARKS
    assert parse(["--only", "scoping", "--no-write"]).only == ["scoping"]


def test_each_page_as_the_nucleo_and_as_the_administrator(state, monkeypatch):
    monkeypatch.setattr(scoping, "MIN_ROUNDS", 2)
    results = scoping.run(scoping.setup(), 800, 200, runs=2)
    towns = scoping._LAST["towns"]
    assert [t.ibge for t in towns][0] == "3550308"
    assert [t.key for t in towns] == ["maior", "mediano"]
    assert len(results) == len(towns) * len(scoping.PAGES) * 2
    assert all(r.stats.runs == 2 and r.ratio is not None for r in results)
    assert {r.case for r in results if r.baseline} == {
        f"{t.key}-{p.key}-unscoped" for t in towns for p in scoping.PAGES
    }
    rows = scoping._LAST["rows"]
    for town in towns:
        for page in ("ctrs", "denuncias", "ogc"):
            listed, outside = rows[(town.key, page, "scoped")]
            assert listed > 0 and outside == 0, (town.name, page)
    # The administrator's lists are the state's: the capital's first page holds others'.
    assert rows[("maior", "ctrs", "unscoped")][1] > 0
    # The capital receives loads across the border (Osasco's, at its shared facility).
    assert towns[0].arriving > 0
    assert scoping._LAST["plans"][("maior", "ctrs")]


def test_the_report_names_the_municipalities_the_target_and_the_plans(state, monkeypatch):
    monkeypatch.setattr(scoping, "MIN_ROUNDS", 1)
    results = scoping.run(scoping.setup(), 800, 200, runs=1)
    text = scoping.verdict(results)
    assert "São Paulo (3550308, o maior)" in text
    assert "o mediano" in text
    assert "meta ≤ 1,20 ×" in text
    assert "EXPLAIN" not in text or "```" in text
    assert text.count("```sql") >= len(scoping.LISTS)
