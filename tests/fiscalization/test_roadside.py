"""Roadside check by plate: regular, suspended, revoked, expired, inactive and unknown
vehicles, a transporter without a licence in the inspector's municipality, bad plates; the
vehicle's open CTRs; access (API and page)."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.test import APIClient

from ctr import closing, services
from ctr.models import LicenceStatus, Vehicle
from ctr.rules import WasteLine
from fiscalization import roadside
from jurisdiction.models import StaffRole
from jurisdiction.scope import choose
from tests.builders import licence, municipality
from tests.ctr_world import build_world, make_user

# Issues CTRs on the day the clock says: frozen on TODAY (tests/clock.py).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen_today")]

URL = "/api/v1/roadside/"
PAGE = "/fiscalizacao/veiculo/"


@pytest.fixture
def world():
    return build_world()


def client_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(get_user_model().objects.get(pk=user.pk))
    return client


def issue(world, hours_ago: float, transporter=None, plate="ABC1D23", code="C-01"):
    """A CTR issued `hours_ago` hours ago, for today's transport (by its local date)."""
    issued_at = timezone.now() - datetime.timedelta(hours=hours_ago)
    transporter = transporter or world.alfa
    user = world.alfa_user if transporter == world.alfa else world.beta_user
    request = services.IssueRequest(
        transport_date=timezone.localtime(issued_at).date(),
        vehicle_plate=plate,
        equipment_code=code,
        origin=world.origin,
        destination=world.inside(world.att),
        waste=[WasteLine("A", Decimal("3"), "entulho")],
        generator=services.GeneratorData("Maria da Obra", "52998224725"),
    )
    return services.issue(transporter, user, request, at=issued_at)


def test_regular_vehicle_with_its_open_ctrs(world):
    overdue = issue(world, hours_ago=60)
    fresh = issue(world, hours_ago=1)
    received = issue(world, hours_ago=5)
    closing.receive(received, world.operator, Decimal("3"))
    issue(world, hours_ago=2, transporter=world.beta, plate="XYZ9876", code="B-01")  # another

    answer = roadside.check_plate("abc-1d23", world.town.pk)
    assert answer.plate == "ABC1D23"
    assert answer.verdict == roadside.Verdict.REGULAR
    assert answer.headline == "REGULAR"
    assert answer.ok
    assert [c.number for c in answer.open_ctrs] == [overdue.number, fresh.number]
    assert [c.overdue for c in answer.open_ctrs] == [True, False]
    assert answer.open_ctrs[0].hours_open == pytest.approx(60, abs=0.1)
    assert answer.open_ctrs[0].facility_name == "ATT"


def test_suspended_transporter(world):
    today = timezone.localdate()
    alfa = world.alfa.licences.get()
    alfa.status = LicenceStatus.SUSPENDED
    alfa.status_since = today - datetime.timedelta(days=2)
    alfa.suspended_until = today + datetime.timedelta(days=5)
    alfa.save()
    answer = roadside.check_plate("ABC1D23", world.town.pk)
    assert answer.verdict == roadside.Verdict.SUSPENDED
    assert answer.headline == f"SUSPENSO até {alfa.suspended_until:%d/%m}"
    assert "suspenso em Guaratinguetá (teste)/SP" in answer.explanation
    assert not answer.ok
    # Once the suspension is over, regular again.
    later = timezone.now() + datetime.timedelta(days=7)
    assert (
        roadside.check_plate("ABC1D23", world.town.pk, now=later).verdict
        == roadside.Verdict.REGULAR
    )


def test_revoked_transporter(world):
    world.alfa.licences.update(
        status=LicenceStatus.REVOKED, status_since=timezone.localdate() - datetime.timedelta(30)
    )
    answer = roadside.check_plate("ABC1D23", world.town.pk)
    assert (answer.verdict, answer.headline) == (roadside.Verdict.REVOKED, "LICENÇA CASSADA")


def test_expired_licence(world):
    world.beta.licences.update(valid_until=timezone.localdate() - datetime.timedelta(days=1))
    answer = roadside.check_plate("XYZ-9876", world.town.pk)
    assert (answer.verdict, answer.headline) == (roadside.Verdict.EXPIRED, "LICENÇA VENCIDA")
    assert "venceu em" in answer.explanation


def test_licence_not_yet_valid(world):
    world.beta.licences.update(valid_from=timezone.localdate() + datetime.timedelta(days=10))
    answer = roadside.check_plate("XYZ9876", world.town.pk)
    assert answer.verdict == roadside.Verdict.NOT_YET_VALID


def test_a_transporter_licensed_in_the_neighbour_only_has_no_licence_in_the_town(world):
    """Art. 13: the inspector reads the licence of the municipality it works in; a
    licence elsewhere does not let the vehicle carry RCC here."""
    neighbour = municipality("3502507", "Aparecida (teste)", east_m=20_000)
    world.beta.licences.update(municipality=neighbour)
    here = roadside.check_plate("XYZ9876", world.town.pk)
    assert (here.verdict, here.headline) == (
        roadside.Verdict.UNLICENSED,
        "SEM LICENÇA NO MUNICÍPIO",
    )
    assert "não tem licença em Guaratinguetá (teste)/SP" in here.explanation
    assert not here.ok
    assert roadside.check_plate("XYZ9876", neighbour.pk).verdict == roadside.Verdict.REGULAR


def test_a_suspension_in_the_neighbour_leaves_the_vehicle_regular_in_the_town(world):
    neighbour = municipality("3502507", "Aparecida (teste)", east_m=20_000)
    licence(
        world.alfa,
        neighbour,
        "AP-9",
        status=LicenceStatus.SUSPENDED,
        status_since=timezone.localdate() - datetime.timedelta(days=1),
    )
    assert roadside.check_plate("ABC1D23", world.town.pk).verdict == roadside.Verdict.REGULAR
    assert roadside.check_plate("ABC1D23", neighbour.pk).verdict == roadside.Verdict.SUSPENDED


def test_inactive_vehicle(world):
    Vehicle.objects.filter(plate="ABC1D23").update(active=False)
    answer = roadside.check_plate("ABC1D23", world.town.pk)
    assert (answer.verdict, answer.headline) == (
        roadside.Verdict.INACTIVE_VEHICLE,
        "VEÍCULO DESATIVADO",
    )


def test_unknown_plate(world):
    answer = roadside.check_plate("QQQ1A11", world.town.pk)
    assert answer.verdict == roadside.Verdict.UNKNOWN_VEHICLE
    assert answer.headline == "VEÍCULO NÃO CADASTRADO"
    assert answer.transporter is None and answer.open_ctrs == []


# --- API -----------------------------------------------------------------------------------


def test_api_regular(world):
    ctr = issue(world, hours_ago=60)
    response = client_for(world.fiscal).get(URL, {"plate": "abc1d23"})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["plate"] == "ABC1D23"
    assert body["verdict"] == "REGULAR"
    assert body["headline"] == "REGULAR"
    assert body["vehicle"]["plate"] == "ABC1D23"
    assert body["transporter"]["name"] == "Caçambas Alfa Ltda."
    assert body["municipality"] == {"ibge_code": "3518404", "name": "Guaratinguetá (teste)/SP"}
    held = body["transporter"]["licence"]
    assert (held["number"], held["valid"], held["restriction"]) == ("TR-001", True, None)
    assert held["valid_until"] == "2027-12-31"
    (open_ctr,) = body["open_ctrs"]
    assert open_ctr["number"] == ctr.number
    assert open_ctr["overdue"] is True
    assert open_ctr["destination_facility"] == {"name": "ATT", "kind": "ATT"}
    assert open_ctr["hours_open"] == pytest.approx(60, abs=0.2)
    assert body["overdue_ctrs"] == 1


def test_api_suspended(world):
    world.alfa.licences.update(
        status=LicenceStatus.SUSPENDED,
        status_since=timezone.localdate(),
        suspended_until=timezone.localdate() + datetime.timedelta(days=3),
    )
    body = client_for(world.nucleo).get(URL, {"plate": "ABC1D23"}).json()
    assert body["verdict"] == "SUSPENDED"
    assert body["transporter"]["licence"]["restriction"] == "SUSPENDED"
    assert body["headline"].startswith("SUSPENSO até ")


def test_api_reads_the_licence_of_the_inspectors_current_municipality(world):
    """An inspector of a consortium (roles in the town and the neighbour) checks a plate in
    the municipality it works in now: the answer follows its choice."""
    neighbour = municipality("3502507", "Aparecida (teste)", east_m=20_000)
    inspector = make_user("fiscal_consorcio", "fiscal", neighbour)
    StaffRole.objects.create(user=inspector, municipality=world.town, role="fiscal")
    choose(inspector, neighbour.pk)
    body = client_for(inspector).get(URL, {"plate": "ABC1D23"}).json()
    assert (body["verdict"], body["transporter"]["licence"]) == ("UNLICENSED", None)
    assert body["municipality"]["ibge_code"] == "3502507"
    choose(inspector, world.town.pk)
    body = client_for(inspector).get(URL, {"plate": "ABC1D23"}).json()
    assert (body["verdict"], body["transporter"]["licence"]["number"]) == ("REGULAR", "TR-001")


def test_api_unknown_plate_is_an_answer(world):
    response = client_for(world.fiscal).get(URL, {"plate": "QQQ1A11"})
    assert response.status_code == 200
    assert response.json()["verdict"] == "UNKNOWN_VEHICLE"
    assert response.json()["vehicle"] is None


@pytest.mark.parametrize(
    ("params", "fragment"),
    [({"plate": "12"}, "Placa inválida"), ({}, "obrigatório"), ({"plate": " "}, "obrigatório")],
)
def test_api_bad_plate_is_400(world, params, fragment):
    response = client_for(world.fiscal).get(URL, params)
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/problem+json")
    error = response.json()["errors"][0]
    assert error["campo"] == "plate"
    assert fragment in error["mensagem"]


def test_api_access(world):
    assert APIClient().get(URL, {"plate": "ABC1D23"}).status_code == 401
    for user in (world.alfa_user, world.operator, world.outsider):
        assert client_for(user).get(URL, {"plate": "ABC1D23"}).status_code == 403


def test_vehicle_path_of_the_ctr_api_is_not_taken(world):
    """The roadside check lives at /roadside/: /vehicles/ belongs to the CTR API."""
    response = client_for(world.alfa_user).get("/api/v1/vehicles/")
    assert response.status_code == 200
    assert "ABC1D23" in response.content.decode()  # alfa's vehicle, from the CTR API
    assert "headline" not in response.content.decode()  # not the roadside answer


# --- page ----------------------------------------------------------------------------------


def test_page_answers(world, client):
    issue(world, hours_ago=60)
    client.force_login(world.fiscal)
    empty = client.get(PAGE)
    assert empty.status_code == 200
    assert 'name="plate"' in empty.content.decode()
    html = client.get(PAGE, {"plate": "abc1d23"}).content.decode()
    assert 'data-verdict="REGULAR"' in html
    assert "verdict-ok" in html
    assert "Caçambas Alfa Ltda." in html
    assert "Em atraso" in html
    assert 'value="ABC-1D23"' in html

    assert "Licença em Guaratinguetá (teste)/SP" in html and "TR-001" in html

    world.beta.licences.update(valid_until=timezone.localdate() - datetime.timedelta(days=1))
    html = client.get(PAGE, {"plate": "XYZ9876"}).content.decode()
    assert "LICENÇA VENCIDA" in html and "verdict-bad" in html

    world.alfa.licences.update(
        status=LicenceStatus.SUSPENDED,
        status_since=timezone.localdate(),
        suspended_until=datetime.date(2030, 1, 15),
    )
    assert "SUSPENSO até 15/01" in client.get(PAGE, {"plate": "ABC1D23"}).content.decode()

    unknown = client.get(PAGE, {"plate": "QQQ1A11"}).content.decode()
    assert "VEÍCULO NÃO CADASTRADO" in unknown


def test_page_bad_plate(world, client):
    client.force_login(world.nucleo)
    response = client.get(PAGE, {"plate": "12"})
    assert response.status_code == 400
    assert "Placa inválida" in response.content.decode()
    response = client.get(PAGE, {"plate": ""})
    assert response.status_code == 400
    assert "Informe a placa do veículo." in response.content.decode()


def test_page_access(world, client):
    response = client.get(PAGE)
    assert response.status_code == 302 and "next=" in response["Location"]
    client.force_login(world.alfa_user)
    assert client.get(PAGE).status_code == 403
