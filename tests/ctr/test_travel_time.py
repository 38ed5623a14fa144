"""Travel-time plausibility at reception.

A load 8 km west of the ATT's discharge point (in a straight line): with the default detour
factor 1.4 its road is about 11.2 km, which takes at least about 8.4 min at 80 km/h and at
most about 134 min at 5 km/h plus 60 min of slack. Each bound is tried half a minute on
either side; the straight line is measured in PostGIS as the application measures it, so the
cases stay on their side of the bound whatever the spheroid does to the test's flat offsets."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest
from django.db import connection
from django.utils import timezone

from ctr import closing, plausibility, rules, services
from ctr.rules import WasteLine
from tests.builders import ORIGIN, offset, point, set_parameters
from tests.clock import FROZEN_NOW
from tests.ctr_world import build_world

pytestmark = pytest.mark.django_db

DISCHARGE = point(*offset(*ORIGIN, 1550, 50))  # the middle of the ATT
ORIGIN_8KM = point(*offset(*ORIGIN, 1550 - 8000, 50))
ISSUED_AT = FROZEN_NOW - datetime.timedelta(hours=4)
HALF_MINUTE = datetime.timedelta(seconds=30)


@pytest.fixture
def world(frozen_today):
    world = build_world()
    set_parameters(world.town, travel_check_enabled=True)  # off in tests/builders.municipality
    return world


def in_force(world):
    """The town's parameters on the frozen day (the only set the tests give it)."""
    return world.town.parameters_on(FROZEN_NOW.date())


def issue(world, at=ISSUED_AT, transport_date=None):
    request = services.IssueRequest(
        transport_date=transport_date or timezone.localtime(at).date(),
        vehicle_plate="ABC1D23",
        equipment_code="C-01",
        origin=ORIGIN_8KM,
        destination=DISCHARGE,
        waste=[WasteLine("A", Decimal("3"), "entulho de alvenaria")],
        generator=services.GeneratorData("Maria da Obra", "52998224725"),
    )
    return services.issue(world.alfa, world.alfa_user, request, at=at)


def straight_km() -> float:
    """The straight line from ORIGIN_8KM to DISCHARGE, on the spheroid (PostGIS geography)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT ST_Distance(ST_GeomFromEWKB(%s)::geography, ST_GeomFromEWKB(%s)::geography)",
            [bytes(ORIGIN_8KM.ewkb), bytes(DISCHARGE.ewkb)],
        )
        return cursor.fetchone()[0] / 1000


def road_km(world) -> float:
    return straight_km() * float(in_force(world).travel_detour_factor)


def fastest(world) -> datetime.timedelta:
    return datetime.timedelta(hours=road_km(world) / float(in_force(world).travel_max_speed_kmh))


def slowest(world) -> datetime.timedelta:
    return datetime.timedelta(
        hours=road_km(world) / float(in_force(world).travel_min_speed_kmh),
        minutes=in_force(world).travel_slack_minutes,
    )


def travel_codes(ctr) -> list[str]:
    return [f["code"] for f in ctr.findings if f["code"].startswith("TRAVEL_")]


def receive(world, ctr, after: datetime.timedelta):
    return closing.receive(ctr, world.operator, Decimal("3"), at=ctr.created_at + after)


def test_the_geometry_is_what_the_cases_assume(world):
    assert straight_km() == pytest.approx(8.0, rel=0.01)
    assert plausibility.straight_km(issue(world)) == pytest.approx(straight_km(), abs=1e-6)
    assert fastest(world).total_seconds() / 60 == pytest.approx(8.4, rel=0.02)
    assert slowest(world).total_seconds() / 60 == pytest.approx(194.4, rel=0.01)


def test_just_faster_than_possible_is_an_alert(world):
    received = receive(world, issue(world), fastest(world) - HALF_MINUTE)
    assert received.status == "received"
    (finding,) = [f for f in received.findings if f["code"] == "TRAVEL_TOO_FAST"]
    assert finding["severity"] == rules.Severity.ALERT
    assert finding["article"] == "Lei 3.978/2007 art. 3 VI, art. 13 p.ú."
    assert finding["message"] == (
        "Recebido 8 min depois da partida: 11,2 km de percurso estimado levam pelo menos "
        "8 min a 80 km/h."
    )


def test_just_slower_than_the_fastest_is_no_finding(world):
    assert travel_codes(receive(world, issue(world), fastest(world) + HALF_MINUTE)) == []


def test_just_within_the_slowest_is_no_finding(world):
    assert travel_codes(receive(world, issue(world), slowest(world) - HALF_MINUTE)) == []


def test_just_slower_than_plausible_is_an_alert_of_a_likely_detour(world):
    received = receive(world, issue(world), slowest(world) + HALF_MINUTE)
    assert received.status == "received"
    (finding,) = [f for f in received.findings if f["code"] == "TRAVEL_TOO_SLOW"]
    assert finding["severity"] == rules.Severity.ALERT
    assert finding["article"] == "Lei 3.978/2007 art. 13 p.ú., art. 2 §1"
    assert finding["message"] == (
        "Recebido 3 h 15 min depois da partida: 11,2 km de percurso estimado levam no máximo "
        "3 h 14 min (a 5 km/h, mais 60 min de espera); possível desvio no caminho."
    )


def test_the_municipality_speeds_are_what_counts(world):
    # At 40 km/h the fastest trip takes twice as long: 10 min is now too fast.
    set_parameters(world.town, travel_max_speed_kmh=Decimal("40"))
    received = receive(world, issue(world), datetime.timedelta(minutes=10))
    assert travel_codes(received) == ["TRAVEL_TOO_FAST"]


def test_the_detour_factor_lengthens_the_road(world):
    # At factor 1 the road is the straight line: 6,5 min is possible at 80 km/h (6 min).
    set_parameters(world.town, travel_detour_factor=Decimal("1"))
    assert travel_codes(receive(world, issue(world), datetime.timedelta(minutes=6.5))) == []


def test_the_slack_lengthens_the_slowest(world):
    set_parameters(world.town, travel_slack_minutes=0)
    late = slowest(world) + HALF_MINUTE  # the slowest without slack, plus half a minute
    assert travel_codes(receive(world, issue(world), late)) == ["TRAVEL_TOO_SLOW"]
    set_parameters(world.town, travel_slack_minutes=60)
    assert travel_codes(receive(world, issue(world), late)) == []


def test_a_ctr_issued_the_day_before_departs_at_the_start_of_its_transport_day(world):
    # Issued yesterday at 18h for today: the trip starts at midnight, not at 18h.
    day_before = FROZEN_NOW.replace(hour=18) - datetime.timedelta(days=1)
    ctr = issue(world, at=day_before, transport_date=FROZEN_NOW.date())
    midnight = FROZEN_NOW.replace(hour=0)
    assert plausibility.departure_of(ctr) == midnight
    received = closing.receive(
        ctr, world.operator, Decimal("3"), at=midnight + datetime.timedelta(minutes=30)
    )
    assert travel_codes(received) == []


def test_a_provisional_departure_time_is_the_departure(world):
    # The hook for the offline CTR: its device's departure time counts.
    # Until CTR.provisional_departure_at exists (another part adds it), set on the instance.
    ctr = issue(world)
    assert plausibility.departure_of(ctr) == ctr.created_at
    ctr.provisional_departure_at = ctr.created_at - datetime.timedelta(hours=4)
    assert plausibility.departure_of(ctr) == ctr.provisional_departure_at
    trip = plausibility.travel_of(ctr, ctr.created_at + fastest(world) + HALF_MINUTE)
    assert trip.too_slow and not trip.too_fast


def test_the_municipality_may_turn_the_check_off(world):
    set_parameters(world.town, travel_check_enabled=False)
    assert travel_codes(receive(world, issue(world), datetime.timedelta(seconds=10))) == []


def test_reception_without_a_time_is_judged_now(world):
    ctr = issue(world, at=timezone.now() - datetime.timedelta(hours=5))
    received = closing.receive(ctr, world.operator, Decimal("3"))
    assert travel_codes(received) == ["TRAVEL_TOO_SLOW"]


def test_durations_read_in_minutes_hours_and_days():
    assert plausibility.duration_text(0.4) == "0 min"
    assert plausibility.duration_text(42) == "42 min"
    assert plausibility.duration_text(185) == "3 h 05 min"
    assert plausibility.duration_text(60 * 24 + 61) == "1 dia 1 h"
    assert plausibility.duration_text(60 * 50) == "2 dias 2 h"


# --- the fiscalização's suspects of a dumping report ------------------------------------------


def test_a_slow_trip_is_a_suspect_of_a_dumping_report_near_its_origin(world):
    from fiscalization import suspects

    slow = receive(world, issue(world), slowest(world) + HALF_MINUTE)
    plausible = receive(world, issue(world), fastest(world) + HALF_MINUTE)
    spot = suspects.Spot(point(*offset(*ORIGIN, 1550 - 8000, 1050)), FROZEN_NOW, FROZEN_NOW)
    found = suspects.find_suspects(spot)
    listed = {c.number: c.reasons for t in found.transporters for v in t.vehicles for c in v.ctrs}
    assert listed == {slow.number: ["SLOW_TRIP"]}
    assert plausible.number not in listed
    assert found.counts["SLOW_TRIP"] == 1
    assert "SLOW_TRIP" in suspects.REASON_LABELS


def test_the_suspects_page_names_the_slow_trip(world):
    from django.test import Client

    from fiscalization.models import DumpingReport

    slow = receive(world, issue(world), slowest(world) + HALF_MINUTE)
    report = DumpingReport.objects.create(
        municipality=world.town,
        category="LOTE_VAGO",
        location=point(*offset(*ORIGIN, 1550 - 8000, 1050)),
        created_at=FROZEN_NOW,
    )
    client = Client()
    client.force_login(world.fiscal)
    page = client.get(f"/fiscalizacao/denuncias/{report.pk}/suspeitos/").content.decode()
    assert slow.number in page and "Viagem lenta" in page


def test_nucleo_map_shows_the_origins_of_implausible_trips(world):
    import json

    from django.test import Client

    from nucleo import layers

    receive(world, issue(world), slowest(world) + HALF_MINUTE)
    receive(world, issue(world), fastest(world) - HALF_MINUTE)
    receive(world, issue(world), fastest(world) + HALF_MINUTE)
    client = Client()
    client.force_login(world.nucleo)
    html = client.get("/nucleo/mapa/").content.decode()
    assert "2 viagem(ns) rápida(s) ou lenta(s) demais" in html
    for text in (layers.LAYER_IMPLAUSIBLE, "2 viagem(ns) implausível(is)"):
        assert text in html or json.dumps(text)[1:-1] in html, text
