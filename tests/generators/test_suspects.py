"""Suspect worksites and large generators without CTRs: each threshold with a case just inside and
one just outside it, on TODAY (the frozen clock), with the municipality's parameters at their
defaults unless a test changes them."""

from __future__ import annotations

from decimal import Decimal

import pytest

from ctr import closing
from ctr.models import Worksite
from generators import suspects
from generators.comparison import worksite_comparison
from generators.models import PlanStatus
from generators.suspects import Reason, Scope
from pev_network.models import MunicipalParameters
from tests.builders import offset, point, set_parameters
from tests.ctr_world import TODAY, build_world
from tests.generators.suspects_world import M3, days, load, plan, site

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(frozen_today):
    return build_world()


def approved(worksite, status=PlanStatus.APPROVED, **volumes):
    return plan(worksite, status, **volumes)


def reasons_of(worksite) -> tuple[str, ...]:
    found = suspects.of_worksite(worksite, TODAY)
    return found.reasons if found else ()


# --- OVERDUE: past the expected end by more than worksite_overdue_days (30) -------------------


def test_one_day_past_the_grace_after_the_expected_end_is_overdue(world):
    late = site(world, "Rua A, 1", start=days(-200), end=days(-31), large=False)
    figures = suspects.of_worksite(late, TODAY)
    assert figures.reasons == (Reason.OVERDUE,)
    assert figures.days_past_end == 31
    assert "há 31 dias" in figures.explained()[0].text


def test_the_last_day_of_the_grace_is_not_overdue(world):
    assert reasons_of(site(world, "Rua A, 2", start=days(-200), end=days(-30), large=False)) == ()


def test_a_worksite_whose_end_was_declared_is_not_overdue(world):
    ended = site(world, "Rua A, 3", start=days(-200), end=days(-100), ended=days(-99), large=False)
    assert Reason.OVERDUE not in reasons_of(ended)


def test_the_municipality_sets_the_grace(world):
    set_parameters(world.town, worksite_overdue_days=10)
    assert reasons_of(site(world, "Rua A, 4", start=days(-90), end=days(-11), large=False)) == (
        Reason.OVERDUE,
    )
    assert reasons_of(site(world, "Rua A, 5", start=days(-90), end=days(-10), large=False)) == ()


# --- LOW_VOLUME: transported < 50 % of the plan × elapsed, once 25 % of the work elapsed -------


def test_just_below_half_of_the_prorated_plan_is_low_volume(world):
    # Half of the 200 days gone: 50 of the 100 m³ expected to date; 24,99 m³ < 50 % of 50.
    worksite = site(world, "Rua B, 1", start=days(-100), end=days(100))
    approved(worksite, A="80", B="20")
    load(world, worksite, "20", day=days(-60))
    load(world, worksite, "4.99", day=days(-10), waste_class="B")

    figures = suspects.of_worksite(worksite, TODAY)

    assert figures.reasons == (Reason.LOW_VOLUME,)
    assert figures.expected_m3 == M3(100) and figures.transported_m3 == M3("24.99")
    assert figures.elapsed_pct == M3(50) and figures.expected_to_date_m3 == M3(50)
    assert figures.transported_pct == M3("49.98")
    assert (figures.planned_days, figures.elapsed_days) == (200, 100)
    # The same transported volume as the worksite's comparison.
    assert figures.transported_m3 == worksite_comparison(worksite).transported_m3
    text = figures.explained()[0].text
    assert "24,99 m³ de 50,00 m³" in text and "49,98% do esperado, abaixo de 50%" in text


def test_half_of_the_prorated_plan_is_not_low_volume(world):
    worksite = site(world, "Rua B, 2", start=days(-100), end=days(100))
    approved(worksite, A="100")
    load(world, worksite, "25", day=days(-5))
    assert reasons_of(worksite) == ()


def test_the_volume_is_compared_from_a_quarter_of_the_work(world):
    # 50 of 200 days: 25 % elapsed, 1 of the 25 m³ expected to date: suspect.
    quarter = site(world, "Rua B, 3", start=days(-50), end=days(150))
    approved(quarter, A="100")
    load(world, quarter, "1", day=days(-1))
    assert reasons_of(quarter) == (Reason.LOW_VOLUME,)
    # 49 of 200 days: 24,5 %, too early to tell.
    early = site(world, "Rua B, 4", start=days(-49), end=days(151))
    approved(early, A="100")
    load(world, early, "1", day=days(-1))
    assert reasons_of(early) == ()


def test_cancelled_loads_do_not_count_as_transported(world):
    worksite = site(world, "Rua B, 5", start=days(-100), end=days(100))
    approved(worksite, A="100")
    closing.cancel(load(world, worksite, "30", day=days(-3)), world.alfa_user, "desistência")
    figures = suspects.of_worksite(worksite, TODAY)
    # Nor as a load: without another since the start, 100 days, the site is idle too.
    assert figures.transported_m3 == 0
    assert figures.reasons == (Reason.LOW_VOLUME, Reason.IDLE)


def test_without_an_approved_plan_nothing_is_expected(world):
    worksite = site(world, "Rua B, 6", start=days(-100), end=days(100))
    approved(worksite, status=PlanStatus.SUBMITTED, A="100")
    load(world, worksite, "1", day=days(-1))
    figures = suspects.of_worksite(worksite, TODAY)
    assert figures.expected_m3 is None and figures.reasons == ()


def test_an_ended_worksite_is_measured_against_its_whole_plan(world):
    # Ended early, on day 100 of 200: all of the 100 m³ should have left it; 49 did.
    worksite = site(world, "Rua B, 7", start=days(-100), end=days(100), ended=TODAY)
    approved(worksite, A="100")
    load(world, worksite, "49", day=days(-20))
    figures = suspects.of_worksite(worksite, TODAY)
    assert figures.reasons == (Reason.LOW_VOLUME,)
    assert figures.expected_to_date_m3 == M3(100) and figures.days_past_end is None


def test_past_the_expected_end_the_whole_plan_is_expected(world):
    worksite = site(world, "Rua B, 8", start=days(-300), end=days(-40))
    approved(worksite, A="100")
    load(world, worksite, "50", day=days(-5))
    assert reasons_of(worksite) == (Reason.OVERDUE,)  # 50 of 100 m³: not below half


def test_the_grace_is_the_one_in_force_on_the_day_measured(world):
    # A set that started ten days ago shortens it to 10 days; one that starts tomorrow (60)
    # does not hold yet. An alert has no CTR: the day is the one measured.
    MunicipalParameters.objects.create(
        municipality=world.town, valid_from=days(-10), worksite_overdue_days=10
    )
    MunicipalParameters.objects.create(
        municipality=world.town, valid_from=days(1), worksite_overdue_days=60
    )
    late = site(world, "Rua A, 5", start=days(-90), end=days(-11), large=False)
    assert reasons_of(late) == (Reason.OVERDUE,)  # 11 days past its end
    # Measured the day after tomorrow, 13 days past its end, the 60 days hold.
    assert suspects.of_worksite(late, days(2)).reasons == ()


def test_the_municipality_sets_the_share_and_the_start(world):
    set_parameters(
        world.town,
        worksite_low_volume_pct=Decimal("60"),
        worksite_low_volume_min_elapsed_pct=Decimal("10"),
    )
    worksite = site(world, "Rua B, 9", start=days(-20), end=days(180))  # 10 % elapsed
    approved(worksite, A="100")
    load(world, worksite, "5.9", day=days(-1))  # 5,9 < 60 % of 10 m³
    assert reasons_of(worksite) == (Reason.LOW_VOLUME,)


# --- IDLE: an active large generator without CTR for more than large_generator_idle_days (30) --


def test_a_large_generator_with_its_last_load_31_days_ago_is_idle(world):
    worksite = site(world, "Rua C, 1", start=days(-90), end=days(90))
    load(world, worksite, "3", day=days(-31))
    figures = suspects.of_worksite(worksite, TODAY)
    assert figures.reasons == (Reason.IDLE,)
    assert figures.idle_days == 31 and figures.last_load == days(-31)
    assert "último CTR em " + days(-31).strftime("%d/%m/%Y") in figures.explained()[0].text


def test_a_large_generator_with_its_last_load_30_days_ago_is_not_idle(world):
    worksite = site(world, "Rua C, 2", start=days(-90), end=days(90))
    load(world, worksite, "3", day=days(-30))
    assert reasons_of(worksite) == ()


def test_without_any_load_the_days_count_from_the_start(world):
    assert reasons_of(site(world, "Rua C, 3", start=days(-31), end=days(90))) == (Reason.IDLE,)
    assert reasons_of(site(world, "Rua C, 4", start=days(-30), end=days(90))) == ()


def test_only_active_large_generators_can_be_idle(world):
    small = site(world, "Rua C, 5", start=days(-90), end=days(90), large=False)
    ended = site(world, "Rua C, 6", start=days(-90), end=days(90), ended=days(-40))
    not_started = site(world, "Rua C, 7", start=days(1), end=days(90))
    assert [reasons_of(w) for w in (small, ended, not_started)] == [(), (), ()]


def test_a_worksite_can_have_several_reasons(world):
    worksite = site(world, "Rua C, 8", start=days(-300), end=days(-60))
    approved(worksite, A="100")
    load(world, worksite, "10", day=days(-200))
    assert reasons_of(worksite) == (Reason.OVERDUE, Reason.LOW_VOLUME, Reason.IDLE)


# --- many worksites at once --------------------------------------------------------------------


def test_a_worksite_without_dates_is_not_measured(world):
    assert suspects.of_worksite(site(world, "Rua D, 1"), TODAY) is None


def test_many_worksites_are_measured_in_one_query(world, django_assert_num_queries):
    for i in range(60):
        worksite = site(world, f"Rua E, {i}", start=days(-100 - i), end=days(100 - 2 * i))
        approved(worksite, A="100")
    load(world, Worksite.objects.get(address="Rua E, 0"), "30", day=days(-1))
    with django_assert_num_queries(1):
        found = suspects.measure(TODAY, Scope(municipality_id=world.town.pk))
    assert len(found) == 60
    assert sum(1 for f in found if Reason.LOW_VOLUME in f.reasons) == 59


def test_counts_and_the_subquery_agree_with_the_figures(world):
    from django.db.models.expressions import RawSQL

    overdue = site(world, "Rua F, 1", start=days(-200), end=days(-40), large=False)
    idle = site(world, "Rua F, 2", start=days(-60), end=days(60))
    low = site(world, "Rua F, 3", start=days(-100), end=days(100))
    approved(low, A="100")
    load(world, low, "1", day=days(-1))
    site(world, "Rua F, 4", start=days(-10), end=days(60))  # nothing yet

    assert suspects.counts(TODAY) == {"overdue": 1, "low_volume": 1, "idle": 1, "suspect": 2}
    flagged = Worksite.objects.filter(pk__in=RawSQL(*suspects.suspect_ids_sql(TODAY)))
    assert set(flagged) == {overdue, idle, low}
    only_low = RawSQL(*suspects.suspect_ids_sql(TODAY, [Reason.LOW_VOLUME]))
    assert list(Worksite.objects.filter(pk__in=only_low)) == [low]
    assert [f.worksite_id for f in suspects.measure(TODAY, reasons=[Reason.IDLE])] == [idle.pk]


def test_near_a_spot_means_within_the_radius(world):
    spot = point(*offset(*world.origin.coords, 0, 0))
    inside = site(world, "Rua G, 1", start=days(-200), end=days(-40), large=False,
                  location=point(*offset(*world.origin.coords, 990, 0)))  # fmt: skip
    site(world, "Rua G, 2", start=days(-200), end=days(-40), large=False,
         location=point(*offset(*world.origin.coords, 1010, 0)))  # fmt: skip
    found = suspects.measure(TODAY, Scope(near=spot, radius_m=1000), only_flagged=True)
    assert [f.worksite_id for f in found] == [inside.pk]


def test_the_figures_as_the_api_gives_them(world):
    worksite = site(world, "Rua H, 1", start=days(-100), end=days(100))
    approved(worksite, A="100")
    load(world, worksite, "10", day=days(-2))
    data = suspects.of_worksite(worksite, TODAY).as_dict()
    assert data["reasons"][0]["code"] == "low_volume"
    assert (data["expected_m3"], data["expected_to_date_m3"], data["transported_m3"]) == (
        "100.00",
        "50.00",
        "10.00",
    )
    assert data["transported_pct"] == "20.0" and data["elapsed_pct"] == "50.0"
    assert data["thresholds"] == {
        "overdue_days": 30,
        "low_volume_pct": "50.00",
        "low_volume_min_elapsed_pct": "25.00",
        "idle_days": 30,
    }
