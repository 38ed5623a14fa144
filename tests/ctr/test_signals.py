"""ctr.signals: the apps above ctr hear of every CTR event inside the transaction that
writes it (an outbox row written with the event is never lost)."""

from __future__ import annotations

import contextlib
from decimal import Decimal

import pytest
from django.db import connection, transaction

from ctr import closing, signals
from ctr.models import CTR, CTRAction
from tests.ctr.test_ctr_bulk import (
    build_mixed_world,
    bulk_results,
    csv_text,
    mixed_rows,
    parsed_rows,
)
from tests.ctr_world import build_world, issue_hours_ago

pytestmark = pytest.mark.django_db


@contextlib.contextmanager
def received(signal):
    heard = []

    def receiver(sender, **kwargs):
        heard.append({**kwargs, "in_atomic": connection.in_atomic_block})

    signal.connect(receiver)
    try:
        yield heard
    finally:
        signal.disconnect(receiver)


def test_every_event_is_announced_inside_its_transaction(frozen_today):
    world = build_world()
    with received(signals.event_recorded) as heard:
        ctr = issue_hours_ago(world, 1)
        closing.receive(ctr, world.operator, Decimal("3"))
    assert [h["event"].action for h in heard] == [CTRAction.ISSUE, CTRAction.RECEIVE]
    assert all(h["event"].ctr_id == ctr.pk for h in heard)
    assert all(h["in_atomic"] for h in heard)


def test_a_rolled_back_operation_takes_the_receivers_rows_with_it(frozen_today):
    world = build_world()
    ctr = issue_hours_ago(world, 1)

    def fail_after_write(sender, event, **kwargs):
        raise RuntimeError("o receptor falhou")

    signals.event_recorded.connect(fail_after_write)
    try:
        with pytest.raises(RuntimeError), transaction.atomic():
            closing.cancel(ctr, world.alfa_user, "Obra adiada")
    finally:
        signals.event_recorded.disconnect(fail_after_write)
    ctr.refresh_from_db()
    assert ctr.status == "issued" and ctr.events.count() == 1


def test_the_csv_import_announces_each_chunk_with_its_table(frozen_today):
    world, f = build_mixed_world()
    rows = parsed_rows(csv_text(mixed_rows(f)["alfa"][:120]))
    announced: list[dict] = []

    def collect(sender, cursor, table, actor_id, at, **kwargs):
        # What a receiver reads from the table while it is there: the chunk's new CTRs.
        cursor.execute(f"SELECT c.number FROM {table} t JOIN ctr_ctr c ON c.id = t.id")
        numbers = {number for (number,) in cursor.fetchall()}
        announced.append(
            {"numbers": numbers, "actor": actor_id, "in_atomic": connection.in_atomic_block}
        )

    signals.ctrs_imported.connect(collect)
    try:
        results = bulk_results(rows, f["alfa"], world.alfa_user, dry_run=False, chunk_rows=40)
    finally:
        signals.ctrs_imported.disconnect(collect)
    issued = {r.number for r in results if r.number}
    assert issued and len(announced) >= 2
    assert set().union(*(a["numbers"] for a in announced)) == issued
    assert all(a["in_atomic"] and a["actor"] == world.alfa_user.pk for a in announced)


def test_a_dry_run_announces_nothing(frozen_today):
    world, f = build_mixed_world()
    rows = parsed_rows(csv_text(mixed_rows(f)["alfa"][:40]))
    with received(signals.ctrs_imported) as heard:
        bulk_results(rows, f["alfa"], world.alfa_user, dry_run=True)
    assert heard == [] and not CTR.objects.exists()
