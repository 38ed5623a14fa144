"""What expires in the procedure, across cases (manage.py enforcement_deadlines)."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from config.br import br_number
from pev_network.models import Municipality

from .. import deadlines, fines
from ..deadlines import ONE_DAY
from ..models.enforcement import (
    CaseStatus,
    EnforcementCase,
    InfractionRecord,
    Notice,
    Penalty,
    PenaltyKind,
    RecordStatus,
)
from .facts import appeal_last_day, notice_due, payment_last_day, unit_label
from .penalties import ended_facility_suspensions


@dataclass
class Due:
    when: datetime.datetime | datetime.date
    what: str
    case: EnforcementCase
    expired: bool


def expiring(
    now: datetime.datetime, days: int, municipality: Municipality | None = None
) -> dict[str, list[Due]]:
    """Deadlines that end within `days` days of `now` or already ended unmet, by kind."""
    today = deadlines.local_date(now)
    horizon = today + datetime.timedelta(days=days)
    horizon_end = deadlines.start_of_day(horizon + ONE_DAY)
    cases = EnforcementCase.objects.select_related("offender", "municipality")
    if municipality is not None:
        cases = cases.filter(municipality=municipality)
    out: dict[str, list[Due]] = {
        "notices": [],
        "undelivered": [],
        "appeals": [],
        "appeal_decisions": [],
        "payments": [],
        "suspensions": [],
        "embargoes": [],
        "seizures": [],
    }
    for notice in Notice.objects.filter(
        case__in=cases, case__status=CaseStatus.NOTIFIED
    ).select_related("case__offender", "case__municipality"):
        due = notice_due(notice)
        if due is None:
            out["undelivered"].append(
                Due(
                    notice.issued_at,
                    f"Notificação {notice.number} sem entrega registrada",
                    notice.case,
                    False,
                )
            )
        elif due <= horizon_end:
            late = notice.repaired_at is not None
            out["notices"].append(
                Due(
                    due,
                    f"Notificação {notice.number}: "
                    f"{notice.repair_hours or notice.case.framework.repair_hours} horas"
                    + (" (reparado fora do prazo)" if late else ""),
                    notice.case,
                    due < now,
                )
            )
    records = InfractionRecord.objects.filter(case__in=cases).select_related(
        "case__offender", "case__municipality", "case__framework"
    )
    for record in records.filter(status=RecordStatus.ISSUED):
        last = appeal_last_day(record)
        if last is None:
            out["undelivered"].append(
                Due(
                    record.drawn_up_at,
                    f"Auto {record.number} sem entrega registrada",
                    record.case,
                    False,
                )
            )
        elif today <= last <= horizon:
            out["appeals"].append(
                Due(last, f"Auto {record.number}: fim do prazo de recurso", record.case, False)
            )
    for record in records.filter(status=RecordStatus.APPEALED).select_related("appeal"):
        out["appeal_decisions"].append(
            Due(
                record.appeal.filed_on,
                f"Auto {record.number}: recurso aguardando decisão",
                record.case,
                False,
            )
        )
    for record in records.filter(status__in=(RecordStatus.ISSUED, RecordStatus.UPHELD)):
        last = payment_last_day(record)
        if last is not None and last <= horizon:
            expired = today > last
            amount = f"{br_number(record.total_ufesp, 2)} {unit_label(record.case.framework)}"
            what = f"Auto {record.number}: pagamento de {amount}"
            if expired:
                what += " vencido — Dívida Ativa (art. 22 IV)"
            out["payments"].append(Due(last, what, record.case, expired))
    penalties = Penalty.objects.filter(record__case__in=cases, lifted_on__isnull=True).exclude(
        record__status=RecordStatus.ANNULLED
    )
    for penalty in penalties.filter(
        kind=PenaltyKind.SUSPENSION, ends_on__gte=today, ends_on__lte=horizon
    ).select_related("record__case__offender"):
        out["suspensions"].append(
            Due(
                penalty.ends_on,
                f"Suspensão de {penalty.record.case.offender.name} termina",
                penalty.record.case,
                penalty.ends_on < today,
            )
        )
    for penalty in ended_facility_suspensions(today).filter(record__case__in=cases):
        out["suspensions"].append(
            Due(
                penalty.ends_on,
                f"Suspensão de {penalty.record.case.offender.name} terminou: "
                "restabelecer a licença (--apply)",
                penalty.record.case,
                True,
            )
        )
    for penalty in penalties.filter(kind=PenaltyKind.EMBARGO).select_related("record__case"):
        count = penalty.breaches.count()
        framework = penalty.record.case.framework
        if count and framework.embargo_daily_fine is not None:
            out["embargoes"].append(
                Due(
                    penalty.breaches.order_by("-day").first().day,
                    f"Embargo do auto {penalty.record.number} descumprido em {count} dia(s): "
                    f"{br_number(fines.embargo_fine(count, framework))} "
                    f"{unit_label(framework)} (art. 31)",
                    penalty.record.case,
                    True,
                )
            )
    for penalty in penalties.filter(kind=PenaltyKind.SEIZURE).select_related("record__case"):
        state = "custos pagos, pode liberar" if penalty.costs_paid_on else "custos não pagos"
        out["seizures"].append(
            Due(
                penalty.starts_on,
                f"Apreensão do auto {penalty.record.number}: {state}",
                penalty.record.case,
                False,
            )
        )
    for items in out.values():
        items.sort(
            key=lambda d: (
                d.when if isinstance(d.when, datetime.datetime) else deadlines.start_of_day(d.when)
            )
        )
    return out
