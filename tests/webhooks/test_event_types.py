"""Where a new event is added (docs/architecture.md, "Onde acrescentar"), and that it is then
heard: a throwaway event type, of a CTR action and of a subject other than a CTR, delivered
through the real outbox and worker to a real HTTP receiver on loopback."""

from __future__ import annotations

import dataclasses

import pytest
from django.db import transaction
from django.utils import timezone

from ctr import closing, lifecycle
from ctr.models import CTRStatus
from tests.ctr_world import build_world, issue_hours_ago
from tests.webhooks.world import att_endpoint
from webhooks import delivery, outbox
from webhooks import models as webhook_models
from webhooks import services as webhooks
from webhooks.errors import WebhookError
from webhooks.models import Delivery, DeliveryStatus

pytestmark = pytest.mark.django_db

VISIT = lifecycle.Event("ctr.site_visited", "Visita de fiscalização registrada")
AUDIT = lifecycle.Event("facility.audited", "Área auditada")


@pytest.fixture
def world(frozen_today):
    return build_world()


def test_a_new_ctr_action_s_event_is_offered_and_delivered(world, receiver, monkeypatch):
    """A row added to ctr.lifecycle with an event: endpoints may subscribe to it, and the
    action's history event reaches the receiver, signed, with nothing changed in webhooks."""
    ctr = issue_hours_ago(world, 1)
    target = receiver()
    with pytest.raises(WebhookError):
        webhooks.register(world.alfa_user, target.url, [VISIT.name])
    row = dataclasses.replace(
        lifecycle.ACTIONS["cancel"],
        name="site_visit",
        label="registrar a visita de",
        participle="visitado",
        button="Registrar a visita",
        to_status=None,
        event=VISIT,
    )
    monkeypatch.setitem(lifecycle.ACTIONS, "site_visit", row)
    endpoint = webhooks.register(world.alfa_user, target.url, [VISIT.name])
    target.secret = endpoint.secret
    with transaction.atomic():
        closing.record_event(ctr, world.alfa_user, "site_visit", ctr.status, {})
    assert delivery.deliver_due() == {"delivered": 1}
    [received] = target.received
    assert received.signature_ok
    assert received.json["type"] == VISIT.name
    assert received.json["data"]["number"] == ctr.number
    assert received.json["data"]["status"] == CTRStatus.ISSUED


def test_an_event_of_another_subject_reaches_only_its_owner_s_endpoints(
    world, receiver, monkeypatch
):
    """An event about a facility (no CTR): listed in webhooks.models.SUBJECT_EVENTS and
    written by outbox.enqueue for the facility it concerns. The ATT's endpoint gets the data
    as given; Alfa's endpoint, subscribed to the same type, gets nothing of the ATT."""
    monkeypatch.setattr(webhook_models, "SUBJECT_EVENTS", [AUDIT])
    target, other = receiver(), receiver()
    endpoint = att_endpoint(world, target.url, events=[AUDIT.name])
    target.secret = endpoint.secret
    webhooks.register(world.alfa_user, other.url, [AUDIT.name])
    at = timezone.now()
    data = {"facility": world.att.pk, "name": world.att.name, "result": "conforme"}
    with transaction.atomic():
        written = outbox.enqueue(AUDIT.name, data, at, facility_ids=(world.att.pk,))
    assert written == 1
    assert delivery.deliver_due() == {"delivered": 1}
    assert other.received == []
    [received] = target.received
    assert received.signature_ok
    body = received.json
    assert body["type"] == AUDIT.name and body["data"] == data
    row = Delivery.objects.get()
    assert row.status == DeliveryStatus.DELIVERED and row.ctr_id is None
    assert body["id"] == str(row.event_id)
