"""On-site processing through the API:
`POST /api/v1/facilities/<id>/processing/` records recycled aggregate produced or material
reused at the facility, within its stock; `GET` lists it. Bad input is a 4xx in Portuguese and
writes nothing; only the facility's operator records, the municipality reads."""

from __future__ import annotations

from decimal import Decimal

import pytest
from rest_framework.test import APIClient

from ctr.custody import stock
from ctr.models import OnSiteProcessing
from tests.ctr.onward_world import api_client, inbound, stocked_world
from tests.ctr_world import TODAY

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(frozen_today):
    return stocked_world()


client_for = api_client


def url(world, facility=None) -> str:
    return f"/api/v1/facilities/{(facility or world.att).pk}/processing/"


def body(**overrides) -> dict:
    data = {
        "waste_class": "A",
        "kind": "recycled",
        "volume_m3": "2.5",
        "day": TODAY.isoformat(),
        "note": "britagem",
    }
    data.update(overrides)
    return data


def post(world, user=None, **overrides):
    return client_for(user or world.operator).post(url(world), body(**overrides), format="json")


def test_the_operator_records_processing_and_it_leaves_the_stock(world):
    response = post(world)
    assert response.status_code == 201, response.content
    created = response.json()
    assert created["facility"] == {"id": world.att.pk, "name": "ATT", "kind": "ATT"}
    assert (created["waste_class"], created["kind"], created["volume_m3"], created["day"]) == (
        "A",
        "recycled",
        "2.500",
        "2026-11-30",
    )
    assert created["kind_label"] == "Agregado reciclado produzido"
    assert created["recorded_by"] == "operador"
    (row,) = stock.balance(world.att)
    assert (row.processed, row.closing) == (Decimal("2.500"), Decimal("7.500"))


def test_the_operator_and_the_municipality_list_it_newest_first(world):
    inbound(world, {"A": "5"}, received="5", day=TODAY.replace(day=1))
    first = post(world, volume_m3="1").json()["id"]
    second = post(world, volume_m3="2", day="2026-11-29", kind="reused").json()["id"]
    for user in (world.operator, world.nucleo, world.fiscal):
        response = client_for(user).get(url(world))
        assert response.status_code == 200, response.content
        assert [r["id"] for r in response.json()["results"]] == [second, first]
    response = client_for(world.operator).get(url(world) + "?date_from=2026-11-30")
    assert [r["id"] for r in response.json()["results"]] == [first]


@pytest.mark.parametrize("who", ["pev_operator", "alfa_user", "outsider"])
def test_others_may_not_list_it(world, who):
    response = client_for(getattr(world, who)).get(url(world))
    assert response.status_code == 403
    assert response.json()["detail"] == (
        "Só o operador da área e o município veem o seu beneficiamento."
    )


@pytest.mark.parametrize("who", ["pev_operator", "alfa_user", "outsider", "nucleo", "fiscal"])
def test_only_the_operator_records_it_and_nothing_is_written(world, who):
    response = post(world, getattr(world, who))
    assert response.status_code == 403, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    refusal = "Só um operador da área “ATT” registra o seu beneficiamento."
    assert response.json()["detail"] == refusal
    assert not OnSiteProcessing.objects.exists()


def test_anonymous_callers_get_a_401(world):
    assert APIClient().get(url(world)).status_code == 401
    assert APIClient().post(url(world), body(), format="json").status_code == 401


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("volume_m3", "-1"),
        ("volume_m3", "0"),
        ("volume_m3", "10000.001"),
        ("volume_m3", "1e9"),
        ("volume_m3", "dois"),
        ("waste_class", "X"),
        ("waste_class", "DOMICILIAR"),
        ("kind", "queimado"),
        ("day", "30/11/2026"),
    ],
)
def test_bad_input_is_a_400_naming_the_field_and_nothing_is_written(world, field, value):
    response = post(world, **{field: value})
    assert response.status_code == 400, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    errors = response.json()["errors"]
    assert [e["campo"] for e in errors] == [field]
    assert all(e["mensagem"] and "the" not in e["mensagem"].split() for e in errors)
    assert not OnSiteProcessing.objects.exists()


def test_a_day_after_today_is_refused(world):
    response = post(world, day="2026-12-01")
    assert response.status_code == 400
    assert response.json()["detail"] == "A data do beneficiamento não pode ser posterior a hoje."
    assert not OnSiteProcessing.objects.exists()


def test_over_stock_is_a_422_naming_the_class_and_nothing_is_written(world):
    # 10 m³ received, 10 % of sorting tolerance: up to 11 m³.
    assert post(world, volume_m3="11").status_code == 201
    response = post(world, volume_m3="0.5")
    assert response.status_code == 422, response.content
    assert response.json()["detail"] == (
        "A área “ATT” não tem 0,5 m³ de Classe A (agregados: concreto, tijolo, solo…) em "
        "estoque em 30/11/2026 (pode beneficiar até 0 m³)."
    )
    response = post(world, waste_class="B", volume_m3="1")
    assert response.status_code == 422
    assert "Classe B (recicláveis" in response.json()["detail"]
    assert OnSiteProcessing.objects.count() == 1


def test_an_unknown_facility_is_a_404(world):
    response = client_for(world.operator).post(
        "/api/v1/facilities/999999/processing/", body(), format="json"
    )
    assert response.status_code == 404
    assert client_for(world.nucleo).get("/api/v1/facilities/999999/processing/").status_code == 404


def test_the_endpoint_is_in_the_openapi_schema(world):
    schema = APIClient().get("/api/v1/schema/?format=json").json()
    operations = schema["paths"]["/api/v1/facilities/{id}/processing/"]
    assert {"get", "post"} <= set(operations)
    assert {p["name"] for p in operations["get"]["parameters"]} >= {"date_from", "date_to"}
    assert {"201", "400", "403", "422"} <= set(operations["post"]["responses"])
    properties = schema["components"]["schemas"]["ProcessingInput"]["properties"]
    assert set(properties) == {"waste_class", "kind", "volume_m3", "day", "note"}
