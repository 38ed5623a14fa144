"""Onward CTRs from one facility at once (issue 14): each sees the stock the previous left."""

import pytest
from rest_framework.authtoken.models import Token

from ctr.models import CTR, FacilityOperator
from tests.ctr.onward_world import inbound, onward_payload
from tests.ctr.test_ctr_races import all_at_once, call
from tests.ctr_world import build_world, make_user

pytestmark = pytest.mark.django_db(transaction=True)


def test_onward_ctrs_issued_at_once_never_ship_more_than_the_stock(live_server, frozen_today):
    world = build_world()
    world.town.sorting_tolerance_pct = {"A": "0"}
    world.town.save()
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
