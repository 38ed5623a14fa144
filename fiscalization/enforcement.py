"""The enforcement procedure of Lei 3.978/2007 art. 21-36, as services.

Plain functions, one transaction each, taking domain objects and returning them; they raise
EnforcementError with a Portuguese message and a stable code, and never see a request.

The procedure, in order:
  open_case            an irregularity found, against an offender of art. 24
  issue_notice         a non-recidivist gets 72 hours to repair (art. 27-28)
  register_*_delivery  by hand, mail (AR) or public notice: the presumed receipt
  mark_repaired        repaired in time: no penalty (art. 27)
  draw_up_record       the auto de infração: entries of the table (art. 23), cumulative
                       (art. 30 §3), doubled for recidivism (art. 30), aggravated for obstruction
                       (art. 26 I), signed or certified (art. 36 sole §)
  file_appeal / decide_appeal        30 days from receipt (Lei 3.190/2013 art. 13)
  register_payment / send_to_divida_ativa   30 days from the record, UFESP of the payment date
                       (art. 36); unpaid to Dívida Ativa (art. 22 IV)
  apply_embargo / register_embargo_breach / lift_penalty   (art. 25 II, art. 31)
  apply_seizure / register_seizure_costs / release_seizure (art. 25 III, art. 32)
  apply_suspension (≤ 15 days, art. 25 IV) / apply_revocation (art. 25 V, art. 34)

Deadlines come from fiscalization.deadlines, amounts from fiscalization.fines.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from decimal import Decimal

from django.contrib.gis.geos import Point
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone

from config.errors import DomainError
from ctr.documents import normalize_document
from ctr.models import Generator, RegistrationStatus, Transporter, Worksite
from ctr.reports import br_date, br_money, br_number
from pev_network.models import FacilityLicense, LicenseStatus, Municipality, ReceivingFacility

from . import deadlines, fines
from .models.enforcement import (
    FINAL_RECORD_STATUSES,
    Appeal,
    CaseStatus,
    DeliveryMethod,
    EmbargoBreach,
    EnforcementCase,
    EnforcementSequence,
    InfractionItem,
    InfractionRecord,
    MunicipalHoliday,
    Notice,
    Offender,
    OffenderRole,
    Penalty,
    PenaltyKind,
    PenaltyTableEntry,
    RecordStatus,
)
from .models.reports import DumpingReport

ONE_DAY = datetime.timedelta(days=1)

# Which link an offender of each role of art. 24 may have: the transporter for the driver or
# vehicle owner and the company's director (III-IV), the facility for its owner, operator or
# technical responsible (V), the generator for the property's people (I-II).
ROLE_LINKS = {
    OffenderRole.PROPERTY: "generator",
    OffenderRole.REPRESENTATIVE: "generator",
    OffenderRole.DRIVER: "transporter",
    OffenderRole.TRANSPORT_DIRECTOR: "transporter",
    OffenderRole.FACILITY: "facility",
}
LINK_LABELS = {
    "generator": "gerador",
    "transporter": "transportador",
    "facility": "área de recepção",
}

# Documents numbered per municipality and year: FISC-3518404-2026-000001.
CASE, NOTICE, RECORD = "FISC", "NOT", "AI"


class EnforcementError(DomainError):
    """A step of the enforcement procedure refused."""


# --- numbering, calendar ----------------------------------------------------------------------


def next_number(municipality: Municipality, year: int, kind: str) -> str:
    """The next number of `kind` in the municipality and year, inside the caller's transaction
    (an upsert on EnforcementSequence: no gaps, no duplicates; as ctr.services.next_number)."""
    table = EnforcementSequence._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {table} (municipality_id, year, kind, last_value) VALUES (%s, %s, %s, 1)
            ON CONFLICT (municipality_id, year, kind)
            DO UPDATE SET last_value = {table}.last_value + 1
            RETURNING last_value
            """,
            [municipality.pk, year, kind],
        )
        sequence = cursor.fetchone()[0]
    return f"{kind}-{municipality.ibge_code}-{year}-{sequence:06d}"


def calendar_for(municipality: Municipality) -> deadlines.WorkCalendar:
    """Working days in the municipality: national, state (its UF) and municipal holidays."""
    dates, yearly = set(), set()
    for day, every_year in MunicipalHoliday.objects.filter(municipality=municipality).values_list(
        "day", "yearly"
    ):
        if every_year:
            yearly.add((day.month, day.day))
        else:
            dates.add(day)
    return deadlines.WorkCalendar.with_holidays(dates, yearly, subdivision=municipality.uf or "SP")


def _local_now() -> datetime.datetime:
    return timezone.localtime()


def _today() -> datetime.date:
    return timezone.localdate()


# --- who is a recidivist, who was suspended ---------------------------------------------------


def earlier_final_records(case: EnforcementCase) -> QuerySet:
    """Records against the same offender document in the municipality, drawn up before this
    case was opened and final now (upheld, paid or in Dívida Ativa). An annulled record, one
    under appeal, or one still open to appeal does not make a recidivist (art. 26 II, art. 30)."""
    return InfractionRecord.objects.filter(
        case__offender__document=case.offender.document,
        case__municipality=case.municipality,
        status__in=FINAL_RECORD_STATUSES,
        drawn_up_at__lt=case.opened_at,
    ).exclude(case=case)


def is_recidivist(case: EnforcementCase) -> bool:
    return earlier_final_records(case).exists()


def earlier_suspension(case: EnforcementCase) -> Penalty | None:
    """A suspension (art. 25 IV) already applied to the same offender document before this
    case's infraction: the new infraction calls for revocation (art. 34)."""
    return (
        Penalty.objects.filter(
            kind=PenaltyKind.SUSPENSION,
            record__case__offender__document=case.offender.document,
            record__case__municipality=case.municipality,
            starts_on__lte=deadlines.local_date(case.opened_at),
        )
        .exclude(record__status=RecordStatus.ANNULLED)
        .exclude(record__case=case)
        .order_by("-starts_on")
        .first()
    )


# --- deadlines of a notice and of a record ----------------------------------------------------


def receipt_of(document: Notice | InfractionRecord) -> deadlines.Receipt | None:
    """The presumed receipt of a notice or record, None while its delivery is not registered."""
    if document.delivered_on is None:
        return None
    return deadlines.presumed_receipt(
        document.delivery_method, document.delivered_on, calendar_for(document.case.municipality)
    )


def notice_due(notice: Notice) -> datetime.datetime | None:
    """When the 72 hours to repair end (art. 28 §1), None while not delivered."""
    receipt = receipt_of(notice)
    return deadlines.repair_deadline(receipt) if receipt else None


def appeal_last_day(record: InfractionRecord) -> datetime.date | None:
    receipt = receipt_of(record)
    return deadlines.appeal_last_day(receipt) if receipt else None


def _upheld_on(record: InfractionRecord) -> datetime.date | None:
    if not _has_appeal(record):
        return None
    return record.appeal.decided_on if record.appeal.upheld else None


def _has_appeal(record: InfractionRecord) -> bool:
    try:
        record.appeal  # noqa: B018 (the reverse one-to-one raises when absent)
    except Appeal.DoesNotExist:
        return False
    return True


def payment_last_day(record: InfractionRecord) -> datetime.date:
    return deadlines.payment_last_day(record.drawn_up_at, _upheld_on(record))


def paid_late(record: InfractionRecord) -> bool:
    return record.paid_on is not None and record.paid_on > payment_last_day(record)


def record_fine(record: InfractionRecord) -> fines.Fine:
    """The record's fine as drawn up: its items' fines, recidivism, obstruction."""
    return fines.record_fine(
        [item.fine_ufesp for item in record.items.all()],
        record.recidivist,
        record.obstruction_multiplier,
    )


def embargo_fine_ufesp(penalty: Penalty) -> Decimal:
    return fines.embargo_fine(penalty.breaches.count())


# --- opening a case ---------------------------------------------------------------------------


@dataclass
class OffenderData:
    name: str
    document: str
    role: str
    address: str = ""
    transporter: Transporter | None = None
    facility: ReceivingFacility | None = None
    generator: Generator | None = None


def _offender(data: OffenderData) -> Offender:
    try:
        document = normalize_document(data.document)
    except ValidationError as exc:
        raise EnforcementError(exc.messages[0], "document", "document") from None
    if data.role not in OffenderRole.values:
        raise EnforcementError("Escolha o papel do infrator (art. 24 I-V).", "role", "role")
    allowed = ROLE_LINKS[OffenderRole(data.role)]
    for link in ("transporter", "facility", "generator"):
        if getattr(data, link) is not None and link != allowed:
            raise EnforcementError(
                f"O infrator no papel “{OffenderRole(data.role).label}” (art. 24) não pode ser "
                f"vinculado a um {LINK_LABELS[link]}.",
                "role_link",
                link,
            )
    if not data.name.strip():
        raise EnforcementError("Informe o nome do infrator.", "name", "name")
    offender, _ = Offender.objects.update_or_create(
        document=document,
        role=data.role,
        transporter=data.transporter,
        facility=data.facility,
        generator=data.generator,
        defaults={"name": data.name.strip(), "address": data.address.strip()},
    )
    return offender


@transaction.atomic
def open_case(
    *,
    municipality: Municipality,
    inspector,
    offender: OffenderData,
    description: str,
    location: Point | None = None,
    worksite: Worksite | None = None,
    dumping_report: DumpingReport | None = None,
    obstructed_inspection: bool = False,
    opened_at: datetime.datetime | None = None,
) -> EnforcementCase:
    """A case for an irregularity found by the inspection (art. 22), against one offender."""
    if not description.strip():
        raise EnforcementError(
            "Descreva a irregularidade constatada.", "description", "description"
        )
    opened_at = opened_at or _local_now()
    if opened_at > timezone.now() + datetime.timedelta(minutes=5):
        raise EnforcementError("A data da constatação está no futuro.", "future", "opened_at")
    person = _offender(offender)
    return EnforcementCase.objects.create(
        number=next_number(municipality, deadlines.local_date(opened_at).year, CASE),
        municipality=municipality,
        offender=person,
        inspector=inspector,
        opened_at=opened_at,
        description=description.strip(),
        location=location,
        worksite=worksite,
        dumping_report=dumping_report,
        obstructed_inspection=obstructed_inspection,
    )


# --- the notice to repair (art. 27-29) --------------------------------------------------------


def _lock_case(case: EnforcementCase) -> EnforcementCase:
    return (
        EnforcementCase.objects.select_for_update(of=("self",))
        .select_related("offender", "municipality")
        .get(pk=case.pk)
    )


@transaction.atomic
def issue_notice(
    case: EnforcementCase,
    required_action: str,
    delivery_method: str,
    issued_at: datetime.datetime | None = None,
) -> Notice:
    """Notificação to repair within 72 hours, for a non-recidivist only (art. 28)."""
    case = _lock_case(case)
    if case.status != CaseStatus.OPEN:
        raise EnforcementError(
            f"O processo está “{case.get_status_display()}”: a notificação é o primeiro ato "
            "depois da constatação.",
            "status",
        )
    earlier = earlier_final_records(case).order_by("-drawn_up_at").first()
    if earlier is not None:
        raise EnforcementError(
            f"O infrator é reincidente (auto {earlier.number}, definitivo): o direito de reparar o "
            "dano é só do infrator não reincidente (art. 28). Lavre o auto de infração.",
            "recidivist",
        )
    if delivery_method not in DeliveryMethod.values:
        raise EnforcementError("Escolha a forma de entrega.", "delivery_method", "delivery_method")
    if not required_action.strip():
        raise EnforcementError(
            "Diga o que o infrator deve fazer para reparar o dano.",
            "required_action",
            "required_action",
        )
    issued_at = issued_at or _local_now()
    if issued_at < case.opened_at:
        raise EnforcementError("A notificação não pode ser anterior à constatação.", "date")
    notice = Notice.objects.create(
        case=case,
        number=next_number(case.municipality, deadlines.local_date(issued_at).year, NOTICE),
        issued_at=issued_at,
        delivery_method=delivery_method,
        required_action=required_action.strip(),
    )
    case.status = CaseStatus.NOTIFIED
    case.save(update_fields=["status"])
    return notice


def _check_delivery(document, delivered_on: datetime.datetime, issued: datetime.datetime) -> None:
    if delivered_on > timezone.now() + datetime.timedelta(minutes=5):
        raise EnforcementError("A data de entrega está no futuro.", "future", "delivered_on")
    if deadlines.local_date(delivered_on) < deadlines.local_date(issued):
        raise EnforcementError(
            "A entrega não pode ser anterior à emissão do documento.", "date", "delivered_on"
        )


@transaction.atomic
def register_notice_delivery(notice: Notice, delivered_on: datetime.datetime) -> Notice:
    """The date of the signed receipt (by hand, with the hour), of the returned AR (mail) or of
    the publication (public notice, art. 28 §2): the 72 hours run from the presumed receipt."""
    notice = Notice.objects.select_for_update(of=("self",)).select_related("case").get(pk=notice.pk)
    if notice.case.status != CaseStatus.NOTIFIED or notice.repaired_at:
        raise EnforcementError(
            "A entrega só pode ser registrada enquanto a notificação está em curso.", "status"
        )
    _check_delivery(notice, delivered_on, notice.issued_at)
    notice.delivered_on = delivered_on
    notice.save(update_fields=["delivered_on"])
    return notice


@transaction.atomic
def mark_repaired(notice: Notice, repaired_at: datetime.datetime | None = None) -> Notice:
    """The offender repaired the damage. In time (art. 28 §1): the case ends without penalty
    (art. 27). Late: it is noted, and the record may still be drawn up (art. 29)."""
    notice = Notice.objects.select_for_update(of=("self",)).select_related("case").get(pk=notice.pk)
    case = _lock_case(notice.case)
    if case.status != CaseStatus.NOTIFIED:
        raise EnforcementError("Esta notificação não está mais em curso.", "status")
    due = notice_due(notice)
    if due is None:
        raise EnforcementError(
            "Registre antes a entrega da notificação: o prazo conta do recebimento.",
            "not_delivered",
        )
    repaired_at = repaired_at or _local_now()
    if repaired_at > timezone.now() + datetime.timedelta(minutes=5):
        raise EnforcementError("A data da reparação está no futuro.", "future", "repaired_at")
    if repaired_at < notice.issued_at:
        raise EnforcementError("A reparação não pode ser anterior à notificação.", "date")
    notice.repaired_at = repaired_at
    notice.save(update_fields=["repaired_at"])
    if repaired_at <= due:
        case.status = CaseStatus.REPAIRED
        case.save(update_fields=["status"])
    return notice


# --- the infraction record (auto de infração) -------------------------------------------------


def _live_notice(case: EnforcementCase) -> Notice | None:
    return case.notices.order_by("-issued_at").first()


@transaction.atomic
def draw_up_record(
    case: EnforcementCase,
    entries: list[PenaltyTableEntry],
    *,
    delivery_method: str,
    signed_by_offender: bool = False,
    no_signature_reason: str = "",
    drawn_up_at: datetime.datetime | None = None,
) -> InfractionRecord:
    """Auto de infração for one or more lines of the table (art. 23). The fine adds the lines
    up (art. 30 §3), is doubled for a recidivist (art. 30) and multiplied for obstruction
    (art. 26 I). A non-recidivist must first have had 72 hours to repair (art. 27-29). A new
    infraction after a suspension proposes revocation (art. 34). Signed by the offender or
    certified by the inspector (art. 36 sole §); handed over in the act when by hand."""
    case = _lock_case(case)
    drawn_up_at = drawn_up_at or _local_now()
    if case.status not in (CaseStatus.OPEN, CaseStatus.NOTIFIED):
        raise EnforcementError(
            f"O processo está “{case.get_status_display()}”: não cabe novo auto.", "status"
        )
    if drawn_up_at > timezone.now() + datetime.timedelta(minutes=5):
        raise EnforcementError("A data do auto está no futuro.", "future", "drawn_up_at")
    if drawn_up_at < case.opened_at:
        raise EnforcementError("O auto não pode ser anterior à constatação.", "date")
    recidivist = is_recidivist(case)
    if not recidivist:
        notice = _live_notice(case)
        if notice is None:
            raise EnforcementError(
                "Infrator não reincidente: notifique-o antes para reparar o dano em 72 horas "
                "(art. 27-28).",
                "notice_required",
            )
        due = notice_due(notice)
        if due is None:
            raise EnforcementError(
                f"Registre a entrega da notificação {notice.number}: o prazo de 72 horas só "
                "corre a partir do recebimento.",
                "notice_not_delivered",
            )
        if drawn_up_at <= due:
            raise EnforcementError(
                f"O prazo para reparar o dano vence em {deadlines.br_deadline(due)}: o auto só "
                "pode ser lavrado depois dele (art. 27).",
                "notice_running",
            )
        if notice.repaired_at and notice.repaired_at <= due:
            raise EnforcementError(
                "O dano foi reparado no prazo: não cabe penalidade (art. 27).", "repaired"
            )
    _check_entries(case, entries)
    if delivery_method not in DeliveryMethod.values:
        raise EnforcementError("Escolha a forma de entrega.", "delivery_method", "delivery_method")
    reason = no_signature_reason.strip()
    if not signed_by_offender and not reason:
        raise EnforcementError(
            "Sem a assinatura do infrator, certifique o motivo da falta (art. 36 p.ú.).",
            "signature",
            "no_signature_reason",
        )
    obstruction = fines.obstruction_multiplier() if case.obstructed_inspection else Decimal(1)
    fine = fines.record_fine([e.fine_ufesp for e in entries], recidivist, obstruction)
    record = InfractionRecord.objects.create(
        case=case,
        number=next_number(case.municipality, deadlines.local_date(drawn_up_at).year, RECORD),
        drawn_up_at=drawn_up_at,
        recidivist=recidivist,
        obstruction_multiplier=obstruction,
        total_ufesp=fine.total_ufesp,
        proposes_revocation=earlier_suspension(case) is not None,
        signed_by_offender=signed_by_offender,
        no_signature_reason="" if signed_by_offender else reason,
        delivery_method=delivery_method,
        # By hand the copy is handed over in the act (Lei 3.190/2013 art. 11 I).
        delivered_on=drawn_up_at if delivery_method == DeliveryMethod.HAND else None,
    )
    InfractionItem.objects.bulk_create(
        [InfractionItem(record=record, entry=e, fine_ufesp=e.fine_ufesp) for e in entries]
    )
    case.status = CaseStatus.RECORDED
    case.save(update_fields=["status"])
    return record


def _check_entries(case: EnforcementCase, entries: list[PenaltyTableEntry]) -> None:
    if not entries:
        raise EnforcementError(
            "Escolha ao menos uma infração da tabela (art. 23).", "entries", "entries"
        )
    if len({e.pk for e in entries}) != len(entries):
        raise EnforcementError("A mesma infração foi escolhida duas vezes.", "entries", "entries")
    role = case.offender.role
    for entry in entries:
        if not entry.active:
            raise EnforcementError(
                f"A infração {entry.code} não está vigente na tabela.", "entries", "entries"
            )
        if entry.offender_roles and role not in entry.offender_roles:
            raise EnforcementError(
                f"A infração {entry.code} não se aplica a “{OffenderRole(role).label}” (art. 24).",
                "entries",
                "entries",
            )


@transaction.atomic
def register_record_delivery(
    record: InfractionRecord, delivered_on: datetime.datetime
) -> InfractionRecord:
    """Delivery of the record by mail (AR date) or public notice (publication date); by hand it
    was delivered when drawn up. The 30 days to appeal run from the presumed receipt."""
    record = InfractionRecord.objects.select_for_update().get(pk=record.pk)
    if record.status != RecordStatus.ISSUED:
        raise EnforcementError(
            f"O auto está “{record.get_status_display()}”: a entrega não pode mais mudar.",
            "status",
        )
    _check_delivery(record, delivered_on, record.drawn_up_at)
    record.delivered_on = delivered_on
    record.save(update_fields=["delivered_on"])
    return record


# --- appeal (Lei 3.190/2013 art. 13-14, same procedure family) --------------------------------


@transaction.atomic
def file_appeal(record: InfractionRecord, filed_on: datetime.date, text: str) -> Appeal:
    """Recurso within 30 calendar days of receiving the record: day 30 in time, day 31 not."""
    record = InfractionRecord.objects.select_for_update().get(pk=record.pk)
    if record.status != RecordStatus.ISSUED:
        raise EnforcementError(
            f"O auto está “{record.get_status_display()}”: não cabe recurso.", "status"
        )
    receipt = receipt_of(record)
    if receipt is None:
        raise EnforcementError(
            "Registre antes a entrega do auto: o prazo de recurso conta do recebimento.",
            "not_delivered",
        )
    if filed_on > _today():
        raise EnforcementError("A data do recurso está no futuro.", "future", "filed_on")
    if filed_on < receipt.receipt_day:
        raise EnforcementError(
            "O recurso não pode ser anterior ao recebimento do auto.", "date", "filed_on"
        )
    last = deadlines.appeal_last_day(receipt)
    if filed_on > last:
        raise EnforcementError(
            f"Recurso fora do prazo: os 30 dias corridos contados do recebimento terminaram em "
            f"{br_date(last)} (Lei 3.190/2013 art. 13).",
            "appeal_late",
            "filed_on",
        )
    if not text.strip():
        raise EnforcementError("Transcreva ou resuma as razões do recurso.", "text", "text")
    appeal = Appeal.objects.create(record=record, filed_on=filed_on, text=text.strip())
    record.status = RecordStatus.APPEALED
    record.save(update_fields=["status"])
    return appeal


@transaction.atomic
def decide_appeal(
    record: InfractionRecord, decided_on: datetime.date, upheld: bool, decision: str
) -> Appeal:
    """Upheld: the record stands and is final (the fine is due 30 days after the decision).
    Not upheld: the record is annulled and its penalties fall."""
    record = InfractionRecord.objects.select_for_update().get(pk=record.pk)
    if record.status != RecordStatus.APPEALED:
        raise EnforcementError("Não há recurso pendente neste auto.", "status")
    appeal = Appeal.objects.select_for_update().get(record=record)
    if decided_on < appeal.filed_on:
        raise EnforcementError("A decisão não pode ser anterior ao recurso.", "date", "decided_on")
    if decided_on > _today():
        raise EnforcementError("A data da decisão está no futuro.", "future", "decided_on")
    if not decision.strip():
        raise EnforcementError("Registre o teor da decisão.", "decision", "decision")
    appeal.decided_on, appeal.upheld, appeal.decision = decided_on, upheld, decision.strip()
    appeal.save(update_fields=["decided_on", "upheld", "decision"])
    record.status = RecordStatus.UPHELD if upheld else RecordStatus.ANNULLED
    record.save(update_fields=["status"])
    if not upheld:
        for penalty in record.penalties.filter(lifted_on__isnull=True):
            _end_penalty(penalty, decided_on)
    _close_if_settled(record.case, decided_on)
    return appeal


# --- payment, Dívida Ativa (art. 36, art. 22 IV) ----------------------------------------------


@transaction.atomic
def register_payment(record: InfractionRecord, paid_on: datetime.date) -> InfractionRecord:
    """The fine paid in reais at the UFESP of the payment date (art. 36). Paid after the 30th
    day it is late (paid_late), but still a payment while not sent to Dívida Ativa."""
    record = InfractionRecord.objects.select_for_update().get(pk=record.pk)
    if record.status == RecordStatus.APPEALED:
        raise EnforcementError(
            "O recurso está pendente: registre antes a decisão.", "appeal_pending"
        )
    if record.status not in (RecordStatus.ISSUED, RecordStatus.UPHELD):
        raise EnforcementError(
            f"O auto está “{record.get_status_display()}”: não cabe registrar pagamento.",
            "status",
        )
    if paid_on > _today():
        raise EnforcementError("A data do pagamento está no futuro.", "future", "paid_on")
    if paid_on < deadlines.local_date(record.drawn_up_at):
        raise EnforcementError("O pagamento não pode ser anterior ao auto.", "date", "paid_on")
    try:
        amount = fines.to_brl(record.total_ufesp, paid_on)
    except fines.UfespRateMissing as exc:
        # The same refusal as every other of the payment, on the field that carries the year.
        raise EnforcementError(exc.message, exc.code, "paid_on") from None
    record.paid_on, record.paid_brl, record.status = paid_on, amount, RecordStatus.PAID
    record.save(update_fields=["paid_on", "paid_brl", "status"])
    _close_if_settled(record.case, paid_on)
    return record


@transaction.atomic
def send_to_divida_ativa(record: InfractionRecord, on: datetime.date | None = None):
    """Unpaid after the 30 days (and with no appeal pending or possible): to Dívida Ativa
    (art. 22 IV)."""
    record = InfractionRecord.objects.select_for_update().get(pk=record.pk)
    on = on or _today()
    if record.status not in (RecordStatus.ISSUED, RecordStatus.UPHELD):
        raise EnforcementError(
            f"O auto está “{record.get_status_display()}”: não vai à Dívida Ativa.", "status"
        )
    last = payment_last_day(record)
    if on <= last:
        raise EnforcementError(
            f"O prazo de pagamento vai até {br_date(last)}: só depois o auto pode ser enviado "
            "à Dívida Ativa (art. 36, art. 22 IV).",
            "payment_running",
        )
    if record.status == RecordStatus.ISSUED:
        appeal_last = appeal_last_day(record)
        if appeal_last is None or on <= appeal_last:
            raise EnforcementError(
                "O prazo de recurso ainda corre (ou a entrega do auto não foi registrada): "
                "aguarde-o antes de enviar à Dívida Ativa.",
                "appeal_running",
            )
    record.status = RecordStatus.DIVIDA_ATIVA
    record.save(update_fields=["status"])
    _close_if_settled(record.case, on)
    return record


# --- penalties (art. 25 II-V, art. 31-34) -----------------------------------------------------


def _record_for_penalty(record: InfractionRecord, starts_on: datetime.date) -> InfractionRecord:
    record = (
        InfractionRecord.objects.select_for_update(of=("self",))
        .select_related("case__offender__transporter", "case__offender__facility")
        .get(pk=record.pk)
    )
    if record.status == RecordStatus.ANNULLED:
        raise EnforcementError("O auto foi anulado: não cabe penalidade.", "annulled")
    if starts_on < deadlines.local_date(record.drawn_up_at):
        raise EnforcementError(
            "A penalidade não pode começar antes do auto de infração.", "date", "starts_on"
        )
    return record


@transaction.atomic
def apply_embargo(record: InfractionRecord, starts_on: datetime.date, details: str) -> Penalty:
    """Embargo of the worksite (art. 25 II); disobeyed, a daily fine of one UFESP (art. 31)."""
    record = _record_for_penalty(record, starts_on)
    if not details.strip():
        raise EnforcementError("Identifique a obra embargada.", "details", "details")
    return Penalty.objects.create(
        record=record, kind=PenaltyKind.EMBARGO, starts_on=starts_on, details=details.strip()
    )


@transaction.atomic
def register_embargo_breach(penalty: Penalty, day: datetime.date, note: str = "") -> EmbargoBreach:
    """A day on which the embargo was found disobeyed: one UFESP (art. 31)."""
    penalty = Penalty.objects.select_for_update().get(pk=penalty.pk)
    if penalty.kind != PenaltyKind.EMBARGO:
        raise EnforcementError("Descumprimento só se registra em embargo.", "kind")
    if day < penalty.starts_on or (penalty.lifted_on and day >= penalty.lifted_on):
        raise EnforcementError("Nesse dia o embargo não estava em vigor.", "date", "day")
    if day > _today():
        raise EnforcementError("O dia do descumprimento está no futuro.", "future", "day")
    try:
        with transaction.atomic():
            return EmbargoBreach.objects.create(penalty=penalty, day=day, note=note.strip())
    except IntegrityError:
        raise EnforcementError(
            f"O descumprimento de {br_date(day)} já foi registrado.", "duplicate", "day"
        ) from None


@transaction.atomic
def apply_seizure(record: InfractionRecord, starts_on: datetime.date, details: str) -> Penalty:
    """Seizure of equipment (art. 25 III), kept where the municipality defines (art. 32)."""
    record = _record_for_penalty(record, starts_on)
    if not details.strip():
        raise EnforcementError(
            "Liste os equipamentos apreendidos e onde ficam guardados.", "details", "details"
        )
    return Penalty.objects.create(
        record=record, kind=PenaltyKind.SEIZURE, starts_on=starts_on, details=details.strip()
    )


@transaction.atomic
def register_seizure_costs(
    penalty: Penalty, custody_costs_brl: Decimal, paid_on: datetime.date | None
) -> Penalty:
    """The costs of seizure, removal and custody, computed and (when paid) their payment."""
    penalty = Penalty.objects.select_for_update().get(pk=penalty.pk)
    if penalty.kind != PenaltyKind.SEIZURE:
        raise EnforcementError("Custos de guarda só existem na apreensão.", "kind")
    if penalty.lifted_on:
        raise EnforcementError("Os equipamentos já foram liberados.", "released")
    if custody_costs_brl is None or custody_costs_brl < 0:
        raise EnforcementError("Informe o valor dos custos.", "costs", "custody_costs_brl")
    if paid_on is not None and (paid_on < penalty.starts_on or paid_on > _today()):
        raise EnforcementError(
            "A data do pagamento dos custos está fora do período da apreensão.", "date", "paid_on"
        )
    penalty.custody_costs_brl, penalty.costs_paid_on = custody_costs_brl, paid_on
    penalty.save(update_fields=["custody_costs_brl", "costs_paid_on"])
    return penalty


@transaction.atomic
def release_seizure(penalty: Penalty, on: datetime.date, irregularity_fixed: bool) -> Penalty:
    """Release of seized equipment: only once the irregularity is fixed and the costs of
    seizure, removal and custody are paid (art. 32 sole §)."""
    penalty = (
        Penalty.objects.select_for_update(of=("self",))
        .select_related("record__case")
        .get(pk=penalty.pk)
    )
    if penalty.kind != PenaltyKind.SEIZURE:
        raise EnforcementError("Só equipamentos apreendidos são liberados.", "kind")
    if penalty.lifted_on:
        raise EnforcementError("Os equipamentos já foram liberados.", "released")
    if not irregularity_fixed:
        raise EnforcementError(
            "A liberação exige que a irregularidade objeto do auto tenha sido sanada "
            "(art. 32 p.ú.).",
            "not_fixed",
            "irregularity_fixed",
        )
    if penalty.custody_costs_brl is None or penalty.costs_paid_on is None:
        raise EnforcementError(
            "A liberação exige o recolhimento dos custos de apreensão, remoção e guarda "
            "(art. 32 p.ú.): registre antes o valor e o pagamento.",
            "costs_unpaid",
        )
    if on < penalty.costs_paid_on or on > _today():
        raise EnforcementError(
            "A liberação deve ser posterior ao pagamento dos custos e não futura.", "date", "on"
        )
    penalty.lifted_on = on
    penalty.save(update_fields=["lifted_on"])
    _close_if_settled(penalty.record.case, on)
    return penalty


@transaction.atomic
def apply_suspension(
    record: InfractionRecord, starts_on: datetime.date, days: int, details: str = ""
) -> Penalty:
    """Suspension of the activity for up to 15 days (art. 25 IV). A transporter offender is
    SUSPENDED from `starts_on` to the last day (rule TRANSPORTER_SUSPENDED); a facility's
    licenses in force are SUSPENDED from `starts_on` (rule FACILITY_NOT_LICENSED)."""
    if days < 1 or days > deadlines.SUSPENSION_MAX_DAYS:
        raise EnforcementError(
            f"A suspensão dura de 1 a {deadlines.SUSPENSION_MAX_DAYS} dias (art. 25 IV): "
            f"{days} dias não é possível.",
            "suspension_too_long",
            "days",
        )
    record = _record_for_penalty(record, starts_on)
    ends_on = deadlines.suspension_end(starts_on, days)
    offender = record.case.offender
    if offender.transporter_id:
        current = offender.transporter.restricted_on(starts_on)
        if current is not None:
            label = RegistrationStatus(current).label.lower()
            raise EnforcementError(
                f"O transportador já está {label} em {br_date(starts_on)}.", "already_restricted"
            )
    penalty = Penalty.objects.create(
        record=record,
        kind=PenaltyKind.SUSPENSION,
        starts_on=starts_on,
        ends_on=ends_on,
        details=details.strip(),
    )
    _restrict(offender, PenaltyKind.SUSPENSION, starts_on, ends_on)
    return penalty


@transaction.atomic
def apply_revocation(
    record: InfractionRecord, starts_on: datetime.date, details: str = ""
) -> Penalty:
    """Revocation of the permit (art. 25 V), the due penalty for a new infraction after a
    suspension (art. 34): the transporter is REVOKED, the facility's licenses in force too."""
    record = _record_for_penalty(record, starts_on)
    if record.penalties.filter(kind=PenaltyKind.REVOCATION).exists():
        raise EnforcementError("A cassação já foi aplicada neste auto.", "duplicate")
    penalty = Penalty.objects.create(
        record=record, kind=PenaltyKind.REVOCATION, starts_on=starts_on, details=details.strip()
    )
    _restrict(record.case.offender, PenaltyKind.REVOCATION, starts_on, None)
    return penalty


@transaction.atomic
def lift_penalty(penalty: Penalty, on: datetime.date) -> Penalty:
    """Cancel an embargo (the offender complied, art. 31 sole §) or lift a suspension early:
    from `on` the transporter or facility works again. Seized equipment is released with
    release_seizure; a revocation falls only with the annulment of the record."""
    penalty = (
        Penalty.objects.select_for_update(of=("self",))
        .select_related("record__case__offender__transporter", "record__case__offender__facility")
        .get(pk=penalty.pk)
    )
    if penalty.kind == PenaltyKind.SEIZURE:
        raise EnforcementError(
            "Equipamentos apreendidos são liberados pela liberação (art. 32 p.ú.).", "kind"
        )
    if penalty.kind == PenaltyKind.REVOCATION:
        raise EnforcementError(
            "A cassação só deixa de valer com a anulação do auto em recurso.", "kind"
        )
    if penalty.lifted_on:
        raise EnforcementError("A penalidade já foi levantada.", "lifted")
    if penalty.kind == PenaltyKind.SUSPENSION and penalty.ends_on < on:
        raise EnforcementError(
            f"A suspensão já terminou em {br_date(penalty.ends_on)}.", "ended", "on"
        )
    if on > _today():
        raise EnforcementError("A data do levantamento está no futuro.", "future", "on")
    _end_penalty(penalty, on)
    _close_if_settled(penalty.record.case, on)
    return penalty


def _end_penalty(penalty: Penalty, on: datetime.date) -> None:
    penalty.lifted_on = on
    penalty.save(update_fields=["lifted_on"])
    if penalty.kind in (PenaltyKind.SUSPENSION, PenaltyKind.REVOCATION):
        _unrestrict(penalty, on)


def _restrict(
    offender: Offender, kind: str, starts_on: datetime.date, ends_on: datetime.date | None
) -> None:
    """The effect of a suspension or revocation on the CTR rules, from `starts_on`."""
    status = (
        RegistrationStatus.SUSPENDED
        if kind == PenaltyKind.SUSPENSION
        else RegistrationStatus.REVOKED
    )
    if offender.transporter_id:
        Transporter.objects.filter(pk=offender.transporter_id).update(
            status=status, status_since=starts_on, suspended_until=ends_on
        )
    if offender.facility_id:
        # The licenses in force that day; a license's status has no end date, so the end of a
        # suspension is applied by restore_ended_suspensions (enforcement_deadlines --apply).
        FacilityLicense.objects.valid_on(starts_on).filter(facility_id=offender.facility_id).update(
            status=LicenseStatus(status.value), status_since=starts_on
        )


def _unrestrict(penalty: Penalty, on: datetime.date) -> None:
    """Undo _restrict from `on`: the transporter or facility may work on `on`."""
    offender = penalty.record.case.offender
    status = (
        RegistrationStatus.SUSPENDED
        if penalty.kind == PenaltyKind.SUSPENSION
        else RegistrationStatus.REVOKED
    )
    if offender.transporter_id:
        transporter = Transporter.objects.select_for_update().get(pk=offender.transporter_id)
        # Only if it is still this penalty that holds the transporter.
        if transporter.status == status and transporter.status_since == penalty.starts_on:
            if on <= penalty.starts_on or status == RegistrationStatus.REVOKED:
                transporter.status = RegistrationStatus.ACTIVE
                transporter.status_since = None
                transporter.suspended_until = None
            else:
                # Still SUSPENDED for the days served: restricted_on() honours suspended_until.
                transporter.suspended_until = min(penalty.ends_on, on - ONE_DAY)
            transporter.save(update_fields=["status", "status_since", "suspended_until"])
    if offender.facility_id:
        _restore_licenses(offender.facility_id, status, penalty.starts_on)


def _restore_licenses(facility_id: int, status: str, since: datetime.date) -> int:
    # FacilityLicense keeps one status: restoring ACTIVE forgets the suspended days.
    return FacilityLicense.objects.filter(
        facility_id=facility_id, status=status, status_since=since
    ).update(status=LicenseStatus.ACTIVE, status_since=None)


def ended_facility_suspensions(today: datetime.date) -> QuerySet:
    """Suspensions of facilities whose last day has passed and whose licenses are still
    suspended by them."""
    still_suspended = FacilityLicense.objects.filter(
        facility_id=OuterRef("record__case__offender__facility_id"),
        status=LicenseStatus.SUSPENDED,
        status_since=OuterRef("starts_on"),
    )
    return (
        Penalty.objects.filter(
            kind=PenaltyKind.SUSPENSION,
            ends_on__lt=today,
            lifted_on__isnull=True,
            record__case__offender__facility__isnull=False,
        )
        .filter(Exists(still_suspended))
        .select_related("record__case__offender__facility")
    )


@transaction.atomic
def restore_ended_suspensions(today: datetime.date | None = None) -> list[Penalty]:
    """Give back the licenses of facilities whose suspension is over (the transporter needs
    nothing: suspended_until already ends it)."""
    today = today or _today()
    restored = []
    for penalty in ended_facility_suspensions(today):
        facility_id = penalty.record.case.offender.facility_id
        if _restore_licenses(facility_id, LicenseStatus.SUSPENDED, penalty.starts_on):
            restored.append(penalty)
        _close_if_settled(penalty.record.case, today)
    return restored


# --- closing ----------------------------------------------------------------------------------


def _penalty_pending(penalty: Penalty, today: datetime.date) -> bool:
    if penalty.lifted_on:
        return False
    if penalty.kind == PenaltyKind.SUSPENSION:
        return penalty.ends_on >= today
    return penalty.kind in (PenaltyKind.EMBARGO, PenaltyKind.SEIZURE)


def _close_if_settled(case: EnforcementCase, today: datetime.date) -> bool:
    """Close the case when its record is paid, annulled or in Dívida Ativa and no embargo,
    seizure or suspension is pending."""
    given, case = case, EnforcementCase.objects.select_for_update().get(pk=case.pk)
    if case.status != CaseStatus.RECORDED:
        return False
    records = list(case.records.all())
    done = (RecordStatus.PAID, RecordStatus.ANNULLED, RecordStatus.DIVIDA_ATIVA)
    if not records or any(r.status not in done for r in records):
        return False
    for record in records:
        if record.status == RecordStatus.ANNULLED:
            continue
        if any(_penalty_pending(p, today) for p in record.penalties.all()):
            return False
    case.status = given.status = CaseStatus.CLOSED
    case.save(update_fields=["status"])
    return True


# --- the timeline of a case -------------------------------------------------------------------


@dataclass
class Step:
    """A line of the timeline: something that happened, or a deadline."""

    when: datetime.datetime | datetime.date
    label: str
    detail: str = ""
    legal: str = ""
    # event | met (deadline met) | pending (running) | expired (passed, not met)
    state: str = "event"

    @property
    def is_deadline(self) -> bool:
        return self.state != "event"

    @property
    def sort_key(self) -> datetime.datetime:
        if isinstance(self.when, datetime.datetime):
            return self.when
        # A day's deadline sorts at its end, a day's event at its start.
        start = deadlines.start_of_day(self.when)
        return start + ONE_DAY - datetime.timedelta(seconds=1) if self.is_deadline else start

    @property
    def when_text(self) -> str:
        if isinstance(self.when, datetime.datetime):
            if self.is_deadline:
                return deadlines.br_deadline(self.when)
            return timezone.localtime(self.when).strftime("%d/%m/%Y %H:%M")
        return br_date(self.when)


@dataclass
class Timeline:
    steps: list[Step] = field(default_factory=list)
    next_due: list[str] = field(default_factory=list)


def _deadline_state(done: bool, due_passed: bool) -> str:
    if done:
        return "met"
    return "expired" if due_passed else "pending"


def case_timeline(case: EnforcementCase, now: datetime.datetime | None = None) -> Timeline:
    """Everything that happened in the case, every deadline with its state, and what is due
    next, as of `now`."""
    now = now or timezone.now()
    today = deadlines.local_date(now)
    tl = Timeline()
    add = tl.steps.append
    offender = case.offender
    add(
        Step(
            case.opened_at,
            "Irregularidade constatada; processo aberto",
            f"{offender.name} — {offender.get_role_display()} (art. 24)",
            "art. 21-22",
        )
    )
    if case.obstructed_inspection:
        add(Step(case.opened_at, "Embaraço à fiscalização registrado", "", "art. 26 I"))

    recidivist = is_recidivist(case)
    notices = list(case.notices.order_by("issued_at"))
    for notice in notices:
        add(
            Step(
                notice.issued_at,
                f"Notificação {notice.number} emitida ({notice.get_delivery_method_display()})",
                notice.required_action,
                "art. 28",
            )
        )
        receipt = receipt_of(notice)
        if receipt is None:
            if case.status == CaseStatus.NOTIFIED:
                tl.next_due.append(
                    f"Registrar a entrega da notificação {notice.number} "
                    "(recibo, AR ou publicação do edital)."
                )
            continue
        add(Step(notice.delivered_on, _delivery_label(notice), _receipt_detail(receipt)))
        due = deadlines.repair_deadline(receipt)
        in_time = notice.repaired_at is not None and notice.repaired_at <= due
        add(
            Step(
                due,
                "Prazo de 72 horas para reparar o dano",
                "",
                "art. 28 §1",
                _deadline_state(in_time, now > due),
            )
        )
        if notice.repaired_at:
            add(
                Step(
                    notice.repaired_at,
                    "Dano reparado" + ("" if in_time else " fora do prazo"),
                    "Sem penalidade (art. 27)." if in_time else "",
                )
            )
        if case.status == CaseStatus.NOTIFIED:
            if now <= due and not notice.repaired_at:
                tl.next_due.append(
                    f"Aguardar a reparação até {deadlines.br_deadline(due)} e vistoriar."
                )
            elif not in_time:
                tl.next_due.append(
                    "Prazo vencido sem reparação: lavrar o auto de infração (art. 29)."
                )

    if case.status == CaseStatus.OPEN:
        if recidivist:
            tl.next_due.append(
                "Infrator reincidente: lavrar o auto de infração, sem notificação prévia "
                "(art. 28); multa em dobro (art. 30)."
            )
        else:
            tl.next_due.append("Emitir a notificação para reparar o dano em 72 horas (art. 28).")

    for record in case.records.order_by("drawn_up_at").prefetch_related(
        "items__entry", "penalties__breaches"
    ):
        _record_steps(record, now, today, tl)

    if case.status == CaseStatus.REPAIRED:
        tl.next_due.append("Nada pendente: dano reparado no prazo.")
    elif case.status == CaseStatus.CLOSED:
        tl.next_due.append("Nada pendente: processo encerrado.")
    tl.steps.sort(key=lambda s: s.sort_key)
    return tl


def _delivery_label(document) -> str:
    return {
        DeliveryMethod.HAND: "Entregue pessoalmente (recibo)",
        DeliveryMethod.MAIL: "Recebida pelo correio (data do AR)",
        DeliveryMethod.PUBLIC_NOTICE: "Edital publicado na imprensa oficial",
    }[document.delivery_method]


def _receipt_detail(receipt: deadlines.Receipt) -> str:
    if receipt.method == DeliveryMethod.PUBLIC_NOTICE:
        return (
            f"Prazos contados a partir de {br_date(receipt.first_day)}, primeiro dia útil após a "
            "publicação (art. 28 §2)."
        )
    if receipt.method == DeliveryMethod.MAIL:
        return f"Recebimento presumido em {br_date(receipt.receipt_day)} (data do AR)."
    return "Recebimento na data e hora do recibo."


def _record_steps(
    record: InfractionRecord, now: datetime.datetime, today: datetime.date, tl: Timeline
) -> None:
    add = tl.steps.append
    fine = record_fine(record)
    detail = f"Multa de {br_number(record.total_ufesp, 2)} UFESP"
    if record.recidivist:
        detail += " (em dobro: reincidente)"
    if record.obstruction_multiplier > 1:
        detail += f" (× {br_number(fine.obstruction_factor)} por embaraço à fiscalização)"
    add(Step(record.drawn_up_at, f"Auto de infração {record.number} lavrado", detail, "art. 36"))
    if record.proposes_revocation:
        add(
            Step(
                record.drawn_up_at,
                "Nova infração após suspensão: cassação proposta",
                "",
                "art. 34",
            )
        )
        if not any(p.kind == PenaltyKind.REVOCATION for p in record.penalties.all()) and (
            record.status != RecordStatus.ANNULLED
        ):
            tl.next_due.append("Aplicar a cassação do alvará (art. 34, art. 25 V).")

    receipt = receipt_of(record)
    appeal = record.appeal if _has_appeal(record) else None
    if receipt is None:
        tl.next_due.append(
            f"Registrar a entrega do auto {record.number} (AR ou publicação do edital)."
        )
    else:
        if record.delivery_method != DeliveryMethod.HAND:
            add(Step(record.delivered_on, _delivery_label(record), _receipt_detail(receipt)))
        last = deadlines.appeal_last_day(receipt)
        add(
            Step(
                last,
                "Prazo de recurso (30 dias corridos do recebimento)",
                "",
                "Lei 3.190/2013 art. 13",
                _deadline_state(appeal is not None, today > last),
            )
        )
        if record.status == RecordStatus.ISSUED and today <= last:
            tl.next_due.append(f"Prazo de recurso até {br_date(last)}.")
    if appeal is not None:
        add(Step(appeal.filed_on, "Recurso apresentado", appeal.text[:200]))
        if appeal.decided_on:
            add(
                Step(
                    appeal.decided_on,
                    "Recurso decidido: auto " + ("mantido" if appeal.upheld else "anulado"),
                    appeal.decision[:200],
                )
            )
        else:
            tl.next_due.append("Decidir o recurso (Lei 3.190/2013 art. 14: em até 30 dias).")

    if record.status != RecordStatus.ANNULLED and not (appeal and appeal.decided_on is None):
        last_pay = payment_last_day(record)
        add(
            Step(
                last_pay,
                "Prazo de pagamento da multa (30 dias)",
                "Sem desconto por pagamento antecipado.",
                "art. 36",
                _deadline_state(
                    record.paid_on is not None and record.paid_on <= last_pay, today > last_pay
                ),
            )
        )
        if record.status in (RecordStatus.ISSUED, RecordStatus.UPHELD):
            if today <= last_pay:
                tl.next_due.append(f"Pagamento da multa até {br_date(last_pay)}.")
            elif record.status == RecordStatus.ISSUED and (
                receipt is None or today <= deadlines.appeal_last_day(receipt)
            ):
                tl.next_due.append(
                    f"Multa vencida em {br_date(last_pay)}: a Dívida Ativa espera o fim do prazo "
                    "de recurso."
                )
            else:
                tl.next_due.append("Multa não paga no prazo: enviar à Dívida Ativa (art. 22 IV).")
    if record.paid_on:
        late = " (fora do prazo)" if paid_late(record) else ""
        add(Step(record.paid_on, f"Multa paga{late}", br_money(record.paid_brl), "art. 36"))
    if record.status == RecordStatus.DIVIDA_ATIVA:
        add(
            Step(
                payment_last_day(record) + ONE_DAY,
                "Auto enviado à Dívida Ativa (após o vencimento)",
                "",
                "art. 22 IV",
            )
        )

    for penalty in record.penalties.all():
        _penalty_steps(penalty, today, tl, record.status == RecordStatus.ANNULLED)


def _penalty_steps(penalty: Penalty, today: datetime.date, tl: Timeline, annulled: bool) -> None:
    add = tl.steps.append
    legal = {
        PenaltyKind.EMBARGO: "art. 25 II, art. 31",
        PenaltyKind.SEIZURE: "art. 25 III, art. 32",
        PenaltyKind.SUSPENSION: "art. 25 IV",
        PenaltyKind.REVOCATION: "art. 25 V, art. 34",
    }[penalty.kind]
    # "Penalidade" carries the gender: an embargo is masculine, the other penalties feminine.
    applied = f"Penalidade aplicada: {penalty.get_kind_display()}"
    add(Step(penalty.starts_on, applied, penalty.details, legal))
    if penalty.kind == PenaltyKind.EMBARGO:
        breaches = list(penalty.breaches.all())
        for breach in breaches:
            add(
                Step(
                    breach.day,
                    "Embargo descumprido: multa diária de 1 UFESP",
                    breach.note,
                    "art. 31",
                )
            )
        if breaches:
            tl.next_due.append(
                f"Multa diária por descumprimento do embargo: {len(breaches)} dia(s) = "
                f"{br_number(fines.embargo_fine(len(breaches)))} UFESP (art. 31)."
            )
        if penalty.lifted_on:
            add(Step(penalty.lifted_on, "Embargo cancelado", "", "art. 31 p.ú."))
        elif not annulled:
            tl.next_due.append("Cancelar o embargo quando as exigências forem cumpridas.")
    elif penalty.kind == PenaltyKind.SEIZURE:
        if penalty.costs_paid_on:
            add(
                Step(
                    penalty.costs_paid_on,
                    "Custos de apreensão, remoção e guarda pagos",
                    br_money(penalty.custody_costs_brl),
                    "art. 32 p.ú.",
                )
            )
        if penalty.lifted_on:
            add(Step(penalty.lifted_on, "Equipamentos liberados", "", "art. 32 p.ú."))
        elif not annulled:
            tl.next_due.append(
                "Liberar os equipamentos quando sanada a irregularidade e pagos os custos "
                "(art. 32 p.ú.)."
            )
    elif penalty.kind == PenaltyKind.SUSPENSION:
        ended = penalty.lifted_on or (penalty.ends_on + ONE_DAY)
        add(
            Step(
                penalty.ends_on,
                "Último dia da suspensão",
                "",
                "art. 25 IV",
                "met" if penalty.lifted_on or today > penalty.ends_on else "pending",
            )
        )
        if penalty.lifted_on:
            add(Step(penalty.lifted_on, "Suspensão levantada", ""))
        if today < ended and not annulled:
            tl.next_due.append(
                f"Suspensão em vigor até {br_date(penalty.ends_on)}; depois, a atividade volta."
            )
    elif penalty.lifted_on:
        add(Step(penalty.lifted_on, "Cassação desfeita (auto anulado)", ""))


# --- what expires (manage.py enforcement_deadlines) ------------------------------------------


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
                    f"Notificação {notice.number}: 72 horas"
                    + (" (reparado fora do prazo)" if late else ""),
                    notice.case,
                    due < now,
                )
            )
    records = InfractionRecord.objects.filter(case__in=cases).select_related(
        "case__offender", "case__municipality"
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
        if last <= horizon:
            expired = today > last
            what = f"Auto {record.number}: pagamento de {br_number(record.total_ufesp, 2)} UFESP"
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
        if count:
            out["embargoes"].append(
                Due(
                    penalty.breaches.order_by("-day").first().day,
                    f"Embargo do auto {penalty.record.number} descumprido em {count} dia(s): "
                    f"{br_number(fines.embargo_fine(count))} UFESP (art. 31)",
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
