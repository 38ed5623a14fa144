"""What a generator sees of its CTRs: its worksites with their loads, the
CTRs by status, and where each load's waste is now (the chain of custody, ctr.custody.chain, as the
Certificado de Destinação Final reads it). Which CTRs are its own is ctr.roles' rule
(`generator_ctrs_q`, through `visible_ctrs`); this module only arranges them.

Plain functions: domain objects in, querysets and plain data out; no request objects."""

from __future__ import annotations

from django.db.models import Count, Max, Q, QuerySet

from ctr.custody import certificates
from ctr.models import CTR, CTRStatus, Generator, Worksite

RECENT_CTRS = 10


def worksites_of(generator: Generator) -> QuerySet:
    """The generator's worksites, each with its loads counted (onward CTRs are not a
    worksite's) and its last transport day, the most recent first."""
    loads = Q(ctrs__origin_facility__isnull=True) & ~Q(ctrs__status=CTRStatus.CANCELLED)
    return (
        Worksite.objects.filter(generator=generator)
        .annotate(
            load_count=Count("ctrs", filter=loads),
            open_count=Count("ctrs", filter=loads & Q(ctrs__status=CTRStatus.ISSUED)),
            last_transport=Max("ctrs__transport_date", filter=loads),
        )
        .defer("location", "area")
        .order_by("-last_transport", "address", "pk")
    )


def status_counts(ctrs: QuerySet) -> list[dict]:
    """How many of `ctrs` are in each status, in the lifecycle's order (every status, zeros
    too, so that the summary always reads the same)."""
    counted = dict(ctrs.order_by().values_list("status").annotate(n=Count("pk")))
    return [
        {"status": status, "label": label, "count": counted.get(status, 0)}
        for status, label in CTRStatus.choices
    ]


def destination_of(ctr: CTR) -> certificates.Load | None:
    """Where the load's waste is now, share by share (ctr.custody.certificates: received at a
    recycling area or landfill, processed at a facility, still in stock at an ATT or PEV, in
    transit, refused), or None when there is no chain to follow: an onward CTR (not a worksite's
    load) or a cancelled one (it carried nothing)."""
    if ctr.worksite_id is None or ctr.is_onward or ctr.status == CTRStatus.CANCELLED:
        return None
    scope = certificates.Scope.of_worksite(ctr.worksite)
    # The worksite's certificate follows all its loads at once (one walk of the chain).
    return next(
        (load for load in certificates.build(scope).loads if load.number == ctr.number), None
    )
