"""Onward CTRs: sorted waste leaving an ATT or a PEV (Lei 3.978/2007 art. 3 III), its own rules each
just inside and just outside its bound, and the API's refusals that write nothing."""

from decimal import Decimal

import pytest
from rest_framework.test import APIClient

from ctr import errors, services
from ctr.models import CTR, FacilityOperator
from pev_network.models import FacilityLicense
from tests.builders import offset, point, set_parameters
from tests.ctr.onward_world import (
    CNPJ_OPERATOR,
    api_client,
    codes,
    inbound,
    onward,
    onward_findings,
    onward_payload,
    onward_request,
    stocked_world,
    written,
)
from tests.ctr_world import TODAY

pytestmark = pytest.mark.django_db

D = TODAY.__class__


@pytest.fixture
def world(frozen_today):
    return stocked_world()


client_for = api_client


# --- issuing ----------------------------------------------------------------------------------


def test_the_att_operator_issues_an_onward_ctr_through_the_api(world):
    response = client_for(world.operator).post(
        "/api/v1/ctrs/", onward_payload(world), format="json"
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["origin_facility"] == {"id": world.att.pk, "name": "ATT", "kind": "ATT"}
    assert body["destination_facility"]["id"] == world.recycling.pk
    assert body["transporter"]["id"] == world.beta.pk
    assert body["generator"]["document"] == CNPJ_OPERATOR
    ctr = CTR.objects.get(number=body["number"])
    assert ctr.is_onward and ctr.created_by == world.operator
    # The origin defaults to a point inside the ATT.
    assert world.att.area.covers(ctr.origin)
    # The operator's company is now the ATT's generator: the next onward CTR may omit it.
    assert FacilityOperator.objects.get(facility=world.att).generator.document == CNPJ_OPERATOR
    second = onward_payload(world, waste=[{"class": "A", "volume_m3": "1"}])
    del second["generator"]
    response = client_for(world.operator).post("/api/v1/ctrs/", second, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["generator"]["document"] == CNPJ_OPERATOR


def test_the_operator_sees_its_onward_ctrs_and_cancels_them(world):
    ctr = onward(world, {"A": "2"})
    client = client_for(world.operator)
    assert client.get(f"/api/v1/ctrs/{ctr.number}/").status_code == 200
    assert client_for(world.pev_operator).get(f"/api/v1/ctrs/{ctr.number}/").status_code == 404
    response = client.post(
        f"/api/v1/ctrs/{ctr.number}/cancel/", {"reason": "caminhão quebrou"}, format="json"
    )
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "cancelled"


def test_another_generator_than_the_operator_is_refused(world):
    onward(world, {"A": "1"})
    other = services.GeneratorData("Outra Empresa", "52998224725")
    with pytest.raises(errors.CTRError) as refused:
        onward(world, {"A": "1"}, generator=other)
    assert refused.value.code == "generator_not_operator"


def test_the_first_onward_ctr_must_name_the_operator(world):
    with pytest.raises(errors.CTRError) as refused:
        onward(world, {"A": "1"}, generator=None)
    assert refused.value.code == "generator_required"
    assert "operador da área" in str(refused.value)


def test_the_municipality_issues_from_its_pev_not_from_an_att(world):
    inbound(world, {"A": "0.8"}, received="0.8", facility=world.pev)
    ctr = onward(world, {"A": "0.5"}, user=world.nucleo, facility=world.pev)
    assert ctr.origin_facility == world.pev
    with pytest.raises(errors.NotAllowed):
        onward(world, {"A": "1"}, user=world.nucleo)


# --- the onward rules, each at its bound -------------------------------------------------------


def test_volume_up_to_stock_plus_tolerance_is_allowed_and_beyond_is_refused(world):
    # 10 m³ received, the default 10 % of sorting tolerance: up to 11 m³ may leave.
    assert "OVER_FACILITY_STOCK" not in codes(onward_findings(world, {"A": "11"}))
    findings = onward_findings(world, {"A": "11.001"})
    assert codes(findings) == ["OVER_FACILITY_STOCK"]
    (finding,) = findings
    assert finding.article == "Lei 3.978/2007 art. 3 III, art. 13 p.ú."
    assert finding.message == (
        "Saída de 11,001 m³ de Classe A (agregados: concreto, tijolo, solo…) acima do que a "
        "área “ATT” pode expedir em 30/11/2026: estoque de 10 m³ mais 10% do recebido (11 m³)."
    )


def test_the_tolerance_is_the_municipality_s_per_class(world):
    set_parameters(world.town, sorting_tolerance_pct={"A": "0"})
    assert "OVER_FACILITY_STOCK" not in codes(onward_findings(world, {"A": "10"}))
    assert "OVER_FACILITY_STOCK" in codes(onward_findings(world, {"A": "10.001"}))


def test_what_already_left_counts_and_lines_of_one_class_add_up(world):
    onward(world, {"A": "6"})
    # 4 m³ left, plus 1 m³ of tolerance: 5 m³ in two lines is the bound.
    assert not onward_findings(world, {"A": "5"})
    request = onward_request(world, {"A": "3"}, origin=world.inside(world.att))
    request.waste.append(request.waste[0].__class__("A", Decimal("2.001")))
    _, findings = services.check(world.beta, request)
    assert codes(findings) == ["OVER_FACILITY_STOCK"]


def test_a_class_never_received_cannot_leave(world):
    findings = onward_findings(world, {"B": "0.001"}, destination=world.pev)
    assert "CLASS_NOT_RECEIVED_AT_ORIGIN" in codes(findings)
    assert "OVER_FACILITY_STOCK" not in codes(findings)  # one finding for one fact
    (message,) = [f.message for f in findings if f.code == "CLASS_NOT_RECEIVED_AT_ORIGIN"]
    assert message.startswith("A área “ATT” não recebeu Classe B")


def test_a_class_counts_as_received_only_once_a_ctr_confirms_it(world):
    inbound(world, {"B": "2"})  # issued, not yet received
    findings = onward_findings(world, {"B": "1"}, destination=world.pev)
    assert "CLASS_NOT_RECEIVED_AT_ORIGIN" in codes(findings)
    inbound(world, {"B": "2"}, received="2")
    findings = onward_findings(world, {"B": "1"}, destination=world.pev)
    assert "CLASS_NOT_RECEIVED_AT_ORIGIN" not in codes(findings)


def test_a_class_received_after_the_transport_day_does_not_count(world):
    day = D(2026, 11, 29)
    findings = onward_findings(world, {"A": "1"}, day=day)
    assert "CLASS_NOT_RECEIVED_AT_ORIGIN" in codes(findings)
    assert "CLASS_NOT_RECEIVED_AT_ORIGIN" not in codes(onward_findings(world, {"A": "1"}))


def test_the_origin_facility_must_be_licensed_on_the_day(world):
    license = FacilityLicense.objects.get(facility=world.att)
    license.valid_until = TODAY
    license.save()
    assert "ORIGIN_FACILITY_NOT_LICENSED" not in codes(onward_findings(world, {"A": "1"}))
    license.valid_until = D(2026, 11, 29)
    license.save()
    findings = onward_findings(world, {"A": "1"})
    assert "ORIGIN_FACILITY_NOT_LICENSED" in codes(findings)
    (finding,) = [f for f in findings if f.code == "ORIGIN_FACILITY_NOT_LICENSED"]
    assert finding.article == "Lei 3.978/2007 art. 14 §1"
    assert finding.message == "A área de origem “ATT” não tem licença válida em 30/11/2026."


def test_the_origin_point_is_inside_the_facility_within_the_gps_tolerance(world):
    # The ATT is a 100 m square with its south-west corner at sw; the tolerance is 15 m.
    sw_lon, sw_lat = world.att.area.extent[:2]
    just_inside = point(*offset(sw_lon, sw_lat + 0.0004, -14, 0))
    just_outside = point(*offset(sw_lon, sw_lat + 0.0004, -16, 0))
    inside = onward_findings(world, {"A": "1"}, origin=just_inside)
    assert "ORIGIN_OUTSIDE_ORIGIN_FACILITY" not in codes(inside)
    outside = onward_findings(world, {"A": "1"}, origin=just_outside)
    assert "ORIGIN_OUTSIDE_ORIGIN_FACILITY" in codes(outside)


def test_only_an_att_or_a_pev_ships_onward(world):
    inbound(world, {"A": "5"}, facility=world.landfill)
    findings = onward_findings(world, {"A": "1"}, facility=world.landfill)
    assert "ORIGIN_FACILITY_KIND" in codes(findings)
    assert "ORIGIN_FACILITY_KIND" not in codes(onward_findings(world, {"A": "1"}))


def test_an_onward_ctr_still_meets_the_whole_catalogue(world):
    # Class A to a PEV above its small-volume limit: the destination's rules still apply.
    findings = onward_findings(world, {"A": "2"}, destination=world.pev)
    assert "LARGE_VOLUME_AT_PEV" in codes(findings)


# --- refusals through the API: every finding, nothing written ----------------------------------


def test_every_finding_is_given_at_once_and_nothing_is_written(world):
    before = written()
    body = onward_payload(
        world,
        waste=[{"class": "A", "volume_m3": "12"}, {"class": "B", "volume_m3": "1"}],
        destination={"type": "Point", "coordinates": list(world.inside(world.pev).coords)},
    )
    response = client_for(world.operator).post("/api/v1/ctrs/", body, format="json")
    assert response.status_code == 422, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    found = sorted(e["code"] for e in response.json()["errors"])
    assert {"OVER_FACILITY_STOCK", "CLASS_NOT_RECEIVED_AT_ORIGIN", "LARGE_VOLUME_AT_PEV"} <= set(
        found
    )
    assert all(e["message"] for e in response.json()["errors"])
    assert written() == before


@pytest.mark.parametrize("volume", ["-1", "0", "100.001", "1e9"])
def test_negative_or_absurd_volumes_are_a_400_and_nothing_is_written(world, volume):
    before = written()
    body = onward_payload(world, waste=[{"class": "A", "volume_m3": volume}])
    response = client_for(world.operator).post("/api/v1/ctrs/", body, format="json")
    assert response.status_code == 400, response.content
    assert "volume_m3" in response.content.decode()
    assert written() == before


@pytest.mark.parametrize("who", ["pev_operator", "alfa_user", "outsider", "fiscal"])
def test_who_does_not_operate_the_facility_is_refused_and_nothing_is_written(world, who):
    before = written()
    response = client_for(getattr(world, who)).post(
        "/api/v1/ctrs/", onward_payload(world), format="json"
    )
    assert response.status_code == 403, response.content
    assert "Só um operador da área “ATT”" in response.json()["detail"]
    assert written() == before


def test_anonymous_callers_get_a_401(world):
    response = APIClient().post("/api/v1/ctrs/", onward_payload(world), format="json")
    assert response.status_code == 401


def test_an_onward_ctr_needs_its_transporter_and_no_worksite(world):
    body = onward_payload(world)
    del body["transporter"]
    response = client_for(world.operator).post("/api/v1/ctrs/", body, format="json")
    assert response.status_code == 400
    assert "transportador" in response.content.decode()
    body = onward_payload(world, worksite_id=1)
    response = client_for(world.operator).post("/api/v1/ctrs/", body, format="json")
    assert response.status_code == 400
    assert "não de uma obra" in response.content.decode()


def test_an_unknown_origin_facility_is_named(world):
    response = client_for(world.operator).post(
        "/api/v1/ctrs/", onward_payload(world, origin_facility=999999), format="json"
    )
    assert response.status_code == 400
    assert response.json()["detail"] == "A área de origem 999999 não existe."
