"""Declared against transported against destined, for one worksite: what
its approved PGRCC expects of each waste class (Lei 3.978/2007 art. 9), what its CTRs carried
and what the receiving facilities accepted (art. 13 p.ú.), and what reached a final
destination through the chain of custody (ctr.custody.chain), by class and by month.

The Habite-se declaration (art. 9 p.ú. II) and the suspect worksites read this one
comparison; the Núcleo's pages show it."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from decimal import Decimal

from django.db import connection

from ctr.custody import chain as custody
from ctr.models import CTRStatus, Worksite
from pev_network.models import WasteClass

from .models import PlannedVolume, PlanStatus, WastePlan

ZERO = Decimal(0)
CLASS_ORDER = [choice.value for choice in WasteClass]

# Per class and month of transport of the worksite's own loads (onward CTRs carry other
# people's waste): declared on the CTRs not cancelled, and received (the received share of
# each line of the CTRs a facility confirmed).
TRANSPORTED_SQL = f"""
SELECT w.waste_class,
       date_trunc('month', c.transport_date)::date AS month,
       sum(w.volume_m3) AS transported,
       sum(CASE WHEN c.status = %(received)s THEN {custody.RECEIVED_SHARE_SQL} ELSE 0 END)
           AS received
FROM {custody.CTR_TABLE} c
JOIN {custody.WASTE_TABLE} w ON w.ctr_id = c.id
WHERE c.worksite_id = %(worksite)s
  AND c.origin_facility_id IS NULL
  AND c.status <> %(cancelled)s
GROUP BY 1, 2
"""


def transported_by_worksite_sql(worksites: str) -> tuple[str, list]:
    """TRANSPORTED_SQL's transported volume for many worksites at once (generators.suspects):
    per worksite of `worksites` (a relation with an `id` column, e.g. a CTE), all classes and
    months together, with the day of its last load. The CTR's total is the sum of its lines
    (ctr.rules.CTRDraft.total_volume): no join with the lines, half the work at 100,000
    CTRs."""
    return (
        f"""
        SELECT c.worksite_id, sum(c.total_volume_m3) AS transported_m3,
               max(c.transport_date) AS last_load
        FROM {custody.CTR_TABLE} c
        WHERE c.worksite_id IN (SELECT id FROM {worksites})
          AND c.origin_facility_id IS NULL
          AND c.status <> %s
        GROUP BY c.worksite_id
        """,
        [CTRStatus.CANCELLED.value],
    )


def expected_by_worksite_sql(worksites: str) -> tuple[str, list]:
    """approved_plan's expected volume for many worksites at once: the sum of the approved
    version's planned volumes, per worksite of `worksites` that has one."""
    return (
        f"""
        SELECT p.worksite_id, sum(v.volume_m3) AS expected_m3
        FROM {WastePlan._meta.db_table} p
        JOIN {PlannedVolume._meta.db_table} v ON v.plan_id = p.id
        WHERE p.worksite_id IN (SELECT id FROM {worksites}) AND p.status = %s
        GROUP BY p.worksite_id
        """,
        [PlanStatus.APPROVED.value],
    )


@dataclass
class ClassFigures:
    """One waste class of the worksite, in m³. `expected_m3` is None without an approved
    plan."""

    waste_class: str
    expected_m3: Decimal | None = None
    transported_m3: Decimal = ZERO
    received_m3: Decimal = ZERO
    destined_m3: Decimal = ZERO  # reached a final destination or was processed at a facility

    @property
    def label(self) -> str:
        return WasteClass(self.waste_class).label

    @property
    def transported_pct(self) -> Decimal | None:
        """Transported as a percentage of expected (None when nothing is expected)."""
        if not self.expected_m3:
            return None
        return self.transported_m3 * 100 / self.expected_m3


@dataclass
class MonthFigures:
    """One month of the worksite's loads, in m³ per class."""

    month: datetime.date
    transported: dict[str, Decimal] = field(default_factory=dict)
    received: dict[str, Decimal] = field(default_factory=dict)
    destined: dict[str, Decimal] = field(default_factory=dict)

    @property
    def transported_m3(self) -> Decimal:
        return sum(self.transported.values(), ZERO)

    @property
    def destined_m3(self) -> Decimal:
        return sum(self.destined.values(), ZERO)


class Totals:
    """The totals over `classes` (ClassFigures) of what holds them: the comparison as the
    chain stands, or the Habite-se declaration's figures as issued (generators.declarations);
    `plan` is None without an approved plan. What generators/_comparison.html reads."""

    plan: object | None
    classes: list[ClassFigures]

    @property
    def expected_m3(self) -> Decimal | None:
        if self.plan is None:
            return None
        return sum((c.expected_m3 or ZERO for c in self.classes), ZERO)

    @property
    def transported_m3(self) -> Decimal:
        return sum((c.transported_m3 for c in self.classes), ZERO)

    @property
    def received_m3(self) -> Decimal:
        return sum((c.received_m3 for c in self.classes), ZERO)

    @property
    def destined_m3(self) -> Decimal:
        return sum((c.destined_m3 for c in self.classes), ZERO)

    @property
    def transported_pct(self) -> Decimal | None:
        expected = self.expected_m3
        if not expected:
            return None
        return self.transported_m3 * 100 / expected


@dataclass
class Comparison(Totals):
    worksite: Worksite
    plan: WastePlan | None
    classes: list[ClassFigures]
    months: list[MonthFigures]
    destinations: custody.Destinations

    def of_class(self, waste_class: str) -> ClassFigures:
        for figures in self.classes:
            if figures.waste_class == waste_class:
                return figures
        return ClassFigures(waste_class)


def approved_plan(worksite: Worksite) -> WastePlan | None:
    return (
        WastePlan.objects.filter(worksite=worksite, status=PlanStatus.APPROVED)
        .prefetch_related("volumes")
        .first()
    )


def worksite_comparison(worksite: Worksite) -> Comparison:
    """The worksite's figures by class and month: expected (approved plan), transported and
    received (CTRs), destined (chain of custody)."""
    plan = approved_plan(worksite)
    by_class: dict[str, ClassFigures] = {}

    def figures(waste_class: str) -> ClassFigures:
        if waste_class not in by_class:
            by_class[waste_class] = ClassFigures(waste_class, ZERO if plan else None)
        return by_class[waste_class]

    if plan is not None:
        for volume in plan.volumes.all():
            figures(volume.waste_class).expected_m3 = volume.volume_m3

    months: dict[datetime.date, MonthFigures] = {}
    with connection.cursor() as cursor:
        cursor.execute(
            TRANSPORTED_SQL,
            {
                "worksite": worksite.pk,
                "received": CTRStatus.RECEIVED.value,
                "cancelled": CTRStatus.CANCELLED.value,
            },
        )
        for waste_class, month, transported, received in cursor.fetchall():
            row = figures(waste_class)
            row.transported_m3 += transported
            row.received_m3 += received
            entry = months.setdefault(month, MonthFigures(month))
            entry.transported[waste_class] = transported
            entry.received[waste_class] = received

    pieces = custody.worksite_pieces(worksite.pk)
    dates = dict(worksite.ctrs.values_list("pk", "transport_date")) if pieces else {}
    for piece in pieces:
        if piece.outcome not in custody.Outcome.CONCLUSIVE:
            continue
        figures(piece.waste_class).destined_m3 += piece.volume_m3
        month = dates[piece.ctr_id].replace(day=1)
        entry = months.setdefault(month, MonthFigures(month))
        entry.destined[piece.waste_class] = (
            entry.destined.get(piece.waste_class, ZERO) + piece.volume_m3
        )

    classes = sorted(by_class.values(), key=lambda c: CLASS_ORDER.index(c.waste_class))
    return Comparison(
        worksite=worksite,
        plan=plan,
        classes=classes,
        months=[months[month] for month in sorted(months)],
        destinations=custody.Destinations(pieces),
    )
