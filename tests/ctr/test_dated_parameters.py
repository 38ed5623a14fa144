"""A CTR is judged by the municipality's parameters in force on its transport date, whenever it
is checked: at issue, at reception, on a correction, by the open-CTR alert; a later set (another
figure, in force today) does not reach back to it, and an older set does not reach forward.

The clock is frozen on TODAY (30/11/2026, 10h); the town's first set holds the law's defaults
(GPS 15 m, received volume 10 %, small volume 1 m³, open alert 48 h, sync 24 h, sorting 10 %)
unless a test changes it."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest
from django.utils import timezone

from ctr import alerts, analytics, closing, printing, services
from ctr.custody import stock, stock_limits
from ctr.field import corrections, offline
from ctr.field.corrections import Proposal
from ctr.models import CTR, Worksite
from ctr.rules import WasteLine
from pev_network.models import MunicipalParameters
from tests.builders import ORIGIN, offset, point, set_parameters
from tests.clock import FROZEN_NOW
from tests.ctr.onward_world import codes as error_codes
from tests.ctr.onward_world import inbound, onward_findings
from tests.ctr.test_ctr_documents import pdf_text
from tests.ctr_world import TODAY, build_world, issue_hours_ago

pytestmark = pytest.mark.django_db

D = datetime.date
YESTERDAY = TODAY - datetime.timedelta(days=1)
# The day a later set starts: after the transport date of a CTR issued 72 h ago (27/11).
LATER = D(2026, 11, 29)


@pytest.fixture
def world(frozen_today):
    return build_world()


def later_set(world, valid_from: datetime.date = LATER, **values) -> MunicipalParameters:
    return MunicipalParameters.objects.create(
        municipality=world.town, valid_from=valid_from, **values
    )


def codes(ctr: CTR) -> list[str]:
    return [f["code"] for f in ctr.findings]


def received_3_days_ago(world, volume: str = "3") -> CTR:
    """Alfa's CTR of 3 m³ of class A for 27/11 (issued 72 h ago), received at the ATT."""
    ctr = issue_hours_ago(world, 72)
    assert ctr.transport_date == D(2026, 11, 27)
    return closing.receive(ctr, world.operator, Decimal(volume))


def correct(world, ctr: CTR, **proposal) -> CTR:
    correction = corrections.propose(ctr, world.operator, Proposal(**proposal), "Recontagem")
    corrections.approve(correction, world.alfa_user)
    ctr.refresh_from_db()
    return ctr


# --- a correction re-runs the reception rules by the CTR's own day ----------------------------


def test_a_correction_judges_the_received_volume_by_the_set_of_the_ctr_s_day(world):
    ctr = received_3_days_ago(world)
    # From 29/11 the town tolerates 50 %: a correction of 27/11's CTR still reads 10 %.
    later_set(world, received_volume_tolerance_pct=Decimal("50"))
    ctr = correct(world, ctr, received_volume_m3=Decimal("2"))
    (mismatch,) = [f for f in ctr.findings if f["code"] == "RECEIVED_VOLUME_MISMATCH"]
    assert mismatch["message"].endswith("diferença acima de 10%.")


def test_a_correction_does_not_judge_an_older_ctr_by_a_stricter_later_set(world):
    set_parameters(world.town, received_volume_tolerance_pct=Decimal("50"))
    ctr = received_3_days_ago(world)
    later_set(world, received_volume_tolerance_pct=Decimal("0"))
    ctr = correct(world, ctr, received_volume_m3=Decimal("2"))
    assert "RECEIVED_VOLUME_MISMATCH" not in codes(ctr)


def test_a_correction_of_the_waste_charges_the_fee_by_the_limit_of_the_ctr_s_day(world):
    ctr = received_3_days_ago(world)
    assert ctr.fee_ufesp == Decimal("1")
    later_set(world, small_volume_limit_m3=Decimal("5"))
    ctr = correct(world, ctr, waste=[WasteLine("A", Decimal("2"), "entulho")])
    assert (ctr.total_volume_m3, ctr.fee_ufesp) == (Decimal("2"), Decimal("1"))


# --- at issue ------------------------------------------------------------------------------


def request_for(
    world, day: datetime.date, volume: str = "3", destination=None, **extra
) -> services.IssueRequest:
    """Alfa's CTR of `volume` m³ of class A for `day`, to the ATT (or `destination`)."""
    return services.IssueRequest(
        transport_date=day,
        vehicle_plate="ABC1D23",
        equipment_code="C-01",
        origin=world.origin,
        destination=destination or world.inside(world.att),
        waste=[WasteLine("A", Decimal(volume), "entulho")],
        generator=services.GeneratorData("Maria da Obra", "52998224725"),
        **extra,
    )


def issue_for(world, day: datetime.date) -> CTR:
    return services.issue(world.alfa, world.alfa_user, request_for(world, day))


def test_the_fee_at_issue_is_charged_by_the_limit_of_the_transport_date(world):
    later_set(world, valid_from=TODAY, small_volume_limit_m3=Decimal("5"))
    assert issue_for(world, YESTERDAY).fee_ufesp == Decimal("1")  # 3 m³ over 1 m³
    assert issue_for(world, TODAY).fee_ufesp == Decimal("0")  # 3 m³ within 5 m³


def test_the_printed_ctr_states_the_limit_of_its_transport_date(world):
    later_set(world, valid_from=TODAY, small_volume_limit_m3=Decimal("5"))
    printed = {
        day: " ".join(pdf_text(printing.ctr_pdf(issue_for(world, day), "https://x/v/")).split())
        for day in (YESTERDAY, TODAY)
    }
    assert "1,00 UFESP por descarga acima de 1 m³" in printed[YESTERDAY]
    assert "Isento: pequeno volume (até 5 m³ por descarga)." in printed[TODAY]


def test_the_gps_tolerance_at_issue_is_the_transport_date_s(world):
    # 10 m east of the ATT's fence: inside the first set's 15 m, outside the later set's 5 m.
    later_set(world, valid_from=TODAY, gps_tolerance_m=Decimal("5"))
    near = point(*offset(*ORIGIN, 1610, 50))
    request = request_for(world, YESTERDAY, "0.5", near)
    draft, findings = services.check(world.alfa, request)
    assert draft.facility == world.att and not findings
    request.transport_date = TODAY
    draft, findings = services.check(world.alfa, request)
    assert draft.facility is None
    assert "DESTINATION_OUTSIDE_FACILITY" in [f.code for f in findings]


def test_an_onward_ctr_ships_by_the_sorting_tolerance_of_its_transport_date(world):
    inbound(world, {"A": "10"}, received="10", day=D(2026, 11, 20))
    later_set(world, valid_from=TODAY, sorting_tolerance_pct={"A": "0"})
    # 10 m³ in stock: 10 % more may leave by the first set, nothing more by today's.
    assert "OVER_FACILITY_STOCK" not in error_codes(
        onward_findings(world, {"A": "10.5"}, day=YESTERDAY)
    )
    assert error_codes(onward_findings(world, {"A": "10.5"})) == ["OVER_FACILITY_STOCK"]


# --- at reception and after ------------------------------------------------------------------


def test_reception_reads_the_gps_tolerance_of_the_transport_date(world):
    ctr = issue_hours_ago(world, 30)  # for yesterday
    later_set(world, valid_from=TODAY, gps_tolerance_m=Decimal("25"))
    fence_20m = point(*offset(*ORIGIN, 1620, 50))
    received = closing.receive(ctr, world.operator, Decimal("3"), location=fence_20m)
    assert codes(received) == ["RECEPTION_AWAY_FROM_FACILITY"]
    assert received.findings[0]["message"].endswith("além da tolerância de 15 m do GPS.")


def test_the_open_ctr_alert_counts_the_hours_of_the_transport_date_s_set(world):
    ctr = issue_hours_ago(world, 72)  # 27/11, open for 72 h: past the first set's 48 h
    later_set(world, open_ctr_alert_hours=100)
    assert list(alerts.overdue(CTR.objects.all())) == [ctr]
    assert alerts.with_hours_open(CTR.objects.all()).get().alert_hours == 48
    flt = analytics.CTRFilter(D(2026, 11, 1), TODAY)
    [alfa] = analytics.transporter_compliance(flt, timezone.now())
    assert alfa.overdue == 1
    cells = analytics.overdue_origin_cells(flt, 0.01, timezone.now())
    assert [c.count for c in cells] == [1]


def test_a_later_set_does_not_make_an_older_ctr_overdue(world):
    issue_hours_ago(world, 72)
    set_parameters(world.town, open_ctr_alert_hours=100)
    later_set(world, open_ctr_alert_hours=1)
    assert not alerts.overdue(CTR.objects.all()).exists()


def test_a_provisional_ctr_is_late_by_the_limit_of_its_transport_date(world):
    later_set(world, valid_from=TODAY, provisional_sync_max_hours=48)
    departure = FROZEN_NOW - datetime.timedelta(hours=30)  # yesterday, 4h
    request = request_for(
        world,
        timezone.localdate(departure),
        "0.5",
        provisional_number="PROV-AB12-0007",
        provisional_departure_at=departure,
    )
    _, findings = services.check(world.alfa, request)
    assert [f.code for f in findings] == ["PROVISIONAL_SYNC_LATE"]
    assert "prazo de 24 h" in findings[0].message


def test_the_stock_alert_of_a_day_reads_that_day_s_set(world):
    inbound(world, {"A": "5"}, received="5", day=D(2026, 11, 1))
    set_parameters(world.town, stock_alert_days=10)
    later_set(world, valid_from=TODAY, stock_alert_days=60)
    world.att.refresh_from_db()
    assert [a.waste_class for a in stock.stale_stock(world.att, YESTERDAY)] == ["A"]
    assert stock.stale_stock(world.att, TODAY) == []
    assert stock.alert_days_of(world.att, TODAY) == 60


# --- what has no CTR yet: today's set -----------------------------------------------------------


def test_the_offline_bundle_carries_today_s_set(world):
    worksite = services.WorksiteData("Rua das Flores, 10", world.origin)
    services.issue(world.alfa, world.alfa_user, request_for(world, TODAY, worksite=worksite))
    Worksite.objects.update(registered_at=FROZEN_NOW)
    later_set(world, valid_from=TODAY, gps_tolerance_m=Decimal("25"), provisional_sync_max_hours=48)
    later_set(world, valid_from=TODAY + datetime.timedelta(days=1), provisional_sync_max_hours=6)
    bundle, _ = offline.bundle(world.alfa)
    assert bundle["provisional_sync_max_hours"] == 48
    [site] = bundle["worksites"]
    assert (site["registered"], site["tolerance_m"]) == (True, 25.0)


def test_the_tolerances_of_many_days_choose_the_set_as_parameters_on_does(world):
    later_set(world, valid_from=D(2026, 6, 1), sorting_tolerance_pct={"A": "0", "B": "3"})
    later_set(world, valid_from=D(2026, 9, 1), sorting_tolerance_pct={"A": "25"})
    tolerance_on = stock_limits.sorting_tolerances(world.att)
    days = [D(1999, 12, 31), D(2000, 1, 1), D(2026, 5, 31), D(2026, 6, 1), D(2026, 8, 31)]
    days += [D(2026, 9, 1), D(2027, 1, 1)]
    for day in days:
        for waste_class in ("A", "B"):
            one = stock_limits.sorting_tolerance(world.att, waste_class, day)
            assert tolerance_on(waste_class, day) == one, (day, waste_class)
    assert [tolerance_on("A", day) for day in days[2:]] == [10, 0, 0, 25, 25]
