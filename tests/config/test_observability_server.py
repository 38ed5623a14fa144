"""Health, metrics and logs of a production-like server: gunicorn with two worker processes,
DEBUG off (JSON logs), PROMETHEUS_MULTIPROC_DIR set, on the test database; and one pointed at
a closed port (no database). Each started once for the module, on free loopback ports.

The requests made here only read (probes, the rule catalogue, a refused API call, scrapes):
nothing the server commits is left for the other tests."""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import secrets
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings
from django.db import connection
from prometheus_client.parser import text_string_to_metric_families

from tests.app_servers import free_port, stop_process_group

BASE_DIR = Path(settings.BASE_DIR)
TOKEN = secrets.token_urlsafe(16)


@dataclass
class Server:
    process: subprocess.Popen
    url: str
    log: Path  # the application's stderr: its log lines, and nothing else

    def get(self, path: str, headers: dict | None = None):
        request = urllib.request.Request(self.url + path, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.headers, error.read()

    def lines(self) -> list[dict]:
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]

    def scrape(self) -> dict[tuple[str, tuple], float]:
        status, _, body = self.get("/metrics", {"Authorization": f"Bearer {TOKEN}"})
        assert status == 200, body
        return {
            (sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(body.decode())
            for sample in family.samples
        }


def database_url(port: int | None = None) -> str:
    """The test database as a URL (or the same address on another port)."""
    db = connection.settings_dict
    password = quote(db["PASSWORD"] or "", safe="")
    credentials = f"{db['USER']}:{password}" if password else db["USER"]
    return f"postgis://{credentials}@{db['HOST'] or '127.0.0.1'}:{port or db['PORT']}/{db['NAME']}"


@contextlib.contextmanager
def gunicorn(tmp: Path, database: str, workers: int):
    multiproc = tmp / "prometheus"
    multiproc.mkdir()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DATABASE_", "DJANGO_", "CTR_", "PG", "PROMETHEUS_"))
    }
    env.update(
        DATABASE_URL=database,
        DJANGO_DEBUG="false",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(40),
        DJANGO_SECURE_SSL_REDIRECT="false",
        DJANGO_ALLOWED_HOSTS="127.0.0.1",
        CTR_METRICS_TOKEN=TOKEN,
        PROMETHEUS_MULTIPROC_DIR=str(multiproc),
        # Its requests hold no connection between them: the test database is dropped at the
        # end of the session.
        DATABASE_CONN_MAX_AGE="0",
    )
    port = free_port()
    log = tmp / "app.log"
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "config.wsgi:application",
             "-b", f"127.0.0.1:{port}", "--workers", str(workers),
             "--error-logfile", str(tmp / "gunicorn.log")],
            cwd=BASE_DIR, env=env, stdout=stderr, stderr=stderr, start_new_session=True,
        )  # fmt: skip
    server = Server(process, f"http://127.0.0.1:{port}", log)
    try:
        deadline = time.monotonic() + 90
        while True:
            assert process.poll() is None, (tmp / "gunicorn.log").read_text()
            with contextlib.suppress(OSError):
                if server.get("/healthz")[0] == 200:
                    break
            assert time.monotonic() < deadline, (tmp / "gunicorn.log").read_text()
            time.sleep(0.2)
        yield server
    finally:
        # Its own process group (started so): the master and its workers, nothing else.
        stop_process_group(process, seconds=30)


@pytest.fixture(scope="module")
def server(django_db_setup, django_db_blocker, tmp_path_factory):
    from jobs import runner
    from jobs.models import Heartbeat

    with django_db_blocker.unblock():
        url = database_url()
        # A platform whose worker and scheduler were just seen (committed: the server reads it).
        runner.beat("worker")
        runner.beat("scheduler")
    try:
        with gunicorn(tmp_path_factory.mktemp("observed"), url, workers=2) as running:
            yield running
    finally:
        with django_db_blocker.unblock():
            Heartbeat.objects.filter(
                process__in=[runner.process_name("worker"), runner.process_name("scheduler")]
            ).delete()


@pytest.fixture(scope="module")
def no_database(django_db_setup, django_db_blocker, tmp_path_factory):
    with django_db_blocker.unblock():
        url = database_url(port=free_port())  # nothing listens there
    with gunicorn(tmp_path_factory.mktemp("no_database"), url, workers=1) as running:
        yield running


def test_ready_and_every_line_is_json(server):
    status, headers, body = server.get("/readyz", {"X-Request-ID": "sonda-pronta-1"})
    assert status == 200, body
    assert json.loads(body)["status"] == "ok"
    assert headers["X-Request-ID"] == "sonda-pronta-1"
    status, headers, _ = server.get("/api/v1/rules/", {"X-Request-ID": "suporte-prod-0001"})
    assert status == 200
    lines = server.lines()  # each line parses
    [line] = [x for x in lines if x.get("request_id") == "suporte-prod-0001"]
    assert line["event"] == "request" and line["route"] == "rules" and line["status"] == 200
    assert line["method"] == "GET" and line["level"] == "info"
    # The probe answered, and left no line.
    assert not [x for x in lines if x.get("request_id") == "sonda-pronta-1"]


def test_a_problem_through_gunicorn_carries_the_request_id(server):
    status, headers, body = server.get("/api/v1/ctrs/", {"X-Request-ID": "suporte-prod-0002"})
    assert status == 401
    assert headers["Content-Type"].startswith("application/problem+json")
    assert json.loads(body)["request_id"] == "suporte-prod-0002" == headers["X-Request-ID"]


def test_metrics_need_the_token(server):
    assert server.get("/metrics")[0] == 401
    assert server.get("/metrics", {"Authorization": "Bearer errado"})[0] == 401


def test_request_counts_add_up_across_worker_processes(server):
    labels = (("method", "GET"), ("route", "rules"), ("status", "200"))
    key = ("ctr_http_requests_total", labels)
    before = server.scrape().get(key, 0)
    sent: list[str] = []

    def one(n: int) -> str:
        request_id = f"contagem-{n:06d}"
        assert server.get("/api/v1/rules/", {"X-Request-ID": request_id})[0] == 200
        return request_id

    # Concurrent batches until both workers have served some (their pids in the lines).
    deadline = time.monotonic() + 60
    with concurrent.futures.ThreadPoolExecutor(max_workers=6) as pool:
        while True:
            sent += pool.map(one, range(len(sent), len(sent) + 12))
            ours = set(sent)
            pids = {x["pid"] for x in server.lines() if x.get("request_id") in ours}
            if len(pids) >= 2:
                break
            assert time.monotonic() < deadline, "um só worker atendeu"
    assert server.scrape()[key] - before == len(sent)


def test_without_a_database_alive_but_not_ready(no_database):
    assert no_database.get("/healthz")[0] == 200
    status, headers, body = no_database.get("/readyz")
    assert status == 503
    assert headers["Content-Type"] == "application/json"
    checks = json.loads(body)["checks"]
    assert checks["database"]["status"] == "falha"
    assert checks["migrations"]["status"] == checks["outbox"]["status"] == "falha"
    # Neither the database's address nor the driver's message.
    assert b"127.0.0.1" not in body and b"connection" not in body.lower()
