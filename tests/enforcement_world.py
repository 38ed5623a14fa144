"""Small builders for enforcement tests: cases, notices and records made through the services,
on fixed past dates (the services refuse future ones)."""

from __future__ import annotations

import datetime
import json
from decimal import Decimal
from pathlib import Path

from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from demo import penalty_lines
from fiscalization import enforcement, penalty_table
from fiscalization.enforcement import OffenderData
from fiscalization.models.enforcement import (
    DeliveryMethod,
    EnforcementCase,
    EntryStatus,
    InfractionRecord,
    OffenderRole,
    PenaltyTableEntry,
)
from fiscalization.models.frameworks import PenaltyFramework
from pev_network.models import Municipality
from tests.ctr_world import CNPJ_ALFA, World

D = datetime.date
HOUR = datetime.timedelta(hours=1)
CPF_OTHER = "11144477735"


def at(year: int, month: int, day: int, hour: int = 10, minute: int = 0) -> datetime.datetime:
    """A moment in the municipality's time zone (America/Sao_Paulo)."""
    return timezone.make_aware(datetime.datetime(year, month, day, hour, minute))


TEST_NOTE = "Valores de teste"


def confirmed_table(town: Municipality) -> None:
    """The lines of Lei 3.978/2007 art. 23 (demo.penalty_lines), confirmed for `town`
    with test amounts: the seeded lines are provisional and unusable, and a record needs lines
    its municipality confirmed (art. 23, worded by Lei 4.699/2017: the act cites that law)."""
    if PenaltyTableEntry.objects.filter(municipality=town, note=TEST_NOTE).exists():
        return
    framework = enforcement.own_framework_in_force(town, timezone.localdate())
    act = f"{framework.fine_table_law if framework else ''} (valores de teste)"
    if not framework or not framework.fine_table_law:
        act = f"Lei nº 1/2000 {act}"
    penalty_table.import_table(penalty_lines.table_csv(), town, confirm=True, act=act)
    PenaltyTableEntry.objects.filter(municipality=town, status=EntryStatus.CONFIRMED).update(
        note=TEST_NOTE
    )


def entries(*codes: str, town: Municipality | None = None) -> list[PenaltyTableEntry]:
    """Confirmed lines of the test table of `town` (by default the test world's Guaratinguetá),
    in the order given."""
    town = town or Municipality.objects.get(ibge_code="3518404")
    confirmed_table(town)
    lines = PenaltyTableEntry.objects.filter(municipality=town, note=TEST_NOTE)
    by_code = {e.code: e for e in lines.filter(code__in=codes)}
    return [by_code[c] for c in codes]


def transporter_offender(world: World) -> OffenderData:
    return OffenderData(
        name="João Dirigente",
        document=CNPJ_ALFA,
        role=OffenderRole.TRANSPORT_DIRECTOR,
        address="Rua A, 1",
        transporter=world.alfa,
    )


def facility_offender(world: World) -> OffenderData:
    return OffenderData(
        name="Operadora da ATT Ltda.",
        document="11444777000161",
        role=OffenderRole.FACILITY,
        facility=world.att,
    )


def open_case(
    world: World,
    opened_at: datetime.datetime | None = None,
    offender: OffenderData | None = None,
    obstructed: bool = False,
) -> EnforcementCase:
    ensure_frameworks()
    return enforcement.open_case(
        municipality=world.town,
        inspector=world.fiscal,
        offender=offender or transporter_offender(world),
        description="Caçamba descarregada em lote vago.",
        obstructed_inspection=obstructed,
        opened_at=opened_at or at(2025, 3, 3, 9),
    )


def notified_and_expired(case: EnforcementCase) -> datetime.datetime:
    """Notify by hand one hour after the finding; return the first minute after the 72 h."""
    notice = enforcement.issue_notice(
        case, "Remover o entulho do lote.", DeliveryMethod.HAND, case.opened_at + HOUR
    )
    enforcement.register_notice_delivery(notice, case.opened_at + HOUR)
    return case.opened_at + HOUR + datetime.timedelta(hours=72, minutes=1)


def record_for(
    world: World,
    opened_at: datetime.datetime | None = None,
    codes: tuple[str, ...] = ("INF-01",),
    offender: OffenderData | None = None,
    obstructed: bool = False,
    delivery: str = DeliveryMethod.HAND,
    applied: bool = True,
) -> InfractionRecord:
    """A record through the whole procedure: case, notice where the framework requires one
    (Lei 3.978/2007 art. 28: the non-recidivist), record; and, with `applied`, its fine
    applied by the authority in the same minute (art. 35), where the record does not impose
    it itself."""
    case = open_case(world, opened_at, offender, obstructed)
    drawn = case.opened_at + 2 * HOUR
    if case.framework.notice_first == "NON_RECIDIVIST" and not enforcement.is_recidivist(case):
        drawn = notified_and_expired(case)
    record = enforcement.draw_up_record(
        case,
        entries(*codes),
        delivery_method=delivery,
        signed_by_offender=True,
        drawn_up_at=drawn,
    )
    return fine_applied(world, record) if applied else record


def fine_applied(world: World, record: InfractionRecord, when=None) -> InfractionRecord:
    """The record's fine applied by the authority at `when` (by default when drawn up), where
    it still awaits it (Lei 3.978/2007 art. 35)."""
    if record.fine_applied_at is None:
        record = enforcement.apply_fine(record, when or record.drawn_up_at, by=world.authority)
    return record


# --- penalty frameworks (fiscalization/fixtures/penalty_frameworks.json) ----------------------

GUARATINGUETA, FERRAZ, RIO = "3518404", "3515707", "3304557"
FRAMEWORKS_FIXTURE = (
    Path(__file__).resolve().parent.parent
    / "fiscalization"
    / "fixtures"
    / "penalty_frameworks.json"
)


def fixture_framework(ibge_code: str = GUARATINGUETA) -> PenaltyFramework:
    """The shipped framework of `ibge_code`, unsaved: for the pure arithmetic of deadlines and
    fines, with no database."""
    rows = json.loads(FRAMEWORKS_FIXTURE.read_text(encoding="utf-8"))
    fields = next(r["fields"] for r in rows if r["fields"]["ibge_code"] == ibge_code)
    framework = PenaltyFramework(**fields)
    for name in ("valid_from", "valid_until"):
        if getattr(framework, name):
            setattr(framework, name, datetime.date.fromisoformat(getattr(framework, name)))
    for name in (
        "recidivism_factor",
        "persistent_factor",
        "embargo_daily_fine",
        "obstruction_factor",
    ):
        if getattr(framework, name) is not None:
            setattr(framework, name, Decimal(getattr(framework, name)))
    return framework


def ensure_frameworks() -> None:
    """The shipped frameworks, for transactional tests: the flush after an earlier one removes
    the rows migration 0011 loaded."""
    if not PenaltyFramework.objects.exists():
        call_command("loaddata", "penalty_frameworks", verbosity=0)


def own_framework(municipality, like: str = GUARATINGUETA) -> PenaltyFramework:
    """A framework of `municipality`'s own, with the figures of the shipped one of `like` (a
    municipality without one cannot open a case: no other municipality's law governs it)."""
    framework = fixture_framework(like)
    framework.ibge_code = municipality.ibge_code
    framework.name = f"{municipality.name} (regime de teste)"
    framework.save()
    return framework


def govern_by(ibge_code: str, municipality) -> PenaltyFramework:
    """Make the shipped framework of `ibge_code` the one in force in `municipality` (the test
    world's municipality is Guaratinguetá's): later cases there open under it."""
    framework = PenaltyFramework.objects.get(ibge_code=ibge_code)
    PenaltyFramework.objects.filter(pk=framework.pk).update(ibge_code=municipality.ibge_code)
    PenaltyFramework.objects.filter(ibge_code=municipality.ibge_code).exclude(
        pk=framework.pk
    ).update(valid_until=datetime.date(2000, 1, 1), valid_from=datetime.date(2000, 1, 1))
    framework.refresh_from_db()
    return framework


def client_for(user) -> Client:
    """A test client signed in as `user`."""
    client = Client()
    client.force_login(user)
    return client
