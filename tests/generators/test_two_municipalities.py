"""A municipality's data is its own, on the generator's side, with two municipalities
(tests.neighbour_world): the registrations, invitations, worksites, PGRCC, Habite-se requests and
unconfirmed CTRs of A are A's. B's staff get a 404 on each of A's objects and lists without them;
A's staff see theirs; A's auditor reads and gets a 403 on every act; a consortium's inspector sees
each municipality's lists after choosing it (/municipio/). Worksites always carry their
municipality, from their location."""

from __future__ import annotations

import pytest
from django.utils import timezone

from ctr import services
from ctr.models import CTR, Generator, Worksite
from generators import accounts, plans, worksites
from generators.models import (
    GeneratorInvitation,
    GeneratorRegistration,
    PlanStatus,
    RegistrationStatus,
)
from jurisdiction.scope import ReadOnlyRole
from tests.builders import municipality, set_parameters
from tests.ctr_world import CNPJ_GAMA, ctr_payload, issue_hours_ago
from tests.generators.account_world import pending_registration
from tests.generators.declaration_world import waiting
from tests.generators.suspects_world import days, site
from tests.neighbour_world import api, build_neighbours, choose, web

pytestmark = pytest.mark.django_db


@pytest.fixture
def towns(frozen_today):
    towns = build_neighbours()
    world = towns.world
    towns.a_registration = pending_registration("cadastro-a", municipality=towns.a)
    towns.b_registration = pending_registration("cadastro-b", "11144477735", municipality=towns.b)
    # Gama's worksite in A: a PGRCC sent to A's Núcleo and a Habite-se request.
    towns.a_site = site(world, "Rua de A, 1", start=days(-300), end=days(-60))
    towns.a_plan = plans.save(
        towns.a_site,
        world.generator_user,
        plans.PlanInput({"A": "40"}, [world.alfa.pk], [world.att.pk]),
        submit=True,
    )
    towns.a_declaration = waiting(world, towns.a_site, ended_on=days(-1))
    # A worksite of A past its expected end: a suspect one (generators.suspects).
    towns.a_late = site(world, "Rua Atrasada de A, 3", start=days(-300), end=days(-60), large=False)
    # Another generator's worksite in B.
    builder = Generator.objects.create(name="Reformas de B Ltda.", document="11444777000161")
    towns.b_site = site(
        world, "Rua de B, 2", generator=builder, location=towns.in_b(), municipality=towns.b
    )
    return towns


def listed_registrations(client) -> set[int]:
    response = client.get("/nucleo/geradores/cadastros/")
    assert response.status_code == 200
    return {r.pk for r in response.context["pending"]}


# --- registrations ----------------------------------------------------------------------------


def test_b_staff_do_not_see_or_decide_a_registration(towns):
    a = towns.a_registration.pk
    b_nucleo = web(towns.b_nucleo)
    assert listed_registrations(b_nucleo) == {towns.b_registration.pk}
    assert b_nucleo.get(f"/nucleo/geradores/cadastros/{a}/").status_code == 404
    assert b_nucleo.post(f"/nucleo/geradores/cadastros/{a}/confirmar/").status_code == 404
    refused = b_nucleo.post(f"/nucleo/geradores/cadastros/{a}/recusar/", {"reason": "Não."})
    assert refused.status_code == 404
    client = api(towns.b_nucleo)
    assert [r["id"] for r in client.get("/api/v1/generator-registrations/").json()["results"]] == [
        towns.b_registration.pk
    ]
    assert client.get(f"/api/v1/generator-registrations/{a}/").status_code == 404
    assert client.post(f"/api/v1/generator-registrations/{a}/confirm/").status_code == 404
    towns.a_registration.refresh_from_db()
    assert towns.a_registration.status == RegistrationStatus.PENDING


def test_a_staff_decide_a_registration_and_the_auditor_only_reads_it(towns):
    a = towns.a_registration.pk
    assert listed_registrations(web(towns.world.nucleo)) == {a}
    auditor = web(towns.a_auditor)
    page = auditor.get(f"/nucleo/geradores/cadastros/{a}/")
    assert page.status_code == 200 and "Confirmar o cadastro" not in page.content.decode()
    assert auditor.post(f"/nucleo/geradores/cadastros/{a}/confirmar/").status_code == 403
    assert (
        api(towns.a_auditor).post(f"/api/v1/generator-registrations/{a}/confirm/").status_code
        == 403
    )
    with pytest.raises(ReadOnlyRole):
        accounts.confirm_registration(towns.a_registration, towns.a_auditor)
    confirmed = api(towns.world.fiscal).post(f"/api/v1/generator-registrations/{a}/confirm/")
    assert confirmed.status_code == 200 and confirmed.json()["municipality"] == "3518404"


def test_the_consortium_inspector_sees_each_municipality_s_queue_after_choosing_it(towns):
    client = web(towns.consortium)
    choose(client, towns.a)
    assert listed_registrations(client) == {towns.a_registration.pk}
    choose(client, towns.b)
    assert listed_registrations(client) == {towns.b_registration.pk}
    # The API lists both of its municipalities'.
    found = api(towns.consortium).get("/api/v1/generator-registrations/").json()["results"]
    assert {r["id"] for r in found} == {towns.a_registration.pk, towns.b_registration.pk}


def test_the_generator_chooses_the_municipality_whose_nucleo_confirms_it(towns):
    page = web().get("/gerador/cadastro/")
    html = page.content.decode()
    assert "Aparecida (teste)/SP" in html and "Guaratinguetá (teste)/SP" in html
    base = {
        "name": "José da Reforma",
        "document": "390.533.447-05",
        "email": "jose@exemplo.com.br",
        "username": "jose",
        "password": "uma-senha-longa-9",
        "password_confirm": "uma-senha-longa-9",
    }
    # Two municipalities served: the choice is required, and only among them.
    missing = web().post("/gerador/cadastro/", base)
    assert missing.status_code == 400 and "Escolha o município" in missing.content.decode()
    unserved = municipality("3550308", "São Paulo (teste)", size_m=100, east_m=60_000)
    refused = web().post("/gerador/cadastro/", {**base, "municipality": unserved.pk})
    assert refused.status_code == 400
    assert not GeneratorRegistration.objects.filter(user__username="jose").exists()
    sent = web().post("/gerador/cadastro/", {**base, "municipality": towns.b.pk})
    assert sent.status_code == 302
    registration = GeneratorRegistration.objects.get(user__username="jose")
    assert registration.municipality == towns.b
    assert registration.pk in listed_registrations(web(towns.b_nucleo))
    assert registration.pk not in listed_registrations(web(towns.world.nucleo))


# --- invitations ------------------------------------------------------------------------------


def test_an_invitation_is_its_nucleo_s_municipality_s(towns):
    invited = accounts.invite(towns.world.nucleo, "gama@exemplo.com.br", CNPJ_GAMA)
    assert invited.municipality == towns.a
    a_page = web(towns.world.nucleo).get("/nucleo/geradores/convites/")
    assert [i.pk for i in a_page.context["sent"]] == [invited.pk]
    b_page = web(towns.b_nucleo).get("/nucleo/geradores/convites/")
    assert list(b_page.context["sent"]) == []
    assert api(towns.b_nucleo).get("/api/v1/generator-invitations/").json()["results"] == []
    # The auditor invites no one.
    form = {"document": CNPJ_GAMA, "email": "outro@exemplo.com.br"}
    assert web(towns.a_auditor).post("/nucleo/geradores/convites/", form).status_code == 403
    assert api(towns.a_auditor).post("/api/v1/generator-invitations/", form).status_code == 403
    assert GeneratorInvitation.objects.count() == 1


def test_a_transporter_s_invitation_is_the_municipality_of_the_ctr_it_carried_on(towns):
    world = towns.world
    ctr = issue_hours_ago(world)  # Alfa carried for Maria da Obra, in A
    invited = accounts.invite(world.alfa_user, "maria@exemplo.com.br", ctr.generator.document)
    assert invited.municipality == towns.a == ctr.municipality
    assert [i.pk for i in accounts.invitations_for(world.nucleo)] == [invited.pk]
    assert list(accounts.invitations_for(towns.b_nucleo)) == []


# --- worksites --------------------------------------------------------------------------------


def test_b_staff_do_not_see_a_worksites(towns):
    a = towns.a_site.pk
    b_nucleo = web(towns.b_nucleo)
    listed = b_nucleo.get("/gerador/obras/")
    assert [w.pk for w in listed.context["page"]] == [towns.b_site.pk]
    for path in (f"/gerador/obras/{a}/", f"/gerador/obras/{a}/editar/", f"/nucleo/obras/{a}/"):
        assert b_nucleo.get(path).status_code == 404, path
    nucleo_list = b_nucleo.get("/nucleo/obras/")
    assert [row.worksite.pk for row in nucleo_list.context["rows"]] == [towns.b_site.pk]
    csv_text = b_nucleo.get("/nucleo/obras/?csv=1").content.decode("utf-8-sig")
    assert "Rua de A" not in csv_text and "Rua de B" in csv_text
    client = api(towns.b_nucleo)
    features = client.get("/api/v1/worksites/").json()["features"]
    assert [f["id"] for f in features] == [towns.b_site.pk]
    assert client.get(f"/api/v1/worksites/{a}/").status_code == 404
    assert (
        client.patch(f"/api/v1/worksites/{a}/", {"address": "X"}, format="json").status_code == 404
    )
    # The suspect worksites: of the user's municipalities only.
    suspects_of_a = api(towns.world.nucleo).get("/api/v1/suspect-worksites/").json()["results"]
    assert [item["id"] for item in suspects_of_a] == [towns.a_late.pk]
    assert client.get("/api/v1/suspect-worksites/").json()["results"] == []
    assert client.get("/api/v1/suspect-worksites/?municipality=3518404").json()["results"] == []


def test_a_staff_see_a_worksites_and_the_auditor_changes_none(towns):
    a = towns.a_site.pk
    assert web(towns.world.nucleo).get(f"/nucleo/obras/{a}/").status_code == 200
    assert {
        f["id"] for f in api(towns.world.fiscal).get("/api/v1/worksites/").json()["features"]
    } == {a, towns.a_late.pk}
    auditor = api(towns.a_auditor)
    assert auditor.get(f"/api/v1/worksites/{a}/").status_code == 200
    changed = auditor.patch(f"/api/v1/worksites/{a}/", {"address": "Outra, 9"}, format="json")
    assert changed.status_code == 403
    with pytest.raises(ReadOnlyRole):
        worksites.update(towns.a_site, worksites.Registration.of(towns.a_site), towns.a_auditor)
    towns.a_site.refresh_from_db()
    assert towns.a_site.address == "Rua de A, 1"


def test_staff_register_a_worksite_only_where_they_act(towns):
    body = {
        "generator": CNPJ_GAMA,
        "address": "Rua Nova, 3",
        "geometry": {"type": "Point", "coordinates": list(towns.in_b().coords)},
        "built_area_m2": "300",
        "work_kind": "renovation",
        "start_date": "2026-12-01",
        "expected_end": "2027-06-30",
    }
    # A's Núcleo, a worksite located in B: B is not its municipality (404, nothing written).
    assert (
        api(towns.world.nucleo).post("/api/v1/worksites/", body, format="json").status_code == 404
    )
    assert not Worksite.objects.filter(address="Rua Nova, 3").exists()
    made = api(towns.b_nucleo).post("/api/v1/worksites/", body, format="json")
    assert made.status_code == 201, made.content
    assert Worksite.objects.get(pk=made.json()["id"]).municipality == towns.b


def test_a_worksite_a_ctr_creates_takes_the_municipality_of_its_location(towns):
    world = towns.world
    issued = api(world.alfa_user).post("/api/v1/ctrs/", ctr_payload(world), format="json")
    assert issued.status_code == 201, issued.content
    ctr = CTR.objects.get(number=issued.json()["number"])
    assert ctr.worksite.registered_at is None and ctr.worksite.municipality == towns.a
    in_b = services.worksite_for(
        world.gama, services.WorksiteData("Rua do Outro Lado, 5", towns.in_b())
    )
    assert in_b.municipality == towns.b


def test_a_worksite_the_csv_import_creates_is_the_ctr_s_municipality_s(towns):
    """The set-based path (ctr/bulk/) as the per-CTR one: the worksite of a new address is
    created in the municipality of its CTR."""
    from ctr.bulk import csv_import
    from tests.ctr.test_ctr_csv import csv_bytes, row

    world = towns.world
    data = csv_bytes([row(world, worksite_address="Rua Importada, 7")])
    (result,) = csv_import.import_ctrs(data, world.alfa, world.alfa_user).issued
    ctr = CTR.objects.get(number=result.number)
    assert ctr.worksite.address == "Rua Importada, 7"
    assert ctr.worksite.municipality == towns.a == ctr.municipality


# --- PGRCC ------------------------------------------------------------------------------------


def test_b_staff_do_not_see_or_decide_a_plan(towns):
    plan = towns.a_plan.pk
    b_nucleo = web(towns.b_nucleo)
    assert list(b_nucleo.get("/nucleo/pgrcc/").context["waiting"]) == []
    assert b_nucleo.get(f"/nucleo/pgrcc/{plan}/").status_code == 404
    assert b_nucleo.post(f"/nucleo/pgrcc/{plan}/", {"decision": "approve"}).status_code == 404
    client = api(towns.b_nucleo)
    assert client.get("/api/v1/plans/").json() == []
    assert client.get(f"/api/v1/plans/{plan}/").status_code == 404
    assert client.post(f"/api/v1/plans/{plan}/approve/", {}, format="json").status_code == 404
    assert client.get(f"/api/v1/worksites/{towns.a_site.pk}/plans/").status_code == 404
    towns.a_plan.refresh_from_db()
    assert towns.a_plan.status == PlanStatus.SUBMITTED


def test_a_nucleo_decides_a_plan_and_the_auditor_only_reads_it(towns):
    plan = towns.a_plan.pk
    assert [p.pk for p in web(towns.world.nucleo).get("/nucleo/pgrcc/").context["waiting"]] == [
        plan
    ]
    auditor = web(towns.a_auditor)
    assert auditor.get(f"/nucleo/pgrcc/{plan}/").status_code == 200
    assert auditor.post(f"/nucleo/pgrcc/{plan}/", {"decision": "approve"}).status_code == 403
    assert api(towns.a_auditor).post(f"/api/v1/plans/{plan}/approve/").status_code == 403
    approved = api(towns.world.nucleo).post(f"/api/v1/plans/{plan}/approve/", {}, format="json")
    assert approved.status_code == 200 and approved.json()["status"] == "approved"


def test_the_rates_page_is_of_the_user_s_municipalities(towns):
    b_nucleo = web(towns.b_nucleo)
    page = b_nucleo.get("/nucleo/pgrcc/indices/")
    assert page.status_code == 200 and page.context["municipality"] == towns.b
    assert [m.pk for m in page.context["municipalities"]] == [towns.b.pk]
    assert b_nucleo.get(f"/nucleo/pgrcc/indices/?municipio={towns.a.pk}").status_code == 404
    rates = {
        f"rate_{kind}_{c}": "0,2"
        for kind in ("new_building", "renovation", "demolition")
        for c in ("A", "B", "C", "D", "VOLUMOSO")
    }
    assert (
        b_nucleo.post("/nucleo/pgrcc/indices/", {**rates, "municipio": towns.a.pk}).status_code
        == 404
    )
    rates_in_force = towns.a.parameters_on(timezone.localdate())
    assert rates_in_force.generation_rate("demolition", "A") != 0.2


# --- Habite-se --------------------------------------------------------------------------------


def test_b_staff_do_not_see_or_decide_a_habite_se_request(towns):
    declaration = towns.a_declaration.pk
    b_nucleo = web(towns.b_nucleo)
    assert list(b_nucleo.get("/nucleo/habite-se/").context["items"]) == []
    assert b_nucleo.get(f"/nucleo/habite-se/{declaration}/").status_code == 404
    refused = b_nucleo.post(
        f"/nucleo/habite-se/{declaration}/recusar/", {"recusar-reasons": "Não."}
    )
    assert refused.status_code == 404
    client = api(towns.b_nucleo)
    assert client.get("/api/v1/habite-se/").json() == []
    assert client.get(f"/api/v1/habite-se/{declaration}/").status_code == 404
    assert (
        client.post(f"/api/v1/habite-se/{declaration}/refuse/", {"reasons": "Não."}).status_code
        == 404
    )
    assert client.get(f"/api/v1/worksites/{towns.a_site.pk}/habite-se/").status_code == 404
    assert [d.pk for d in web(towns.world.nucleo).get("/nucleo/habite-se/").context["items"]] == [
        declaration
    ]
    # A's auditor reads the request and decides nothing.
    assert web(towns.a_auditor).get(f"/nucleo/habite-se/{declaration}/").status_code == 200
    assert (
        api(towns.a_auditor)
        .post(f"/api/v1/habite-se/{declaration}/refuse/", {"reasons": "x"})
        .status_code
        == 403
    )


# --- the generator's CTRs left unconfirmed -----------------------------------------------------


def test_the_unconfirmed_ctrs_are_each_municipality_s_own(towns):
    set_parameters(towns.a, generator_confirmation_required=True)
    ctr = issue_hours_ago(towns.world, hours_ago=30)
    path = "/nucleo/geradores/ctrs-sem-confirmacao/"
    assert [c.pk for c in web(towns.world.nucleo).get(path).context["page"]] == [ctr.pk]
    assert list(web(towns.b_nucleo).get(path).context["page"]) == []
    assert CTR.objects.filter(pk=ctr.pk, municipality=towns.a).exists()
