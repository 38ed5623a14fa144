"""/metrics in-process (config/metrics.py): scraped with prometheus-client's own parser after
real requests, issues, receptions, refusals and failed logins, the values moved as they
should. Across gunicorn's worker processes: test_observability_server."""

from __future__ import annotations

import datetime

import pytest
from django.test import Client
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from tests.ctr.test_ctr_api import client_for
from tests.ctr_world import build_world, ctr_payload, large_generator_site
from webhooks.models import Delivery, DeliveryKind

pytestmark = pytest.mark.django_db
TOKEN = "segredo-das-metricas"


@pytest.fixture
def world():
    return build_world()


@pytest.fixture
def token(settings):
    settings.CTR_METRICS_TOKEN = TOKEN
    settings.CTR_METRICS_ALLOWED_NETWORKS = []
    return TOKEN


def scrape_text() -> str:
    response = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain")
    return response.content.decode()


def scrape() -> dict[tuple[str, tuple], float]:
    """{(sample name, sorted labels): value} of every sample."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(scrape_text())
        for sample in family.samples
    }


def value(samples, name: str, **labels) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_without_a_token_or_network_the_endpoint_does_not_exist(settings):
    settings.CTR_METRICS_TOKEN = ""
    settings.CTR_METRICS_ALLOWED_NETWORKS = []
    assert Client().get("/metrics").status_code == 404
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 404


def test_a_wrong_or_missing_token_is_refused(token):
    assert Client().get("/metrics").status_code == 401
    wrong = Client().get("/metrics", HTTP_AUTHORIZATION="Bearer outro")
    assert wrong.status_code == 401 and wrong["WWW-Authenticate"].startswith("Bearer")
    assert Client().get("/metrics", HTTP_AUTHORIZATION=f"Token {TOKEN}").status_code == 401
    assert "ctr_http_requests_total" in scrape_text()


def test_a_listed_network_needs_no_token(settings):
    settings.CTR_METRICS_TOKEN = ""
    settings.CTR_METRICS_ALLOWED_NETWORKS = ["10.0.0.0/8"]
    assert Client(REMOTE_ADDR="10.1.2.3").get("/metrics").status_code == 200
    assert Client(REMOTE_ADDR="192.168.0.9").get("/metrics").status_code == 401


def test_issues_receptions_refusals_findings_and_requests_are_counted(
    world, token, django_capture_on_commit_callbacks
):
    before = scrape()
    site = large_generator_site(world)
    with django_capture_on_commit_callbacks(execute=True):
        plain = client_for(world.alfa_user).post("/api/v1/ctrs/", ctr_payload(world), format="json")
        payload = ctr_payload(world, worksite_id=site.pk)
        del payload["generator"], payload["worksite"]
        # Two warnings NOT_IN_GENERATOR_PLAN (transporter and destination not in its PGRCC).
        warned = client_for(world.alfa_user).post("/api/v1/ctrs/", payload, format="json")
        third = client_for(world.alfa_user).post("/api/v1/ctrs/", ctr_payload(world), format="json")
        assert {plain.status_code, warned.status_code, third.status_code} == {201}
        number = plain.json()["number"]
        received = client_for(world.operator).post(
            f"/api/v1/ctrs/{number}/receive/", {"received_volume_m3": "3"}, format="json"
        )
        assert received.status_code == 200, received.content
        refused = client_for(world.operator).post(
            f"/api/v1/ctrs/{third.json()['number']}/refuse/", {"reason": "lixo"}, format="json"
        )
        assert refused.status_code == 200, refused.content
    after = scrape()

    def moved(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    town = world.town.ibge_code
    assert moved("ctr_ctrs_total", municipality=town, event="issued") == 3
    assert moved("ctr_ctrs_total", municipality=town, event="received") == 1
    assert moved("ctr_ctrs_total", municipality=town, event="refused") == 1
    assert moved("ctr_findings_total", rule="NOT_IN_GENERATOR_PLAN") == 2
    # Requests by the URL pattern's name, never the raw path with the CTR's number.
    receive = "ctr-receive"
    assert moved("ctr_http_requests_total", route=receive, method="POST", status="200") == 1
    assert moved("ctr_http_requests_total", route="ctr-list", method="POST", status="201") == 3
    assert (
        moved("ctr_http_request_duration_seconds_count", route=receive, method="POST", status="200")
        == 1
    )
    assert number not in scrape_text()


def test_a_rolled_back_issue_is_not_counted(world, token):
    """Counted on commit: in a transaction that never commits, nothing moves."""
    before = scrape()
    assert (
        client_for(world.alfa_user)
        .post("/api/v1/ctrs/", ctr_payload(world), format="json")
        .status_code
        == 201
    )
    after = scrape()
    labels = {"municipality": world.town.ibge_code, "event": "issued"}
    assert value(after, "ctr_ctrs_total", **labels) == value(before, "ctr_ctrs_total", **labels)


def test_unmatched_paths_share_one_route(token):
    before = scrape()
    for path in ("/nada/1/", "/nada/2/", "/wp-admin/x.php"):
        assert Client().get(path).status_code == 404
    after = scrape()
    labels = {"route": "(nenhuma)", "method": "GET", "status": "404"}
    moved = value(after, "ctr_http_requests_total", **labels) - value(
        before, "ctr_http_requests_total", **labels
    )
    assert moved == 3 and "/nada/" not in scrape_text()


def test_login_failures_are_counted_by_channel(world, token, fresh_rate_limits):
    before = scrape()
    assert Client().post("/entrar/", {"username": "alfa", "password": "errada"}).status_code == 200
    api = Client().post("/api/v1/auth/token/", {"username": "alfa", "password": "errada"})
    assert api.status_code == 400
    after = scrape()
    for channel in ("web", "api"):
        moved = value(after, "ctr_login_failures_total", channel=channel) - value(
            before, "ctr_login_failures_total", channel=channel
        )
        assert moved == 1, channel
    assert "alfa" not in scrape_text()


def test_a_lockout_is_counted(world, token, fresh_rate_limits, settings):
    before = scrape()
    for _ in range(settings.AXES_FAILURE_LIMIT + 1):
        last = Client().post("/entrar/", {"username": "alfa", "password": "errada"})
    assert last.status_code == 429
    after = scrape()
    key = ("ctr_login_lockouts_total", {"channel": "web"})
    moved = value(after, key[0], **key[1]) - value(before, key[0], **key[1])
    # django-axes signals the attempt that locks and each one refused while locked: two.
    assert moved == 2


def test_outbox_depth_and_age_are_read_at_scrape_time(token):
    before = scrape()
    created = timezone.now() - datetime.timedelta(minutes=30)
    for _ in range(2):
        Delivery.objects.create(
            kind=DeliveryKind.EMAIL,
            event_type="teste",
            recipients=["ops@example.org"],
            occurred_at=created,
            next_attempt_at=created,
            created_at=created,
        )
    after = scrape()
    depth = value(after, "ctr_outbox_pending", kind="email") - value(
        before, "ctr_outbox_pending", kind="email"
    )
    assert depth == 2
    assert value(after, "ctr_outbox_oldest_pending_age_seconds") >= 30 * 60
    assert "example.org" not in scrape_text()


def test_job_runs_are_counted_by_job_and_outcome(token):
    """Read from the jobs' runs table at scrape time (jobs/health.py): a failed run counts as
    a failure of its job."""
    from jobs.models import JobRun, RunStatus

    before = scrape()
    now = timezone.now()
    for minutes, status in ((0, RunStatus.DONE), (60, RunStatus.DONE), (120, RunStatus.FAILED)):
        JobRun.objects.create(
            job="open_ctr_alerts",
            due_at=now - datetime.timedelta(minutes=minutes),
            queued_at=now,
            status=status,
        )
    after = scrape()

    def moved(status):
        name, labels = "ctr_job_runs_total", {"job": "open_ctr_alerts", "status": status}
        return value(after, name, **labels) - value(before, name, **labels)

    assert (moved("done"), moved("failed")) == (2, 1)
