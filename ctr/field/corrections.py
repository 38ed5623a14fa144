"""Corrections of a received CTR, as SIGOR's quantity and quality adjustments
and Trackdéchets' revisions: after the reception (art. 13 p.ú.), the transporter or the
receiver proposes new values (received volume, waste lines, equipment, discharge point) with a
reason; the other party approves or refuses; when they disagree either sends it to the Núcleo
Permanente de Gestão, who decides (art. 4 §2 V: the Núcleo oversees the system).

An approved correction changes the CTR's current values in the transaction that approves it
and re-runs the reception-stage rules; what reads the CTR (fees, reports, the chain of custody,
the stock, a certificate issued afterwards) reads the corrected values. The original values
stay in the correction and in the CTR's append-only history (CTREvent); a document already
issued (a certificate with its digest) is not rewritten.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from decimal import Decimal
from types import SimpleNamespace

from django.contrib.gis.geos import Point
from django.db import IntegrityError, transaction
from django.db.models import QuerySet, Sum
from django.utils import timezone

from config.br import br_date, br_number
from pev_network import services as network
from pev_network.models import ReceivingFacility

from .. import closing, lifecycle, plausibility, roles, rules, services
from ..custody import stock, stock_limits
from ..errors import CorrectionConflict, CorrectionError, CorrectionOverStock, NotAllowed
from ..models import (
    CTR,
    CorrectionSide,
    CorrectionStatus,
    CTRAction,
    CTRCorrection,
    CTRWaste,
    CTRWasteClass,
    Equipment,
    OnSiteProcessing,
)

# Bounds of a corrected value, as the CTR's columns hold them (numeric(8, 3)).
MAX_VOLUME_M3 = Decimal("99999.999")
MAX_LINES = 20
VOLUME_STEP = Decimal("0.001")

# What a correction may change, in the order the pages list it, with its name in a sentence.
FIELD_LABELS = {
    "received_volume_m3": "volume recebido",
    "waste": "resíduos (classe e volume)",
    "equipment": "equipamento",
    "destination": "ponto de descarga",
}


@dataclass
class Proposal:
    """New values; None leaves a value as it is."""

    received_volume_m3: Decimal | None = None
    waste: list[rules.WasteLine] | None = None
    equipment_code: str | None = None
    destination: Point | None = None


# --- who is who --------------------------------------------------------------------------------


def side_of(user, ctr: CTR) -> str | None:
    """The user's party in the CTR's reception: its transporter or its destination's operator."""
    transporter = roles.transporter_of(user)
    if transporter is not None and transporter.pk == ctr.transporter_id:
        return CorrectionSide.TRANSPORTER
    facility = roles.facility_of(user)
    if facility is not None and facility.pk == ctr.destination_facility_id:
        return CorrectionSide.FACILITY
    return None


def readable_ctrs(user, queryset: QuerySet | None = None) -> QuerySet:
    """The CTRs whose corrections the user sees: the two parties' and, for the municipality,
    all. A generator reads its CTRs elsewhere; it is not a party to the reception."""
    queryset = CTR.objects.all() if queryset is None else queryset
    if roles.is_municipal(user):
        return queryset.visible_to(user)
    transporter, facility = roles.transporter_of(user), roles.facility_of(user)
    if transporter is not None:
        return queryset.filter(transporter=transporter)
    if facility is not None:
        return queryset.filter(destination_facility=facility)
    return queryset.none()


def readable(user) -> QuerySet:
    return CTRCorrection.objects.filter(ctr__in=readable_ctrs(user)).select_related(
        "ctr", "proposed_by", "answered_by", "escalated_by", "decided_by"
    )


def deciding_side(correction: CTRCorrection) -> str | None:
    """Whose decision the correction waits for: the counterpart's, the Núcleo's, or nobody's."""
    if correction.status == CorrectionStatus.PROPOSED:
        return correction.counterpart
    if correction.status == CorrectionStatus.ESCALATED:
        return CorrectionSide.NUCLEO
    return None


@dataclass(frozen=True)
class Allowed:
    """What the user may do with a correction now (the page's buttons; the services decide)."""

    answer: bool = False
    escalate: bool = False
    decide: bool = False


def allowed(correction: CTRCorrection, user, open_exists: bool = False) -> Allowed:
    """The buttons, from ctr.lifecycle's rows: who takes each step from the correction's state."""
    side = side_of(user, correction.ctr)
    answer_by = lifecycle.correction_step(CTRAction.CORRECTION_APPROVED, correction.status)
    escalate_by = lifecycle.correction_step(CTRAction.CORRECTION_ESCALATED, correction.status)
    return Allowed(
        answer=answer_by == lifecycle.COUNTERPART and side == correction.counterpart,
        escalate=escalate_by == lifecycle.PARTY and side is not None and not open_exists,
        decide=answer_by == lifecycle.NUCLEO
        and roles.is_nucleo(user, correction.ctr.municipality_id),
    )


_OPEN = [CorrectionStatus.PROPOSED, CorrectionStatus.ESCALATED]


def why_not_propose(ctr: CTR, user) -> CorrectionError | NotAllowed | None:
    """Why `user` may not propose a correction of `ctr` now (None: it may)."""
    if not lifecycle.may(CTRAction.CORRECTION_PROPOSED, ctr, user):
        return lifecycle.party_refusal(CTRAction.CORRECTION_PROPOSED, ctr)
    if not lifecycle.in_state(CTRAction.CORRECTION_PROPOSED, ctr):
        return lifecycle.state_refusal(CTRAction.CORRECTION_PROPOSED, ctr, CorrectionConflict)
    if ctr.corrections.filter(status__in=_OPEN).exists():
        return _open_conflict(ctr)
    return None


def can_propose(ctr: CTR, user) -> bool:
    return why_not_propose(ctr, user) is None


def check_actor(correction: CTRCorrection, user, action: str) -> str:
    """Who may take `action` ("approve", "refuse", "escalate", "decide") on the correction,
    whatever its state: the counterpart answers, either party escalates, the Núcleo decides.
    The user's side, or NotAllowed (403). The API and the pages ask before reading a body."""
    if action == "decide":
        if not roles.is_nucleo(user, correction.ctr.municipality_id):
            raise NotAllowed("Só o Núcleo Permanente de Gestão decide as correções enviadas a ele.")
        return CorrectionSide.NUCLEO
    side = side_of(user, correction.ctr)
    if action == "escalate":
        if side is None:
            raise lifecycle.party_refusal(CTRAction.CORRECTION_ESCALATED, correction.ctr)
        return side
    if side == correction.proposed_side:
        raise NotAllowed("Quem propôs a correção não a decide: cabe à outra parte do recebimento.")
    if side is None:
        raise lifecycle.party_refusal(CTRAction.CORRECTION_APPROVED, correction.ctr)
    return side


# --- the values, as JSON -----------------------------------------------------------------------


def _volume(value: Decimal) -> str:
    return str(Decimal(value).quantize(VOLUME_STEP))


def current_values(ctr: CTR) -> dict:
    """The CTR's correctable values as the correction and its events store them."""
    equipment = ctr.equipment
    return {
        "received_volume_m3": (
            _volume(ctr.received_volume_m3) if ctr.received_volume_m3 is not None else None
        ),
        "waste": [
            {
                "class": line.waste_class,
                "volume_m3": _volume(line.volume_m3),
                "description": line.description,
            }
            for line in ctr.waste.order_by("pk")
        ],
        "equipment": {"id": equipment.pk, "code": equipment.code} if equipment else None,
        "destination": [round(ctr.destination.x, 7), round(ctr.destination.y, 7)],
    }


def _volume_in_range(value: Decimal, field: str, what: str) -> Decimal:
    if value <= 0:
        raise CorrectionError(f"{what} deve ser maior que zero.", field=field)
    if value > MAX_VOLUME_M3:
        raise CorrectionError(f"{what} vai até {rules.fmt(MAX_VOLUME_M3)} m³.", field=field)
    return value


def proposed_values(ctr: CTR, proposal: Proposal) -> dict:
    """The proposal as stored values, each checked (a 400 naming its field)."""
    values: dict = {}
    if proposal.received_volume_m3 is not None:
        volume = _volume_in_range(
            Decimal(proposal.received_volume_m3), "received_volume_m3", "O volume recebido"
        )
        values["received_volume_m3"] = _volume(volume)
    if proposal.waste is not None:
        if not proposal.waste:
            raise CorrectionError("Informe ao menos uma linha de resíduo.", field="waste")
        if len(proposal.waste) > MAX_LINES:
            raise CorrectionError(f"Um CTR tem até {MAX_LINES} linhas de resíduo.", field="waste")
        lines = []
        for index, line in enumerate(proposal.waste):
            if line.waste_class not in CTRWasteClass.values:
                raise CorrectionError(
                    f"Classe de resíduo desconhecida na linha {index + 1}: {line.waste_class}.",
                    field=f"waste[{index}].class",
                )
            volume = _volume_in_range(
                Decimal(line.volume_m3),
                f"waste[{index}].volume_m3",
                f"O volume da linha {index + 1}",
            )
            lines.append(
                {
                    "class": line.waste_class,
                    "volume_m3": _volume(volume),
                    "description": (line.description or "").strip()[:300],
                }
            )
        values["waste"] = lines
    if proposal.equipment_code is not None:
        code = proposal.equipment_code.strip()
        equipment = Equipment.objects.filter(
            transporter_id=ctr.transporter_id, code=code, active=True
        ).first()
        if equipment is None:
            raise CorrectionError(
                f"O transportador não tem equipamento ativo com o código “{code}”.",
                field="equipment_code",
            )
        values["equipment"] = {"id": equipment.pk, "code": equipment.code}
    if proposal.destination is not None:
        point = proposal.destination
        facility = ctr.destination_facility
        # The discharge point moves inside the facility that received the load, never to
        # another one (that would be another CTR): within its area and the GPS tolerance.
        # The GPS tolerance of the CTR's own day (Lei 3.978/2007 art. 13 p.ú.).
        tolerance = ctr.parameters().gps_tolerance_m
        if not network.point_within_facility(point, facility, tolerance):
            raise CorrectionError(
                f"O ponto de descarga corrigido não está dentro da área “{facility.name}”.",
                field="destination",
            )
        values["destination"] = [round(point.x, 7), round(point.y, 7)]
    return values


def _changed(original: dict, values: dict) -> dict:
    return {key: value for key, value in values.items() if original.get(key) != value}


# --- the steps ---------------------------------------------------------------------------------


def _lock(ctr: CTR) -> CTR:
    return (
        CTR.objects.select_for_update(of=("self",))
        .select_related("municipality", "destination_facility", "equipment")
        .get(pk=ctr.pk)
    )


def _lock_correction(correction: CTRCorrection) -> tuple[CTRCorrection, CTR]:
    """The CTR first (every step of its corrections queues on its row), then the correction."""
    locked_ctr = _lock(correction.ctr)
    locked = CTRCorrection.objects.select_for_update().get(pk=correction.pk)
    locked.ctr = locked_ctr
    return locked, locked_ctr


def _open_conflict(ctr: CTR) -> CorrectionConflict:
    return CorrectionConflict(
        f"O {ctr.number} já tem uma correção aguardando decisão: decida-a antes de propor ou "
        "enviar outra."
    )


def _required(text: str, what: str, field: str) -> str:
    if not (text or "").strip():
        raise CorrectionError(f"Informe {what}.", field=field)
    return text.strip()


def propose(
    ctr: CTR, user, proposal: Proposal, reason: str, at: datetime.datetime | None = None
) -> CTRCorrection:
    """The transporter or the receiver proposes new values of a received CTR, with a reason;
    the other party decides. One correction awaiting a decision per CTR."""
    side = side_of(user, ctr)
    if side is None:
        raise why_not_propose(ctr, user)
    reason = _required(reason, "o motivo da correção", "reason")
    at = at or timezone.now()
    with transaction.atomic():
        locked = _lock(ctr)
        if refusal := why_not_propose(locked, user):
            raise refusal
        original = current_values(locked)
        changes = _changed(original, proposed_values(locked, proposal))
        if not changes:
            raise CorrectionError(
                "A correção não altera nada: informe ao menos um valor diferente do atual "
                "(volume recebido, resíduos, equipamento ou ponto de descarga).",
                "no_change",
            )
        try:
            with transaction.atomic():  # a savepoint: the constraint backs the check above
                correction = CTRCorrection.objects.create(
                    ctr=locked,
                    proposed_side=side,
                    proposed_by=user,
                    proposed_at=at,
                    reason=reason,
                    original={key: original[key] for key in changes},
                    changes=changes,
                )
        except IntegrityError:
            raise _open_conflict(locked) from None
        closing.record_event(
            locked,
            user,
            CTRAction.CORRECTION_PROPOSED,
            locked.status,
            {
                "correction": correction.pk,
                "side": side,
                # Who must decide: what the e-mail "a correction to approve" needs.
                "decides": correction.counterpart,
                "reason": reason,
                "original": correction.original,
                "proposed": changes,
            },
            at,
        )
    return correction


def _check_step(correction: CTRCorrection, action: str, by: str, what: str = "") -> None:
    """Refuse the step unless ctr.lifecycle's row `action` is taken `by` (COUNTERPART, NUCLEO,
    PARTY) from the correction's state; `what` names it when it is not the row's label (the
    Núcleo decides either way)."""
    if lifecycle.correction_step(action, correction.status) != by:
        raise CorrectionConflict(
            f"Não é possível {what or lifecycle.row(action).label} a correção {correction.pk}: "
            f"ela está “{correction.get_status_display().lower()}”."
        )


def approve(correction: CTRCorrection, user, at: datetime.datetime | None = None) -> CTRCorrection:
    """The counterpart approves: the CTR takes the proposed values now."""
    side = check_actor(correction, user, "approve")
    at = at or timezone.now()
    with transaction.atomic():
        locked, ctr = _lock_correction(correction)
        _check_step(locked, CTRAction.CORRECTION_APPROVED, lifecycle.COUNTERPART)
        locked.status = CorrectionStatus.APPROVED
        locked.answered_by, locked.answered_at = user, at
        _apply(locked, ctr, user, side, "", at)
    return locked


def refuse(
    correction: CTRCorrection, user, reason: str, at: datetime.datetime | None = None
) -> CTRCorrection:
    """The counterpart refuses, saying why; either party may then send it to the Núcleo."""
    side = check_actor(correction, user, "refuse")
    reason = _required(reason, "o motivo da recusa", "reason")
    at = at or timezone.now()
    with transaction.atomic():
        locked, ctr = _lock_correction(correction)
        _check_step(locked, CTRAction.CORRECTION_REFUSED, lifecycle.COUNTERPART)
        locked.status = CorrectionStatus.REFUSED
        locked.answered_by, locked.answered_at, locked.answer_note = user, at, reason
        locked.save(update_fields=["status", "answered_by", "answered_at", "answer_note"])
        closing.record_event(
            ctr,
            user,
            CTRAction.CORRECTION_REFUSED,
            ctr.status,
            {"correction": locked.pk, "side": side, "reason": reason, "final": False},
            at,
        )
    return locked


def escalate(
    correction: CTRCorrection, user, note: str = "", at: datetime.datetime | None = None
) -> CTRCorrection:
    """Either party sends a refused correction to the Núcleo, who decides."""
    side = check_actor(correction, user, "escalate")
    at = at or timezone.now()
    with transaction.atomic():
        locked, ctr = _lock_correction(correction)
        _check_step(locked, CTRAction.CORRECTION_ESCALATED, lifecycle.PARTY)
        if ctr.corrections.filter(status__in=_OPEN).exists():
            raise _open_conflict(ctr)
        locked.status = CorrectionStatus.ESCALATED
        locked.escalated_by, locked.escalated_at = user, at
        locked.save(update_fields=["status", "escalated_by", "escalated_at"])
        closing.record_event(
            ctr,
            user,
            CTRAction.CORRECTION_ESCALATED,
            ctr.status,
            {
                "correction": locked.pk,
                "side": side,
                "decides": CorrectionSide.NUCLEO,
                "note": (note or "").strip(),
            },
            at,
        )
    return locked


def decide(
    correction: CTRCorrection,
    user,
    approved: bool,
    note: str,
    at: datetime.datetime | None = None,
) -> CTRCorrection:
    """The Núcleo decides a correction the parties disagree on, with a note."""
    check_actor(correction, user, "decide")
    note = _required(note, "a nota da decisão", "note")
    at = at or timezone.now()
    with transaction.atomic():
        locked, ctr = _lock_correction(correction)
        outcome = CTRAction.CORRECTION_APPROVED if approved else CTRAction.CORRECTION_REFUSED
        _check_step(locked, outcome, lifecycle.NUCLEO, "decidir")
        locked.status = CorrectionStatus.DECIDED
        locked.decided_by, locked.decided_at, locked.note = user, at, note
        if approved:
            _apply(locked, ctr, user, CorrectionSide.NUCLEO, note, at)
        else:
            locked.save(update_fields=["status", "decided_by", "decided_at", "note"])
            closing.record_event(
                ctr,
                user,
                CTRAction.CORRECTION_REFUSED,
                ctr.status,
                {
                    "correction": locked.pk,
                    "side": CorrectionSide.NUCLEO,
                    "note": note,
                    "final": True,
                },
                at,
            )
    return locked


# --- applying ----------------------------------------------------------------------------------


def _reception_codes() -> set[str]:
    return {code for code, item in rules.REGISTRY.items() if item.stage == rules.Stage.RECEPTION}


def reception_findings(ctr: CTR) -> list[rules.Finding]:
    """The reception-stage rules on the CTR's current values (as closing.receive runs them):
    where the reception was confirmed and when stay what they were, and the figures are
    those of the set in force on the CTR's transport date, not today's."""
    parameters = ctr.parameters()
    place, travel = plausibility.reception_facts(
        ctr, ctr.received_location, ctr.closed_at, parameters
    )
    facts = rules.ReceptionFacts(
        declared_m3=ctr.total_volume_m3,
        received_m3=ctr.received_volume_m3,
        tolerance_pct=parameters.received_volume_tolerance_pct,
        place=place,
        travel=travel,
    )
    return rules.evaluate(facts, rules.Stage.RECEPTION)


def _set_lines(ctr: CTR, lines: list[dict]) -> Decimal:
    """Replace the CTR's waste lines, reusing the existing rows in their order (the chain of
    custody follows lines by id; its triggers mark the facility to rebuild either way)."""
    existing = list(ctr.waste.order_by("pk"))
    for row, line in zip(existing, lines, strict=False):
        row.waste_class, row.volume_m3 = line["class"], Decimal(line["volume_m3"])
        row.description = line["description"]
        row.save(update_fields=["waste_class", "volume_m3", "description"])
    CTRWaste.objects.filter(pk__in=[row.pk for row in existing[len(lines) :]]).delete()
    CTRWaste.objects.bulk_create(
        CTRWaste(
            ctr=ctr,
            waste_class=line["class"],
            volume_m3=Decimal(line["volume_m3"]),
            description=line["description"],
        )
        for line in lines[len(existing) :]
    )
    return sum((Decimal(line["volume_m3"]) for line in lines), Decimal(0))


def _apply(
    correction: CTRCorrection, ctr: CTR, user, side: str, note: str, at: datetime.datetime
) -> None:
    """Write the correction's values on the locked CTR, re-run the reception rules, record
    the event with the values and findings before and after. Inside the caller's transaction."""
    changes = correction.changes
    facilities = lock_stock(ctr, changes)
    before = {facility.pk: stock.outflows(facility) for facility in facilities}
    before_values = current_values(ctr)
    codes = _reception_codes()
    kept = [f for f in ctr.findings if f.get("code") not in codes]
    original_findings = [f for f in ctr.findings if f.get("code") in codes]
    fields = ["findings"]
    if "received_volume_m3" in changes:
        ctr.received_volume_m3 = Decimal(changes["received_volume_m3"])
        fields.append("received_volume_m3")
    if "waste" in changes:
        ctr.total_volume_m3 = _set_lines(ctr, changes["waste"])
        # The fee follows the declared total (art. 12 §3), as at issue.
        ctr.fee_ufesp = services.fee_ufesp(
            SimpleNamespace(
                total_volume=ctr.total_volume_m3,
                small_volume_limit=ctr.parameters().small_volume_limit_m3,
            )
        )
        fields += ["total_volume_m3", "fee_ufesp"]
    if "equipment" in changes:
        ctr.equipment_id = changes["equipment"]["id"]
        fields.append("equipment")
    if "destination" in changes:
        ctr.destination = Point(*changes["destination"], srid=4326)
        fields.append("destination")
    found = reception_findings(ctr)
    ctr.findings = [*kept, *(f.as_dict() for f in found)]
    ctr.save(update_fields=fields)
    check_stock(facilities, before)
    correction.applied = True
    correction.save()
    closing.record_event(
        ctr,
        user,
        CTRAction.CORRECTION_APPROVED,
        ctr.status,
        {
            "correction": correction.pk,
            "side": side,
            "reason": correction.reason,
            "note": note,
            "original": {key: before_values[key] for key in changes},
            "applied": changes,
            "original_findings": original_findings,
            "findings": [f.code for f in found],
        },
        at,
    )


# --- the facilities' stock ---------------------------------------------------------------------


def lock_stock(ctr: CTR, changes: dict) -> list[ReceivingFacility]:
    """The facilities whose stock the changes move, locked as issue_onward and
    record_processing lock the one they check (in id order, as the CSV import): an onward CTR
    issued meanwhile waits for this correction and checks the stock it leaves, and this
    correction sees every onward CTR committed before it."""
    ids = set()
    if "received_volume_m3" in changes or "waste" in changes:
        ids.add(ctr.destination_facility_id)  # what it received, per class
    if "waste" in changes:
        ids.add(ctr.origin_facility_id)  # an onward CTR: what its origin shipped
    ids.discard(None)
    facilities = list(
        ReceivingFacility.objects.filter(pk__in=ids).select_related("municipality").order_by("pk")
    )
    for facility in facilities:
        services.lock_facility(facility)
    return facilities


def _allowed(outflow: stock.Outflow, tolerance: Decimal) -> Decimal:
    """What could still leave on that day: OVER_FACILITY_STOCK's bound after the day's
    outflows (below zero: more left than the stock plus the sorting tolerance)."""
    return rules.OriginStock(outflow.closing, outflow.received_to_date, tolerance).allowed_m3


def check_stock(facilities: list[ReceivingFacility], before: dict[int, list]) -> None:
    """After the corrected values are written (inside the caller's transaction): refuse them
    when, at a facility, a day's outflows of a class now pass what it received plus the
    sorting tolerance and the correction made that day worse (a balance already short before
    it, say one a backdated onward CTR left, is not this correction's)."""
    problems = []
    for facility in facilities:
        was = {(o.waste_class, o.day): o for o in before[facility.pk]}
        short: dict[str, list[stock.Outflow]] = {}
        # Each day's bound with the tolerance in force that day.
        tolerance_on = stock_limits.sorting_tolerances(facility)
        for outflow in stock.outflows(facility):
            tolerance = tolerance_on(outflow.waste_class, outflow.day)
            now = _allowed(outflow, tolerance)
            old = was.get((outflow.waste_class, outflow.day))
            if now < 0 and (old is None or now < _allowed(old, tolerance)):
                short.setdefault(outflow.waste_class, []).append(outflow)
        problems += [_over_stock_text(facility, c, days) for c, days in short.items()]
    if problems:
        raise CorrectionOverStock(
            "A correção não pode ser aplicada. "
            + " ".join(problems)
            + " Para aplicá-la, corrija ou cancele antes essas saídas; ou recuse a correção."
        )


def _over_stock_text(facility: ReceivingFacility, waste_class: str, days: list) -> str:
    """One class short at the facility: its first short day's figures, and what left it on
    every short day (the onward CTRs, by number, and processing)."""
    first = days[0]
    tolerance = stock_limits.sorting_tolerance(facility, waste_class, first.day)
    limit = first.received_to_date * (1 + tolerance / 100)
    dates = [outflow.day for outflow in days]
    shipped = (
        CTRWaste.objects.filter(
            ctr__origin_facility=facility,
            ctr__status__in=stock.SHIPPED_STATUSES,
            ctr__transport_date__in=dates,
            waste_class=waste_class,
        )
        .values_list("ctr__number", "ctr__transport_date")
        .annotate(volume=Sum("volume_m3"))
        .order_by("ctr__transport_date", "ctr__number")
    )
    items = [f"{number} ({_m3(volume)}, {br_date(day)})" for number, day, volume in shipped]
    processed = OnSiteProcessing.objects.filter(
        facility=facility, waste_class=waste_class, day__in=dates
    ).order_by("day", "pk")
    items += [f"beneficiamento de {_m3(p.volume_m3)} em {br_date(p.day)}" for p in processed]
    return (
        f"Com ela, a área “{facility.name}” teria recebido {_m3(first.received_to_date)} de "
        f"{rules.waste_name(waste_class)} até {br_date(first.day)}, e já saíram dela "
        f"{_m3(first.out_to_date)} dessa classe até esse dia, acima do recebido mais a "
        f"tolerância de triagem de {rules.fmt(tolerance)}% ({_m3(limit.quantize(VOLUME_STEP))}). "
        f"Saídas além do estoque: {', '.join(items)}."
    )


# --- in words ----------------------------------------------------------------------------------


def _m3(value) -> str:
    return f"{br_number(Decimal(value), grouping=False)} m³"


def _lines_text(lines: list[dict]) -> str:
    return "; ".join(f"classe {line['class']} {_m3(line['volume_m3'])}" for line in lines)


def _point_text(coords) -> str:
    lon, lat = coords
    return f"lat. {br_number(round(lat, 6), 6)}°, long. {br_number(round(lon, 6), 6)}°"


def _value_text(key: str, value) -> str:
    if value is None:
        return "—"
    if key == "received_volume_m3":
        return _m3(value)
    if key == "waste":
        return _lines_text(value)
    if key == "equipment":
        return value["code"]
    return _point_text(value)


def describe(original: dict, changes: dict) -> list[str]:
    """Each change in a sentence: "Volume recebido: 3 m³ → 2,5 m³"."""
    return [
        f"{FIELD_LABELS[key].capitalize()}: {_value_text(key, original.get(key))} → "
        f"{_value_text(key, value)}"
        for key, value in changes.items()
        if key in FIELD_LABELS
    ]


def applied_at(correction: CTRCorrection) -> datetime.datetime | None:
    if not correction.applied:
        return None
    return correction.decided_at or correction.answered_at


def applied_notes(ctr: CTR, detailed: bool = True) -> list[str]:
    """ "Corrigido em dd/mm/aaaa: …" for each correction applied to the CTR, oldest first: the
    public page lists what changed (`detailed=False`: the fields' names, no values), the
    printed CTR the values too."""
    notes = []
    for correction in ctr.corrections.filter(applied=True).order_by("pk"):
        day = br_date(timezone.localtime(applied_at(correction)).date())
        if detailed:
            what = "; ".join(describe(correction.original, correction.changes))
        else:
            what = ", ".join(FIELD_LABELS[key] for key in correction.changes if key in FIELD_LABELS)
        notes.append(f"Corrigido em {day}: {what}.")
    return notes


def event_details(data: dict) -> list[str]:
    """What a correction event adds to the CTR's history (reports.event_rows)."""
    if "proposed" in data:
        return describe(data.get("original", {}), data["proposed"])
    if "applied" in data:
        return describe(data.get("original", {}), data["applied"])
    return []


def summary(ctr: CTR, user) -> dict:
    """The corrections section of a CTR's detail page (ctr/corrections/_section.html)."""
    shown = lifecycle.in_state(CTRAction.CORRECTION_PROPOSED, ctr)
    items = list(ctr.corrections.order_by("pk")) if shown else []
    return {
        "shown": shown,
        "number": ctr.number,
        "items": [{"correction": c, "changes": describe(c.original, c.changes)} for c in items],
        "can_propose": shown and can_propose(ctr, user),
    }
