"""Data safety (docs/security.md): `make backup` dumps the database, `make restore` brings it
back into a fresh database with the same rows (counts of every table, checksums of the CTRs and
their event log), refuses to run without CONFIRM=1, and the migrations apply on a copy of a
database with the demonstration loaded without losing a row.

The event log's immutability at the database level is tested in tests/ctr/test_ctr_api.py
(test_events_cannot_be_updated_in_the_database, test_events_cannot_be_deleted_in_the_database)
and the access log's in tests/config/test_security_settings.py."""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from urllib.parse import quote

import psycopg2
import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client

from ctr import closing, services
from ctr.models import CTR, CTREvent
from ctr.rules import WasteLine
from tests.ctr_world import CPF_GENERATOR, TODAY, build_world
from tests.enforcement_world import ensure_frameworks

pytestmark = [pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
# Tables whose rows are compared one by one (an md5 of every row's text, in id order).
CHECKSUMMED = ("ctr_ctr", "ctr_ctrevent", "ctr_ctrwaste", "audit_accesslog")


def database_url(name: str) -> str:
    s = connection.settings_dict
    auth = quote(s["USER"], safe="")
    if s["PASSWORD"]:
        auth += ":" + quote(s["PASSWORD"], safe="")
    return f"postgis://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{name}"


def connect(name: str):
    s = connection.settings_dict
    return psycopg2.connect(
        dbname=name,
        user=s["USER"],
        password=s["PASSWORD"],
        host=s["HOST"] or "127.0.0.1",
        port=s["PORT"] or 5432,
    )


@contextlib.contextmanager
def fresh_database(suffix: str):
    """An empty database beside the test database, dropped afterwards."""
    name = f"{connection.settings_dict['NAME']}_{suffix}"
    admin = connect("postgres")
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}"')
        cursor.execute(f'CREATE DATABASE "{name}"')
    try:
        yield name
    finally:
        with admin.cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def make(*args: str, url: str, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "CONFIRM"}
    environment.update(DATABASE_URL=url, **env)
    return subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )


def snapshot(name: str) -> tuple[dict[str, int], dict[str, str]]:
    """Row counts of every table of the public schema, and checksums of CHECKSUMMED."""
    conn = connect(name)
    try:
        with conn.cursor() as cursor:
            cursor.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1"
            )
            tables = [row[0] for row in cursor.fetchall()]
            counts = {}
            for table in tables:
                cursor.execute(f'SELECT count(*) FROM "{table}"')
                counts[table] = cursor.fetchone()[0]
            sums = {}
            for table in (t for t in CHECKSUMMED if t in counts):
                cursor.execute(f"SELECT md5(string_agg(t::text, '|' ORDER BY t.id)) FROM {table} t")
                sums[table] = cursor.fetchone()[0]
        return counts, sums
    finally:
        conn.close()


def dump(tmp_path: Path) -> Path:
    result = make(
        "backup", f"BACKUP_DIR={tmp_path}", url=database_url(connection.settings_dict["NAME"])
    )
    assert result.returncode == 0, result.stderr
    file = Path(result.stdout.strip().splitlines()[-1])
    assert file.parent == tmp_path and file.name.startswith("ctr-") and file.suffix == ".dump"
    # Personal data inside: readable by its owner only.
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    assert not list(tmp_path.glob("*.partial"))
    return file


def some_ctrs_and_events():
    world = build_world()
    numbers = []
    for volume in ("3", "2", "4"):
        ctr = services.issue(
            world.alfa,
            world.alfa_user,
            services.IssueRequest(
                transport_date=TODAY,
                vehicle_plate="ABC1D23",
                equipment_code="C-01",
                origin=world.origin,
                destination=world.inside(world.att),
                waste=[WasteLine("A", Decimal(volume), "entulho de alvenaria")],
                generator=services.GeneratorData(name="Maria da Obra", document=CPF_GENERATOR),
                worksite=services.WorksiteData(
                    address="Rua das Flores, 10", location=world.origin, neighbourhood="Centro"
                ),
            ),
        )
        numbers.append(ctr.number)
    first, second, _ = CTR.objects.filter(number__in=numbers).order_by("number")
    closing.receive(first, world.operator, first.total_volume_m3)
    closing.cancel(second, world.alfa_user, "caçamba não foi retirada")
    client = Client()
    client.force_login(world.nucleo)
    assert client.get(f"/api/v1/ctrs/{first.number}/").status_code == 200  # an access-log row
    return world


def test_backup_restores_into_a_fresh_database_with_the_same_rows(tmp_path):
    some_ctrs_and_events()
    assert CTREvent.objects.count() == 5
    source = connection.settings_dict["NAME"]
    before_counts, before_sums = snapshot(source)
    file = dump(tmp_path)
    with fresh_database("restore") as target:
        result = make("restore", f"FILE={file}", url=database_url(target), CONFIRM="1")
        assert result.returncode == 0, result.stderr
        assert "restaurado" in result.stdout
        after_counts, after_sums = snapshot(target)
    assert after_counts == before_counts
    assert before_counts["ctr_ctr"] == 3 and before_counts["ctr_ctrevent"] == 5
    assert before_counts["audit_accesslog"] == 1
    assert after_sums == before_sums
    assert all(before_sums[t] for t in CHECKSUMMED)


def test_restore_refuses_without_confirmation(tmp_path):
    some_ctrs_and_events()
    file = dump(tmp_path)
    with fresh_database("refused") as target:
        result = make("restore", f"FILE={file}", url=database_url(target))
        assert result.returncode != 0
        assert "CONFIRM=1" in result.stderr
        counts, _ = snapshot(target)
        assert counts == {}  # nothing was restored into the empty database
    result = make("restore", url=database_url("nenhum"))
    assert result.returncode != 0 and "uso: make restore FILE=" in result.stderr


def test_restore_refuses_a_file_that_is_not_a_dump(tmp_path):
    bogus = tmp_path / "ctr-falso.dump"
    bogus.write_bytes(b"not a dump")
    with fresh_database("bogus") as target:
        result = make("restore", f"FILE={bogus}", url=database_url(target), CONFIRM="1")
        assert result.returncode != 0
        assert "Não é um dump válido" in result.stderr


@pytest.mark.usefixtures("frozen_today")  # the demo network's licenses have fixed dates
def test_migrations_apply_on_a_copy_of_the_demo_database(tmp_path):
    # The whole demo, its fiscalization too: that needs the penalty frameworks the migrations
    # load, which an earlier transactional test may have flushed.
    ensure_frameworks()
    call_command("load_demo", verbosity=0)
    assert CTR.objects.count() > 100
    file = dump(tmp_path)
    with fresh_database("migrate") as copy:
        assert make("restore", f"FILE={file}", url=database_url(copy), CONFIRM="1").returncode == 0
        before = snapshot(copy)
        env = {**os.environ, "DATABASE_URL": database_url(copy)}
        env.pop("CTR_TEST_DB", None)
        migrate = subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert migrate.returncode == 0, migrate.stdout + migrate.stderr
        check = subprocess.run(
            [sys.executable, "manage.py", "migrate", "--check", "--plan"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert check.returncode == 0, check.stdout + check.stderr
        after = snapshot(copy)
    counts_before, sums_before = before
    counts_after, sums_after = after
    # django_migrations gains the rows of whatever was applied; nothing else changes.
    counts_before.pop("django_migrations")
    counts_after.pop("django_migrations")
    assert counts_after == counts_before
    assert sums_after == sums_before
