"""How many SQL statements one CTR issue sends: a count is behaviour, not a
timing. The path as the bench measures it (bench/p2_http.py): a transporter's token, an
Idempotency-Key, a webhook endpoint hearing every event, a known generator, the facility
named. A change that adds a round trip to every issue fails here and says which."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token

from ctr.models import CTR, CTREvent, CTRWaste
from tests.ctr_world import build_world, ctr_payload
from webhooks.models import Delivery, Endpoint, EventType

pytestmark = pytest.mark.usefixtures("frozen_today")

URL = "/api/v1/ctrs/"
# The token and its user (one SELECT); the key claimed; the CTR's reads (one SELECT); its
# number, row, waste lines, event and the webhook's outbox row (one statement); the response
# stored on the key; and the savepoints: the key's transaction (a savepoint and its release
# here, inside the test's transaction) and the one a refusal rolls back to (never released:
# the COMMIT ends it). 20 before the issue path was trimmed; 10 with the outbox row in a statement
# of its own and that savepoint released.
STATEMENTS = 8


def issuing_client(world) -> Client:
    token = Token.objects.create(user=world.alfa_user)
    return Client(headers={"Authorization": f"Token {token.key}"})


def bench_payload(world) -> str:
    """As bench/p2_http.py issues: no worksite, the facility named."""
    payload = ctr_payload(world, destination_facility=world.att.pk)
    del payload["worksite"]
    return json.dumps(payload)


def post(client: Client, body: str, key: str):
    return client.post(
        URL, body, content_type="application/json", secure=True, headers={"Idempotency-Key": key}
    )


@pytest.mark.django_db
def test_one_issue_with_a_key_and_a_webhook_sends_eight_statements():
    world = build_world()
    Endpoint.objects.create(
        transporter=world.alfa,
        url="https://webhooks.example.invalid/ctr",
        events=list(EventType.values),
        created_by=world.alfa_user,
    )
    client = issuing_client(world)
    body = bench_payload(world)
    # The first issue registers the generator and loads the process's webhook subscriptions:
    # what every later issue of the transporter finds done.
    assert post(client, body, "primeira").status_code == 201

    with CaptureQueriesContext(connection) as captured:
        response = post(client, body, "segunda")

    assert response.status_code == 201, response.content
    statements = [q["sql"].strip().split("\n")[0][:90] for q in captured.captured_queries]
    assert len(statements) == STATEMENTS, "\n".join(statements)
    ctr = CTR.objects.get(number=response.json()["number"])
    # All of it was written: the lines, the event, the outbox row.
    assert CTRWaste.objects.filter(ctr=ctr).count() == 1
    assert CTREvent.objects.filter(ctr=ctr, action="issue").count() == 1
    assert Delivery.objects.filter(ctr=ctr).count() == 1


@pytest.mark.django_db
def test_a_refused_issue_writes_nothing_and_its_key_keeps_the_refusal():
    """The savepoint of services.issue is gone under the API: a refusal still leaves no CTR,
    and its response is stored on the key (the key's own savepoint rolled the writes back)."""
    world = build_world()
    client = issuing_client(world)
    payload = json.loads(bench_payload(world))
    payload["vehicle_plate"] = "ZZZ9Z99"  # not the transporter's
    body = json.dumps(payload)

    first = post(client, body, "recusada")
    again = post(client, body, "recusada")

    assert first.status_code == 422, first.content
    assert (again.status_code, again.content) == (422, first.content)
    assert again["Idempotent-Replayed"] == "true"
    assert not CTR.objects.exists()
