"""Point-in-time recovery (docs/operations.md, scripts/pitr.sh): a throwaway PostgreSQL cluster
of the test's own archives its WAL to a pgBackRest repository of its own; after a base backup,
CTRs are issued through the service code, a time is noted, more are issued; a restore into a
NEW cluster up to the noted time holds exactly the CTRs issued before it, with their numbers,
and the next issue there continues the numbering without a gap.

The cluster gets the test database's schema from a pg_dump of it (cheaper than running every
migration again); the CTRs are issued by tests/pitr_issue.py in a subprocess whose
DATABASE_URL is the throwaway cluster's. As root, the clusters and pgBackRest run as the
'postgres' user, as scripts/localdb.sh runs the project's cluster."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg2
import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
PG_BIN = Path(os.environ.get("CTR_PG_BINDIR", "/usr/lib/postgresql/15/bin"))
PITR = ROOT / "scripts" / "pitr.sh"
STANZA = "ctr_pitr_test"
AS_ROOT = os.getuid() == 0

pytestmark = [
    # The test database's schema is dumped, so it must exist; nothing is written in it.
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(shutil.which("pgbackrest") is None, reason="pgbackrest não instalado"),
]


def run(*command: str, env: dict | None = None, as_owner: bool = False) -> str:
    if as_owner and AS_ROOT:
        command = ("runuser", "-u", "postgres", "--", *command)
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, f"{command}: {result.stdout}\n{result.stderr}"
    return result.stdout


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Cluster:
    """A PostgreSQL cluster in `data` (made by initdb or by a restore), on a free port."""

    def __init__(self, data: Path):
        self.data = data
        self.port = free_port()

    def start(self) -> None:
        run(
            str(PG_BIN / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.data / "server.log"),
            "-w",
            "-t",
            "120",
            "-o",
            f"-p {self.port} -c unix_socket_directories={self.data} -c listen_addresses=127.0.0.1",
            "start",
            as_owner=True,
        )

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            with contextlib.suppress(AssertionError):
                run(
                    str(PG_BIN / "pg_ctl"),
                    "-D",
                    str(self.data),
                    "-m",
                    "immediate",
                    "stop",
                    as_owner=True,
                )

    def connect(self, dbname: str = "ctr"):
        # Local connections are trusted (initdb --auth-local=trust); only its owner's socket dir.
        return psycopg2.connect(dbname=dbname, user="postgres", host=str(self.data), port=self.port)

    def url(self) -> str:
        return f"postgis://postgres:throwaway@127.0.0.1:{self.port}/ctr"

    def query(self, sql: str):
        conn = self.connect()
        try:
            with conn.cursor() as cursor:
                cursor.execute(sql)
                return cursor.fetchall()
        finally:
            conn.close()


@pytest.fixture
def workdir():
    """A directory the 'postgres' user can reach (as root, pytest's tmp_path is private)."""
    path = Path(tempfile.mkdtemp(prefix="ctr-pitr-", dir="/var/tmp" if AS_ROOT else None))
    path.chmod(0o711)
    clusters: list[Cluster] = []
    try:
        yield path, clusters
    finally:
        for cluster in clusters:
            cluster.stop()
        shutil.rmtree(path, ignore_errors=True)


def new_cluster(workdir: Path, clusters: list, conf: Path) -> Cluster:
    data = workdir / "original"
    data.mkdir(mode=0o700)
    password = workdir / "pw"
    password.write_text("throwaway\n")
    if AS_ROOT:
        shutil.chown(data, "postgres")
        shutil.chown(password, "postgres")
    run(
        str(PG_BIN / "initdb"),
        "-D",
        str(data),
        "-U",
        "postgres",
        "--auth-local=trust",
        "--auth-host=scram-sha-256",
        f"--pwfile={password}",
        "-E",
        "UTF8",
        "--locale=C.UTF-8",
        as_owner=True,
    )
    cluster = Cluster(data)
    clusters.append(cluster)
    archive_command = run("bash", str(PITR), "archive-command", env=pitr_env(conf)).strip()
    with open(data / "postgresql.conf", "a") as settings:
        settings.write(f"fsync = off\narchive_mode = on\narchive_command = '{archive_command}'\n")
    run(
        "bash",
        str(PITR),
        "configure",
        str(workdir / "pgbackrest"),
        str(data),
        str(cluster.port),
        str(data),
        STANZA,
    )
    cluster.start()
    return cluster


def pitr_env(conf: Path) -> dict:
    return {**os.environ, "PITR_CONF": str(conf), "PITR_STANZA": STANZA}


def copy_test_database_into(cluster: Cluster, dump: Path) -> None:
    """The test database (migrated by pytest-django) dumped and restored into `cluster`."""
    s = connection.settings_dict
    env = {**os.environ, "PGPASSWORD": s["PASSWORD"] or ""}
    run(
        str(PG_BIN / "pg_dump"),
        "-Fc",
        "-f",
        str(dump),
        "-h",
        s["HOST"] or "127.0.0.1",
        "-p",
        str(s["PORT"] or 5432),
        "-U",
        s["USER"],
        s["NAME"],
        env=env,
    )
    admin = cluster.connect("postgres")
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute("CREATE DATABASE ctr")
    admin.close()
    env = {**os.environ, "PGPASSWORD": "throwaway"}
    run(
        str(PG_BIN / "pg_restore"),
        "--no-owner",
        "--exit-on-error",
        "-h",
        "127.0.0.1",
        "-p",
        str(cluster.port),
        "-U",
        "postgres",
        "-d",
        "ctr",
        str(dump),
        env=env,
    )


def issue(cluster: Cluster, *args: str) -> dict:
    env = {**os.environ, "DATABASE_URL": cluster.url()}
    env.pop("CTR_TEST_DB", None)
    return json.loads(run(sys.executable, "-m", "tests.pitr_issue", *args, env=env))


def wait_until_promoted(cluster: Cluster) -> None:
    deadline = time.monotonic() + 120
    while cluster.query("SELECT pg_is_in_recovery()")[0][0]:
        assert time.monotonic() < deadline, (cluster.data / "server.log").read_text()[-3000:]
        time.sleep(0.2)


def test_restore_to_a_point_in_time_holds_exactly_the_ctrs_issued_before_it(workdir):
    workdir, clusters = workdir
    conf = workdir / "pgbackrest" / "pgbackrest.conf"
    env = pitr_env(conf)
    original = new_cluster(workdir, clusters, conf)
    copy_test_database_into(original, workdir / "schema.dump")
    run("bash", str(PITR), "stanza-create", env=env)
    run("bash", str(PITR), "backup", "full", env=env)

    issued = issue(original, "before-and-after", "3")
    before, after = issued["before"], issued["after"]
    assert len(set(before + after)) == 6
    # Every WAL segment up to the second batch's commits is in the repository.
    run("bash", str(PITR), "check", env=env)
    original.stop()  # the original is lost; only the repository remains

    restored = Cluster(workdir / "restored")
    clusters.append(restored)
    run("bash", str(PITR), "restore", str(restored.data), issued["noted"], env=env)
    restored.start()
    wait_until_promoted(restored)

    rows = restored.query("SELECT number, sequence FROM ctr_ctr ORDER BY sequence")
    assert [number for number, _ in rows] == before
    sequences = [sequence for _, sequence in rows]
    assert sequences == list(range(sequences[0], sequences[0] + len(before)))
    # The numbering goes on from the last CTR kept: the next one takes the number that the
    # first lost CTR had, and leaves no gap.
    assert issue(restored, "next")["next"] == after[0]
