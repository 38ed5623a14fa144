"""The admin: pt-BR, map widgets from our own static files, license validity in the list."""

import datetime
import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

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
