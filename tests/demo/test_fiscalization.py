"""The fiscalization demo (demo/fiscalization.py, a part of `manage.py load_demo`), on top
of the network and CTR demos: loaded once for the module inside a transaction rolled back at
the end."""

from __future__ import annotations

import datetime
import html
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from ctr.models import LicenceStatus, TransporterLicence
from demo import fiscalization_cases as demo_cases
from demo import loading
from fiscalization import enforcement, hotspots, intake
from fiscalization.models import (
    DumpingCategory,
    DumpingPhoto,
    DumpingReport,
    DumpingReportEvent,
    EnforcementCase,
    InfractionRecord,
    Notice,
    Offender,
    Penalty,
    PenaltyKind,
    RecordStatus,
    ReporterKind,
    ReportStatus,
)
from fiscalization.models.enforcement import Appeal, CaseStatus
from tests.demo import held_for_the_module

pytestmark = pytest.mark.django_db

WRITE_STATEMENTS = ("INSERT", "UPDATE", "DELETE", "TRUNCATE", "COPY")
# The urban grid of the demo bacias.
LON, LAT = (-45.205, -45.145), (-22.845, -22.785)


def load() -> str:
    return loading.load_fiscalization()


@pytest.fixture(scope="module")
def loaded(django_db_setup, django_db_blocker):
    """(output of the first load, the suspended transporter's dates before it)."""
    with held_for_the_module(django_db_blocker):
        loading.load_network()
        loading.load_ctrs()
        carrier = TransporterLicence.objects.get(
            transporter__document=demo_cases.SUSPENDED_TRANSPORTER.document
        )
        before = (carrier.status, carrier.status_since, carrier.suspended_until)
        yield load(), before


def case_of(document: str, status: str | None = None) -> EnforcementCase:
    cases = EnforcementCase.objects.filter(offender__document=document).order_by("opened_at")
    return cases.get(status=status) if status else cases.get()


def snapshot() -> dict[str, int]:
    models = (DumpingReport, DumpingReportEvent, EnforcementCase, Notice, InfractionRecord,
              Penalty, Appeal, Offender)  # fmt: skip
    return {model.__name__: model.objects.count() for model in models}


# --- reports ----------------------------------------------------------------------------------


def test_about_sixty_reports_in_the_urban_grid(loaded):
    reports = list(DumpingReport.objects.all())
    assert 55 <= len(reports) <= 65
    now = timezone.now()
    for report in reports:
        assert LON[0] <= report.location.x <= LON[1] and LAT[0] <= report.location.y <= LAT[1]
        assert report.municipality.ibge_code == "3518404"
        assert now - datetime.timedelta(days=170) < report.created_at < now
    assert not DumpingPhoto.objects.exists()  # no media files written


def test_every_status_and_category(loaded):
    assert set(DumpingReport.objects.values_list("status", flat=True)) == set(ReportStatus.values)
    categories = set(DumpingReport.objects.values_list("category", flat=True))
    assert categories == set(DumpingCategory.values)


def test_citizens_with_and_without_contact_and_the_inspector(loaded):
    fiscal = get_user_model().objects.get(username="fiscal")
    citizens = DumpingReport.objects.filter(reporter_kind=ReporterKind.CITIZEN, reporter=None)
    assert citizens.exclude(contact="").count() >= 5
    assert citizens.filter(contact="", contact_name="").count() >= 5
    by_inspector = DumpingReport.objects.filter(reporter_kind=ReporterKind.INSPECTOR)
    assert by_inspector.count() >= 5
    assert set(by_inspector.values_list("reporter", flat=True)) == {fiscal.pk}


def test_merged_duplicates(loaded):
    duplicates = DumpingReport.objects.filter(status=ReportStatus.DUPLICATE)
    assert duplicates.count() == 2
    for duplicate in duplicates:
        original = duplicate.duplicate_of
        assert original is not None and original.status != ReportStatus.DUPLICATE
        assert intake.point_distance_m(duplicate.location, original.location) < 20
        assert original.events.filter(note__contains=duplicate.protocol).exists()


def test_histories_replay_to_the_status_in_the_past(loaded):
    now = timezone.now()
    for report in DumpingReport.objects.prefetch_related("events"):
        events = list(report.events.all())
        assert events[0].from_status == "" and events[0].at == report.created_at
        status = ReportStatus.NEW
        for previous, event in zip(events, events[1:], strict=False):
            assert previous.at <= event.at < now
            if event.from_status != event.to_status:
                assert event.from_status == status
                status = event.to_status
        assert status == report.status
        assert report.updated_at == events[-1].at
        if report.status == ReportStatus.CLEANED:
            assert report.created_at < report.cleaned_at <= events[-1].at
        else:
            assert report.cleaned_at is None


def test_hotspots_at_default_settings_one_recurring_after_cleaning(loaded):
    found = hotspots.find_hotspots(hotspots.HotspotQuery())
    assert len(found) >= 2
    recurring = [h for h in found if h.cleaned and h.recurrence_after_cleaning]
    assert recurring, [h.properties() for h in found]
    assert all(h.reports >= hotspots.DEFAULT_MIN_POINTS for h in found)


# --- cases ------------------------------------------------------------------------------------


def test_notice_by_hand_repaired_in_time(loaded):
    case = case_of(demo_cases.REPAIRER[1])
    assert case.status == CaseStatus.REPAIRED
    notice = case.notices.get()
    assert notice.delivery_method == "HAND"
    assert notice.repaired_at <= enforcement.notice_due(notice)
    assert not case.records.exists()
    assert case.dumping_report.status == ReportStatus.CLEANED


def test_expired_notice_then_signed_record_of_two_entries(loaded):
    case = case_of(demo_cases.CLANDESTINE[1])
    assert case.status == CaseStatus.RECORDED
    notice = case.notices.get()
    assert notice.repaired_at is None
    record = case.records.get()
    assert record.drawn_up_at > enforcement.notice_due(notice)
    assert record.signed_by_offender and not record.recidivist
    fines = [item.fine_ufesp for item in record.items.all()]
    assert len(fines) == 2 and record.total_ufesp == sum(fines)  # cumulative (art. 30 §3)
    assert record.status == RecordStatus.ISSUED


def test_recidivist_record_is_doubled(loaded):
    first = case_of(demo_cases.RECIDIVIST[1], CaseStatus.CLOSED)
    earlier = first.records.get()
    assert earlier.status == RecordStatus.PAID and earlier.paid_brl > 0
    case = case_of(demo_cases.RECIDIVIST[1], CaseStatus.RECORDED)
    record = case.records.get()
    assert record.recidivist and not case.notices.exists()
    base = sum(item.fine_ufesp for item in record.items.all())
    assert record.total_ufesp == 2 * base == Decimal("200.00")
    assert earlier.drawn_up_at < case.opened_at


def test_appeal_pending(loaded):
    record = case_of(demo_cases.APPELLANT[1]).records.get()
    assert record.status == RecordStatus.APPEALED
    assert record.delivery_method == "MAIL" and not record.signed_by_offender
    appeal = record.appeal
    assert appeal.decided_on is None
    assert appeal.filed_on <= enforcement.appeal_last_day(record)


def test_a_notice_is_still_running(loaded):
    case = case_of(demo_cases.NOTIFIED[1])
    assert case.status == CaseStatus.NOTIFIED
    assert enforcement.notice_due(case.notices.get()) > timezone.now()


def test_suspension_explains_the_suspended_transporter(loaded):
    _output, before = loaded
    carrier = TransporterLicence.objects.get(
        transporter__document=demo_cases.SUSPENDED_TRANSPORTER.document
    )
    assert (carrier.status, carrier.status_since, carrier.suspended_until) == before
    assert carrier.status == LicenceStatus.SUSPENDED
    penalty = Penalty.objects.get(kind=PenaltyKind.SUSPENSION)
    assert penalty.record.case.offender.transporter == carrier.transporter
    assert penalty.record.case.municipality_id == carrier.municipality_id
    assert (penalty.starts_on, penalty.ends_on) == (carrier.status_since, carrier.suspended_until)
    assert penalty.record.drawn_up_at.date() < penalty.starts_on
    assert penalty.record.case.dumping_report.category == DumpingCategory.SLOPE


def test_every_case_has_a_timeline(loaded):
    for case in EnforcementCase.objects.all():
        assert enforcement.case_timeline(case).steps


def test_pages_show_the_demo_to_the_inspector(loaded, client):
    client.force_login(get_user_model().objects.get(username="fiscal"))
    case = case_of(demo_cases.CLANDESTINE[1])
    report = case.dumping_report
    other = EnforcementCase.objects.exclude(pk=case.pk).order_by("opened_at").first()
    pages = {  # each page and what of the demo it must show
        reverse("intake:inspect"): ["Denúncias de descarte irregular", report.protocol],
        reverse("intake:inspect-report", args=[report.pk]): [f"Denúncia {report.protocol}"],
        reverse("enforcement:case-list"): ["Processos de fiscalização", case.number, other.number],
        reverse("enforcement:case-detail", args=[case.pk]): [case.number, case.offender.name],
        reverse("fiscalization_analysis:hotspots"): ["Pontos críticos de descarte irregular"],
    }
    for url, expected in pages.items():
        response = client.get(url)
        assert response.status_code == 200, url
        text = html.unescape(response.content.decode())
        for part in expected:
            assert part in text, (url, part)


# --- summary, idempotency ---------------------------------------------------------------------


def test_summary_in_portuguese(loaded):
    output, _before = loaded
    assert "Fiscalização de demonstração criada" in output
    assert "denúncias em Guaratinguetá" in output
    assert "Pontos críticos" in output and "Suspensão de" in output


def test_second_load_duplicates_nothing_and_writes_nothing(loaded):
    """Its time is the benchmarks' business; here, that it does no work: it only reads."""
    before = snapshot()
    with CaptureQueriesContext(connection) as queries:
        output = load()
    assert snapshot() == before
    assert "já existia (nada duplicado)" in output
    writes = [q["sql"] for q in queries if q["sql"].lstrip().upper().startswith(WRITE_STATEMENTS)]
    assert writes == []
