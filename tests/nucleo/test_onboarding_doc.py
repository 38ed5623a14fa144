"""docs/municipios.md, followed as a consortium's IT would: the commands of
its "Passo a passo", as written and in order, on the real boundaries of SP (fixtures/, the
shared geodata's file byte for byte) and beside Guaratinguetá with its detailed IBGE boundary;
then the new Núcleo account sets its password from the e-mail, signs in, and works in its own
municipality, not in its neighbour."""

from __future__ import annotations

import io
import json
import re
import shlex
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.contrib.gis.geos import GEOSGeometry
from django.core import mail
from django.core.management import call_command
from django.test import Client

from jurisdiction.models import Role, StaffRole
from pev_network.models import FacilityKind, Municipality, ReceivingFacility
from pev_network.services import save_municipality
from tests.builders import licensed_facility, multi, offset, square
from tests.ctr_world import make_user
from tests.enforcement_world import ensure_frameworks
from tests.nucleo.test_onboarding import snapshot

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "municipios.md"
GUARATINGUETA_FILE = ROOT / "fixtures" / "municipio_3518404_guaratingueta.geojson"
PASSWORD = "Entulho-no-lugar-certo-2026"


def documented_commands() -> list[list[str]]:
    """The `python manage.py …` lines of the page's ```sh blocks in "Passo a passo", with
    their continuation lines joined, as argument lists (without "python manage.py")."""
    section = DOC.read_text(encoding="utf-8").split("## Passo a passo", 1)[1]
    section = section.split("\n## ", 1)[0]
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", section, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line)
            if words[:2] == ["python", "manage.py"]:
                commands.append(words[2:])
    return commands


@pytest.fixture
def guaratingueta():
    """The consortium's platform already serves Guaratinguetá: its boundary, an ATT, its
    Núcleo."""
    ensure_frameworks()
    feature = json.loads(GUARATINGUETA_FILE.read_text())["features"][0]
    town, _ = save_municipality(
        "3518404", "Guaratinguetá", "SP", GEOSGeometry(json.dumps(feature["geometry"]))
    )
    centre = town.boundary.point_on_surface
    area = multi(square(*offset(centre.x, centre.y, 0, 0), 80))
    licensed_facility(FacilityKind.ATT, area, "ATT do Vale de Guaratinguetá", town)
    make_user("nucleo_guara", Role.NUCLEO, town)
    return town


def follow_the_page(capture) -> Client:
    """Run the page's commands, checking what each says; then the new Núcleo sets its
    password from the e-mail and signs in. The signed-in client."""
    commands = documented_commands()
    assert [c[0] for c in commands] == [
        "onboard_municipality",
        "onboard_municipality",
        "send_password_link",
    ]
    simulate, include, resend = commands
    assert "--dry-run" in simulate and "--dry-run" not in include

    # 1. Simulate: the report, and nothing written nor mailed.
    before = snapshot()
    with capture(execute=True):
        out = io.StringIO()
        call_command(*simulate, stdout=out, stderr=io.StringIO())
    assert snapshot() == before and mail.outbox == []
    assert "Município a criar: Aparecida/SP (IBGE 3502507)" in out.getvalue()
    assert "Áreas a criar: 2" in out.getvalue()

    # 2. Bring it in.
    with capture(execute=True):
        out = io.StringIO()
        call_command(*include, stdout=out, stderr=io.StringIO())
    assert "Município criado: Aparecida/SP (IBGE 3502507)" in out.getvalue()
    aparecida = Municipality.objects.get(ibge_code="3502507")
    assert "tbrugz/geodata-br" in aparecida.boundary_source  # provenance kept
    assert sorted(
        ReceivingFacility.objects.filter(municipality=aparecida).values_list("name", flat=True)
    ) == ["ATT Aparecida Sul (fictícia)", "PEV Centro de Aparecida (fictício)"]
    (role,) = StaffRole.objects.filter(municipality=aparecida)
    nucleo = role.user
    assert role.role == Role.NUCLEO and nucleo.email == "nucleo.aparecida@example.org"
    assert StaffRole.objects.filter(user=nucleo).count() == 1

    # 3. A new link, as the page tells when the first does not arrive.
    with capture(execute=True):
        call_command(*resend, stdout=io.StringIO())
    assert [m.to for m in mail.outbox] == [[nucleo.email], [nucleo.email]]

    # The person follows the link of the e-mail and chooses its password…
    link = re.search(r"http\S+/conta/senha/\S+/", mail.outbox[-1].body).group(0)
    client = Client()
    form = client.get(urlsplit(link).path)
    assert form.status_code == 302
    done = client.post(form.url, {"new_password1": PASSWORD, "new_password2": PASSWORD})
    assert done.status_code == 302
    client.post("/sair/")

    # …and signs in as the page says.
    signed_in = client.post("/entrar/", {"username": nucleo.email, "password": PASSWORD})
    assert signed_in.status_code == 302 and signed_in.url == "/painel/"
    assert client.get("/painel/").url == "/nucleo/"
    return client


@pytest.fixture
def nucleo_client(guaratingueta, monkeypatch, django_capture_on_commit_callbacks) -> Client:
    monkeypatch.chdir(ROOT)  # the page's paths are the checkout's
    return follow_the_page(django_capture_on_commit_callbacks)


def test_the_page_followed_step_by_step(nucleo_client):
    # 6. The new Núcleo works in Aparecida: the bar of every page says so, and it has no
    # other municipality to pick.
    page = nucleo_client.get("/nucleo/")
    assert page.status_code == 200
    assert "Município: <strong>Aparecida/SP</strong>" in page.content.decode()
    assert "Trocar de município" not in page.content.decode()
    choose = nucleo_client.get("/municipio/").content.decode()
    assert re.findall(r"<option[^>]*>([^<]*)</option>", choose) == ["Aparecida/SP"]


def test_the_dashboard_shows_its_municipality_and_not_the_neighbours(nucleo_client):
    page = nucleo_client.get("/nucleo/").content.decode()
    assert "Guaratinguetá/SP" not in page.split("<footer", 1)[0]
    assert "ATT do Vale de Guaratinguetá" not in page
    assert "— Aparecida/SP" in page
