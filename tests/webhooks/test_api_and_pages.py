"""The webhooks' API and page: register (the secret once), list deliveries with attempts and
responses, replay, rotate the secret, switch on and off; others' endpoints do not exist."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from tests.ctr_world import build_world, issue_hours_ago
from tests.webhooks.world import alfa_endpoint
from webhooks import delivery
from webhooks.models import Delivery, DeliveryStatus, Endpoint

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(frozen_today):
    return build_world()


def api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_the_api_registers_and_shows_the_secret_once(world):
    response = api(world.alfa_user).post(
        "/api/v1/webhooks/",
        {"url": "https://erp.alfa.example.com/ctr", "events": ["ctr.issued", "ctr.refused"]},
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["secret"].startswith("whsec_") and body["owner"] == str(world.alfa)
    listed = api(world.alfa_user).get("/api/v1/webhooks/").json()
    assert [e["id"] for e in listed] == [body["id"]] and "secret" not in listed[0]
    rotated = api(world.alfa_user).post(f"/api/v1/webhooks/{body['id']}/rotate-secret/")
    assert rotated.status_code == 200 and rotated.json()["secret"] != body["secret"]


def test_the_api_refuses_a_private_target_in_portuguese(world):
    response = api(world.alfa_user).post(
        "/api/v1/webhooks/",
        {"url": "https://169.254.169.254/", "events": ["ctr.issued"]},
        format="json",
    )
    assert response.status_code == 400
    assert "rede privada" in response.json()["detail"]
    assert not Endpoint.objects.exists()


def test_roles_without_ctrs_of_their_own_have_no_webhooks(world):
    for user in (world.nucleo, world.generator_user):
        assert api(user).get("/api/v1/webhooks/").status_code == 403


def test_anothers_endpoint_does_not_exist(world):
    endpoint = alfa_endpoint(world, "https://erp.alfa.example.com/ctr")
    from django.contrib.auth import get_user_model

    beta = get_user_model().objects.get(username="beta")
    assert api(beta).get(f"/api/v1/webhooks/{endpoint.pk}/").status_code == 404
    assert api(world.operator).get(f"/api/v1/webhooks/{endpoint.pk}/deliveries/").status_code == 404


def test_deliveries_list_attempts_and_a_replay_requeues(world, receiver):
    target = receiver(statuses=[500])
    endpoint = alfa_endpoint(world, target.url)
    issue_hours_ago(world, 1)
    delivery.deliver_due()
    listed = api(world.alfa_user).get(f"/api/v1/webhooks/{endpoint.pk}/deliveries/").json()
    (row,) = listed
    assert row["attempt_log"][0]["response_status"] == 500
    assert row["attempt_log"][0]["response_body"] == "resposta 500"
    Delivery.objects.update(status=DeliveryStatus.FAILED)
    replayed = api(world.alfa_user).post(f"/api/v1/webhook-deliveries/{row['id']}/replay/")
    assert replayed.status_code == 202 and replayed.json()["status"] == "pending"
    target.statuses = [200]
    assert delivery.deliver_due() == {"delivered": 1}
    assert {r.headers["X-CTR-Event-Id"] for r in target.received} == {row["event_id"]}


def test_the_page_registers_shows_the_secret_and_lists_the_attempts(world, receiver):
    target = receiver(statuses=[410])
    web = Client()
    web.force_login(world.operator)
    page = web.post(
        "/integracoes/webhooks/", {"url": target.url, "events": ["ctr.issued", "ctr.received"]}
    )
    assert page.status_code == 200 and page["Cache-Control"] == "no-store"
    endpoint = Endpoint.objects.get()
    assert endpoint.facility == world.att and endpoint.secret in page.content.decode()
    issue_hours_ago(world, 1)
    delivery.deliver_due()
    detail = web.get(f"/integracoes/webhooks/{endpoint.pk}/").content.decode()
    assert endpoint.secret not in detail
    assert "HTTP 410" in detail and "Desativado" in detail and "410 (Gone)" in detail
    web.post(f"/integracoes/webhooks/{endpoint.pk}/reativar/")
    endpoint.refresh_from_db()
    assert endpoint.active


def test_the_page_refuses_a_plain_http_url_on_the_field(world, settings):
    settings.WEBHOOKS_ALLOW_LOOPBACK = False
    web = Client()
    web.force_login(world.alfa_user)
    page = web.post(
        "/integracoes/webhooks/",
        {"url": "http://erp.alfa.example.com/ctr", "events": ["ctr.issued"]},
    )
    assert page.status_code == 400 and "Use https://" in page.content.decode()
