"""A request still running when a live-server test ends must not abort the flush that cleans
the database for the next test (tests/quiet_database.py): CI once lost a run that way, the
flush aborted as a deadlock victim and the next test met the last one's transporter."""

from __future__ import annotations

import contextlib
import threading

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, connections

from ctr.models import Transporter
from tests import quiet_database
from tests.quiet_database import busy_other_backends, settle_other_connections

pytestmark = pytest.mark.usefixtures("transactional_db")


class OtherConnection:
    """A second connection to the test database, as a live-server request thread has: its own
    transaction, holding what it wrote until it commits."""

    def __init__(self):
        self.connection = connections.create_connection("default")
        self.connection.set_autocommit(False)
        self.cursor = self.connection.cursor()

    def insert_transporter(self, document: str) -> None:
        self.cursor.execute(
            "INSERT INTO ctr_transporter (name, document, is_self_generator) "
            "VALUES ('Em andamento', %s, false)",
            [document],
        )

    def pid(self) -> int:
        self.cursor.execute("SELECT pg_backend_pid()")
        return self.cursor.fetchone()[0]

    def close(self) -> None:
        # Its backend may have been ended by the server: then nothing is left to close.
        with contextlib.suppress(Exception):
            self.connection.close()


@pytest.fixture
def other():
    connection = OtherConnection()
    yield connection
    connection.close()


def wait_for_flush_to_wait_on_a_lock(flushing: threading.Thread) -> None:
    while table_the_flush_holds() is None:
        assert flushing.is_alive(), "a limpeza terminou sem esperar pela linha travada"
        threading.Event().wait(0.02)


TABLE_THE_FLUSH_HOLDS = (
    "SELECT l.relation::regclass::text FROM pg_locks l "
    "JOIN pg_stat_activity a ON a.pid = l.pid "
    "WHERE a.datname = current_database() AND a.query LIKE 'TRUNCATE%%' "
    "AND l.granted AND l.mode = 'AccessExclusiveLock' AND l.relation IS NOT NULL "
    "LIMIT 1"
)


def table_the_flush_holds(cursor=None) -> str | None:
    if cursor is None:
        with connection.cursor() as cursor:
            return table_the_flush_holds(cursor)
    cursor.execute("SELECT pg_stat_clear_snapshot()")
    cursor.execute(TABLE_THE_FLUSH_HOLDS)
    row = cursor.fetchone()
    return row[0] if row else None


def test_a_request_holding_a_row_then_reading_a_table_the_flush_holds_aborts_the_flush(other):
    """The failure itself, without the settling: a deadlock PostgreSQL breaks by aborting the
    flush (it waited first)."""
    other.insert_transporter("11222333000181")
    # PostgreSQL looks for a deadlock once, deadlock_timeout after a wait begins, and the side
    # that looks first while the cycle exists is aborted. With the default 1 s, a loaded
    # machine (a CI pass once) formed the cycle after the flush had looked and found none, and
    # the request was aborted instead. The flush looks after 6 s (the request here reads within
    # well under that) and the request only after 10 min: the flush is the victim, as in the
    # CI failure this reproduces.
    other.cursor.execute("SET deadlock_timeout = '10min'")
    outcome: dict = {}

    def flush():
        try:
            with connection.cursor() as cursor:
                cursor.execute("SET deadlock_timeout = '6s'")
            call_command("flush", interactive=False, verbosity=0)
        except CommandError as error:
            outcome["error"] = error
        finally:
            connections.close_all()

    flushing = threading.Thread(target=flush)
    flushing.start()
    wait_for_flush_to_wait_on_a_lock(flushing)
    other.cursor.execute(f"SELECT count(*) FROM {table_the_flush_holds()}")
    other.connection.commit()
    flushing.join(30)
    assert "couldn't be flushed" in str(outcome["error"])
    assert Transporter.objects.filter(document="11222333000181").exists()


def test_settling_ends_a_connection_that_holds_a_row_and_the_flush_then_succeeds(other):
    other.insert_transporter("11222333000181")
    pid = other.pid()
    assert busy_other_backends() == [pid]

    assert settle_other_connections(timeout=0.2) == [pid]

    call_command("flush", interactive=False, verbosity=0)
    assert busy_other_backends() == []
    assert not Transporter.objects.exists()


def test_settling_waits_for_a_request_that_finishes_and_ends_nothing(other, monkeypatch):
    other.insert_transporter("11222333000181")
    seen_busy = threading.Event()

    def busy_seen(busy=quiet_database.busy_other_backends):
        found = busy()
        if found:
            seen_busy.set()
        return found

    # The request finishes only once the settling has found it busy: no timer decides it.
    monkeypatch.setattr(quiet_database, "busy_other_backends", busy_seen)

    def finish():
        if seen_busy.wait(30):
            other.connection.connection.commit()  # the raw one: Django's refuses a 2nd thread

    finished = threading.Thread(target=finish)
    finished.start()

    assert settle_other_connections(timeout=30) == []

    finished.join()
    assert Transporter.objects.filter(document="11222333000181").exists()


class RequestStillRunning(threading.Thread):
    """What a browser closed at the end of a test can leave on the live server: a request that
    wrote a row, and reads a table the teardown's flush already holds as soon as that flush
    waits for its row."""

    def __init__(self):
        super().__init__(daemon=True)
        self.other = OtherConnection()
        self.other.insert_transporter("11222333000181")

    def run(self):
        cursor = self.other.cursor
        try:
            while True:
                held = table_the_flush_holds(cursor)
                if held:
                    cursor.execute(f"SELECT count(*) FROM {held}")
                    self.other.connection.commit()
                    return
                threading.Event().wait(0.02)
        except Exception:  # its backend ended by the teardown: what it should see
            pass
        finally:
            self.other.close()


@pytest.mark.settle_timeout(0.5)
def test_a_live_server_test_that_ends_with_a_request_holding_a_row_still_gets_its_flush(
    live_server,
):
    """Its teardown (tests/conftest.py) ends the request before the flush: without it the flush
    is aborted as a deadlock victim and this test errors in its teardown."""
    RequestStillRunning().start()
    assert busy_other_backends()
