"""The Habite-se declaration in the API: the generator asks and reads, the
Núcleo lists, issues and refuses; refusals are problem+json in Portuguese and write nothing;
two Núcleo users issuing at once end with one declaration; every endpoint in the schema."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from ctr import closing, roles
from ctr.models import DestinationCertificate
from generators.models import DeclarationStatus, HabiteSeDeclaration
from tests.ctr.test_ctr_races import all_at_once, call, send
from tests.ctr_world import build_world, make_user
from tests.generators.declaration_world import (
    asked,
    gama_site,
    load,
    operator_of,
    person_site,
    ship,
    waiting,
)

PROBLEM = "application/problem+json"


@pytest.fixture
def world(frozen_today):
    return build_world()


@pytest.fixture
def site(world):
    return gama_site(world)


def api(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(get_user_model().objects.get(pk=user.pk))
    return client


@pytest.mark.django_db
def test_the_generator_asks_and_reads_what_keeps_it_open(world, site):
    load(world, site, {"A": "2"}, received="2", facility=world.recycling)
    url = f"/api/v1/worksites/{site.pk}/habite-se/"
    created = api(world.generator_user).post(
        url, {"ended_on": "2026-11-20", "note": "Obra concluída."}, format="json"
    )
    assert created.status_code == 201, created.content
    body = created.json()
    assert (body["status"], body["ended_on"], body["requested_by"]) == (
        "requested",
        "2026-11-20",
        "gerador",
    )
    assert body["facts"] is None and body["links"] is None
    # A load leaves the worksite after the request: the Núcleo cannot issue yet.
    in_transit = load(world, site, {"A": "3"})

    read = api(world.generator_user).get(url).json()
    assert read["review"]["can_issue"] is False
    assert read["review"]["reasons"] == [
        f"o {in_transit.number} (3 m³) ainda não foi recebido pela área “ATT”"
    ]
    assert read["review"]["classes"][0]["transported_m3"] == "5.000"
    assert [d["id"] for d in read["declarations"]] == [body["id"]]
    assert api(world.nucleo).get(f"/api/v1/habite-se/{body['id']}/").status_code == 200


def post(url: str, token: str, data: dict) -> tuple[int, str, dict]:
    """POST as JSON over HTTP: status, Content-Type and body."""
    status, headers, raw = send(url, token, data)
    return status, headers["Content-Type"], json.loads(raw)


@pytest.mark.django_db(transaction=True)
def test_no_request_while_the_review_lists_blockers(live_server, frozen_today):
    """The API refuses the request the generator's page does not offer,
    while a load is on its way or its waste still in an ATT's stock: 409, problem+json in
    Portuguese with each blocker, nothing written. Once destined, the same request goes."""
    world = build_world()
    site = gama_site(world)
    in_transit = load(world, site, {"A": "3"})
    load(world, site, {"A": "6"}, received="6")
    token = Token.objects.create(user=world.generator_user).key
    url = f"{live_server.url}/api/v1/worksites/{site.pk}/habite-se/"
    reasons = api(world.generator_user).get(url).json()["review"]["reasons"]
    assert len(reasons) == 2 and in_transit.number in reasons[0] and "estoque" in reasons[1]

    status, content_type, body = post(url, token, {"ended_on": "2026-11-20"})

    assert (status, content_type) == (409, PROBLEM), body
    assert body["detail"] == (
        "O pedido não foi enviado: ainda há 2 pendências na destinação dos resíduos da obra: "
        + "; ".join(reasons)
        + "."
    )
    assert [e["mensagem"] for e in body["errors"]] == reasons
    assert not HabiteSeDeclaration.objects.exists()
    site.refresh_from_db()
    assert site.ended_on is None

    closing.receive(in_transit, operator_of(world.att), in_transit.total_volume_m3)
    ship(world, {"A": "9"})
    status, _, body = post(url, token, {"ended_on": "2026-11-20"})
    assert status == 201, body
    assert HabiteSeDeclaration.objects.get().pk == body["id"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"ended_on": "2026-12-01"}, "ended_on"),
        ({"ended_on": "20/11/2026"}, "ended_on"),
        ({}, None),
    ],
)
def test_a_bad_request_is_a_portuguese_400_and_writes_nothing(world, site, data, field):
    response = api(world.generator_user).post(
        f"/api/v1/worksites/{site.pk}/habite-se/", data, format="json"
    )
    assert response.status_code == 400
    assert response["Content-Type"].startswith(PROBLEM)
    if field:
        assert any(e["campo"] == field for e in response.json()["errors"]), response.json()
    assert not HabiteSeDeclaration.objects.exists()


@pytest.mark.django_db
def test_only_the_generator_asks_and_sees_it(world, site):
    url = f"/api/v1/worksites/{site.pk}/habite-se/"
    response = api(world.nucleo).post(url, {"ended_on": "2026-11-20"}, format="json")
    assert response.status_code == 403
    assert "Só o gerador da obra pede" in response.json()["detail"]
    # Whoever does not see the worksite: as if it did not exist.
    assert (
        api(world.alfa_user).post(url, {"ended_on": "2026-11-20"}, format="json").status_code == 404
    )
    _, maria = person_site(world)
    assert api(maria).get(url).status_code == 404
    assert api().get(url).status_code == 401
    assert api(world.nucleo).get("/api/v1/worksites/999999/habite-se/").status_code == 404


@pytest.mark.django_db
def test_the_nucleo_lists_issues_and_the_links_follow(world, site):
    load(world, site, {"A": "6"}, received="6")
    declaration = waiting(world, site)
    queue = api(world.nucleo).get("/api/v1/habite-se/").json()
    assert [d["id"] for d in queue] == [declaration.pk]

    early = api(world.nucleo).post(f"/api/v1/habite-se/{declaration.pk}/issue/", {}, format="json")
    assert early.status_code == 409 and early["Content-Type"].startswith(PROBLEM)
    assert early.json()["detail"] == (
        "A declaração não pode ser emitida: 6 m³ de classe A ainda em estoque na área “ATT”."
    )
    assert not DestinationCertificate.objects.exists()

    ship(world, {"A": "6"})
    issued = api(world.nucleo).post(f"/api/v1/habite-se/{declaration.pk}/issue/", format="json")
    assert issued.status_code == 200, issued.content
    body = issued.json()
    assert body["status"] == "issued" and body["code"].startswith("HAB-")
    assert body["facts"]["certificate_code"].startswith("CDF-")
    assert body["facts"]["classes"][0]["destined_m3"] == "6.000"
    assert body["links"]["verify"] == f"http://testserver/verificar/habite-se/{body['code']}/"
    assert body["links"]["pdf"] == f"http://testserver/habite-se/{declaration.pk}/declaracao.pdf"
    assert api(world.nucleo).get("/api/v1/habite-se/", {"status": "issued"}).json()[0]["id"] == (
        declaration.pk
    )
    bad = api(world.nucleo).get("/api/v1/habite-se/", {"status": "talvez"})
    assert bad.status_code == 400 and "status “talvez” inválido" in bad.json()["detail"]


@pytest.mark.django_db
def test_refusing_needs_reasons_and_only_the_nucleo_decides(world, site):
    declaration = waiting(world, site)
    url = f"/api/v1/habite-se/{declaration.pk}/refuse/"
    for user in (world.fiscal, world.authority, world.generator_user):
        response = api(user).post(url, {"reasons": "não"}, format="json")
        assert response.status_code == 403
        assert "Só o Núcleo Permanente de Gestão recusa" in response.json()["detail"]
    assert api(world.nucleo).post(url, {}, format="json").status_code == 400
    assert api(world.nucleo).post(url, {"reasons": "   "}, format="json").status_code == 400
    done = api(world.nucleo).post(url, {"reasons": "Alvará vencido."}, format="json")
    assert done.status_code == 200 and done.json()["reasons"] == "Alvará vencido."
    again = api(world.nucleo).post(url, {"reasons": "De novo."}, format="json")
    assert again.status_code == 409 and "já foi recusado" in again.json()["detail"]


@pytest.mark.django_db
def test_the_endpoints_are_in_the_openapi_schema(world):
    schema = APIClient().get("/api/v1/schema/?format=json").json()
    paths = schema["paths"]
    worksite = paths["/api/v1/worksites/{id}/habite-se/"]
    assert {"200", "401", "403", "404"} <= set(worksite["get"]["responses"])
    assert {"201", "400", "403", "409"} <= set(worksite["post"]["responses"])
    for path in ("/api/v1/habite-se/{id}/issue/", "/api/v1/habite-se/{id}/refuse/"):
        assert {"200", "400", "403", "404", "409"} <= set(paths[path]["post"]["responses"])
    assert "get" in paths["/api/v1/habite-se/{id}/"] and "get" in paths["/api/v1/habite-se/"]
    assert "facts" in schema["components"]["schemas"]["DeclarationOutput"]["properties"]


@pytest.mark.django_db(transaction=True)
def test_two_nucleo_users_issuing_at_once_give_one_declaration(live_server, frozen_today):
    world = build_world()
    site = gama_site(world)
    load(world, site, {"A": "4"}, received="4", facility=world.recycling)
    declaration = asked(world, site)
    second = make_user("nucleo2", roles.NUCLEO, world.town)
    tokens = [Token.objects.create(user=user).key for user in (world.nucleo, second)]
    url = f"{live_server.url}/api/v1/habite-se/{declaration.pk}/issue/"

    results = all_at_once(2, lambda i: call(url, tokens[i], {}))

    assert sorted(status for status, _ in results) == [200, 409], results
    (loser,) = [body for status, body in results if status == 409]
    assert "já foi emitida" in loser["detail"]
    declaration.refresh_from_db()
    assert declaration.status == DeclarationStatus.ISSUED
    assert HabiteSeDeclaration.objects.filter(status=DeclarationStatus.ISSUED).count() == 1
    assert DestinationCertificate.objects.count() == 1
