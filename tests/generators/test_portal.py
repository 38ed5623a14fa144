"""The generator's pages of its CTRs: it sees every CTR that names it or
its worksites, whichever transporter issued it, and nothing else, on its pages and in the API;
status, reception, findings, history and where the waste is now; read only."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.test import Client

from audit.models import AccessLog
from ctr import closing
from ctr.models import CTR, CTRStatus, Generator
from generators import portal_views
from tests.ctr.onward_world import onward
from tests.ctr_world import build_world, make_user
from tests.generators.portal_world import MARIA, api_client, issue, listed_numbers

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(frozen_today):
    world = build_world()
    world.recycling_operator = make_user("operador_reciclagem", facility=world.recycling)
    return world


def web(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_generator_sees_the_ctrs_naming_it_from_any_transporter_and_no_other(world):
    by_alfa, by_beta = issue(world, "alfa"), issue(world, "beta")
    others = issue(world, "alfa", generator=MARIA, address="Rua das Flores, 10")
    page = web(world.generator_user).get("/gerador/ctrs/").content.decode()
    assert by_alfa.number in page and by_beta.number in page
    assert others.number not in page
    listed = listed_numbers(api_client(world.generator_user).get("/api/v1/ctrs/"))
    assert listed == {by_alfa.number, by_beta.number}


def test_a_ctr_from_its_worksite_declared_in_another_name_is_its_own(world):
    """The builder's worksite, the owner's name on the CTR (worksite_id plus another generator):
    the worksite's generator still sees the load."""
    site = issue(world).worksite
    in_owners_name = issue(world, "beta", generator=MARIA, worksite=site)
    assert in_owners_name.generator.name == "Maria da Obra"
    listed = listed_numbers(api_client(world.generator_user).get("/api/v1/ctrs/"))
    assert in_owners_name.number in listed
    assert (
        web(world.generator_user).get(f"/gerador/ctrs/{in_owners_name.number}/").status_code == 200
    )


def test_another_generators_ctr_is_not_found_anywhere(world):
    others = issue(world, "alfa", generator=MARIA, address="Rua das Flores, 10")
    client, api = web(world.generator_user), api_client(world.generator_user)
    assert client.get(f"/gerador/ctrs/{others.number}/").status_code == 404
    assert api.get(f"/api/v1/ctrs/{others.number}/").status_code == 404
    assert client.get(f"/ctrs/{others.number}/pdf/").status_code == 404
    assert client.get(f"/obras/{others.worksite_id}/relatorio/").status_code == 404
    assert client.get(f"/geradores/{others.generator_id}/cdf/").status_code == 404
    refused = api.get(f"/api/v1/worksites/{others.worksite_id}/destinations/")
    assert refused.status_code == 403
    assert "próprio gerador" in refused.json()["detail"]


def test_the_operator_company_sees_the_onward_ctrs_that_name_it(world):
    """An onward CTR names the facility's operator as its generator (art. 3 VIII): that
    company's account sees it; its detail says it is an onward CTR, with no worksite chain."""
    issue(world, generator=MARIA, address="Rua das Flores, 10")
    closing.receive(CTR.objects.get(), world.operator, Decimal("3"))
    shipped = onward(world, {"A": "2"})
    company = Generator.objects.get(name="Triagem Vale Ltda.")
    user = make_user("triagem", generator=company)
    assert listed_numbers(api_client(user).get("/api/v1/ctrs/")) == {shipped.number}
    page = web(user).get(f"/gerador/ctrs/{shipped.number}/").content.decode()
    assert "CTR de saída de uma área de recebimento" in page


def test_the_generator_issues_receives_refuses_and_cancels_nothing(world):
    ctr = issue(world)
    api = api_client(world.generator_user)
    for action, body in (
        ("receive", {"received_volume_m3": "3"}),
        ("refuse", {"reason": "não é minha"}),
        ("cancel", {"reason": "não é minha"}),
    ):
        response = api.post(f"/api/v1/ctrs/{ctr.number}/{action}/", body, format="json")
        assert response.status_code == 403, action
        assert response.json()["detail"].startswith("Só "), response.json()
    issued = api.post("/api/v1/ctrs/", {}, format="json")
    assert issued.status_code == 403
    assert "transportador" in issued.json()["detail"]
    client = web(world.generator_user)
    for path in ("/transportador/ctrs/", "/transportador/ctrs/novo/", "/recebimentos/"):
        assert client.get(path).status_code == 403, path
    ctr.refresh_from_db()
    assert ctr.status == CTRStatus.ISSUED and ctr.events.count() == 1


def test_sign_in_takes_the_generator_to_its_home(world):
    response = web(world.generator_user).get("/painel/")
    assert response.status_code == 302 and response["Location"] == "/gerador/"


def test_home_shows_its_worksites_and_recent_ctrs(world):
    first = issue(world, "alfa")
    second = issue(world, "beta", address="Rua Dois, 2")
    page = web(world.generator_user).get("/gerador/").content.decode()
    assert "Construtora Gama Ltda." in page
    assert "Av. da Gama, 500" in page and "Rua Dois, 2" in page
    assert first.number in page and second.number in page
    assert f"/obras/{first.worksite_id}/relatorio/" in page
    assert f"/geradores/{first.generator_id}/cdf/" in page
    assert f'href="/gerador/obras/{first.worksite_id}/"' in page
    assert f'href="/gerador/ctrs/?worksite={first.worksite_id}"' in page
    assert 'href="/gerador/obras/nova/"' in page


def test_the_ways_to_a_generator_account_are_linked(world):
    """The login page leads a generator to its registration; the transporter's menu to the
    invitation of its generators."""
    assert 'href="/gerador/cadastro/"' in Client().get("/entrar/").content.decode()
    menu = web(world.alfa_user).get("/transportador/ctrs/").content.decode()
    assert 'href="/transportador/geradores/convites/"' in menu


def test_list_filters_by_status_worksite_and_period(world, monkeypatch):
    received = issue(world, "alfa")
    closing.receive(received, world.operator, Decimal("3"))
    elsewhere = issue(world, "beta", address="Rua Dois, 2")
    client = web(world.generator_user)

    def numbers(query: str) -> set[str]:
        page = client.get(f"/gerador/ctrs/?{query}").content.decode()
        return {n for n in (received.number, elsewhere.number) if n in page}

    assert numbers("status=received") == {received.number}
    assert numbers(f"worksite={elsewhere.worksite_id}") == {elsewhere.number}
    assert numbers("date_from=2026-12-01") == set()
    assert numbers("date_from=2026-11-30&date_to=2026-11-30") == {received.number, elsewhere.number}
    monkeypatch.setattr(portal_views, "PAGE_SIZE", 1)
    paged = client.get("/gerador/ctrs/?pagina=2").content.decode()
    assert "Página 2 de 2" in paged


def test_another_generators_worksite_in_the_filter_is_refused_in_portuguese(world):
    others = issue(world, generator=MARIA, address="Rua das Flores, 10")
    response = web(world.generator_user).get(f"/gerador/ctrs/?worksite={others.worksite_id}")
    assert response.status_code == 400
    assert "Faça uma escolha válida" in response.content.decode()
    assert others.number not in response.content.decode()


def test_map_draws_its_ctrs_by_status_from_origin_to_destination(world):
    received = issue(world, "alfa")
    closing.receive(received, world.operator, Decimal("3"))
    issued = issue(world, "beta")
    others = issue(world, generator=MARIA, address="Rua das Flores, 10")
    response = web(world.generator_user).get("/gerador/mapa/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "Emitido (1)" in page and "Recebido (1)" in page
    assert issued.number in page and received.number in page
    assert others.number not in page
    assert f"/gerador/ctrs/{issued.number}/" in page
    assert "LineString" in page
    assert "cdn" not in page.lower()


def test_detail_shows_the_reception_and_where_the_waste_is_now(world):
    ctr = issue(world)
    closing.receive(ctr, world.operator, Decimal("2.5"))
    shipped = onward(world, {"A": "2.5"})
    closing.receive(shipped, world.recycling_operator, Decimal("2.5"))
    client = web(world.generator_user)
    page = client.get(f"/gerador/ctrs/{ctr.number}/").content.decode()
    assert "Volume recebido: 2,5 m³" in page
    assert "Destinação final: Reciclagem" in page
    assert "Destinação final comprovada" in page
    log = AccessLog.objects.get(purpose="Gerador: detalhe do CTR")
    assert log.user == world.generator_user and log.object_label == ctr.number


def test_detail_of_a_refused_load_says_why_and_that_its_destination_is_unproven(world):
    ctr = issue(world)
    closing.refuse(ctr, world.operator, "Carga misturada com lixo doméstico")
    page = web(world.generator_user).get(f"/gerador/ctrs/{ctr.number}/").content.decode()
    assert "Motivo: Carga misturada com lixo doméstico" in page
    assert "Carga recusada: ATT" in page
    assert "ainda não está comprovada" in page


def test_worksite_report_and_certificate_of_its_own_worksite_cover_every_transporter(world):
    by_alfa = issue(world, "alfa")
    by_beta = issue(world, "beta")
    client = web(world.generator_user)
    report = client.get(f"/obras/{by_alfa.worksite_id}/relatorio/").content.decode()
    assert by_alfa.number in report and by_beta.number in report
    # Its CTRs link to its own pages.
    assert f"/gerador/ctrs/{by_beta.number}/" in report
    assert client.get(f"/obras/{by_alfa.worksite_id}/cdf/").status_code == 200
    assert client.get(f"/geradores/{by_alfa.generator_id}/cdf/").status_code == 200
    api = api_client(world.generator_user)
    destinations = api.get(f"/api/v1/worksites/{by_alfa.worksite_id}/destinations/").json()
    assert {load["number"] for load in destinations["ctrs"]} == {by_alfa.number, by_beta.number}
    assert destinations["subject"]["transporter_id"] is None


def test_pages_are_the_generators_only(world):
    for user in (world.alfa_user, world.operator, world.nucleo, world.outsider):
        assert web(user).get("/gerador/").status_code == 403, user
    assert Client().get("/gerador/ctrs/").status_code == 302
