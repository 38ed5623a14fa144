"""Where the confirmation was given (Lei 3.978/2007 art. 13 p.ú.).

The ATT of the test world is a 100 m square whose south-west corner lies 1,500 m east of
ORIGIN; the municipality's GPS tolerance is 15 m. A reception carries the device's location;
beyond the tolerance it is a warning with the distance, never a refusal."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.test import Client

from ctr import closing, plausibility
from ctr.models import CTR, CTREvent
from nucleo import layers
from tests.builders import ORIGIN, offset, point, set_parameters
from tests.ctr_world import build_world, issue_hours_ago

pytestmark = pytest.mark.django_db

# x of the ATT's east fence, in metres east of ORIGIN (square of 100 m from 1,500 m).
EAST_FENCE_M = 1600


@pytest.fixture
def world(frozen_today):
    # The world's registrations run 2025-2027: the clock stays on TODAY.
    return build_world()


def east_of_fence(metres: float):
    """A point `metres` east of the ATT's east fence, halfway up it."""
    return point(*offset(*ORIGIN, EAST_FENCE_M + metres, 50))


def receive_at(world, location):
    ctr = issue_hours_ago(world, 1)
    return closing.receive(ctr, world.operator, Decimal("3"), location=location)


def codes(ctr: CTR) -> list[str]:
    return [f["code"] for f in ctr.findings]


def test_confirmation_inside_the_facility_is_no_finding_and_is_stored(world):
    inside = world.inside(world.att)
    received = receive_at(world, inside)
    assert codes(received) == []
    stored = CTR.objects.get(pk=received.pk).received_location
    assert stored.equals_exact(inside, 1e-9)


def test_point_on_the_fence_counts_as_inside(world):
    assert codes(receive_at(world, east_of_fence(0))) == []


def test_just_inside_the_gps_tolerance_is_no_finding(world):
    assert codes(receive_at(world, east_of_fence(13))) == []


def test_just_beyond_the_gps_tolerance_is_a_warning_with_the_distance(world):
    received = receive_at(world, east_of_fence(17))
    assert received.status == "received"
    (finding,) = received.findings
    assert finding["code"] == "RECEPTION_AWAY_FROM_FACILITY"
    assert finding["severity"] == "warning"
    assert finding["article"] == "Lei 3.978/2007 art. 13 p.ú."
    assert finding["field"] == "location"
    assert finding["message"] == (
        "Recebimento confirmado a 17 m da área “ATT”, além da tolerância de 15 m do GPS."
    )


def test_the_municipality_tolerance_is_what_counts(world):
    set_parameters(world.town, gps_tolerance_m=Decimal("25"))
    assert codes(receive_at(world, east_of_fence(20))) == []


def test_far_away_confirmation_records_kilometres_in_metres(world):
    received = receive_at(world, world.origin)
    (finding,) = received.findings
    distance = plausibility.distance_to_facility_m(world.origin, world.att)
    assert 1900 < distance < 2200  # the origin is 500 m south and 2 km west of the fence
    assert (
        f"a {round(distance) // 1000}.{round(distance) % 1000:03d} m da área" in finding["message"]
    )
    event = CTREvent.objects.get(ctr=received, action="receive")
    assert event.data["distance_m"] == pytest.approx(distance, abs=0.1)
    assert event.data["location"] == list(world.origin.coords)


def test_without_location_the_reception_stands_without_finding(world):
    received = receive_at(world, None)
    assert received.status == "received" and codes(received) == []
    assert CTR.objects.get(pk=received.pk).received_location is None
    event = CTREvent.objects.get(ctr=received, action="receive")
    assert event.data["location"] is None and event.data["distance_m"] is None


def test_warning_adds_to_the_volume_mismatch(world):
    ctr = issue_hours_ago(world, 1)
    received = closing.receive(ctr, world.operator, Decimal("2"), location=east_of_fence(40))
    assert codes(received) == ["RECEIVED_VOLUME_MISMATCH", "RECEPTION_AWAY_FROM_FACILITY"]


# --- the operator's page ----------------------------------------------------------------------


def page_post(world, ctr, **fields):
    client = Client()
    client.force_login(world.operator)
    data = {f"r-{ctr.pk}-received_volume_m3": "3"}
    data.update({f"r-{ctr.pk}-{k}": v for k, v in fields.items()})
    return client.post(f"/recebimentos/{ctr.number}/confirmar/", data, follow=True)


def test_page_sends_the_device_location_and_warns_the_operator(world):
    ctr = issue_hours_ago(world, 1)
    lon, lat = world.origin.coords
    response = page_post(
        world, ctr, location_lat=f"{lat:.6f}".replace(".", ","), location_lon=f"{lon:.6f}"
    )
    assert response.status_code == 200
    ctr.refresh_from_db()
    assert ctr.status == "received" and codes(ctr) == ["RECEPTION_AWAY_FROM_FACILITY"]
    assert ctr.received_location.distance(world.origin) < 1e-6
    assert "Aviso: Recebimento confirmado a" in response.content.decode()


def test_page_without_permission_receives_without_location(world):
    ctr = issue_hours_ago(world, 1)
    response = page_post(world, ctr, location_lat="", location_lon="")
    assert response.status_code == 200
    ctr.refresh_from_db()
    assert ctr.status == "received" and ctr.received_location is None and codes(ctr) == []


def test_page_with_one_coordinate_only_has_no_place(world):
    ctr = issue_hours_ago(world, 1)
    page_post(world, ctr, location_lat="-22,8", location_lon="")
    ctr.refresh_from_db()
    assert ctr.status == "received" and ctr.received_location is None


def test_page_refuses_a_latitude_out_of_range_and_writes_nothing(world):
    ctr = issue_hours_ago(world, 1)
    response = page_post(world, ctr, location_lat="-95", location_lon="-45,2")
    assert response.status_code == 400
    ctr.refresh_from_db()
    assert ctr.status == "issued"


def test_page_has_the_hidden_location_fields_and_the_script(world):
    ctr = issue_hours_ago(world, 1)
    client = Client()
    client.force_login(world.operator)
    html = client.get("/recebimentos/").content.decode()
    assert f'name="r-{ctr.pk}-location_lat"' in html
    assert f'name="r-{ctr.pk}-location_lon"' in html
    assert "ctr/reception-location" in html
    assert 'id="local-aparelho"' in html


# --- the Núcleo sees it ---------------------------------------------------------------------


def test_nucleo_map_shows_receptions_confirmed_away(world, frozen_today):
    receive_at(world, world.origin)
    receive_at(world, world.inside(world.att))
    client = Client()
    client.force_login(world.nucleo)
    html = client.get("/nucleo/mapa/").content.decode()
    assert "1 recebimento(s) confirmado(s) longe da área" in html
    # Names and labels reach the page inside JavaScript strings, where non-ASCII is escaped.
    for text in (layers.LAYER_AWAY, "1 recebimento(s) longe da área"):
        assert text in html or json.dumps(text)[1:-1] in html, text


def test_nucleo_reads_the_finding_on_the_ctr_through_the_api(world):
    from rest_framework.test import APIClient

    received = receive_at(world, world.origin)
    client = APIClient()
    client.force_authenticate(world.nucleo)
    body = client.get(f"/api/v1/ctrs/{received.number}/").json()
    assert [f["code"] for f in body["findings"]] == ["RECEPTION_AWAY_FROM_FACILITY"]
    assert body["received_location"] == {
        "type": "Point",
        "coordinates": [round(c, 7) for c in world.origin.coords],
    }
