"""The admin: pt-BR, map widgets from our own static files, license validity in the list."""

import datetime
import re
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from ctr import closing
from ctr.models import Generator
from generators.models import GeneratorInvitation
from pev_network.models import CatchmentBasin, FacilityKind
from tests.builders import ORIGIN, licensed_facility, multi, municipality, offset, square

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client():
    user = get_user_model().objects.create_superuser("gestor", "gestor@example.org", "x")
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def network():
    town = municipality()
    valid = licensed_facility(FacilityKind.ATT, square(*ORIGIN, 100), "ATT Válida", town)
    expired = licensed_facility(
        FacilityKind.PEV,
        square(*offset(*ORIGIN, 500, 0), 30),
        "PEV Vencido",
        town,
        valid_until=datetime.date(2025, 6, 30),
    )
    basin = CatchmentBasin.objects.create(
        municipality=town, name="Bacia Centro", area=multi(square(*ORIGIN, 1000)), served_by=expired
    )
    return {"town": town, "valid": valid, "expired": expired, "basin": basin}


def test_facility_list_shows_license_validity_today(admin_client, network):
    html = admin_client.get("/admin/pev_network/receivingfacility/").content.decode()
    assert "Licença hoje" in html
    row_valid = html[html.index("ATT Válida") :][:2000]
    assert f"LO-{network['valid'].pk}" in row_valid and "✔" in row_valid
    row_expired = html[html.index("PEV Vencido") :][:2000]
    assert "sem licença válida" in row_expired


@pytest.mark.parametrize(
    "url",
    [
        "/admin/pev_network/receivingfacility/{valid}/change/",
        "/admin/pev_network/catchmentbasin/{basin}/change/",
        "/admin/pev_network/municipality/{town}/change/",
    ],
)
def test_change_forms_have_a_local_leaflet_map_widget(admin_client, network, url):
    ids = {name: obj.pk for name, obj in network.items()}
    response = admin_client.get(url.format(**ids))
    assert response.status_code == 200
    html = response.content.decode()
    assert "/static/leaflet/leaflet.js" in html
    assert "/static/leaflet/draw/leaflet.draw.js" in html
    external = [u for u in re.findall(r'(?:src|href)="([^"]+)"', html) if "//" in u]
    assert external == []  # every script and stylesheet from our own static files
    assert 'lang="pt-br"' in html


def test_admin_speaks_portuguese(admin_client, network):
    html = admin_client.get("/admin/").content.decode()
    assert "Áreas de recebimento" in html and "Encerrar sessão" in html


def test_the_generators_side_is_read_only_in_the_admin(admin_client):
    """Registrations, invitations, PGRCC and Habite-se declarations are decided on their pages
    (rules, history, e-mail): the admin lists them and changes none."""
    generator = Generator.objects.create(name="Construtora Gama Ltda.", document="11222333000181")
    invitation = GeneratorInvitation.objects.create(
        generator=generator,
        email="gama@example.org",
        token_hash="f" * 64,
        invited_by=get_user_model().objects.get(username="gestor"),
        expires_at=datetime.datetime(2030, 1, 1, tzinfo=datetime.UTC),
    )
    index = admin_client.get("/admin/").content.decode()
    for name in ("Convites de geradores", "Habite-se", "PGRCC"):
        assert name.lower() in index.lower(), name
    for model in ("wasteplan", "generatorinvitation", "generatorregistration"):
        assert admin_client.get(f"/admin/generators/{model}/").status_code == 200, model
        assert admin_client.get(f"/admin/generators/{model}/add/").status_code == 403, model
    page = admin_client.get(f"/admin/generators/generatorinvitation/{invitation.pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "gama@example.org" in html and "f" * 64 not in html
    assert 'name="email"' not in html  # shown, not editable


def test_templates_and_corrections_are_read_only_in_the_admin(admin_client, frozen_today):
    """A template is kept on the transporter's page and a correction is decided on its pages
    (the CTR's append-only history): the admin lists and shows them, changes none."""
    from ctr.field import corrections
    from ctr.field.corrections import Proposal
    from ctr.models import CTRTemplate
    from tests.ctr_world import build_world, issue_hours_ago

    world = build_world()
    received = closing.receive(issue_hours_ago(world, 1), world.operator, Decimal("3"))
    template = CTRTemplate.objects.create(
        transporter=world.alfa,
        name="Obra das Flores → ATT",
        generator_name="Maria da Obra",
        generator_document="52998224725",
        worksite_address="Rua das Flores, 10",
        origin=world.origin,
        destination=world.inside(world.att),
        destination_facility=world.att,
    )
    correction = corrections.propose(
        received, world.alfa_user, Proposal(received_volume_m3=Decimal("2")), "Recontagem"
    )
    index = admin_client.get("/admin/").content.decode()
    assert "Modelos de CTR" in index and "Correções do CTR" in index
    for model, obj, shown in (
        ("ctrtemplate", template, "Obra das Flores → ATT"),
        ("ctrcorrection", correction, "Recontagem"),
    ):
        listing = admin_client.get(f"/admin/ctr/{model}/")
        assert listing.status_code == 200, model
        assert admin_client.get(f"/admin/ctr/{model}/add/").status_code == 403, model
        page = admin_client.get(f"/admin/ctr/{model}/{obj.pk}/change/")
        assert page.status_code == 200, model
        html = page.content.decode()
        assert shown in html, model
        assert 'type="submit"' not in html.split('id="content-main"')[1], model
        assert admin_client.post(f"/admin/ctr/{model}/{obj.pk}/delete/").status_code == 403
