"""The production start: `scripts/serve.sh`, the documented command, started
once for the module on loopback with a free port against a database of its own in the test
cluster, driven over HTTP: DEBUG off, a page, the API, a static file hashed, compressed and
cached for long, a webhook delivered by the worker to a receiver here, a job queued by the
scheduler and run by the worker (CTR_JOBS_EVERY_SECONDS makes one due every 2 s; the
production schedule stays in jobs/schedule.py).

The three processes keep the real clock (tests/clock.py): the world has fixed dates valid
around today (as tests/config/test_faults.py's), and nothing here compares their times with
the test's."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import re
import secrets
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import psycopg2
import pytest
from django.db import connection

from tests.app_servers import stop_process_group
from tests.config.test_faults import free_port, http
from tests.webhooks.receiver import Receiver

BASE_DIR = Path(__file__).resolve().parents[2]
START_SECONDS = 300  # migrate a fresh database and collect the static files: generous
WAIT_SECONDS = 90  # for the worker or the scheduler to do something that is due

WORLD_SCRIPT = """
import json, sys
import django
django.setup()
from django.conf import settings
settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
from rest_framework.authtoken.models import Token
from tests.ctr_world import build_world, ctr_payload
from tests.webhooks.world import alfa_endpoint
world = build_world()
endpoint = alfa_endpoint(world, sys.argv[1])
print(json.dumps({
    "token": Token.objects.create(user=world.alfa_user).key,
    "payload": ctr_payload(world),
    "secret": endpoint.secret,
}))
"""


@dataclass
class Production:
    url: str
    process: subprocess.Popen
    log: Path
    receiver: Receiver
    token: str
    payload: dict
    db: dict

    def query(self, sql: str, params=()):
        with contextlib.closing(psycopg2.connect(**self.db)) as conn, conn.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()

    def wait_for(self, what: str, check):
        deadline = time.monotonic() + WAIT_SECONDS
        while not (found := check()):
            assert self.process.poll() is None, self.log.read_text()[-5000:]
            assert time.monotonic() < deadline, (
                f"{what}: nada em {WAIT_SECONDS} s\n" + (self.log.read_text()[-5000:])
            )
            time.sleep(0.2)
        return found


def get(url: str, headers: dict | None = None):
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def descendants(pid: int) -> list[str]:
    """The command lines of every process below `pid`, from /proc."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            todo.append(child)
            with contextlib.suppress(OSError):
                found.append(Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" "))
    return [line.decode(errors="replace") for line in found]


@pytest.fixture(scope="module")
def prod(django_db_setup, django_db_blocker, tmp_path_factory):
    root = tmp_path_factory.mktemp("prod")
    with django_db_blocker.unblock():
        params = connection.settings_dict
    db = {
        "host": params["HOST"] or None,
        "port": params["PORT"] or None,
        "user": params["USER"],
        "password": params["PASSWORD"],
    }
    name = f"ctr_prod_{secrets.token_hex(4)}"
    admin = psycopg2.connect(dbname="postgres", **db)
    admin.autocommit = True
    receiver = Receiver().start()
    process = None
    stack = contextlib.ExitStack()
    try:
        with admin.cursor() as cursor:
            cursor.execute(f'CREATE DATABASE "{name}"')
        db["dbname"] = name
        with contextlib.closing(psycopg2.connect(**db)) as conn:
            conn.autocommit = True
            with conn.cursor() as cursor:
                cursor.execute("CREATE EXTENSION postgis")
        port = free_port()
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("DATABASE_", "DJANGO_", "CTR_", "PG", "HOST", "PORT"))
        }
        env.update(
            DATABASE_URL=(
                f"postgis://{db['user']}:{db['password']}@{db['host'] or ''}:{db['port'] or ''}"
                f"/{name}"
            ),
            DJANGO_SETTINGS_MODULE="config.settings",
            DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
            DJANGO_STATIC_ROOT=str(root / "static"),
            # Plain HTTP on loopback: no TLS proxy in front here.
            DJANGO_SECURE_SSL_REDIRECT="false",
            CTR_WEBHOOKS_ALLOW_LOOPBACK="true",
            CTR_JOBS_EVERY_SECONDS="open_ctr_alerts=2",
            HOST="127.0.0.1",
            PORT=str(port),
            WEB_CONCURRENCY="2",
            GUNICORN_ACCESS_LOG="0",
            PYTHONPATH=str(BASE_DIR),
            PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        )
        log = root / "serve.log"
        log_file = stack.enter_context(log.open("w"))
        process = subprocess.Popen(
            ["bash", "scripts/serve.sh"], cwd=BASE_DIR, env=env, stdout=log_file,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + START_SECONDS
        while True:
            assert process.poll() is None, log.read_text()[-5000:]
            with contextlib.suppress(OSError):
                if get(f"{url}/api/v1/rules/")[0] == 200:
                    break
            assert time.monotonic() < deadline, log.read_text()[-5000:]
            time.sleep(0.3)
        made = subprocess.run(
            [sys.executable, "-c", WORLD_SCRIPT, receiver.url], cwd=BASE_DIR, env=env,
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert made.returncode == 0, made.stdout + made.stderr
        world = json.loads(made.stdout.strip().splitlines()[-1])
        receiver.secret = world["secret"]
        yield Production(url, process, log, receiver, world["token"], world["payload"], db)
    finally:
        if process is not None:
            # honcho in its own session: SIGTERM to the group stops web, worker and scheduler.
            stop_process_group(process, seconds=30)
        stack.close()
        receiver.stop()
        with admin.cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def test_web_worker_and_scheduler_run_as_separate_processes(prod):
    lines = descendants(prod.process.pid)
    assert any("gunicorn" in line for line in lines), lines
    assert any("manage.py worker" in line for line in lines), lines
    assert any("manage.py scheduler" in line for line in lines), lines
    assert not any("runserver" in line for line in lines), lines


def test_a_page_is_served_with_debug_off(prod):
    status, headers, body = get(f"{prod.url}/")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    status, _, body = get(f"{prod.url}/nao-existe-esta-pagina/")
    assert status == 404
    # DEBUG on would answer Django's technical 404, which lists the URL patterns.
    assert "URLconf" not in body.decode() and "Traceback" not in body.decode()


def test_pages_and_problem_details_are_compressed_for_a_phone_that_accepts_gzip(prod):
    plain = get(f"{prod.url}/onde-descartar/")
    status, headers, body = get(f"{prod.url}/onde-descartar/", {"Accept-Encoding": "gzip"})
    assert status == 200 and headers["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in headers["Vary"]
    page = gzip.decompress(body)
    assert b"</html>" in page and len(body) * 3 < len(page)
    assert "Content-Encoding" not in plain[1]
    # A problem+json body (the fields an empty issue lacks), compressed, with its request id.
    request = urllib.request.Request(
        f"{prod.url}/api/v1/ctrs/",
        data=b"{}",
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept-Encoding": "gzip",
            "Authorization": f"Token {prod.token}",
            "X-Request-ID": "suporte-12345",
        },
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    headers = refused.value.headers
    assert refused.value.code == 400 and headers["Content-Encoding"] == "gzip"
    assert headers["Content-Type"].startswith("application/problem+json")
    problem = json.loads(gzip.decompress(refused.value.read()))
    assert problem["request_id"] == "suporte-12345"


def test_every_line_the_web_process_writes_is_a_json_object(prod):
    # honcho prefixes each line with the time and the process: "08:00:00 web.1  | {...}".
    get(f"{prod.url}/")
    web = [
        match.group(1)
        for match in re.finditer(r"^\S+ web\.\d+\s+\| (.*)$", prod.log.read_text(), re.M)
    ]
    assert web
    objects = [json.loads(line) for line in web]  # a line that is not JSON raises here
    loggers = {line["logger"] for line in objects}
    # gunicorn's own (its start, its workers booted) and the app's request lines.
    assert "gunicorn.error" in loggers and "ctr.access" in loggers, loggers


def test_static_files_are_hashed_compressed_and_cached_for_long(prod):
    _, _, body = get(f"{prod.url}/")
    hashed = re.findall(r'/static/[^"\']+\.[0-9a-f]{12}\.(?:css|js)', body.decode())
    assert hashed, "a page names its static files by their hashed names"
    status, headers, content = get(f"{prod.url}{hashed[0]}", {"Accept-Encoding": "gzip"})
    assert status == 200 and content
    assert headers["Content-Encoding"] == "gzip"
    max_age = int(re.search(r"max-age=(\d+)", headers["Cache-Control"]).group(1))
    assert max_age >= 365 * 24 * 3600, headers["Cache-Control"]
    assert "immutable" in headers["Cache-Control"]


def test_a_ctr_issued_through_the_api_reaches_the_receiver_through_the_worker(prod):
    status, _, body = http(f"{prod.url}/api/v1/ctrs/", prod.payload, prod.token)
    assert status == 201, body[:1000]
    number = json.loads(body)["number"]

    def delivered():
        return [r for r in prod.receiver.received if r.json["data"]["number"] == number]

    received = prod.wait_for("webhook", delivered)
    assert received[0].json["type"] == "ctr.issued"
    assert received[0].signature_ok
    # Sent once: the outbox row is marked delivered, not sent again on the next rounds.
    prod.wait_for(
        "entrega registrada",
        lambda: prod.query(
            "SELECT 1 FROM webhooks_delivery d JOIN ctr_ctr c ON c.id = d.ctr_id "
            "WHERE c.number = %s AND d.status = 'delivered'",
            [number],
        ),
    )
    assert len(delivered()) == 1


def test_the_scheduler_queues_a_due_job_and_the_worker_runs_it(prod):
    # open_ctr_alerts is due every 2 s here: two runs of two due times, each once.
    runs = prod.wait_for(
        "tarefa agendada",
        lambda: (
            rows
            if len(
                rows := prod.query(
                    "SELECT due_at, summary, started_at, finished_at FROM jobs_jobrun "
                    "WHERE job = 'open_ctr_alerts' AND status = 'done' ORDER BY due_at"
                )
            )
            >= 2
            else None
        ),
    )
    assert len({due for due, *_ in runs}) == len(runs)
    for _, summary, started, finished in runs:
        assert "ctrs_em_aberto" in summary and finished >= started
    seen = dict(prod.query("SELECT role, max(last_seen) FROM jobs_heartbeat GROUP BY role"))
    assert set(seen) == {"worker", "scheduler"}
