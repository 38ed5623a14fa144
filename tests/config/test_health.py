"""/healthz and /readyz in-process (config/health.py): each readiness check failing for real
makes /readyz answer 503 naming it. The database out of reach is in test_observability_server
(a gunicorn pointed at a closed port)."""

from __future__ import annotations

import datetime

import pytest
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder
from django.test import Client
from django.utils import timezone

from webhooks.models import Delivery, DeliveryKind, DeliveryStatus

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def worker_and_scheduler_seen():
    """A platform whose worker and scheduler beat a moment ago (jobs/runner.py)."""
    from jobs import runner

    runner.beat("worker")
    runner.beat("scheduler")


def readyz():
    response = Client().get("/readyz")
    assert response["Content-Type"] == "application/json"
    return response.status_code, response.json()


def failing(body: dict) -> list[str]:
    return [name for name, check in body["checks"].items() if check["status"] != "ok"]


def test_healthz_answers_without_touching_the_database(django_assert_num_queries):
    with django_assert_num_queries(0):
        response = Client().get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}
    assert "no-cache" in response["Cache-Control"]


def test_ready_when_every_check_passes():
    status, body = readyz()
    assert status == 200, body
    assert body["status"] == "ok"
    assert set(body["checks"]) == {"database", "migrations", "outbox", "worker", "scheduler"}
    assert failing(body) == []


def test_an_unapplied_migration_makes_it_not_ready():
    """The migration state of a database one migration behind the code (the row of the last
    migration of webhooks removed, as before `migrate`; rolled back with the test)."""
    last = (
        MigrationRecorder.Migration.objects.filter(app="webhooks").order_by("-applied", "-id")
    ).first()
    last.delete()
    status, body = readyz()
    assert status == 503
    assert body["status"] == "falha" and failing(body) == ["migrations"]
    assert body["checks"]["migrations"]["pendentes"] == [f"webhooks.{last.name}"]


def pending(next_attempt_at, **kwargs) -> Delivery:
    return Delivery.objects.create(
        kind=DeliveryKind.EMAIL,
        event_type="teste",
        recipients=["ops@example.org"],
        occurred_at=next_attempt_at,
        next_attempt_at=next_attempt_at,
        **kwargs,
    )


def test_an_outbox_row_due_past_the_threshold_makes_it_not_ready(settings):
    settings.CTR_READY_OUTBOX_STUCK_MINUTES = 15
    pending(timezone.now() - datetime.timedelta(minutes=16))
    status, body = readyz()
    assert status == 503 and failing(body) == ["outbox"]
    outbox = body["checks"]["outbox"]
    assert outbox["atraso_segundos"] >= 16 * 60 and outbox["limite_segundos"] == 15 * 60
    # No recipient, subject or anything of the row itself: numbers about the queue only.
    assert "example.org" not in str(body)


def test_a_recent_or_retrying_outbox_row_is_not_stuck(settings):
    settings.CTR_READY_OUTBOX_STUCK_MINUTES = 15
    now = timezone.now()
    pending(now - datetime.timedelta(minutes=14))  # due a while, within the threshold
    pending(now + datetime.timedelta(hours=2), attempts=5)  # waiting for its backoff
    # Delivered and failed rows are history, however old.
    old = now - datetime.timedelta(days=3)
    pending(old, status=DeliveryStatus.DELIVERED)
    pending(old, status=DeliveryStatus.FAILED)
    status, body = readyz()
    assert status == 200, body


def test_a_worker_never_seen_and_a_scheduler_seen_too_long_ago_make_it_not_ready(settings):
    """The jobs app's checks (jobs/apps.py): the heartbeats the two processes write."""
    from jobs.models import Heartbeat

    settings.CTR_READY_PROCESS_SEEN_MINUTES = 5
    Heartbeat.objects.filter(role="worker").delete()
    Heartbeat.objects.filter(role="scheduler").update(
        last_seen=timezone.now() - datetime.timedelta(minutes=6)
    )
    status, body = readyz()
    assert status == 503 and failing(body) == ["worker", "scheduler"]
    assert body["checks"]["worker"]["detalhe"] == "O worker nunca foi visto."
    assert body["checks"]["scheduler"]["visto_ha_segundos"] >= 360


def test_probes_are_outside_the_rate_limits(settings, fresh_rate_limits):
    settings.CTR_RATE_LIMITS = {scope: "1/m" for scope in settings.CTR_RATE_LIMITS}
    for _ in range(3):
        assert Client().get("/healthz").status_code == 200
        assert Client().get("/readyz").status_code == 200


def test_readiness_reads_no_table_of_a_municipality():
    """Platform-level: the database, the migrations, the outbox and the heartbeats; nothing
    else (no CTR, no user, no municipality)."""
    connection.queries_log.clear()
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        assert readyz()[0] == 200
    tables = " ".join(q["sql"] for q in queries.captured_queries)
    assert "django_migrations" in tables and "webhooks_delivery" in tables
    for other in ("ctr_ctr", "auth_user", "pev_network_municipality", "django_session"):
        assert other not in tables
