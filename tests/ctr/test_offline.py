"""The offline provisional CTR, on the server's side: the CTR a driver's
phone kept without a connection arrives with its provisional number and departure, is issued
dated by its departure (in the past), warns when it arrived past the municipality's limit
(PROVISIONAL_SYNC_LATE, Lei 3.978/2007 art. 3 VI, art. 13), is never issued twice, and the
phone's bundle, manifest and worker are served. The browser's side:
tests/e2e/test_offline_ctr.py."""

from __future__ import annotations

import datetime
import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from ctr import rules
from ctr.bulk import sql as bulk_sql
from ctr.field import offline
from ctr.models import CTR
from tests.builders import set_parameters
from tests.clock import FROZEN_NOW
from tests.ctr_world import TODAY, build_world, ctr_payload

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen_today")]


@pytest.fixture
def world():
    return build_world()


def client_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(get_user_model().objects.get(pk=user.pk))
    return client


def provisional(
    world, hours_ago: float, number: str = "PROV-AB12-0007", idempotency_key=None, **overrides
):
    departure = FROZEN_NOW - datetime.timedelta(hours=hours_ago)
    payload = ctr_payload(
        world,
        transport_date=timezone.localdate(departure).isoformat(),
        provisional_number=number,
        provisional_departure_at=departure.isoformat(),
        **overrides,
    )
    return client_for(world.alfa_user).post(
        "/api/v1/ctrs/",
        payload,
        format="json",
        headers={"Idempotency-Key": idempotency_key or number},
    )


def codes(body) -> set[str]:
    return {f["code"] for f in body["findings"]}


# --- arriving late or in time ------------------------------------------------------------


def test_provisional_ctr_arriving_after_the_limit_gets_the_late_warning(world):
    # Left 30 h ago: the municipality allows 24 h (the default).
    response = provisional(world, hours_ago=30)
    assert response.status_code == 201, response.content
    body = response.json()
    late = [f for f in body["findings"] if f["code"] == "PROVISIONAL_SYNC_LATE"]
    assert late == [
        {
            "code": "PROVISIONAL_SYNC_LATE",
            "severity": "warning",
            "message": "O CTR provisório PROV-AB12-0007 chegou 30 h depois da saída, além do "
            "prazo de 24 h do município para enviar um CTR emitido sem conexão.",
            "article": "Lei 3.978/2007 art. 3 VI, art. 13",
            "field": "provisional_departure_at",
        }
    ]
    ctr = CTR.objects.get(number=body["number"])
    assert ctr.provisional_number == "PROV-AB12-0007"
    assert ctr.provisional_departure_at == FROZEN_NOW - datetime.timedelta(hours=30)
    # Dated by its departure, yesterday at 4 a.m.
    assert ctr.transport_date == TODAY - datetime.timedelta(days=1)
    assert body["provisional_number"] == "PROV-AB12-0007"


def test_provisional_ctr_just_inside_the_limit_has_no_warning(world):
    response = provisional(world, hours_ago=23.9)
    assert response.status_code == 201, response.content
    assert "PROVISIONAL_SYNC_LATE" not in codes(response.json())


def test_the_limit_is_the_municipality_s_parameter(world):
    set_parameters(world.town, provisional_sync_max_hours=4)
    response = provisional(world, hours_ago=5)
    assert response.status_code == 201, response.content
    late = [f for f in response.json()["findings"] if f["code"] == "PROVISIONAL_SYNC_LATE"]
    assert "5 h depois da saída" in late[0]["message"] and "prazo de 4 h" in late[0]["message"]


def test_an_ordinary_ctr_never_gets_the_late_warning(world):
    response = client_for(world.alfa_user).post("/api/v1/ctrs/", ctr_payload(world), format="json")
    assert response.status_code == 201
    assert "PROVISIONAL_SYNC_LATE" not in codes(response.json())
    assert CTR.objects.get().provisional_number == ""


# --- what the phone sends, checked -------------------------------------------------------


def test_the_same_provisional_number_is_not_issued_twice(world):
    sent = provisional(world, hours_ago=1)
    assert sent.status_code == 201
    # The phone retrying with its key: the first answer again (ctr.idempotency).
    retried = provisional(world, hours_ago=1)
    assert retried.status_code == 201 and retried["Idempotent-Replayed"] == "true"
    assert retried.json()["number"] == sent.json()["number"]
    # Sent again under another key (another tab, a key past its lifetime): refused by number.
    again = provisional(world, hours_ago=1, idempotency_key="outra-chave")
    assert again.status_code == 409
    first = CTR.objects.get()
    assert again.json()["errors"][0]["campo"] == "provisional_number"
    assert first.number in again.json()["detail"]
    assert CTR.objects.count() == 1


def test_another_transporter_may_have_the_same_device_number(world):
    assert provisional(world, hours_ago=1).status_code == 201
    payload = ctr_payload(
        world,
        vehicle_plate="XYZ9876",
        equipment_code="B-01",
        provisional_number="PROV-AB12-0007",
        provisional_departure_at=(FROZEN_NOW - datetime.timedelta(hours=1)).isoformat(),
    )
    response = client_for(world.beta_user).post("/api/v1/ctrs/", payload, format="json")
    assert response.status_code == 201, response.content


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"provisional_number": "AB12-7"}, "provisional_number"),
        ({"provisional_departure_at": None}, "provisional_departure_at"),
        ({"transport_date": TODAY.isoformat()}, "transport_date"),  # not the departure's day
    ],
)
def test_a_malformed_provisional_ctr_is_refused_in_portuguese(world, changes, field):
    departure = FROZEN_NOW - datetime.timedelta(hours=30)
    payload = ctr_payload(
        world,
        transport_date=timezone.localdate(departure).isoformat(),
        provisional_number="PROV-AB12-0001",
        provisional_departure_at=departure.isoformat(),
    )
    payload.update(changes)
    response = client_for(world.alfa_user).post("/api/v1/ctrs/", payload, format="json")
    assert response.status_code == 400, response.content
    errors = response.json()["errors"]
    assert [e["campo"] for e in errors] == [field]
    assert CTR.objects.count() == 0


def test_a_departure_in_the_future_is_refused(world):
    departure = FROZEN_NOW + datetime.timedelta(hours=1)
    payload = ctr_payload(
        world,
        provisional_number="PROV-AB12-0001",
        provisional_departure_at=departure.isoformat(),
    )
    response = client_for(world.alfa_user).post("/api/v1/ctrs/", payload, format="json")
    assert response.status_code == 400
    assert "futuro" in response.json()["errors"][0]["mensagem"]


def test_a_phone_clock_a_few_minutes_ahead_is_accepted(world):
    departure = FROZEN_NOW + datetime.timedelta(minutes=5)
    payload = ctr_payload(
        world,
        provisional_number="PROV-AB12-0001",
        provisional_departure_at=departure.isoformat(),
    )
    response = client_for(world.alfa_user).post("/api/v1/ctrs/", payload, format="json")
    assert response.status_code == 201, response.content


def test_the_rule_is_declared_out_of_the_csv_import(world):
    rule = rules.REGISTRY["PROVISIONAL_SYNC_LATE"]
    assert rule.severity == rules.Severity.WARNING and rule.stage == rules.Stage.ISSUE
    assert "CSV" in rule.not_in_bulk
    assert "PROVISIONAL_SYNC_LATE" in bulk_sql.NOT_APPLICABLE_RULES


# --- detail and print -------------------------------------------------------------------


def test_the_detail_page_and_the_pdf_show_the_provisional_number(world):
    number = provisional(world, hours_ago=2).json()["number"]
    client = Client()
    client.force_login(world.alfa_user)
    page = client.get(f"/transportador/ctrs/{number}/").content.decode()
    assert "PROV-AB12-0007" in page and "08:00" in page
    ctr = CTR.objects.get()
    assert offline.print_fields(ctr) == [
        ("CTR provisório", "PROV-AB12-0007, saída em 30/11/2026 08:00")
    ]
    pdf = client.get(f"/ctrs/{number}/pdf/")
    assert pdf.status_code == 200 and pdf["Content-Type"] == "application/pdf"


# --- what the phone keeps -----------------------------------------------------------------


def test_the_bundle_has_the_fleet_the_recent_worksites_and_the_facilities_near_them(world):
    assert provisional(world, hours_ago=1).status_code == 201
    response = client_for(world.alfa_user).get("/api/v1/offline-bundle/")
    assert response.status_code == 200
    body = response.json()
    assert body["vehicles"] == [{"id": world.alfa.vehicles.get().pk, "plate": "ABC1D23"}]
    assert [e["code"] for e in body["equipment"]] == ["C-01"]
    assert [w["address"] for w in body["worksites"]] == ["Rua das Flores, 10"]
    assert body["worksites"][0]["generator"]["document"] == "52998224725"
    assert body["worksites"][0]["registered"] is False  # created by a CTR: nothing to hold to
    assert body["worksites"][0]["tolerance_m"] is None and body["worksites"][0]["area"] is None
    names = {f["name"] for f in body["facilities"]}
    assert {"ATT", "PEV", "Aterro", "Reciclagem"} <= names
    att = next(f for f in body["facilities"] if f["name"] == "ATT")
    assert att["id"] == world.att.pk and len(att["point"]) == 2
    assert body["provisional_sync_max_hours"] == 24
    # Another transporter's fleet and worksites never travel in it.
    other = client_for(world.beta_user).get("/api/v1/offline-bundle/").json()
    assert other["worksites"] == [] and [v["plate"] for v in other["vehicles"]] == ["XYZ9876"]


def test_the_bundle_is_the_transporter_s_only(world):
    assert client_for(world.operator).get("/api/v1/offline-bundle/").status_code == 403
    assert APIClient().get("/api/v1/offline-bundle/").status_code == 401


def test_the_manifest_installs_the_transporter_pages_opening_on_the_issue_form(world):
    response = Client().get("/transportador/app.webmanifest")
    assert response["Content-Type"] == "application/manifest+json"
    manifest = json.loads(response.content)
    assert manifest["lang"] == "pt-BR" and manifest["start_url"] == "/transportador/ctrs/novo/"
    assert manifest["scope"] == "/transportador/"
    assert manifest["theme_color"] == "#14532d"
    sizes = {(i["sizes"], i.get("purpose", "any")) for i in manifest["icons"]}
    assert sizes == {("192x192", "any"), ("512x512", "any"), ("512x512", "maskable")}
    for icon in manifest["icons"]:
        assert icon["src"].startswith("/static/ctr/icons/")


def test_the_worker_is_served_from_under_the_transporter_pages(world):
    response = Client().get("/transportador/sw.js")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/javascript")
    assert response["Cache-Control"] == "no-cache"
    text = response.content.decode()
    assert text.startswith("self.CTR_OFFLINE = ")
    assert '"bundle": "/api/v1/offline-bundle/"' in text
    assert 'addEventListener("fetch"' in text


def test_the_transporter_pages_link_the_manifest_and_no_one_else_s(world):
    client = Client()
    client.force_login(world.alfa_user)
    page = client.get("/transportador/ctrs/novo/")
    assert 'rel="manifest"' in page.content.decode()
    assert "worker-src 'self'" in page["Content-Security-Policy"]
    assert "manifest-src 'self'" in page["Content-Security-Policy"]
    client.force_login(world.nucleo)
    assert 'rel="manifest"' not in client.get("/").content.decode()
