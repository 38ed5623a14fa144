"""ORIGIN_OUTSIDE_WORKSITE (Lei 3.978/2007 art. 3 VI, art. 13): the CTR informs the origin of
the waste, and a load from a worksite its generator registered leaves from within it (the
contour drawn, or the point, plus the municipality's GPS tolerance). A warning: the CTR is
issued, the finding stays on it. Checked one by one and in a CSV import alike; a worksite a
CTR created, without a registration, is not held to the location that CTR declared."""

from __future__ import annotations

import csv
import io
from decimal import Decimal

import pytest
from django.contrib.gis.geos import GEOSGeometry, Polygon
from rest_framework.test import APIClient

from ctr import rules, services
from ctr.bulk import csv_import
from ctr.models import CTR, Worksite
from ctr.rules import WasteLine
from tests.builders import point, set_parameters
from tests.ctr_world import CNPJ_GAMA, TODAY, build_world, ctr_payload
from tests.generators.worksite_world import ADDRESS, at, registered, square_m

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen_today")]


@pytest.fixture
def world():
    return build_world()


@pytest.fixture
def drawn(world):
    """Gama's worksite drawn as a 100 m square around the world's origin (at(-50..50))."""
    import json

    area = GEOSGeometry(json.dumps(square_m()), srid=4326)
    assert isinstance(area, Polygon)
    return registered(world.gama, area=area, municipality=world.town)


@pytest.fixture
def marked(world):
    """Gama's worksite registered by its point: the world's origin."""
    return registered(world.gama, municipality=world.town)


def request_from(world, origin, address: str = ADDRESS, **overrides) -> services.IssueRequest:
    values = dict(
        transport_date=TODAY,
        vehicle_plate="ABC1D23",
        equipment_code="C-01",
        origin=point(*origin),
        destination=world.inside(world.att),
        waste=[WasteLine("A", Decimal("3"), "entulho")],
        generator=services.GeneratorData("Construtora Gama Ltda.", CNPJ_GAMA),
        worksite=services.WorksiteData(address, point(*origin)),
    )
    values.update(overrides)
    return services.IssueRequest(**values)


def outside_findings(world, origin, **overrides) -> list[rules.Finding]:
    _, findings = services.check(world.alfa, request_from(world, origin, **overrides))
    return [f for f in findings if f.code == "ORIGIN_OUTSIDE_WORKSITE"]


def test_a_load_leaving_from_inside_the_contour_drawn_has_no_finding(world, drawn):
    assert outside_findings(world, at(20, -30)) == []


def test_a_load_declared_from_outside_the_registered_worksite_is_issued_with_a_warning(
    world, drawn
):
    ctr = services.issue(world.alfa, world.alfa_user, request_from(world, at(400, 0)))
    assert ctr.worksite == drawn
    (finding,) = [f for f in ctr.findings if f["code"] == "ORIGIN_OUTSIDE_WORKSITE"]
    assert finding["severity"] == rules.Severity.WARNING
    assert finding["field"] == "origin"
    assert finding["article"] == "Lei 3.978/2007 art. 3 VI, art. 13"
    assert finding["message"].startswith("A origem (-22,")
    assert finding["message"].endswith(
        "fica fora da área cadastrada da obra “Rua do Canteiro, 200”, além da tolerância de "
        "15 m do GPS."
    )


def test_an_origin_just_past_the_fence_within_the_gps_tolerance_counts_as_inside(world, drawn):
    assert outside_findings(world, at(60, 0)) == []  # 10 m east of the contour


def test_an_origin_past_the_gps_tolerance_of_the_contour_is_flagged(world, drawn):
    assert len(outside_findings(world, at(70, 0))) == 1  # 20 m east


def test_without_a_contour_the_origin_is_held_to_the_point_plus_the_tolerance(world, marked):
    assert outside_findings(world, at(10, 0)) == []
    (finding,) = outside_findings(world, at(20, 0))
    assert "fica a mais de 15 m do local cadastrado da obra “Rua do Canteiro, 200”" in (
        finding.message
    )


def test_the_tolerance_is_the_worksites_municipality(world, marked):
    set_parameters(world.town, gps_tolerance_m=Decimal("40.0"))
    assert outside_findings(world, at(30, 0)) == []
    (finding,) = outside_findings(world, at(50, 0))
    assert "a mais de 40 m" in finding.message


def test_the_address_is_matched_as_the_worksites_are_case_and_spacing_aside(world, marked):
    assert len(outside_findings(world, at(500, 0), address="  rua do CANTEIRO,  200")) == 1


def test_a_worksite_a_ctr_created_is_not_held_to_the_location_that_ctr_declared(world):
    first = services.issue(world.alfa, world.alfa_user, request_from(world, at(0, 0)))
    assert first.worksite.registered_at is None
    # The next load of that address from 2 km away: nobody registered where the site is.
    assert outside_findings(world, at(2000, 0)) == []


def test_another_generators_worksite_at_the_address_is_not_this_loads(world, marked):
    other = services.GeneratorData("Maria da Obra", "52998224725")
    assert outside_findings(world, at(2000, 0), generator=other) == []


def test_a_worksite_named_by_its_id_is_checked_too(world, marked):
    client = APIClient()
    client.force_authenticate(world.alfa_user)
    payload = ctr_payload(
        world, worksite_id=marked.pk, origin={"type": "Point", "coordinates": list(at(300, 0))}
    )
    payload.pop("worksite")
    payload.pop("generator")
    response = client.post("/api/v1/ctrs/", payload, format="json")
    assert response.status_code == 201, response.content
    codes = [f["code"] for f in CTR.objects.get().findings]
    assert codes == ["ORIGIN_OUTSIDE_WORKSITE"]


def csv_file(world, origins) -> bytes:
    target = world.inside(world.att)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=csv_import.COLUMNS, delimiter=";")
    writer.writeheader()
    for lon, lat in origins:
        writer.writerow(
            {
                "transport_date": TODAY.isoformat(),
                "vehicle_plate": "ABC1D23",
                "equipment_code": "C-01",
                "generator_name": "Construtora Gama Ltda.",
                "generator_document": CNPJ_GAMA,
                "worksite_address": ADDRESS,
                "origin_lon": f"{lon:.8f}",
                "origin_lat": f"{lat:.8f}",
                "destination_lon": f"{target.x:.8f}",
                "destination_lat": f"{target.y:.8f}",
                "waste": "A=2",
            }
        )
    return out.getvalue().encode()


@pytest.mark.parametrize("per_row", [False, True], ids=["em lote", "uma a uma"])
def test_a_csv_file_flags_the_rows_from_outside_the_worksite_in_either_path(world, drawn, per_row):
    data = csv_file(world, [at(0, 0), at(400, 0), at(60, 0)])
    report = csv_import.import_ctrs(data, world.alfa, world.alfa_user, per_row=per_row)
    flagged = [
        [f.code for f in row.findings if f.code == "ORIGIN_OUTSIDE_WORKSITE"] for row in report.rows
    ]
    assert flagged == [[], ["ORIGIN_OUTSIDE_WORKSITE"], []]
    # A warning: all three issued, on the registered worksite.
    assert all(row.number for row in report.rows)
    assert set(CTR.objects.values_list("worksite", flat=True)) == {drawn.pk}
    assert Worksite.objects.count() == 1
