"""E-mail for the people without a system of their own, through the same
outbox as the webhooks: a row of kind "email" written in the event's transaction, sent by the
worker with config.mail's conventions (plain text from a template, subject without personal
data, absolute links), retried like a webhook when the mail server refuses it.

Who gets what:
- a refused load: the transporter's users (art. 13 sole §: the receiver refused it);
- a correction to decide: the counterpart of whoever proposed it (the event's data names who
  decides, `decider`; without it, a proposal by the transporter goes to the facility's
  operators and any other to the transporter's users);
- a citizen's dumping report changing status: the reporter, when the contact they left is an
  e-mail address (fiscalization.signals.report_status_changed)."""

from __future__ import annotations

import datetime

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.urls import reverse

from config.letterhead import PLATFORM, Letterhead
from config.mail import absolute
from ctr import roles
from ctr.models import CTRAction
from fiscalization.models import ReporterKind
from jurisdiction.scope import staff_of
from pev_network.letterhead import letterhead_by_id

from .models import Delivery, DeliveryKind

# The key of an e-mail row's context that holds its letterhead (webhooks.delivery reads it).
LETTERHEAD_KEY = "letterhead"

# Keys of a correction_proposed event's data that may name who decides (the corrections part
# writes the event): "transporter", "facility" or "nucleo".
DECIDER_KEYS = ("decides", "decider", "counterpart", "decided_by")
# The corrections part names the Núcleo "management" (ctr.models.CorrectionSide).
DECIDER_ALIASES = {"management": "nucleo"}


def _queue(
    kind: str,
    to: list[str],
    subject: str,
    template: str,
    context: dict,
    at,
    ctr=None,
    letterhead: Letterhead = PLATFORM,
):
    to = sorted({address for address in to if address})
    if not to:
        return None
    # Signed by the municipality it belongs to, kept with the row: the
    # worker sends it later, as it was written.
    context = {**context, LETTERHEAD_KEY: letterhead.as_dict()}
    return Delivery.objects.create(
        kind=DeliveryKind.EMAIL,
        event_type=kind,
        ctr=ctr,
        ctr_status=ctr.status if ctr is not None else "",
        occurred_at=at,
        recipients=to,
        subject=subject,
        template=template,
        context=context,
        next_attempt_at=at,
        created_at=at,
    )


def _emails(**membership) -> list[str]:
    """The addresses of a side's people (`transporter_id=`, `facility_id=`), or of the Núcleo
    of a municipality (`nucleo=<municipality id>`): only its own."""
    users = get_user_model().objects.filter(is_active=True).exclude(email="")
    if "nucleo" in membership:
        users = staff_of(membership["nucleo"], [roles.NUCLEO]).exclude(email="")
    else:
        users = users.filter(**{f"membership__{k}": v for k, v in membership.items()})
    return list(users.values_list("email", flat=True))


def _decider(event) -> str:
    data = event.data or {}
    for key in DECIDER_KEYS:
        value = DECIDER_ALIASES.get(data.get(key), data.get(key))
        if value in ("transporter", "facility", "nucleo"):
            return value
    # Without it: a proposal by the CTR's transporter is the facility's to decide.
    proposer = roles.transporter_of(event.actor)
    by_transporter = proposer is not None and proposer.pk == event.ctr.transporter_id
    return "facility" if by_transporter else "transporter"


def on_event_recorded(sender, event, **kwargs) -> None:
    """ctr.signals.event_recorded: the e-mails some CTR events owe to people."""
    if event.action == CTRAction.REFUSE:
        ctr = event.ctr
        _queue(
            "email.ctr_refused",
            _emails(transporter_id=ctr.transporter_id),
            f"{ctr.number} recusado na área de destino",
            "webhooks/email/ctr_refused.txt",
            {
                "number": ctr.number,
                "facility": ctr.destination_facility.name,
                "reason": (event.data or {}).get("reason", ""),
                "link": absolute(reverse("ctr_web:ctr-detail", args=[ctr.number])),
            },
            event.at,
            ctr,
            letterhead_by_id(ctr.municipality_id),
        )
    elif event.action == CTRAction.CORRECTION_PROPOSED:
        ctr = event.ctr
        decider = _decider(event)
        if decider == "facility":
            to, link = _emails(facility_id=ctr.destination_facility_id), "ctr_web:receptions"
            link = absolute(reverse(link))
        elif decider == "nucleo":
            to, link = _emails(nucleo=ctr.municipality_id), absolute("/")
        else:
            to = _emails(transporter_id=ctr.transporter_id)
            link = absolute(reverse("ctr_web:ctr-detail", args=[ctr.number]))
        _queue(
            "email.correction_proposed",
            to,
            f"Correção do {ctr.number} aguarda a sua decisão",
            "webhooks/email/correction_proposed.txt",
            {"number": ctr.number, "reason": (event.data or {}).get("reason", ""), "link": link},
            event.at,
            ctr,
            letterhead_by_id(ctr.municipality_id),
        )


def contact_email(report) -> str | None:
    """The e-mail address a citizen left as contact, if what they left is one."""
    if report.reporter_kind != ReporterKind.CITIZEN:
        return None
    contact = (report.contact or "").strip()
    try:
        validate_email(contact)
    except ValidationError:
        return None
    return contact


def on_report_status_changed(sender, report, from_status, to_status, at=None, **kwargs):
    """fiscalization.signals.report_status_changed: tell the citizen who left an e-mail."""
    address = contact_email(report)
    if address is None:
        return
    labels = dict(report.Status.choices)
    _queue(
        "email.report_status",
        [address],
        "Sua denúncia de descarte irregular mudou de situação",
        "webhooks/email/report_status.txt",
        {
            "protocol": report.protocol,
            "status": labels.get(to_status, to_status),
            "previous": labels.get(from_status, from_status),
            "link": absolute(reverse("intake:follow", args=[report.protocol])),
        },
        at or datetime.datetime.now(datetime.UTC),
        letterhead=letterhead_by_id(report.municipality_id),
    )
