"""Serving a notice or a record (Lei 3.978/2007 art. 28; Lei 3.190/2013 art. 11-12): the
individual delivery comes first, the public notice (edital) only supplies one that failed
(art. 28 §2, "quando negativas ou impraticáveis"), and from a failed delivery the edital is
always reachable. The 72 hours run from the hour of the receipt by hand, from the AR's date
and hour by mail, and from the first working day after the edital's publication."""

from __future__ import annotations

import datetime

import pytest
from django.test import Client
from django.urls import reverse

from fiscalization import enforcement
from fiscalization.enforcement import ACTIONS, EnforcementError
from fiscalization.models.enforcement import (
    DeliveryMethod,
    DeliveryOutcome,
    MunicipalHoliday,
    RecordStatus,
)
from tests.ctr_world import build_world
from tests.enforcement_world import HOUR, D, at, entries, notified_and_expired, open_case

pytestmark = pytest.mark.django_db

NOT_FOUND, REFUSED, RETURNED = (
    DeliveryOutcome.NOT_FOUND,
    DeliveryOutcome.REFUSED,
    DeliveryOutcome.RETURNED,
)


@pytest.fixture
def world():
    return build_world()


def names(subject) -> list[str]:
    return [row.name for row in enforcement.offered(subject)]


def notice_by(world, method: str):
    issued = at(2025, 3, 3, 10)
    case = open_case(world, issued - HOUR)
    return enforcement.issue_notice(case, "Remover o entulho do lote.", method, issued)


def record_by(world, method: str):
    case = open_case(world, at(2025, 3, 3, 9))
    drawn = notified_and_expired(case)
    return enforcement.draw_up_record(
        case, entries("INF-01"), delivery_method=method, signed_by_offender=True, drawn_up_at=drawn
    )


# --- the edital is subsidiary (art. 28 §2) ----------------------------------------------------


def test_a_notice_cannot_go_by_edital_before_an_individual_notice_failed(world):
    case = open_case(world, at(2025, 3, 3, 9))
    with pytest.raises(EnforcementError) as info:
        enforcement.issue_notice(case, "Limpar", DeliveryMethod.PUBLIC_NOTICE, at(2025, 3, 3, 10))
    assert info.value.code == "individual_first"
    assert "O edital só supre a entrega individual negativa ou impraticável (art. 28 §2)" in (
        info.value.message
    )
    assert not case.notices.exists()


def test_a_record_cannot_go_by_edital_before_an_individual_delivery_failed(world):
    case = open_case(world, at(2025, 3, 3, 9))
    drawn = notified_and_expired(case)
    with pytest.raises(EnforcementError, match=r"O edital só supre .*\(art\. 28 §2\)") as info:
        enforcement.draw_up_record(
            case,
            entries("INF-01"),
            delivery_method=DeliveryMethod.PUBLIC_NOTICE,
            signed_by_offender=True,
            drawn_up_at=drawn,
        )
    assert info.value.code == "individual_first"
    assert not case.records.exists()


def test_the_edital_of_a_notice_not_yet_failed_is_refused_and_not_offered(world):
    notice = notice_by(world, DeliveryMethod.HAND)
    assert "publish_notice_edital" not in names(notice)
    with pytest.raises(EnforcementError) as info:
        enforcement.publish_notice_edital(notice, D(2025, 3, 5))
    assert info.value.code == "individual_first"
    assert "depois de registrada a entrega frustrada" in info.value.message
    notice.refresh_from_db()
    assert notice.delivery_method == DeliveryMethod.HAND and notice.delivered_on is None


def test_a_delivered_notice_gets_no_edital(world):
    notice = notice_by(world, DeliveryMethod.HAND)
    enforcement.register_notice_delivery(notice, at(2025, 3, 3, 11))
    with pytest.raises(EnforcementError, match="ainda não recebida nem publicada em edital"):
        enforcement.register_notice_failure(notice, NOT_FOUND, at(2025, 3, 3, 12), "Ausente.")


def test_a_returned_ar_is_not_a_refusal_by_hand(world):
    notice = notice_by(world, DeliveryMethod.MAIL)
    with pytest.raises(EnforcementError, match="AR devolvido sem entrega") as info:
        enforcement.register_notice_failure(notice, REFUSED, at(2025, 3, 6, 10), "Recusou.")
    assert info.value.code == "outcome"


# --- from a failed delivery the edital is reachable -------------------------------------------


def test_after_a_returned_ar_the_notice_goes_by_edital(world):
    notice = notice_by(world, DeliveryMethod.MAIL)
    enforcement.register_notice_failure(
        notice, RETURNED, at(2025, 3, 6, 14), "AR devolvido: mudou-se."
    )
    assert "publish_notice_edital" in names(notice)
    assert "register_notice_failure" not in names(notice)
    timeline = enforcement.case_timeline(notice.case, at(2025, 3, 7))
    assert ACTIONS["publish_notice_edital"].hints[""].format(number=notice.number) in (
        timeline.next_due
    )
    notice = enforcement.publish_notice_edital(notice, D(2025, 3, 12))  # a Wednesday
    assert notice.delivery_method == DeliveryMethod.PUBLIC_NOTICE
    assert enforcement.notice_due(notice) == at(2025, 3, 16, 0, 0)  # end of Saturday 15/03
    # The case goes on: after the 72 hours, the record.
    record = enforcement.draw_up_record(
        notice.case,
        entries("INF-01"),
        delivery_method=DeliveryMethod.HAND,
        signed_by_offender=True,
        drawn_up_at=at(2025, 3, 16, 9),
    )
    assert record.status == RecordStatus.ISSUED


def test_after_a_refused_hand_delivery_the_notice_goes_by_edital(world):
    notice = notice_by(world, DeliveryMethod.HAND)
    enforcement.register_notice_failure(
        notice, REFUSED, at(2025, 3, 3, 11), "Recusou-se a receber a notificação."
    )
    assert "publish_notice_edital" in names(notice)
    notice = enforcement.publish_notice_edital(notice, D(2025, 3, 5))
    assert enforcement.notice_due(notice) == at(2025, 3, 9, 0, 0)
    assert "publish_notice_edital" not in names(notice)  # published: it may only be corrected


def test_the_edital_cannot_precede_the_failure_it_supplies(world):
    notice = notice_by(world, DeliveryMethod.HAND)
    enforcement.register_notice_failure(notice, NOT_FOUND, at(2025, 3, 5, 11), "Ausente.")
    with pytest.raises(EnforcementError, match="antes da entrega frustrada") as info:
        enforcement.publish_notice_edital(notice, D(2025, 3, 4))
    assert info.value.code == "date"


def test_after_a_refused_hand_delivery_the_record_goes_by_edital(world):
    record = record_by(world, DeliveryMethod.HAND)
    assert record.delivered_on is not None  # by hand: handed over when drawn up
    assert "publish_record_edital" not in names(record)
    with pytest.raises(EnforcementError) as info:
        enforcement.publish_record_edital(record, D(2025, 3, 10))
    assert info.value.code == "individual_first"

    enforcement.register_record_failure(
        record, REFUSED, record.drawn_up_at, "Recusou-se a receber a cópia do auto."
    )
    record.refresh_from_db()
    assert record.delivered_on is None  # the copy was not handed over: no appeal runs yet
    assert "file_appeal" not in names(record)
    assert "publish_record_edital" in names(record)
    record = enforcement.publish_record_edital(record, D(2025, 3, 14))  # a Friday
    assert record.delivery_method == DeliveryMethod.PUBLIC_NOTICE
    # Day 1 is Monday 17/03, day 30 is Tuesday 15/04 (Lei 3.190/2013 art. 13).
    assert enforcement.appeal_last_day(record) == D(2025, 4, 15)
    assert "file_appeal" in names(record)


def test_after_a_returned_ar_the_record_goes_by_edital(world):
    record = record_by(world, DeliveryMethod.MAIL)
    enforcement.register_record_failure(
        record, RETURNED, record.drawn_up_at + 48 * HOUR, "Endereço inexistente."
    )
    assert "publish_record_edital" in names(record)
    record = enforcement.publish_record_edital(record, D(2025, 3, 12))
    assert enforcement.appeal_last_day(record) == D(2025, 4, 11)


# --- the edital's count: "a partir do primeiro dia útil da publicação" (art. 28 §2) -----------


def edital_due(world, published: datetime.date) -> datetime.datetime:
    notice = notice_by(world, DeliveryMethod.HAND)
    enforcement.register_notice_failure(notice, NOT_FOUND, at(2025, 3, 3, 11), "Ausente.")
    return enforcement.notice_due(enforcement.publish_notice_edital(notice, published))


def test_edital_published_on_a_working_day_counts_from_the_next_one(world):
    # Wednesday 12/03/2025: day 1 is Thursday 13/03; the 72 hours end with Saturday 15/03.
    assert edital_due(world, D(2025, 3, 12)) == at(2025, 3, 16, 0, 0)


def test_edital_published_on_a_friday_counts_from_monday(world):
    # Friday 14/03/2025: day 1 is Monday 17/03; the 72 hours end with Wednesday 19/03.
    assert edital_due(world, D(2025, 3, 14)) == at(2025, 3, 20, 0, 0)


def test_edital_published_before_a_municipal_holiday_counts_from_the_next_working_day(world):
    # Thursday 12/06/2025; Friday 13/06 is the municipality's own holiday (Santo Antônio): day 1
    # is Monday 16/06 and the 72 hours end with Wednesday 18/06.
    MunicipalHoliday.objects.create(
        municipality=world.town, day=D(2025, 6, 13), yearly=True, name="Santo Antônio"
    )
    assert edital_due(world, D(2025, 6, 12)) == at(2025, 6, 19, 0, 0)


# --- 72 hours from the hour of receipt (art. 28 §1) -------------------------------------------


def test_by_hand_the_72_hours_run_from_the_hour_on_the_receipt(world):
    notice = notice_by(world, DeliveryMethod.HAND)
    notice = enforcement.register_notice_delivery(notice, at(2025, 3, 3, 16, 37))
    assert enforcement.notice_due(notice) == at(2025, 3, 6, 16, 37)


def test_handed_over_after_a_failed_attempt_the_72_hours_run_from_the_hand_over(world):
    # Not found in the morning, handed over in the afternoon: the receipt's hour counts.
    notice = notice_by(world, DeliveryMethod.HAND)
    enforcement.register_notice_failure(notice, NOT_FOUND, at(2025, 3, 3, 11), "Ausente.")
    notice = enforcement.register_notice_delivery(notice, at(2025, 3, 3, 17, 5))
    assert enforcement.notice_due(notice) == at(2025, 3, 6, 17, 5)
    assert "publish_notice_edital" not in names(notice)


def test_by_mail_the_72_hours_run_from_the_ar_date_and_hour(world):
    notice = notice_by(world, DeliveryMethod.MAIL)
    notice = enforcement.register_notice_delivery(notice, at(2025, 3, 5, 15, 20))
    assert enforcement.notice_due(notice) == at(2025, 3, 8, 15, 20)


# --- the pages ----------------------------------------------------------------------------------


def test_the_inspector_records_a_returned_ar_then_publishes_the_edital(world):
    notice = notice_by(world, DeliveryMethod.MAIL)
    web = Client()
    web.force_login(world.fiscal)
    case_page = reverse("enforcement:case-detail", args=[notice.case_id])
    failure_page = reverse("enforcement:notice-failure", args=[notice.pk])
    edital_page = reverse("enforcement:notice-edital", args=[notice.pk])
    page = web.get(case_page).content.decode()
    assert failure_page in page and edital_page not in page

    # By mail the AR's hour is asked for: the 72 hours run from it.
    delivery = reverse("enforcement:notice-delivery", args=[notice.pk])
    answer = web.post(delivery, {"delivered_date": "2025-03-05"})
    assert "Informe a hora da entrega escrita no AR." in answer.content.decode()

    answer = web.post(
        failure_page,
        {"outcome": "RETURNED", "attempted_at": "2025-03-06T14:00", "reason": "Mudou-se."},
    )
    assert answer.status_code == 302
    page = web.get(case_page).content.decode()
    assert edital_page in page and failure_page not in page
    assert "Entrega frustrada: AR devolvido sem entrega (correio)" in page

    answer = web.post(edital_page, {"published_on": "2025-03-14"}, follow=True)
    assert "Edital registrado: o prazo para reparar vence em 19/03/2025 às 23h59." in (
        answer.content.decode()
    )
    notice.refresh_from_db()
    assert notice.delivery_method == DeliveryMethod.PUBLIC_NOTICE
