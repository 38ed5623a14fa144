"""An approved PGRCC feeds NOT_IN_GENERATOR_PLAN (Lei 3.978/2007 art. 9 p.ú. I) on the CTRs
issued afterwards from its worksite: one by one (API) and in a CSV file (the set-based import
and the per-row path alike), the worksite named by its generator and address."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from ctr.bulk import csv_import
from generators import plans
from generators.models import PlanStatus
from tests.ctr.test_ctr_bulk import csv_text, worksite_row
from tests.ctr_world import CNPJ_GAMA, build_world, ctr_payload
from tests.generators.test_plans import gama_site, plan_input

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(frozen_today):
    return build_world()


ADDRESS = "Av. das Obras, 100"


def issue(world, user, facility=None, address=ADDRESS):
    payload = ctr_payload(
        world,
        facility,
        generator={"name": world.gama.name, "document": CNPJ_GAMA},
        worksite={
            "address": address,
            "location": {"type": "Point", "coordinates": list(world.origin.coords)},
        },
    )
    if user == world.beta_user:
        payload.update(vehicle_plate="XYZ-9876", equipment_code="B-01")
    client = APIClient()
    client.force_authenticate(user)
    response = client.post("/api/v1/ctrs/", payload, format="json")
    assert response.status_code == 201, response.content
    return [(f["code"], f["field"], f["message"]) for f in response.json()["findings"]]


@pytest.fixture
def approved(world):
    site = gama_site(world, ADDRESS)
    plan = plans.save(site, world.generator_user, plan_input(world), submit=True)
    assert not issue(world, world.beta_user)  # submitted, not yet in force: no warning
    plans.approve(plan, world.nucleo)
    assert plan.worksite.plans.get().status == PlanStatus.APPROVED
    return world


def test_a_ctr_by_a_transporter_the_approved_plan_does_not_name_is_warned(approved):
    world = approved
    assert issue(world, world.beta_user) == [
        ("NOT_IN_GENERATOR_PLAN", "transporter", "O PGRCC da obra não indica este transportador.")
    ]


def test_a_ctr_to_a_destination_the_plan_does_not_name_is_warned(approved):
    world = approved
    found = issue(world, world.alfa_user, world.recycling, address="  av. DAS obras,  100")
    assert found == [
        (
            "NOT_IN_GENERATOR_PLAN",
            "destination_facility",
            f"O PGRCC da obra não indica “{world.recycling.name}” como destino.",
        )
    ]
    assert issue(world, world.alfa_user) == []  # alfa to the ATT: as planned


@pytest.mark.parametrize("per_row", [False, True], ids=["bulk", "per-row"])
def test_a_csv_file_gets_the_same_warnings_on_both_paths(approved, per_row):
    world = approved
    row = {"generator_name": world.gama.name, "generator_document": CNPJ_GAMA,
           "worksite_address": ADDRESS}  # fmt: skip
    other_site = {**row, "worksite_address": "Rua X, 1"}
    rows = [worksite_row(world, **row), worksite_row(world, **other_site)]
    report = csv_import.import_ctrs(
        csv_text(rows).encode(), world.beta, world.beta_user, per_row=per_row
    )
    first, other = report.rows
    assert first.number and other.number  # warnings do not refuse
    assert [w.message for w in first.warnings] == ["O PGRCC da obra não indica este transportador."]
    assert [f.code for f in first.findings] == ["NOT_IN_GENERATOR_PLAN"]
    assert other.warnings == []  # another worksite of Gama's, without a plan
