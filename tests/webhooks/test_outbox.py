"""The outbox is written in the event's transaction: it commits and rolls
back with the event; one INSERT per event when an endpoint hears it, no query when none does;
the CSV import writes a chunk's rows in one statement."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from ctr import closing
from ctr import services as ctr_services
from ctr.models import CTR
from tests.ctr.test_ctr_bulk import (
    build_mixed_world,
    bulk_results,
    csv_text,
    mixed_rows,
    parsed_rows,
)
from tests.ctr_world import build_world, issue_hours_ago
from tests.webhooks.world import alfa_endpoint, att_endpoint
from webhooks import outbox, services
from webhooks.models import Delivery, EventType

pytestmark = pytest.mark.django_db

URL = "http://127.0.0.1:9/ctr"  # never called here


@pytest.fixture
def world(frozen_today):
    return build_world()


def test_the_row_commits_with_the_event(world):
    alfa_endpoint(world, URL)
    ctr = issue_hours_ago(world, 1)
    row = Delivery.objects.get()
    assert (row.ctr_id, row.event_type, row.ctr_status) == (ctr.pk, "ctr.issued", "issued")


def test_the_row_rolls_back_with_the_event(world):
    alfa_endpoint(world, URL, events=[EventType.CANCELLED])
    ctr = issue_hours_ago(world, 1)
    with pytest.raises(RuntimeError), transaction.atomic():
        closing.cancel(ctr, world.alfa_user, "Obra adiada")
        assert Delivery.objects.filter(event_type="ctr.cancelled").count() == 1
        raise RuntimeError("a operação falhou depois do evento")
    assert not Delivery.objects.exists()
    ctr.refresh_from_db()
    assert ctr.status == "issued"


def test_an_event_nobody_hears_costs_no_query(world):
    att_endpoint(world, URL, events=[EventType.REFUSED])  # another event of the ATT
    ctr = issue_hours_ago(world, 1)
    outbox.subscriptions.keys()  # the copy in memory, as a running process has it
    with CaptureQueriesContext(connection) as queries:
        closing.receive(ctr, world.operator, Decimal("3"))
    assert not [q for q in queries.captured_queries if "webhooks_" in q["sql"]]
    assert not Delivery.objects.exists()


def test_an_event_heard_costs_one_insert(world):
    att_endpoint(world, URL, events=[EventType.RECEIVED])
    alfa_endpoint(world, URL, events=[EventType.RECEIVED])
    ctr = issue_hours_ago(world, 1)
    outbox.subscriptions.keys()
    with CaptureQueriesContext(connection) as queries:
        closing.receive(ctr, world.operator, Decimal("3"))
    ours = [q["sql"] for q in queries.captured_queries if "webhooks_" in q["sql"]]
    assert len(ours) == 1 and ours[0].lstrip().startswith("INSERT INTO webhooks_delivery")
    assert Delivery.objects.filter(event_type="ctr.received").count() == 2


def test_a_disabled_endpoint_gets_no_rows(world):
    endpoint = alfa_endpoint(world, URL)
    services.set_active(endpoint, world.alfa_user, False)
    issue_hours_ago(world, 1)
    assert not Delivery.objects.exists()


def test_an_onward_ctr_is_its_own_event_for_the_facility_it_leaves(world):
    from tests.ctr.onward_world import onward_request

    att_endpoint(world, URL, events=[EventType.ONWARD_ISSUED])
    closing.receive(issue_hours_ago(world, 1), world.operator, Decimal("3"))
    onward = ctr_services.issue_onward(
        world.operator, world.beta.pk, onward_request(world, {"A": "1"})
    )
    row = Delivery.objects.get()
    assert (row.ctr_id, row.event_type) == (onward.pk, "ctr.onward_issued")


def test_the_csv_import_writes_a_chunks_rows_in_one_statement(frozen_today):
    world, f = build_mixed_world()
    alfa_endpoint(world, URL)
    att_endpoint(world, URL, events=[EventType.ISSUED])
    rows = parsed_rows(csv_text(mixed_rows(f)["alfa"][:80]))
    results = bulk_results(rows, f["alfa"], world.alfa_user, dry_run=False, chunk_rows=40)
    issued = CTR.objects.filter(number__in=[r.number for r in results if r.number])
    to_att = issued.filter(destination_facility=world.att).count()
    assert issued.exists()
    rows = Delivery.objects.filter(event_type="ctr.issued")
    assert rows.filter(endpoint__transporter=world.alfa).count() == issued.count()
    assert rows.filter(endpoint__facility=world.att).count() == to_att
    # One event id per CTR, whichever endpoint hears it.
    for ctr_id, ids in _ids_by_ctr(rows).items():
        assert len(ids) == 1, ctr_id


def _ids_by_ctr(rows) -> dict:
    found: dict = {}
    for ctr_id, event_id in rows.values_list("ctr_id", "event_id"):
        found.setdefault(ctr_id, set()).add(event_id)
    return found
