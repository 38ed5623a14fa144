"""The admin's "Incluir município": nucleo.onboarding from a form, the
platform administrator's only, a simulation unless told otherwise."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core import mail
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from fiscalization.models.frameworks import PenaltyFramework
from jurisdiction.models import Role, StaffRole
from pev_network.models import Municipality, ReceivingFacility
from tests.enforcement_world import FERRAZ, ensure_frameworks
from tests.nucleo.test_onboarding import APARECIDA, EMAIL, NETWORK, SP, snapshot

pytestmark = pytest.mark.django_db

URL = "/admin/pev_network/municipality/incluir/"


@pytest.fixture(autouse=True)
def frameworks():
    ensure_frameworks()


@pytest.fixture
def admin_user():
    return get_user_model().objects.create_superuser("admin", "admin@example.org", "x")


def client_of(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def form(**overrides) -> dict:
    data = {
        "ibge_code": APARECIDA,
        "shipped_sp": "on",
        "nucleo_email": EMAIL,
        "nucleo_name": "Ana Souza",
        "framework_from": FERRAZ,
        "dry_run": "on",
    }
    data.update(overrides)
    return {k: v for k, v in data.items() if v is not None}


def test_the_municipality_list_offers_it_to_the_administrator(admin_user):
    html = client_of(admin_user).get("/admin/pev_network/municipality/").content.decode()
    assert URL in html and "Incluir município" in html


def test_a_staff_member_who_is_not_the_administrator_is_refused():
    user = get_user_model().objects.create_user("leitor", "leitor@example.org", "x")
    user.is_staff = True
    user.save()
    user.user_permissions.add(Permission.objects.get(codename="view_municipality"))
    client = client_of(user)
    listing = client.get("/admin/pev_network/municipality/")
    assert listing.status_code == 200 and URL not in listing.content.decode()
    assert client.get(URL).status_code == 403
    before = snapshot()
    assert client.post(URL, form(dry_run=None)).status_code == 403
    assert snapshot() == before


def test_the_page_simulates_by_default_and_writes_nothing(admin_user):
    client = client_of(admin_user)
    page = client.get(URL)
    assert page.status_code == 200
    assert re.search(r'<input[^>]*name="dry_run"[^>]*checked', page.content.decode())
    before = snapshot()
    response = client.post(URL, form())
    html = response.content.decode()
    assert response.status_code == 200, html
    assert "Simulação: nada foi gravado" in html
    assert "Município a criar: Aparecida/SP (IBGE 3502507)" in html
    assert snapshot() == before


def test_the_page_brings_the_municipality_in(admin_user, django_capture_on_commit_callbacks):
    network = SimpleUploadedFile(NETWORK.name, NETWORK.read_bytes(), "application/geo+json")
    with django_capture_on_commit_callbacks(execute=True):
        response = client_of(admin_user).post(
            URL, form(dry_run=None, network_file=network, show_link="on")
        )
    html = response.content.decode()
    assert response.status_code == 200, html
    town = Municipality.objects.get(ibge_code=APARECIDA)
    assert "tbrugz/geodata-br" in town.boundary_source  # the shipped file's provenance
    assert PenaltyFramework.objects.filter(ibge_code=APARECIDA).count() == 1
    assert ReceivingFacility.objects.filter(municipality=town).count() == 2
    role = StaffRole.objects.get(municipality=town)
    assert (role.user.email, role.role, role.granted_by) == (EMAIL, Role.NUCLEO, admin_user)
    assert f"/admin/pev_network/municipality/{town.pk}/change/" in html
    assert "/conta/senha/" in html  # asked to show the link
    assert len(mail.outbox) == 1


def test_an_uploaded_boundary_file_is_read(admin_user):
    upload = SimpleUploadedFile(SP.name, SP.read_bytes(), "application/geo+json")
    response = client_of(admin_user).post(
        URL, form(shipped_sp=None, boundary_file=upload, dry_run=None, framework_from="")
    )
    assert response.status_code == 200, response.content.decode()
    town = Municipality.objects.get(ibge_code=APARECIDA)
    assert town.boundary_source == SP.name


def test_bad_input_is_refused_with_every_reason_and_nothing_written(admin_user):
    before = snapshot()
    # Rio de Janeiro's code: not in the file of SP's municipalities.
    response = client_of(admin_user).post(URL, form(ibge_code="3304557", dry_run=None))
    html = response.content.decode()
    assert response.status_code == 400
    assert "Município não incluído; nada foi gravado" in html
    assert "não tem o limite do município 3304557" in html
    assert snapshot() == before


def test_a_form_without_boundary_is_sent_back(admin_user):
    response = client_of(admin_user).post(URL, form(shipped_sp=None, dry_run=None))
    assert response.status_code == 400
    assert "Envie o arquivo de limites ou use o de SP." in response.content.decode()


def test_an_unknown_kind_in_the_network_names_the_form_fields_that_override_it(admin_user):
    geojson = NETWORK.read_text().replace('"kind": "ATT"', '"kind": "Pontos Viciados"')
    network = SimpleUploadedFile(NETWORK.name, geojson.encode(), "application/geo+json")
    response = client_of(admin_user).post(URL, form(network_file=network))
    html = response.content.decode()
    assert response.status_code == 400
    assert "tipo desconhecido &#x27;Pontos Viciados&#x27;" in html
    # The page's own words, not the command's options.
    assert "preencha “Tipo das áreas sem tipo” e escreva kind= em “Colunas da rede”" in html
    assert "--kind TIPO" not in html
    network.seek(0)
    overridden = form(network_file=network, kind="ATT", network_fields="kind=")
    response = client_of(admin_user).post(URL, overridden)
    assert response.status_code == 200, response.content.decode()
