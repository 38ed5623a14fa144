"""The end of a CTR's life: received at the destination (with the reception rules), refused by
it, or cancelled by the transporter; one transaction each, one winner under races. And
record_event, the event each action records (the webhooks and the apps above hear it)."""

from __future__ import annotations

import datetime
from decimal import Decimal

from django.contrib.gis.geos import Point
from django.db import transaction
from django.utils import timezone

from . import lifecycle, plausibility, rules, signals
from .errors import CTRError
from .models import CTR, CTREvent


def record_event(
    ctr: CTR,
    actor,
    action: str,
    from_status: str,
    data: dict | None = None,
    at: datetime.datetime | None = None,
):
    event = CTREvent.objects.create(
        ctr=ctr,
        actor=actor,
        action=action,
        from_status=from_status,
        to_status=ctr.status,
        data=data or {},
        at=at or timezone.now(),
    )
    signals.event_recorded.send(sender=CTREvent, event=event)
    return event


def _lock_for(action: str, ctr: CTR) -> CTR:
    """Lock the row and check the action's states (ctr.lifecycle): of two concurrent actions,
    one wins and the other sees the new status."""
    locked = CTR.objects.select_for_update().get(pk=ctr.pk)
    lifecycle.check_state(action, locked)
    return locked


def _close(
    locked: CTR,
    user,
    action: str,
    data: dict,
    at: datetime.datetime | None,
    extra_fields: tuple[str, ...] = (),
) -> CTR:
    """Move a locked CTR to the action's final status and record the event."""
    from_status = locked.status
    locked.status = lifecycle.row(action).to_status
    locked.closed_at = at or timezone.now()
    locked.save(update_fields=["status", "closed_at", *extra_fields])
    record_event(locked, user, action, from_status, data, locked.closed_at)
    return locked


def _reason(reason: str, what: str) -> str:
    if not reason.strip():
        raise CTRError(f"Informe o motivo {what}.", field="reason")
    return reason.strip()


def receive(
    ctr: CTR,
    user,
    received_volume_m3: Decimal,
    location: Point | None = None,
    note: str = "",
    at: datetime.datetime | None = None,
) -> CTR:
    """Confirm arrival at the destination facility (art. 13 sole §). One winner under races."""
    # Art. 13 sole §: the receiver confirms what arrived; not the Núcleo on its behalf.
    lifecycle.check_party("receive", ctr, user)
    if received_volume_m3 <= 0:
        raise CTRError("O volume recebido deve ser maior que zero.", field="received_volume_m3")
    with transaction.atomic():
        locked = _lock_for("receive", ctr)
        at = at or timezone.now()
        # A location away from the facility and an implausible trip are
        # findings for the Núcleo, not a refusal (ctr.plausibility says why).
        # Judged by the set in force on the CTR's transport date (Lei 3.978/2007 art. 13 p.ú.).
        parameters = locked.parameters()
        place, travel = plausibility.reception_facts(locked, location, at, parameters)
        facts = rules.ReceptionFacts(
            declared_m3=locked.total_volume_m3,
            received_m3=received_volume_m3,
            tolerance_pct=parameters.received_volume_tolerance_pct,
            place=place,
            travel=travel,
        )
        reception_findings = rules.evaluate(facts, rules.Stage.RECEPTION)
        locked.received_volume_m3 = received_volume_m3
        locked.received_location = location
        locked.findings = [*locked.findings, *(f.as_dict() for f in reception_findings)]
        data = {
            "received_volume_m3": str(received_volume_m3),
            "location": location.coords if location else None,
            "distance_m": round(place.distance_m, 1) if place else None,
            "note": note,
            "findings": [f.code for f in reception_findings],
        }
        return _close(
            locked,
            user,
            "receive",
            data,
            at,
            ("received_volume_m3", "findings", "received_location"),
        )


def refuse(ctr: CTR, user, reason: str, at: datetime.datetime | None = None) -> CTR:
    """The destination facility refuses the load (it stays the transporter's responsibility)."""
    lifecycle.check_party("refuse", ctr, user)
    reason = _reason(reason, "da recusa")
    with transaction.atomic():
        return _close(_lock_for("refuse", ctr), user, "refuse", {"reason": reason}, at)


def cancel(ctr: CTR, user, reason: str, at: datetime.datetime | None = None) -> CTR:
    """The transporter cancels a CTR before reception; an onward CTR, the one who issued it
    (its volume returns to the facility's stock: ctr.custody.stock counts it no more)."""
    lifecycle.check_party("cancel", ctr, user)
    reason = _reason(reason, "do cancelamento")
    with transaction.atomic():
        return _close(_lock_for("cancel", ctr), user, "cancel", {"reason": reason}, at)
