"""Races ordered by locks, never by sleeps.

A race test holds a lock the callers need (a row's, a facility's, a key's) and lets go only once
PostgreSQL shows them waiting on it: the order is the one the test means on any machine, however
slow or busy. A guard taken away (select_for_update, a unique key, the lock on a facility) shows
as a caller that never waits, and the wait fails with a clear message instead of the race passing
by chance."""

from __future__ import annotations

import threading
import time

from django.db import connection, transaction

# Only this test database's backends: under pytest-xdist each worker has its own.
LOCK_WAITERS = (
    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
    "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
)


def wait_until_blocked(threads: list[threading.Thread], timeout: float = 60) -> None:
    """Until each of `threads` waits on a lock (held by the caller) in its backend.

    Polls with the calling thread's connection, inside its transaction if it has one."""
    count, deadline = len(threads), time.monotonic() + timeout
    with connection.cursor() as cursor:
        while True:
            # pg_stat_activity is read once per transaction unless its snapshot is dropped.
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            cursor.execute(LOCK_WAITERS)
            if cursor.fetchone()[0] >= count:
                return
            if time.monotonic() > deadline or not all(t.is_alive() for t in threads):
                raise AssertionError(f"{count} chamada(s) deveria(m) aguardar a trava")
            time.sleep(0.01)


def both_while_held(row, work, count: int = 2) -> list:
    """Run `work(i)` in `count` threads started while this test holds `row`'s lock, released
    once all of them wait on it; their results in order."""
    results: list = [None] * count

    def run(i):
        try:
            results[i] = work(i)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    with transaction.atomic():
        type(row).objects.select_for_update().get(pk=row.pk)
        for thread in threads:
            thread.start()
        wait_until_blocked(threads)
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)
    return results
