"""The benchmarks' own database: ``ctr_bench`` beside the application's, created with PostGIS
and migrated, so that the demo's data is never touched."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg2
from psycopg2 import sql

ROOT = Path(__file__).resolve().parent.parent
BENCH_DB = "ctr_bench"


class BenchDatabaseError(Exception):
    pass


def _local_cluster_url() -> str:
    """Start the project-local cluster (scripts/localdb.sh) with the bench database in it."""
    env = {**os.environ, "CTR_PG_DB": BENCH_DB}
    script = str(ROOT / "scripts" / "localdb.sh")
    subprocess.run(["bash", script, "start"], check=True, env=env)
    return subprocess.run(
        ["bash", script, "url"], check=True, env=env, capture_output=True, text=True
    ).stdout.strip()


def bench_url() -> str:
    """BENCH_DATABASE_URL if given; else DATABASE_URL with the database renamed ctr_bench;
    else the project-local cluster's ctr_bench."""
    explicit = os.environ.get("BENCH_DATABASE_URL", "").strip()
    if explicit:
        return explicit
    base = os.environ.get("DATABASE_URL", "").strip()
    if not base:
        return _local_cluster_url()
    parts = urlsplit(base)
    return urlunsplit(parts._replace(path=f"/{BENCH_DB}"))


def masked(url: str) -> str:
    parts = urlsplit(url)
    if parts.password:
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
        parts = parts._replace(netloc=netloc)
    return urlunsplit(parts)


def _connect(url: str, dbname: str | None = None):
    parts = urlsplit(url)
    if dbname:
        parts = parts._replace(path=f"/{dbname}")
    return psycopg2.connect(urlunsplit(parts._replace(scheme="postgresql")))


def ensure_database(url: str) -> None:
    """Create the database (from the server's `postgres` database) and PostGIS, if missing."""
    name = urlsplit(url).path.lstrip("/")
    if not name:
        raise BenchDatabaseError(f"A URL do banco de benchmark não tem o nome: {masked(url)}")
    try:
        admin = _connect(url, "postgres")
    except psycopg2.OperationalError as exc:
        raise BenchDatabaseError(f"Não consegui conectar a {masked(url)}: {exc}") from exc
    admin.autocommit = True
    try:
        with admin.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
            if cursor.fetchone() is None:
                cursor.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    finally:
        admin.close()
    conn = _connect(url)
    conn.autocommit = True
    try:
        with conn.cursor() as cursor:
            cursor.execute("CREATE EXTENSION IF NOT EXISTS postgis")
    finally:
        conn.close()


def configure_django(url: str) -> None:
    """Point Django at the bench database, as in production (DEBUG off), then set it up and
    migrate."""
    app_url = os.environ.get("DATABASE_URL", "").strip()
    if app_url == url and urlsplit(url).path != f"/{BENCH_DB}":
        raise BenchDatabaseError(
            "BENCH_DATABASE_URL é o banco da aplicação; use um banco separado (ex.: ctr_bench)."
        )
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["DJANGO_DEBUG"] = "false"
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-" + secrets.token_urlsafe(32))
    hosts = os.environ.get("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost")
    os.environ["DJANGO_ALLOWED_HOSTS"] = f"{hosts},testserver"

    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", interactive=False, verbosity=0)
    call_command("createcachetable", verbosity=0)


def _opened(url: str, title: str, say: Callable[[str], None]) -> str | None:
    """`url` created, migrated and Django pointed at it; None (with the reason on stderr) when
    it cannot be."""
    say(f"{title}: {masked(url)}")
    try:
        ensure_database(url)
        configure_django(url)
    except BenchDatabaseError as exc:
        print(exc, file=sys.stderr)
        return None
    return url


def open_bench(say: Callable[[str], None]) -> str | None:
    """The bench database (bench_url), ready; None when it cannot be."""
    return _opened(bench_url(), "Banco de benchmark", say)


def own_database(variable: str, name: str, label: str, say: Callable[[str], None]) -> str | None:
    """For a benchmark with a database of its own (P1, P6): the URL in `variable`, else the
    bench database's server with `name`; created, migrated and Django pointed at it. None
    (with the reason on stderr) when it cannot be."""
    url = os.environ.get(variable, "").strip() or urlunsplit(
        urlsplit(bench_url())._replace(path=f"/{name}")
    )
    return _opened(url, f"Banco do benchmark {label}", say)


def settle(say: Callable[[str], None]) -> None:
    """Freshly generated data in the state of a database in use: every table the generation
    wrote vacuumed and analysed, not only the big ones (in one run autovacuum of the small
    ones, transporters, vehicles, worksites…, started during the São Paulo page, which came
    out at 2 s instead of 0.6 s; and their statistics were stale); and checkpointed (a million
    fresh rows leave the next checkpoint a few GB of pages to write: written now, they do not
    land in the middle of a measurement)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE)")
    checkpoint(say)


def warm(say: Callable[[str], None]) -> None:
    """The database's pages in the operating system's cache before a measurement, as in a
    database in use: reused data sits cold on disk after a while (in one run the lone
    point-in-polygon request's p99 was 575 ms and an issue's INSERT waited 515 ms on reads of
    ctr_ctr's index pages); and a checkpoint, so that no pending write lands in the middle.
    pg_prewarm ('read' mode: into the OS cache, not shared_buffers) ships with PostgreSQL."""
    from django.db import DatabaseError, connection, transaction

    started = time.perf_counter()
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
            cursor.execute(
                "SELECT coalesce(sum(pg_prewarm(c.oid, 'read')), 0) FROM pg_class c "
                "WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'i', 't')"
            )
            blocks = cursor.fetchone()[0]
    except DatabaseError as exc:
        say(f"pg_prewarm indisponível ({exc.__class__.__name__}): sigo com o cache como está.")
        return
    checkpoint(say)
    say(f"Cache aquecido: {blocks * 8 // 1024} MB lidos em {time.perf_counter() - started:.1f} s.")


def checkpoint(say: Callable[[str], None]) -> None:
    """Write every pending page now, not in the middle of a measurement."""
    from django.db import DatabaseError, connection, transaction

    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("CHECKPOINT")
    except DatabaseError:
        say("CHECKPOINT recusado (precisa de superusuário ou pg_checkpoint): sigo sem.")
