"""Emptying the test database after a transactional test, at the cost of what the test wrote.

Django's TransactionTestCase ends each test with `flush`: one TRUNCATE of every table of the
project (~80, each with its indexes and TOAST table, every one given new files) and then the
post_migrate signal, which deletes and re-creates every content type and permission. On this
project that is ~0.5 s per test, paid by every browser and live-server test (~500 of them).

A test writes to a handful of tables. Here the tables that hold rows are found in one
statement, and only those are emptied with DELETE, with triggers off for the transaction
(`session_replication_role = replica`): the append-only triggers of the event and access logs
refuse a DELETE, and foreign keys need no checking when every row of every table goes. The
content types and permissions are left in place when the test did not change them, so
post_migrate has nothing to re-create; when it did, they are emptied and re-created as
`flush` does. What a test finds at its start is the same as after `flush`: every project table
empty except the content types and permissions that migrating creates.

Django's own `flush` still runs where this would not be the same or not be cheaper: a test
that asks for its sequences reset, for serialized rollback or for a subset of apps; a table
with thousands of rows (TRUNCATE's cost does not grow with rows, DELETE's does); a role that
may not turn triggers off.
"""

from __future__ import annotations

import contextlib
import io

from django.core.management import call_command
from django.core.management.sql import emit_post_migrate_signal
from django.db import connections, transaction
from django.test import TransactionTestCase

# Past this many rows in one table, TRUNCATE of everything is the cheaper way.
MOST_ROWS_DELETED = 2000

# Created by post_migrate from the model registry, not by the tests: kept when unchanged.
REGISTRY_TABLES = ("django_content_type", "auth_permission")

_django_fixture_teardown = TransactionTestCase._fixture_teardown
# Per database alias: the registry tables' contents as post_migrate leaves them.
_registry_fingerprints: dict[str, str] = {}
_may_disable_triggers: dict[str, bool] = {}


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _registry_fingerprint(cursor) -> str:
    cursor.execute(
        "SELECT md5(coalesce((SELECT string_agg(t::text, ',' ORDER BY t.id) "
        "FROM django_content_type t), '') || '|' || "
        "coalesce((SELECT string_agg(p::text, ',' ORDER BY p.id) FROM auth_permission p), ''))"
    )
    return cursor.fetchone()[0]


def _rows_per_table(cursor, tables: list[str]) -> dict[str, int]:
    """Rows of each table that has any, counted up to MOST_ROWS_DELETED + 1."""
    counts = " UNION ALL ".join(
        f"SELECT %s, (SELECT count(*) FROM (SELECT FROM {_quoted(table)} "
        f"LIMIT {MOST_ROWS_DELETED + 1}) AS some_rows)"
        for table in tables
    )
    cursor.execute(f"SELECT * FROM ({counts}) AS counted(name, n) WHERE n > 0", tables)
    return dict(cursor.fetchall())


def _can_disable_triggers(alias: str, cursor) -> bool:
    if alias not in _may_disable_triggers:
        cursor.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
        row = cursor.fetchone()
        _may_disable_triggers[alias] = bool(row and row[0])
    return _may_disable_triggers[alias]


def empty_database(alias: str) -> bool:
    """Empty the database of `alias` the cheap way; False where Django's flush must do it."""
    connection = connections[alias]
    if connection.vendor != "postgresql":
        return False
    tables = connection.introspection.django_table_names(only_existing=True, include_views=False)
    with transaction.atomic(using=alias), connection.cursor() as cursor:
        if not _can_disable_triggers(alias, cursor):
            return False
        rows = _rows_per_table(cursor, tables)
        if any(n > MOST_ROWS_DELETED for n in rows.values()):
            return False
        registry_changed = alias not in _registry_fingerprints or (
            _registry_fingerprint(cursor) != _registry_fingerprints[alias]
        )
        emptied = [t for t in rows if registry_changed or t not in REGISTRY_TABLES]
        if emptied:
            cursor.execute("SET LOCAL session_replication_role = replica")
            cursor.execute("; ".join(f"DELETE FROM {_quoted(table)}" for table in emptied))
    if registry_changed:
        emit_post_migrate_signal(0, False, alias)
        with connection.cursor() as cursor:
            _registry_fingerprints[alias] = _registry_fingerprint(cursor)
    return True


def empty_everything(alias: str) -> None:
    """The database of `alias` as after migrating: the cheap way, or Django's flush."""
    if not empty_database(alias):
        # What TransactionTestCase does for one database in this case.
        call_command("flush", verbosity=0, interactive=False, database=alias, reset_sequences=False)
        # The registry was re-created with new ids: taken again at the next emptying.
        _registry_fingerprints.pop(alias, None)


@contextlib.contextmanager
def as_it_was(alias: str = "default"):
    """The database of `alias` back to what it holds now once the block is done, whatever the
    block committed: emptied, then the rows it held before (what the data migrations load: the
    penalty frameworks, the UFESP values; the tests in a transaction need them) copied back.
    For a world committed for a class of tests, where a transactional test's emptying would
    leave the next tests of its process without those rows."""
    connection = connections[alias]
    tables = connection.introspection.django_table_names(only_existing=True, include_views=False)
    saved: dict[str, str] = {}
    with transaction.atomic(using=alias), connection.cursor() as cursor:
        for table in _rows_per_table(cursor, tables):
            copied = io.StringIO()
            cursor.copy_expert(f"COPY {_quoted(table)} TO STDOUT", copied)
            saved[table] = copied.getvalue()
    try:
        yield
    finally:
        empty_everything(alias)
        with transaction.atomic(using=alias), connection.cursor() as cursor:
            cursor.execute("SET LOCAL session_replication_role = replica")
            # The registry's tables may have been kept (unchanged): those stay as they are.
            still_there = _rows_per_table(cursor, list(saved)) if saved else {}
            for table, rows in saved.items():
                if table not in still_there:
                    cursor.copy_expert(f"COPY {_quoted(table)} FROM STDIN", io.StringIO(rows))


def _fixture_teardown(self):
    if self.reset_sequences or self.serialized_rollback or self.available_apps is not None:
        return _django_fixture_teardown(self)
    for alias in self._databases_names(include_mirrors=False):
        empty_everything(alias)


def install() -> None:
    TransactionTestCase._fixture_teardown = _fixture_teardown
