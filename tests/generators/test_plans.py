"""The PGRCC (Lei 3.978/2007 art. 9): the estimator from the municipality's
rates, the generator's versions, only licensed transporters and destinations (each refused
with its name and why, nothing written), the Núcleo's approval or return with a note, the
history, and the approved plan copied to the worksite that NOT_IN_GENERATOR_PLAN reads."""

from __future__ import annotations

import datetime
import threading
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.db import connection

from ctr.models import WorkKind, Worksite
from generators import estimator, plans
from generators.models import PlanAction, PlanStatus, WastePlan
from pev_network.models import (
    WORK_KINDS,
    FacilityLicense,
    MunicipalParameters,
    WasteClass,
    default_generation_rates,
    validate_generation_rates,
)
from tests.builders import municipality, set_parameters
from tests.ctr_world import TODAY, build_world

pytestmark = pytest.mark.django_db

D = datetime.date
M3 = Decimal


@pytest.fixture
def world(frozen_today):
    return build_world()


def gama_site(world, address="Av. das Obras, 100", area="1000", kind=WorkKind.NEW_BUILDING):
    return Worksite.objects.create(
        generator=world.gama,
        address=address,
        location=world.origin,
        municipality=world.town,
        built_area_m2=M3(area),
        work_kind=kind,
    )


def plan_input(world, transporters=None, facilities=None, **volumes):
    return plans.PlanInput(
        volumes=volumes or {"A": "92.5", "B": "23.75"},
        transporter_ids=[t.pk for t in (transporters or [world.alfa])],
        facility_ids=[f.pk for f in (facilities or [world.att])],
    )


def submitted(world, site=None, **kwargs) -> WastePlan:
    site = site or gama_site(world)
    return plans.save(site, world.generator_user, plan_input(world, **kwargs), submit=True)


# --- the estimator ---------------------------------------------------------------------------


def test_default_rates_come_from_pinto_150_kg_per_m2_at_1200_kg_per_m3():
    rates = default_generation_rates()
    assert set(rates) == set(WORK_KINDS) == set(WorkKind.values)
    new = {c: M3(v) for c, v in rates["new_building"].items()}
    assert sum(new.values()) == M3("0.125")  # 150 / 1 200
    assert new == {"A": M3("0.0925"), "B": M3("0.02375"), "C": M3("0.0075"),
                   "D": M3("0.00125"), "VOLUMOSO": 0}  # fmt: skip
    assert M3(rates["demolition"]["A"]) == M3("0.61667")  # 1 000 / 1 200 × 74 %


def test_the_estimate_uses_the_rates_in_force_today(world):
    # An estimate is made now: a set that started yesterday holds, not tomorrow's.
    for days, rate in ((-1, "0.2"), (1, "0.9")):
        MunicipalParameters.objects.create(
            municipality=world.town,
            valid_from=TODAY + datetime.timedelta(days=days),
            waste_generation_rates={"renovation": {"A": rate}},
        )
    result = estimator.estimate(M3("150"), WorkKind.RENOVATION, world.town)
    assert result.of_class("A") == M3("30.00")


def test_estimate_multiplies_the_area_by_the_municipalitys_rates(world):
    set_parameters(world.town, waste_generation_rates={"renovation": {"A": "0.2", "B": "0.0333"}})
    result = estimator.estimate(M3("150"), WorkKind.RENOVATION, world.town)
    assert result.of_class("A") == M3("30.00")
    assert result.of_class("B") == M3("5.00")  # 4,995 half up
    # A class the municipality left out takes the default (C: 0,0075 × 150).
    assert result.of_class("C") == M3("1.13")
    defaults = estimator.estimate(M3("1000"), WorkKind.NEW_BUILDING)
    assert defaults.of_class("A") == M3("92.50") and defaults.total_m3 == M3("125.00")


@pytest.mark.parametrize(
    ("area", "kind", "code"),
    [("0", "new_building", "area_invalid"), ("-5", "renovation", "area_invalid"),
     ("abc", "demolition", "area_invalid"), ("10", "bridge", "kind_invalid")],
)  # fmt: skip
def test_estimator_refuses_a_bad_area_or_kind(area, kind, code):
    with pytest.raises(estimator.EstimateError) as refused:
        estimator.estimate(area, kind)
    assert refused.value.code == code and refused.value.status == 400


@pytest.mark.parametrize(
    "rates",
    [[], {"bridge": {}}, {"renovation": {"Z": "1"}}, {"renovation": {"A": "-0.1"}},
     {"renovation": {"A": "NaN"}}, {"renovation": "0.1"}, {"demolition": {"A": "11"}}],
)  # fmt: skip
def test_the_municipal_rates_are_validated(rates):
    with pytest.raises(ValidationError):
        validate_generation_rates(rates)


# --- licensed today ----------------------------------------------------------------------------


def test_an_unlicensed_transporter_is_refused_with_its_name_and_why(world):
    world.beta.licences.update(valid_until=D(2026, 10, 31))
    site = gama_site(world)
    with pytest.raises(plans.PlanError) as refused:
        plans.save(site, world.generator_user, plan_input(world, transporters=[world.beta]))
    assert refused.value.status == 400
    assert refused.value.errors == [
        ("transporters", f"O transportador “{world.beta.name}” não tem licença válida hoje em "
                         "Guaratinguetá (teste)/SP (venceu em 31/10/2026).")
    ]  # fmt: skip
    assert not WastePlan.objects.exists()


def test_a_transporter_licensed_in_another_municipality_only_is_refused(world):
    """Art. 9 p.ú. I with art. 13: the plan names transporters licensed where the worksite is;
    a licence in the neighbour does not count in the town."""
    neighbour = municipality("3502507", "Aparecida (teste)", east_m=20_000)
    world.beta.licences.update(municipality=neighbour)
    assert world.beta not in plans.licensed_transporters(TODAY, world.town)
    assert world.beta in plans.licensed_transporters(TODAY, neighbour)
    with pytest.raises(plans.PlanError) as refused:
        plans.save(
            gama_site(world), world.generator_user, plan_input(world, transporters=[world.beta])
        )
    assert refused.value.errors == [
        ("transporters", f"O transportador “{world.beta.name}” não tem licença em "
                         "Guaratinguetá (teste)/SP.")
    ]  # fmt: skip


def test_a_suspended_transporter_and_an_unlicensed_facility_are_refused_together(world):
    world.beta.licences.update(
        status="SUSPENDED", status_since=D(2026, 11, 1), suspended_until=D(2026, 12, 31)
    )
    FacilityLicense.objects.filter(facility=world.landfill).update(
        status="REVOKED", status_since=D(2026, 11, 2)
    )
    with pytest.raises(plans.PlanError) as refused:
        plans.save(
            gama_site(world),
            world.generator_user,
            plan_input(world, transporters=[world.alfa, world.beta], facilities=[world.landfill]),
        )
    messages = dict(refused.value.errors)
    assert messages["transporters"] == (
        f"O transportador “{world.beta.name}” está suspenso em Guaratinguetá (teste)/SP desde "
        "01/11/2026 até 31/12/2026."
    )
    assert messages["facilities"] == (
        f"A área “{world.landfill.name}” não tem licença válida hoje "
        "(licença cassada em 02/11/2026)."
    )
    assert [e["campo"] for e in refused.value.problem_errors()] == ["transporters", "facilities"]
    assert not WastePlan.objects.exists()


def test_only_the_worksites_generator_writes_its_plan(world):
    site = gama_site(world)
    with pytest.raises(plans.PlanError) as refused:
        plans.save(site, world.alfa_user, plan_input(world))
    assert refused.value.status == 403


# --- versions, decisions, history ------------------------------------------------------------


def test_submission_approval_and_the_plan_in_force(world):
    plan = submitted(world, facilities=[world.att, world.recycling])
    assert plan.status == PlanStatus.SUBMITTED and plan.version == 1
    approved = plans.approve(plan, world.nucleo, "De acordo.")
    site = approved.worksite
    site.refresh_from_db()
    assert approved.status == PlanStatus.APPROVED
    assert site.is_large_generator
    assert set(site.plan_transporters.all()) == {world.alfa}
    assert set(site.plan_facilities.all()) == {world.att, world.recycling}
    actions = [e.action for e in approved.events.all()]
    assert actions == [PlanAction.CREATED, PlanAction.SUBMITTED, PlanAction.APPROVED]
    assert approved.events.last().note == "De acordo."
    assert approved.events.first().data["volumes"] == {"A": "92.50", "B": "23.75"}


def test_a_change_to_the_approved_plan_is_a_new_version_that_supersedes_it(world):
    first = plans.approve(submitted(world), world.nucleo)
    site = first.worksite
    second = plans.save(site, world.generator_user, plan_input(world, facilities=[world.pev]))
    assert second.version == 2 and second.status == PlanStatus.DRAFT
    # The approved version stays in force while the new one is written and analysed.
    assert set(site.plan_facilities.all()) == {world.att}
    plans.approve(plans.submit(second, world.generator_user), world.nucleo)
    first.refresh_from_db()
    assert first.status == PlanStatus.SUPERSEDED
    assert first.events.last().action == PlanAction.SUPERSEDED
    assert set(site.plan_facilities.all()) == {world.pev}


def test_returned_for_changes_with_a_note_then_edited_and_sent_again(world):
    plan = submitted(world)
    with pytest.raises(plans.PlanError) as refused:
        plans.request_changes(plan, world.nucleo, "  ")
    assert refused.value.field == "note"
    returned = plans.request_changes(plan, world.nucleo, "Falta a classe D (tintas).")
    assert returned.status == PlanStatus.CHANGES_REQUESTED
    again = plans.save(
        returned.worksite,
        world.generator_user,
        plan_input(world, A="92.5", B="23.75", D="1.25"),
        submit=True,
    )
    assert again.pk == plan.pk and again.version == 1
    assert [e.action for e in again.events.all()] == [
        PlanAction.CREATED, PlanAction.SUBMITTED, PlanAction.CHANGES_REQUESTED,
        PlanAction.EDITED, PlanAction.SUBMITTED,
    ]  # fmt: skip
    notes = [e.note for e in again.events.all()]
    assert "Falta a classe D (tintas)." in notes
    # Each event keeps the data of its moment.
    assert "D" not in again.events.all()[2].data["volumes"]
    assert again.events.all()[3].data["volumes"]["D"] == "1.25"


def test_a_submitted_plan_waits_for_the_nucleo(world):
    plan = submitted(world)
    with pytest.raises(plans.PlanError) as refused:
        plans.save(plan.worksite, world.generator_user, plan_input(world))
    assert refused.value.status == 409
    with pytest.raises(plans.PlanError) as refused:
        plans.approve(plan, world.fiscal)
    assert refused.value.status == 403  # the Núcleo decides (art. 20), not the inspectors
    with pytest.raises(plans.PlanError) as refused:
        plans.approve(plan, world.generator_user)
    assert refused.value.status == 403


def test_an_incomplete_plan_is_not_sent_and_nothing_is_written(world):
    site = gama_site(world)
    empty = plans.PlanInput(volumes={"A": "0"}, transporter_ids=[], facility_ids=[])
    with pytest.raises(plans.PlanError) as refused:
        plans.save(site, world.generator_user, empty, submit=True)
    assert {name for name, _ in refused.value.errors} == {"volumes", "transporters", "facilities"}
    assert not WastePlan.objects.exists()


def test_a_bad_volume_is_refused_on_its_class(world):
    with pytest.raises(plans.PlanError) as refused:
        plans.save(
            gama_site(world),
            world.generator_user,
            plans.PlanInput(volumes={"A": "-1", "B": "1.234", "X": "2"}),
        )
    fields = [name for name, _ in refused.value.errors]
    assert fields == ["volumes.A", "volumes.B", "volumes.X"]


def test_a_transporter_that_lapses_before_the_decision_blocks_the_approval(world):
    plan = submitted(world)
    world.alfa.licences.update(valid_until=TODAY - datetime.timedelta(days=1))
    with pytest.raises(plans.PlanError) as refused:
        plans.approve(plan, world.nucleo)
    assert "não tem licença válida hoje em Guaratinguetá (teste)/SP (venceu em 29/11/2026)" in (
        refused.value.message
    )
    plan.refresh_from_db()
    assert plan.status == PlanStatus.SUBMITTED
    assert not plan.worksite.is_large_generator


def test_every_waste_class_can_be_planned(world):
    volumes = {c: "1" for c in WasteClass.values}
    plan = plans.save(gama_site(world), world.generator_user, plan_input(world, **volumes))
    assert plan.volumes.count() == len(WasteClass.values)


# --- two approvals at once -------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_two_approvals_at_once_leave_one_approved(frozen_today):
    world = build_world()
    plan = submitted(world)
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def decide():
        try:
            barrier.wait()
            plans.approve(WastePlan.objects.get(pk=plan.pk), world.nucleo)
            outcomes.append("approved")
        except plans.PlanError as error:
            outcomes.append(f"{error.status}")
        finally:
            connection.close()

    threads = [threading.Thread(target=decide) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["409", "approved"]
    assert WastePlan.objects.filter(status=PlanStatus.APPROVED).count() == 1
    assert plan.events.filter(action=PlanAction.APPROVED).count() == 1
