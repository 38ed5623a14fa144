"""The CTR's actions as one table (ctr/lifecycle.py): every row whole, and a row edited moves
the service's guard, the CTR page's button and the webhook event together."""

from __future__ import annotations

import dataclasses

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from ctr import closing, lifecycle
from ctr.errors import TransitionNotAllowed
from ctr.models import CorrectionStatus, CTRAction, CTRStatus
from tests.ctr_world import build_world, issue_hours_ago
from webhooks import outbox
from webhooks import services as webhooks
from webhooks.models import Delivery

EMPTY = {
    "label": "",
    "participle": " ",
    "button": "",
    "who": "someone",
    "refusal": "",
    "allowed_from": frozenset({"lost"}),
    "state_refusal": "",
    "to_status": "gone",
    "event": lifecycle.Event("issued", ""),
    "onward_event": lifecycle.Event("ctr.x", " "),
    "correction_from": {CorrectionStatus.PROPOSED: "anyone"},
}


def test_every_action_of_the_history_has_one_whole_row():
    assert set(lifecycle.ACTIONS) == set(CTRAction.values)
    for name, action in lifecycle.ACTIONS.items():
        assert action.name == name
        assert lifecycle.missing(action) == [], name
        # The refusals format with what the guard gives them.
        if action.allowed_from:
            assert "{" not in lifecycle.state_refusal(name, _ctr_in("cancelled")).message


@pytest.mark.parametrize("field", sorted(EMPTY))
def test_a_row_missing_a_field_is_incomplete(field):
    row = lifecycle.ACTIONS[CTRAction.CANCEL]
    assert field in lifecycle.missing(dataclasses.replace(row, **{field: EMPTY[field]}))


def test_every_field_is_checked_or_explicitly_optional():
    """A field added to the rows is either among those the check reads or said optional."""
    optional = {"name", "code", "onward_refusal"}
    fields = {f.name for f in dataclasses.fields(lifecycle.Action)}
    assert fields == set(EMPTY) | optional


def _ctr_in(status: str):
    from ctr.models import CTR

    return CTR(number="CTR-X", status=status)


@pytest.mark.django_db
def test_editing_a_row_moves_guard_button_and_event_together(frozen_today, monkeypatch):
    """Cancel, edited to be allowed from a received CTR too, with another button and another
    event: the service cancels a received CTR, the CTR's page offers the new button, and an
    endpoint that hears the new event gets a row in the outbox, none for the old one."""
    world = build_world()
    received = issue_hours_ago(world, 2)
    closing.receive(received, world.operator, received.total_volume_m3)
    page = f"/transportador/ctrs/{received.number}/"
    client = Client()
    client.force_login(get_user_model().objects.get(pk=world.alfa_user.pk))
    before = client.get(page).content.decode()
    assert ">Cancelar o CTR</button>" not in before and ">Anular o CTR</button>" not in before
    with pytest.raises(TransitionNotAllowed):
        closing.cancel(received, world.alfa_user, "erro de digitação")

    # An endpoint that heard cancellations before the edit hears nothing of it after.
    webhooks.register(world.alfa_user, "https://erp.alfa.example.com/old", ["ctr.cancelled"])
    row = lifecycle.ACTIONS[CTRAction.CANCEL]
    edited = dataclasses.replace(
        row,
        allowed_from=frozenset({CTRStatus.ISSUED, CTRStatus.RECEIVED}),
        button="Anular o CTR",
        event=lifecycle.Event("ctr.annulled", "CTR anulado"),
    )
    monkeypatch.setitem(lifecycle.ACTIONS, CTRAction.CANCEL, edited)
    outbox.subscriptions.clear()
    webhooks.register(world.alfa_user, "https://erp.alfa.example.com/ctr", ["ctr.annulled"])

    after = client.get(page).content.decode()
    assert ">Anular o CTR</button>" in after and ">Cancelar o CTR</button>" not in after
    closing.cancel(received, world.alfa_user, "erro de digitação")
    received.refresh_from_db()
    assert received.status == CTRStatus.CANCELLED
    event = received.events.get(action=CTRAction.CANCEL)
    assert (event.from_status, event.to_status) == (CTRStatus.RECEIVED, CTRStatus.CANCELLED)
    assert list(Delivery.objects.values_list("event_type", "endpoint__url")) == [
        ("ctr.annulled", "https://erp.alfa.example.com/ctr")
    ]
    outbox.subscriptions.clear()
