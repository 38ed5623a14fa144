"""Safe retries: the Idempotency-Key header on issue, receive, refuse and
cancel (ctr/idempotency.py). The first tests go through Django's test client; the races run
real HTTP against the live server, each request in its own thread and database connection."""

from __future__ import annotations

import datetime
import json
import os
import signal
import threading
import time
import urllib.error
import urllib.request
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import transaction
from django.db.models import F
from django.test import override_settings
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from ctr import idempotency, services
from ctr.models import CTR, CTREvent, IdempotencyKey
from tests.config import test_faults as faults
from tests.ctr.test_ctr_races import all_at_once
from tests.ctr_world import build_world, ctr_payload, make_user
from tests.races import wait_until_blocked

pytestmark = pytest.mark.usefixtures("frozen_today")

URL = "/api/v1/ctrs/"


def client_of(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def post(client, url: str, body: dict, key: str | None = None):
    headers = {} if key is None else {"Idempotency-Key": key}
    return client.post(url, body, format="json", headers=headers)


def action_url(number: str, action: str) -> str:
    return f"{URL}{number}/{action}/"


# --- issue -------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_retry_with_the_same_key_and_body_gets_the_first_response_and_no_second_ctr():
    world = build_world()
    client = client_of(world.alfa_user)
    payload = ctr_payload(world)

    first = post(client, URL, payload, "3f1c-viagem-1")
    again = post(client, URL, payload, "3f1c-viagem-1")

    assert first.status_code == again.status_code == 201
    assert again.content == first.content
    assert again["Content-Type"] == first["Content-Type"]
    assert again["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first
    assert CTR.objects.count() == 1
    assert again.json()["number"] == CTR.objects.get().number


@pytest.mark.django_db
def test_the_same_json_with_its_keys_in_another_order_is_the_same_body():
    world = build_world()
    client = client_of(world.alfa_user)
    payload = ctr_payload(world)
    reordered = dict(reversed(list(payload.items())))

    first = post(client, URL, payload, "ordem")
    again = client.post(
        URL,
        json.dumps(reordered, indent=2),
        content_type="application/json",
        headers={"Idempotency-Key": "ordem"},
    )

    assert again.status_code == 201
    assert again.content == first.content
    assert CTR.objects.count() == 1


@pytest.mark.django_db
def test_the_same_key_with_another_body_is_a_422_in_portuguese_and_issues_nothing():
    world = build_world()
    client = client_of(world.alfa_user)
    post(client, URL, ctr_payload(world), "chave-1")
    other = ctr_payload(world, waste=[{"class": "A", "volume_m3": "4"}])

    response = post(client, URL, other, "chave-1")

    assert response.status_code == 422
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert "já foi usada com outro corpo" in body["detail"]
    assert body["errors"][0]["campo"] == "Idempotency-Key"
    assert body["instance"] == URL
    assert CTR.objects.count() == 1


@pytest.mark.django_db
def test_a_key_used_for_an_issue_cannot_be_used_for_a_cancellation():
    world = build_world()
    client = client_of(world.alfa_user)
    number = post(client, URL, ctr_payload(world), "uma-so").json()["number"]

    response = post(client, action_url(number, "cancel"), {"reason": "Obra adiada"}, "uma-so")

    assert response.status_code == 422
    assert "já foi usada em outra operação (POST /api/v1/ctrs/)" in response.json()["detail"]
    assert CTR.objects.get().status == "issued"


@pytest.mark.django_db
def test_one_users_key_never_replays_another_users_response():
    world = build_world()
    colleague = make_user("alfa2", transporter=world.alfa)
    payload = ctr_payload(world)

    mine = post(client_of(world.alfa_user), URL, payload, "mesma-chave")
    theirs = post(client_of(colleague), URL, payload, "mesma-chave")

    assert mine.status_code == theirs.status_code == 201
    assert "Idempotent-Replayed" not in theirs
    assert mine.json()["number"] != theirs.json()["number"]
    assert CTR.objects.count() == 2


@pytest.mark.django_db
def test_without_a_key_every_request_runs():
    world = build_world()
    client = client_of(world.alfa_user)

    post(client, URL, ctr_payload(world))
    post(client, URL, ctr_payload(world))

    assert CTR.objects.count() == 2
    assert not IdempotencyKey.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("key", "says"),
    [
        ("", "está vazio"),
        ("   ", "está vazio"),
        ('""', "está vazio"),
        ("k" * 256, "tem 256 caracteres; o máximo é 255"),
        ("chave\x01", "ASCII visíveis"),
        ("ação", "ASCII visíveis"),
    ],
)
def test_a_malformed_key_is_a_400_in_portuguese_and_nothing_runs(key, says):
    world = build_world()
    client = client_of(world.alfa_user)

    response = post(client, URL, ctr_payload(world), key)

    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert says in response.json()["detail"]
    assert response.json()["errors"][0]["campo"] == "Idempotency-Key"
    assert not CTR.objects.exists()
    assert not IdempotencyKey.objects.exists()


@pytest.mark.django_db
def test_a_key_of_255_characters_is_taken_and_the_quoted_form_is_the_same_key():
    world = build_world()
    client = client_of(world.alfa_user)
    key = "k" * 255

    first = post(client, URL, ctr_payload(world), key)
    quoted = post(client, URL, ctr_payload(world), f'"{key}"')

    assert first.status_code == quoted.status_code == 201
    assert quoted["Idempotent-Replayed"] == "true"
    assert IdempotencyKey.objects.get().key == key


@pytest.mark.django_db
def test_a_refusal_by_the_rules_is_stored_and_replayed_and_a_corrected_body_needs_a_new_key():
    world = build_world()
    client = client_of(world.alfa_user)
    # 3 m³ at a PEV: above the small-volume limit (art. 12 §1-2), a 422 of the rules.
    refused = ctr_payload(world, facility=world.pev)

    first = post(client, URL, refused, "pev-1")
    again = post(client, URL, refused, "pev-1")
    corrected = post(client, URL, ctr_payload(world), "pev-1")

    assert first.status_code == again.status_code == 422
    assert again.content == first.content
    assert again["Idempotent-Replayed"] == "true"
    assert corrected.status_code == 422
    assert "já foi usada com outro corpo" in corrected.json()["detail"]
    assert post(client, URL, ctr_payload(world), "pev-2").status_code == 201
    assert CTR.objects.count() == 1


@pytest.mark.django_db
def test_a_server_error_is_not_stored_so_the_retry_runs(monkeypatch):
    world = build_world()
    client = client_of(world.alfa_user)
    client.raise_request_exception = False
    issue = services.issue

    def broken(*args, **kwargs):
        issue(*args, **kwargs)  # the CTR is written, then the process fails
        raise RuntimeError("falha simulada")

    monkeypatch.setattr(services, "issue", broken)
    failed = post(client, URL, ctr_payload(world), "depois-da-falha")
    monkeypatch.setattr(services, "issue", issue)
    retried = post(client, URL, ctr_payload(world), "depois-da-falha")

    assert failed.status_code == 500
    assert retried.status_code == 201
    assert "Idempotent-Replayed" not in retried
    assert CTR.objects.count() == 1  # the failed request's CTR went with its key
    assert retried.json()["number"].endswith("-000001")


@pytest.mark.django_db
def test_a_key_older_than_its_lifetime_is_free_again():
    world = build_world()
    client = client_of(world.alfa_user)
    post(client, URL, ctr_payload(world), "ontem")
    IdempotencyKey.objects.update(
        created_at=F("created_at") - datetime.timedelta(hours=24, seconds=1)
    )

    later = post(client, URL, ctr_payload(world, waste=[{"class": "A", "volume_m3": "2"}]), "ontem")

    assert later.status_code == 201
    assert CTR.objects.count() == 2
    assert IdempotencyKey.objects.get().fingerprint == idempotency.body_fingerprint(
        ctr_payload(world, waste=[{"class": "A", "volume_m3": "2"}])
    )


@pytest.mark.django_db
def test_a_key_just_inside_its_lifetime_still_replays():
    world = build_world()
    client = client_of(world.alfa_user)
    post(client, URL, ctr_payload(world), "quase")
    IdempotencyKey.objects.update(
        created_at=F("created_at") - datetime.timedelta(hours=23, minutes=59)
    )

    again = post(client, URL, ctr_payload(world), "quase")

    assert again["Idempotent-Replayed"] == "true"
    assert CTR.objects.count() == 1


@pytest.mark.django_db
def test_the_purge_deletes_only_the_keys_past_their_lifetime():
    world = build_world()
    client = client_of(world.alfa_user)
    post(client, URL, ctr_payload(world), "velha")
    IdempotencyKey.objects.update(created_at=timezone.now() - datetime.timedelta(hours=25))
    post(client, URL, ctr_payload(world), "nova")
    out = StringIO()

    call_command("purge_idempotency_keys", "--dry-run", stdout=out)
    assert IdempotencyKey.objects.count() == 2
    call_command("purge_idempotency_keys", stdout=out)

    assert list(IdempotencyKey.objects.values_list("key", flat=True)) == ["nova"]
    assert "1 chave(s) com mais de 24 h seriam apagadas." in out.getvalue()
    assert "1 chave(s) com mais de 24 h apagadas." in out.getvalue()
    with pytest.raises(CommandError, match="ao menos 24"):
        call_command("purge_idempotency_keys", "--hours", "12")


# --- reception, refusal, cancellation ----------------------------------------------------------


@pytest.mark.django_db
def test_a_retried_reception_replays_the_first_and_records_one_event():
    world = build_world()
    number = post(client_of(world.alfa_user), URL, ctr_payload(world)).json()["number"]
    operator = client_of(world.operator)
    url = action_url(number, "receive")

    first = post(operator, url, {"received_volume_m3": "3"}, "recebe-1")
    again = post(operator, url, {"received_volume_m3": "3"}, "recebe-1")
    without_key = post(operator, url, {"received_volume_m3": "3"})

    assert first.status_code == again.status_code == 200
    assert again.content == first.content
    assert without_key.status_code == 409  # the CTR was received: a new request is refused
    assert CTREvent.objects.filter(ctr__number=number, action="receive").count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize(("action", "who"), [("refuse", "operator"), ("cancel", "alfa_user")])
def test_a_retried_refusal_or_cancellation_gets_its_200_again_not_a_409(action, who):
    world = build_world()
    number = post(client_of(world.alfa_user), URL, ctr_payload(world)).json()["number"]
    client = client_of(getattr(world, who))
    url = action_url(number, action)

    first = post(client, url, {"reason": "Carga misturada"}, f"{action}-1")
    again = post(client, url, {"reason": "Carga misturada"}, f"{action}-1")
    other = post(client, url, {"reason": "Outro motivo"}, f"{action}-1")

    assert first.status_code == again.status_code == 200
    assert again.content == first.content
    assert other.status_code == 422
    assert CTREvent.objects.filter(ctr__number=number, action=action).count() == 1


@pytest.mark.django_db
def test_the_schema_declares_the_header_and_its_statuses_on_the_four_operations():
    schema = APIClient().get("/api/v1/schema/", {"format": "json"}).json()
    operations = {
        "/api/v1/ctrs/": "post",
        "/api/v1/ctrs/{number}/receive/": "post",
        "/api/v1/ctrs/{number}/refuse/": "post",
        "/api/v1/ctrs/{number}/cancel/": "post",
    }
    for path, method in operations.items():
        operation = schema["paths"][path][method]
        (header,) = [p for p in operation["parameters"] if p["name"] == "Idempotency-Key"]
        assert header["in"] == "header" and header["schema"]["maxLength"] == 255
        for code in ("400", "409", "422"):
            assert "Idempotency-Key" in operation["responses"][code]["description"], (path, code)
        success = "201" if path == "/api/v1/ctrs/" else "200"
        assert "Idempotent-Replayed" in operation["responses"][success]["headers"]
    unrelated = schema["paths"]["/api/v1/vehicles/"]["post"]
    assert all(p["name"] != "Idempotency-Key" for p in unrelated.get("parameters", []))


# --- races, over real HTTP ---------------------------------------------------------------------


def call(
    url: str, token: str, data: dict, key: str, timeout: float = 60
) -> tuple[int, bytes, dict]:
    """POST as JSON with the key: (status, raw body, headers)."""
    request = urllib.request.Request(
        url,
        data=json.dumps(data).encode(),
        headers={
            "Content-Type": "application/json",
            "Authorization": f"Token {token}",
            "Idempotency-Key": key,
        },
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, error.read(), dict(error.headers)


@pytest.mark.django_db(transaction=True)
def test_twenty_concurrent_retries_with_one_key_issue_one_ctr_and_get_twenty_identical_answers(
    live_server,
):
    world = build_world()
    token = Token.objects.create(user=world.alfa_user).key
    payload = ctr_payload(world)
    url = f"{live_server.url}{URL}"

    results = all_at_once(20, lambda i: call(url, token, payload, "rede-fraca-1"))

    assert [status for status, _, _ in results] == [201] * 20, results
    assert len({body for _, body, _ in results}) == 1
    replayed = [headers.get("Idempotent-Replayed") for _, _, headers in results]
    assert replayed.count("true") == 19 and replayed.count(None) == 1
    assert CTR.objects.count() == 1
    assert json.loads(results[0][1])["number"] == CTR.objects.get().number
    assert IdempotencyKey.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_twenty_concurrent_receptions_with_one_key_receive_once(live_server):
    world = build_world()
    alfa = Token.objects.create(user=world.alfa_user).key
    operator = Token.objects.create(user=world.operator).key
    status, body, _ = call(f"{live_server.url}{URL}", alfa, ctr_payload(world), "emite")
    number = json.loads(body)["number"]
    url = f"{live_server.url}{action_url(number, 'receive')}"

    results = all_at_once(20, lambda i: call(url, operator, {"received_volume_m3": "3"}, "r-1"))

    assert [status for status, _, _ in results] == [200] * 20, results
    assert len({body for _, body, _ in results}) == 1
    assert CTREvent.objects.filter(ctr__number=number, action="receive").count() == 1


def hold_key(user, key: str, path: str = URL) -> int:
    """The key's row, inserted in the caller's open transaction: a first request in flight."""
    record = idempotency.claim(user.pk, key, "POST", path, "x" * 64, timezone.now())
    assert record is not None
    return record


@pytest.mark.django_db(transaction=True)
def test_a_retry_while_the_first_request_runs_past_the_timeout_is_a_409_in_portuguese(
    live_server,
):
    world = build_world()
    token = Token.objects.create(user=world.alfa_user).key
    with override_settings(CTR_REQUEST_STATEMENT_TIMEOUT_MS=400), transaction.atomic():
        hold_key(world.alfa_user, "em-andamento")
        status, body, headers = call(
            f"{live_server.url}{URL}", token, ctr_payload(world), "em-andamento"
        )
        transaction.set_rollback(True)

    assert status == 409
    assert headers["Content-Type"] == "application/problem+json"
    assert headers["Retry-After"] == "2"
    assert "ainda está em andamento" in json.loads(body)["detail"]
    assert not CTR.objects.exists()
    assert not IdempotencyKey.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_retry_waits_for_a_first_request_that_dies_and_then_runs_itself(live_server):
    world = build_world()
    token = Token.objects.create(user=world.alfa_user).key
    results = []
    with transaction.atomic():
        hold_key(world.alfa_user, "o-primeiro-caiu")
        waiting = threading.Thread(
            target=lambda: results.append(
                call(f"{live_server.url}{URL}", token, ctr_payload(world), "o-primeiro-caiu")
            )
        )
        waiting.start()
        wait_until_blocked([waiting])  # on the first request's row, held here
        assert not results
        transaction.set_rollback(True)  # the first request's process dies: nothing committed
    waiting.join(timeout=60)

    [(status, body, headers)] = results
    assert status == 201
    assert "Idempotent-Replayed" not in headers
    assert CTR.objects.get().number == json.loads(body)["number"]
    assert IdempotencyKey.objects.get().status == 201


# --- several processes: gunicorn with two workers on a PostgreSQL of its own --------------------
# The fixtures of tests/config/test_faults.py: its private server (statement timeout 2 s) with a
# small world, served by gunicorn with 2 worker processes of 4 threads each.
server = faults.server
live = faults.live


@faults.needs_postgres
def test_twenty_retries_across_gunicorn_workers_issue_one_ctr(live):
    payload = faults.new_generator_payload(live)
    url = f"{live.url}{URL}"
    before = faults.database_state(live.pg)["ctr_ctr"][0]

    results = all_at_once(20, lambda i: call(url, live.token, payload, "dois-processos"))

    assert [status for status, _, _ in results] == [201] * 20, results
    assert len({body for _, body, _ in results}) == 1
    assert faults.database_state(live.pg)["ctr_ctr"][0] == before + 1


@faults.needs_postgres
def test_a_retry_during_a_worker_killed_mid_issue_waits_for_it_and_issues_once(live):
    payload = faults.new_generator_payload(live)
    url = f"{live.url}{URL}"
    before = faults.database_state(live.pg)
    lock = faults.locked_sequence(live)  # the issue waits for its number, its key row inserted
    first, retry = [], []

    def send(outcome: list) -> None:
        try:
            outcome.append(call(url, live.token, payload, "morreu-no-meio", timeout=30))
        except OSError as exc:
            outcome.append(exc)

    sending = threading.Thread(target=send, args=(first,))
    sending.start()
    retrying = threading.Thread(target=send, args=(retry,))
    try:
        backend, worker = faults.backend_waiting_on_a_lock(live.pg)
        os.kill(worker, signal.SIGKILL)
        sending.join(timeout=30)
        # The dead worker's backend still holds the key's row: the retry queues on it.
        retrying.start()
        deadline = time.monotonic() + 1.5  # within the private server's 2 s timeout
        while faults.waiting_on_locks(live.pg) < 2:
            assert time.monotonic() < deadline, "a repetição não esperou pela primeira"
            time.sleep(0.02)
    finally:
        lock.rollback()  # the orphaned backend gets its number, finds its client gone, rolls back
        lock.close()
    retrying.join(timeout=30)

    assert len(first) == 1 and isinstance(first[0], OSError), first
    [(status, body, headers)] = retry
    assert status == 201, body
    assert "Idempotent-Replayed" not in headers
    after = faults.database_state(live.pg)
    assert after["ctr_ctr"][0] == before["ctr_ctr"][0] + 1
    assert after["ctr_idempotencykey"][0] == before["ctr_idempotencykey"][0] + 1
    number = json.loads(body)["number"]
    assert faults.assert_no_partial_ctr(live.pg, {number}) >= 1
    again = call(url, live.token, payload, "morreu-no-meio")
    assert (again[0], again[1], again[2]["Idempotent-Replayed"]) == (201, body, "true")
