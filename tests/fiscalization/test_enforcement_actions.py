"""The table of what may happen next in a case (fiscalization/enforcement/actions.py): every row
is complete, and the services' guards, the case page's buttons and the timeline's hints all
read the same row."""

from __future__ import annotations

import dataclasses
import datetime
import inspect

import pytest
from django.test import Client
from django.urls import resolve, reverse

from fiscalization import enforcement
from fiscalization.enforcement import ACTIONS, EnforcementError, action_row
from fiscalization.enforcement_forms import STEP_FORMS
from fiscalization.enforcement_forms.fields import StepForm
from fiscalization.models.enforcement import CaseStatus, ChargeStatus, PenaltyKind, RecordStatus
from tests.ctr_world import build_world
from tests.enforcement_world import D, record_for

pytestmark = pytest.mark.django_db

# Every state of each kind of subject (a notice's state is its case's).
STATES = {
    action_row.CASE: set(CaseStatus.values),
    action_row.NOTICE: set(CaseStatus.values),
    action_row.RECORD: set(RecordStatus.values),
    action_row.PENALTY: set(PenaltyKind.values),
    action_row.CHARGE: set(ChargeStatus.values),
}


@pytest.fixture
def world():
    return build_world()


def names(rows) -> list[str]:
    return [row.name for row in rows]


def conditions_of(action: action_row.Action) -> list[str]:
    named = [*action.refused_if, *action.offered_if, *action.page_if]
    named += [condition for condition, _ in action.relabel]
    if isinstance(action.primary, str):
        named.append(action.primary)
    return [c.removeprefix("not ") for c in named]


@pytest.mark.parametrize("name", list(ACTIONS))
def test_every_state_a_step_is_refused_in_has_its_portuguese_refusal(name):
    action = ACTIONS[name]
    if action.allowed_from is action_row.ANY:
        return
    assert action.allowed_from <= STATES[action.subject]
    for state in STATES[action.subject] - action.allowed_from:
        message, code = action.refused_in.get(state, (action.refusal, action.code))
        assert message and code, (name, state)


@pytest.mark.parametrize("name", list(ACTIONS))
def test_every_step_names_known_conditions_a_button_and_a_url(name):
    action = ACTIONS[name]
    assert set(conditions_of(action)) <= set(action_row.CONDITIONS), name
    assert action.label and action.who in ("municipal",)
    assert enforcement.for_url(action.url, *action.url_args) is action
    reverse(action.url, args=[1, *action.url_args])


@pytest.mark.parametrize("name", [n for n, a in ACTIONS.items() if a.path])
def test_every_step_page_has_its_service_and_its_form(name):
    action = ACTIONS[name]
    service = getattr(enforcement, action.name)
    parameters = list(inspect.signature(service).parameters)
    assert parameters[0] == action.subject  # the subject first, then the form's arguments
    form = STEP_FORMS[action.form]
    assert issubclass(form, StepForm)
    if form.arguments is StepForm.arguments:
        assert set(form.base_fields) <= set(parameters[1:]), (name, form.base_fields)
    match = resolve(reverse(action.url, args=[1, *action.url_args]))
    assert match.url_name == action.url.removeprefix("enforcement:")


def test_a_paid_record_offers_no_payment_and_the_service_refuses_in_the_tables_words(world):
    record = record_for(world)
    record = enforcement.register_payment(record, D(2025, 3, 20))
    assert "register_payment" not in names(enforcement.offered(record))
    assert names(enforcement.offered(record))[0] == "print_record"
    with pytest.raises(EnforcementError) as info:
        enforcement.register_payment(record, D(2025, 3, 21))
    refusal = ACTIONS["register_payment"].refusal.format(status="Pago")
    assert (info.value.message, info.value.code) == (refusal, "status")


def test_one_row_decides_the_guard_the_button_and_the_hint(world, monkeypatch):
    record = record_for(world)  # delivered by hand when drawn up: the appeal may come
    next_day = record.drawn_up_at + datetime.timedelta(days=1)
    client = Client()
    client.force_login(world.fiscal)
    case_page = reverse("enforcement:case-detail", args=[record.case_id])
    appeal_page = reverse("enforcement:appeal-new", args=[record.pk])

    def hints() -> list[str]:
        return enforcement.case_timeline(record.case, next_day).next_due

    assert "file_appeal" in names(enforcement.offered(record))
    assert appeal_page in client.get(case_page).content.decode()
    assert any(h.startswith("Prazo de recurso até") for h in hints())

    closed = dataclasses.replace(ACTIONS["file_appeal"], allowed_from=frozenset())
    monkeypatch.setitem(ACTIONS, "file_appeal", closed)

    assert "file_appeal" not in names(enforcement.offered(record))
    assert appeal_page not in client.get(case_page).content.decode()
    assert not any(h.startswith("Prazo de recurso até") for h in hints())
    with pytest.raises(EnforcementError, match="O auto está “Lavrado”: não cabe recurso."):
        enforcement.file_appeal(record, D(2025, 3, 7), "Razões.")
