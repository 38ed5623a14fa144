"""The read replica (config/replica.py; docs/operations.md, "Réplica de leitura"), for real: a
streaming replica of the test cluster made by `pg_basebackup -R` on a free port, and two
gunicorns (DEBUG off) whose DATABASE_URL is the test database on the primary and whose
DATABASE_REPLICA_URL is the same database on the replica. One tolerates an hour of lag, the
other one second: a lag past a threshold is only reached by waiting past it.

What a page read from the replica is seen in the replica's own log (log_statement = all, with
the application name of the server's connections), or in what the page shows while the
replica's replay is paused (`pg_wal_replay_pause()`): rows the primary has and the replica has
not yet.

The replica and the servers start once per module. The servers keep the real clock (the test
data has fixed dates, tests/clock.py): nothing here depends on the day."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg2
import pytest
import requests
from django.conf import settings
from django.db import connection
from django.test import Client
from rest_framework.authtoken.models import Token

from config.replica import LSN_COOKIE
from tests.ctr_world import build_world, ctr_payload

BASE_DIR = Path(__file__).resolve().parents[2]
PG_BIN = Path(os.environ.get("CTR_PG_BINDIR", "/usr/lib/postgresql/15/bin"))
AS_ROOT = os.geteuid() == 0
DEADLINE_S = 90

pytestmark = [
    pytest.mark.django_db(transaction=True),  # the data must be committed to replicate
    pytest.mark.skipif(
        not (PG_BIN / "pg_basebackup").exists(), reason=f"pg_basebackup ausente em {PG_BIN}"
    ),
]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def as_owner(*args, check: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
    command = [str(a) for a in args]
    if AS_ROOT:  # PostgreSQL refuses to run as root
        command = ["runuser", "-u", "postgres", "--", *command]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert not check or done.returncode == 0, f"{command}: {done.stdout}\n{done.stderr}"
    return done


def wait_for(condition, what: str, deadline_s: float = DEADLINE_S):
    """Poll `condition` until it returns something true (returned), or fail after the deadline."""
    deadline = time.monotonic() + deadline_s
    while True:
        result = condition()
        if result:
            return result
        assert time.monotonic() < deadline, f"não aconteceu em {deadline_s} s: {what}"
        time.sleep(0.1)


@dataclass
class Replica:
    root: Path
    port: int
    password: str
    database: str

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def log(self) -> Path:
        return self.root / "replica.log"

    def url(self) -> str:
        return f"postgis://postgres:{self.password}@127.0.0.1:{self.port}/{self.database}"

    def start(self) -> None:
        as_owner(PG_BIN / "pg_ctl", "-D", self.data, "-l", self.log, "-w", "-t", "120", "start")

    def stop(self) -> None:
        as_owner(PG_BIN / "pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop", check=False)

    def running(self) -> bool:
        return as_owner(PG_BIN / "pg_ctl", "-D", self.data, "status", check=False).returncode == 0

    def query(self, sql: str):
        conn = psycopg2.connect(
            host="127.0.0.1", port=self.port, user="postgres", password=self.password,
            dbname=self.database, connect_timeout=5,
        )  # fmt: skip
        conn.autocommit = True  # pg_wal_replay_pause() and the like act at once
        with contextlib.closing(conn), conn.cursor() as cursor:
            cursor.execute(sql)
            return cursor.fetchone()

    def log_size(self) -> int:
        return self.log.stat().st_size

    def statements_since(self, offset: int, application: str) -> str:
        """The statements the server's connections ran on the replica since `offset`."""
        with self.log.open("rb") as log:
            log.seek(offset)
            text = log.read().decode("utf-8", "replace")
        # An entry starts with the prefix ('%a|') and a level; a multi-line query goes on
        # in the lines after it.
        entries = re.split(r"\n(?=[\w.-]*\|[A-Z]+:  )", text)
        return "\n".join(e for e in entries if e.startswith(f"{application}|LOG:  statement:"))


def primary_lsn() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_lsn()::text")
        return cursor.fetchone()[0]


def caught_up(replica: Replica) -> None:
    """Wait until the replica has replayed everything the primary has written so far."""
    target = primary_lsn()
    wait_for(
        lambda: replica.query(f"SELECT pg_last_wal_replay_lsn() >= '{target}'::pg_lsn")[0],
        f"a réplica alcançar {target}",
    )


REPLICA_SLOT_PREFIX = "ctr_test_replica_"


def drop_replication_slots(where: str, value: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
            f"WHERE slot_type = 'physical' AND {where}",
            [value],
        )


@pytest.fixture(scope="module")
def replica(django_db_setup, django_db_blocker):
    """A hot standby of the test cluster, streaming from it, on a free port."""
    with django_db_blocker.unblock():
        primary = connection.settings_dict
        database, password = primary["NAME"], primary["PASSWORD"]
        host, port, user = primary["HOST"] or "127.0.0.1", primary["PORT"], primary["USER"]
    # As root, the postgres user must reach the data directory: /var/tmp is open to all.
    root = Path(tempfile.mkdtemp(prefix="ctr-replica-", dir="/var/tmp" if AS_ROOT else None))
    root.chmod(0o755)
    if AS_ROOT:
        shutil.chown(root, "postgres")
    replica = Replica(root, free_port(), password, database)
    # A replication slot, made before the backup starts, keeps the primary's WAL until the
    # replica has it: without one, a busy primary (the rest of the suite writing) recycled a
    # segment the backup's stream had not read yet ("requested WAL segment … has already been
    # removed"). Slots that a killed run left (inactive) would keep WAL forever: dropped first.
    slot = f"{REPLICA_SLOT_PREFIX}{replica.port}"
    with django_db_blocker.unblock():
        drop_replication_slots("starts_with(slot_name, %s) AND NOT active", REPLICA_SLOT_PREFIX)
    try:
        as_owner(
            PG_BIN / "pg_basebackup", "-D", replica.data, "-h", host, "-p", port, "-U", user,
            "-R", "-C", "-S", slot, "--checkpoint=fast", "-X", "stream", "--no-sync",
            env={**os.environ, "PGPASSWORD": password},
        )  # fmt: skip
        # Appended to the primary's copied settings: the later line wins.
        with (replica.data / "postgresql.conf").open("a") as conf:
            conf.write(
                "\n# tests/config/test_replica.py: a throw-away streaming replica\n"
                f"port = {replica.port}\nlisten_addresses = '127.0.0.1'\n"
                f"unix_socket_directories = '{replica.data}'\nfsync = off\n"
                "hot_standby = on\nlog_statement = 'all'\nlog_line_prefix = '%a|'\n"
            )
        replica.start()
        assert replica.query("SELECT pg_is_in_recovery()")[0]
        yield replica
    finally:
        replica.stop()
        shutil.rmtree(root, ignore_errors=True)
        with django_db_blocker.unblock():
            drop_replication_slots("slot_name = %s", slot)


@dataclass
class Server:
    url: str
    application: str  # the application_name of its database connections
    log: Path
    process: subprocess.Popen

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


class Browser:
    """An HTTP client that keeps its cookies as a browser on HTTPS would (the servers run with
    DEBUG off: secure cookies, which requests would not send back over plain HTTP)."""

    def __init__(self, server: Server, **cookies):
        self.server, self.cookies, self.headers = server, dict(cookies), {}

    def request(self, method: str, path: str, **kwargs) -> requests.Response:
        response = requests.request(
            method, self.server.url + path, cookies=self.cookies, headers=self.headers,
            timeout=60, allow_redirects=False, **kwargs,
        )  # fmt: skip
        self.cookies.update(response.cookies.get_dict())
        return response

    def get(self, path: str) -> requests.Response:
        return self.request("GET", path)


def start_server(root: Path, name: str, replica: Replica, max_lag_seconds: float) -> Server:
    primary = connection.settings_dict
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DATABASE_", "DJANGO_", "CTR_", "PG"))
    }
    application = f"ctr-replica-test-{name}"
    env.update(
        DATABASE_URL=(
            f"postgis://{primary['USER']}:{primary['PASSWORD']}@{primary['HOST'] or '127.0.0.1'}"
            f":{primary['PORT']}/{primary['NAME']}"
        ),
        DATABASE_REPLICA_URL=replica.url(),
        CTR_REPLICA_MAX_LAG_SECONDS=str(max_lag_seconds),
        CTR_REPLICA_RETRY_SECONDS="1",
        DJANGO_DEBUG="false",
        # The test process's key: the sessions it makes (force_login) are valid there.
        DJANGO_SECRET_KEY=settings.SECRET_KEY,
        DJANGO_SECURE_SSL_REDIRECT="false",
        DJANGO_LOG_LEVEL="WARNING",
        CTR_RATE_VERIFY="100000/m",
        # libpq reads PGAPPNAME: the replica's log tells this server's statements apart.
        PGAPPNAME=application,
    )
    port = free_port()
    log = root / f"gunicorn-{name}.log"
    with log.open("w") as log_file:
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-w", "1", "-k", "gthread", "--threads", "4",
             "-b", f"127.0.0.1:{port}", "config.wsgi:application"],
            cwd=BASE_DIR, env=env, stdout=log_file, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    return Server(f"http://127.0.0.1:{port}", application, log, process)


def wait_until_serving(server: Server) -> None:
    def answers():
        assert server.process.poll() is None, server.log_text()
        with contextlib.suppress(requests.RequestException):
            return requests.get(server.url + "/regras/", timeout=5).status_code == 200
        return False

    wait_for(answers, f"o gunicorn de {server.url} responder")


@pytest.fixture(scope="module")
def servers(replica, django_db_blocker):
    root = Path(tempfile.mkdtemp(prefix="ctr-replica-servers-"))
    started: list[Server] = []
    try:
        with django_db_blocker.unblock():
            # Started together (they boot in parallel), waited for together.
            started.append(start_server(root, "tolerant", replica, 3600))
            started.append(start_server(root, "strict", replica, 1))
        for server in started:
            wait_until_serving(server)
        yield {"tolerant": started[0], "strict": started[1]}
    finally:
        for server in started:
            # Its own process group (started so): the master and its worker, nothing else.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server.process.pid, signal.SIGKILL)
            server.process.wait(timeout=30)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def live(replica, servers, transactional_db):
    """The replica up and replaying (a test may stop it or pause it), and a world in it."""
    if not replica.running():
        replica.start()
    world = build_world()
    caught_up(replica)
    yield world
    with contextlib.suppress(psycopg2.Error):
        replica.query("SELECT pg_wal_replay_resume()")
    # The servers' requests end before the flush (tests/conftest.py says why).


def signed_in(server: Server, user) -> Browser:
    client = Client()
    client.force_login(user)
    return Browser(server, sessionid=client.cookies[settings.SESSION_COOKIE_NAME].value)


def with_token(server: Server, user) -> Browser:
    browser = Browser(server)
    browser.headers["Authorization"] = f"Token {Token.objects.create(user=user).key}"
    return browser


def issue(browser: Browser, world) -> str:
    response = browser.request("POST", "/api/v1/ctrs/", json=ctr_payload(world))
    assert response.status_code == 201, response.text[:2000]
    return response.json()["number"]


def pause_replay(replica: Replica) -> None:
    replica.query("SELECT pg_wal_replay_pause()")
    wait_for(
        lambda: replica.query("SELECT pg_get_wal_replay_pause_state()")[0] == "paused",
        "a réplica pausar",
    )


# --- the heavy pages read from the replica ------------------------------------------------------


HEAVY_PAGES = {
    "/nucleo/": "ctr_ctr",
    "/nucleo/mapa/": "ctr_ctr",
    "/nucleo/exportar/ctrs.csv": "ctr_ctr",
    "/ogc/collections/facilities/items": "pev_network_receivingfacility",
    "/ogc/collections/ctr-origins/items": "ctr_ctr",
}


def test_the_replica_streams_through_a_slot_that_keeps_its_wal(replica):
    """Without a slot, a primary busy with the rest of the suite recycled WAL the backup had not
    streamed yet, and the replica was never made."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT active, restart_lsn IS NOT NULL FROM pg_replication_slots WHERE slot_name = %s",
            [f"{REPLICA_SLOT_PREFIX}{replica.port}"],
        )
        assert cursor.fetchall() == [(True, True)]


def test_the_heavy_pages_read_from_the_replica_and_the_others_do_not(replica, servers, live):
    server = servers["tolerant"]
    nucleo = signed_in(server, live.nucleo)
    for path, table in HEAVY_PAGES.items():
        offset = replica.log_size()
        response = nucleo.get(path)
        assert response.status_code == 200, (path, response.text[:1000])
        # The replica logs a statement as it receives it: before the response, if at all.
        assert table in replica.statements_since(offset, server.application), path
    # A transporter's own list is not marked: its queries stay on the primary.
    alfa = signed_in(server, live.alfa_user)
    offset = replica.log_size()
    assert alfa.get("/transportador/ctrs/").status_code == 200
    assert "ctr_ctr" not in replica.statements_since(offset, server.application)


def test_what_the_replica_has_not_replayed_is_missing_there(replica, servers, live):
    """The control of the next test: another client, without the writer's cookie, is answered
    by the paused replica, which does not have the new CTR yet."""
    server = servers["tolerant"]
    pause_replay(replica)
    number = issue(with_token(server, live.alfa_user), live)
    assert Browser(server).get(f"/verificar/{number}/").status_code == 404
    replica.query("SELECT pg_wal_replay_resume()")
    wait_for(
        lambda: Browser(server).get(f"/verificar/{number}/").status_code == 200,
        "a réplica retomada mostrar o CTR",
    )


def test_a_users_own_write_is_read_from_the_primary_while_the_replica_lags(replica, servers, live):
    server = servers["tolerant"]
    pause_replay(replica)
    transporter = with_token(server, live.alfa_user)
    number = issue(transporter, live)
    assert LSN_COOKIE in transporter.cookies  # the primary's WAL position after the write
    response = transporter.get(f"/verificar/{number}/")
    assert response.status_code == 200, response.text[:1000]
    assert number in response.text
    # Still paused: the replica did not answer it.
    assert replica.query("SELECT pg_get_wal_replay_pause_state()")[0] == "paused"
    assert Browser(server).get(f"/verificar/{number}/").status_code == 404


def test_a_forged_wal_position_is_ignored(replica, servers, live):
    """The cookie is signed: a client cannot push every read of its own to the primary."""
    server = servers["tolerant"]
    pause_replay(replica)
    number = issue(with_token(server, live.alfa_user), live)
    forged = Browser(server, **{LSN_COOKIE: "FFFFFFFF/FFFFFFFF"})
    assert forged.get(f"/verificar/{number}/").status_code == 404


def test_a_replica_lagging_past_the_threshold_is_left_for_the_primary(replica, servers, live):
    server = servers["strict"]  # one second of lag at most
    pause_replay(replica)
    number = issue(with_token(server, live.alfa_user), live)
    visitor = Browser(server)
    statuses = []
    logged = len(server.log_text())

    def shown():
        response = visitor.get(f"/verificar/{number}/")
        statuses.append(response.status_code)
        return response.status_code == 200 and number in response.text

    wait_for(shown, "o CTR aparecer quando a réplica passar do atraso tolerado")
    # No error on the way: the stale replica's 404 at most, then the primary's page.
    assert set(statuses) <= {200, 404}, statuses
    assert replica.query("SELECT pg_get_wal_replay_pause_state()")[0] == "paused"
    wait_for(lambda: "Réplica de leitura atrasada" in server.log_text()[logged:], "o log")


def test_a_stopped_replica_is_left_for_the_primary_and_taken_back(replica, servers, live):
    server = servers["tolerant"]
    nucleo = signed_in(server, live.nucleo)
    number = issue(with_token(server, live.alfa_user), live)
    caught_up(replica)
    assert nucleo.get("/nucleo/").status_code == 200
    logged = len(server.log_text())
    replica.stop()  # mid-test, with the server's connection to it open
    assert not replica.running()
    for path in ("/nucleo/", "/ogc/collections/facilities/items", f"/verificar/{number}/"):
        response = nucleo.get(path)
        assert response.status_code == 200, (path, response.text[:1000])
    assert number in nucleo.get(f"/verificar/{number}/").text
    assert "Réplica de leitura indisponível" in server.log_text()[logged:]
    # Back up: after CTR_REPLICA_RETRY_SECONDS the server reads from it again.
    replica.start()
    caught_up(replica)
    offset = replica.log_size()

    def reads_replica():
        assert nucleo.get("/nucleo/").status_code == 200
        return "ctr_ctr" in replica.statements_since(offset, server.application)

    wait_for(reads_replica, "o servidor voltar a ler da réplica")
