"""Issuing CTRs through the API: every rule of the catalogue, errors, the document's life."""

import datetime
import json
from decimal import Decimal
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import DatabaseError, connection
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from ctr import alerts as ctr_alerts
from ctr import rules
from ctr.models import CTR, CTREvent, TransporterLicence
from pev_network.models import FacilityLicense
from tests.builders import offset, point
from tests.ctr_world import TODAY, build_world, ctr_payload, large_generator_site
from webhooks.outbox import subscriptions

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    return build_world()


def client_for(user) -> APIClient:
    client = APIClient()
    # A fresh user per client, as in a real request: no membership cached from the fixture.
    client.force_authenticate(get_user_model().objects.get(pk=user.pk))
    return client


def issue(world, user=None, **overrides):
    return client_for(user or world.alfa_user).post(
        "/api/v1/ctrs/", ctr_payload(world, **overrides), format="json"
    )


def error_codes(response) -> list[str]:
    assert response.status_code == 422, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    return sorted(e["code"] for e in response.json()["errors"])


# --- a valid CTR ------------------------------------------------------------------------------


def test_valid_ctr_is_issued_with_number_and_fee(world):
    response = issue(world)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["number"] == f"CTR-3518404-{TODAY.year}-000001"
    assert body["status"] == "issued"
    assert body["municipality"] == "3518404"
    assert body["destination_facility"] == {"id": world.att.pk, "name": "ATT", "kind": "ATT"}
    assert body["fee_ufesp"] == "1.00"  # 3 m³ is a large volume: art. 12 §3
    assert body["findings"] == []
    ctr = CTR.objects.get(number=body["number"])
    assert ctr.events.get().action == "issue"
    assert ctr.generator.document == "52998224725"


def test_small_volume_pays_no_fee(world):
    response = issue(
        world,
        destination={"type": "Point", "coordinates": list(world.inside(world.pev).coords)},
        waste=[{"class": "A", "volume_m3": "1", "description": ""}],
    )
    assert response.status_code == 201, response.content
    assert response.json()["fee_ufesp"] == "0.00"


def test_named_facility_must_be_the_one_covering_the_destination(world):
    ok = issue(world, destination_facility=world.att.pk)
    assert ok.status_code == 201
    wrong = issue(world, destination_facility=world.landfill.pk)
    assert error_codes(wrong) == ["DESTINATION_OUTSIDE_FACILITY"]


# --- each rule: a case that breaks it ------------------------------------------------------------


def test_transporter_registration_expired(world):
    assert "TRANSPORTER_NOT_LICENSED" in error_codes(issue(world, transport_date="2028-01-05"))


def test_transporter_suspended_on_the_date(world):
    TransporterLicence.objects.filter(transporter=world.alfa).update(
        status="SUSPENDED", status_since=datetime.date(2026, 11, 1)
    )
    assert error_codes(issue(world)) == ["TRANSPORTER_SUSPENDED"]


def test_suspension_over_lets_the_transporter_work_again(world):
    TransporterLicence.objects.filter(transporter=world.alfa).update(
        status="SUSPENDED",
        status_since=datetime.date(2026, 11, 1),
        suspended_until=datetime.date(2026, 11, 15),
    )
    assert issue(world).status_code == 201


def test_revoked_transporter(world):
    TransporterLicence.objects.filter(transporter=world.alfa).update(
        status="REVOKED", status_since=datetime.date(2026, 1, 1)
    )
    assert error_codes(issue(world)) == ["TRANSPORTER_SUSPENDED"]


def test_origin_outside_every_municipality(world):
    far = {"type": "Point", "coordinates": [-60.0, -10.0]}
    assert error_codes(issue(world, origin=far)) == ["ORIGIN_OUTSIDE_MUNICIPALITY"]


def test_destination_outside_every_facility(world):
    nowhere = {"type": "Point", "coordinates": list(offset(*world.origin.coords, 50, 50))}
    assert error_codes(issue(world, destination=nowhere)) == ["DESTINATION_OUTSIDE_FACILITY"]


def test_destination_just_outside_within_gps_tolerance_is_accepted(world):
    # The ATT square's east edge is 1600 m east of ORIGIN; 5 m beyond it, tolerance 15 m.
    lon, lat = world.att.area.extent[2], (world.att.area.extent[1] + world.att.area.extent[3]) / 2
    near = {"type": "Point", "coordinates": list(offset(lon, lat, 5, 0))}
    assert issue(world, destination=near).status_code == 201
    far = {"type": "Point", "coordinates": list(offset(lon, lat, 40, 0))}
    assert error_codes(issue(world, destination=far)) == ["DESTINATION_OUTSIDE_FACILITY"]


def test_facility_license_expired_the_day_before(world):
    FacilityLicense.objects.filter(facility=world.att).update(
        valid_until=TODAY - datetime.timedelta(days=1)
    )
    assert error_codes(issue(world)) == ["FACILITY_NOT_LICENSED"]


def test_class_b_to_a_landfill(world):
    response = issue(world, facility=world.landfill, waste=[{"class": "B", "volume_m3": "2"}])  # noqa
    assert error_codes(response) == ["CLASS_NOT_ACCEPTED"]


def test_prohibited_waste(world):
    waste = [
        {"class": "A", "volume_m3": "2"},
        {"class": "SAUDE", "volume_m3": "0.5", "description": "seringas"},
    ]
    response = issue(world, waste=waste)
    codes = error_codes(response)
    assert codes == ["PROHIBITED_WASTE"]
    assert response.json()["errors"][0]["field"] == "waste[1].class"


def test_large_volume_at_a_pev(world):
    to_pev = {"type": "Point", "coordinates": list(world.inside(world.pev).coords)}
    response = issue(world, destination=to_pev)
    assert error_codes(response) == ["LARGE_VOLUME_AT_PEV"]
    assert "1 m³" in response.json()["errors"][0]["message"]


def test_one_cubic_metre_at_a_pev_is_fine(world):
    to_pev = {"type": "Point", "coordinates": list(world.inside(world.pev).coords)}
    assert (
        issue(world, destination=to_pev, waste=[{"class": "A", "volume_m3": "1.000"}]).status_code
        == 201
    )


def test_over_equipment_capacity(world):
    assert error_codes(issue(world, waste=[{"class": "A", "volume_m3": "6"}])) == [
        "OVER_EQUIPMENT_CAPACITY"
    ]


def test_vehicle_of_another_transporter(world):
    response = issue(world, vehicle_plate="XYZ-9876")
    assert error_codes(response) == ["VEHICLE_NOT_REGISTERED"]
    assert response.json()["errors"][0]["field"] == "vehicle_plate"


def test_unknown_equipment(world):
    assert error_codes(issue(world, equipment_code="Z-99")) == ["EQUIPMENT_NOT_REGISTERED"]


def test_a_wrong_plate_is_a_plate_problem_not_an_equipment_one(world):
    # The right caçamba on a plate outside the fleet (Beta's) is refused
    # for the vehicle alone, and the message names the plate.
    response = issue(world, vehicle_plate="XYZ-9876", equipment_code="C-01")
    assert error_codes(response) == ["VEHICLE_NOT_REGISTERED"]
    (error,) = response.json()["errors"]
    assert error["field"] == "vehicle_plate"
    assert "XYZ9876" in error["message"] and "placa" in error["message"]
    assert error["article"] == rules.REGISTRY["VEHICLE_NOT_REGISTERED"].article


def test_a_wrong_cacamba_on_a_right_plate_is_only_an_equipment_problem(world):
    # Beta's caçamba on Alfa's own truck.
    response = issue(world, vehicle_plate="ABC-1D23", equipment_code="B-01")
    assert error_codes(response) == ["EQUIPMENT_NOT_REGISTERED"]
    (error,) = response.json()["errors"]
    assert error["field"] == "equipment_code" and "B-01" in error["message"]


def test_large_generator_without_plan_gets_warnings_not_refusal(world):
    site = large_generator_site(world)
    payload = ctr_payload(world, worksite_id=site.pk)
    del payload["generator"], payload["worksite"]
    response = client_for(world.alfa_user).post("/api/v1/ctrs/", payload, format="json")
    assert response.status_code == 201, response.content
    codes = [f["code"] for f in response.json()["findings"]]
    assert codes == ["NOT_IN_GENERATOR_PLAN", "NOT_IN_GENERATOR_PLAN"]


def test_large_generator_with_plan_has_no_warning(world):
    site = large_generator_site(world, [world.alfa], [world.att])
    payload = ctr_payload(world, worksite_id=site.pk)
    del payload["generator"], payload["worksite"]
    response = client_for(world.alfa_user).post("/api/v1/ctrs/", payload, format="json")
    assert response.status_code == 201 and response.json()["findings"] == []


def test_class_a_to_landfill_while_recycling_exists_is_a_warning(world):
    response = issue(world, facility=world.landfill)
    assert response.status_code == 201
    assert [f["code"] for f in response.json()["findings"]] == ["CLASS_A_TO_LANDFILL"]
    FacilityLicense.objects.filter(facility=world.recycling).update(
        status="REVOKED", status_since=TODAY
    )
    again = issue(world, facility=world.landfill)
    assert again.json()["findings"] == []


def test_every_broken_rule_is_reported_at_once(world):
    response = issue(
        world,
        vehicle_plate="XYZ9876",
        facility=world.landfill,
        waste=[{"class": "B", "volume_m3": "4"}, {"class": "INDUSTRIAL", "volume_m3": "3"}],
    )
    assert error_codes(response) == [
        "CLASS_NOT_ACCEPTED",
        "OVER_EQUIPMENT_CAPACITY",
        "PROHIBITED_WASTE",
        "VEHICLE_NOT_REGISTERED",
    ]
    for error in response.json()["errors"]:
        assert error["article"].startswith("Lei 3.978/2007")
        assert error["severity"] == "error" and error["message"]
    assert CTR.objects.count() == 0  # nothing stored


# --- malformed input: 400, never 500 ----------------------------------------------------------


@pytest.mark.parametrize(
    "override, field",
    [
        ({"origin": {"type": "LineString", "coordinates": [[0, 0], [1, 1]]}}, "origin"),
        ({"origin": {"type": "Point", "coordinates": [-45.1, -95]}}, "origin"),
        ({"origin": {"type": "Point", "coordinates": ["a", "b"]}}, "origin"),
        ({"destination": [-45.1, -22.8]}, "destination"),
        ({"waste": [{"class": "A", "volume_m3": "0"}]}, "waste[0].volume_m3"),
        ({"waste": [{"class": "A", "volume_m3": "-2"}]}, "waste[0].volume_m3"),
        ({"waste": [{"class": "A", "volume_m3": "99999"}]}, "waste[0].volume_m3"),
        ({"waste": [{"class": "X", "volume_m3": "1"}]}, "waste[0].class"),
        ({"waste": []}, "waste"),
        ({"vehicle_plate": "1234567"}, "vehicle_plate"),
        ({"transport_date": "30/11/2026"}, "transport_date"),
        ({"generator": {"name": "Fulano", "document": "111.111.111-11"}}, "generator.document"),
    ],
)
def test_malformed_requests_get_400_naming_the_field(world, override, field):
    response = issue(world, **override)
    assert response.status_code == 400, response.content
    fields = [e["campo"] for e in response.json()["errors"]]
    assert field in fields, fields
    assert CTR.objects.count() == 0


def test_malformed_json_is_400(world):
    response = client_for(world.alfa_user).post(
        "/api/v1/ctrs/", data="{not json", content_type="application/json"
    )
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/problem+json")


def test_only_transporters_issue(world):
    response = issue(world, user=world.operator)
    assert response.status_code == 403


def test_anonymous_gets_401(world):
    response = APIClient().get("/api/v1/ctrs/")
    assert response.status_code == 401
    assert "Token" in response["WWW-Authenticate"]


def test_token_login_and_use(world):
    issued = issue(world).json()["number"]
    client = APIClient()
    response = client.post(
        "/api/v1/auth/token/", {"username": "alfa", "password": "senha-teste"}, format="json"
    )
    assert response.status_code == 200
    client.credentials(HTTP_AUTHORIZATION=f"Token {response.json()['token']}")
    listing = client.get("/api/v1/ctrs/")
    assert listing.status_code == 200
    assert issued in listing.content.decode()  # alfa's own CTR, seen with the token
    bad = APIClient().post(
        "/api/v1/auth/token/", {"username": "alfa", "password": "errada"}, format="json"
    )
    assert bad.status_code == 400
    assert bad.json()["detail"] == "Impossível fazer login com as credenciais fornecidas."


# --- life of the document ----------------------------------------------------------------------


@pytest.fixture
def issued(world):
    response = issue(world)
    assert response.status_code == 201
    return response.json()["number"]


def post(user, url, data):
    return client_for(user).post(url, data, format="json")


def test_operator_receives_and_the_event_is_kept(world, issued):
    response = post(world.operator, f"/api/v1/ctrs/{issued}/receive/", {"received_volume_m3": "3"})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "received" and body["received_volume_m3"] == "3.000"
    assert [e["action"] for e in body["events"]] == ["issue", "receive"]
    assert body["events"][1]["from_status"] == "issued"
    assert body["events"][1]["actor"] == "operador"


def test_volume_mismatch_is_recorded_at_reception(world, issued):
    response = post(world.operator, f"/api/v1/ctrs/{issued}/receive/", {"received_volume_m3": "2"})
    assert response.status_code == 200
    assert [f["code"] for f in response.json()["findings"]] == ["RECEIVED_VOLUME_MISMATCH"]


def test_volume_within_tolerance_is_no_finding(world, issued):
    response = post(
        world.operator, f"/api/v1/ctrs/{issued}/receive/", {"received_volume_m3": "3.2"}
    )
    assert response.json()["findings"] == []


def test_reception_away_from_the_facility_is_a_warning_not_a_refusal(world, issued):
    # It was a 422 (DESTINATION_OUTSIDE_FACILITY); a phone's fix can be off
    # by hundreds of metres, so the reception stands and the Núcleo sees the distance.
    outside = {"type": "Point", "coordinates": list(world.origin.coords)}
    response = post(
        world.operator,
        f"/api/v1/ctrs/{issued}/receive/",
        {"received_volume_m3": "3", "location": outside},
    )
    assert response.status_code == 200
    assert [f["code"] for f in response.json()["findings"]] == ["RECEPTION_AWAY_FROM_FACILITY"]
    assert CTR.objects.get(number=issued).status == "received"


@pytest.mark.parametrize(
    "location",
    [
        {"type": "Point", "coordinates": [-200, -22.8]},
        {"type": "Point", "coordinates": [-45.2, 91]},
        {"type": "LineString", "coordinates": [[-45.2, -22.8], [-45.1, -22.8]]},
        [-45.2, -22.8],
    ],
)
def test_reception_location_that_is_no_point_is_400(world, issued, location):
    response = post(
        world.operator,
        f"/api/v1/ctrs/{issued}/receive/",
        {"received_volume_m3": "3", "location": location},
    )
    assert response.status_code == 400
    assert "location" in response.content.decode()
    assert CTR.objects.get(number=issued).status == "issued"


def test_refuse_then_receive_is_409(world, issued):
    refused = post(world.operator, f"/api/v1/ctrs/{issued}/refuse/", {"reason": "carga com lixo"})
    assert refused.status_code == 200 and refused.json()["status"] == "refused"
    again = post(world.operator, f"/api/v1/ctrs/{issued}/receive/", {"received_volume_m3": "3"})
    assert again.status_code == 409
    assert "recusado" in again.json()["detail"]


def test_transporter_cancels_before_reception_only(world, issued):
    ok = post(world.alfa_user, f"/api/v1/ctrs/{issued}/cancel/", {"reason": "obra adiada"})
    assert ok.status_code == 200 and ok.json()["status"] == "cancelled"
    late = post(world.alfa_user, f"/api/v1/ctrs/{issued}/cancel/", {"reason": "de novo"})
    assert late.status_code == 409


def test_received_ctr_cannot_be_cancelled(world, issued):
    post(world.operator, f"/api/v1/ctrs/{issued}/receive/", {"received_volume_m3": "3"})
    response = post(world.alfa_user, f"/api/v1/ctrs/{issued}/cancel/", {"reason": "x"})
    assert response.status_code == 409


def test_transporter_cannot_receive_its_own_ctr(world, issued):
    response = post(world.alfa_user, f"/api/v1/ctrs/{issued}/receive/", {"received_volume_m3": "3"})
    assert response.status_code == 403


def test_nucleo_sees_but_does_not_receive_for_the_facility(world, issued):
    response = post(world.nucleo, f"/api/v1/ctrs/{issued}/receive/", {"received_volume_m3": "3"})
    assert response.status_code == 403


def test_refusal_needs_a_reason(world, issued):
    response = post(world.operator, f"/api/v1/ctrs/{issued}/refuse/", {"reason": ""})
    assert response.status_code == 400


def test_events_cannot_be_updated_in_the_database(world, issued):
    event = CTREvent.objects.get(ctr__number=issued)
    with pytest.raises(DatabaseError, match="somente inclusão"), connection.cursor() as cursor:
        cursor.execute("UPDATE ctr_ctrevent SET action = 'forged' WHERE id = %s", [event.pk])


def test_events_cannot_be_deleted_in_the_database(world, issued):
    event = CTREvent.objects.get(ctr__number=issued)
    with pytest.raises(DatabaseError, match="somente inclusão"), connection.cursor() as cursor:
        cursor.execute("DELETE FROM ctr_ctrevent WHERE id = %s", [event.pk])


# --- scoping --------------------------------------------------------------------------------------


def test_each_role_sees_what_it_should(world, issued):
    url = f"/api/v1/ctrs/{issued}/"
    for user in (world.alfa_user, world.operator, world.nucleo, world.fiscal):
        response = client_for(user).get(url)
        assert response.status_code == 200, user
        assert response.json()["number"] == issued
    for user in (world.beta_user, world.pev_operator, world.outsider):
        assert client_for(user).get(url).status_code == 404, user
    assert client_for(world.beta_user).get("/api/v1/ctrs/").json()["results"] == []


def test_another_transporter_cannot_cancel(world, issued):
    response = post(world.beta_user, f"/api/v1/ctrs/{issued}/cancel/", {"reason": "x"})
    assert response.status_code == 404
    assert CTR.objects.get(number=issued).status == "issued"


def test_operator_of_another_facility_cannot_receive(world, issued):
    response = post(
        world.pev_operator, f"/api/v1/ctrs/{issued}/receive/", {"received_volume_m3": "3"}
    )
    assert response.status_code == 404


def test_fleet_lists_only_the_users_transporter(world):
    plates = [
        v["plate"] for v in client_for(world.alfa_user).get("/api/v1/vehicles/").json()["results"]
    ]
    assert plates == ["ABC1D23"]
    codes = [
        e["code"] for e in client_for(world.beta_user).get("/api/v1/equipment/").json()["results"]
    ]
    assert codes == ["B-01"]


def test_list_filters(world, issued):
    nucleo = client_for(world.nucleo)
    assert len(nucleo.get("/api/v1/ctrs/?status=issued").json()["results"]) == 1
    assert len(nucleo.get("/api/v1/ctrs/?status=received").json()["results"]) == 0
    assert len(nucleo.get(f"/api/v1/ctrs/?facility={world.att.pk}").json()["results"]) == 1
    assert len(nucleo.get("/api/v1/ctrs/?plate=abc-1d23").json()["results"]) == 1
    assert len(nucleo.get("/api/v1/ctrs/?date_from=2026-12-01").json()["results"]) == 0
    lon, lat = world.origin.coords
    inside = f"{lon - 0.01},{lat - 0.01},{lon + 0.01},{lat + 0.01}"
    assert len(nucleo.get(f"/api/v1/ctrs/?bbox={inside}").json()["results"]) == 1
    assert nucleo.get("/api/v1/ctrs/?bbox=1,1,0,0").status_code == 400


# --- alerts ---------------------------------------------------------------------------------------


def test_open_too_long_listed_as_overdue(world, issued):
    ctr = CTR.objects.get(number=issued)
    later = timezone.now() + datetime.timedelta(hours=ctr.parameters().open_ctr_alert_hours + 1)
    assert list(ctr_alerts.overdue(CTR.objects.all(), later)) == [ctr]
    assert list(ctr_alerts.overdue(CTR.objects.all(), timezone.now())) == []
    alerts = ctr_alerts.open_alerts(CTR.objects.all(), later)
    assert [a.code for a in alerts] == ["OPEN_TOO_LONG"]


def test_overdue_filter_in_the_api(world, issued):
    CTR.objects.filter(number=issued).update(
        created_at=timezone.now() - datetime.timedelta(hours=72),
        transport_date=TODAY - datetime.timedelta(days=3),
    )
    nucleo = client_for(world.nucleo)
    assert len(nucleo.get("/api/v1/ctrs/?overdue=true").json()["results"]) == 1


def test_rules_catalogue_is_public_and_complete():
    body = APIClient().get("/api/v1/rules/").json()
    codes = {r["code"] for r in body}
    assert codes == set(rules.REGISTRY)
    # The first 14, the five of the onward CTR, ORIGIN_OUTSIDE_WORKSITE, the three of where
    # and when a reception was confirmed, PROVISIONAL_SYNC_LATE,
    # DESTINATION_OUTSIDE_AGREEMENT and VEHICLE_NOT_REGISTERED.
    assert len(codes) == 26
    assert all(r["article"].startswith("Lei 3.978/2007") for r in body)


def test_numbers_continue_without_gaps_after_a_refused_ctr(world):
    assert issue(world).status_code == 201
    assert issue(world, vehicle_plate="XYZ9876").status_code == 422
    second = issue(world).json()["number"]
    assert second.endswith("-000002")


def test_decimal_volume_kept_exactly(world):
    response = issue(world, waste=[{"class": "A", "volume_m3": "2.125"}])
    assert CTR.objects.get(number=response.json()["number"]).total_volume_m3 == Decimal("2.125")


def test_issue_twice_on_the_same_site_reuses_the_worksite(world):
    issue(world)
    issue(world)
    assert CTR.objects.values("worksite").distinct().count() == 1


def test_json_body_must_be_an_object(world):
    response = client_for(world.alfa_user).post(
        "/api/v1/ctrs/", data=json.dumps([1, 2]), content_type="application/json"
    )
    assert response.status_code == 400


def test_point_helper_sanity():
    assert point(1, 2).srid == 4326


def test_open_ctr_alerts_command_lists_only_overdue(world, issued):
    out = StringIO()
    call_command("open_ctr_alerts", stdout=out)
    assert "0 CTR(s)" in out.getvalue()
    CTR.objects.filter(number=issued).update(
        created_at=timezone.now() - datetime.timedelta(hours=72),
        transport_date=TODAY - datetime.timedelta(days=3),
    )
    out = StringIO()
    call_command("open_ctr_alerts", "--municipality", "3518404", stdout=out)
    assert issued in out.getvalue() and "1 CTR(s)" in out.getvalue()


# --- the list: keyset pages, newest first -----------------------------------------------------


def test_list_pages_by_cursor_newest_first_without_count(world):
    numbers = [issue(world).json()["number"] for _ in range(5)]
    # Two CTRs issued in the same instant: the id breaks the tie, none is lost or repeated.
    same_instant = timezone.now() - datetime.timedelta(hours=1)
    CTR.objects.filter(number__in=numbers[1:3]).update(created_at=same_instant)
    nucleo = client_for(world.nucleo)
    expected = list(CTR.objects.order_by("-created_at", "-pk").values_list("number", flat=True))
    seen, url, pages = [], "/api/v1/ctrs/?page_size=2", 0
    while url:
        body = nucleo.get(url).json()
        assert "count" not in body  # no COUNT(*) over every match (docs/performance.md, P5)
        assert len(body["results"]) <= 2
        seen += [ctr["number"] for ctr in body["results"]]
        url, pages = body["next"], pages + 1
    assert seen == expected
    assert pages == 3
    # A CTR issued while the client walks the pages does not shift what comes next.
    first = nucleo.get("/api/v1/ctrs/?page_size=2").json()
    issue(world)
    second = nucleo.get(first["next"]).json()
    assert [c["number"] for c in second["results"]] == expected[2:4]


def test_list_page_size_is_bounded_and_bad_cursor_is_a_clear_400(world):
    issue(world)
    nucleo = client_for(world.nucleo)
    assert len(nucleo.get("/api/v1/ctrs/?page_size=100000").json()["results"]) == 1
    response = nucleo.get("/api/v1/ctrs/?cursor=nao-e-um-cursor")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/problem+json")
    errors = response.json()["errors"]
    assert errors[0]["campo"] == "cursor"
    assert "Cursor de paginação inválido" in errors[0]["mensagem"]


def test_list_reads_related_rows_per_page_not_per_ctr(world, django_assert_max_num_queries):
    for _ in range(6):
        issue(world)
    nucleo = client_for(world.nucleo)
    # user + groups, the page, and one query per relation the output shows: not one per CTR.
    with django_assert_max_num_queries(12):
        body = nucleo.get("/api/v1/ctrs/").json()
    assert len(body["results"]) == 6
    assert {c["transporter"]["name"] for c in body["results"]} == {world.alfa.name}
    assert all(c["waste"] and c["destination_facility"]["kind"] for c in body["results"])


def test_issue_answers_the_stored_ctr_without_reading_it_back(world, django_assert_max_num_queries):
    """The 201 body is built from what services.issue stored, not read back: it must be what
    the CTR's own page answers afterwards."""
    # Token auth with the membership and transporter in one query; the rules' lookups; the
    # transaction, here also creating the generator and the worksite (number, CTR, waste,
    # event). It was 28 with the read-back and the lookups made one by one. One of the
    # lookups is the transporter's licence in the CTR's municipality (the rules read
    # it, no longer fields of the transporter row the token brought). The last one reads who
    # subscribes to webhooks, which a process keeps for a few seconds (webhooks.outbox
    # .Subscriptions): dropped first, so that the count is the same whatever ran before.
    subscriptions.clear()
    client = APIClient()
    token = Token.objects.create(user=world.alfa_user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    payload = ctr_payload(
        world,
        waste=[
            {"class": "A", "volume_m3": "2.5", "description": "concreto"},
            {"class": "B", "volume_m3": "0.5", "description": ""},
        ],
    )
    with django_assert_max_num_queries(22):
        created = client.post("/api/v1/ctrs/", payload, format="json")
    assert created.status_code == 201, created.content
    body = created.json()
    shown = client.get(f"/api/v1/ctrs/{body['number']}/").json()
    shown.pop("events")
    assert body == shown
    assert [w["volume_m3"] for w in body["waste"]] == ["2.500", "0.500"]
