"""Destinations across borders: a facility lies in one municipality; a
municipality lists the others whose facilities its CTRs may use (a consortium's shared
landfill); a destination outside that list is refused with its reason (Lei 3.978/2007 art. 2
caput, art. 4 §2 II). The landfill's municipality sees the loads that arrive at it, the
origin's sees where its waste went, and neither sees the rest of the other's data."""

from __future__ import annotations

import datetime

import pytest
from django.test import Client

from ctr import services
from ctr.models import CTR, Worksite
from fiscalization.models import DumpingReport
from fiscalization.models.enforcement import EnforcementCase
from jurisdiction.models import Role
from pev_network.models import FacilityKind
from tests.builders import licence, licensed_facility, municipality, offset, point, square
from tests.ctr.test_ctr_api import client_for, error_codes, issue
from tests.ctr_world import TODAY, build_world, make_user
from tests.enforcement_world import open_case

# Issues CTRs on the day the clock says: frozen on TODAY (tests/clock.py).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen_today")]

D = datetime.date


@pytest.fixture
def consortium():
    return build_consortium()


def build_consortium() -> dict:
    """The town (A) and Aparecida (B) beside it; B's landfill, which A's CTRs may use (A lists
    B); alfa licensed in both; a Núcleo for each."""
    world = build_world()
    b = municipality("3502507", "Aparecida (teste)", east_m=20_000)
    landfill_b = licensed_facility(
        FacilityKind.LANDFILL,
        square(*offset(*world.origin.coords, 20_000, 1_000), 200),
        "Aterro do consórcio",
        b,
    )
    licence(world.alfa, b, "AP-001", D(2025, 1, 1))
    world.town.accepted_destinations.add(b)
    return {
        "world": world,
        "a": world.town,
        "b": b,
        "landfill_b": landfill_b,
        "nucleo_a": world.nucleo,
        "nucleo_b": make_user("nucleo_b", Role.NUCLEO, b),
    }


def b_origin(world) -> dict:
    return {"type": "Point", "coordinates": list(offset(*world.origin.coords, 20_000))}


def numbers(response) -> set[str]:
    assert response.status_code == 200, response.content
    body = response.json()
    rows = body.get("results", body)
    rows = rows.get("features", rows) if isinstance(rows, dict) else rows
    return {(r.get("properties") or r)["number"] for r in rows}


# --- the rule ------------------------------------------------------------------------------------


def test_a_load_to_the_consortiums_landfill_in_the_neighbour_is_issued(consortium):
    world = consortium["world"]
    response = issue(world, facility=consortium["landfill_b"])
    assert response.status_code == 201, response.content
    assert "DESTINATION_OUTSIDE_AGREEMENT" not in {f["code"] for f in response.json()["findings"]}


def test_a_load_to_the_neighbours_landfill_without_an_agreement_is_refused_with_its_reason(
    consortium,
):
    world = consortium["world"]
    consortium["a"].accepted_destinations.clear()
    refused = issue(world, facility=consortium["landfill_b"])
    assert error_codes(refused) == ["DESTINATION_OUTSIDE_AGREEMENT"]
    (error,) = refused.json()["errors"]
    assert error["message"] == (
        "A área “Aterro do consórcio” fica em Aparecida (teste)/SP, que não está entre os "
        "municípios cujas áreas recebem os CTRs de Guaratinguetá (teste)/SP (consórcio ou "
        "convênio)."
    )
    assert error["article"] == "Lei 3.978/2007 art. 2 caput, art. 4 §2 II"
    assert not CTR.objects.exists()


def test_the_agreement_runs_one_way(consortium):
    """A lists B: A's loads may go to B's landfill; B's loads may not come to A's ATT."""
    world = consortium["world"]
    refused = issue(world, origin=b_origin(world))  # from B to the town's ATT
    assert error_codes(refused) == ["DESTINATION_OUTSIDE_AGREEMENT"]
    consortium["b"].accepted_destinations.add(consortium["a"])
    assert issue(world, origin=b_origin(world)).status_code == 201


def test_a_municipalitys_own_areas_need_no_agreement(consortium):
    world = consortium["world"]
    consortium["a"].accepted_destinations.clear()
    assert issue(world).status_code == 201  # the town's ATT
    assert issue(world, origin=b_origin(world), facility=consortium["landfill_b"]).status_code == (
        201
    )


# --- who sees what: the CTRs (API) ---------------------------------------------------------------


@pytest.fixture
def loads(consortium):
    world = consortium["world"]
    to_b = issue(world, facility=consortium["landfill_b"]).json()["number"]
    to_a = issue(world).json()["number"]  # the town's ATT
    consortium["b"].accepted_destinations.add(consortium["a"])
    from_b = issue(world, origin=b_origin(world)).json()["number"]  # B's load to A's ATT
    only_b = issue(world, origin=b_origin(world), facility=consortium["landfill_b"]).json()[
        "number"
    ]
    return {"to_b": to_b, "to_a": to_a, "from_b": from_b, "only_b": only_b}


def test_the_landfills_nucleo_sees_the_loads_that_arrive_and_nothing_else_of_the_origin(
    consortium, loads
):
    api = client_for(consortium["nucleo_b"])
    listed = numbers(api.get("/api/v1/ctrs/"))
    assert loads["to_b"] in listed and loads["to_a"] not in listed
    assert api.get(f"/api/v1/ctrs/{loads['to_b']}/").status_code == 200
    assert api.get(f"/api/v1/ctrs/{loads['to_a']}/").status_code == 404
    assert {loads["from_b"], loads["only_b"]} <= listed  # its own municipality's


def test_the_origins_nucleo_sees_where_its_waste_went(consortium, loads):
    api = client_for(consortium["nucleo_a"])
    listed = numbers(api.get("/api/v1/ctrs/"))
    assert {loads["to_b"], loads["to_a"]} <= listed
    detail = api.get(f"/api/v1/ctrs/{loads['to_b']}/")
    assert detail.status_code == 200
    assert detail.json()["destination_facility"]["name"] == "Aterro do consórcio"
    # B's load to A's ATT arrives in A: A sees it; B's load to B's landfill is none of A's.
    assert loads["from_b"] in listed
    assert loads["only_b"] not in listed
    assert api.get(f"/api/v1/ctrs/{loads['only_b']}/").status_code == 404


def test_a_municipalitys_ctrs_are_those_leaving_it_and_those_arriving_at_its_areas(
    consortium, loads
):
    """CTRQuerySet.municipal_q: the origin's municipality, or the destination facility's."""
    b_side = set(
        CTR.objects.in_municipalities([consortium["b"].pk]).values_list("number", flat=True)
    )
    assert b_side == {loads["to_b"], loads["from_b"], loads["only_b"]}
    a_side = set(
        CTR.objects.in_municipalities([consortium["a"].pk]).values_list("number", flat=True)
    )
    assert a_side == {loads["to_b"], loads["to_a"], loads["from_b"]}


# --- neither sees the rest of the other's data ----------------------------------------------------


@pytest.fixture
def each_ones(consortium):
    """A report, a case and a registered worksite in each municipality."""
    world, a, b = consortium["world"], consortium["a"], consortium["b"]
    rows = {}
    for name, place, east in (("a", a, 0), ("b", b, 20_000)):
        here = point(*offset(*world.origin.coords, east, 300))
        rows[f"report_{name}"] = DumpingReport.objects.create(
            municipality=place, location=here, category="LOTE_VAGO", description="Entulho."
        )
        rows[f"worksite_{name}"] = Worksite.objects.create(
            generator=world.gama,
            address=f"Rua {name.upper()}, 1",
            location=here,
            municipality=place,
            registered_at=datetime.datetime(2026, 1, 5, tzinfo=datetime.UTC),
        )
    rows["case_a"] = open_case(world)
    return rows


def test_neither_nucleo_reads_the_others_reports_cases_or_worksites(consortium, each_ones):
    """The mechanism every page and API route goes through (ScopedQuerySet.visible_to): the
    other municipality's rows are not there, the shared landfill notwithstanding."""
    for mine, theirs, user in (("a", "b", "nucleo_a"), ("b", "a", "nucleo_b")):
        who = consortium[user]
        reports = DumpingReport.objects.visible_to(who)
        worksites = Worksite.objects.visible_to(who)
        assert reports.filter(pk=each_ones[f"report_{mine}"].pk).exists()
        assert not reports.filter(pk=each_ones[f"report_{theirs}"].pk).exists()
        assert worksites.filter(pk=each_ones[f"worksite_{mine}"].pk).exists()
        assert not worksites.filter(pk=each_ones[f"worksite_{theirs}"].pk).exists()
    cases_b = EnforcementCase.objects.visible_to(consortium["nucleo_b"])
    assert not cases_b.filter(pk=each_ones["case_a"].pk).exists()
    assert (
        EnforcementCase.objects.visible_to(consortium["nucleo_a"])
        .filter(pk=each_ones["case_a"].pk)
        .exists()
    )


def test_the_others_dumping_report_answers_404_through_the_api(consortium, each_ones):
    api = client_for(consortium["nucleo_b"])
    assert api.get(f"/api/v1/dumping-reports/{each_ones['report_b'].pk}/").status_code == 200
    assert api.get(f"/api/v1/dumping-reports/{each_ones['report_a'].pk}/").status_code == 404


def test_the_others_worksite_answers_404_through_the_api(consortium, each_ones):
    api = client_for(consortium["nucleo_b"])
    assert api.get(f"/api/v1/worksites/{each_ones['worksite_b'].pk}/").status_code == 200
    assert api.get(f"/api/v1/worksites/{each_ones['worksite_a'].pk}/").status_code == 404


def test_the_others_case_answers_404_on_its_page(consortium, each_ones):
    web = Client()
    web.force_login(consortium["nucleo_b"])
    assert web.get(f"/fiscalizacao/processos/{each_ones['case_a'].pk}/").status_code == 404


def test_issuing_services_resolve_the_neighbours_landfill_by_its_point(consortium):
    """The destination facility is the one under the discharge point, wherever it lies: the
    agreement, not the boundary, decides whether it may be used."""
    world = consortium["world"]
    facility, licensed = services.resolve_destination(
        world.inside(consortium["landfill_b"]),
        world.town.parameters_on(TODAY).gps_tolerance_m,
        TODAY,
    )
    assert (facility, licensed) == (consortium["landfill_b"], True)
    assert services.destination_agreed(world.town, facility)
    assert not services.destination_agreed(consortium["b"], world.att)
