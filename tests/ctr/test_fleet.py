"""The fleet's one rule (ctr.fleet): the page and the API refuse the same input with the same
Portuguese words, and write nothing when they refuse."""

from __future__ import annotations

from decimal import Decimal
from html.parser import HTMLParser

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from ctr import fleet
from ctr.models import Equipment, Vehicle
from tests.ctr_world import build_world

pytestmark = pytest.mark.django_db

PAGE = {"vehicle": "/transportador/veiculos/", "equipment": "/transportador/equipamentos/"}
API = {"vehicle": "/api/v1/vehicles/", "equipment": "/api/v1/equipment/"}


@pytest.fixture
def world():
    return build_world()


class FieldErrors(HTMLParser):
    """The text of each `id_<field>_error` element of a form page."""

    def __init__(self):
        super().__init__()
        self.errors: dict[str, str] = {}
        self.open: str | None = None

    def handle_starttag(self, tag, attrs):
        element_id = dict(attrs).get("id") or ""
        if element_id.startswith("id_") and element_id.endswith("_error"):
            self.open = element_id[3:-6]
            self.errors[self.open] = ""

    def handle_endtag(self, tag):
        if tag == "ul":  # the list of a field's errors (ctr/_field.html)
            self.open = None

    def handle_data(self, data):
        if self.open:
            self.errors[self.open] += data.strip()


def page_refusal(user, what: str, data: dict) -> dict[str, str]:
    client = Client()
    client.force_login(get_user_model().objects.get(pk=user.pk))
    response = client.post(PAGE[what], data)
    assert response.status_code == 400
    parser = FieldErrors()
    parser.feed(response.content.decode())
    return parser.errors


def api_refusal(user, what: str, data: dict) -> dict[str, str]:
    client = APIClient()
    client.force_authenticate(get_user_model().objects.get(pk=user.pk))
    response = client.post(API[what], data, format="json")
    assert response.status_code == 400, response.content
    return {e["campo"]: e["mensagem"] for e in response.json()["errors"]}


@pytest.mark.parametrize(
    ("what", "data", "field", "message"),
    [
        ("vehicle", {"plate": "xyz-9876"}, "plate", "A placa XYZ9876 já está cadastrada."),
        ("vehicle", {"plate": "12-ABCD"}, "plate", "Placa inválida: 12-ABCD"),
        (
            "equipment",
            {"code": "c-01", "kind": "CACAMBA", "nominal_capacity_m3": "5"},
            "code",
            "O equipamento C-01 já está cadastrado.",
        ),
        (
            "equipment",
            {"code": "C-09", "kind": "CACAMBA", "nominal_capacity_m3": "0"},
            "nominal_capacity_m3",
            "A capacidade deve ser maior que zero.",
        ),
    ],
)
def test_page_and_api_refuse_the_same_input_with_the_same_words(world, what, data, field, message):
    before = (Vehicle.objects.count(), Equipment.objects.count())
    page = page_refusal(world.alfa_user, what, data)
    api = api_refusal(world.alfa_user, what, data)
    assert message in page[field]
    assert message in api[field]
    assert page[field] == api[field]
    assert (Vehicle.objects.count(), Equipment.objects.count()) == before


def test_both_register_for_the_users_own_transporter_only(world):
    page = Client()
    page.force_login(get_user_model().objects.get(pk=world.alfa_user.pk))
    assert page.post(PAGE["vehicle"], {"plate": "fgh-1234"}).status_code == 302
    api = APIClient()
    api.force_authenticate(get_user_model().objects.get(pk=world.alfa_user.pk))
    created = api.post(
        API["equipment"],
        {"code": " c-07 ", "kind": "CACAMBA", "nominal_capacity_m3": "6.5"},
        format="json",
    )
    assert created.status_code == 201, created.content
    assert created.json()["code"] == "C-07"
    assert Vehicle.objects.get(plate="FGH1234").transporter == world.alfa
    item = Equipment.objects.get(code="C-07")
    assert item.transporter == world.alfa and item.nominal_capacity_m3 == Decimal("6.5")


def test_a_plate_taken_meanwhile_is_refused_not_a_server_error(world, monkeypatch):
    """The check and the insert are not atomic across requests: the unique index decides, and
    the loser hears the same words as if the check had caught it. The check is made to miss
    the row, as it does when another request inserts it in between."""
    Vehicle.objects.create(transporter=world.beta, plate="QRS1234")

    class Unseen:
        def exists(self):
            return False

    monkeypatch.setattr(Vehicle.objects, "filter", lambda **kwargs: Unseen())
    with pytest.raises(fleet.FleetError, match="A placa QRS1234 já está cadastrada."):
        fleet.add_vehicle(world.alfa, "QRS-1234")
    monkeypatch.undo()
    assert Vehicle.objects.filter(plate="QRS1234").count() == 1


@pytest.mark.parametrize("what", ["vehicle", "equipment"])
def test_only_a_transporter_registers_even_with_a_bad_body(world, what):
    """Who may register is answered before what was sent: a facility's operator posting an
    invalid body hears 403, as with a valid one."""
    client = APIClient()
    client.force_authenticate(get_user_model().objects.get(pk=world.operator.pk))
    response = client.post(API[what], {}, format="json")
    assert response.status_code == 403, response.content


def test_the_api_leaves_the_kind_to_the_models_default(world):
    """The API's kind is optional (the model's default, a stationary skip): the service takes
    the same default rather than failing on a missing argument."""
    client = APIClient()
    client.force_authenticate(get_user_model().objects.get(pk=world.alfa_user.pk))
    response = client.post(
        API["equipment"], {"code": "C-99", "nominal_capacity_m3": "4.00"}, format="json"
    )
    assert response.status_code == 201, response.content
    assert response.json()["kind"] == "CACAMBA"
