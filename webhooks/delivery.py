"""Sending the outbox (`manage.py deliver_webhooks`): signed webhooks and e-mails, retried with
exponential backoff, safe to run in several processes at once.

Each due row is claimed with SELECT … FOR UPDATE SKIP LOCKED and sent inside that transaction:
another worker skips it, and a worker that dies mid-request rolls back, leaving the row due
again (a receiver may then see a delivery twice: the event id is what it de-duplicates on).

The signature (docs/api.md): `X-CTR-Signature: t=<unix time>,v1=<hex HMAC-SHA256 of
"<t>.<body>" keyed with the endpoint's secret>`; the time is the attempt's, so a receiver
refuses a replay older than its window (we advise 5 minutes)."""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import hmac
import http.client
import json
import socket
import ssl
import time
from collections import Counter
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from config import mail
from config.letterhead import Letterhead

from . import targets
from .emails import LETTERHEAD_KEY
from .errors import WebhookError
from .models import Attempt, Delivery, DeliveryKind, DeliveryStatus

USER_AGENT = "CTR-Webhooks/1"
# What is kept of a receiver's answer: enough to read an error message.
BODY_KEPT = 1000


def backoff(attempts: int) -> datetime.timedelta:
    """The wait after the `attempts`-th failure: base × 2^(attempts-1), at most the cap."""
    base = settings.WEBHOOKS_BACKOFF_BASE_SECONDS
    cap = settings.WEBHOOKS_BACKOFF_CAP_SECONDS
    return datetime.timedelta(seconds=min(cap, base * 2 ** (attempts - 1)))


def payload(delivery: Delivery) -> dict:
    """The body of a webhook: the event, the CTR's number and status at the event, a link; of
    an event about another subject (outbox.enqueue), the data its app gave."""
    if delivery.ctr_id is None:
        data = dict(delivery.context or {})
    else:
        number = delivery.ctr.number
        data = {
            "number": number,
            "status": delivery.ctr_status,
            "url": mail.absolute(reverse("ctr-detail", args=[number])),
        }
    return {
        "id": str(delivery.event_id),
        "type": delivery.event_type,
        "occurred_at": delivery.occurred_at.astimezone(datetime.UTC).isoformat(),
        "data": data,
    }


def body_of(delivery: Delivery) -> bytes:
    # Compact and key-sorted: the same bytes on every retry of one delivery.
    return json.dumps(
        payload(delivery), ensure_ascii=False, sort_keys=True, separators=(",", ":")
    ).encode()


def signature(secret: str, timestamp: int, body: bytes) -> str:
    signed = str(timestamp).encode() + b"." + body
    digest = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


@dataclasses.dataclass
class Outcome:
    status: int | None = None
    body: str = ""
    error: str = ""
    duration_ms: int = 0

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def post(url: str, body: bytes, headers: dict, timeout: float) -> Outcome:
    """POST `body` to `url`, connecting to the address targets.resolve checked (no second DNS
    lookup), within `timeout` seconds in all, following no redirect."""
    started = time.monotonic()
    deadline = started + timeout
    outcome = Outcome()
    connection = None

    def remaining() -> float:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        return left

    try:
        parts = urlsplit(url)
        https = parts.scheme == "https"
        port = parts.port or (443 if https else 80)
        address = targets.resolve(parts.hostname, port)
        if https:
            connection = http.client.HTTPSConnection(
                parts.hostname, port, timeout=remaining(), context=ssl.create_default_context()
            )
        else:
            connection = http.client.HTTPConnection(parts.hostname, port, timeout=remaining())
        # The checked address, with the URL's host name for TLS (SNI, certificate) and Host.
        connection._create_connection = lambda _, timeout, source=None: socket.create_connection(
            (address, port), timeout, source
        )
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        connection.request("POST", path, body=body, headers=headers)
        connection.sock.settimeout(remaining())
        response = connection.getresponse()
        outcome.status = response.status
        # The socket keeps the time left for the body (http.client may have let go of it).
        outcome.body = response.read(BODY_KEPT).decode("utf-8", "replace")
    except WebhookError as refused:
        outcome.error = refused.message
    except TimeoutError:
        outcome.error = f"Tempo esgotado: sem resposta em {timeout:g} s."
    except (OSError, http.client.HTTPException) as failure:
        outcome.error = f"Falha de conexão: {type(failure).__name__}: {failure}"[:300]
    finally:
        if connection is not None:
            connection.close()
        outcome.duration_ms = round((time.monotonic() - started) * 1000)
    return outcome


def send_webhook(delivery: Delivery, now: datetime.datetime, timeout: float) -> Outcome:
    body = body_of(delivery)
    headers = {
        "Content-Type": "application/json; charset=utf-8",
        "User-Agent": USER_AGENT,
        "X-CTR-Event-Id": str(delivery.event_id),
        "X-CTR-Event-Type": delivery.event_type,
        "X-CTR-Signature": signature(delivery.endpoint.secret, int(now.timestamp()), body),
    }
    return post(delivery.endpoint.url, body, headers, timeout)


def send_email(delivery: Delivery) -> Outcome:
    started = time.monotonic()
    outcome = Outcome()
    context = dict(delivery.context or {})
    # A row written before municipal letterheads has none: the platform's signature.
    letterhead = Letterhead.from_dict(context.pop(LETTERHEAD_KEY, None))
    message = mail.build(
        delivery.recipients, delivery.subject, delivery.template, context, letterhead
    )
    try:
        if message is not None:
            message.send()
        outcome.status = 250  # the server took it (SMTP's "OK")
    except Exception as failure:  # smtplib's errors, a refused connection: retried
        outcome.error = f"Falha no envio do e-mail: {type(failure).__name__}: {failure}"[:300]
    outcome.duration_ms = round((time.monotonic() - started) * 1000)
    return outcome


def _claim(now: datetime.datetime) -> Delivery | None:
    return (
        Delivery.objects.select_for_update(skip_locked=True, of=("self",))
        .filter(status=DeliveryStatus.PENDING, next_attempt_at__lte=now)
        .filter(Q(kind=DeliveryKind.EMAIL) | Q(endpoint__active=True))
        .select_related("endpoint", "ctr")
        .order_by("next_attempt_at", "pk")
        .first()
    )


def attempt(delivery: Delivery, now: datetime.datetime, timeout: float) -> str:
    """One try of a claimed row: its Attempt, then delivered, retried later, or failed.
    Returns what happened ("delivered", "retry", "failed", "gone")."""
    if delivery.kind == DeliveryKind.EMAIL:
        outcome = send_email(delivery)
    else:
        outcome = send_webhook(delivery, now, timeout)
    number = delivery.attempt_log.count() + 1
    Attempt.objects.create(
        delivery=delivery,
        number=number,
        at=now,
        duration_ms=outcome.duration_ms,
        response_status=outcome.status if delivery.kind == DeliveryKind.WEBHOOK else None,
        response_body=outcome.body,
        error=outcome.error,
        ok=outcome.ok,
    )
    delivery.attempts += 1
    delivery.last_attempt_at = now
    if outcome.ok:
        delivery.status, delivery.delivered_at, result = DeliveryStatus.DELIVERED, now, "delivered"
    elif outcome.status == 410:
        # 410 Gone: the receiver says the address is gone for good. Its other rows wait.
        endpoint = delivery.endpoint
        endpoint.active = False
        endpoint.disabled_at = now
        endpoint.disabled_reason = (
            f"O endereço respondeu 410 (Gone) em {timezone.localtime(now):%d/%m/%Y %H:%M}."
        )
        endpoint.save(update_fields=["active", "disabled_at", "disabled_reason"])
        delivery.status, result = DeliveryStatus.FAILED, "gone"
    elif delivery.attempts >= settings.WEBHOOKS_MAX_ATTEMPTS:
        delivery.status, result = DeliveryStatus.FAILED, "failed"
    else:
        delivery.next_attempt_at = now + backoff(delivery.attempts)
        result = "retry"
    delivery.save(
        update_fields=["status", "attempts", "last_attempt_at", "delivered_at", "next_attempt_at"]
    )
    return result


def deliver_due(
    now: datetime.datetime | None = None, limit: int = 100, timeout: float | None = None
) -> Counter:
    """One pass: up to `limit` rows due at `now` (the clock unless told), each in its own
    transaction. Returns how many ended how."""
    now = now or timezone.now()
    timeout = settings.WEBHOOKS_TIMEOUT_SECONDS if timeout is None else timeout
    done: Counter = Counter()
    for _ in range(limit):
        with transaction.atomic():
            delivery = _claim(now)
            if delivery is None:
                break
            done[attempt(delivery, now, timeout)] += 1
    return done
