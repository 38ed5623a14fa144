"""Races with real concurrent connections: HTTP clients against a live server, each request in
its own server thread and database connection."""

import json
import threading
import urllib.error
import urllib.request

import pytest
from rest_framework.authtoken.models import Token

from ctr.models import CTR, CTREvent
from tests.ctr_world import build_world, ctr_payload, make_user

pytestmark = pytest.mark.django_db(transaction=True)


def send(url: str, token: str, data: dict) -> tuple[int, object, bytes]:
    """POST as JSON over HTTP; (status, headers, raw body)."""
    request = urllib.request.Request(
        url,
        data=json.dumps(data).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Token {token}"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def call(url: str, token: str, data: dict) -> tuple[int, object]:
    """POST as JSON; (status, body), the body as text when it is not JSON (a 500 page)."""
    status, _, raw = send(url, token, data)
    try:
        return status, json.loads(raw or b"{}")
    except ValueError:
        return status, raw.decode(errors="replace")[:300]


def all_at_once(count: int, work) -> list:
    """Run `work(i)` in `count` threads released together by a barrier."""
    barrier = threading.Barrier(count)
    results = [None] * count

    def run(i):
        barrier.wait()
        results[i] = work(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return results


def test_twenty_clients_issuing_at_once_get_consecutive_unique_numbers(live_server):
    world = build_world()
    token = Token.objects.create(user=world.alfa_user).key
    payload = ctr_payload(world)

    results = all_at_once(20, lambda i: call(f"{live_server.url}/api/v1/ctrs/", token, payload))

    assert [status for status, _ in results] == [201] * 20, results
    numbers = sorted(body["number"] for _, body in results)
    assert numbers == [f"CTR-3518404-2026-{n:06d}" for n in range(1, 21)]
    assert CTR.objects.count() == 20


def test_two_operators_confirming_at_once_exactly_one_wins(live_server):
    world = build_world()
    alfa_token = Token.objects.create(user=world.alfa_user).key
    status, body = call(f"{live_server.url}/api/v1/ctrs/", alfa_token, ctr_payload(world))
    assert status == 201
    number = body["number"]
    second_operator = make_user("operador2", facility=world.att)
    tokens = [
        Token.objects.create(user=world.operator).key,
        Token.objects.create(user=second_operator).key,
    ]
    url = f"{live_server.url}/api/v1/ctrs/{number}/receive/"

    results = all_at_once(2, lambda i: call(url, tokens[i], {"received_volume_m3": "3"}))

    assert sorted(status for status, _ in results) == [200, 409]
    assert CTREvent.objects.filter(ctr__number=number, action="receive").count() == 1
    assert CTR.objects.get(number=number).status == "received"


def test_ten_syncs_of_one_provisional_ctr_at_once_issue_it_once(live_server, frozen_today):
    """One provisional CTR sent ten times at once (two tabs, a retry racing
    the first send, each under its own Idempotency-Key): one 201, and every other send gets the
    documented 409 naming the official number, never a 500."""
    import datetime

    from django.utils import timezone

    from tests.clock import FROZEN_NOW

    world = build_world()
    token = Token.objects.create(user=world.alfa_user).key
    departure = FROZEN_NOW - datetime.timedelta(hours=1)
    payload = ctr_payload(
        world,
        transport_date=timezone.localdate(departure).isoformat(),
        provisional_number="PROV-AB12-0042",
        provisional_departure_at=departure.isoformat(),
    )

    results = all_at_once(10, lambda i: call(f"{live_server.url}/api/v1/ctrs/", token, payload))

    statuses = sorted(status for status, _ in results)
    assert statuses == [201] + [409] * 9, results
    official = CTR.objects.get(provisional_number="PROV-AB12-0042").number
    for status, body in results:
        if status == 409:
            assert body["errors"][0]["campo"] == "provisional_number", body
            assert official in body["detail"], body
    assert CTR.objects.count() == 1
