"""Small builders for enforcement tests: cases, notices and records made through the services,
on fixed past dates (the services refuse future ones)."""

from __future__ import annotations

import datetime

from django.utils import timezone

from fiscalization import enforcement
from fiscalization.enforcement import OffenderData
from fiscalization.models.enforcement import (
    DeliveryMethod,
    EnforcementCase,
    InfractionRecord,
    OffenderRole,
    PenaltyTableEntry,
)
from tests.ctr_world import CNPJ_ALFA, World

D = datetime.date
HOUR = datetime.timedelta(hours=1)
CPF_OTHER = "11144477735"


def at(year: int, month: int, day: int, hour: int = 10, minute: int = 0) -> datetime.datetime:
    """A moment in the municipality's time zone (America/Sao_Paulo)."""
    return timezone.make_aware(datetime.datetime(year, month, day, hour, minute))


def entries(*codes: str) -> list[PenaltyTableEntry]:
    """Lines of the seeded table (migration 0003), in the order given."""
    by_code = {e.code: e for e in PenaltyTableEntry.objects.filter(code__in=codes)}
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
) -> InfractionRecord:
    """A record through the whole procedure: case, notice (unless recidivist), record."""
    case = open_case(world, opened_at, offender, obstructed)
    drawn = case.opened_at + 2 * HOUR
    if not enforcement.is_recidivist(case):
        drawn = notified_and_expired(case)
    return enforcement.draw_up_record(
        case,
        entries(*codes),
        delivery_method=delivery,
        signed_by_offender=True,
        drawn_up_at=drawn,
    )
