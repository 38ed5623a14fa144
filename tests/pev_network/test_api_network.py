"""The public API of the receiving network, through real HTTP requests to Django."""

import datetime
import json
from decimal import Decimal

import pytest
from django.test import Client

from pev_network.models import FacilityKind, MunicipalParameters
from tests.builders import ORIGIN, licensed_facility, municipality, offset, square
from tests.ctr_world import TODAY
from tests.portuguese import assert_portuguese

pytestmark = pytest.mark.django_db
D = datetime.date


@pytest.fixture
def client():
    return Client()


@pytest.fixture
def network():
    town = municipality()
    return {
        "town": town,
        "pev": licensed_facility(
            FacilityKind.PEV, square(*offset(*ORIGIN, 200, 0), 30), "PEV Centro", town
        ),
        "att": licensed_facility(
            FacilityKind.ATT, square(*offset(*ORIGIN, 1500, 0), 100), "ATT Leste", town
        ),
        "expired": licensed_facility(
            FacilityKind.PEV,
            square(*offset(*ORIGIN, -3000, 0), 30),
            "PEV Vencido",
            town,
            valid_from=D(2020, 1, 1),
            valid_until=D(2025, 6, 30),
        ),
    }


def get_json(client, url, status=200):
    response = client.get(url)
    assert response.status_code == status, response.content[:500]
    return response.json()


def names(collection):
    return sorted(f["properties"]["name"] for f in collection["features"])


def test_facilities_are_a_geojson_feature_collection(client, network):
    body = get_json(client, "/api/v1/facilities/")
    assert body["type"] == "FeatureCollection"
    assert body["count"] == 3
    feature = next(f for f in body["features"] if f["properties"]["name"] == "PEV Centro")
    assert feature["geometry"]["type"] == "MultiPolygon"
    assert feature["properties"]["kind"] == "PEV"
    assert feature["properties"]["current_license"]["issuer"] == "CETESB"


def test_expired_facility_has_no_current_license(client, network):
    body = get_json(client, f"/api/v1/facilities/{network['expired'].pk}/")
    assert body["properties"]["current_license"] is None


def test_kind_filter(client, network):
    assert names(get_json(client, "/api/v1/facilities/?kind=ATT")) == ["ATT Leste"]


def test_licensed_on_filter_at_the_expiry_day(client, network):
    url = "/api/v1/facilities/?licensed_on="
    assert "PEV Vencido" in names(get_json(client, url + "2025-06-30"))
    assert "PEV Vencido" not in names(get_json(client, url + "2025-07-01"))


def test_bbox_filter_uses_intersects(client, network):
    # A box that covers only the western half of the ATT: the ATT intersects it.
    att_west = offset(*ORIGIN, 1450, -50)
    att_mid = offset(*ORIGIN, 1550, 150)
    bbox = f"{att_west[0]},{att_west[1]},{att_mid[0]},{att_mid[1]}"
    assert names(get_json(client, f"/api/v1/facilities/?bbox={bbox}")) == ["ATT Leste"]


def test_pagination(client, network):
    body = get_json(client, "/api/v1/facilities/?page_size=2")
    assert len(body["features"]) == 2 and body["next"]
    second = get_json(client, body["next"].replace("http://testserver", ""))
    assert len(second["features"]) == 1


@pytest.mark.parametrize(
    "query, parameter",
    [
        ("bbox=a,b,c,d", "bbox"),
        ("bbox=1,2,3", "bbox"),
        ("bbox=-45,-22,-46,-21", "bbox"),  # inverted
        ("bbox=-45,-95,-44,-21", "bbox"),  # latitude out of range
        ("licensed_on=31/12/2026", "licensed_on"),
        ("licensed_on=2026-02-30", "licensed_on"),
        ("kind=ECOPONTO", "kind"),
    ],
)
def test_bad_list_parameters_get_400_problem_in_portuguese(client, network, query, parameter):
    response = client.get(f"/api/v1/facilities/?{query}")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/problem+json")
    body = response.json()
    assert body["status"] == 400 and body["title"] == "Requisição inválida"
    [error] = [e for e in body["errors"] if e["campo"] == parameter]
    assert_portuguese(error["mensagem"])


def nearest(client, **params):
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return get_json(client, f"/api/v1/facilities/nearest/?{query}")


def test_nearest_small_load_includes_the_pev_with_distance(client, network):
    body = nearest(client, lon=ORIGIN[0], lat=ORIGIN[1], volume_m3="0.5")
    assert [f["properties"]["name"] for f in body["features"]] == ["PEV Centro", "ATT Leste"]
    assert body["features"][0]["properties"]["distance_m"] == pytest.approx(200, abs=2)


def test_nearest_large_load_skips_the_pev(client, network):
    body = nearest(client, lon=ORIGIN[0], lat=ORIGIN[1], volume_m3="3")
    assert [f["properties"]["name"] for f in body["features"]] == ["ATT Leste"]


def test_nearest_accepts_a_decimal_comma(client, network):
    body = nearest(client, lon=ORIGIN[0], lat=ORIGIN[1], volume_m3="0,5")
    assert body["features"][0]["properties"]["name"] == "PEV Centro"


@pytest.mark.parametrize(
    "query, parameter",
    [
        ("lat=-22.8&volume_m3=1", "lon"),
        ("lon=abc&lat=-22.8&volume_m3=1", "lon"),
        ("lon=-45&lat=-91&volume_m3=1", "lat"),
        ("lon=-181&lat=-22&volume_m3=1", "lon"),
        ("lon=nan&lat=-22&volume_m3=1", "lon"),
        ("lon=-45&lat=-22&volume_m3=-1", "volume_m3"),
        ("lon=-45&lat=-22&volume_m3=Infinity", "volume_m3"),
        ("lon=-45&lat=-22", "volume_m3"),
        ("lon=-45&lat=-22&volume_m3=1&waste_class=Z", "waste_class"),
        ("lon=-45&lat=-22&volume_m3=1&limit=0", "limit"),
        ("lon=-45&lat=-22&volume_m3=1&limit=x", "limit"),
    ],
)
def test_nearest_bad_parameters_get_400(client, network, query, parameter):
    response = client.get(f"/api/v1/facilities/nearest/?{query}")
    assert response.status_code == 400, response.content
    errors = response.json()["errors"]
    assert errors[0]["campo"] == parameter
    assert_portuguese(errors[0]["mensagem"])


def test_municipality_lookup(client, network):
    body = get_json(client, f"/api/v1/municipalities/lookup/?lon={ORIGIN[0]}&lat={ORIGIN[1]}")
    assert body["ibge_code"] == network["town"].ibge_code
    assert body["small_volume_limit_m3"] == "1.000"


def test_the_municipality_and_the_search_use_the_parameters_in_force_today(
    client, network, frozen_today
):
    """A set that started yesterday holds today; one that starts tomorrow does not yet."""
    day = datetime.timedelta(days=1)
    MunicipalParameters.objects.create(
        municipality=network["town"],
        valid_from=TODAY - day,
        small_volume_limit_m3=Decimal("0.5"),
        open_ctr_alert_hours=72,
    )
    MunicipalParameters.objects.create(
        municipality=network["town"],
        valid_from=TODAY + day,
        small_volume_limit_m3=Decimal("2"),
        open_ctr_alert_hours=96,
    )
    body = get_json(client, f"/api/v1/municipalities/lookup/?lon={ORIGIN[0]}&lat={ORIGIN[1]}")
    assert (body["small_volume_limit_m3"], body["open_ctr_alert_hours"]) == ("0.500", 72)
    (feature,) = get_json(client, "/api/v1/municipalities/")["features"]
    assert feature["properties"]["small_volume_limit_m3"] == "0.500"
    # 0,8 m³ is over today's limit of the PEV (Lei 3.978/2007 art. 12 §1-2).
    body = nearest(client, lon=ORIGIN[0], lat=ORIGIN[1], volume_m3="0.8")
    assert [f["properties"]["name"] for f in body["features"]] == ["ATT Leste"]


def test_municipality_lookup_outside_everything_is_404_in_portuguese(client, network):
    response = client.get("/api/v1/municipalities/lookup/?lon=-60&lat=-10")
    assert response.status_code == 404
    assert "Nenhum município" in response.json()["detail"]


def test_unknown_facility_is_404_problem(client, network):
    response = client.get("/api/v1/facilities/999999/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/problem+json")


def test_municipalities_and_basins_are_geojson(client, network):
    assert get_json(client, "/api/v1/municipalities/")["type"] == "FeatureCollection"
    assert get_json(client, "/api/v1/basins/")["type"] == "FeatureCollection"


def test_api_is_read_only(client, network):
    response = client.post(
        "/api/v1/facilities/", data=json.dumps({"name": "x"}), content_type="application/json"
    )
    assert response.status_code == 405


def test_openapi_schema_and_docs(client):
    schema = client.get("/api/v1/schema/?format=json")
    assert schema.status_code == 200
    paths = json.loads(schema.content)["paths"]
    assert "/api/v1/facilities/nearest/" in paths
    assert "/api/v1/municipalities/lookup/" in paths
    docs = client.get("/api/v1/docs/")
    assert docs.status_code == 200
    html = docs.content.decode()
    assert "swagger-ui" in html
    # Served from our static files, never from a CDN.
    assert "cdn.jsdelivr" not in html and "unpkg" not in html
