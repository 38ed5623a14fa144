"""The fiscalization demo: about 60 dumping reports in Guaratinguetá and a few enforcement cases,
on top of the network and the CTR demo (all fictitious, fixtures/README.md).

Everything goes through the services (fiscalization.intake, fiscalization.enforcement), in
chronological order, so that every rule is checked and every event, number and deadline is
real. Each service is told the planned past moment (the intake's `at=`, the enforcement's
`opened_at=`, `issued_at=`...): no row is rewritten after the fact. No photos: the demo writes
no media files.

The reports: three dense spots that come out as hotspots at the default DBSCAN settings (100 m,
3 reports) — a vacant lot that was cleaned and is being reported again, a stream bank and a
slope used as bota-fora — two duplicates merged into their originals, and scattered reports
at least 300 m apart (never a hotspot), in every category and status, by citizens (with and
without contact) and by the inspector `fiscal`.

The cases: a notice delivered by hand and repaired in time; a notice expired unrepaired and a
signed record of two table entries (cumulative); a recidivist (an earlier record of the same
person, paid) whose record is doubled; a record under appeal; a notice still running; and the
suspension that explains why the CTR demo's third transporter is suspended.

The parts: fiscalization_loader (the steps in time, run through the services),
fiscalization_reports and fiscalization_cases (the plan); this module loads them and sums up.

Deterministic for a given day (fixed seed) and idempotent: once the demo's cases exist, a new
load only prints the summary.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Count
from django.utils import timezone

from fiscalization import hotspots, penalty_table
from fiscalization.models import (
    DumpingReport,
    EnforcementCase,
    InfractionRecord,
    PenaltyKind,
    PenaltyTableEntry,
    ReportStatus,
)
from fiscalization.models.enforcement import CaseStatus
from pev_network.models import CatchmentBasin, Municipality

from . import penalty_lines
from .ctrs import IBGE_CODE
from .fiscalization_cases import (
    APPELLANT,
    CLANDESTINE,
    NOTIFIED,
    RECIDIVIST,
    REPAIRER,
    SUSPENDED_TRANSPORTER,
    payment_day,
    plan_appeal,
    plan_clandestine,
    plan_recidivist,
    plan_repaired,
    plan_running_notice,
    plan_suspension,
    suspended_transporter,
)
from .fiscalization_loader import DEMO_ACT, SEED, Loader
from .fiscalization_reports import plan_hotspot_reports, plan_scattered_reports
from .network import ensure_ufesp

INSPECTOR = "fiscal"
# Who applies the penalties (art. 35): the demo account of the Autoridade group.
AUTHORITY = "autoridade"
DEMO_NOTE = (
    "Valores fictícios da demonstração: a tabela do art. 23 da Lei 3.978/2007 não consta do "
    "texto publicado; nenhuma norma municipal fixou estes valores."
)


@dataclass
class DemoResult:
    created: bool
    report_counts: dict[str, int]
    hotspots: list[hotspots.Hotspot]
    case_counts: dict[str, int]
    record_counts: dict[str, int]
    suspension: str

    def summary(self) -> str:
        labels = dict(ReportStatus.choices)
        reports = ", ".join(
            f"{labels[s].lower()} {self.report_counts.get(s, 0)}" for s in ReportStatus.values
        )
        recurring = sum(1 for h in self.hotspots if h.recurrence_after_cleaning)
        case_labels = {
            CaseStatus.OPEN: "aberto",
            CaseStatus.NOTIFIED: "notificado",
            CaseStatus.REPAIRED: "reparado no prazo",
            CaseStatus.RECORDED: "autuado",
            CaseStatus.CLOSED: "encerrado",
        }
        cases = ", ".join(
            f"{case_labels[s]} {n}" for s in CaseStatus.values if (n := self.case_counts.get(s))
        )
        record_labels = dict(InfractionRecord._meta.get_field("status").choices)
        records = ", ".join(
            f"{record_labels[s].lower()} {n}"
            for s in record_labels
            if (n := self.record_counts.get(s))
        )
        head = (
            "Fiscalização de demonstração criada"
            if self.created
            else "Fiscalização de demonstração já existia (nada duplicado)"
        )
        return "\n".join(
            [
                f"{head}: {sum(self.report_counts.values())} denúncias em Guaratinguetá "
                f"({reports}).",
                f"Pontos críticos (DBSCAN {hotspots.DEFAULT_EPS_M:g} m, "
                f"{hotspots.DEFAULT_MIN_POINTS} denúncias, {hotspots.DEFAULT_DAYS} dias): "
                f"{len(self.hotspots)}, {recurring} com reincidência depois da limpeza.",
                f"Processos: {sum(self.case_counts.values())} ({cases}); autos de infração: "
                f"{sum(self.record_counts.values())} ({records}).",
                self.suspension,
            ]
        )


# --- loading ----------------------------------------------------------------------------------


def demo_cases():
    documents = [
        CLANDESTINE[1],
        RECIDIVIST[1],
        APPELLANT[1],
        REPAIRER[1],
        NOTIFIED[1],
        SUSPENDED_TRANSPORTER.document,
    ]
    return EnforcementCase.objects.filter(offender__document__in=documents)


def is_loaded() -> bool:
    return EnforcementCase.objects.filter(offender__document=CLANDESTINE[1]).exists()


def confirm_demo_table(town: Municipality, at: datetime.datetime) -> None:
    """The demo's art. 23 table: the model lines of Lei 3.978/2007 confirmed for the demo town
    with fictitious amounts, said so in the act and the note. The lines seeded by migration
    stay provisional: a demo never confirms them."""
    data = penalty_lines.table_csv()
    seeded = PenaltyTableEntry.objects.filter(municipality=town).exclude(confirming_act=DEMO_ACT)
    if seeded.exists():
        raise ValueError(
            f"A tabela de infrações de {town.name} já tem linhas que não são da demonstração: "
            "a demonstração não as confirma nem as altera."
        )
    penalty_table.import_table(data, town, confirm=True, act=DEMO_ACT, at=at)
    PenaltyTableEntry.objects.filter(municipality=town, confirming_act=DEMO_ACT).update(
        note=DEMO_NOTE
    )


def _create(now: datetime.datetime, town: Municipality, inspector, authority) -> None:
    confirm_demo_table(town, now)
    ensure_ufesp(timezone.localdate(now))
    ld = Loader(now, town, inspector, authority)
    found = suspended_transporter(town)
    caught = ld.on(found[0].status_since - datetime.timedelta(days=13), 8) if found else None
    plan_hotspot_reports(ld, caught)
    plan_scattered_reports(ld)
    plan_repaired(ld)
    plan_clandestine(ld)
    plan_recidivist(ld, payment_day(ld.today))
    plan_appeal(ld)
    plan_running_notice(ld)
    if found:
        plan_suspension(ld, found)
    ld.schedule_reports()
    ld.run()


def _suspension_text() -> str:
    penalty = (
        InfractionRecord.objects.filter(
            case__in=demo_cases(), penalties__kind=PenaltyKind.SUSPENSION
        )
        .values_list("number", "penalties__starts_on", "penalties__ends_on", "case__offender__name")
        .first()
    )
    if penalty is None:
        return "Transportador suspenso da demonstração de CTR não encontrado: sem suspensão."
    number, starts, ends, name = penalty
    return f"Suspensão de {name}: {starts:%d/%m/%Y} a {ends:%d/%m/%Y} (auto {number})."


def load(now: datetime.datetime | None = None) -> DemoResult:
    """Load the fiscalization demo (after the network and the CTR demo); once loaded, a new
    call only reports what is there."""
    now = now or timezone.now()
    town = Municipality.objects.defer("boundary").filter(ibge_code=IBGE_CODE).first()
    if town is None or not CatchmentBasin.objects.filter(municipality=town).exists():
        raise ValueError("Rede de demonstração não carregada: rode manage.py load_demo antes.")
    users = get_user_model().objects
    inspector = users.filter(username=INSPECTOR).first()
    authority = users.filter(username=AUTHORITY).first()
    if inspector is None or authority is None:
        raise ValueError(
            "Contas da fiscalização e da autoridade não encontradas: rode manage.py load_demo."
        )
    created = False
    with transaction.atomic():
        # Two loads at once: the second waits, then finds the demo loaded.
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [SEED])
        if not is_loaded():
            created = True
            _create(now, town, inspector, authority)
    reports = DumpingReport.objects.filter(municipality=town)
    cases = demo_cases()
    return DemoResult(
        created=created,
        report_counts=dict(reports.values_list("status").annotate(n=Count("pk")).order_by()),
        hotspots=hotspots.find_hotspots(hotspots.HotspotQuery(municipality_id=town.pk)),
        case_counts=dict(cases.values_list("status").annotate(n=Count("pk")).order_by()),
        record_counts=dict(
            InfractionRecord.objects.filter(case__in=cases)
            .values_list("status")
            .annotate(n=Count("pk"))
            .order_by()
        ),
        suspension=_suspension_text(),
    )
