"""GET /api/v1/suspect-worksites/: the worksites with an alert and their
figures, for the municipality only; filters by reason and municipality; 400 in Portuguese for
a bad one; paginated; in the OpenAPI schema and the LGPD access log."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from audit.models import AccessLog
from generators.models import PlanStatus
from tests.ctr_world import build_world
from tests.generators.suspects_world import days, load, plan, site

pytestmark = pytest.mark.django_db

URL = "/api/v1/suspect-worksites/"


@pytest.fixture
def world(frozen_today):
    world = build_world()
    world.late = site(world, "Rua Atrasada, 1", start=days(-300), end=days(-60), large=False)
    world.low = site(world, "Av. Pouco Volume, 200", start=days(-100), end=days(100))
    plan(world.low, A="100")
    load(world, world.low, "2", day=days(-3))
    world.idle = site(world, "Rua Parada, 3", start=days(-45), end=days(200))
    plan(world.idle, status=PlanStatus.SUBMITTED, A="10")
    world.fine = site(world, "Rua Em Dia, 4", start=days(-10), end=days(100))
    return world


def client_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_the_municipality_gets_every_worksite_with_an_alert_and_its_figures(world):
    response = client_for(world.fiscal).get(URL)
    assert response.status_code == 200
    body = response.json()
    assert body["date"] == days(0).isoformat() and body["count"] == 3
    items = {item["address"]: item for item in body["results"]}
    assert set(items) == {"Rua Atrasada, 1", "Av. Pouco Volume, 200", "Rua Parada, 3"}
    low = items["Av. Pouco Volume, 200"]
    assert [r["code"] for r in low["reasons"]] == ["low_volume"]
    assert (low["expected_to_date_m3"], low["transported_m3"], low["transported_pct"]) == (
        "50.00",
        "2.00",
        "4.0",
    )
    assert low["plan_status"] == "approved" and low["page"] == f"/nucleo/obras/{world.low.pk}/"
    assert low["generator"]["name"] == "Construtora Gama Ltda."
    assert items["Rua Atrasada, 1"]["days_past_end"] == 60
    assert items["Rua Parada, 3"]["idle_days"] == 45
    assert items["Rua Parada, 3"]["plan_status"] == "submitted"
    assert AccessLog.objects.filter(username="fiscal", purpose="API: obras suspeitas").exists()


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("reason=overdue", ["Rua Atrasada, 1"]),
        ("reason=idle", ["Rua Parada, 3"]),
        ("reason=suspect", ["Rua Atrasada, 1", "Av. Pouco Volume, 200"]),
        ("reason=idle,low_volume", ["Av. Pouco Volume, 200", "Rua Parada, 3"]),
        ("municipality=3518404&reason=overdue", ["Rua Atrasada, 1"]),
    ],
)
def test_the_filters(world, query, expected):
    results = client_for(world.nucleo).get(f"{URL}?{query}").json()["results"]
    assert [item["address"] for item in results] == expected


@pytest.mark.parametrize(
    ("query", "field", "words"),
    [
        ("reason=lento", "reason", "Motivo desconhecido: lento"),
        ("municipality=35", "municipality", "não é um código IBGE de 7 dígitos"),
        ("municipality=1234567", "municipality", "Nenhum município com o código IBGE 1234567"),
    ],
)
def test_a_bad_parameter_is_a_400_in_portuguese(world, query, field, words):
    response = client_for(world.nucleo).get(f"{URL}?{query}")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/problem+json")
    assert words in response.json()["detail"]
    assert response.json()["errors"][0]["campo"] == field


def test_pages(world):
    first = client_for(world.nucleo).get(f"{URL}?page_size=2").json()
    assert first["count"] == 3 and len(first["results"]) == 2 and first["next"]
    second = client_for(world.nucleo).get(first["next"]).json()
    assert len(second["results"]) == 1 and second["next"] is None
    assert client_for(world.nucleo).get(f"{URL}?page=9").status_code == 404


def test_only_the_municipality(world):
    assert APIClient().get(URL).status_code == 401
    for user in (world.generator_user, world.alfa_user, world.operator, world.outsider):
        assert client_for(user).get(URL).status_code == 403


def test_the_endpoint_is_in_the_openapi_schema(world):
    schema = APIClient().get("/api/v1/schema/?format=json").json()
    operation = schema["paths"]["/api/v1/suspect-worksites/"]["get"]
    assert {p["name"] for p in operation["parameters"]} >= {"municipality", "reason", "page"}
    assert {"200", "400", "401", "403"} <= set(operation["responses"])
