"""CTR templates: saved from a CTR or from scratch, the transporter's own,
issued again with the day and the volumes, and checked again by every rule of that day."""

from __future__ import annotations

import datetime
import re
from decimal import Decimal
from html.parser import HTMLParser

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from ctr.field import templates as ctr_templates
from ctr.models import CTR, CTRTemplate, Vehicle
from pev_network.models import FacilityLicense
from tests.ctr_world import TODAY, build_world, ctr_payload, make_user

pytestmark = pytest.mark.django_db

TOMORROW = TODAY + datetime.timedelta(days=1)


@pytest.fixture
def world(frozen_today):
    return build_world()


def api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(get_user_model().objects.get(pk=user.pk))
    return client


def issued_ctr(world, **overrides) -> CTR:
    response = api(world.alfa_user).post(
        "/api/v1/ctrs/", ctr_payload(world, **overrides), format="json"
    )
    assert response.status_code == 201, response.content
    return CTR.objects.get(number=response.json()["number"])


def template_payload(world, **overrides) -> dict:
    """A template of the world's usual load (ctr_payload) without its day."""
    payload = ctr_payload(world)
    payload.pop("transport_date")
    worksite = payload.pop("worksite")
    payload["worksite"] = {"address": worksite["address"], "neighbourhood": "Centro"}
    payload["name"] = "Obra da Rua das Flores → ATT"
    payload.update(overrides)
    return payload


def create(world, user=None, **overrides):
    return api(user or world.alfa_user).post(
        "/api/v1/ctr-templates/", template_payload(world, **overrides), format="json"
    )


def problem(response, status: int) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    return response.json()


# --- saving --------------------------------------------------------------------------------


def test_a_ctr_saved_as_template_keeps_its_load(world):
    ctr = issued_ctr(world)
    template = ctr_templates.from_ctr(ctr, world.alfa_user, "  Flores   → ATT ")
    assert template.name == "Flores → ATT"
    assert template.transporter == world.alfa
    assert (template.generator_name, template.generator_document) == (
        "Maria da Obra",
        "52998224725",
    )
    assert (template.worksite_address, template.worksite_neighbourhood) == (
        "Rua das Flores, 10",
        "Centro",
    )
    assert template.origin.equals_exact(ctr.origin, 1e-9)
    assert template.destination.equals_exact(ctr.destination, 1e-9)
    assert template.destination_facility == world.att
    assert template.vehicle.plate == "ABC1D23"
    assert template.equipment.code == "C-01"
    assert template.waste == [
        {"class": "A", "volume_m3": "3.000", "description": "entulho de alvenaria"}
    ]


def test_an_onward_ctr_does_not_become_a_template(world):
    ctr = issued_ctr(world)
    ctr.worksite = None
    with pytest.raises(ctr_templates.TemplateError, match="obra"):
        ctr_templates.from_ctr(ctr, world.alfa_user, "Sem obra")
    assert not CTRTemplate.objects.exists()


def test_api_creates_and_reads_a_template(world):
    response = create(world)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["name"] == "Obra da Rua das Flores → ATT"
    assert body["vehicle_plate"] == "ABC1D23"
    assert body["equipment_code"] == "C-01"
    assert body["generator"] == {"name": "Maria da Obra", "document": "52998224725"}
    assert body["worksite"] == {"address": "Rua das Flores, 10", "neighbourhood": "Centro"}
    assert body["waste"] == [
        {"class": "A", "volume_m3": "3.000", "description": "entulho de alvenaria"}
    ]
    assert body["destination_facility"] is None
    again = api(world.alfa_user).get(f"/api/v1/ctr-templates/{body['id']}/")
    assert again.json() == body


def test_every_user_of_the_transporter_sees_its_templates(world):
    template_id = create(world).json()["id"]
    colleague = make_user("alfa2", transporter=world.alfa)
    listed = api(colleague).get("/api/v1/ctr-templates/").json()
    assert [t["id"] for t in listed] == [template_id]


def test_another_transporter_is_told_the_template_does_not_exist(world):
    template_id = create(world).json()["id"]
    url = f"/api/v1/ctr-templates/{template_id}/"
    beta = api(world.beta_user)
    assert beta.get("/api/v1/ctr-templates/").json() == []
    assert beta.get(url).status_code == 404
    assert beta.put(url, template_payload(world, name="Roubado"), format="json").status_code == 404
    assert beta.delete(url).status_code == 404
    issue = beta.post(f"{url}issue/", {"transport_date": TODAY.isoformat()}, format="json")
    assert issue.status_code == 404
    assert CTRTemplate.objects.get().name == "Obra da Rua das Flores → ATT"
    assert not CTR.objects.exists()


def test_someone_without_a_transporter_is_refused(world):
    response = api(world.operator).get("/api/v1/ctr-templates/")
    assert "transportador" in problem(response, 403)["detail"]


def test_a_name_is_unique_per_transporter_case_and_spacing_aside(world):
    assert create(world, name="Obra Flores").status_code == 201
    body = problem(create(world, name="  obra   FLORES "), 409)
    assert "Já existe um modelo chamado" in body["detail"]
    assert body["errors"] == [{"campo": "name", "mensagem": body["detail"]}]
    assert CTRTemplate.objects.count() == 1
    # Another transporter's names are its own business.
    beta_payload = {"vehicle_plate": "XYZ9876", "equipment_code": "B-01", "name": "Obra Flores"}
    assert create(world, world.beta_user, **beta_payload).status_code == 201


def test_renaming_onto_another_template_is_refused(world):
    first = create(world, name="Primeiro").json()["id"]
    assert create(world, name="Segundo").status_code == 201
    response = api(world.alfa_user).put(
        f"/api/v1/ctr-templates/{first}/", template_payload(world, name="segundo"), format="json"
    )
    problem(response, 409)
    assert CTRTemplate.objects.get(pk=first).name == "Primeiro"


def test_a_vehicle_of_another_fleet_is_refused_naming_the_field(world):
    body = problem(create(world, vehicle_plate="XYZ-9876"), 400)
    assert body["errors"] == [
        {"campo": "vehicle_plate", "mensagem": "O veículo de placa “XYZ9876” não é da sua frota."}
    ]
    assert not CTRTemplate.objects.exists()


@pytest.mark.parametrize(
    "overrides, field",
    [
        ({"waste": []}, "waste"),
        ({"name": ""}, "name"),
        ({"destination": {"type": "Point", "coordinates": [500, 0]}}, "destination"),
        ({"equipment_code": "NAO-EXISTE"}, "equipment_code"),
        ({"destination_facility": 999999}, "destination_facility"),
    ],
)
def test_bad_input_is_a_400_in_portuguese_and_nothing_is_written(world, overrides, field):
    body = problem(create(world, **overrides), 400)
    assert [e["campo"].split("[")[0] for e in body["errors"]] == [field]
    assert not CTRTemplate.objects.exists()


def test_a_template_is_updated_and_deleted(world):
    template_id = create(world).json()["id"]
    url = f"/api/v1/ctr-templates/{template_id}/"
    changed = template_payload(world, name="Novo nome", waste=[{"class": "B", "volume_m3": "1,5"}])
    changed["waste"][0]["volume_m3"] = "1.5"
    response = api(world.alfa_user).put(url, changed, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["waste"] == [{"class": "B", "volume_m3": "1.500", "description": ""}]
    assert api(world.alfa_user).delete(url).status_code == 204
    assert not CTRTemplate.objects.exists()


# --- issuing -------------------------------------------------------------------------------


def issue_from(world, template_id, user=None, **body):
    body.setdefault("transport_date", TODAY.isoformat())
    return api(user or world.alfa_user).post(
        f"/api/v1/ctr-templates/{template_id}/issue/", body, format="json"
    )


def test_issuing_from_a_template_answers_as_post_ctrs(world):
    template_id = create(world).json()["id"]
    response = issue_from(world, template_id, transport_date=TOMORROW.isoformat(), volumes=["2.5"])
    assert response.status_code == 201, response.content
    body = response.json()
    direct = api(world.alfa_user).post("/api/v1/ctrs/", ctr_payload(world), format="json").json()
    assert set(body) == set(direct)
    assert body["transport_date"] == TOMORROW.isoformat()
    assert body["waste"] == [
        {"class": "A", "volume_m3": "2.500", "description": "entulho de alvenaria"}
    ]
    assert body["total_volume_m3"] == "2.500"
    assert body["vehicle_plate"] == "ABC1D23"
    assert body["equipment_code"] == "C-01"
    assert body["generator"]["document"] == "52998224725"
    assert body["destination_facility"]["id"] == world.att.pk
    ctr = CTR.objects.get(number=body["number"])
    assert ctr.worksite.address == "Rua das Flores, 10"
    assert ctr.created_by == world.alfa_user


def test_without_volumes_the_templates_are_used(world):
    template_id = create(world).json()["id"]
    body = issue_from(world, template_id).json()
    assert body["total_volume_m3"] == "3.000"


def test_a_facility_whose_license_expired_since_is_refused_at_issue(world):
    template_id = create(world).json()["id"]
    FacilityLicense.objects.filter(facility=world.att).update(
        valid_until=TODAY - datetime.timedelta(days=1)
    )
    body = problem(issue_from(world, template_id), 422)
    assert [e["code"] for e in body["errors"]] == ["FACILITY_NOT_LICENSED"]
    assert not CTR.objects.exists()


def test_a_vehicle_deactivated_since_is_refused_at_issue(world):
    template_id = create(world).json()["id"]
    Vehicle.objects.filter(plate="ABC1D23").update(active=False)
    body = problem(issue_from(world, template_id), 422)
    assert [(e["code"], e["field"]) for e in body["errors"]] == [
        ("VEHICLE_NOT_REGISTERED", "vehicle_plate")
    ]
    assert not CTR.objects.exists()


def test_a_transporter_suspended_since_is_refused_at_issue(world):
    template_id = create(world).json()["id"]
    world.alfa.licences.update(status="SUSPENDED", status_since=TODAY - datetime.timedelta(days=2))
    body = problem(issue_from(world, template_id), 422)
    assert "TRANSPORTER_SUSPENDED" in [e["code"] for e in body["errors"]]
    assert not CTR.objects.exists()


@pytest.mark.parametrize(
    "body, field",
    [
        ({"volumes": ["1", "2"]}, "volumes"),
        ({"volumes": ["0"]}, "volumes"),
        ({"volumes": ["muito"]}, "volumes"),
        ({"transport_date": "30/11/2026"}, "transport_date"),
        ({"transport_date": None}, "transport_date"),
    ],
)
def test_bad_issue_input_is_a_400_naming_the_field(world, body, field):
    template_id = create(world).json()["id"]
    response = problem(issue_from(world, template_id, **body), 400)
    assert [e["campo"].split("[")[0].split(".")[0] for e in response["errors"]] == [field]
    assert not CTR.objects.exists()


def test_the_service_refuses_volumes_that_do_not_match_the_lines(world):
    template = ctr_templates.save(
        world.alfa,
        world.alfa_user,
        ctr_templates.data_of_ctr(issued_ctr(world), "Modelo"),
    )
    with pytest.raises(ctr_templates.TemplateError) as refused:
        ctr_templates.issue(template, world.alfa_user, TODAY, [Decimal("1"), Decimal("1")])
    assert refused.value.field == "volumes"
    assert CTR.objects.count() == 1


# --- the web pages ---------------------------------------------------------------------------


class Inputs(HTMLParser):
    """The named inputs of the page's form whose action is `action`, with their values."""

    def __init__(self, action: str):
        super().__init__()
        self.action, self.inside, self.values, self.visible = action, False, {}, []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.inside = attrs.get("action") == self.action
        elif self.inside and tag == "input" and attrs.get("name"):
            self.values[attrs["name"]] = attrs.get("value", "")
            if attrs.get("type") not in ("hidden",):
                self.visible.append(attrs["name"])

    def handle_endtag(self, tag):
        if tag == "form":
            self.inside = False


def confirm_form(client, template_id) -> Inputs:
    response = client.get(f"/transportador/modelos/{template_id}/emitir/")
    assert response.status_code == 200
    inputs = Inputs("/transportador/ctrs/novo/")
    inputs.feed(response.content.decode())
    return inputs


@pytest.fixture
def alfa_web(client, world):
    client.force_login(world.alfa_user)
    return client


def test_save_as_template_from_the_ctr_page(world, alfa_web):
    ctr = issued_ctr(world)
    page = alfa_web.get(f"/transportador/ctrs/{ctr.number}/")
    assert "Salvar como modelo" in page.content.decode()
    response = alfa_web.post(
        f"/transportador/ctrs/{ctr.number}/modelo/", {"modelo-name": "Flores"}, follow=True
    )
    assert response.redirect_chain[-1][0] == "/transportador/modelos/"
    assert "Modelo “Flores” salvo" in response.content.decode()
    assert CTRTemplate.objects.get().name == "Flores"
    again = alfa_web.post(f"/transportador/ctrs/{ctr.number}/modelo/", {"modelo-name": "flores"})
    assert CTRTemplate.objects.count() == 1
    # The CTR's page again, the typed name kept in its field and the error beside it.
    assert again.status_code == 409
    html = again.content.decode()
    field = re.search(r'<input[^>]*name="modelo-name"[^>]*>', html).group(0)
    assert 'value="flores"' in field and 'aria-invalid="true"' in field
    assert 'aria-describedby="id_modelo-name_error"' in field
    errors = re.search(r'<ul class="field-errors" id="id_modelo-name_error">(.*?)</ul>', html, re.S)
    assert "Já existe um modelo chamado “flores”" in errors.group(1)
    blank = alfa_web.post(f"/transportador/ctrs/{ctr.number}/modelo/", {"modelo-name": "  "})
    assert blank.status_code == 400
    assert "Informe o nome do modelo." in re.search(
        r'id="id_modelo-name_error">(.*?)</ul>', blank.content.decode(), re.S
    ).group(1)


def test_another_transporters_ctr_is_not_saved(world, client):
    ctr = issued_ctr(world)
    client.force_login(world.beta_user)
    response = client.post(f"/transportador/ctrs/{ctr.number}/modelo/", {"modelo-name": "X"})
    assert response.status_code == 404
    assert not CTRTemplate.objects.exists()


def test_the_short_form_asks_only_the_day_and_the_volumes_and_issues(world, alfa_web):
    template_id = create(world).json()["id"]
    inputs = confirm_form(alfa_web, template_id)
    assert inputs.visible == ["transport_date", "waste-0-volume_m3"]
    assert inputs.values["transport_date"] == TODAY.isoformat()
    assert inputs.values["waste-0-volume_m3"] == "3"
    data = {**inputs.values, "waste-0-volume_m3": "4,5"}
    response = alfa_web.post("/transportador/ctrs/novo/", data)
    assert response.status_code == 302, response.content.decode()[:3000]
    ctr = CTR.objects.get()
    assert response["Location"] == f"/transportador/ctrs/{ctr.number}/"
    assert ctr.total_volume_m3 == Decimal("4.5")
    assert ctr.vehicle.plate == "ABC1D23"
    assert ctr.worksite.address == "Rua das Flores, 10"


def test_an_expired_license_comes_back_as_the_whole_form_with_the_finding(world, alfa_web):
    template_id = create(world).json()["id"]
    inputs = confirm_form(alfa_web, template_id)
    FacilityLicense.objects.filter(facility=world.att).update(
        valid_until=TODAY - datetime.timedelta(days=1)
    )
    response = alfa_web.post("/transportador/ctrs/novo/", inputs.values)
    assert response.status_code == 422
    page = response.content.decode()
    assert "FACILITY_NOT_LICENSED" in page
    assert 'value="Rua das Flores, 10"' in page  # the whole form, filled in
    assert not CTR.objects.exists()


def test_the_issue_form_offers_the_templates_first(world, alfa_web):
    assert "Emitir de um modelo" not in alfa_web.get("/transportador/ctrs/novo/").content.decode()
    template_id = create(world).json()["id"]
    page = alfa_web.get("/transportador/ctrs/novo/").content.decode()
    assert page.index("Emitir de um modelo") < page.index('id="form-ctr"')
    assert f'href="/transportador/modelos/{template_id}/emitir/"' in page


def test_the_issue_form_opens_filled_from_a_template(world, alfa_web):
    template_id = create(world).json()["id"]
    page = alfa_web.get(f"/transportador/ctrs/novo/?modelo={template_id}").content.decode()
    assert 'value="Rua das Flores, 10"' in page
    assert 'value="52998224725"' in page
    assert "Preenchido a partir do modelo" in page


def test_another_transporters_template_is_not_found_on_the_web(world, client):
    template_id = create(world).json()["id"]
    client.force_login(world.beta_user)
    for url in (
        f"/transportador/modelos/{template_id}/emitir/",
        f"/transportador/modelos/{template_id}/editar/",
        f"/transportador/ctrs/novo/?modelo={template_id}",
        "/transportador/ctrs/novo/?modelo=abc",
    ):
        assert client.get(url).status_code == 404, url
    assert client.post(f"/transportador/modelos/{template_id}/excluir/").status_code == 404
    assert CTRTemplate.objects.exists()
    assert "Obra da Rua" not in client.get("/transportador/modelos/").content.decode()


def template_form_data(world, **overrides) -> dict:
    target = world.inside(world.att)
    data = {
        "name": "Do zero",
        "vehicle": Vehicle.objects.get(plate="ABC1D23").pk,
        "equipment": "",
        "generator_name": "Maria da Obra",
        "generator_document": "529.982.247-25",
        "worksite_address": "Rua das Flores, 10",
        "worksite_neighbourhood": "",
        "origin_lat": str(world.origin.y).replace(".", ","),
        "origin_lon": str(world.origin.x).replace(".", ","),
        "destination_lat": str(target.y),
        "destination_lon": str(target.x),
        "destination_facility": "",
        "waste-TOTAL_FORMS": "3",
        "waste-INITIAL_FORMS": "0",
        "waste-0-waste_class": "A",
        "waste-0-volume_m3": "2",
        "waste-0-description": "",
    }
    data.update(overrides)
    return data


def test_a_template_from_scratch_on_the_web(world, alfa_web):
    response = alfa_web.post("/transportador/modelos/novo/", template_form_data(world))
    assert response.status_code == 302, response.content.decode()[:2000]
    template = CTRTemplate.objects.get()
    assert (template.name, template.generator_document) == ("Do zero", "52998224725")
    assert template.waste == [{"class": "A", "volume_m3": "2", "description": ""}]
    # The same name again: the form back with the message beside the name, nothing written.
    again = alfa_web.post("/transportador/modelos/novo/", template_form_data(world, name="do ZERO"))
    assert again.status_code == 409
    assert "Já existe um modelo chamado" in again.content.decode()
    assert CTRTemplate.objects.count() == 1


def test_a_bad_template_form_is_a_400_naming_the_field(world, alfa_web):
    response = alfa_web.post(
        "/transportador/modelos/novo/", template_form_data(world, **{"waste-0-volume_m3": "x"})
    )
    assert response.status_code == 400
    assert "Informe um número" in response.content.decode() or "número" in response.content.decode()
    assert not CTRTemplate.objects.exists()


def test_a_template_is_edited_on_the_web(world, alfa_web):
    template_id = create(world).json()["id"]
    page = alfa_web.get(f"/transportador/modelos/{template_id}/editar/").content.decode()
    assert 'value="Obra da Rua das Flores → ATT"' in page
    response = alfa_web.post(
        f"/transportador/modelos/{template_id}/editar/",
        template_form_data(world, name="Renomeado"),
    )
    assert response.status_code == 302
    assert CTRTemplate.objects.get().name == "Renomeado"
    listing = alfa_web.get("/transportador/modelos/").content.decode()
    assert "Renomeado" in listing
