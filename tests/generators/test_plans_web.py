"""The PGRCC's pages, API and e-mails: the generator's form prefilled by the estimator, an
unlicensed agent refused by name and why (a 4xx, nothing written), the Núcleo's queue, review and
decision, the rates page; the messages the Núcleo and the generator receive, read from a real SMTP
server."""

from __future__ import annotations

import datetime
import re
from decimal import Decimal

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from ctr.models import Membership
from generators import plans
from generators.models import PlanStatus, WastePlan
from pev_network.models import default_generation_rates
from tests.ctr_world import TODAY, build_world, make_user
from tests.generators.test_plans import gama_site, plan_input

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(frozen_today):
    return build_world()


D = datetime.date


def web(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def form_data(world, action="submit", transporters=None, facilities=None, **volumes):
    data = {"action": action, "volume_A": "92,5", "volume_B": "23,75", **volumes}
    data["transporters"] = [t.pk for t in (transporters or [world.alfa])]
    data["facilities"] = [f.pk for f in (facilities or [world.att])]
    return data


# --- the generator's page ----------------------------------------------------------------------


def test_the_form_starts_from_the_estimate_of_the_worksite(world):
    site = gama_site(world, area="2000")
    page = web(world.generator_user).get(f"/gerador/obras/{site.pk}/pgrcc/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'value="185"' in html  # 2 000 m² × 0,0925 m³/m² of class A
    assert 'value="47,5"' in html  # class B: × 0,02375
    assert "250 m³ no total" in html
    # Only the licensed today are offered.
    assert world.alfa.name in html and world.att.name in html


def test_the_estimate_button_refills_the_volumes_and_writes_nothing(world):
    site = gama_site(world)
    page = web(world.generator_user).post(
        f"/gerador/obras/{site.pk}/pgrcc/", form_data(world, "estimate", volume_A="1")
    )
    assert page.status_code == 200
    assert 'value="92,5"' in page.content.decode()
    assert not WastePlan.objects.exists()


def test_sending_the_plan_from_the_page(world):
    site = gama_site(world)
    response = web(world.generator_user).post(f"/gerador/obras/{site.pk}/pgrcc/", form_data(world))
    assert response.status_code == 302
    plan = WastePlan.objects.get()
    assert plan.status == PlanStatus.SUBMITTED
    page = web(world.generator_user).get(f"/gerador/obras/{site.pk}/pgrcc/")
    assert "aguarda a decisão" in page.content.decode()


def test_the_page_refuses_an_unlicensed_transporter_by_name(world):
    world.beta.licences.update(valid_until=D(2026, 10, 31))
    site = gama_site(world)
    page = web(world.generator_user).post(
        f"/gerador/obras/{site.pk}/pgrcc/",
        form_data(world, transporters=[world.beta], facilities=[world.att]),
    )
    assert page.status_code == 400
    assert (
        f"O transportador “{world.beta.name}” não tem licença válida hoje em "
        "Guaratinguetá (teste)/SP (venceu em 31/10/2026)." in page.content.decode()
    )
    assert not WastePlan.objects.exists()


def test_another_generators_worksite_does_not_exist_and_the_nucleo_does_not_write(world):
    site = gama_site(world)
    other = make_user("outro_gerador")
    # What a user does not see answers as if it did not exist.
    assert web(other).get(f"/gerador/obras/{site.pk}/pgrcc/").status_code == 404
    assert web(world.nucleo).get(f"/gerador/obras/{site.pk}/pgrcc/").status_code == 403
    assert Client().get(f"/gerador/obras/{site.pk}/pgrcc/").status_code == 302


# --- the Núcleo's pages -------------------------------------------------------------------------


def test_the_review_shows_the_estimate_beside_the_declared_volumes(world):
    site = gama_site(world, area="2000")
    plan = plans.save(site, world.generator_user, plan_input(world, A="150"), submit=True)
    queue = web(world.fiscal).get("/nucleo/pgrcc/")
    assert queue.status_code == 200 and site.address in queue.content.decode()
    page = web(world.nucleo).get(f"/nucleo/pgrcc/{plan.pk}/")
    html = re.sub(r"\s+", " ", page.content.decode())
    assert page.status_code == 200
    assert re.search(
        r'data-label="Declarado">150</td>\s*<td class="num" data-label="Estimado">185<', html
    )
    assert "Registrar decisão" in html
    # The inspectors see it, only the Núcleo decides (art. 20).
    assert (
        "Registrar decisão"
        not in web(world.fiscal).get(f"/nucleo/pgrcc/{plan.pk}/").content.decode()
    )
    assert (
        web(world.fiscal).post(f"/nucleo/pgrcc/{plan.pk}/", {"decision": "approve"}).status_code
        == 403
    )


def test_returning_without_a_note_is_refused_on_the_page(world):
    plan = plans.save(gama_site(world), world.generator_user, plan_input(world), submit=True)
    page = web(world.nucleo).post(f"/nucleo/pgrcc/{plan.pk}/", {"decision": "return", "note": ""})
    assert page.status_code == 400
    assert "Escreva no parecer o que o gerador deve ajustar." in page.content.decode()
    plan.refresh_from_db()
    assert plan.status == PlanStatus.SUBMITTED


def test_the_nucleo_edits_the_rates_of_its_municipality(world):
    url = f"/nucleo/pgrcc/indices/?municipio={world.town.pk}"
    page = web(world.nucleo).get(url)
    assert page.status_code == 200 and "0,0925" in page.content.decode()
    data = {"municipio": world.town.pk}
    for kind in ("new_building", "renovation", "demolition"):
        for waste_class in ("A", "B", "C", "D", "VOLUMOSO"):
            data[f"rate_{kind}_{waste_class}"] = "0,1"
    data["rate_demolition_A"] = "12"  # beyond 10 m³ per m²
    assert web(world.nucleo).post("/nucleo/pgrcc/indices/", data).status_code == 400
    data["rate_demolition_A"] = "0,75"
    assert web(world.fiscal).post("/nucleo/pgrcc/indices/", data).status_code == 403
    assert web(world.nucleo).post("/nucleo/pgrcc/indices/", data).status_code == 302
    rates = world.town.parameters_on(timezone.localdate()).waste_generation_rates
    assert rates["demolition"]["A"] == "0.75"


def test_new_rates_are_a_set_from_today_and_a_second_change_starts_tomorrow(world):
    """The rates are a set of the municipality's parameters: saved, they hold from today in a
    new set (the figures before today stay as they were); saved again the same day, from
    tomorrow, as a set in force never changes."""
    data = {"municipio": world.town.pk}
    for kind in ("new_building", "renovation", "demolition"):
        for waste_class in ("A", "B", "C", "D", "VOLUMOSO"):
            data[f"rate_{kind}_{waste_class}"] = "0,1"
    saved = web(world.nucleo).post("/nucleo/pgrcc/indices/", data, follow=True)
    assert "valem a partir de 30/11/2026" in saved.content.decode()
    data["rate_demolition_A"] = "0,2"
    saved = web(world.nucleo).post("/nucleo/pgrcc/indices/", data, follow=True)
    assert "valem a partir de 01/12/2026" in saved.content.decode()
    # The page shows what was saved last, the figures a new save would change.
    assert 'value="0,2"' in saved.content.decode()
    rate = {
        day: world.town.parameters_on(day).generation_rate("demolition", "A")
        for day in (TODAY - datetime.timedelta(days=1), TODAY, TODAY + datetime.timedelta(days=1))
    }
    default = Decimal(default_generation_rates()["demolition"]["A"])
    assert list(rate.values()) == [default, Decimal("0.1"), Decimal("0.2")]


# --- the API ------------------------------------------------------------------------------------


def test_the_estimator_in_the_api(world):
    client = api(world.generator_user)
    answer = client.get("/api/v1/pgrcc/estimate/?built_area_m2=1000&work_kind=new_building")
    assert answer.status_code == 200
    body = answer.json()
    assert body["total_m3"] == "125.00" and body["municipality"] is None
    assert {c["waste_class"]: c["volume_m3"] for c in body["classes"]}["A"] == "92.50"
    bad = client.get("/api/v1/pgrcc/estimate/?built_area_m2=-1&work_kind=new_building")
    assert bad.status_code == 400 and "maior que zero" in bad.json()["detail"]


def test_the_api_refuses_an_unlicensed_facility_by_name_and_writes_nothing(world):
    world.landfill.licenses.update(valid_until=D(2026, 11, 29))
    site = gama_site(world)
    answer = api(world.generator_user).post(
        f"/api/v1/worksites/{site.pk}/plans/",
        {"volumes": {"A": "10"}, "transporters": [world.alfa.pk],
         "facilities": [world.landfill.pk, 999_999], "submit": True},
        format="json",
    )  # fmt: skip
    assert answer.status_code == 400
    assert answer["Content-Type"].startswith("application/problem+json")
    errors = answer.json()["errors"]
    assert errors == [
        {"campo": "facilities",
         "mensagem": f"A área “{world.landfill.name}” não tem licença válida hoje "
                     "(venceu em 29/11/2026)."},
        {"campo": "facilities", "mensagem": "A área de destino 999999 não existe."},
    ]  # fmt: skip
    assert not WastePlan.objects.exists()


def test_the_api_from_submission_to_approval_with_the_history(world):
    site = gama_site(world)
    client = api(world.generator_user)
    written = client.post(
        f"/api/v1/worksites/{site.pk}/plans/",
        {"volumes": {"A": "92,5"}, "transporters": [world.alfa.pk], "facilities": [world.att.pk]},
        format="json",
    )
    assert written.status_code == 200, written.content
    plan_id = written.json()["id"]
    assert client.post(f"/api/v1/plans/{plan_id}/submit/").json()["status"] == "submitted"
    assert client.post(f"/api/v1/plans/{plan_id}/approve/").status_code == 403
    queue = api(world.nucleo).get("/api/v1/plans/").json()
    assert [p["id"] for p in queue] == [plan_id]
    returned = api(world.nucleo).post(f"/api/v1/plans/{plan_id}/return/", {}, format="json")
    assert returned.status_code == 400
    approved = api(world.nucleo).post(
        f"/api/v1/plans/{plan_id}/approve/", {"note": "Ok"}, format="json"
    )
    assert approved.status_code == 200 and approved.json()["status"] == "approved"
    again = api(world.nucleo).post(f"/api/v1/plans/{plan_id}/approve/", {}, format="json")
    assert again.status_code == 409
    detail = client.get(f"/api/v1/plans/{plan_id}/").json()
    assert [e["action"] for e in detail["events"]] == ["created", "submitted", "approved"]
    assert api(world.alfa_user).get(f"/api/v1/plans/{plan_id}/").status_code == 404


# --- e-mail (a real SMTP server on loopback) ---------------------------------------------------


def test_the_nucleo_is_told_of_a_submission_and_the_generator_of_the_decisions(world, smtp_server):
    world.nucleo.email = "nucleo@prefeitura.example"
    world.nucleo.save()
    world.generator_user.email = "obras@gama.example"
    world.generator_user.save()
    colleague = make_user("gama2")
    Membership.objects.filter(user=colleague).delete()
    Membership.objects.create(user=colleague, generator=world.gama)
    site = gama_site(world)
    with smtp_server.commit():
        plan = plans.save(site, world.generator_user, plan_input(world), submit=True)
    [submitted] = smtp_server.to("nucleo@prefeitura.example")
    assert submitted["Subject"].strip() == f"PGRCC enviado para análise (obra nº {site.pk}, v1)"
    assert site.address in smtp_server.body(submitted)
    assert f"/nucleo/pgrcc/{plan.pk}/" in smtp_server.body(submitted)

    with smtp_server.commit():
        plans.request_changes(plan, world.nucleo, "Inclua a classe D.")
    [returned] = smtp_server.to("obras@gama.example")
    assert returned["Subject"].strip() == f"PGRCC devolvido para ajustes (obra nº {site.pk}, v1)"
    assert "Inclua a classe D." in smtp_server.body(returned)
    assert smtp_server.to("gama2@example.org")  # every member of the generator

    with smtp_server.commit():
        plans.save(site, world.generator_user, plan_input(world, D="1"), submit=True)
        plans.approve(plan, world.nucleo, "Aprovado com a classe D.")
    approved = smtp_server.to("obras@gama.example")[-1]
    assert approved["Subject"].strip() == f"PGRCC aprovado (obra nº {site.pk}, v1)"
    assert "Aprovado com a classe D." in smtp_server.body(approved)
    # No personal data in any subject line: no name, no address, no document.
    for message in smtp_server.messages:
        subject = message["Subject"].strip()
        assert world.gama.name not in subject and "Av." not in subject and "336" not in subject


def test_a_refused_operation_mails_no_one(world, smtp_server):
    world.nucleo.email = "nucleo@prefeitura.example"
    world.nucleo.save()
    world.beta.licences.update(valid_until=D(2026, 1, 1))
    with smtp_server.commit(), pytest.raises(plans.PlanError):
        plans.save(
            gama_site(world),
            world.generator_user,
            plan_input(world, transporters=[world.beta]),
            submit=True,
        )
    assert smtp_server.messages == []
