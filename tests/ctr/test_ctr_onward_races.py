"""Onward CTRs from one facility at once: each sees the stock the previous left; the
allocation rebuilt by readers at once is stored once."""

import threading

import pytest
from django.db import connection
from rest_framework.authtoken.models import Token

from ctr.custody import chain as custody
from ctr.models import CTR, CustodyAllocation, CustodyStale, FacilityOperator
from tests.builders import set_parameters
from tests.ctr.onward_world import inbound, onward, onward_payload
from tests.ctr.test_ctr_races import all_at_once, call
from tests.ctr_world import build_world, make_user
from tests.races import wait_until_blocked

pytestmark = pytest.mark.django_db(transaction=True)


def test_onward_ctrs_issued_at_once_never_ship_more_than_the_stock(live_server, frozen_today):
    world = build_world()
    set_parameters(world.town, sorting_tolerance_pct={"A": "0"})
    inbound(world, {"A": "10"}, received="10")
    second = make_user("operador2", facility=world.att)
    tokens = [Token.objects.create(user=u).key for u in (world.operator, second)]
    body = onward_payload(world, waste=[{"class": "A", "volume_m3": "3"}])

    results = all_at_once(5, lambda i: call(f"{live_server.url}/api/v1/ctrs/", tokens[i % 2], body))

    statuses = sorted(status for status, _ in results)
    assert statuses == [201, 201, 201, 422, 422], results
    refused = [b for s, b in results if s == 422]
    assert all(e["code"] == "OVER_FACILITY_STOCK" for b in refused for e in b["errors"])
    assert CTR.objects.filter(origin_facility=world.att).count() == 3
    assert FacilityOperator.objects.filter(facility=world.att).count() == 1


def test_readers_rebuilding_one_facility_at_once_store_its_allocation_once(frozen_today):
    """Five readers find the ATT stale together: one rebuilds, the others wait on its claim of
    the stale row and then read what it stored (no piece twice, none missing)."""
    world = build_world()
    inbound(world, {"A": "4"}, received="4")
    inbound(world, {"A": "3"}, received="3")
    onward(world, {"A": "5"})
    expected = sorted(piece(*row[:6]) for row in custody.allocation_rows([world.att.pk]))
    assert CustodyStale.objects.filter(facility=world.att).exists()

    def rebuild(_):
        try:
            return custody.refresh()
        finally:
            connection.close()

    rebuilt = all_at_once(5, rebuild)

    assert sorted(map(len, rebuilt)) == [0, 0, 0, 0, 1]
    stored = CustodyAllocation.objects.filter(facility=world.att)
    fields = ("facility_id", "waste_class", "inbound_id", "outbound_id", "processing_id")
    assert sorted(piece(*(getattr(p, f) for f in fields), p.volume_m3) for p in stored) == expected


def piece(facility, waste_class, inbound_line, outbound_line, processing, volume):
    """A piece comparable whatever its empty ends (None sorts with nothing)."""
    ends = (inbound_line or 0, outbound_line or 0, processing or 0)
    return (facility, waste_class, *ends, round(volume, 3))


def test_a_bulk_import_waits_for_an_onward_ctr_from_its_facility_and_sees_its_stock(
    frozen_today,
):
    """The import locks the facilities it ships from before it reads their stock, as
    ctr.services.issue_onward locks its one: issued while the other holds the lock, it finds
    the stock that one left. The onward CTR is issued only once the import waits on its lock
    (tests/races.py): an import that does not wait fails the test."""
    from django.db import connection, transaction

    from ctr import services
    from ctr.bulk import csv_import
    from tests.ctr.onward_world import onward_request
    from tests.ctr.test_ctr_bulk import csv_text, onward_row

    world = build_world()
    set_parameters(world.town, sorting_tolerance_pct={"A": "0"})
    inbound(world, {"A": "10"}, received="10")
    locked, results, threads = threading.Event(), {}, []

    def per_ctr():
        try:
            with transaction.atomic():
                services.lock_facility(world.att)
                locked.set()
                wait_until_blocked(threads[1:])  # the import, on the facility locked here
                request = onward_request(world, {"A": "6"})
                results["per_ctr"] = services.issue_onward(world.operator, world.beta.pk, request)
        finally:
            connection.close()

    def in_bulk():
        try:
            assert locked.wait(120), "o CTR de saída não travou a área"
            data = csv_text([onward_row(world, "A=6")]).encode()
            results["bulk"] = csv_import.import_ctrs(data, world.beta, world.operator)
        finally:
            connection.close()

    threads[:] = [threading.Thread(target=per_ctr), threading.Thread(target=in_bulk)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    (result,) = results["bulk"].rows
    assert [p.code for p in result.problems] == ["OVER_FACILITY_STOCK"]
    assert "estoque de 4 m³" in result.problems[0].message
    assert CTR.objects.filter(origin_facility=world.att).count() == 1
