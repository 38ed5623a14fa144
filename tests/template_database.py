"""The test databases of a run, copied from one migrated template.

Migrating an empty database costs ~12 s of CPU (Django renders the project state of every
migration); `make test` runs the suite in several processes (pytest-xdist), and each would
migrate its own database, all at once, on a 2-core machine. Instead the first process to get
here migrates a template database, under an advisory lock the others wait on, and every
process's test database is `CREATE DATABASE … TEMPLATE` of it (a file copy, a fraction of a
second). The test databases are the same as before: the template is what migrating gives.

The template belongs to one run (CTR_TEST_RUN_ID, set by the process that starts the run and
inherited by its workers): a later run, with other code, migrates its own. The process that
started the run drops it at the end; templates that a killed run left behind are dropped by
the next one, never those of a run still going on the same cluster.
"""

from __future__ import annotations

import contextlib
import os
import uuid

RUN_ID_ENV = "CTR_TEST_RUN_ID"
TEMPLATE_MARK = "_tpl_"


def start_run() -> None:
    """Called by the process that starts a run (not by xdist's workers, which inherit it). The
    run's id ends with that process's pid: a run still going on the same cluster keeps its
    template."""
    os.environ[RUN_ID_ENV] = f"{uuid.uuid4().hex[:8]}p{os.getpid()}"


def run_is_alive(run_id: str) -> bool:
    """Whether the process that started the run is still there (the cluster is this machine's,
    so is the process)."""
    pid = run_id.rpartition("p")[2]
    if not pid.isdigit():
        return False  # a run of before the pid was in its id
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def template_name(test_name: str, worker: str | None) -> str:
    base = test_name.removesuffix(f"_{worker}") if worker else test_name
    return f"{base}{TEMPLATE_MARK}{os.environ[RUN_ID_ENV]}"


@contextlib.contextmanager
def maintenance_cursor(settings_dict: dict):
    """A cursor on the cluster's `postgres` database, in autocommit (CREATE/DROP DATABASE)."""
    import psycopg2

    conn = psycopg2.connect(
        dbname="postgres",
        host=settings_dict["HOST"] or None,
        port=settings_dict["PORT"] or None,
        user=settings_dict["USER"],
        password=settings_dict["PASSWORD"],
    )
    conn.autocommit = True
    try:
        with conn.cursor() as cursor:
            yield cursor
    finally:
        conn.close()


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def clone_test_database(connection, worker: str | None) -> str:
    """Make this process's test database a copy of the run's template, migrating the template
    first if no process has yet. Returns the test database's name."""
    test_name = connection.creation._get_test_db_name()
    template = template_name(test_name, worker)
    with maintenance_cursor(connection.settings_dict) as cursor:
        # One lock per template: the first process migrates it, the others wait, then copy.
        cursor.execute("SELECT pg_advisory_lock(hashtext(%s))", [template])
        try:
            cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [template])
            if cursor.fetchone() is None:
                drop_templates_of_ended_runs(cursor, template)
                _migrate(connection, template)
            cursor.execute(f"DROP DATABASE IF EXISTS {_quoted(test_name)} WITH (FORCE)")
            cursor.execute(f"CREATE DATABASE {_quoted(test_name)} TEMPLATE {_quoted(template)}")
        finally:
            cursor.execute("SELECT pg_advisory_unlock(hashtext(%s))", [template])
    return test_name


def drop_templates_of_ended_runs(cursor, template: str) -> None:
    """The templates of the same test database that runs now ended left behind (killed before
    their end); another run still going on this cluster (a second `make test` in the same
    checkout) keeps its own, which its workers may still have to copy."""
    prefix = template.rsplit(TEMPLATE_MARK, 1)[0] + TEMPLATE_MARK
    cursor.execute(
        "SELECT datname FROM pg_database WHERE starts_with(datname, %s) AND datname <> %s",
        [prefix, template],
    )
    for (name,) in cursor.fetchall():
        if run_is_alive(name.removeprefix(prefix)):
            continue
        # A template someone is copying right now: left for the next run.
        with contextlib.suppress(Exception):
            cursor.execute(f"DROP DATABASE IF EXISTS {_quoted(name)}")


def _migrate(connection, template: str) -> None:
    """Django's own creation of a test database, under the template's name; the connection's
    settings are put back and it is closed (a template must have no one connected to copy)."""
    from django.conf import settings

    alias = connection.alias
    saved_name = connection.settings_dict["NAME"]
    test_settings = connection.settings_dict.setdefault("TEST", {})
    saved_test_name = test_settings.get("NAME")
    test_settings["NAME"] = template
    try:
        connection.creation.create_test_db(
            verbosity=0, autoclobber=True, serialize=False, keepdb=False
        )
    finally:
        connection.close()
        test_settings["NAME"] = saved_test_name
        connection.settings_dict["NAME"] = saved_name
        settings.DATABASES[alias]["NAME"] = saved_name


def drop_test_database(connection, name: str) -> None:
    connection.close()
    with maintenance_cursor(connection.settings_dict) as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {_quoted(name)} WITH (FORCE)")


def drop_template(settings_dict: dict) -> None:
    """At the end of the run, by the process that started it: the run's template, whatever the
    name of the test database it was made for."""
    with maintenance_cursor(settings_dict) as cursor:
        cursor.execute(
            "SELECT datname FROM pg_database WHERE right(datname, %s) = %s",
            [
                len(TEMPLATE_MARK) + len(os.environ[RUN_ID_ENV]),
                TEMPLATE_MARK + os.environ[RUN_ID_ENV],
            ],
        )
        for (name,) in cursor.fetchall():
            cursor.execute(f"DROP DATABASE IF EXISTS {_quoted(name)}")
