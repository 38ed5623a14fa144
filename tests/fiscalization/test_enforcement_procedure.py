"""The enforcement procedure of Lei 3.978/2007 art. 21-36 through its services, its effects on
the CTR rules (a suspended transporter's CTR refused), the command, the pages and the PDFs."""

import datetime
import html
import io
import re
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.db import IntegrityError, transaction
from django.test import Client
from pypdf import PdfReader

from fiscalization import enforcement
from fiscalization.enforcement import EnforcementError, OffenderData
from fiscalization.models.enforcement import (
    CaseStatus,
    DeliveryMethod,
    DeliveryOutcome,
    EnforcementCase,
    InfractionRecord,
    MunicipalHoliday,
    OffenderRole,
    Penalty,
    PenaltyKind,
    RecordStatus,
    UfespRate,
)
from jurisdiction.models import Role, StaffRole
from jurisdiction.scope import OutsideJurisdiction, forget
from pev_network.models import FacilityLicense
from tests.builders import licence, municipality, offset
from tests.ctr.test_ctr_api import error_codes, issue
from tests.ctr_world import CPF_GENERATOR, TODAY, build_world
from tests.enforcement_world import (
    HOUR,
    D,
    at,
    entries,
    facility_offender,
    notified_and_expired,
    open_case,
    own_framework,
    record_for,
    transporter_offender,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    return build_world()


def fail(code: str):
    """pytest.raises for an EnforcementError with this code."""

    class Raises:
        def __enter__(self):
            self.ctx = pytest.raises(EnforcementError)
            self.info = self.ctx.__enter__()
            return self.info

        def __exit__(self, *exc):
            suppressed = self.ctx.__exit__(*exc)
            assert self.info.value.code == code, self.info.value.message
            return suppressed

    return Raises()


# --- numbering --------------------------------------------------------------------------------


def test_numbers_follow_each_other_per_municipality_year_and_kind(world):
    first = open_case(world, at(2025, 3, 3))
    second = open_case(world, at(2025, 3, 4))
    next_year = open_case(world, at(2026, 1, 5))
    sao_paulo = municipality("3550308", "São Paulo (teste)")
    own_framework(sao_paulo)  # no case opens without one
    # An inspector of both (a consortium's): each town numbers its own.
    StaffRole.objects.create(user=world.fiscal, municipality=sao_paulo, role=Role.FISCAL)
    forget(world.fiscal)
    other_town = enforcement.open_case(
        municipality=sao_paulo,
        inspector=world.fiscal,
        offender=transporter_offender(world),
        description="x",
        opened_at=at(2025, 3, 5),
    )
    assert first.number == "FISC-3518404-2025-000001"
    assert second.number == "FISC-3518404-2025-000002"
    assert next_year.number == "FISC-3518404-2026-000001"
    assert other_town.number == "FISC-3550308-2025-000001"
    notice = enforcement.issue_notice(first, "Limpar", DeliveryMethod.HAND, at(2025, 3, 3, 11))
    assert notice.number == "NOT-3518404-2025-000001"


def test_an_inspector_opens_no_case_in_a_municipality_not_his(world):
    """The facts of another municipality are not his to act on (art. 21-22,
    35); for him that municipality's procedure does not exist (404), and nothing is written."""
    with pytest.raises(OutsideJurisdiction):
        enforcement.open_case(
            municipality=municipality("3550308", "São Paulo (teste)"),
            inspector=world.fiscal,
            offender=transporter_offender(world),
            description="x",
            opened_at=at(2025, 3, 5),
        )
    assert not EnforcementCase.objects.exists()


def test_a_failed_record_returns_its_number(world):
    case = open_case(world)
    expired = notified_and_expired(case)
    with fail("signature"):
        enforcement.draw_up_record(
            case, entries("INF-01"), delivery_method=DeliveryMethod.HAND, drawn_up_at=expired
        )
    record = enforcement.draw_up_record(
        case,
        entries("INF-01"),
        delivery_method=DeliveryMethod.HAND,
        signed_by_offender=True,
        drawn_up_at=expired,
    )
    assert record.number == "AI-3518404-2025-000001"


# --- opening: the offender of art. 24 ---------------------------------------------------------


def test_driver_cannot_be_linked_to_a_facility(world):
    with fail("role_link"):
        open_case(
            world,
            offender=OffenderData(
                name="Motorista",
                document=CPF_GENERATOR,
                role=OffenderRole.DRIVER,
                facility=world.att,
            ),
        )


def test_invalid_document_is_refused_in_portuguese(world):
    bad = transporter_offender(world)
    bad.document = "11222333000100"
    with pytest.raises(EnforcementError, match="CNPJ inválido"):
        open_case(world, offender=bad)


def test_entry_not_applicable_to_the_role_is_refused(world):
    case = open_case(world)
    expired = notified_and_expired(case)
    with pytest.raises(EnforcementError, match="INF-09 não se aplica"):
        enforcement.draw_up_record(
            case,
            entries("INF-09"),  # operating an unlicensed facility: FACILITY only
            delivery_method=DeliveryMethod.HAND,
            signed_by_offender=True,
            drawn_up_at=expired,
        )


# --- notice to repair (art. 27-29) ------------------------------------------------------------


def test_record_before_the_72_hours_end_is_refused(world):
    case = open_case(world, at(2025, 3, 3, 9))
    expired = notified_and_expired(case)  # handed over 10:00 on 03/03
    with pytest.raises(EnforcementError, match="06/03/2025 às 10h00"):
        enforcement.draw_up_record(
            case,
            entries("INF-01"),
            delivery_method=DeliveryMethod.HAND,
            signed_by_offender=True,
            drawn_up_at=at(2025, 3, 6, 10, 0),
        )
    record = enforcement.draw_up_record(
        case,
        entries("INF-01"),
        delivery_method=DeliveryMethod.HAND,
        signed_by_offender=True,
        drawn_up_at=expired,
    )
    assert record.case.status == CaseStatus.RECORDED


def test_non_recidivist_needs_a_notice_first(world):
    case = open_case(world)
    with fail("notice_required"):
        enforcement.draw_up_record(
            case,
            entries("INF-01"),
            delivery_method=DeliveryMethod.HAND,
            signed_by_offender=True,
            drawn_up_at=case.opened_at + HOUR,
        )


def test_notice_not_delivered_runs_no_deadline(world):
    case = open_case(world)
    enforcement.issue_notice(case, "Limpar", DeliveryMethod.MAIL, case.opened_at + HOUR)
    with fail("notice_not_delivered"):
        enforcement.draw_up_record(
            case,
            entries("INF-01"),
            delivery_method=DeliveryMethod.HAND,
            signed_by_offender=True,
            drawn_up_at=at(2025, 4, 1),
        )


def test_repaired_in_time_ends_the_case_without_penalty(world):
    case = open_case(world, at(2025, 3, 3, 9))
    notice = enforcement.issue_notice(case, "Limpar", DeliveryMethod.HAND, at(2025, 3, 3, 10))
    enforcement.register_notice_delivery(notice, at(2025, 3, 3, 10))
    enforcement.mark_repaired(notice, at(2025, 3, 6, 10, 0))  # the last minute
    case.refresh_from_db()
    assert case.status == CaseStatus.REPAIRED
    with fail("status"):
        enforcement.draw_up_record(
            case,
            entries("INF-01"),
            delivery_method=DeliveryMethod.HAND,
            signed_by_offender=True,
            drawn_up_at=at(2025, 3, 7),
        )


def test_repaired_a_minute_late_still_gets_a_record(world):
    case = open_case(world, at(2025, 3, 3, 9))
    notice = enforcement.issue_notice(case, "Limpar", DeliveryMethod.HAND, at(2025, 3, 3, 10))
    enforcement.register_notice_delivery(notice, at(2025, 3, 3, 10))
    enforcement.mark_repaired(notice, at(2025, 3, 6, 10, 1))
    case.refresh_from_db()
    assert case.status == CaseStatus.NOTIFIED
    record = enforcement.draw_up_record(
        case,
        entries("INF-01"),
        delivery_method=DeliveryMethod.HAND,
        signed_by_offender=True,
        drawn_up_at=at(2025, 3, 7),
    )
    assert record.total_ufesp == Decimal("100.00")


def test_public_notice_before_a_holiday_monday_gives_until_thursday_night(world):
    case = open_case(world, at(2026, 9, 2, 9))
    notice = enforcement.issue_notice(case, "Limpar", DeliveryMethod.HAND, at(2026, 9, 3, 9))
    # The edital supplies a failed individual notice (art. 28 §2): the offender was not found.
    enforcement.register_notice_failure(
        notice, DeliveryOutcome.NOT_FOUND, at(2026, 9, 3, 15), "Ninguém no endereço."
    )
    notice = enforcement.publish_notice_edital(notice, D(2026, 9, 4))  # Friday
    assert enforcement.notice_due(notice) == at(2026, 9, 11, 0, 0)
    # The municipality's own holiday on Tuesday pushes it one more day.
    MunicipalHoliday.objects.create(municipality=world.town, day=D(2026, 9, 8), name="Teste")
    assert enforcement.notice_due(notice) == at(2026, 9, 12, 0, 0)


def test_recidivist_gets_no_notice_but_a_record_straight_away(world):
    earlier = record_for(world, opened_at=at(2025, 1, 6, 9))
    InfractionRecord.objects.filter(pk=earlier.pk).update(status=RecordStatus.PAID)
    case = open_case(world, at(2025, 3, 3, 9))
    with pytest.raises(EnforcementError, match="reincidente.*art. 28"):
        enforcement.issue_notice(case, "Limpar", DeliveryMethod.HAND)
    record = enforcement.draw_up_record(
        case,
        entries("INF-01", "INF-04", "INF-05"),
        delivery_method=DeliveryMethod.HAND,
        signed_by_offender=False,
        no_signature_reason="Recusou-se a assinar.",
        drawn_up_at=at(2025, 3, 3, 11),
    )
    assert record.recidivist and record.total_ufesp == Decimal("300.00")


# --- the record: signature (art. 36 sole §) ---------------------------------------------------


def test_unsigned_record_without_certificate_is_refused_by_the_database_too(world):
    record = record_for(world)
    with pytest.raises(IntegrityError, match="record_signed_or_certified"), transaction.atomic():
        InfractionRecord.objects.filter(pk=record.pk).update(
            signed_by_offender=False, no_signature_reason=""
        )


# --- appeal (the framework's figures: Guaratinguetá's await the municipality's norm) ----------


def test_appeal_on_day_30_accepted(world):
    record = record_for(world)  # handed over on 06/03/2025 at 10:01
    appeal = enforcement.file_appeal(record, D(2025, 4, 5), "Não fui eu.")
    assert appeal.record.status == RecordStatus.APPEALED


def test_appeal_on_day_31_refused(world):
    record = record_for(world)
    with pytest.raises(EnforcementError, match="fora do prazo.*05/04/2025"):
        enforcement.file_appeal(record, D(2025, 4, 6), "Não fui eu.")


def test_appeal_by_mail_counts_from_the_ar(world):
    record = record_for(world, delivery=DeliveryMethod.MAIL)
    with fail("not_delivered"):
        enforcement.file_appeal(record, D(2025, 3, 10), "x")
    record = enforcement.register_record_delivery(record, at(2025, 3, 20, 12))
    assert enforcement.appeal_last_day(record) == D(2025, 4, 19)
    enforcement.file_appeal(record, D(2025, 4, 19), "x")


def test_annulled_record_lifts_the_suspension(world):
    record = record_for(world)
    enforcement.apply_suspension(record, D(2025, 3, 10), 15, by=world.authority)
    enforcement.file_appeal(record, D(2025, 3, 12), "Razões")
    enforcement.decide_appeal(
        record, D(2025, 3, 12), upheld=False, decision="Anulado.", by=world.authority
    )
    licence = world.alfa.licences.get()
    assert licence.restricted_on(D(2025, 3, 12)) is None
    assert licence.restricted_on(D(2025, 3, 11)) == "SUSPENDED"  # the days served stay
    assert EnforcementCase.objects.get(pk=record.case_id).status == CaseStatus.CLOSED


def test_upheld_record_is_due_30_working_days_after_the_decision(world):
    record = record_for(world)
    enforcement.file_appeal(record, D(2025, 3, 20), "Razões")
    with fail("appeal_pending"):
        enforcement.register_payment(record, D(2025, 3, 25))
    enforcement.decide_appeal(
        record, D(2025, 5, 2), upheld=True, decision="Mantido.", by=world.authority
    )
    record.refresh_from_db()
    # Guaratinguetá's framework after an appeal: Lei 3.190/2013 art. 15, 30 working days from
    # the decision (Fri 02/05): day 1 Mon 05/05, day 30 Fri 13/06 (was 01/06, calendar days).
    assert enforcement.payment_last_day(record) == D(2025, 6, 13)


# --- payment (art. 36) ------------------------------------------------------------------------


def test_payment_on_day_30_is_on_time(world):
    record = record_for(world)  # drawn up 06/03/2025
    # Paying does not end the duty to repair (art. 30 §2): repaired, the payment closes the case.
    enforcement.register_repair(record, at(2025, 3, 20, 10))
    record = enforcement.register_payment(record, D(2025, 4, 5))
    assert not enforcement.paid_late(record)
    assert record.paid_brl == Decimal("3702.00")  # 100 UFESP × R$ 37,02 (2025)
    assert record.case.status == CaseStatus.CLOSED


def test_payment_on_day_31_is_late(world):
    record = record_for(world)
    record = enforcement.register_payment(record, D(2025, 4, 6))
    assert enforcement.paid_late(record)


def test_payment_uses_the_ufesp_of_the_payment_year(world):
    codes = ("INF-01", "INF-04", "INF-05")
    record = record_for(world, opened_at=at(2024, 12, 2, 9), codes=codes)
    other = record_for(world, opened_at=at(2024, 12, 16, 9), codes=codes)
    paid_2024 = enforcement.register_payment(record, D(2024, 12, 30))
    assert paid_2024.paid_brl == Decimal("5304.00")  # 150 × 35,36
    paid_2025 = enforcement.register_payment(other, D(2025, 1, 2))
    assert paid_2025.paid_brl == Decimal("5553.00")  # 150 × 37,02


def test_payment_without_ufesp_for_the_year_is_refused_clearly(world):
    record = record_for(world)
    UfespRate.objects.filter(year=2025).delete()
    with pytest.raises(EnforcementError, match="UFESP cadastrado para 2025") as info:
        enforcement.register_payment(record, D(2025, 3, 20))
    assert info.value.code == "ufesp_missing"
    record.refresh_from_db()
    assert record.status == RecordStatus.ISSUED


def test_divida_ativa_only_after_day_30(world):
    record = record_for(world)
    with fail("payment_running"):
        enforcement.send_to_divida_ativa(record, D(2025, 4, 5))
    record = enforcement.send_to_divida_ativa(record, D(2025, 4, 6))
    assert record.status == RecordStatus.DIVIDA_ATIVA


def test_divida_ativa_waits_for_the_appeal_window_of_a_late_delivery(world):
    record = record_for(world, delivery=DeliveryMethod.MAIL)  # drawn up 06/03/2025
    record = enforcement.register_record_delivery(record, at(2025, 3, 25, 12))  # appeal to 24/04
    with fail("appeal_running"):
        enforcement.send_to_divida_ativa(record, D(2025, 4, 10))
    timeline = enforcement.case_timeline(record.case, at(2025, 4, 10))
    assert "a Dívida Ativa espera o fim do prazo de recurso" in " ".join(timeline.next_due)
    assert enforcement.send_to_divida_ativa(record, D(2025, 4, 25)).status == "DIVIDA_ATIVA"


# --- penalties --------------------------------------------------------------------------------


def test_suspension_of_16_days_is_refused_with_the_reason(world):
    record = record_for(world)
    with pytest.raises(EnforcementError, match="1 a 15 dias.*art. 25 IV"):
        enforcement.apply_suspension(record, D(2025, 3, 10), 16, by=world.authority)
    assert enforcement.apply_suspension(
        record, D(2025, 3, 10), 15, by=world.authority
    ).ends_on == D(2025, 3, 24)


def test_suspension_without_an_end_is_refused_by_the_database(world):
    # The longest suspension is the framework's (art. 25 IV: 15 days; apply_suspension checks
    # it); the database keeps only what holds under any framework: an end after the start.
    record = record_for(world)
    with pytest.raises(IntegrityError, match="suspension_has_an_end"), transaction.atomic():
        Penalty.objects.create(
            record=record,
            kind=PenaltyKind.SUSPENSION,
            starts_on=D(2025, 3, 10),
            ends_on=D(2025, 3, 9),
        )


def test_new_infraction_after_a_suspension_proposes_revocation(world):
    first = record_for(world, opened_at=at(2025, 1, 6, 9))
    enforcement.apply_suspension(first, D(2025, 1, 10), 5, by=world.authority)
    second = record_for(world, opened_at=at(2025, 3, 3, 9))
    assert second.proposes_revocation
    timeline = enforcement.case_timeline(second.case, at(2025, 3, 7))
    assert any("cassação" in line for line in timeline.next_due)


def test_infraction_before_the_suspension_does_not_propose_revocation(world):
    first = record_for(world, opened_at=at(2025, 1, 6, 9))
    enforcement.apply_suspension(first, D(2025, 3, 20), 5, by=world.authority)
    second = record_for(world, opened_at=at(2025, 3, 3, 9))
    assert not second.proposes_revocation


def test_seizure_release_refused_before_the_costs_are_paid(world):
    record = record_for(world)
    seizure = enforcement.apply_seizure(
        record, D(2025, 3, 7), "Caçamba C-01, pátio municipal", by=world.authority
    )
    with fail("costs_unpaid"):
        enforcement.release_seizure(seizure, D(2025, 3, 12), irregularity_fixed=True)
    enforcement.register_seizure_costs(seizure, Decimal("450.00"), None)
    with fail("costs_unpaid"):
        enforcement.release_seizure(seizure, D(2025, 3, 12), irregularity_fixed=True)
    enforcement.register_seizure_costs(seizure, Decimal("450.00"), D(2025, 3, 11))
    with fail("not_fixed"):
        enforcement.release_seizure(seizure, D(2025, 3, 12), irregularity_fixed=False)
    released = enforcement.release_seizure(seizure, D(2025, 3, 12), irregularity_fixed=True)
    assert released.lifted_on == D(2025, 3, 12)


def test_embargo_breach_twice_on_a_day_or_after_cancellation_is_refused(world):
    record = record_for(world)
    embargo = enforcement.apply_embargo(
        record, D(2025, 3, 7), "Obra da Rua A, 1", by=world.authority
    )
    enforcement.register_embargo_breach(embargo, D(2025, 3, 8))
    with fail("duplicate"):
        enforcement.register_embargo_breach(embargo, D(2025, 3, 8))
    enforcement.lift_penalty(embargo, D(2025, 3, 10), "Obra regularizada.", D(2025, 3, 10))
    with fail("date"):
        enforcement.register_embargo_breach(embargo, D(2025, 3, 11))
    assert enforcement.embargo_fine_ufesp(embargo) == Decimal("1")


# --- effects on the CTR rules -----------------------------------------------------------------


def _suspend_alfa(world, starts_on: datetime.date | None = None, days: int = 15):
    starts_on = starts_on or D(2026, 11, 20)
    record = record_for(world, opened_at=at(2026, 11, 2, 9))
    return enforcement.apply_suspension(record, starts_on, days, by=world.authority)


def test_suspended_transporter_ctr_is_refused_by_rule(world):
    _suspend_alfa(world)  # 20/11 to 04/12/2026, covering TODAY (30/11)
    licence = world.alfa.licences.get(municipality=world.town)
    assert licence.status == "SUSPENDED"
    assert licence.suspended_until == D(2026, 12, 4)
    assert error_codes(issue(world)) == ["TRANSPORTER_SUSPENDED"]


def test_a_suspension_in_the_town_does_not_stop_the_transporters_ctrs_in_the_neighbour(world):
    """The case's municipality suspends its own licence (art. 25 IV, art.
    35); the neighbour that licensed the same company judges it on its own."""
    neighbour = municipality("3502507", "Aparecida (teste)", east_m=20_000)
    neighbour.accepted_destinations.add(world.town)  # a consortium: the town's ATT
    licence(world.alfa, neighbour, "AP-001", D(2025, 1, 1))
    _suspend_alfa(world)
    there = world.alfa.licences.get(municipality=neighbour)
    assert (there.status, there.status_since, there.suspended_until) == ("ACTIVE", None, None)
    from_neighbour = {"type": "Point", "coordinates": list(offset(*world.origin.coords, 20_000))}
    assert issue(world, origin=from_neighbour).status_code == 201
    assert error_codes(issue(world)) == ["TRANSPORTER_SUSPENDED"]


def test_a_suspension_where_the_transporter_has_no_licence_changes_no_licence(world):
    """The penalty stands (art. 25 IV); there is no licence of that municipality to suspend,
    and the others' are not its to touch."""
    neighbour = municipality("3502507", "Aparecida (teste)", east_m=20_000)
    world.alfa.licences.update(municipality=neighbour)
    suspension = _suspend_alfa(world)
    assert suspension.pk is not None
    assert world.alfa.licences.get().status == "ACTIVE"


def test_suspension_starts_on_its_first_day_not_before(world):
    _suspend_alfa(world, starts_on=TODAY + datetime.timedelta(days=1), days=3)
    assert issue(world).status_code == 201  # transport today, suspension from tomorrow
    tomorrow = (TODAY + datetime.timedelta(days=1)).isoformat()
    assert error_codes(issue(world, transport_date=tomorrow)) == ["TRANSPORTER_SUSPENDED"]


def test_lifting_the_suspension_early_lets_the_transporter_issue_again(world):
    suspension = _suspend_alfa(world)
    enforcement.lift_penalty(suspension, D(2026, 11, 25))
    assert issue(world).status_code == 201
    # The days before the lifting stay suspended.
    assert error_codes(issue(world, transport_date="2026-11-24")) == ["TRANSPORTER_SUSPENDED"]


def test_suspension_over_lets_the_transporter_issue_again(world):
    _suspend_alfa(world, starts_on=D(2026, 11, 10), days=5)  # until 14/11
    assert issue(world).status_code == 201


def test_revoked_transporter_ctr_is_refused(world):
    record = record_for(world, opened_at=at(2026, 11, 2, 9))
    enforcement.apply_revocation(record, D(2026, 11, 20), "Art. 34", by=world.authority)
    assert error_codes(issue(world)) == ["TRANSPORTER_SUSPENDED"]


def test_suspended_facility_refuses_ctrs_by_rule_until_restored(world):
    record = record_for(
        world, opened_at=at(2026, 11, 2, 9), offender=facility_offender(world), codes=("INF-12",)
    )
    enforcement.apply_suspension(record, D(2026, 11, 20), 15, by=world.authority)
    license_ = FacilityLicense.objects.get(facility=world.att)
    assert (license_.status, license_.status_since) == ("SUSPENDED", D(2026, 11, 20))
    assert "FACILITY_NOT_LICENSED" in error_codes(issue(world))
    # The day before the suspension still counts as licensed.
    assert issue(world, transport_date="2026-11-19").status_code == 201
    # After its last day, the command gives the license back.
    restored = enforcement.restore_ended_suspensions(D(2026, 12, 5))
    assert len(restored) == 1
    assert issue(world).status_code == 201


def test_revoked_facility_refuses_ctrs(world):
    record = record_for(
        world, opened_at=at(2026, 11, 2, 9), offender=facility_offender(world), codes=("INF-12",)
    )
    enforcement.apply_revocation(record, D(2026, 11, 20), by=world.authority)
    assert "FACILITY_NOT_LICENSED" in error_codes(issue(world))


def test_suspension_of_an_already_suspended_transporter_is_refused(world):
    suspension = _suspend_alfa(world)
    with fail("already_restricted"):
        enforcement.apply_suspension(suspension.record, D(2026, 11, 25), 2, by=world.authority)


# --- timeline, command ------------------------------------------------------------------------


def test_timeline_says_what_is_due_next_at_each_step(world):
    case = open_case(world, at(2025, 3, 3, 9))
    assert "notificação" in enforcement.case_timeline(case, at(2025, 3, 3, 9)).next_due[0]
    notice = enforcement.issue_notice(case, "Limpar", DeliveryMethod.HAND, at(2025, 3, 3, 10))
    case.refresh_from_db()
    assert "entrega" in enforcement.case_timeline(case, at(2025, 3, 3, 10)).next_due[0]
    enforcement.register_notice_delivery(notice, at(2025, 3, 3, 10))
    running = enforcement.case_timeline(case, at(2025, 3, 4))
    assert running.next_due == ["Aguardar a reparação até 06/03/2025 às 10h00 e vistoriar."]
    deadline = next(s for s in running.steps if s.label.startswith("Prazo de 72"))
    assert deadline.state == "pending"
    expired = enforcement.case_timeline(case, at(2025, 3, 6, 10, 1))
    assert "lavrar o auto" in expired.next_due[0]
    assert next(s for s in expired.steps if s.label.startswith("Prazo de 72")).state == "expired"


def test_timeline_of_a_record_lists_appeal_and_payment_deadlines(world):
    record = record_for(world)
    timeline = enforcement.case_timeline(record.case, at(2025, 3, 10))
    assert "Prazo de recurso até 05/04/2025." in timeline.next_due
    assert "Pagamento da multa até 05/04/2025." in timeline.next_due
    late = enforcement.case_timeline(record.case, at(2025, 4, 6, 12))
    assert any("Dívida Ativa" in line for line in late.next_due)


def test_command_lists_what_expires(world):
    record = record_for(world)  # payment due 05/04/2025
    case = open_case(world, at(2025, 4, 1, 9), offender=facility_offender(world))
    notice = enforcement.issue_notice(case, "Triar", DeliveryMethod.HAND, at(2025, 4, 1, 10))
    enforcement.register_notice_delivery(notice, at(2025, 4, 1, 10))
    out = io.StringIO()
    call_command("enforcement_deadlines", "--days", "7", "--today", "2025-04-02", stdout=out)
    text = out.getvalue()
    assert f"05/04/2025  {record.case.number}  Auto {record.number}: pagamento" in text
    assert f"04/04/2025 às 10h00  {case.number}  Notificação {notice.number}" in text
    out = io.StringIO()
    call_command("enforcement_deadlines", "--today", "2025-04-10", stdout=out)
    assert "VENCIDO  05/04/2025" in out.getvalue()
    assert "Dívida Ativa" in out.getvalue()


def test_command_apply_restores_a_facility_after_its_suspension(world):
    record = record_for(
        world, opened_at=at(2025, 3, 3, 9), offender=facility_offender(world), codes=("INF-12",)
    )
    enforcement.apply_suspension(record, D(2025, 3, 10), 5, by=world.authority)
    out = io.StringIO()
    call_command("enforcement_deadlines", "--today", "2025-03-20", stdout=out)
    assert "restabelecer a licença" in out.getvalue()
    assert FacilityLicense.objects.get(facility=world.att).status == "SUSPENDED"
    call_command("enforcement_deadlines", "--today", "2025-03-20", "--apply", stdout=out)
    assert FacilityLicense.objects.get(facility=world.att).status == "ACTIVE"


# --- pages and PDFs ---------------------------------------------------------------------------


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def title_of(response) -> str:
    """The page's <title>, unescaped, whitespace collapsed."""
    [title] = re.findall(r"<title>(.*?)</title>", response.content.decode(), re.S)
    return " ".join(html.unescape(title).split())


def test_pages_are_for_municipal_users_only(world):
    assert Client().get("/fiscalizacao/processos/").status_code == 302
    assert client_for(world.alfa_user).get("/fiscalizacao/processos/").status_code == 403
    response = client_for(world.fiscal).get("/fiscalizacao/processos/")
    assert response.status_code == 200
    assert title_of(response) == "Processos de fiscalização — CTR"


def test_inspector_opens_a_case_notifies_and_draws_up_a_record_on_the_pages(world):
    web = client_for(world.fiscal)
    response = web.post(
        "/fiscalizacao/processos/novo/",
        {
            "municipality": world.town.pk,
            "opened_at": "2025-03-03T09:00",
            "description": "Entulho na calçada.",
            "offender_role": "TRANSPORT_DIRECTOR",
            "offender_name": "João Dirigente",
            "offender_document": "11.222.333/0001-81",
            "transporter": world.alfa.pk,
        },
    )
    assert response.status_code == 302, response.content.decode()
    case = EnforcementCase.objects.get()
    assert response["Location"] == f"/fiscalizacao/processos/{case.pk}/"
    web.post(
        f"/fiscalizacao/processos/{case.pk}/notificar/",
        {"required_action": "Limpar", "delivery_method": "HAND", "issued_at": "2025-03-03T10:00"},
    )
    notice = case.notices.get()
    response = web.post(
        f"/fiscalizacao/notificacoes/{notice.pk}/entrega/",
        {"delivered_date": "2025-03-03", "delivered_time": "10:00"},
    )
    assert response.status_code == 302
    ids = [str(e.pk) for e in entries("INF-01", "INF-04")]
    early = {
        "entries": ids,
        "drawn_up_at": "2025-03-05T10:00",
        "delivery_method": "HAND",
        "signed_by_offender": "on",
    }
    response = web.post(f"/fiscalizacao/processos/{case.pk}/auto/", early)
    assert response.status_code == 400
    assert "06/03/2025 às 10h00" in response.content.decode()
    response = web.post(
        f"/fiscalizacao/processos/{case.pk}/auto/", {**early, "drawn_up_at": "2025-03-07T10:00"}
    )
    assert response.status_code == 302
    record = case.records.get()
    assert record.total_ufesp == Decimal("130.00")
    # The record proposes the fine; the authority applies it (art. 35), and the payment's
    # days count from then.
    page = web.get(f"/fiscalizacao/processos/{case.pk}/").content.decode()
    assert "depois da aplicação da multa pela autoridade" in page
    response = client_for(world.authority).post(
        f"/fiscalizacao/autos/{record.pk}/aplicar-multa/", {"applied_at": "2025-03-07T12:00"}
    )
    assert response.status_code == 302
    page = web.get(f"/fiscalizacao/processos/{case.pk}/").content.decode()
    assert record.number in page and "06/04/2025" in page
    assert "enviar à Dívida Ativa" in page  # today is long after the deadline
    # The penalty is the authority's (art. 35).
    response = client_for(world.authority).post(
        f"/fiscalizacao/autos/{record.pk}/penalidade/suspensao/",
        {"starts_on": "2025-03-10", "days": "16"},
    )
    assert response.status_code == 400
    assert "art. 25 IV" in response.content.decode()


def pdf_text(content: bytes) -> str:
    text = " ".join(page.extract_text() for page in PdfReader(io.BytesIO(content)).pages)
    return " ".join(text.split())  # table cells wrap: compare words, not lines


def test_notice_pdf_has_the_deadline_and_the_legal_references(world):
    case = open_case(world, at(2025, 3, 3, 9))
    notice = enforcement.issue_notice(
        case, "Remover o entulho", DeliveryMethod.HAND, at(2025, 3, 3, 10)
    )
    enforcement.register_notice_delivery(notice, at(2025, 3, 3, 10))
    response = client_for(world.fiscal).get(f"/fiscalizacao/notificacoes/{notice.pk}/pdf/")
    assert response["Content-Type"] == "application/pdf"
    text = pdf_text(response.content)
    for expected in (
        notice.number,
        "Notificação para reparação do dano",
        "João Dirigente",
        "11.222.333/0001-81",
        "Dirigente legal da empresa transportadora",
        "06/03/2025 às 10h00",
        "art. 28",
        "Lei 3.978/2007 art. 28 §1 (72 horas)",
    ):
        assert expected in text, expected


def test_record_pdf_has_entries_totals_recidivism_and_certificate(world):
    earlier = record_for(world, opened_at=at(2025, 1, 6, 9))
    InfractionRecord.objects.filter(pk=earlier.pk).update(status=RecordStatus.PAID)
    case = open_case(world, at(2025, 3, 3, 9), obstructed=True)
    record = enforcement.draw_up_record(
        case,
        entries("INF-01", "INF-04", "INF-05"),
        delivery_method=DeliveryMethod.HAND,
        no_signature_reason="Recusou-se a assinar.",
        drawn_up_at=at(2025, 3, 3, 11),
    )
    response = client_for(world.fiscal).get(f"/fiscalizacao/autos/{record.pk}/pdf/")
    text = pdf_text(response.content)
    # 100 + 30 + 20, doubled (art. 30); obstruction noted, no factor (art. 26 I).
    assert record.total_ufesp == Decimal("300.00")
    for expected in (
        record.number,
        "Auto de infração",
        "Lei 3.978/2007 art. 2 §1",
        "Lei 3.978/2007 art. 3 VI, art. 13 p.ú.",
        "art. 30 §3",
        "Reincidência",
        earlier.number,
        "art. 26 I",
        "300,00",
        "02/04/2025",
        "Certidão do servidor",
        "Recusou-se a assinar.",
        "Lei 3.978/2007 art. 36",
        "Lei 3.978/2007 art. 34",
        # The framework's figures with their sources.
        "Fundamentação legal (Lei Municipal nº 3.978, de 9 de novembro de 2007",
        "Secretário Municipal de Serviços Urbanos (art. 35)",
        "agravante registrado, sem fator",
        # Lei 3.978/2007 has no appeal procedure and the municipality has not filled its
        # norm: the record says so and cites no other municipality's law.
        "o município ainda não cadastrou a norma própria",
    ):
        assert expected in text, expected
    assert "3.190" not in text


def test_every_page_of_a_case_renders(world):
    record = record_for(world, delivery=DeliveryMethod.MAIL)
    embargo = enforcement.apply_embargo(
        record, D(2025, 3, 7), "Obra da Rua A, 1", by=world.authority
    )
    enforcement.register_embargo_breach(embargo, D(2025, 3, 8))
    seizure = enforcement.apply_seizure(record, D(2025, 3, 7), "Caçamba C-01", by=world.authority)
    notice = record.case.notices.get()
    web = client_for(world.fiscal)
    case, number = record.case, record.number
    pages = {  # each page and its title
        "/fiscalizacao/processos/": "Processos de fiscalização — CTR",
        "/fiscalizacao/processos/?status=RECORDED&q=Jo": "Processos de fiscalização — CTR",
        "/fiscalizacao/processos/novo/": "Abrir processo de fiscalização — CTR",
        f"/fiscalizacao/processos/{case.pk}/": f"{case.number} — Fiscalização — CTR",
        f"/fiscalizacao/autos/{record.pk}/entrega/": f"Entrega do auto {number}",
        f"/fiscalizacao/autos/{record.pk}/recurso/": f"Recurso contra o auto {number}",
        f"/fiscalizacao/autos/{record.pk}/pagamento/": f"Pagamento da multa — auto {number}",
        f"/fiscalizacao/autos/{record.pk}/divida-ativa/": f"Enviar o auto {number} à Dívida Ativa",
        f"/fiscalizacao/autos/{record.pk}/penalidade/embargo/": f"{PenaltyKind.EMBARGO.label} — "
        f"auto {number}",
        f"/fiscalizacao/autos/{record.pk}/penalidade/apreensao/": f"{PenaltyKind.SEIZURE.label} "
        f"— auto {number}",
        f"/fiscalizacao/autos/{record.pk}/penalidade/suspensao/": f"{PenaltyKind.SUSPENSION.label}"
        f" — auto {number}",
        f"/fiscalizacao/autos/{record.pk}/penalidade/cassacao/": f"{PenaltyKind.REVOCATION.label} "
        f"— auto {number}",
        f"/fiscalizacao/penalidades/{embargo.pk}/descumprimento/": "Descumprimento do embargo",
        f"/fiscalizacao/penalidades/{embargo.pk}/levantamento/": "Cancelar o embargo",
        f"/fiscalizacao/penalidades/{seizure.pk}/custos/": "Custos de apreensão, remoção e guarda",
        f"/fiscalizacao/penalidades/{seizure.pk}/liberacao/": "Liberação dos equipamentos "
        "apreendidos",
    }
    authority = client_for(world.authority)  # the penalties' pages are his (art. 35)
    for url, title in pages.items():
        response = (authority if "/penalidade/" in url else web).get(url)
        assert response.status_code == 200, url
        assert title_of(response).startswith(title), (url, title_of(response))
    for url, number in (
        (f"/fiscalizacao/notificacoes/{notice.pk}/pdf/", notice.number),
        (f"/fiscalizacao/autos/{record.pk}/pdf/", record.number),
    ):
        response = web.get(url)
        assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
        assert number in pdf_text(response.content), url
    page = web.get(f"/fiscalizacao/processos/{record.case_id}/").content.decode()
    assert "Registrar a entrega do auto" in page
    assert "1 dia(s) = 1 UFESP" in page
    assert web.get(f"/fiscalizacao/autos/{record.pk}/penalidade/multa/").status_code == 404


def test_admin_lists_every_enforcement_model(world):
    from django.contrib.auth import get_user_model

    record = record_for(world)
    admin = get_user_model().objects.create_superuser("gestor", "g@example.org", "x")
    web = client_for(admin)
    for model in (
        "penaltytableentry",
        "ufesprate",
        "municipalholiday",
        "offender",
        "enforcementcase",
        "notice",
        "infractionrecord",
        "appeal",
        "penalty",
        "embargobreach",
    ):
        app = "pev_network" if model == "ufesprate" else "fiscalization"
        response = web.get(f"/admin/{app}/{model}/")
        assert response.status_code == 200, model
        assert title_of(response).startswith("Selecione"), (model, title_of(response))
    response = web.get(f"/admin/fiscalization/infractionrecord/{record.pk}/change/")
    assert response.status_code == 200
    assert record.number in title_of(response)
    entry = entries("INF-02")[0]
    response = web.get(f"/admin/fiscalization/penaltytableentry/{entry.pk}/change/")
    assert response.status_code == 200
    assert entry.code in title_of(response)
