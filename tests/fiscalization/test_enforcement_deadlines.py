"""Deadlines of the enforcement procedure at their boundaries (fiscalization.deadlines), under
Guaratinguetá's framework: 72 hours by hand, by mail and by public notice (art. 28), 30 days to
appeal (Lei 3.190/2013 art. 13), 30 days to pay (art. 36), 15 days of suspension (art. 25 IV).
The other frameworks' deadlines: test_penalty_frameworks.py."""

import datetime

import pytest

from fiscalization import deadlines
from fiscalization.deadlines import HAND, MAIL, PUBLIC_NOTICE, WorkCalendar
from tests.enforcement_world import D, at, fixture_framework

MINUTE = datetime.timedelta(minutes=1)
GUARA = fixture_framework()  # Lei 3.978/2007, Guaratinguetá's framework
CAL = WorkCalendar()


# --- 72 hours to repair (art. 28 §1) ----------------------------------------------------------


def test_by_hand_at_ten_is_due_three_days_later_at_ten():
    receipt = deadlines.presumed_receipt(HAND, at(2025, 3, 10, 10, 0), CAL, GUARA)
    due = deadlines.repair_deadline(receipt, GUARA)
    assert due == at(2025, 3, 13, 10, 0)
    assert deadlines.repaired_in_time(receipt, at(2025, 3, 13, 10, 0), GUARA)
    assert not deadlines.repaired_in_time(receipt, at(2025, 3, 13, 10, 0) + MINUTE, GUARA)


def test_by_hand_needs_the_hour_of_the_receipt():
    with pytest.raises(ValueError, match="A entrega pessoal exige data e hora do recibo."):
        deadlines.presumed_receipt(HAND, D(2025, 3, 10), CAL, GUARA)


def test_by_mail_the_72_hours_run_from_the_ar_date_and_hour():
    # The AR says delivered Monday 10/03 at 15:20: due Thursday 13/03 at 15:20 (art. 28 §1).
    receipt = deadlines.presumed_receipt(MAIL, at(2025, 3, 10, 15, 20), CAL, GUARA)
    assert receipt.receipt_day == D(2025, 3, 10)
    due = deadlines.repair_deadline(receipt, GUARA)
    assert due == at(2025, 3, 13, 15, 20)
    assert deadlines.repaired_in_time(receipt, at(2025, 3, 13, 15, 20), GUARA)
    assert not deadlines.repaired_in_time(receipt, at(2025, 3, 13, 15, 21), GUARA)
    assert deadlines.br_deadline(due) == "13/03/2025 às 15h20"


def test_by_mail_needs_the_hour_of_the_ar():
    with pytest.raises(ValueError, match="A entrega pelo correio exige data e hora do AR."):
        deadlines.presumed_receipt(MAIL, D(2025, 3, 10), CAL, GUARA)


def test_public_notice_on_friday_before_a_holiday_monday_counts_from_tuesday():
    # Fri 04/09/2026; Mon 07/09 is Independence Day: the first working day after is Tue 08/09.
    receipt = deadlines.presumed_receipt(PUBLIC_NOTICE, at(2026, 9, 4, 12), CAL, GUARA)
    assert receipt.first_day == D(2026, 9, 8)
    assert deadlines.repair_deadline(receipt, GUARA) == at(2026, 9, 11, 0, 0)  # end of Thu 10/09


def test_public_notice_on_an_ordinary_friday_counts_from_monday():
    receipt = deadlines.presumed_receipt(PUBLIC_NOTICE, at(2026, 9, 11, 12), CAL, GUARA)
    assert receipt.first_day == D(2026, 9, 14)


def test_public_notice_on_a_wednesday_counts_from_thursday():
    # "a partir do primeiro dia útil da publicação": the publication day itself is left out.
    receipt = deadlines.presumed_receipt(PUBLIC_NOTICE, at(2026, 9, 16, 12), CAL, GUARA)
    assert receipt.first_day == D(2026, 9, 17)


def test_sao_paulo_state_holiday_is_not_a_working_day():
    # 9 July (Revolução Constitucionalista) is a holiday in SP, not in the rest of Brazil.
    receipt = deadlines.presumed_receipt(PUBLIC_NOTICE, at(2025, 7, 8, 12), CAL, GUARA)
    assert receipt.first_day == D(2025, 7, 10)
    rio = WorkCalendar(subdivision="RJ")
    assert rio.is_working_day(D(2025, 7, 9))


def test_municipal_holiday_pushes_the_first_working_day():
    calendar = WorkCalendar.with_holidays(dates=[D(2026, 9, 8)])
    receipt = deadlines.presumed_receipt(PUBLIC_NOTICE, at(2026, 9, 4, 12), calendar, GUARA)
    assert receipt.first_day == D(2026, 9, 9)


def test_yearly_municipal_holiday_repeats():
    calendar = WorkCalendar.with_holidays(yearly=[(6, 13)])
    assert not calendar.is_working_day(D(2025, 6, 13))  # a Friday
    assert not calendar.is_working_day(D(2029, 6, 13))  # a Wednesday
    assert calendar.is_working_day(D(2029, 6, 14))


# --- 30 days to appeal (Lei 3.190/2013 art. 13) -----------------------------------------------


def test_appeal_on_day_30_is_in_time_and_on_day_31_is_not():
    receipt = deadlines.presumed_receipt(HAND, at(2025, 3, 10, 15), CAL, GUARA)
    assert deadlines.appeal_last_day(receipt, GUARA, CAL) == D(2025, 4, 9)
    assert deadlines.appeal_in_time(receipt, D(2025, 4, 9), GUARA, CAL)
    assert not deadlines.appeal_in_time(receipt, D(2025, 4, 10), GUARA, CAL)


def test_appeal_by_mail_counts_from_the_ar_date():
    receipt = deadlines.presumed_receipt(MAIL, at(2025, 3, 20, 12), CAL, GUARA)
    assert deadlines.appeal_last_day(receipt, GUARA, CAL) == D(2025, 4, 19)


def test_appeal_after_public_notice_counts_from_the_first_working_day():
    receipt = deadlines.presumed_receipt(PUBLIC_NOTICE, at(2026, 9, 4, 12), CAL, GUARA)
    # Day 1 is Tue 08/09, day 30 is Wed 07/10.
    assert deadlines.appeal_last_day(receipt, GUARA, CAL) == D(2026, 10, 7)


def test_appeal_ending_on_a_sunday_is_not_extended():
    # Calendar days ("dias corridos"): a last day on a Sunday stays a Sunday.
    receipt = deadlines.presumed_receipt(HAND, at(2025, 3, 2, 10), CAL, GUARA)
    assert deadlines.appeal_last_day(receipt, GUARA, CAL) == D(2025, 4, 1)
    receipt = deadlines.presumed_receipt(HAND, at(2025, 3, 7, 10), CAL, GUARA)
    assert deadlines.appeal_last_day(receipt, GUARA, CAL).weekday() == 6


# --- 30 days to pay (art. 36) -----------------------------------------------------------------


def pay_by(drawn, upheld_on=None, framework=None):
    facts = deadlines.PaymentFacts(drawn_up=drawn, upheld_on=upheld_on)
    return deadlines.payment_last_day(facts, framework or GUARA, CAL)


def test_payment_on_day_30_is_on_time_and_on_day_31_is_late():
    drawn = at(2025, 1, 15, 14)
    assert pay_by(drawn) == D(2025, 2, 14)  # Lei 3.978/2007 art. 36: 30 days of the record


def test_payment_counts_from_the_local_day_of_the_record():
    # 23:30 in São Paulo is already the next day in UTC: the record's day is the local one.
    drawn = at(2025, 1, 15, 23, 30)
    assert drawn.astimezone(datetime.UTC).date() == D(2025, 1, 16)
    assert pay_by(drawn) == D(2025, 2, 14)


def test_payment_after_an_upheld_appeal_counts_30_working_days_from_the_decision():
    # Lei 3.978/2007 is silent after an appeal; Guaratinguetá's framework follows Lei
    # 3.190/2013 art. 15: 30 *working* days from the final decision (Sat 01/03/2025). Day 1 is
    # Mon 03/03 (Carnival is no holiday), day 30 is Fri 11/04 — not the 31/03 of 30 calendar
    # days the procedure once counted.
    drawn = at(2025, 1, 15, 14)
    assert pay_by(drawn, upheld_on=D(2025, 3, 1)) == D(2025, 4, 11)
    # Never fewer days than from the record: with 5 working days after a decision of 20/01
    # (due 27/01) the 30 days of the record (14/02) still hold.
    short = fixture_framework()
    short.post_appeal_payment_days = 5
    assert pay_by(drawn, upheld_on=D(2025, 1, 20), framework=short) == D(2025, 2, 14)


# --- suspension (art. 25 IV) ------------------------------------------------------------------


def test_suspension_of_15_days_ends_on_the_15th_day():
    assert deadlines.suspension_end(D(2025, 5, 1), 15) == D(2025, 5, 15)
    assert deadlines.suspension_days(D(2025, 5, 1), D(2025, 5, 15)) == 15
    assert deadlines.suspension_end(D(2025, 5, 1), 1) == D(2025, 5, 1)


def test_deadline_with_hour_reads_with_the_hour():
    assert deadlines.br_deadline(at(2025, 3, 13, 10, 0)) == "13/03/2025 às 10h00"
