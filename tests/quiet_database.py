"""Before a test that used the live server flushes the database, the server's requests still in
flight finish (or are ended): a browser closed at the end of a test may leave one running (a
service worker's sync, a late fetch), and a request that holds a row lock while the flush's
TRUNCATE waits for it, then asks for a table the TRUNCATE already holds, is a deadlock that
PostgreSQL breaks by aborting the flush: the next test then finds the last one's rows."""

from __future__ import annotations

import time

from django.db import connection

# Busy backends of the test database other than this one: what a flush would wait for.
BUSY_OTHERS = (
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
    "AND backend_type = 'client backend' AND pid <> pg_backend_pid() "
    "AND state IS DISTINCT FROM 'idle'"
)


def busy_other_backends() -> list[int]:
    with connection.cursor() as cursor:
        # pg_stat_activity is read once per transaction unless its snapshot is dropped.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(BUSY_OTHERS)
        return [pid for (pid,) in cursor.fetchall()]


def settle_other_connections(timeout: float = 10.0) -> list[int]:
    """Wait up to `timeout` seconds for the other connections to the test database to finish
    what they are doing; end those that do not. The pids ended."""
    deadline = time.monotonic() + timeout
    while busy := busy_other_backends():
        if time.monotonic() > deadline:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_terminate_backend(pid) FROM unnest(%s) AS pid", [busy])
            return busy
        time.sleep(0.02)
    return []
