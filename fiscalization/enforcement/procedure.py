"""The procedure up to the infraction record (Lei 3.978/2007 art. 21-30, 36): the case, the
notice to repair and its delivery, the repair, the record and its delivery; and the closing of
a case once everything in it is settled."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from django.contrib.gis.geos import Point
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils import timezone

from ctr.documents import normalize_document
from ctr.models import Generator, Transporter, Worksite
from jurisdiction.scope import OutsideJurisdiction, ReadOnlyRole, jurisdiction_of, municipalities
from pev_network import services as network
from pev_network.models import Municipality, ReceivingFacility

from .. import deadlines, fines, penalty_table
from ..models.enforcement import (
    FAILURE_OUTCOMES,
    IMPRACTICABLE,
    INDIVIDUAL_DELIVERY,
    CaseStatus,
    DeliveryAttempt,
    DeliveryMethod,
    DeliveryOutcome,
    EnforcementCase,
    EnforcementSequence,
    InfractionItem,
    InfractionRecord,
    Notice,
    Offender,
    OffenderRole,
    Penalty,
    PenaltyKind,
    PenaltyTableEntry,
    RecordStatus,
)
from ..models.frameworks import Applier, NoticeFirst
from ..models.reports import DumpingReport
from .actions import check
from .authorship import capacity, sign, signed
from .errors import EnforcementError
from .facts import (
    charges_pending,
    earlier_final_records,
    earlier_suspension,
    notice_due,
    repair_owed,
    revocation_pending,
)
from .frameworks import framework_in_force

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


def facts_municipality(
    *,
    municipality: Municipality | None = None,
    location: Point | None = None,
    worksite: Worksite | None = None,
    dumping_report: DumpingReport | None = None,
    inspector=None,
) -> tuple[Municipality, str]:
    """The municipality where the facts happened, whose case it is (Lei 3.978/2007 art. 21-22,
    35), and the field it came from: the dumping report's, else the one
    whose boundary covers the location, else the worksite's, else the one named, else the one
    the inspector works in now. A municipality named that is not the facts' is refused: the
    case is not the inspector's to move."""
    found, field, why = None, "", ""
    if dumping_report is not None:
        found, field = dumping_report.municipality, "dumping_report"
        why = f"a denúncia {dumping_report.protocol} é de"
    elif location is not None:
        found, field, why = network.municipality_at(location), "location", "o local fica em"
        if found is None:
            raise EnforcementError(
                "O local informado fica fora dos municípios atendidos pela plataforma: confira "
                "a latitude e a longitude.",
                "location_outside",
                "location",
            )
    elif worksite is not None and worksite.municipality_id is not None:
        found, field, why = worksite.municipality, "worksite", "a obra fica em"
    if found is not None:
        if municipality is not None and municipality.pk != found.pk:
            raise EnforcementError(
                f"O processo é do município onde os fatos aconteceram, e {why} {found}, não "
                f"em {municipality} (Lei 3.978/2007 art. 35).",
                "other_municipality",
                "municipality",
            )
        return found, field
    if municipality is not None:
        return municipality, "municipality"
    current = jurisdiction_of(inspector).current_id
    found = municipalities().filter(pk=current).first() if current is not None else None
    if found is None:
        raise EnforcementError(
            "Informe o local da irregularidade: o processo é do município onde ela aconteceu.",
            "municipality",
            "location",
        )
    return found, "municipality"


@transaction.atomic
def open_case(
    *,
    municipality: Municipality | None = None,
    inspector,
    offender: OffenderData,
    description: str,
    location: Point | None = None,
    worksite: Worksite | None = None,
    dumping_report: DumpingReport | None = None,
    obstructed_inspection: bool = False,
    opened_at: datetime.datetime | None = None,
) -> EnforcementCase:
    """A case for an irregularity found by the inspection (art. 22), against one offender, in
    the municipality where the facts happened (`facts_municipality`: the report's, the
    location's, or without either the one named or the inspector's current one): only its own
    staff opens it (art. 21-22, 35), under its framework in force."""
    municipality, field = facts_municipality(
        municipality=municipality,
        location=location,
        worksite=worksite,
        dumping_report=dumping_report,
        inspector=inspector,
    )
    if inspector is not None:
        # require_acting's answers (another municipality's procedure does not exist for him:
        # 404; the auditor reads: 403), saying where: the place is the inspector's own input
        # and the municipalities' boundaries are public.
        j = jurisdiction_of(inspector)
        refusal = (
            f"Os fatos aconteceram em {municipality}, onde você não atua: só a fiscalização e "
            "o Núcleo de lá abrem o processo (Lei 3.978/2007 art. 21-22, 35)."
        )
        if not j.reads(municipality.pk):
            raise OutsideJurisdiction(refusal, field)
        if not j.acts(municipality.pk):
            raise ReadOnlyRole(refusal, field)
    facility = offender.facility
    if facility is not None and facility.municipality_id not in (None, municipality.pk):
        # The receptor's offences happen at its area, and the suspension or revocation of its
        # license (art. 25 IV-V) would stop another municipality's network: the case is there.
        raise EnforcementError(
            f"A área de recepção “{facility.name}” fica em {facility.municipality}: o processo "
            f"contra quem a opera é de lá, não de {municipality} (Lei 3.978/2007 art. 21 e 35).",
            "facility_other_municipality",
            "facility",
        )
    if not description.strip():
        raise EnforcementError(
            "Descreva a irregularidade constatada.", "description", "description"
        )
    opened_at = opened_at or timezone.localtime()
    if opened_at > timezone.now() + datetime.timedelta(minutes=5):
        raise EnforcementError("A data da constatação está no futuro.", "future", "opened_at")
    framework = framework_in_force(municipality, deadlines.local_date(opened_at))
    person = _offender(offender)
    return EnforcementCase.objects.create(
        framework=framework,
        number=next_number(municipality, deadlines.local_date(opened_at).year, CASE),
        municipality=municipality,
        offender=person,
        inspector=inspector,
        opened_as=capacity(inspector, municipality_id=municipality.pk),
        opened_at=opened_at,
        description=description.strip(),
        location=location,
        worksite=worksite,
        dumping_report=dumping_report,
        obstructed_inspection=obstructed_inspection,
    )


# --- the notice to repair (art. 27-29) --------------------------------------------------------


def lock_case(case: EnforcementCase) -> EnforcementCase:
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
    *,
    by=None,
    repair_hours: int | None = None,
) -> Notice:
    """Notificação to repair within the framework's hours (Lei 3.978/2007 art. 28: 72, for a
    non-recidivist only), or within `repair_hours` set by the authority in the notice where the
    framework leaves them to it (Rio de Janeiro art. 155 p.ú.)."""
    case = lock_case(case)
    check("issue_notice", case, by)
    framework = case.framework
    if framework.notice_first == NoticeFirst.NEVER:
        raise EnforcementError(
            f"{framework.law} não prevê notificação para reparar: o procedimento começa pela "
            f"lavratura do auto ({framework.cite('notice_first')}).",
            "no_notice",
        )
    earlier = earlier_final_records(case).order_by("-drawn_up_at").first()
    if earlier is not None and framework.notice_first == NoticeFirst.NON_RECIDIVIST:
        raise EnforcementError(
            f"O infrator é reincidente (auto {earlier.number}, definitivo): o direito de reparar o "
            "dano é só do infrator não reincidente (art. 28). Lavre o auto de infração.",
            "recidivist",
        )
    _check_individual(delivery_method)
    if not required_action.strip():
        raise EnforcementError(
            "Diga o que o infrator deve fazer para reparar o dano.",
            "required_action",
            "required_action",
        )
    issued_at = issued_at or timezone.localtime()
    if issued_at < case.opened_at:
        raise EnforcementError("A notificação não pode ser anterior à constatação.", "date")
    if framework.repair_hours is None and not repair_hours:
        raise EnforcementError(
            f"Fixe o prazo para cumprimento, em horas ({framework.cite('repair_hours')}).",
            "repair_hours",
            "repair_hours",
        )
    if framework.repair_hours is not None and repair_hours not in (None, framework.repair_hours):
        raise EnforcementError(
            f"O prazo é o da lei: {framework.repair_hours} horas "
            f"({framework.cite('repair_hours')}).",
            "repair_hours",
            "repair_hours",
        )
    notice = Notice.objects.create(
        case=case,
        number=next_number(case.municipality, deadlines.local_date(issued_at).year, NOTICE),
        issued_at=issued_at,
        delivery_method=delivery_method,
        required_action=required_action.strip(),
        repair_hours=repair_hours or framework.repair_hours,
        **signed("issued", by, case),
    )
    case.status = CaseStatus.NOTIFIED
    case.save(update_fields=["status"])
    return notice


def _check_individual(delivery_method: str) -> None:
    """A notice or record goes first by hand or by mail: the public notice only supplies an
    individual delivery that failed (art. 28 §2, "quando negativas ou impraticáveis")."""
    if delivery_method == DeliveryMethod.PUBLIC_NOTICE:
        raise EnforcementError(
            "O edital só supre a entrega individual negativa ou impraticável (art. 28 §2): "
            "entregue pessoalmente ou por carta com AR; frustrada a entrega (recusa, "
            "destinatário não encontrado ou AR devolvido) ou impraticável (infrator ou "
            "endereço desconhecido), registre-a e publique o edital.",
            "individual_first",
            "delivery_method",
        )
    if delivery_method not in INDIVIDUAL_DELIVERY:
        raise EnforcementError("Escolha a forma de entrega.", "delivery_method", "delivery_method")


def _check_delivery(document, delivered_on: datetime.datetime, issued: datetime.datetime) -> None:
    if delivered_on > timezone.now() + datetime.timedelta(minutes=5):
        raise EnforcementError("A data de entrega está no futuro.", "future", "delivered_on")
    if deadlines.local_date(delivered_on) < deadlines.local_date(issued):
        raise EnforcementError(
            "A entrega não pode ser anterior à emissão do documento.", "date", "delivered_on"
        )


@transaction.atomic
def register_notice_delivery(notice: Notice, delivered_on: datetime.datetime, *, by=None) -> Notice:
    """The date of the signed receipt (by hand, with the hour), of the returned AR (mail) or of
    the publication (public notice, art. 28 §2): the 72 hours run from the presumed receipt."""
    notice = _lock_notice(notice)
    check("register_notice_delivery", notice, by)
    _check_delivery(notice, delivered_on, notice.issued_at)
    notice.delivered_on = delivered_on
    notice.save(update_fields=["delivered_on", *sign(notice, "delivery", by)])
    return notice


def _failed_delivery(
    document: Notice | InfractionRecord,
    issued: datetime.datetime,
    outcome: str,
    attempted_at: datetime.datetime,
    reason: str,
    by,
) -> DeliveryAttempt:
    """Record that the individual delivery of `document` failed: the fact the edital needs."""
    method = document.delivery_method
    if outcome not in FAILURE_OUTCOMES[method]:
        allowed = ", ".join(str(DeliveryOutcome(o).label) for o in FAILURE_OUTCOMES[method])
        raise EnforcementError(
            f"Na entrega “{document.get_delivery_method_display()}” o resultado é: {allowed}.",
            "outcome",
            "outcome",
        )
    if not reason.strip():
        raise EnforcementError(
            "Descreva por que a entrega individual é impraticável (o que se sabe do infrator e "
            "o que se buscou)."
            if outcome in IMPRACTICABLE
            else "Descreva as circunstâncias da entrega frustrada (quem tentou, onde, o que "
            "houve).",
            "reason",
            "reason",
        )
    if attempted_at > timezone.now() + datetime.timedelta(minutes=5):
        raise EnforcementError("A data da tentativa está no futuro.", "future", "attempted_at")
    if attempted_at < issued:
        raise EnforcementError(
            "A tentativa não pode ser anterior à emissão do documento.", "date", "attempted_at"
        )
    target = "notice" if isinstance(document, Notice) else "record"
    return DeliveryAttempt.objects.create(
        **{target: document},
        method=method,
        outcome=outcome,
        attempted_at=attempted_at,
        reason=reason.strip(),
        **signed("registered", by, document),
    )


def _publish_edital(document: Notice | InfractionRecord, published_on: datetime.date, by) -> None:
    """The edital supplies the failed individual delivery; its deadlines count as the case's
    framework reads the publication (fiscalization.deadlines: Lei 3.978/2007 art. 28 §2, from
    the first working day after it)."""
    last = document.failed_deliveries.order_by("-attempted_at").first()
    if published_on > timezone.localdate():
        raise EnforcementError("A data da publicação está no futuro.", "future", "published_on")
    if published_on < deadlines.local_date(last.attempted_at):
        raise EnforcementError(
            "O edital não pode ser publicado antes da entrega frustrada que ele supre "
            f"({last.attempted_at:%d/%m/%Y}).",
            "date",
            "published_on",
        )
    document.delivery_method = DeliveryMethod.PUBLIC_NOTICE
    document.delivered_on = deadlines.start_of_day(published_on)
    document.save(
        update_fields=["delivery_method", "delivered_on", *sign(document, "delivery", by)]
    )


def _lock_notice(notice: Notice) -> Notice:
    return Notice.objects.select_for_update(of=("self",)).select_related("case").get(pk=notice.pk)


@transaction.atomic
def register_notice_failure(
    notice: Notice, outcome: str, attempted_at: datetime.datetime, reason: str, *, by=None
) -> DeliveryAttempt:
    """The notice could not be delivered: refused or the offender not found (by hand), or the
    AR came back undelivered (mail). From here the edital may supply it (art. 28 §2)."""
    notice = _lock_notice(notice)
    check("register_notice_failure", notice, by)
    return _failed_delivery(notice, notice.issued_at, outcome, attempted_at, reason, by)


@transaction.atomic
def publish_notice_edital(notice: Notice, published_on: datetime.date, *, by=None) -> Notice:
    """The notice published in the official paper after a failed individual delivery
    (art. 28 §2): the 72 hours run from the first working day after the publication."""
    notice = _lock_notice(notice)
    check("publish_notice_edital", notice, by)
    _publish_edital(notice, published_on, by)
    return notice


@transaction.atomic
def mark_repaired(
    notice: Notice, repaired_at: datetime.datetime | None = None, *, by=None
) -> Notice:
    """The offender repaired the damage. In time (art. 28 §1): the case ends without penalty
    (art. 27). Late: it is noted, and the record may still be drawn up (art. 29)."""
    notice = Notice.objects.select_for_update(of=("self",)).select_related("case").get(pk=notice.pk)
    notice.case = case = lock_case(notice.case)
    check("mark_repaired", notice, by)
    due = notice_due(notice)
    if due is None:
        raise EnforcementError(
            "Registre antes a entrega da notificação: o prazo conta do recebimento.",
            "not_delivered",
        )
    repaired_at = repaired_at or timezone.localtime()
    if repaired_at > timezone.now() + datetime.timedelta(minutes=5):
        raise EnforcementError("A data da reparação está no futuro.", "future", "repaired_at")
    if repaired_at < notice.issued_at:
        raise EnforcementError("A reparação não pode ser anterior à notificação.", "date")
    notice.repaired_at = repaired_at
    notice.save(update_fields=["repaired_at", *sign(notice, "repair", by)])
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
    by=None,
) -> InfractionRecord:
    """Auto de infração for one or more lines of the table (art. 23). The fine adds the lines
    up (art. 30 §3) and is raised for recidivism as the case's framework says (Lei 3.978/2007
    art. 30: doubled); obstruction (art. 26 I) multiplies it only when the framework gives a
    factor. Where the framework gives a notice first (art. 27-29), the hours to repair must
    have run out. A new infraction after a suspension proposes revocation (art. 34), and so
    does persisting recidivism where the framework says so (Lei 3.190/2013 art. 9 §2). Signed
    by the offender or certified by the inspector (art. 36 sole §); handed over in the act
    when by hand."""
    case = lock_case(case)
    drawn_up_at = drawn_up_at or timezone.localtime()
    check("draw_up_record", case, by)
    if drawn_up_at > timezone.now() + datetime.timedelta(minutes=5):
        raise EnforcementError("A data do auto está no futuro.", "future", "drawn_up_at")
    if drawn_up_at < case.opened_at:
        raise EnforcementError("O auto não pode ser anterior à constatação.", "date")
    framework = case.framework
    earlier = list(earlier_final_records(case).order_by("-drawn_up_at"))
    recidivist = bool(earlier)
    notice = _live_notice(case)
    needs_notice = framework.notice_first == NoticeFirst.NON_RECIDIVIST and not recidivist
    if needs_notice or (notice is not None and framework.notice_first == NoticeFirst.OPTIONAL):
        if notice is None:
            raise EnforcementError(
                "Infrator não reincidente: notifique-o antes para reparar o dano em "
                f"{framework.repair_hours} horas ({framework.cite('notice_first')}).",
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
    _check_individual(delivery_method)
    reason = no_signature_reason.strip()
    if not signed_by_offender and not reason:
        raise EnforcementError(
            "Sem a assinatura do infrator, certifique o motivo da falta (art. 36 p.ú.).",
            "signature",
            "no_signature_reason",
        )
    # Lei 3.190/2013 art. 9 §6: the law's amounts updated yearly by its index, as the
    # municipality entered the variations up to the year the record is drawn up.
    update = fines.index_update(
        framework, case.municipality, deadlines.local_date(drawn_up_at).year
    )
    amounts = [update.amount(e.fine_ufesp) if update else e.fine_ufesp for e in entries]
    fine = fines.record_fine(
        amounts,
        framework,
        earlier=len(earlier),
        obstructed=case.obstructed_inspection,
        last_fine=earlier[0].total_ufesp if earlier else None,
    )
    record = InfractionRecord.objects.create(
        case=case,
        number=next_number(case.municipality, deadlines.local_date(drawn_up_at).year, RECORD),
        drawn_up_at=drawn_up_at,
        recidivist=recidivist,
        earlier_records=len(earlier),
        recidivism_factor=fine.recidivism_factor,
        persistent_of_ufesp=fine.persistent_of,
        obstruction_multiplier=fine.obstruction_factor,
        total_ufesp=fine.total_ufesp,
        index_factor=update.rounded_factor if update else None,
        index_update=update.text if update else "",
        proposes_revocation=fine.persistent_of is not None
        or (framework.revocation_after_suspension and earlier_suspension(case) is not None),
        signed_by_offender=signed_by_offender,
        no_signature_reason="" if signed_by_offender else reason,
        delivery_method=delivery_method,
        # By hand the copy is handed over in the act (Lei 3.190/2013 art. 11 I).
        delivered_on=drawn_up_at if delivery_method == DeliveryMethod.HAND else None,
        **signed("drawn_up", by, case),
        **signed("delivery", by if delivery_method == DeliveryMethod.HAND else None, case),
        # The fine is proposed here; the record imposes it only where the framework says so,
        # else the authority applies it (Lei 3.978/2007 art. 35; penalties.apply_fine).
        **(
            {"fine_applied_at": drawn_up_at, **signed("fine_applied", by, case)}
            if framework.applier("FINE") == Applier.RECORD
            else {}
        ),
    )
    InfractionItem.objects.bulk_create(
        [InfractionItem.frozen(record, e, a) for e, a in zip(entries, amounts, strict=True)]
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
    # The table in force where and when the infraction was found (art. 23): only lines the
    # municipality confirmed, never the provisional amounts no law gives.
    day = deadlines.local_date(case.opened_at)
    for entry in entries:
        if why := entry.refusal(case.municipality, day):
            raise EnforcementError(
                penalty_table.refusal_message(entry, why), "entry_not_usable", "entries"
            )
        if entry.offender_roles and role not in entry.offender_roles:
            raise EnforcementError(
                f"A infração {entry.code} não se aplica a “{OffenderRole(role).label}” (art. 24).",
                "entries",
                "entries",
            )


@transaction.atomic
def register_record_delivery(
    record: InfractionRecord, delivered_on: datetime.datetime, *, by=None
) -> InfractionRecord:
    """Delivery of the record by mail (AR date) or public notice (publication date); by hand it
    was delivered when drawn up. The 30 days to appeal run from the presumed receipt."""
    record = InfractionRecord.objects.select_for_update().get(pk=record.pk)
    check("register_record_delivery", record, by)
    _check_delivery(record, delivered_on, record.drawn_up_at)
    record.delivered_on = delivered_on
    record.save(update_fields=["delivered_on", *sign(record, "delivery", by)])
    return record


@transaction.atomic
def register_record_failure(
    record: InfractionRecord,
    outcome: str,
    attempted_at: datetime.datetime,
    reason: str,
    *,
    by=None,
) -> DeliveryAttempt:
    """The record could not be delivered: by hand the offender refused the copy or was not
    found (then it was not handed over when drawn up), or the AR came back undelivered."""
    record = InfractionRecord.objects.select_for_update().get(pk=record.pk)
    check("register_record_failure", record, by)
    attempt = _failed_delivery(record, record.drawn_up_at, outcome, attempted_at, reason, by)
    if record.delivered_on is not None:  # by hand, presumed handed over when drawn up
        record.delivered_on = None
        record.save(update_fields=["delivered_on", *sign(record, "delivery", None)])
    return attempt


@transaction.atomic
def publish_record_edital(
    record: InfractionRecord, published_on: datetime.date, *, by=None
) -> InfractionRecord:
    """The record published in the official paper after a failed individual delivery
    (art. 28 §2; Lei 3.190/2013 art. 11 III): the 30 days to appeal run from then."""
    record = InfractionRecord.objects.select_for_update().get(pk=record.pk)
    check("publish_record_edital", record, by)
    _publish_edital(record, published_on, by)
    return record


@transaction.atomic
def register_repair(
    record: InfractionRecord, repaired_at: datetime.datetime | None = None, *, by=None
) -> InfractionRecord:
    """The damage repaired after the record: paying the fine does not end the duty to repair
    (art. 30 §2), so the case closes only once this is registered."""
    record = (
        InfractionRecord.objects.select_for_update(of=("self",))
        .select_related("case")
        .get(pk=record.pk)
    )
    check("register_repair", record, by)
    if not repair_owed(record):
        raise EnforcementError("A reparação do dano já foi registrada.", "repaired")
    repaired_at = repaired_at or timezone.localtime()
    if repaired_at > timezone.now() + datetime.timedelta(minutes=5):
        raise EnforcementError("A data da reparação está no futuro.", "future", "repaired_at")
    if repaired_at < record.case.opened_at:
        raise EnforcementError(
            "A reparação não pode ser anterior à constatação.", "date", "repaired_at"
        )
    record.repaired_at = repaired_at
    record.save(update_fields=["repaired_at", *sign(record, "repair", by)])
    close_if_settled(record.case, deadlines.local_date(repaired_at))
    return record


# --- closing ----------------------------------------------------------------------------------


def _penalty_pending(penalty: Penalty, today: datetime.date) -> bool:
    if penalty.lifted_on:
        return False
    if penalty.kind == PenaltyKind.SUSPENSION:
        return penalty.ends_on >= today
    return penalty.kind in (PenaltyKind.EMBARGO, PenaltyKind.SEIZURE)


def _record_pending(record: InfractionRecord, today: datetime.date) -> bool:
    """What keeps a record that is paid or in Dívida Ativa from being settled: an embargo,
    seizure or suspension still standing; a revocation the law requires and not applied
    (art. 34, "deverá"); the repair still owed (art. 30 §2); daily fines of an embargo not
    charged, paid or sent to Dívida Ativa (art. 31)."""
    return (
        any(_penalty_pending(p, today) for p in record.penalties.all())
        or revocation_pending(record)
        or repair_owed(record)
        or charges_pending(record)
    )


def close_if_settled(case: EnforcementCase, today: datetime.date) -> bool:
    """Close the case when its records are paid, annulled or in Dívida Ativa and nothing else
    is pending in them (_record_pending)."""
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
        if _record_pending(record, today):
            return False
    case.status = given.status = CaseStatus.CLOSED
    case.save(update_fields=["status"])
    return True
