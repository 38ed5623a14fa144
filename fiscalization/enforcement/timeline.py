"""The timeline of a case: everything that happened, every deadline with its state, and what
is due next. The steps' hints and whether each step may happen come from the table
(fiscalization.enforcement.actions); here is when, by the deadlines, each one is due."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field

from django.utils import timezone

from config.br import br_date, br_money, br_number

from .. import deadlines, fines
from ..deadlines import ONE_DAY
from ..models.enforcement import (
    ChargeStatus,
    DeliveryMethod,
    EmbargoFineCharge,
    EnforcementCase,
    InfractionRecord,
    Penalty,
    PenaltyKind,
    RecordStatus,
)
from .actions import AT_REST, PENALTIES, allowed, hint
from .authorship import Authors
from .facts import (
    appeal_last_day,
    charge_last_day,
    charge_paid_late,
    discount_last_day,
    embargo_fine_ufesp,
    has_appeal,
    is_recidivist,
    paid_late,
    payment_last_day,
    receipt_of,
    record_fine,
    repair_owed,
    unit_label,
)
from .terms import days


@dataclass
class Step:
    """A line of the timeline: something that happened, or a deadline."""

    when: datetime.datetime | datetime.date
    label: str
    detail: str = ""
    legal: str = ""
    # event | met (deadline met) | pending (running) | expired (passed, not met)
    state: str = "event"
    # Who did it and in what capacity, as recorded with the act (art. 35); "" not recorded.
    by: str = ""

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
    # Who did each act, each user read once (the case list builds a timeline per case).
    by: Authors = field(default_factory=Authors, repr=False)

    def due(self, hint: str | None) -> None:
        """What to do next, when the step may happen (actions.hint gives None otherwise)."""
        if hint is not None:
            self.next_due.append(hint)


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
            by=tl.by.text(case, "opened", user_field="inspector"),
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
                f"Notificação {notice.number} emitida ({_issued_by(notice)})",
                notice.required_action,
                "art. 28",
                by=tl.by.text(notice, "issued"),
            )
        )
        _failed_steps(notice, tl)
        receipt = receipt_of(notice)
        if receipt is None:
            tl.due(
                hint("publish_notice_edital", notice, number=notice.number)
                or hint("register_notice_delivery", notice, number=notice.number)
            )
            continue
        add(_delivery_step(notice, receipt, tl))
        framework = notice.case.framework
        due = deadlines.repair_deadline(receipt, framework, notice.repair_hours)
        in_time = notice.repaired_at is not None and notice.repaired_at <= due
        add(
            Step(
                due,
                f"Prazo de {notice.repair_hours or framework.repair_hours} horas para reparar "
                "o dano",
                "",
                framework.cite("repair_hours"),
                _deadline_state(in_time, now > due),
            )
        )
        if notice.repaired_at:
            add(
                Step(
                    notice.repaired_at,
                    "Dano reparado" + ("" if in_time else " fora do prazo"),
                    "Sem penalidade (art. 27)." if in_time else "",
                    by=tl.by.text(notice, "repair"),
                )
            )
        if now <= due and not notice.repaired_at:
            tl.due(hint("mark_repaired", notice, due=deadlines.br_deadline(due)))
        elif not in_time:
            tl.due(hint("draw_up_record", case, "notice_expired"))

    # Where the notice would be the first act, a recidivist goes straight to the record.
    if allowed("issue_notice", case):
        if recidivist:
            tl.due(hint("draw_up_record", case, "recidivist"))
        else:
            tl.due(hint("issue_notice", case))

    for record in case.records.order_by("drawn_up_at").prefetch_related(
        "items", "penalties__breaches"
    ):
        _record_steps(record, now, today, tl)

    tl.due(AT_REST.get(case.status))
    tl.steps.sort(key=lambda s: s.sort_key)
    return tl


def _delivery_step(document, receipt: deadlines.Receipt, tl: Timeline) -> Step:
    return Step(
        _delivered_when(document),
        _delivery_label(document),
        _receipt_detail(receipt),
        by=tl.by.text(document, "delivery"),
    )


def _issued_by(notice) -> str:
    """How the notice was sent: an edital only supplied it, after its first attempt failed."""
    first = notice.failed_deliveries.first()
    return first.get_method_display() if first else notice.get_delivery_method_display()


def _delivered_when(document) -> datetime.datetime | datetime.date:
    # A publication has a day, not an hour.
    if document.delivery_method == DeliveryMethod.PUBLIC_NOTICE:
        return deadlines.local_date(document.delivered_on)
    return document.delivered_on


def _failed_steps(document, tl: Timeline) -> None:
    for attempt in document.failed_deliveries.all():
        tl.steps.append(
            Step(
                attempt.attempted_at,
                f"Entrega frustrada: {attempt.get_outcome_display()}",
                attempt.reason,
                "art. 28 §2",
                by=tl.by.text(attempt, "registered"),
            )
        )


def _delivery_label(document) -> str:
    return {
        DeliveryMethod.HAND: "Entregue pessoalmente (recibo)",
        DeliveryMethod.MAIL: "Recebida pelo correio (data e hora do AR)",
        DeliveryMethod.PUBLIC_NOTICE: "Edital publicado na imprensa oficial",
    }[document.delivery_method]


def _receipt_detail(receipt: deadlines.Receipt) -> str:
    if receipt.method == DeliveryMethod.PUBLIC_NOTICE:
        return (
            f"Prazos contados a partir de {br_date(receipt.first_day)}: “a partir do primeiro "
            "dia útil da publicação” (art. 28 §2), o dia útil seguinte ao da publicação."
        )
    if receipt.method == DeliveryMethod.MAIL:
        return "Recebimento na data e hora da entrega escritas no AR."
    return "Recebimento na data e hora do recibo."


def _record_steps(
    record: InfractionRecord, now: datetime.datetime, today: datetime.date, tl: Timeline
) -> None:
    add = tl.steps.append
    framework = record.case.framework
    fine = record_fine(record)
    detail = f"Multa de {br_number(record.total_ufesp, 2)} {unit_label(framework)}"
    if fine.persistent_of is not None:
        detail += (
            f" ({br_number(framework.persistent_factor)} × a última multa, "
            f"{br_number(fine.persistent_of, 2)}: reincidência persistente)"
        )
    elif record.recidivist:
        detail += f" (× {br_number(fine.recidivism_factor)}: reincidente)"
    if record.obstruction_multiplier > 1:
        detail += f" (× {br_number(fine.obstruction_factor)} por embaraço à fiscalização)"
    elif record.case.obstructed_inspection:
        detail += " (embaraço à fiscalização: agravante registrado, sem fator legal)"
    add(
        Step(
            record.drawn_up_at,
            f"Auto de infração {record.number} lavrado",
            detail,
            framework.cite("payment_from"),
            by=tl.by.text(record, "drawn_up"),
        )
    )
    # The fine the record proposes, applied by the authority (art. 35; framework.applied_by).
    if framework.applier("FINE") == "AUTHORITY":
        if record.fine_applied_at is not None:
            add(
                Step(
                    record.fine_applied_at,
                    f"Multa do auto {record.number} aplicada",
                    "",
                    framework.cite("applied_by"),
                    by=tl.by.text(record, "fine_applied"),
                )
            )
        else:
            tl.due(hint("apply_fine", record, number=record.number, authority=framework.authority))
    if record.proposes_revocation:
        persistent = fine.persistent_of is not None
        add(
            Step(
                record.drawn_up_at,
                "Reincidência persistente: cassação proposta"
                if persistent
                else "Nova infração após suspensão: cassação proposta",
                "",
                framework.cite("recidivism_escalation") if persistent else "art. 34",
            )
        )
        if not any(p.kind == PenaltyKind.REVOCATION for p in record.penalties.all()):
            tl.due(hint(PENALTIES[PenaltyKind.REVOCATION].name, record))

    _failed_steps(record, tl)
    receipt = receipt_of(record)
    appeal = record.appeal if has_appeal(record) else None
    if receipt is None:
        # Whatever the record's state, as it always was: a record paid before its delivery
        # was registered still says so (the step itself is refused then).
        tl.due(
            hint("publish_record_edital", record, number=record.number)
            or hint("register_record_delivery", number=record.number)
        )
    else:
        if record.delivery_method != DeliveryMethod.HAND:
            add(_delivery_step(record, receipt, tl))
        last = appeal_last_day(record)
        add(
            Step(
                last,
                f"Prazo de recurso ({days(framework.appeal_days, framework.appeal_day_count)} "
                "do recebimento)",
                "" if framework.appeal_suspensive else "Sem efeito suspensivo.",
                framework.cite("appeal_days"),
                _deadline_state(appeal is not None, today > last),
            )
        )
        if today <= last:
            tl.due(hint("file_appeal", record, last=br_date(last)))
    if appeal is not None:
        filed = tl.by.text(appeal, "filed")
        add(Step(appeal.filed_on, "Recurso apresentado", appeal.text[:200], by=filed))
        if appeal.decided_on:
            add(
                Step(
                    appeal.decided_on,
                    "Recurso decidido: "
                    + (
                        "provimento parcial"
                        if appeal.reduced_from_ufesp is not None
                        else "auto " + appeal.outcome
                    ),
                    appeal.decision[:200],
                    by=tl.by.text(appeal, "decided"),
                )
            )
        else:
            tl.due(hint("decide_appeal", record))

    suspended = appeal is not None and appeal.decided_on is None and framework.appeal_suspensive
    last_pay = payment_last_day(record)
    if record.status != RecordStatus.ANNULLED and not suspended and last_pay is not None:
        discount = discount_last_day(record)
        add(
            Step(
                last_pay,
                "Prazo de pagamento da multa "
                f"({days(framework.payment_days, framework.payment_day_count)})",
                f"Desconto de {framework.discount_percent}% se pago até {br_date(discount)}."
                if discount
                else "Sem desconto por pagamento antecipado.",
                framework.cite("payment_days"),
                # Met only by a payment in full: a short one leaves the rest due (art. 36).
                _deadline_state(
                    record.status == RecordStatus.PAID and record.paid_on <= last_pay,
                    today > last_pay,
                ),
            )
        )
        if today <= last_pay:
            tl.due(hint("register_payment", record, last=br_date(last_pay)))
        elif (
            record.status == RecordStatus.ISSUED
            and framework.appeal_suspensive
            and (receipt is None or today <= appeal_last_day(record))
        ):
            tl.due(hint("send_to_divida_ativa", record, "appeal_running", last=br_date(last_pay)))
        else:
            tl.due(hint("send_to_divida_ativa", record))
    elif (
        record.status != RecordStatus.ANNULLED
        and record.fine_applied_at is not None
        and (no_deadline := framework.payment_deadline_notice())
    ):
        # Rio de Janeiro: the law sets no deadline to pay: said, not dated.
        add(
            Step(
                record.fine_applied_at,
                "Pagamento da multa: sem prazo na lei",
                no_deadline,
                framework.cite("payment_days"),
            )
        )
    if record.paid_on:
        late = " (fora do prazo)" if paid_late(record) else ""
        short = record.status != RecordStatus.PAID
        add(
            Step(
                record.paid_on,
                f"Multa paga a menor{late}" if short else f"Multa paga{late}",
                record.payment_text,
                "art. 36",
                by=tl.by.text(record, "payment"),
            )
        )
    if record.status == RecordStatus.DIVIDA_ATIVA and last_pay is not None:
        add(
            Step(
                last_pay + ONE_DAY,
                "Auto enviado à Dívida Ativa (após o vencimento)",
                "",
                "art. 22 IV",
                by=tl.by.text(record, "divida_ativa"),
            )
        )

    if record.repaired_at:
        repair = tl.by.text(record, "repair")
        add(Step(record.repaired_at, "Dano reparado após o auto", "", "art. 30 §2", by=repair))
    elif record.status in (RecordStatus.PAID, RecordStatus.DIVIDA_ATIVA) and repair_owed(record):
        tl.due(hint("register_repair", record))

    for penalty in record.penalties.all():
        _penalty_steps(penalty, today, tl, record.status == RecordStatus.ANNULLED)


def _penalty_steps(penalty: Penalty, today: datetime.date, tl: Timeline, annulled: bool) -> None:
    add = tl.steps.append
    legal = PENALTIES[penalty.kind].legal.removeprefix("Lei 3.978/2007 ")
    # "Penalidade" carries the gender: an embargo is masculine, the other penalties feminine.
    applied = f"Penalidade aplicada: {penalty.get_kind_display()}"
    add(Step(penalty.starts_on, applied, penalty.details, legal, by=tl.by.text(penalty, "applied")))
    lifted = tl.by.text(penalty, "lifted")
    if penalty.kind == PenaltyKind.EMBARGO:
        framework = penalty.record.case.framework
        breaches = list(penalty.breaches.all())
        for breach in breaches:
            add(
                Step(
                    breach.day,
                    _breach_label(framework),
                    breach.note,
                    "art. 31",
                    by=tl.by.text(breach, "registered"),
                )
            )
        daily_fine = framework.embargo_daily_fine is not None
        if breaches and daily_fine:
            ufesp = br_number(embargo_fine_ufesp(penalty))
            tl.due(hint("register_embargo_breach", days=len(breaches), ufesp=ufesp))
        uncharged = [b for b in breaches if b.charge_id is None]
        if uncharged and daily_fine:
            ufesp = br_number(fines.embargo_fine(len(uncharged), framework))
            tl.due(hint("assess_embargo_fine", penalty, days=len(uncharged), ufesp=ufesp))
        for charge in penalty.charges.all():
            _charge_steps(charge, today, tl)
        if penalty.lifted_on:
            met = (
                f"Exigências cumpridas em {br_date(penalty.requirements_met_on)}: "
                f"{penalty.requirements_met}"
                if penalty.requirements_met_on
                else ""
            )
            add(Step(penalty.lifted_on, "Embargo cancelado", met, "art. 31 p.ú.", by=lifted))
        elif not annulled:
            tl.due(hint("lift_penalty", penalty))
    elif penalty.kind == PenaltyKind.SEIZURE:
        if penalty.costs_paid_on:
            add(
                Step(
                    penalty.costs_paid_on,
                    "Custos de apreensão, remoção e guarda pagos",
                    br_money(penalty.custody_costs_brl),
                    "art. 32 p.ú.",
                    by=tl.by.text(penalty, "costs"),
                )
            )
        if penalty.lifted_on:
            add(Step(penalty.lifted_on, "Equipamentos liberados", "", "art. 32 p.ú.", by=lifted))
        elif not annulled:
            tl.due(hint("release_seizure", penalty))
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
            add(Step(penalty.lifted_on, "Suspensão levantada", "", by=lifted))
        if today < ended and not annulled:
            tl.due(hint("lift_penalty", penalty, "suspension", ends=br_date(penalty.ends_on)))
    elif penalty.lifted_on:
        add(Step(penalty.lifted_on, "Cassação desfeita (auto anulado)", "", by=lifted))


def _breach_label(framework) -> str:
    if framework.embargo_daily_fine is None:
        return "Embargo descumprido"
    daily = br_number(framework.embargo_daily_fine)
    return f"Embargo descumprido: multa diária de {daily} {unit_label(framework)}"


def _charge_steps(charge: EmbargoFineCharge, today: datetime.date, tl: Timeline) -> None:
    """The daily fines of an embargo made payable (art. 31): paid at the unit's value of the
    payment date within the framework's payment days (art. 36), or to Dívida Ativa
    (art. 22 IV)."""
    add = tl.steps.append
    ufesp = br_number(charge.amount_ufesp)
    assessed = f"Multa diária do embargo lançada: {ufesp} UFESP"
    add(Step(charge.assessed_on, assessed, "", "art. 31", by=tl.by.text(charge, "assessed")))
    if charge.status == ChargeStatus.CANCELLED:
        return
    framework = charge.penalty.record.case.framework
    last = charge_last_day(charge)
    paid_in_time = charge.status == ChargeStatus.PAID and charge.paid_on <= last
    add(
        Step(
            last,
            "Prazo de pagamento da multa diária "
            f"({days(framework.payment_days, framework.payment_day_count)})",
            "",
            framework.cite("payment_days"),
            _deadline_state(paid_in_time, today > last),
        )
    )
    if charge.paid_on:
        late = " (fora do prazo)" if charge_paid_late(charge) else ""
        short = " a menor" if charge.status != ChargeStatus.PAID else ""
        by = tl.by.text(charge, "payment")
        title = f"Multa diária paga{short}{late}"
        add(Step(charge.paid_on, title, charge.payment_text, "art. 36", by=by))
    elif charge.status == ChargeStatus.DIVIDA_ATIVA:
        by = tl.by.text(charge, "divida_ativa")
        add(Step(last + ONE_DAY, "Multa diária enviada à Dívida Ativa", "", "art. 22 IV", by=by))
    elif today <= last:
        tl.due(hint("register_charge_payment", charge, ufesp=ufesp, last=br_date(last)))
    else:
        tl.due(hint("send_charge_to_divida_ativa", charge, last=br_date(last)))
