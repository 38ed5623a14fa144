"""OGC API – Features (Part 1 core, GeoJSON): the requirements a client relies on."""

import datetime
from decimal import Decimal

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from pev_network.models import FacilityKind, FacilityLicense, MunicipalParameters
from tests.builders import ORIGIN, licensed_facility, municipality, offset, square
from tests.ctr_world import TODAY, build_world, ctr_payload

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    world = build_world()
    client = APIClient()
    client.force_authenticate(world.alfa_user)
    for date in ("2026-11-01", "2026-11-15", "2026-11-30"):
        response = client.post(
            "/api/v1/ctrs/", ctr_payload(world, transport_date=date), format="json"
        )
        assert response.status_code == 201
    return world


def get(url, user=None, status=200, **headers):
    client = Client()
    if user is not None:
        client.force_login(user)
    response = client.get(url, **headers)
    assert response.status_code == status, response.content[:300]
    return response


def test_landing_links_conformance_and_data(world):
    body = get("/ogc/").json()
    rels = {link["rel"] for link in body["links"]}
    assert {"self", "conformance", "data", "service-doc"} <= rels


def test_conformance_declares_core_and_geojson(world):
    conforms = get("/ogc/conformance").json()["conformsTo"]
    assert any(c.endswith("/conf/core") for c in conforms)
    assert any(c.endswith("/conf/geojson") for c in conforms)


def test_collections_have_extent_and_items_link(world):
    body = get("/ogc/collections").json()
    ids = [c["id"] for c in body["collections"]]
    assert ids == ["facilities", "bacias", "municipalities"]
    facilities = body["collections"][0]
    assert facilities["extent"]["spatial"]["bbox"][0][0] < -45
    assert any(link["rel"] == "items" for link in facilities["links"])


def test_items_are_geojson_with_counts_and_next_link(world):
    response = get("/ogc/collections/facilities/items?limit=3")
    assert response["Content-Type"] == "application/geo+json"
    body = response.json()
    assert body["numberMatched"] == 4 and body["numberReturned"] == 3
    next_link = next(link["href"] for link in body["links"] if link["rel"] == "next")
    second = get(next_link.replace("http://testserver", "")).json()
    assert second["numberReturned"] == 1
    assert not any(link["rel"] == "next" for link in second["links"])
    ids = {f["id"] for f in body["features"]} | {f["id"] for f in second["features"]}
    assert len(ids) == 4


def test_next_links_continue_after_the_last_id_and_offset_still_works(world):
    """Keyset pages: each `next` carries the last id seen, so a deep page costs what the first
    does; the count comes with the first page only."""
    expected = sorted(f["id"] for f in get("/ogc/collections/facilities/items").json()["features"])
    seen, url, pages = [], "/ogc/collections/facilities/items?limit=1", 0
    while url:
        body = get(url).json()
        assert ("numberMatched" in body) == (pages == 0)
        seen += [f["id"] for f in body["features"]]
        url = next((link["href"] for link in body["links"] if link["rel"] == "next"), "").replace(
            "http://testserver", ""
        )
        assert not url or f"after={seen[-1]}" in url
        pages += 1
    assert seen == expected and pages == 4
    by_offset = get("/ogc/collections/facilities/items?limit=2&offset=2").json()
    assert [f["id"] for f in by_offset["features"]] == expected[2:]
    assert by_offset["numberMatched"] == 4


@pytest.mark.parametrize(
    "query, message",
    [
        ("after=-1", "after não pode ser negativo"),
        ("after=abc", "after 'abc' não é um número inteiro"),
        ("after=1&offset=2", "Use after ou offset, não os dois."),
    ],
)
def test_bad_after_is_a_portuguese_400(world, query, message):
    response = get(f"/ogc/collections/facilities/items?{query}", status=400)
    assert message in response.json()["detail"]


def test_after_past_every_id_is_an_empty_page(world):
    body = get("/ogc/collections/facilities/items?after=" + "9" * 40).json()
    assert body["features"] == [] and body["numberReturned"] == 0
    assert not any(link["rel"] == "next" for link in body["links"])


def test_bbox_selects_by_intersection(world):
    lon, lat = world.att.area.centroid.coords
    body = get(f"/ogc/collections/facilities/items?bbox={lon},{lat},{lon + 1},{lat + 1}").json()
    assert [f["properties"]["name"] for f in body["features"]] == ["ATT"]


def test_facilities_are_the_licensed_ones_with_their_license_in_force(world):
    """The public network (art. 14 §1): an area whose license expired, was revoked or has
    not started is not a destination, in the list, by id or in the extent."""
    far = offset(*ORIGIN, 40_000, 40_000)
    revoked = licensed_facility(
        FacilityKind.ATT, square(*far, 100), "ATT cassada", world.town,
        status=FacilityLicense.Status.REVOKED, status_since=TODAY - datetime.timedelta(days=3),
    )  # fmt: skip
    expired = licensed_facility(
        FacilityKind.PEV, square(*ORIGIN, 20), "PEV vencido", world.town,
        valid_until=TODAY - datetime.timedelta(days=1),
    )  # fmt: skip
    body = get("/ogc/collections/facilities/items").json()
    names = sorted(f["properties"]["name"] for f in body["features"])
    assert names == ["ATT", "Aterro", "PEV", "Reciclagem"]
    get(f"/ogc/collections/facilities/items/{revoked.pk}", status=404)
    get(f"/ogc/collections/facilities/items/{expired.pk}", status=404)
    extent = get("/ogc/collections/facilities").json()["extent"]["spatial"]["bbox"][0]
    assert extent[2] < far[0] and extent[3] < far[1]
    pev = get(f"/ogc/collections/facilities/items/{world.pev.pk}").json()["properties"]
    assert pev["license_number"] == f"LO-{world.pev.pk}"
    assert (pev["license_issuer"], pev["license_valid_until"]) == ("CETESB", "2099-12-31")


def test_single_feature_and_404s(world):
    feature = get(f"/ogc/collections/facilities/items/{world.pev.pk}").json()
    assert feature["type"] == "Feature" and feature["properties"]["kind"] == "PEV"
    get("/ogc/collections/facilities/items/999999", status=404)
    get("/ogc/collections/facilities/items/abc", status=404)
    get("/ogc/collections/rios/items", status=404)


@pytest.mark.parametrize(
    "query",
    ["limit=abc", "limit=0", "bbox=1,2,3", "bbox=a,b,c,d", "bbox=0,10,1,5", "datetime=ontem",
     "unknown=1", "offset=-1"],
)  # fmt: skip
def test_bad_parameters_get_400(world, query):
    response = get(f"/ogc/collections/facilities/items?{query}", status=400)
    assert response.json()["detail"]


def test_ctr_origins_only_for_municipal_users(world):
    get("/ogc/collections/ctr-origins/items", status=404)
    get("/ogc/collections/ctr-origins/items", user=world.alfa_user, status=404)
    body = get("/ogc/collections/ctr-origins/items", user=world.nucleo).json()
    assert body["numberMatched"] == 3
    token = Token.objects.create(user=world.fiscal).key
    by_token = get("/ogc/collections/ctr-origins/items", HTTP_AUTHORIZATION=f"Token {token}")
    assert by_token.json()["numberMatched"] == 3


def test_datetime_filters_the_temporal_collection(world):
    url = "/ogc/collections/ctr-origins/items?datetime="
    assert get(url + "2026-11-15", user=world.nucleo).json()["numberMatched"] == 1
    assert get(url + "2026-11-10/..", user=world.nucleo).json()["numberMatched"] == 2
    assert get(url + "../2026-11-15T23:59:59Z", user=world.nucleo).json()["numberMatched"] == 2


# --- the onward flows -----------------------------------------------------------------------


@pytest.fixture
def flows_world(frozen_today):
    from tests.nucleo.flows_world import build_flows

    return build_flows(build_world())


def test_flows_are_for_municipal_users_only(flows_world):
    get("/ogc/collections/flows", status=404)
    get("/ogc/collections/flows/items", user=flows_world.alfa_user, status=404)
    get("/ogc/collections/flows/items", user=flows_world.operator, status=404)
    ids = [c["id"] for c in get("/ogc/collections", user=flows_world.nucleo).json()["collections"]]
    assert "flows" in ids


def test_a_flow_is_a_line_from_the_origin_facility_to_the_destination(flows_world):
    world = flows_world
    body = get("/ogc/collections/flows/items", user=world.nucleo).json()
    assert body["numberMatched"] == 2
    by_destination = {f["properties"]["destination_facility"]: f for f in body["features"]}
    recycling = by_destination["Reciclagem"]
    assert recycling["geometry"]["type"] == "LineString"
    start, end = recycling["geometry"]["coordinates"]
    assert start == pytest.approx(world.att.area.point_on_surface.coords, abs=1e-6)
    assert end == pytest.approx(world.recycling.area.point_on_surface.coords, abs=1e-6)
    assert recycling["properties"] == {
        "municipality": world.town.ibge_code, "origin_facility_code": world.att.code or None,
        "origin_facility": "ATT", "origin_kind": "ATT",
        "destination_facility_code": world.recycling.code or None,
        "destination_facility": "Reciclagem", "destination_kind": "RECYCLING",
        "waste_class": "A", "period_start": "2026-11-01", "period_end": "2026-11-30",
        "ctrs": 1, "volume_m3": 6.0, "received_volume_m3": 6.0,
    }  # fmt: skip
    one = get(f"/ogc/collections/flows/items/{recycling['id']}", user=world.nucleo).json()
    assert one["properties"]["volume_m3"] == 6.0


def test_datetime_picks_the_flows_whose_month_overlaps_the_interval(flows_world):
    url = "/ogc/collections/flows/items?datetime="
    nucleo = flows_world.nucleo
    # Mid-November to mid-December overlaps November's flows, though they start on the 1st.
    assert get(url + "2026-11-15/2026-12-15", user=nucleo).json()["numberMatched"] == 2
    assert get(url + "2026-11-30", user=nucleo).json()["numberMatched"] == 2
    assert get(url + "2026-10-01/2026-10-31", user=nucleo).json()["numberMatched"] == 0
    assert get(url + "../2026-10-31", user=nucleo).json()["numberMatched"] == 0


def test_flows_collection_has_the_extent_of_its_lines(flows_world):
    body = get("/ogc/collections/flows", user=flows_world.nucleo).json()
    min_lon, _min_lat, max_lon, _max_lat = body["extent"]["spatial"]["bbox"][0]
    assert min_lon == pytest.approx(flows_world.recycling.area.point_on_surface.x, abs=1e-6)
    assert max_lon == pytest.approx(flows_world.att.area.point_on_surface.x, abs=1e-6)
    lon, lat = flows_world.recycling.area.point_on_surface.coords
    near = get(f"/ogc/collections/flows/items?bbox={lon - 0.001},{lat - 0.001},{lon + 0.001},"
               f"{lat + 0.001}", user=flows_world.nucleo).json()  # fmt: skip
    assert [f["properties"]["destination_facility"] for f in near["features"]] == ["Reciclagem"]


def test_a_municipality_shows_the_parameters_in_force_today(frozen_today):
    """A set that started yesterday holds today; one that starts tomorrow does not yet."""
    town = municipality()
    for days, limit in ((-1, "0.5"), (1, "2")):
        MunicipalParameters.objects.create(
            municipality=town,
            valid_from=TODAY + datetime.timedelta(days=days),
            small_volume_limit_m3=Decimal(limit),
        )
    feature = get(f"/ogc/collections/municipalities/items/{town.pk}").json()
    assert feature["properties"]["small_volume_limit_m3"] == 0.5
