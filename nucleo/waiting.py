"""What waits for the signed-in user: each role's counts of the work that
is theirs to do, shown on its landing page and as badges in its menu (maps/base.html, through
nucleo.context_processors).

Scoping: every count is a `visible_to(user, current=True)` queryset, so a side (transporter,
facility, generator) counts its own rows and the municipal staff the rows of the municipality
they work in now (`jurisdiction_of(user)`); the deadlines are the current municipality's cases.

Cost: one call per request (cached on the request), a fixed number of queries per role
whatever the data (a COUNT per item), and nothing at all on a page that does not render the
menu (the context processor is lazy)."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from django.core.cache import cache
from django.urls import reverse
from django.utils import timezone

from ctr import roles
from ctr.models import CTR, CorrectionSide, CorrectionStatus, CTRCorrection, CTRStatus
from fiscalization.enforcement.expiring import expiring
from fiscalization.enforcement.penalties import records_awaiting_authority
from fiscalization.models.enforcement import InfractionRecord, RecordStatus
from generators import confirmation
from generators.models import (
    DeclarationStatus,
    GeneratorRegistration,
    HabiteSeDeclaration,
    PlanStatus,
    RegistrationStatus,
    WastePlan,
)
from jurisdiction.models import Role
from jurisdiction.scope import jurisdiction_of
from pev_network.models import Municipality

# Lei 3.978/2007 art. 13 p.ú.: a refused load is still the transporter's to take to a licensed
# area. It stays in the transporter's list of what waits for this long after the refusal
# (it has to take the load elsewhere with a new CTR; there is no "seen" mark to clear it).
REFUSED_RECENTLY = datetime.timedelta(days=7)
CACHE_ATTRIBUTE = "_waiting_for_user"
DEADLINES_TTL = 300  # seconds


@dataclass(frozen=True)
class Item:
    """One kind of work waiting: its label, how many, where it is done."""

    key: str
    label: str
    count: int
    url: str


@dataclass(frozen=True)
class Waiting:
    role: str
    items: tuple[Item, ...] = ()

    @property
    def total(self) -> int:
        return sum(item.count for item in self.items)

    def count(self, key: str) -> int:
        return sum(item.count for item in self.items if item.key == key)


def _transporter(user, transporter) -> Waiting:
    # The two parties' corrections are theirs, as ctr.field.corrections.readable_ctrs reads them.
    corrections = CTRCorrection.objects.filter(ctr__transporter=transporter)
    refused_since = timezone.now() - REFUSED_RECENTLY
    return Waiting(
        "transporter",
        (
            Item(
                "corrections",
                "Correções a responder",
                corrections.filter(
                    status=CorrectionStatus.PROPOSED, proposed_side=CorrectionSide.FACILITY
                ).count(),
                reverse("ctr_web:ctr-list"),
            ),
            Item(
                "refused",
                "Cargas recusadas (7 dias)",
                roles.visible_ctrs(user, CTR.objects.all())
                .filter(status=CTRStatus.REFUSED, closed_at__gte=refused_since)
                .count(),
                reverse("ctr_web:ctr-list") + "?status=refused",
            ),
        ),
    )


def _facility(user, facility) -> Waiting:
    ctrs = roles.visible_ctrs(user, CTR.objects.all()).filter(destination_facility=facility)
    corrections = CTRCorrection.objects.filter(ctr__destination_facility=facility)
    url = reverse("ctr_web:receptions")
    return Waiting(
        "facility",
        (
            Item(
                "to_receive",
                "Cargas a receber",
                ctrs.filter(status=CTRStatus.ISSUED).count(),
                url,
            ),
            Item(
                "corrections",
                "Correções a decidir",
                corrections.filter(
                    status=CorrectionStatus.PROPOSED, proposed_side=CorrectionSide.TRANSPORTER
                ).count(),
                url + "#secao-encerrados",
            ),
        ),
    )


def _generator(user) -> Waiting:
    ctrs = roles.visible_ctrs(user, CTR.objects.all())
    return Waiting(
        "generator",
        (
            Item(
                "departures",
                "Saídas a confirmar",
                confirmation.awaiting(ctrs).count(),
                reverse("generators:ctr-list") + "?pending=on",
            ),
            Item(
                "plans_returned",
                "PGRCC devolvidos para ajustes",
                WastePlan.objects.visible_to(user, current=True)
                .filter(status=PlanStatus.CHANGES_REQUESTED)
                .count(),
                reverse("generators:worksite-list"),
            ),
        ),
    )


def _nucleo(user) -> list[Item]:
    return [
        Item(
            "declarations",
            "Habite-se",
            HabiteSeDeclaration.objects.visible_to(user, current=True)
            .filter(status=DeclarationStatus.REQUESTED)
            .count(),
            reverse("generators:declaration-queue"),
        ),
        Item(
            "plans",
            "PGRCC",
            WastePlan.objects.visible_to(user, current=True)
            .filter(status=PlanStatus.SUBMITTED)
            .count(),
            reverse("generators:plan-queue"),
        ),
        Item(
            "registrations",
            "Cadastros de geradores",
            GeneratorRegistration.objects.visible_to(user, current=True)
            .filter(status=RegistrationStatus.PENDING)
            .count(),
            reverse("generators:registration-queue"),
        ),
        Item(
            "corrections",
            "Correções",
            CTRCorrection.objects.visible_to(user, current=True)
            .filter(status=CorrectionStatus.ESCALATED)
            .count(),
            reverse("ctr_web:nucleo-corrections"),
        ),
    ]


def deadlines_due(municipality_id: int | None, now: datetime.datetime | None = None) -> int:
    """The current municipality's procedure deadlines that have ended unmet or end today
    (fiscalization.enforcement.expiring, as manage.py enforcement_deadlines lists them)."""
    if municipality_id is None:
        return 0
    key = f"waiting:deadlines:{municipality_id}"
    cached = cache.get(key) if now is None else None
    if cached is not None:
        return cached
    municipality = Municipality.objects.defer("boundary").get(pk=municipality_id)
    due = expiring(now or timezone.now(), 0, municipality)
    count = sum(len(items) for items in due.values())
    # The walk reads every open case of the municipality: once per DEADLINES_TTL for all of
    # its inspectors' pages, not on each page (the municipality's figure, whoever asks).
    cache.set(key, count, DEADLINES_TTL)
    return count


def _enforcement(user, municipality_id: int | None) -> list[Item]:
    # Lei 3.978/2007 art. 35: the penalties are applied (and appeals decided) by the Secretary:
    # the records whose proposed fine waits for the authority, and the appeals to decide.
    if municipality_id is None:
        to_apply = appeals = 0
    else:
        to_apply = records_awaiting_authority([municipality_id])
        appeals = InfractionRecord.objects.filter(
            case__municipality_id=municipality_id, status=RecordStatus.APPEALED
        ).count()
    return [
        Item(
            "deadlines",
            "Prazos vencendo",
            deadlines_due(municipality_id),
            reverse("enforcement:case-list"),
        ),
        Item(
            "authority",
            "Autos aguardando a autoridade",
            to_apply,
            reverse("enforcement:records-awaiting"),
        ),
        Item(
            "appeals",
            "Recursos a decidir",
            appeals,
            reverse("enforcement:case-list") + "?status=RECORDED",
        ),
    ]


def compute(user) -> Waiting:
    """What waits for `user` (see the module's docstring)."""
    if user is None or not user.is_authenticated:
        return Waiting("anonymous")
    transporter = roles.transporter_of(user)
    if transporter is not None:
        return _transporter(user, transporter)
    facility = roles.facility_of(user)
    if facility is not None:
        return _facility(user, facility)
    if roles.generator_of(user) is not None:
        return _generator(user)
    j = jurisdiction_of(user)
    if j.current_id is None:
        return Waiting("staff")
    held = set(j.roles.get(j.current_id, ())) if not j.everywhere else {r.value for r in Role}
    items: list[Item] = []
    if Role.NUCLEO in held:
        items += _nucleo(user)
    if held & {Role.FISCAL, Role.AUTHORITY}:
        items += _enforcement(user, j.current_id)
    return Waiting("staff", tuple(items))


def waiting_for(request) -> Waiting:
    """`compute` once per request."""
    cached = getattr(request, CACHE_ATTRIBUTE, None)
    if cached is None:
        cached = compute(getattr(request, "user", None))
        setattr(request, CACHE_ATTRIBUTE, cached)
    return cached


__all__ = ["Item", "Waiting", "compute", "deadlines_due", "waiting_for"]
