"""The worksites in the API (/api/v1/worksites/): GeoJSON in and out; the generator's account
lists, registers and changes its own, the municipality every one (filterable) and registers on
a generator's behalf; every bad input a problem+json in Portuguese naming its field, with
nothing written; /api/v1/worksites/{id}/destinations/ stays ctr's."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from ctr.models import Generator, Worksite
from tests.ctr_world import CNPJ_ALFA, CNPJ_GAMA, build_world
from tests.generators.worksite_world import (
    A_LINE,
    ACROSS_THE_EDGE,
    ADDRESS,
    BOWTIE,
    FAR_AWAY,
    TWO_CORNERS,
    api_body,
    at,
    registered,
    square_m,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen_today")]

LIST = "/api/v1/worksites/"


@pytest.fixture
def world():
    return build_world()


def api(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


@pytest.fixture
def gama(world):
    return api(world.generator_user)


@pytest.fixture
def other(world):
    return Generator.objects.create(name="Outra Construtora", document=CNPJ_ALFA)


def problem(response) -> dict:
    assert response["Content-Type"].startswith("application/problem+json")
    return response.json()


def test_the_generator_registers_a_worksite_drawn_as_a_polygon(gama, world):
    response = gama.post(LIST, api_body(), format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["type"] == "Feature"
    assert body["geometry"]["type"] == "Polygon"
    assert body["geometry"]["coordinates"][0][0] == pytest.approx(list(at(-50, -50)), abs=1e-6)
    props = body["properties"]
    expected = {"id": world.gama.pk, "name": world.gama.name, "document": CNPJ_GAMA}
    assert props["generator"] == expected
    assert props["location"]["type"] == "Point" and props["drawn"] is True
    assert props["municipality"] == world.town.ibge_code
    assert props["permit_number"] == "ALV-2026-015" and props["built_area_m2"] == "350.50"
    assert props["registered"] is True and props["is_large_generator"] is True
    assert Worksite.objects.get(pk=body["id"]).registered_by == world.generator_user


def test_a_worksite_by_its_point(gama):
    point = {"type": "Point", "coordinates": list(at())}
    body = gama.post(LIST, api_body(geometry=point), format="json").json()
    assert body["geometry"]["type"] == "Point" and body["properties"]["drawn"] is False


BAD_BODIES = [
    ("self-intersecting", {"geometry": BOWTIE}, 400, "geometry", "auto-interseção em ("),
    ("two corners", {"geometry": TWO_CORNERS}, 400, "geometry", "pelo menos 3 vértices"),
    ("not a polygon", {"geometry": A_LINE}, 400, "geometry", "não LineString"),
    ("polygon text unreadable", {"geometry": "{não é json"}, 400, "geometry", "GeoJSON legível"),
    ("coordinates not numbers", {"geometry": {"type": "Point", "coordinates": ["a", "b"]}}, 400,
     "geometry", "[longitude, latitude] em números"),
    ("outside every municipality", {"geometry": FAR_AWAY}, 400, "geometry",
     "fora dos municípios atendidos"),
    ("partly outside", {"geometry": ACROSS_THE_EDGE}, 400, "geometry", "Parte da área desenhada"),
    ("built area zero", {"built_area_m2": "0"}, 400, "built_area_m2", "maior que zero"),
    ("built area negative", {"built_area_m2": "-5"}, 400, "built_area_m2", "maior que zero"),
    ("built area absurd", {"built_area_m2": "5000000"}, 400, "built_area_m2", "o limite é"),
    ("end before start", {"expected_end": "2026-08-01"}, 400, "expected_end",
     "é anterior ao início"),
    ("unknown kind of work", {"work_kind": "palacio"}, 400, "work_kind", None),
    ("no address", {"address": "   "}, 400, "address", None),
    ("a generator named by the generator's account", {"generator": CNPJ_ALFA}, 400,
     "generator", "só as próprias obras"),
]  # fmt: skip


@pytest.mark.parametrize(
    "changes,status,field,says", [c[1:] for c in BAD_BODIES], ids=[c[0] for c in BAD_BODIES]
)
def test_a_bad_body_is_refused_naming_its_field_and_writes_nothing(
    gama, changes, status, field, says
):
    response = gama.post(LIST, api_body(**changes), format="json")
    assert response.status_code == status, response.content
    body = problem(response)
    fields = [e["campo"] for e in body["errors"]]
    assert field in fields, body
    if says:
        assert says in body["detail"]
    assert not Worksite.objects.exists()


def test_a_permit_of_another_worksite_is_a_conflict(gama, world, other):
    registered(other, "Av. Central, 1", permit_number="ALV-2026-015", municipality=world.town)
    response = gama.post(LIST, api_body(), format="json")
    assert response.status_code == 409
    body = problem(response)
    assert body["errors"] == [
        {
            "campo": "permit_number",
            "mensagem": "O alvará nº ALV-2026-015 já está cadastrado em outra obra de "
            "Guaratinguetá (teste)/SP: confira o número (cada alvará é de uma obra só).",
        }
    ]
    assert Worksite.objects.count() == 1


def test_the_same_address_twice_is_a_conflict(gama, world):
    registered(world.gama, ADDRESS, municipality=world.town)
    response = gama.post(LIST, api_body(address="RUA DO CANTEIRO, 200"), format="json")
    assert response.status_code == 409
    assert problem(response)["errors"][0]["campo"] == "address"
    assert Worksite.objects.count() == 1


def test_a_worksite_a_ctr_created_is_completed_by_the_api_too(gama, world):
    created = Worksite.objects.create(
        generator=world.gama, address=ADDRESS.upper(), location=world.origin
    )
    response = gama.post(LIST, api_body(), format="json")
    assert response.status_code == 201
    assert response.json()["id"] == created.pk
    assert Worksite.objects.count() == 1


# --- lists and filters --------------------------------------------------------------------------


def test_the_generator_lists_only_its_worksites(gama, world, other):
    mine = registered(world.gama, municipality=world.town)
    registered(other, "Av. Central, 1", municipality=world.town)
    body = gama.get(LIST).json()
    assert body["type"] == "FeatureCollection" and body["count"] == 1
    assert [f["id"] for f in body["features"]] == [mine.pk]


def test_the_nucleo_lists_every_worksite_and_filters_them(world, other):
    mine = registered(world.gama, municipality=world.town, is_large_generator=True)
    theirs = registered(other, "Av. Central, 1", municipality=world.town)
    # Created by a CTR: in the CTR's municipality.
    pending = Worksite.objects.create(
        generator=other, address="Rua X, 1", location=world.origin, municipality=world.town
    )
    nucleo = api(world.nucleo)

    def ids(query: str) -> set[int]:
        response = nucleo.get(LIST + query)
        assert response.status_code == 200, response.content
        return {f["id"] for f in response.json()["features"]}

    assert ids("") == {mine.pk, theirs.pk, pending.pk}
    assert ids("?generator=33.644.555/0001-25") == {mine.pk}
    assert ids("?registered=false") == {pending.pk}
    assert ids("?registered=true&large_generator=true") == {mine.pk}
    assert ids(f"?municipality={world.town.ibge_code}") == {mine.pk, theirs.pk, pending.pk}
    lon, lat = at()
    assert ids(f"?bbox={lon - 0.001},{lat - 0.001},{lon + 0.001},{lat + 0.001}") == {
        mine.pk,
        theirs.pk,
        pending.pk,
    }
    wrong = nucleo.get(LIST + "?generator=123")
    assert wrong.status_code == 400 and problem(wrong)["errors"][0]["campo"] == "generator"


@pytest.mark.parametrize("who,status", [("alfa_user", 403), ("operator", 403), ("outsider", 403)])
def test_other_roles_are_kept_out(world, who, status):
    client = api(getattr(world, who))
    assert client.get(LIST).status_code == status
    assert client.post(LIST, api_body(), format="json").status_code == status
    assert not Worksite.objects.exists()


def test_anonymous_callers_must_authenticate():
    assert api().get(LIST).status_code == 401


# --- one worksite ------------------------------------------------------------------------------


def test_the_generator_changes_only_the_fields_it_sends(gama, world):
    site = registered(world.gama, municipality=world.town)
    response = gama.patch(
        f"{LIST}{site.pk}/", {"geometry": square_m(), "built_area_m2": "900"}, format="json"
    )
    assert response.status_code == 200, response.content
    site.refresh_from_db()
    assert site.area is not None and site.built_area_m2 == 900
    assert site.address == ADDRESS and site.work_kind == "renovation"


def test_a_bad_change_writes_nothing(gama, world):
    site = registered(world.gama, municipality=world.town)
    response = gama.patch(
        f"{LIST}{site.pk}/", {"geometry": BOWTIE, "address": "Rua Nova, 5"}, format="json"
    )
    assert response.status_code == 400
    assert problem(response)["errors"][0]["campo"] == "geometry"
    site.refresh_from_db()
    assert site.address == ADDRESS and site.area is None


def test_the_generator_of_a_worksite_does_not_change(gama, world):
    site = registered(world.gama, municipality=world.town)
    response = gama.patch(f"{LIST}{site.pk}/", {"generator": CNPJ_ALFA}, format="json")
    assert response.status_code == 400


def test_another_generators_worksite_does_not_exist_for_the_generator(gama, world, other):
    site = registered(other, municipality=world.town)
    assert gama.get(f"{LIST}{site.pk}/").status_code == 404
    assert gama.patch(f"{LIST}{site.pk}/", {"built_area_m2": "1"}, format="json").status_code == (
        404
    )
    site.refresh_from_db()
    assert site.built_area_m2 == 120


def test_the_nucleo_reads_and_changes_any_worksite(world, other):
    site = registered(other, municipality=world.town)
    nucleo = api(world.nucleo)
    assert nucleo.get(f"{LIST}{site.pk}/").json()["properties"]["generator"]["name"] == (
        "Outra Construtora"
    )
    assert (
        nucleo.patch(f"{LIST}{site.pk}/", {"permit_number": "ALV-9"}, format="json").status_code
        == 200
    )


def test_the_nucleo_registers_for_a_generator_and_must_name_it(world):
    nucleo = api(world.nucleo)
    missing = nucleo.post(LIST, api_body(), format="json")
    assert missing.status_code == 400 and problem(missing)["errors"][0]["campo"] == "generator"
    created = nucleo.post(LIST, api_body(generator=CNPJ_GAMA), format="json")
    assert created.status_code == 201
    assert created.json()["properties"]["generator"]["id"] == world.gama.pk


def test_the_worksite_destinations_stay_where_they_were(world):
    site = registered(world.gama, municipality=world.town)
    response = api(world.nucleo).get(f"{LIST}{site.pk}/destinations/")
    assert response.status_code == 200
    assert "conclusive" in response.json()


def test_put_and_delete_are_not_offered(gama, world):
    site = registered(world.gama, municipality=world.town)
    assert gama.put(f"{LIST}{site.pk}/", api_body(), format="json").status_code == 405
    assert gama.delete(f"{LIST}{site.pk}/").status_code == 405
