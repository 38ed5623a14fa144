"""Faults: the database going away mid-load, a worker killed mid-request, slow queries.

The first tests run in-process against the shared test database (config.middleware with
patched failures). The others start a PostgreSQL of their own (the shared cluster other tests
use is never stopped), migrate it, load a small world and serve the app with gunicorn in a
subprocess, then break things for real: `pg_ctl stop -m immediate` in the middle of a load of
concurrent CTR issues, SIGKILL of the worker handling a request, a query held past the
statement timeout. They are skipped only where the PostgreSQL server binaries are missing.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import psycopg2
import pytest
from django.db import InterfaceError, OperationalError, connection
from rest_framework.authtoken.models import Token
from rest_framework.response import Response
from rest_framework.test import APIClient

from config import middleware
from ctr.api import RuleListView
from tests.app_servers import free_port
from tests.ctr_world import build_world, ctr_payload

BASE_DIR = Path(__file__).resolve().parents[2]
PG_BIN = Path(os.environ.get("CTR_PG_BINDIR", "/usr/lib/postgresql/15/bin"))
HAVE_POSTGRES = all((PG_BIN / tool).exists() for tool in ("initdb", "pg_ctl", "postgres"))
needs_postgres = pytest.mark.skipif(
    not HAVE_POSTGRES, reason=f"binários do PostgreSQL ausentes em {PG_BIN}"
)

PORTUGUESE_WORDS = ("banco de dados", "indisponível", "Tente", "consulta", "limite")
STATEMENT_TIMEOUT_MS = 2000  # of the private server: short, so that the test is quick
# No timed assertion is tight: a query the timeout must cut sleeps SLEEP_S, and a request held on
# a lock waits up to CLIENT_S; elapsed times are checked against half of those.
SLEEP_S = 60
CLIENT_S = 60


def assert_portuguese_503(status: int, headers, body: bytes) -> dict:
    assert status == 503, (status, body[:500])
    assert headers["Content-Type"].startswith("application/problem+json"), headers
    assert int(headers["Retry-After"]) > 0
    text = body.decode("utf-8")
    for leak in ("Traceback", "OperationalError", "InterfaceError", "psycopg", 'File "'):
        assert leak not in text, text
    problem = json.loads(text)
    assert problem["status"] == 503
    assert any(word in problem["detail"] for word in PORTUGUESE_WORDS), problem
    return problem


# --- in-process: the middleware ----------------------------------------------------------------


@pytest.fixture
def world(db):
    return build_world()


def token_client(user) -> APIClient:
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


@pytest.mark.parametrize(
    "error",
    [
        OperationalError("server closed the connection unexpectedly"),
        InterfaceError("connection already closed"),
    ],
    ids=["operational", "interface"],
)
def test_database_error_in_an_api_view_is_a_portuguese_503(world, monkeypatch, caplog, error):
    def lost(*args, **kwargs):
        raise error

    monkeypatch.setattr("ctr.services.issue", lost)
    client = token_client(world.alfa_user)
    with caplog.at_level(logging.ERROR, logger="config.middleware"):
        response = client.post("/api/v1/ctrs/", ctr_payload(world), format="json")
    problem = assert_portuguese_503(response.status_code, response, response.content)
    assert problem["code"] == "database_unavailable"
    assert problem["instance"] == "/api/v1/ctrs/"
    assert any("indisponível" in r.getMessage() for r in caplog.records), caplog.records


def test_database_error_on_a_page_is_a_portuguese_html_503(world, monkeypatch):
    client = APIClient(raise_request_exception=False)
    client.force_login(world.alfa_user)

    def lost(self, *args, **kwargs):
        raise OperationalError("could not connect to server: Connection refused")

    # The session is read from the database by whatever touches request.user first: a
    # middleware inside ours or the view. Either way the answer is the same page.
    monkeypatch.setattr("django.contrib.sessions.backends.db.SessionStore.load", lost)
    response = client.get("/painel/")
    assert response.status_code == 503
    assert response["Content-Type"].startswith("text/html")
    assert int(response["Retry-After"]) > 0
    text = response.content.decode()
    assert "Serviço temporariamente indisponível" in text
    assert "banco de dados" in text
    assert "Traceback" not in text and "OperationalError" not in text


def test_database_error_in_an_inner_middleware_is_a_503_too(db, settings, monkeypatch):
    # Django turns it into a 500 (with DEBUG, its page with the stack trace) before it reaches
    # our middleware: that response is replaced.
    settings.DEBUG = True

    def lost(self, request):
        raise OperationalError("terminating connection due to administrator command")

    monkeypatch.setattr("django.middleware.common.CommonMiddleware.process_request", lost)
    response = APIClient(raise_request_exception=False).get("/api/v1/rules/")
    problem = assert_portuguese_503(response.status_code, response, response.content)
    assert problem["code"] == "database_unavailable"


def current_setting(name: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"SHOW {name}")
        return cursor.fetchone()[0]


def current_statement_timeout() -> str:
    return current_setting("statement_timeout")


def current_parallel_workers() -> str:
    return current_setting("max_parallel_workers_per_gather")


def show_statement_timeout(self, request):
    """In place of the rules view: what the request's own queries run under."""
    return Response({"statement_timeout": current_statement_timeout()})


def show_parallel_workers(self, request):
    return Response({"workers": current_parallel_workers()})


def test_requests_run_under_the_statement_timeout_and_nothing_else_does(db, settings, monkeypatch):
    settings.CTR_REQUEST_STATEMENT_TIMEOUT_MS = 1234
    monkeypatch.setattr(RuleListView, "get", show_statement_timeout)
    outside = current_statement_timeout()
    response = APIClient().get("/api/v1/rules/")
    assert response.json() == {"statement_timeout": "1234ms"}
    # Code that is not a request (tests, management commands) keeps the session's default.
    assert current_statement_timeout() == outside


def test_statement_timeout_can_be_turned_off(db, settings, monkeypatch):
    settings.CTR_REQUEST_STATEMENT_TIMEOUT_MS = 0
    monkeypatch.setattr(RuleListView, "get", show_statement_timeout)
    outside = current_statement_timeout()
    assert APIClient().get("/api/v1/rules/").json() == {"statement_timeout": outside}


def test_requests_run_without_parallel_workers_and_nothing_else_changes(db, settings, monkeypatch):
    """A parallel plan for a request's small query cost more in starting the workers than
    the query itself (docs/performance.md, P5): requests plan without them."""
    monkeypatch.setattr(RuleListView, "get", show_parallel_workers)
    outside = current_parallel_workers()
    assert outside != "0"  # the server's default: otherwise the test proves nothing
    settings.CTR_REQUEST_PARALLEL_WORKERS = 0
    assert APIClient().get("/api/v1/rules/").json() == {"workers": "0"}
    assert current_parallel_workers() == outside
    settings.CTR_REQUEST_PARALLEL_WORKERS = None  # empty in the environment: the server's
    assert APIClient().get("/api/v1/rules/").json() == {"workers": outside}
    settings.CTR_REQUEST_STATEMENT_TIMEOUT_MS = 0  # each setting on its own
    settings.CTR_REQUEST_PARALLEL_WORKERS = 1
    assert APIClient().get("/api/v1/rules/").json() == {"workers": "1"}
    assert current_parallel_workers() == outside


@pytest.mark.django_db(transaction=True)
def test_a_query_past_the_timeout_is_a_quick_503_and_the_connection_stays_usable(
    settings, monkeypatch
):
    # Autocommit, as in production: the SET holds for the request, then is undone.
    settings.CTR_REQUEST_STATEMENT_TIMEOUT_MS = 200

    def slow(self, request):
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT pg_sleep({SLEEP_S})")
        return Response({})

    monkeypatch.setattr(RuleListView, "get", slow)
    outside = current_statement_timeout()
    started = time.monotonic()
    response = APIClient(raise_request_exception=False).get("/api/v1/rules/")
    elapsed = time.monotonic() - started
    problem = assert_portuguese_503(response.status_code, response, response.content)
    assert problem["code"] == "statement_timeout"
    assert "0,2 segundos" in problem["detail"]
    # Cut by the timeout, not answered after the sleep: a bound with a wide margin either way.
    assert elapsed < SLEEP_S / 2, elapsed
    assert current_statement_timeout() == outside
    monkeypatch.setattr(RuleListView, "get", show_statement_timeout)
    assert APIClient().get("/api/v1/rules/").json() == {"statement_timeout": "200ms"}


@pytest.mark.django_db(transaction=True)
def test_a_process_that_serves_only_requests_sets_each_connection_once(settings, monkeypatch):
    """config/wsgi.py (serve_requests_only): a gunicorn worker's connections run requests'
    statements only, so the first request on a connection makes the SET and later ones keep
    it, with no reset after each; a new connection gets it again."""
    settings.CTR_REQUEST_STATEMENT_TIMEOUT_MS = 1234
    settings.CTR_REQUEST_PARALLEL_WORKERS = 0
    monkeypatch.setattr(RuleListView, "get", show_statement_timeout)
    sent = []
    made = middleware.RequestSessionSettings._set

    def recorded(self, on, statement):
        sent.append(statement)
        made(self, on, statement)

    monkeypatch.setattr(middleware.RequestSessionSettings, "_set", recorded)
    middleware.serve_requests_only()
    once = "SET statement_timeout = 1234; SET max_parallel_workers_per_gather = 0"
    try:
        for _ in range(3):
            assert APIClient().get("/api/v1/rules/").json() == {"statement_timeout": "1234ms"}
        assert sent == [once]
        connection.close()  # as after CONN_MAX_AGE, or a lost connection
        assert APIClient().get("/api/v1/rules/").json() == {"statement_timeout": "1234ms"}
        assert sent == [once, once]
    finally:
        # The test's connection goes on serving other tests (and their flush): back to a
        # process that does more than serve requests, with the session's defaults.
        middleware.serve_requests_only(on=False)
    assert not middleware.requests_only()
    assert current_statement_timeout() != "1234ms"


# --- a private PostgreSQL and a gunicorn in subprocesses -----------------------------------------


@dataclass
class PrivatePostgres:
    root: Path
    port: int = field(default_factory=free_port)
    password: str = field(default_factory=lambda: secrets.token_urlsafe(18))
    database: str = "ctr_faults"

    @property
    def data(self) -> Path:
        return self.root / "pgdata"

    @property
    def url(self) -> str:
        return f"postgis://postgres:{self.password}@127.0.0.1:{self.port}/{self.database}"

    def as_owner(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        command = [str(a) for a in args]
        if os.geteuid() == 0:  # PostgreSQL refuses to run as root
            command = ["runuser", "-u", "postgres", "--", *command]
        return subprocess.run(command, capture_output=True, text=True, check=check, timeout=120)

    def init(self) -> None:
        password_file = self.root / "pw"
        password_file.write_text(self.password)
        password_file.chmod(0o600)
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres")
            shutil.chown(password_file, "postgres")
        self.as_owner(
            PG_BIN / "initdb", "-D", self.data, "-U", "postgres", "--auth=scram-sha-256",
            f"--pwfile={password_file}", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync",
        )  # fmt: skip
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write(
                "\n# tests/config/test_faults.py: private, throw-away cluster\n"
                f"listen_addresses = '127.0.0.1'\nport = {self.port}\n"
                f"unix_socket_directories = '{self.data}'\n"
                "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
            )

    def start(self) -> None:
        self.as_owner(
            PG_BIN / "pg_ctl", "-D", self.data, "-l", self.root / "server.log", "-w", "-t",
            "60", "start",
        )  # fmt: skip

    def stop(self, mode: str = "immediate") -> None:
        self.as_owner(PG_BIN / "pg_ctl", "-D", self.data, "-m", mode, "-w", "stop", check=False)

    def running(self) -> bool:
        return (
            self.as_owner(PG_BIN / "pg_ctl", "-D", self.data, "status", check=False).returncode == 0
        )

    def connect(self, database: str | None = None, autocommit: bool = True):
        conn = psycopg2.connect(
            host="127.0.0.1", port=self.port, user="postgres", password=self.password,
            dbname=database or self.database, connect_timeout=5,
        )  # fmt: skip
        conn.autocommit = autocommit
        return conn


WORLD_SCRIPT = """
import json
import django
django.setup()
from django.conf import settings
settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
from rest_framework.authtoken.models import Token
from tests.ctr_world import build_world, ctr_payload
world = build_world()
print(json.dumps({
    "token": Token.objects.create(user=world.alfa_user).key,
    "payload": ctr_payload(world),
    "municipality": world.town.pk,
}))
"""

SETTINGS_MODULE = f"""
from config.settings import *  # noqa: F403

CTR_REQUEST_STATEMENT_TIMEOUT_MS = {STATEMENT_TIMEOUT_MS}
CTR_RATE_LIMITS = {{s: "100000/m" for s in ("login", "nearest", "verify", "follow")}}
"""

GUNICORN_CONF = """
import os

workers = 2
worker_class = "gthread"
threads = 4
timeout = 60
graceful_timeout = 5
loglevel = "warning"


def post_fork(server, worker):
    # libpq reads PGAPPNAME: pg_stat_activity then tells which worker a backend serves.
    os.environ["PGAPPNAME"] = f"ctr-worker-{os.getpid()}"
"""


@dataclass
class Server:
    pg: PrivatePostgres
    process: subprocess.Popen
    url: str
    token: str
    payload: dict
    municipality: int
    log: Path

    def workers(self) -> set[int]:
        """The gunicorn master's child processes (its workers), from /proc."""
        children = set()
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                # pid (comm) state ppid …: comm may hold spaces, so split after its ')'.
                fields = stat.read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == self.process.pid:
                    children.add(int(stat.parent.name))
        return children

    def issue(self, payload: dict | None = None, timeout: float = 30):
        return http(
            f"{self.url}/api/v1/ctrs/", payload or self.payload, self.token, timeout=timeout
        )


def http(url: str, data: dict | None = None, token: str | None = None, timeout: float = 30):
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Token {token}"
    request = urllib.request.Request(
        url,
        data=json.dumps(data).encode() if data is not None else None,
        headers=headers,
        method="POST" if data is not None else "GET",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def run_manage(env: dict, *args: str, script: str | None = None) -> str:
    command = [sys.executable, "-c", script] if script else [sys.executable, "manage.py", *args]
    done = subprocess.run(
        command, cwd=BASE_DIR, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def server():
    if not HAVE_POSTGRES:
        pytest.skip(f"binários do PostgreSQL ausentes em {PG_BIN}")
    # As root, the postgres user must reach the data directory: /var/tmp is open to all.
    root = Path(
        tempfile.mkdtemp(prefix="ctr-faults-", dir="/var/tmp" if os.geteuid() == 0 else None)
    )
    root.chmod(0o755)
    pg = PrivatePostgres(root)
    process = None
    stack = contextlib.ExitStack()
    try:
        pg.init()
        pg.start()
        with contextlib.closing(pg.connect("postgres")) as conn, conn.cursor() as cursor:
            cursor.execute(f'CREATE DATABASE "{pg.database}"')
        with contextlib.closing(pg.connect()) as conn, conn.cursor() as cursor:
            cursor.execute("CREATE EXTENSION postgis")
        app = root / "app"
        app.mkdir()
        (app / "fault_settings.py").write_text(SETTINGS_MODULE)
        (app / "gunicorn_conf.py").write_text(GUNICORN_CONF)
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("DATABASE_", "DJANGO_", "CTR_", "PG"))
        }
        env.update(
            DATABASE_URL=pg.url,
            DJANGO_SETTINGS_MODULE="fault_settings",
            PYTHONPATH=os.pathsep.join([str(app), str(BASE_DIR)]),
            # DEBUG on: a 500 would then be Django's page with the stack trace, which the
            # assertions would see; the answer must be our 503 all the same.
            DJANGO_DEBUG="true",
            DJANGO_LOG_LEVEL="WARNING",
        )
        run_manage(env, "migrate", "--noinput", "-v", "0")
        run_manage(env, "createcachetable")
        world = json.loads(run_manage(env, script=WORLD_SCRIPT).strip().splitlines()[-1])
        port = free_port()
        log = root / "gunicorn.log"
        log_file = stack.enter_context(log.open("w"))
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", str(app / "gunicorn_conf.py"),
             "-b", f"127.0.0.1:{port}", "config.wsgi:application"],
            cwd=BASE_DIR, env=env, stdout=log_file, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, log.read_text()
            with contextlib.suppress(OSError):
                if http(f"{url}/api/v1/rules/", timeout=2)[0] == 200:
                    break
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        srv = Server(pg, process, url, world["token"], world["payload"], world["municipality"], log)
        # The first CTR creates the generator and the worksite the load then reuses.
        status, _, body = srv.issue()
        assert status == 201, body
        yield srv
    finally:
        if process is not None:
            # Its own process group (started so): the master and its workers, nothing else.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
        stack.close()
        pg.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def live(server):
    """The server with its database up (a failed test may have left it down)."""
    if not server.pg.running():
        server.pg.start()
    assert server.process.poll() is None, server.log.read_text()
    return server


def database_state(pg: PrivatePostgres) -> dict[str, tuple[int, str]]:
    """Row count and checksum of every table of the app (not the cache, not PostGIS's)."""
    with contextlib.closing(pg.connect()) as conn, conn.cursor() as cursor:
        cursor.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
            "AND tablename NOT IN ('spatial_ref_sys', 'ctr_cache') ORDER BY 1"
        )
        tables = [row[0] for row in cursor.fetchall()]
        state = {}
        for table in tables:
            cursor.execute(
                f"SELECT count(*), coalesce(md5(string_agg(md5(t::text), '' "
                f"ORDER BY md5(t::text))), '') FROM \"{table}\" t"
            )
            state[table] = cursor.fetchone()
        return state


def assert_no_partial_ctr(pg: PrivatePostgres, numbers: set[str]) -> int:
    """Every CTR has its waste lines and exactly one 'issue' event; numbers 1..n without gaps,
    the sequence row at n; every number a client was given exists. Returns n."""
    with contextlib.closing(pg.connect()) as conn, conn.cursor() as cursor:
        cursor.execute(
            "SELECT c.number FROM ctr_ctr c WHERE NOT EXISTS "
            "(SELECT 1 FROM ctr_ctrwaste w WHERE w.ctr_id = c.id)"
        )
        assert cursor.fetchall() == [], "CTR sem resíduos"
        cursor.execute(
            "SELECT c.number FROM ctr_ctr c WHERE (SELECT count(*) FROM ctr_ctrevent e "
            "WHERE e.ctr_id = c.id AND e.action = 'issue') <> 1"
        )
        assert cursor.fetchall() == [], "CTR sem o evento de emissão"
        cursor.execute(
            "SELECT c.municipality_id, c.year, count(*), min(c.sequence), max(c.sequence), "
            "max(s.last_value) FROM ctr_ctr c JOIN ctr_numbersequence s "
            "ON s.municipality_id = c.municipality_id AND s.year = c.year GROUP BY 1, 2"
        )
        (_, _, count, first, last, sequence), *others = cursor.fetchall()
        assert others == []
        assert (first, last, sequence) == (1, count, count), "numeração com lacuna"
        # A generator or worksite is written in the transaction of its first CTR: one
        # without any CTR is the remains of an issue that did not finish (a generator with an
        # account, the world's Gama, exists before any CTR names it).
        cursor.execute(
            "SELECT g.document FROM ctr_generator g WHERE NOT EXISTS "
            "(SELECT 1 FROM ctr_ctr c WHERE c.generator_id = g.id) AND NOT EXISTS "
            "(SELECT 1 FROM ctr_membership m WHERE m.generator_id = g.id)"
        )
        assert cursor.fetchall() == [], "gerador sem CTR"
        cursor.execute(
            "SELECT w.address FROM ctr_worksite w WHERE NOT EXISTS "
            "(SELECT 1 FROM ctr_ctr c WHERE c.worksite_id = w.id)"
        )
        assert cursor.fetchall() == [], "obra sem CTR"
        cursor.execute("SELECT number FROM ctr_ctr")
        stored = {row[0] for row in cursor.fetchall()}
        assert numbers <= stored, numbers - stored
        return count


@dataclass
class Result:
    status: int | None
    headers: object = None
    body: bytes = b""
    error: str = ""
    sent_after_stop: bool = False


@needs_postgres
def test_database_stopped_mid_load_then_back_without_restarting_the_app(live):
    workers = live.workers()
    assert len(workers) == 2
    stopped = threading.Event()
    done = threading.Event()
    results: list[Result] = []
    lock = threading.Lock()

    def client():
        while not done.is_set():
            after = stopped.is_set()
            try:
                status, headers, body = live.issue(new_generator_payload(live), timeout=30)
                result = Result(status, headers, body, sent_after_stop=after)
            except OSError as exc:
                result = Result(None, error=repr(exc), sent_after_stop=after)
            with lock:
                results.append(result)

    threads = [threading.Thread(target=client) for _ in range(6)]
    for thread in threads:
        thread.start()
    try:
        deadline = time.monotonic() + 30
        while sum(r.status == 201 for r in results) < 12:
            assert time.monotonic() < deadline, [r.status for r in results]
            time.sleep(0.02)
        # Hold the numbering so that requests are surely caught inside their transaction
        # (generator and worksite written, number awaited) when the server goes down.
        numbering = locked_sequence(live)
        waiting_since = time.monotonic()
        while waiting_on_locks(live.pg) < 3:
            assert time.monotonic() - waiting_since < 15, "nenhuma requisição em andamento"
            time.sleep(0.02)
        stopped.set()
        live.pg.stop("immediate")
        with contextlib.suppress(psycopg2.Error):
            numbering.close()
        # Until a request sent while it is down has been answered: no sleep decides that one
        # was sent in time.
        deadline = time.monotonic() + 30
        while not any(r.sent_after_stop for r in results):
            assert time.monotonic() < deadline, "nenhuma requisição enviada com o banco parado"
            time.sleep(0.02)
    finally:
        done.set()
        for thread in threads:
            thread.join(timeout=60)

    assert [r for r in results if r.status is None] == [], "conexão HTTP perdida"
    unexpected = [r for r in results if r.status not in (201, 503)]
    # DEBUG is on: the body of an unexpected answer is Django's trace, which says what leaked.
    assert unexpected == [], [r.body.decode(errors="replace")[:4000] for r in unexpected[:2]]
    failed = [r for r in results if r.status == 503]
    # At least the three caught mid-transaction, and the ones sent while it was down.
    assert sum(not r.sent_after_stop for r in failed) >= 3
    assert any(r.sent_after_stop for r in failed)
    for result in failed:
        assert_portuguese_503(result.status, result.headers, result.body)
    numbers = {json.loads(r.body)["number"] for r in results if r.status == 201}

    live.pg.start()
    after = [live.issue() for _ in range(8)]
    assert [status for status, _, _ in after] == [201] * 8, after
    numbers |= {json.loads(body)["number"] for _, _, body in after}
    # Served by the same processes: nothing was restarted.
    assert live.process.poll() is None
    assert live.workers() == workers
    assert assert_no_partial_ctr(live.pg, numbers) >= len(numbers)


def waiting_on_locks(pg: PrivatePostgres) -> int:
    with contextlib.closing(pg.connect()) as conn, conn.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE wait_event_type = 'Lock' AND application_name LIKE 'ctr-worker-%%'"
        )
        return cursor.fetchone()[0]


def backend_waiting_on_a_lock(pg: PrivatePostgres, timeout: float = 15) -> tuple[int, int]:
    """(backend pid, gunicorn worker pid) of the request blocked on a lock."""
    deadline = time.monotonic() + timeout
    with contextlib.closing(pg.connect()) as conn, conn.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute(
                "SELECT pid, application_name FROM pg_stat_activity "
                "WHERE wait_event_type = 'Lock' AND application_name LIKE 'ctr-worker-%%'"
            )
            rows = cursor.fetchall()
            if rows:
                pid, name = rows[0]
                return pid, int(name.rsplit("-", 1)[1])
            time.sleep(0.05)
    raise AssertionError("nenhuma requisição bloqueada")


def locked_sequence(server: Server):
    """A transaction holding the row of the CTR numbering: every issue waits on it."""
    conn = server.pg.connect(autocommit=False)
    with conn.cursor() as cursor:
        cursor.execute(
            "SELECT last_value FROM ctr_numbersequence "
            "WHERE municipality_id = %s AND year = %s FOR UPDATE",
            [server.municipality, int(server.payload["transport_date"][:4])],
        )
        assert cursor.fetchone() is not None
    return conn


def cpf(n: int) -> str:
    """A valid CPF (check digits computed) from a 9-digit number."""
    digits = [int(d) for d in f"{n:09d}"]
    for _ in range(2):
        total = sum(d * w for d, w in zip(digits, range(len(digits) + 1, 1, -1), strict=True))
        digits.append(total * 10 % 11 % 10)
    return "".join(map(str, digits))


NEW_GENERATORS = iter(range(123_456_001, 999_999_999))
NEW_GENERATORS_LOCK = threading.Lock()


def new_generator_payload(server: Server) -> dict:
    """A load from a generator and site not yet known: the issue writes both before it waits
    for its number, so a request cut there would leave them half-written without the
    transaction."""
    with NEW_GENERATORS_LOCK:
        n = next(NEW_GENERATORS)
    payload = json.loads(json.dumps(server.payload))
    payload["generator"] = {"name": f"Construtora {n}", "document": cpf(n)}
    payload["worksite"]["address"] = f"Rua Nova, {n}"
    return payload


@needs_postgres
def test_worker_killed_mid_request_leaves_nothing_half_written(live):
    before = database_state(live.pg)
    lock = locked_sequence(live)
    outcome: list = []

    def request():
        try:
            outcome.append(live.issue(new_generator_payload(live), timeout=30))
        except OSError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=request)
    thread.start()
    try:
        backend, worker = backend_waiting_on_a_lock(live.pg)
        assert worker in live.workers()
        with contextlib.closing(live.pg.connect()) as conn, conn.cursor() as cursor:
            # The request has already inserted the generator in its open transaction.
            cursor.execute(
                "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
                "WHERE l.pid = %s AND c.relname = 'ctr_generator' AND l.mode = 'RowExclusiveLock'",
                [backend],
            )
            assert cursor.fetchone()[0] == 1
        os.kill(worker, signal.SIGKILL)
        thread.join(timeout=30)
    finally:
        lock.rollback()
        lock.close()
    assert len(outcome) == 1 and isinstance(outcome[0], OSError), outcome

    # The orphaned backend gets its lock, finds its client gone and rolls back.
    deadline = time.monotonic() + 20
    with contextlib.closing(live.pg.connect()) as conn, conn.cursor() as cursor:
        while True:
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [backend])
            if cursor.fetchone()[0] == 0:
                break
            assert time.monotonic() < deadline, "o backend do worker morto não terminou"
            time.sleep(0.05)
    assert database_state(live.pg) == before

    # gunicorn replaces the worker; the numbering goes on without a gap.
    deadline = time.monotonic() + 20
    while len(live.workers()) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    status, _, body = live.issue(new_generator_payload(live))
    assert status == 201, body
    count = assert_no_partial_ctr(live.pg, {json.loads(body)["number"]})
    assert json.loads(body)["number"].endswith(f"-{count:06d}")


@needs_postgres
def test_request_past_the_statement_timeout_gets_503_and_the_app_goes_on(live):
    before = database_state(live.pg)
    lock = locked_sequence(live)
    try:
        started = time.monotonic()
        # Without the timeout the request would wait on the lock until the client gives up.
        status, headers, body = live.issue(new_generator_payload(live), timeout=CLIENT_S)
        elapsed = time.monotonic() - started
    finally:
        lock.rollback()
        lock.close()
    problem = assert_portuguese_503(status, headers, body)
    assert problem["code"] == "statement_timeout"
    # Not before the timeout; well before the client's own (a margin for a loaded machine).
    assert STATEMENT_TIMEOUT_MS / 1000 <= elapsed < CLIENT_S / 2, elapsed
    assert database_state(live.pg) == before
    # Every worker thread's connection is still good: a run of issues all go through.
    results = [live.issue() for _ in range(6)]
    assert [s for s, _, _ in results] == [201] * 6, results
    assert_no_partial_ctr(live.pg, {json.loads(b)["number"] for _, _, b in results})
