"""The generator's name as declared: a name typed on a CTR was silently replaced by
the one stored earlier for the same CPF/CNPJ. The CTR records what was declared on every path
(web form, API, CSV per row and in bulk), the documents show it, and the web form shows the
stored name and asks which one goes on the CTR."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.test import APIClient

from ctr import services
from ctr.bulk import csv_import
from ctr.models import CTR, Generator, Worksite
from tests.ctr.test_ctr_csv import IMPORT, csv_bytes, row
from tests.ctr.test_ctr_documents import pdf_text
from tests.ctr.test_ctr_web import NEW, form_data
from tests.ctr_world import CPF_GENERATOR, TODAY, build_world, ctr_payload

pytestmark = pytest.mark.django_db

STORED = "Maria da Obra"
TYPED = "Maria Aparecida Souza"


@pytest.fixture
def world():
    world = build_world()
    Generator.objects.create(name=STORED, document=CPF_GENERATOR)
    return world


def client_for(user) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.get(pk=user.pk))
    return client


# --- the web form --------------------------------------------------------------------------


def test_form_shows_the_stored_name_and_asks_keeping_what_was_typed(world):
    client = client_for(world.alfa_user)
    data = form_data(world, generator_name=TYPED, worksite_address="Rua Nova, 5")

    response = client.post(NEW, data)

    assert response.status_code == 400
    assert CTR.objects.count() == 0
    html = response.content.decode()
    assert f"Este CPF/CNPJ está cadastrado em nome de “{STORED}”" in html
    assert f"Usar o nome do cadastro: “{STORED}”" in html
    assert f"Manter o nome digitado: “{TYPED}”" in html
    assert 'name="generator_name_choice"' in html
    assert f'name="generator_name_offered" value="{STORED}"' in html
    # Nothing typed is lost.
    assert f'value="{TYPED}"' in html
    assert 'value="Rua Nova, 5"' in html
    assert 'value="entulho de alvenaria"' in html


def test_confirming_the_declared_name_records_it(world):
    client = client_for(world.alfa_user)
    data = form_data(
        world,
        generator_name=TYPED,
        generator_name_choice="declared",
        generator_name_offered=STORED,
    )

    response = client.post(NEW, data)

    assert response.status_code == 302
    ctr = CTR.objects.get()
    assert ctr.generator_name == TYPED
    assert ctr.generator.name == STORED  # the registry keeps its name
    page = client.get(response["Location"]).content.decode()
    assert TYPED in page and f"no cadastro: {STORED}" in page


def test_choosing_the_registered_name_records_it(world):
    data = form_data(
        world,
        generator_name=TYPED,
        generator_name_choice="registered",
        generator_name_offered=STORED,
    )
    assert client_for(world.alfa_user).post(NEW, data).status_code == 302
    assert CTR.objects.get().generator_name == STORED


def test_an_answer_for_another_registered_name_asks_again(world):
    data = form_data(
        world,
        generator_name=TYPED,
        generator_name_choice="declared",
        generator_name_offered="Outra Pessoa",
    )
    response = client_for(world.alfa_user).post(NEW, data)
    assert response.status_code == 400
    assert CTR.objects.count() == 0


def test_the_same_name_but_for_case_and_spacing_is_not_asked(world):
    data = form_data(world, generator_name="  maria  da OBRA")
    assert client_for(world.alfa_user).post(NEW, data).status_code == 302
    assert CTR.objects.get().generator_name == "maria  da OBRA"  # the form strips the ends


def test_the_question_comes_with_the_rule_errors(world):
    data = form_data(world, generator_name=TYPED)
    data["waste-0-waste_class"] = "DOMICILIAR"
    response = client_for(world.alfa_user).post(NEW, data)
    assert response.status_code == 422
    html = response.content.decode()
    assert "PROHIBITED_WASTE" in html
    assert f"Usar o nome do cadastro: “{STORED}”" in html


# --- the API ---------------------------------------------------------------------------------


def test_api_records_the_declared_name_and_says_the_registry_differs(world):
    api = APIClient()
    api.force_authenticate(world.alfa_user)
    payload = ctr_payload(world, generator={"name": TYPED, "document": "529.982.247-25"})

    response = api.post("/api/v1/ctrs/", payload, format="json")

    assert response.status_code == 201, response.content
    generator = response.json()["generator"]
    assert generator == {
        "name": TYPED,
        "document": CPF_GENERATOR,
        "registered_name": STORED,
        "name_matches_registry": False,
    }
    ctr = CTR.objects.get()
    assert ctr.generator_name == TYPED
    detail = api.get(f"/api/v1/ctrs/{ctr.number}/").json()
    assert detail["generator"]["name"] == TYPED

    same = api.post("/api/v1/ctrs/", ctr_payload(world), format="json").json()
    assert same["generator"]["name_matches_registry"] is True


# --- the CSV import: per row and in bulk --------------------------------------------------------


@pytest.mark.parametrize("per_row", [False, True], ids=["bulk", "per-row"])
def test_csv_rows_record_the_name_each_declares(world, per_row):
    data = csv_bytes(
        [
            row(world, generator_name=TYPED),
            row(world, generator_name=STORED),
            row(world, generator_name="José Novo", generator_document="11.444.777/0001-61"),
            row(world, generator_name="José Novíssimo", generator_document="11.444.777/0001-61"),
        ]
    )
    report = csv_import.import_ctrs(data, world.alfa, world.alfa_user, per_row=per_row)
    assert len(report.issued) == 4
    names = list(CTR.objects.order_by("sequence").values_list("generator_name", flat=True))
    assert names == [TYPED, STORED, "José Novo", "José Novíssimo"]
    # The registry: the stored name stays, a new document takes its first row's name.
    assert Generator.objects.get(document=CPF_GENERATOR).name == STORED
    assert Generator.objects.get(document="11444777000161").name == "José Novo"


def test_web_import_records_the_declared_name(world):
    client = client_for(world.alfa_user)
    data = csv_bytes([row(world, generator_name=TYPED)])
    response = client.post(IMPORT, {"file": SimpleUploadedFile("c.csv", data, "text/csv")})
    assert response.status_code == 200
    assert CTR.objects.get().generator_name == TYPED


# --- the documents -------------------------------------------------------------------------------


def _issue_declared(world) -> CTR:
    request = services.IssueRequest(
        transport_date=TODAY,
        vehicle_plate="ABC1D23",
        origin=world.origin,
        destination=world.inside(world.att),
        waste=[services.WasteLine("A", 3, "")],
        generator=services.GeneratorData(TYPED, CPF_GENERATOR),
        worksite=services.WorksiteData("Rua das Flores, 10", world.origin),
    )
    return services.issue(world.alfa, world.alfa_user, request)


def test_documents_show_the_declared_name(world):
    ctr = _issue_declared(world)
    client = client_for(world.nucleo)

    pdf = pdf_text(client.get(f"/ctrs/{ctr.number}/pdf/").content)
    assert TYPED in pdf and STORED not in pdf

    # The public verification page: first name and initials of a person (LGPD).
    verify = Client().get(f"/verificar/{ctr.number}/").content.decode()
    assert "Maria A. S." in verify and "Maria O." not in verify

    site = Worksite.objects.get()
    report = client.get(f"/obras/{site.pk}/relatorio/").content.decode()
    assert "Nome declarado nos CTRs" in report and TYPED in report
    report_pdf = pdf_text(client.get(f"/obras/{site.pk}/relatorio.pdf").content)
    assert TYPED in report_pdf


def test_the_answer_is_kept_when_the_form_comes_back_for_a_rule(world):
    client = client_for(world.alfa_user)
    data = form_data(
        world, generator_name=TYPED, generator_name_choice="declared", generator_name_offered=STORED
    )
    data["waste-0-waste_class"] = "DOMICILIAR"
    response = client.post(NEW, data)
    assert response.status_code == 422
    html = response.content.decode()
    assert "Usar o nome do cadastro" not in html  # not asked again
    assert '<input type="hidden" name="generator_name_choice" value="declared">' in html
    assert f'<input type="hidden" name="generator_name_offered" value="{STORED}">' in html
