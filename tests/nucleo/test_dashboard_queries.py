"""The Núcleo's dashboard is built in a fixed number of queries (the server builds it in ≤ 1 s on
the demo, bench/p7_dashboard.py): one more area holding stock, one more transporter, one more bacia
add rows, not queries."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from pev_network.models import CatchmentBasin
from tests.builders import multi, square
from tests.ctr_world import ctr_payload
from tests.nucleo.test_nucleo_dashboard import nucleo, world  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen_today")]
PAGE = "/nucleo/?date_from=2026-09-01&date_to=2026-11-30"
# Session, user, jurisdiction, the form's choices, the figures (one query each, the areas'
# stock in two whatever their number), the menu's counts. A new query on the page has to
# raise this on purpose.
MOST_QUERIES = 40


def queries(client) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(PAGE)
    assert response.status_code == 200
    return len(captured)


def test_more_areas_with_stock_add_no_query(world):  # noqa: F811
    client = nucleo(world)
    client.get(PAGE)  # the custody cache and the deadlines' count warmed, as on any later view
    before = queries(client)
    assert before <= MOST_QUERIES
    # A second area of passage with stock (the PEV), received by its own operator; and a
    # second bacia.
    issuer, operator = APIClient(), APIClient()
    issuer.force_authenticate(world.alfa_user)
    operator.force_authenticate(world.pev_operator)
    for date in ("2026-10-12", "2026-11-06"):
        # Lei 3.978/2007 art. 12 §1: a PEV takes small loads.
        payload = ctr_payload(
            world, world.pev, transport_date=date, waste=[{"class": "A", "volume_m3": "1"}]
        )
        issued = issuer.post("/api/v1/ctrs/", payload, format="json")
        assert issued.status_code == 201, issued.content
        number = issued.json()["number"]
        received = operator.post(
            f"/api/v1/ctrs/{number}/receive/", {"received_volume_m3": "1"}, format="json"
        )
        assert received.status_code == 200, received.content
    CatchmentBasin.objects.create(
        municipality=world.town, name="Bacia Norte",
        area=multi(square(world.origin.coords[0], world.origin.coords[1] + 0.01, 50)),
    )  # fmt: skip
    client.get(PAGE)
    html = client.get(PAGE).content.decode()
    assert html.count("PEV") > 0 and "Bacia Norte" in html
    assert queries(client) == before
