"""The generator's confirmation of a CTR's departure, and the CTRs left
unconfirmed past the municipality's hours.

Optional, per municipality (`MunicipalParameters.generator_confirmation_required`, off by
default): Lei 3.978/2007 does not require it. The CTR is the transporter's document (art. 3
VI), and the transporter proves the destination to whoever hired it (art. 13 p.ú.); no article
asks the generator to confirm anything. São Paulo's SIGOR has the generator fill in or accept
each CTR, and a municipality that wants the same check (a transporter cannot then declare a
load in a generator's name behind its back) turns it on.

What is confirmed is a load leaving a worksite: an onward CTR (sorted waste leaving an ATT or a
PEV) is issued by the facility's operator itself, so it has nothing to confirm, and a cancelled
CTR carried nothing. A received or refused CTR may still be confirmed: the load did leave.

Whether a CTR asks for the confirmation, and in how many hours, is the municipality's set of
parameters in force on the CTR's transport date: a set that starts later (turning it on, or
changing the hours) asks nothing more of the loads of the days before it.

Services: no request objects; one transaction each; refusals are `ConfirmationRefused` (409)
or `ctr.errors.NotAllowed` (403), with nothing written.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F, OuterRef, QuerySet
from django.urls import reverse
from django.utils import timezone

from config import mail
from config.br import br_datetime
from config.letterhead import PLATFORM
from ctr import alerts, closing, errors, lifecycle, roles
from ctr.models import CTR, CTRAction, Membership
from jurisdiction.scope import staff_of
from pev_network.letterhead import common_letterhead, letterheads
from pev_network.models import parameter_on

from .models import UnconfirmedDepartureNotice


class ConfirmationRefused(errors.CTRError):
    """The CTR is not one whose departure can be confirmed now."""

    status = 409
    code = "confirmation"


def _required(ctr: CTR) -> bool:
    return ctr.municipality.parameters_on(ctr.transport_date).generator_confirmation_required


def needs_confirmation(ctr: CTR) -> bool:
    """Whether the generator may still confirm this CTR's departure (what the page offers)."""
    return (
        not ctr.is_onward
        and _required(ctr)
        and lifecycle.in_state(CTRAction.CONFIRM_DEPARTURE, ctr)
        and ctr.generator_confirmed_at is None
    )


def _refusal(ctr: CTR) -> ConfirmationRefused | None:
    if not _required(ctr):
        return ConfirmationRefused(
            f"O município {ctr.municipality} não exige a confirmação do gerador para CTRs "
            f"de {ctr.transport_date:%d/%m/%Y}: o {ctr.number} vale sem ela.",
            code="confirmation_not_required",
        )
    if ctr.is_onward:
        return ConfirmationRefused(
            f"O {ctr.number} é um CTR de saída de uma área de recebimento, emitido pelo seu "
            "operador: não há saída de obra a confirmar.",
            code="confirmation_onward",
        )
    if not lifecycle.in_state(CTRAction.CONFIRM_DEPARTURE, ctr):
        return lifecycle.state_refusal(CTRAction.CONFIRM_DEPARTURE, ctr, ConfirmationRefused)
    if ctr.generator_confirmed_at is not None:
        return ConfirmationRefused(
            f"A saída do {ctr.number} já foi confirmada em "
            f"{br_datetime(ctr.generator_confirmed_at)}.",
            code="confirmation_done",
        )
    return None


def confirm_departure(ctr: CTR, user, at: datetime.datetime | None = None) -> CTR:
    """The generator confirms that the CTR's load left its worksite: once, recorded in the
    CTR's history (CTRAction.CONFIRM_DEPARTURE; the status does not change). Of two
    confirmations at once, one wins and the other is told it was done."""
    lifecycle.check_party(CTRAction.CONFIRM_DEPARTURE, ctr, user)
    with transaction.atomic():
        locked = (
            CTR.objects.select_for_update(of=("self",))
            .select_related("municipality")
            .defer("municipality__boundary")
            .get(pk=ctr.pk)
        )
        refusal = _refusal(locked)
        if refusal is not None:
            raise refusal
        locked.generator_confirmed_at = at or timezone.now()
        locked.generator_confirmed_by = user
        locked.save(update_fields=["generator_confirmed_at", "generator_confirmed_by"])
        closing.record_event(
            locked,
            user,
            CTRAction.CONFIRM_DEPARTURE,
            locked.status,
            {},
            locked.generator_confirmed_at,
        )
    return locked


def awaiting(queryset: QuerySet) -> QuerySet:
    """Of `queryset`, the CTRs whose departure the generator may still confirm (the queryset
    form of `needs_confirmation`)."""
    required = parameter_on("generator_confirmation_required", OuterRef("transport_date"))
    return queryset.annotate(confirmation_required=required).filter(
        confirmation_required=True,
        generator_confirmed_at__isnull=True,
        origin_facility__isnull=True,
        status__in=lifecycle.row(CTRAction.CONFIRM_DEPARTURE).allowed_from,
    )


def unconfirmed(queryset: QuerySet | None = None, now: datetime.datetime | None = None) -> QuerySet:
    """CTRs from worksites, not cancelled, whose municipality asks for the generator's
    confirmation and which are still unconfirmed more than its hours after their transport
    began (the later of the issue and the start of the transport day, as OPEN_TOO_LONG counts:
    a CTR issued today for next week is not late yet). Annotated `hours_open`."""
    waiting = awaiting(CTR.objects.all() if queryset is None else queryset).annotate(
        confirmation_hours=parameter_on("generator_confirmation_hours", OuterRef("transport_date"))
    )
    return alerts.with_hours_open(waiting, now).filter(hours_open__gt=F("confirmation_hours"))


# --- telling the Núcleo and the generator (manage.py unconfirmed_ctrs) -----------------------


@dataclass
class Notified:
    """What one run of `notify_unconfirmed` found and sent."""

    ctrs: list[CTR]
    messages: int = 0
    recipients: int = 0


def _addresses(users) -> list[str]:
    return sorted({email for email in users.exclude(email="").values_list("email", flat=True)})


def _mail_lines(ctrs: list[CTR], link) -> list[dict]:
    return [
        {
            "number": ctr.number,
            "transport_date": ctr.transport_date,
            "worksite": ctr.worksite.address if ctr.worksite else "",
            "transporter": ctr.transporter.name,
            "hours": int(ctr.hours_open),
            "link": mail.absolute(link(ctr)),
        }
        for ctr in ctrs
    ]


def notify_unconfirmed(
    now: datetime.datetime | None = None, ibge_code: str = "", dry_run: bool = False
) -> Notified:
    """E-mail the CTRs that became unconfirmed (`unconfirmed`) and were not mailed yet: one
    message to the Núcleo's users listing them all, one to each generator's users listing its
    own, each CTR once (a notice row per CTR, written in the same transaction, so that a failed
    run mails nothing and marks nothing, and a second run at once skips the rows the first
    holds). The subjects carry no personal data. `dry_run`: find, send and write nothing."""
    now = now or timezone.now()
    with transaction.atomic():
        queryset = unconfirmed(
            CTR.objects.select_related("worksite", "transporter").defer(
                "worksite__location", "worksite__area"
            ),
            now,
        ).exclude(pk__in=UnconfirmedDepartureNotice.objects.values("ctr"))
        if ibge_code:
            queryset = queryset.filter(municipality__ibge_code=ibge_code)
        due = list(
            queryset.select_for_update(of=("self",), skip_locked=True).order_by("created_at", "pk")
        )
        result = Notified(due)
        if dry_run or not due:
            return result
        users = get_user_model().objects.filter(is_active=True)
        per_ctr = {}
        # Each municipality's Núcleo hears of its own CTRs only.
        by_municipality: dict[int, list[CTR]] = {}
        for ctr in due:
            by_municipality.setdefault(ctr.municipality_id, []).append(ctr)
        heads = letterheads(by_municipality)
        for municipality_id, ctrs in sorted(by_municipality.items()):
            nucleo = _addresses(staff_of(municipality_id, [roles.NUCLEO]))
            per_ctr.update({ctr.pk: len(nucleo) for ctr in ctrs})
            result.messages += 1 if nucleo else 0
            result.recipients += mail.send(
                nucleo,
                f"{len(ctrs)} CTR(s) sem confirmação do gerador",
                "generators/email/unconfirmed_nucleo.txt",
                {
                    "ctrs": _mail_lines(ctrs, lambda ctr: reverse("ctr-verify", args=[ctr.number])),
                    "list_url": mail.absolute(reverse("generators:unconfirmed")),
                },
                heads.get(municipality_id, PLATFORM),
            )
        # The generator named on the CTR and the worksite's, should they differ.
        by_generator: dict[int, list[CTR]] = {}
        for ctr in due:
            for generator_id in {ctr.generator_id, getattr(ctr.worksite, "generator_id", None)}:
                if generator_id is not None:
                    by_generator.setdefault(generator_id, []).append(ctr)
        for generator_id, ctrs in sorted(by_generator.items()):
            members = Membership.objects.filter(generator_id=generator_id).values("user")
            addresses = _addresses(users.filter(pk__in=members))
            sent = mail.send(
                addresses,
                f"{len(ctrs)} CTR(s) aguardando a sua confirmação de saída",
                "generators/email/unconfirmed_generator.txt",
                {
                    "ctrs": _mail_lines(
                        ctrs, lambda ctr: reverse("generators:ctr-detail", args=[ctr.number])
                    )
                },
                # Signed by the municipality of its CTRs; by the platform if they are of several.
                common_letterhead(ctr.municipality_id for ctr in ctrs),
            )
            result.messages += 1 if sent else 0
            result.recipients += sent
            for ctr in ctrs:
                per_ctr[ctr.pk] += sent
        UnconfirmedDepartureNotice.objects.bulk_create(
            UnconfirmedDepartureNotice(ctr=ctr, mailed_at=now, recipients=per_ctr[ctr.pk])
            for ctr in due
        )
    return result
