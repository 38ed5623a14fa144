"""Deliveries to real HTTP receivers on loopback: signed, retried with
exponential backoff on the worker's clock, given up on a hanging receiver's timeout, and the
endpoint disabled by a 410 Gone."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.utils import timezone

from ctr import closing
from tests.ctr_world import build_world, issue_hours_ago
from tests.webhooks.receiver import verify
from tests.webhooks.world import alfa_endpoint, att_endpoint
from webhooks import delivery
from webhooks.models import Delivery, DeliveryStatus, EventType

pytestmark = pytest.mark.django_db

BASE = datetime.timedelta(seconds=60)  # settings.WEBHOOKS_BACKOFF_BASE_SECONDS


@pytest.fixture
def world(frozen_today):
    return build_world()


def test_a_receiver_that_fails_three_times_gets_it_the_fourth_with_the_backoff(world, receiver):
    target = receiver(statuses=[500, 503, 502, 200])
    endpoint = alfa_endpoint(world, target.url)
    target.secret = endpoint.secret
    ctr = issue_hours_ago(world, 1)
    row = Delivery.objects.get()
    t0 = row.next_attempt_at
    # Attempt n fails at t; the next is due base × 2^(n-1) later: +1 min, +2 min, +4 min.
    schedule = [t0, t0 + BASE, t0 + 3 * BASE, t0 + 7 * BASE]
    for n, due in enumerate(schedule, start=1):
        assert delivery.deliver_due(now=due - datetime.timedelta(seconds=1)) == {}
        assert delivery.deliver_due(now=due) == {"retry" if n < 4 else "delivered": 1}
        row.refresh_from_db()
        assert row.attempts == n
        if n < 4:
            assert row.status == DeliveryStatus.PENDING and row.next_attempt_at == schedule[n]
    assert row.status == DeliveryStatus.DELIVERED and row.delivered_at == schedule[3]
    assert [a.response_status for a in row.attempt_log.all()] == [500, 503, 502, 200]
    assert [a.response_body for a in row.attempt_log.all()][0] == "resposta 500"
    # Every try signed at its own time, the same event id and the same body each time.
    assert all(r.signature_ok for r in target.received)
    assert [r.timestamp for r in target.received] == [int(t.timestamp()) for t in schedule]
    assert {r.headers["X-CTR-Event-Id"] for r in target.received} == {str(row.event_id)}
    assert len({r.body for r in target.received}) == 1
    body = target.received[0].json
    assert body["id"] == str(row.event_id) and body["type"] == "ctr.issued"
    assert body["data"]["number"] == ctr.number and body["data"]["status"] == "issued"
    assert body["data"]["url"].endswith(f"/api/v1/ctrs/{ctr.number}/")


def test_a_hanging_receiver_is_given_up_at_the_timeout_and_retried(world, receiver):
    target = receiver(delay=2.0)
    alfa_endpoint(world, target.url)
    issue_hours_ago(world, 1)
    now = timezone.now()
    assert delivery.deliver_due(now=now, timeout=0.3) == {"retry": 1}
    row = Delivery.objects.get()
    attempt = row.attempt_log.get()
    assert attempt.response_status is None and "Tempo esgotado" in attempt.error
    assert attempt.duration_ms < 1500
    assert row.status == DeliveryStatus.PENDING and row.next_attempt_at == now + BASE


def test_a_410_gone_disables_the_endpoint(world, receiver):
    target = receiver(statuses=[410])
    endpoint = alfa_endpoint(world, target.url)
    issue_hours_ago(world, 1)
    assert delivery.deliver_due() == {"gone": 1}
    endpoint.refresh_from_db()
    assert not endpoint.active and "410" in endpoint.disabled_reason
    assert Delivery.objects.get().status == DeliveryStatus.FAILED
    # Events after it wait for the endpoint, which is not called again.
    issue_hours_ago(world, 1)
    assert delivery.deliver_due() == {}
    assert len(target.received) == 1


def test_out_of_attempts_it_fails(world, receiver, settings):
    settings.WEBHOOKS_MAX_ATTEMPTS = 2
    target = receiver(statuses=[500])
    alfa_endpoint(world, target.url)
    issue_hours_ago(world, 1)
    now = timezone.now()
    assert delivery.deliver_due(now=now) == {"retry": 1}
    assert delivery.deliver_due(now=now + BASE) == {"failed": 1}
    assert Delivery.objects.get().status == DeliveryStatus.FAILED


def test_the_backoff_stops_growing_at_the_cap(settings):
    settings.WEBHOOKS_BACKOFF_CAP_SECONDS = 600
    assert [delivery.backoff(n).total_seconds() for n in range(1, 7)] == [
        60,
        120,
        240,
        480,
        600,
        600,
    ]


def test_a_facility_hears_the_loads_to_it_and_a_transporter_only_its_own(world, receiver):
    att = receiver()
    alfa = receiver()
    att_endpoint(world, att.url, events=[EventType.RECEIVED, EventType.ISSUED])
    alfa_endpoint(world, alfa.url, events=[EventType.RECEIVED])
    ctr = issue_hours_ago(world, 1)
    closing.receive(ctr, world.operator, Decimal("3"))
    delivery.deliver_due()
    assert [r.json["type"] for r in att.received] == ["ctr.issued", "ctr.received"]
    assert [r.json["type"] for r in alfa.received] == ["ctr.received"]
    # One event, one id, whichever endpoint hears it.
    assert att.received[1].json["id"] == alfa.received[0].json["id"]


def test_the_command_delivers_one_pass(world, receiver, capsys):
    target = receiver()
    alfa_endpoint(world, target.url)
    issue_hours_ago(world, 1)
    call_command("deliver_webhooks")
    assert "delivered: 1" in capsys.readouterr().out
    assert len(target.received) == 1


def test_a_replay_older_than_the_window_is_refused_by_the_receiver():
    body = b'{"id":"x"}'
    header = delivery.signature("whsec_test", 1_000_000, body)
    assert verify("whsec_test", header, body, now=1_000_000 + 299)
    assert not verify("whsec_test", header, body, now=1_000_000 + 301)
    assert not verify("whsec_other", header, body, now=1_000_000)
