"""Races in the enforcement procedure, with real concurrent database connections: five
inspectors assessing the same embargo's daily fines at once make one charge, and every day of
breach is charged once (art. 31); the others are told there is nothing left to charge."""

import html
from decimal import Decimal

import pytest
import requests
from django.conf import settings
from django.db import connection
from django.test import Client
from django.urls import reverse

from ctr import roles
from fiscalization import enforcement
from fiscalization.models.enforcement import (
    ChargeStatus,
    EmbargoBreach,
    EmbargoFineCharge,
    RecordStatus,
)
from pev_network.models import FiscalUnit, UfespRate
from tests.ctr.test_ctr_races import all_at_once
from tests.ctr_world import build_world, make_user
from tests.enforcement_world import D, at, ensure_frameworks, record_for
from tests.races import both_while_held

pytestmark = pytest.mark.django_db(transaction=True)


def test_five_concurrent_assessments_make_one_charge():
    ensure_frameworks()
    world = build_world()
    record = record_for(world, codes=("INF-01",))
    embargo = enforcement.apply_embargo(
        record, D(2025, 3, 10), "Obra da Rua A, 1", by=world.authority
    )
    for day in (D(2025, 3, 11), D(2025, 3, 12), D(2025, 3, 14)):
        enforcement.register_embargo_breach(embargo, day)

    def assess(_):
        try:
            return enforcement.assess_embargo_fine(embargo, D(2025, 3, 20)).pk
        except enforcement.EnforcementError as error:
            return error.code
        finally:
            connection.close()

    results = all_at_once(5, assess)
    charges = list(EmbargoFineCharge.objects.filter(penalty=embargo))
    assert len(charges) == 1
    assert charges[0].amount_ufesp == Decimal("3")  # one UFESP a day (art. 31)
    assert sorted(map(str, results)) == sorted([str(charges[0].pk)] + ["no_breach"] * 4)
    assert set(EmbargoBreach.objects.filter(penalty=embargo).values_list("charge", flat=True)) == {
        charges[0].pk
    }


# --- one act twice at once --------------------------------------------------------------------
#
# Deterministic, with no sleep deciding the order (tests/races.py): the test holds the row's
# lock itself while it starts the two callers, and lets go only once both are blocked on it. A
# service that locks the row (select_for_update) and checks the state after the lock runs one
# act, then the other re-reads the row and is refused; one that reads the row unlocked lets both
# pass their checks before either writes, and both are done (the test fails).


def outcome(call):
    try:
        call()
        return "done"
    except enforcement.EnforcementError as error:
        return error.code


@pytest.fixture
def world(frozen_today):
    ensure_frameworks()
    UfespRate.objects.get_or_create(
        unit=FiscalUnit.UFESP, year=2025, defaults={"value_brl": Decimal("37.02")}
    )
    world = build_world()
    world.second_authority = make_user("autoridade2", roles.AUTORIDADE, world.town)
    return world


def test_two_authorities_applying_one_fine_at_once_apply_it_once(world):
    """Lei 3.978/2007 art. 35: one act of the authority; the other is told it is done."""
    record = record_for(world, applied=False)
    authorities = (world.authority, world.second_authority)
    results = both_while_held(
        record,
        lambda i: outcome(
            lambda: enforcement.apply_fine(record, at(2025, 3, 10, 9), by=authorities[i])
        ),
    )
    assert sorted(results) == ["done", "fine_applied"], results
    record.refresh_from_db()
    winner = authorities[results.index("done")]
    assert record.fine_applied_by == winner


def test_one_payment_recorded_twice_at_once_is_counted_once(world):
    """Lei 3.978/2007 art. 36: the treasury's one guia, recorded from two screens at once."""
    record = record_for(world)
    due = (record.total_ufesp * Decimal("37.02")).quantize(Decimal("0.01"))
    results = both_while_held(
        record,
        lambda i: outcome(
            lambda: enforcement.register_payment(
                record, D(2025, 3, 20), due, f"DAM-{i}", by=world.fiscal
            )
        ),
    )
    assert sorted(results) == ["done", "status"], results
    record.refresh_from_db()
    assert record.status == RecordStatus.PAID
    assert record.paid_brl == due
    assert record.payment_guide == f"DAM-{results.index('done')}"


def test_two_partial_payments_recorded_at_once_are_both_counted(world):
    """Two halves at once: the second sees what the first left (no payment lost)."""
    record = record_for(world)
    due = (record.total_ufesp * Decimal("37.02")).quantize(Decimal("0.01"))
    half = (due / 2).quantize(Decimal("0.01"))
    results = both_while_held(
        record,
        lambda i: outcome(
            lambda: enforcement.register_payment(
                record, D(2025, 3, 20), half if i == 0 else due - half, f"DAM-{i}", by=world.fiscal
            )
        ),
    )
    assert results == ["done", "done"]
    record.refresh_from_db()
    assert record.paid_brl == due
    assert record.status == RecordStatus.PAID
    assert sorted(record.payment_guide.split("; ")) == ["DAM-0", "DAM-1"]


def test_one_daily_fine_payment_recorded_twice_at_once_is_counted_once(world):
    """Art. 31, art. 36: the embargo's daily fines, as the record's fine."""
    record = record_for(world)
    embargo = enforcement.apply_embargo(
        record, D(2025, 3, 10), "Obra da Rua A, 1", by=world.authority
    )
    enforcement.register_embargo_breach(embargo, D(2025, 3, 11))
    charge = enforcement.assess_embargo_fine(embargo, D(2025, 3, 12))
    results = both_while_held(
        charge,
        lambda i: outcome(
            lambda: enforcement.register_charge_payment(
                charge, D(2025, 3, 20), Decimal("37.02"), f"DAM-{i}", by=world.fiscal
            )
        ),
    )
    assert sorted(results) == ["done", "status"], results
    charge.refresh_from_db()
    assert charge.status == ChargeStatus.PAID
    assert charge.paid_brl == Decimal("37.02")


# --- the same through the pages, over HTTP: a clear message, never a 500 ---------------------


def signed_in(live_server, user, path: str) -> requests.Session:
    """An HTTP session of `user` on the live server, with its CSRF cookie from `path`."""
    client = Client()
    client.force_login(user)
    session = requests.Session()
    session.cookies.set(
        settings.SESSION_COOKIE_NAME, client.cookies[settings.SESSION_COOKIE_NAME].value
    )
    assert session.get(live_server.url + path, timeout=60).status_code == 200
    return session


def post_form(session: requests.Session, url: str, data: dict) -> tuple[int, str]:
    token = session.cookies[settings.CSRF_COOKIE_NAME]
    response = session.post(
        url,
        {**data, "csrfmiddlewaretoken": token},
        headers={"Referer": url},
        allow_redirects=False,
        timeout=60,
    )
    return response.status_code, response.text


def test_two_authorities_applying_from_the_queue_at_once_one_is_told_it_is_done(world, live_server):
    record = record_for(world, applied=False)
    path = reverse("enforcement:records-awaiting")
    sessions = [signed_in(live_server, u, path) for u in (world.authority, world.second_authority)]
    results = both_while_held(
        record, lambda i: post_form(sessions[i], live_server.url + path, {"record": record.pk})
    )
    assert sorted(status for status, _ in results) == [302, 400], results
    refused = next(body for status, body in results if status == 400)
    assert f"Auto {record.number}: A multa deste auto já foi aplicada." in html.unescape(refused)
    record.refresh_from_db()
    assert record.fine_applied_at is not None


def test_one_payment_sent_twice_from_the_page_at_once_one_is_told_it_is_paid(world, live_server):
    record = record_for(world)
    path = reverse("enforcement:payment", args=[record.pk])
    sessions = [signed_in(live_server, world.fiscal, path) for _ in range(2)]
    due = (record.total_ufesp * Decimal("37.02")).quantize(Decimal("0.01"))
    form = {"paid_on": "2025-03-20", "amount_brl": str(due).replace(".", ","), "guide": "DAM-7"}
    results = both_while_held(
        record, lambda i: post_form(sessions[i], live_server.url + path, form)
    )
    assert sorted(status for status, _ in results) == [302, 400], results
    refused = next(body for status, body in results if status == 400)
    assert "não cabe registrar pagamento" in html.unescape(refused)
    record.refresh_from_db()
    assert (record.status, record.paid_brl, record.payment_guide) == (
        RecordStatus.PAID,
        due,
        "DAM-7",
    )
