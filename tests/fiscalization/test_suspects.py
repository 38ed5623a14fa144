"""Suspects of a dumping report: a built scenario with CTRs issued through ctr.services, then
refused, cancelled or received, and exactly which of them are suspects and why."""

from __future__ import annotations

import datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from ctr import closing, services
from ctr.models import Equipment, Vehicle
from ctr.rules import WasteLine
from fiscalization import hotspots, suspects
from fiscalization.models import DumpingReport
from pev_network.models import MunicipalParameters
from tests.builders import ORIGIN, offset, point
from tests.ctr_world import build_world, make_user

pytestmark = pytest.mark.django_db

SP = ZoneInfo("America/Sao_Paulo")
D = datetime.date
# The report: seen on 20/11/2026 at 10:00, 800 m east of ORIGIN, on the road to the ATT
# (ATT: a 100 m square 1500 m east of ORIGIN; landfill 3 km north; recycling 3 km west).
REPORT_AT = datetime.datetime(2026, 11, 20, 10, 0, tzinfo=SP)
SPOT = (800, 50)


def at(east: float, north: float):
    return point(*offset(*ORIGIN, east, north))


def when(day: int, hour: int = 8) -> datetime.datetime:
    return datetime.datetime(2026, 11, day, hour, 0, tzinfo=SP)


class Scenario:
    def __init__(self):
        self.world = w = build_world()
        self.recycler = make_user("operador_reciclagem", facility=w.recycling)
        # A second truck of Alfa, so that Alfa's suspects fall in two vehicle groups.
        Vehicle.objects.create(transporter=w.alfa, plate="DEF4G56")
        Equipment.objects.create(transporter=w.alfa, code="C-02", nominal_capacity_m3=Decimal(5))
        self.report = DumpingReport.objects.create(
            municipality=w.town, location=at(*SPOT), category="VIA_PUBLICA", created_at=REPORT_AT
        )
        self.ctrs = {}

    def issue(self, name, transporter, plate, origin, facility, day, hour=8, code=None):
        w = self.world
        user = w.alfa_user if transporter == w.alfa else w.beta_user
        code = code or ("C-01" if transporter == w.alfa else "B-01")
        request = services.IssueRequest(
            transport_date=D(2026, 11, day),
            vehicle_plate=plate,
            equipment_code=code,
            origin=at(*origin),
            destination=w.inside(facility),
            waste=[WasteLine("A", Decimal("3"), "entulho")],
            generator=services.GeneratorData("Maria da Obra", "52998224725"),
        )
        ctr = services.issue(transporter, user, request, at=when(day, hour))
        self.ctrs[name] = ctr
        return ctr


@pytest.fixture
def scenario():
    s = Scenario()
    w = s.world
    north, south = (0, 1000), (0, -1000)
    # 1. Issued on the 17th, never received: 74 h open at the report, beyond the 48 h alert.
    #    Its origin is north of the spot and it heads further north (landfill): not on the way.
    s.issue("overdue", w.alfa, "ABC1D23", north, w.landfill, 17)
    # 2. Issued on the evening of the 19th: 14 h open at the report, not overdue yet.
    s.issue("recent", w.alfa, "ABC1D23", north, w.landfill, 19, hour=20)
    # 3. Refused at the recycling area (west; the spot is north-east of its origin).
    refused = s.issue("refused", w.beta, "XYZ9876", south, w.recycling, 18)
    closing.refuse(refused, s.recycler, "carga misturada", at=when(18, 15))
    # 4. Cancelled by the transporter, from the second truck.
    cancelled = s.issue("cancelled", w.alfa, "DEF4G56", north, w.landfill, 16, code="C-02")
    closing.cancel(cancelled, w.alfa_user, "desistência", at=when(16, 9))
    # 5. Received at the ATT, but the spot lies on its way there: 300 m east of ORIGIN → 800 m
    #    east (the spot) → 1550 m east (the ATT).
    on_the_way = s.issue("on_the_way", w.beta, "XYZ9876", (300, 0), w.att, 19)
    closing.receive(on_the_way, w.operator, Decimal("3"), at=when(19, 11))
    # 6. Same line, from beyond the ATT: the spot is in the same direction but farther than the
    #    destination, so not on the way. Received: not a suspect.
    beyond = s.issue("beyond", w.beta, "XYZ9876", (2400, 50), w.att, 19)
    closing.receive(beyond, w.operator, Decimal("3"), at=when(19, 12))
    # 7. Overdue, but its origin is 4 km from the spot: outside the radius.
    s.issue("far", w.alfa, "ABC1D23", (800, 4100), w.landfill, 17)
    # 8. Overdue, near, but transported on the 10th: outside the 7-day window (13th-20th).
    s.issue("old", w.alfa, "ABC1D23", north, w.landfill, 10)
    # 9. Received, near, heading away from the spot (west): not a suspect.
    normal = s.issue("normal", w.beta, "XYZ9876", south, w.recycling, 18)
    closing.receive(normal, s.recycler, Decimal("3"), at=when(18, 16))
    # 10. Issued after the report (transport on the 21st): outside the window.
    s.issue("after", w.alfa, "ABC1D23", north, w.landfill, 21)
    return s


def by_number(found: suspects.Suspects) -> dict[str, list[str]]:
    return {c.number: c.reasons for t in found.transporters for v in t.vehicles for c in v.ctrs}


def names(scenario, found) -> dict[str, list[str]]:
    number_to_name = {ctr.number: name for name, ctr in scenario.ctrs.items()}
    return {number_to_name[n]: reasons for n, reasons in by_number(found).items()}


def test_a_ctr_is_overdue_by_the_alert_hours_of_its_own_transport_date(scenario):
    # From the 18th on the municipality allows 96 h: the CTR of the 17th, 74 h open at the
    # report, is still judged by its day's 48 h (Lei 3.978/2007 art. 2 §1: a load not received
    # in time is a sign of dumping).
    MunicipalParameters.objects.create(
        municipality=scenario.world.town, valid_from=D(2026, 11, 18), open_ctr_alert_hours=96
    )
    found = suspects.find_suspects(suspects.Spot.of_report(scenario.report))
    assert names(scenario, found)["overdue"] == ["OVERDUE"]


def test_exactly_the_suspects_and_why(scenario):
    found = suspects.find_suspects(suspects.Spot.of_report(scenario.report))
    assert names(scenario, found) == {
        "overdue": ["OVERDUE"],
        "refused": ["REFUSED"],
        "cancelled": ["CANCELLED"],
        "on_the_way": ["ON_THE_WAY"],
    }
    assert found.window_from == D(2026, 11, 13)
    assert found.window_to == D(2026, 11, 20)
    assert found.total == 4
    assert found.counts == {
        "OVERDUE": 1, "REFUSED": 1, "CANCELLED": 1, "ON_THE_WAY": 1, "SLOW_TRIP": 0
    }  # fmt: skip


def test_grouped_by_transporter_and_vehicle_with_counts(scenario):
    found = suspects.find_suspects(suspects.Spot.of_report(scenario.report))
    summary = [
        (t.name, t.total, t.counts, [(v.plate, len(v.ctrs), v.counts) for v in t.vehicles])
        for t in found.transporters
    ]
    zero = dict.fromkeys(suspects.REASONS, 0)
    assert summary == [
        (
            "Caçambas Alfa Ltda.",
            2,
            {**zero, "OVERDUE": 1, "CANCELLED": 1},
            [
                ("ABC1D23", 1, {**zero, "OVERDUE": 1}),
                ("DEF4G56", 1, {**zero, "CANCELLED": 1}),
            ],
        ),
        (
            "Entulhos Beta ME",
            2,
            {**zero, "REFUSED": 1, "ON_THE_WAY": 1},
            # Within a vehicle, reasons other than "on the way" first.
            [("XYZ9876", 2, {**zero, "REFUSED": 1, "ON_THE_WAY": 1})],
        ),
    ]
    beta_rows = found.transporters[1].vehicles[0].ctrs
    assert [r.reasons for r in beta_rows] == [["REFUSED"], ["ON_THE_WAY"]]


def test_the_figures_of_a_suspect(scenario):
    found = suspects.find_suspects(suspects.Spot.of_report(scenario.report))
    rows = {c.number: c for t in found.transporters for v in t.vehicles for c in v.ctrs}
    overdue = rows[scenario.ctrs["overdue"].number]
    # Open since the later of the issue (17th 08:00) and the start of the transport day.
    assert overdue.hours_open_at_report == pytest.approx(74.0)
    assert overdue.origin_distance_m == pytest.approx(((800**2) + (950**2)) ** 0.5, rel=0.01)
    assert overdue.bearing_difference_deg > 90
    on_the_way = rows[scenario.ctrs["on_the_way"].number]
    assert on_the_way.bearing_difference_deg < 10
    assert on_the_way.hours_open_at_report is None  # received: not open


def test_wider_window_and_smaller_radius(scenario):
    wider = suspects.find_suspects(suspects.Spot.of_report(scenario.report), window_days=10)
    assert "old" in names(scenario, wider)
    assert names(scenario, wider)["old"] == ["OVERDUE"]
    wide_radius = suspects.find_suspects(suspects.Spot.of_report(scenario.report), radius_km=5)
    assert names(scenario, wide_radius)["far"] == ["OVERDUE"]
    # 600 m: only the origin 500 m west of the spot (the one on the way) is near enough.
    near = suspects.find_suspects(suspects.Spot.of_report(scenario.report), radius_km=0.6)
    assert names(scenario, near) == {"on_the_way": ["ON_THE_WAY"]}


def test_overdue_and_issue_are_judged_at_the_report_time(scenario):
    """The same CTRs seen from a report on the 18th at 07:00: the CTR of the 17th had been
    open 23 h only (not overdue yet), and the refused one was issued at 08:00, after the
    report: a load that left afterwards cannot have caused it."""
    early = DumpingReport.objects.create(
        municipality=scenario.world.town,
        location=at(*SPOT),
        category="VIA_PUBLICA",
        created_at=datetime.datetime(2026, 11, 18, 7, 0, tzinfo=SP),
    )
    assert names(scenario, suspects.find_suspects(suspects.Spot.of_report(early))) == {
        "cancelled": ["CANCELLED"]
    }
    later = DumpingReport.objects.create(
        municipality=scenario.world.town,
        location=at(*SPOT),
        category="VIA_PUBLICA",
        created_at=datetime.datetime(2026, 11, 18, 17, 0, tzinfo=SP),
    )
    assert names(scenario, suspects.find_suspects(suspects.Spot.of_report(later))) == {
        "cancelled": ["CANCELLED"],
        "refused": ["REFUSED"],
    }


def test_suspects_of_a_hotspot(scenario):
    """Three reports at the spot from the 24th to the 26th: alone, the last one's window
    (19th-26th) misses the CTR of the 17th; the hotspot's (17th-26th) has it."""
    town = scenario.world.town
    reports = [
        DumpingReport.objects.create(
            municipality=town,
            location=at(SPOT[0] + e, SPOT[1]),
            category="VIA_PUBLICA",
            created_at=datetime.datetime(2026, 11, day, 9, 0, tzinfo=SP),
        )
        for e, day in ((0, 24), (10, 25), (20, 26))
    ]
    alone = names(scenario, suspects.find_suspects(suspects.Spot.of_report(reports[-1])))
    assert "overdue" not in alone
    query = hotspots.HotspotQuery(eps_m=50, min_points=3, since=D(2026, 11, 21))
    hotspot = hotspots.hotspot_of_report(reports[-1], query)
    assert hotspot.reports == 3
    found = names(scenario, suspects.find_suspects(suspects.Spot.of_hotspot(hotspot)))
    assert found["overdue"] == ["OVERDUE"]
    assert "after" in found  # transported on the 21st, still issued on the 26th: overdue
    assert found["after"] == ["OVERDUE"]


# --- API -----------------------------------------------------------------------------------


def client_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(get_user_model().objects.get(pk=user.pk))
    return client


def url(report) -> str:
    return f"/api/v1/dumping-reports/{report.pk}/suspects/"


def test_api_suspects(scenario):
    response = client_for(scenario.world.fiscal).get(url(scenario.report))
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["report"]["protocol"] == scenario.report.protocol
    assert body["window"] == {"from": "2026-11-13", "to": "2026-11-20"}
    assert body["radius_km"] == 3.0
    assert body["ctrs"] == 4
    assert body["hotspot"] is None
    alfa, beta = body["transporters"]
    assert (alfa["name"], alfa["ctrs"]) == ("Caçambas Alfa Ltda.", 2)
    assert [(v["plate"], v["ctrs"]) for v in alfa["vehicles"]] == [("ABC1D23", 1), ("DEF4G56", 1)]
    item = alfa["vehicles"][0]["items"][0]
    assert item["number"] == scenario.ctrs["overdue"].number
    assert item["reasons"] == ["OVERDUE"]
    assert item["status"] == "issued"
    assert beta["reasons"]["ON_THE_WAY"] == 1


def test_api_parameters(scenario):
    client = client_for(scenario.world.nucleo)
    body = client.get(url(scenario.report), {"window_days": "10", "radius_km": "5"}).json()
    assert body["ctrs"] == 6  # + old, far
    for params, field in (
        ({"window_days": "0"}, "window_days"),
        ({"window_days": "x"}, "window_days"),
        ({"radius_km": "0"}, "radius_km"),
        ({"radius_km": "100"}, "radius_km"),
        ({"hotspot": "talvez"}, "hotspot"),
    ):
        response = client.get(url(scenario.report), params)
        assert response.status_code == 400, params
        assert response.json()["errors"][0]["campo"] == field


def test_api_hotspot_scope(scenario):
    client = client_for(scenario.world.fiscal)
    response = client.get(url(scenario.report), {"hotspot": "true", "eps_m": "50"})
    assert response.status_code == 404
    assert "não faz parte de nenhum ponto crítico" in response.json()["detail"]
    for e in (10, 20):
        DumpingReport.objects.create(
            municipality=scenario.world.town,
            location=at(SPOT[0] + e, SPOT[1]),
            category="VIA_PUBLICA",
            created_at=REPORT_AT - datetime.timedelta(days=1),
        )
    body = client.get(
        url(scenario.report), {"hotspot": "true", "eps_m": "50", "since": "2026-11-01"}
    ).json()
    assert body["hotspot"]["properties"]["reports"] == 3
    assert body["window"] == {"from": "2026-11-12", "to": "2026-11-20"}


def test_api_access_and_unknown_report(scenario):
    w = scenario.world
    assert APIClient().get(url(scenario.report)).status_code == 401
    assert client_for(w.alfa_user).get(url(scenario.report)).status_code == 403
    assert client_for(w.outsider).get(url(scenario.report)).status_code == 403
    missing = client_for(w.fiscal).get("/api/v1/dumping-reports/999999/suspects/")
    assert missing.status_code == 404
    assert missing["Content-Type"].startswith("application/problem+json")


# --- page ----------------------------------------------------------------------------------


def test_suspects_page(scenario, client):
    w = scenario.world
    page_url = f"/fiscalizacao/denuncias/{scenario.report.pk}/suspeitos/"
    assert client.get(page_url).status_code == 302  # to the login
    client.force_login(w.alfa_user)
    assert client.get(page_url).status_code == 403
    client.force_login(w.fiscal)
    response = client.get(page_url)
    assert response.status_code == 200
    html = response.content.decode()
    assert scenario.report.protocol in html
    for name in ("overdue", "refused", "cancelled", "on_the_way"):
        assert scenario.ctrs[name].number in html
    for name in ("recent", "beyond", "far", "old", "normal", "after"):
        assert scenario.ctrs[name].number not in html
    assert "Caçambas Alfa Ltda." in html and "DEF-4G56" in html
    assert "/static/leaflet/leaflet.js" in html
    bad = client.get(page_url, {"window_days": "0"})
    assert bad.status_code == 400
    assert "maior ou igual a 1" in bad.content.decode()
