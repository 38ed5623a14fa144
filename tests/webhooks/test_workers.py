"""Several workers at once: each due row is claimed by one of them (SELECT …
FOR UPDATE SKIP LOCKED), so every delivery goes out once, none twice."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from tests.ctr_world import build_world, issue_hours_ago
from tests.webhooks.world import alfa_endpoint
from webhooks import delivery
from webhooks.models import Delivery, DeliveryStatus

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("frozen_today")]


def test_two_workers_share_the_queue_and_send_each_row_once(receiver):
    world = build_world()
    # Each request is answered only when both workers' are in at once: each holds a row while
    # the other claims the next, which it can only by skipping the locked one.
    target = receiver(together=2)
    target.secret = alfa_endpoint(world, target.url).secret
    for _ in range(6):
        issue_hours_ago(world, 1)
    results = []

    def work():
        try:
            results.append(delivery.deliver_due(timeout=60))  # past the receiver's barrier
        finally:
            connection.close()

    workers = [threading.Thread(target=work) for _ in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=30)
    ids = [r.headers["X-CTR-Event-Id"] for r in target.received]
    assert len(ids) == 6 and len(set(ids)) == 6
    assert sum(r["delivered"] for r in results) == 6
    # Both took part: the second did not wait for the first's locked rows.
    assert all(r["delivered"] for r in results)
    assert set(Delivery.objects.values_list("status", flat=True)) == {DeliveryStatus.DELIVERED}
