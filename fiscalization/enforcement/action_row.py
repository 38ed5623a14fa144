"""A row of the steps' table (fiscalization.enforcement.actions) and the words it is written
in: what a step acts on, the conditions a row names (CONDITIONS), what a step waits for in
time (Wait, GATES), who may take it and the refusal of the others (art. 35)."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from django.utils import timezone

from ctr.roles import APPLY_PENALTY, AUTHORITY_POWERS, DECIDE_APPEAL
from jurisdiction.scope import jurisdiction_of

from ..models.enforcement import (
    DeliveryMethod,
    EmbargoFineCharge,
    EnforcementCase,
    InfractionRecord,
    Notice,
    Penalty,
    PenaltyKind,
    RecordStatus,
)
from ..models.frameworks import Applier, NoticeFirst
from .facts import (
    appeal_last_day,
    case_of,
    charge_last_day,
    notice_due,
    notice_possible,
    notice_running,
    payment_last_day,
    repair_owed,
    uncharged_breaches,
)

# What a step acts on; a charge is the daily fines of an embargo made payable (art. 31).
CASE, NOTICE, RECORD, PENALTY, CHARGE = "case", "notice", "record", "penalty", "charge"
SUBJECTS = {
    CASE: EnforcementCase,
    NOTICE: Notice,
    RECORD: InfractionRecord,
    PENALTY: Penalty,
    CHARGE: EmbargoFineCharge,
}
HAND = DeliveryMethod.HAND
# Who may take a step: the municipality's inspectors and its Núcleo (art. 22).
MUNICIPAL = "municipal"
# Steps of the authority alone, the permission they need and why others are refused.
# {authority}: the case's framework names it (Lei 3.978/2007 art. 35: the Secretário
# Municipal de Serviços Urbanos).
AUTHORITY_REFUSALS = {
    APPLY_PENALTY: "As penalidades são aplicadas pela autoridade — {authority}: só ela, com o "
    "papel de autoridade no município do processo, aplica a multa proposta no auto, embargo, "
    "apreensão, suspensão ou cassação. O fiscal lavra o auto, propõe a multa e registra os "
    "demais atos do processo.",
    DECIDE_APPEAL: "O recurso é decidido pela autoridade que aplica as penalidades — "
    "{authority} (Lei 3.190/2013 art. 14, por analogia) —, não pelo fiscal que lavrou o auto: "
    "só a autoridade, com o papel de autoridade no município do processo, registra a decisão.",
}


def authority_refusal(permission: str, subject) -> str:
    return AUTHORITY_REFUSALS[permission].format(authority=case_of(subject).framework.authority)


ACTION_TEMPLATE = "fiscalization/enforcement/action_form.html"

# The conditions a row names, each about its subject; "not <name>" is the opposite.
CONDITIONS: dict[str, Callable[[object], bool]] = {
    # case
    # the framework gives this offender a notice to repair before the record
    "notice_possible": lambda case: notice_possible(case),
    # a notice whose hours to repair have not yet run out (or not yet begun): no record yet
    "notice_running": lambda case: notice_running(case),
    # notice or record
    "delivered": lambda document: document.delivered_on is not None,
    # notice or record: the offender gave a receipt (signed, AR, or the edital published). A
    # record by hand is taken as handed over when drawn up, and is undone only by a failed
    # attempt: that is no receipt the public notice must wait for.
    "received": lambda document: (
        document.delivered_on is not None
        and not (isinstance(document, InfractionRecord) and document.delivery_method == HAND)
    ),
    # notice or record: an individual delivery failed (refused, not found, AR returned)
    "failed": lambda document: document.failed_deliveries.exists(),
    "edital": lambda document: document.delivery_method == DeliveryMethod.PUBLIC_NOTICE,
    # notice
    "repaired": lambda notice: notice.repaired_at is not None,
    # record: under an appeal that suspends collection (the framework's appeal_suspensive)
    "suspended_by_appeal": lambda record: (
        record.status == RecordStatus.APPEALED and record.case.framework.appeal_suspensive
    ),
    # record: by hand it was delivered when drawn up (Lei 3.190/2013 art. 11 I)
    "by_hand": lambda record: record.delivery_method == DeliveryMethod.HAND,
    # record: paid or not, the damage is still to be repaired (art. 30 §2)
    "repair_owed": repair_owed,
    # record: the fine it proposes has been applied (by the record itself or the authority,
    # as the framework's applied_by says; Lei 3.978/2007 art. 35)
    "fine_applied": lambda record: record.fine_applied_at is not None,
    # penalty: not lifted, and its record not annulled
    "standing": lambda penalty: (
        penalty.lifted_on is None and penalty.record.status != RecordStatus.ANNULLED
    ),
    "suspension": lambda penalty: penalty.kind == PenaltyKind.SUSPENSION,
    # embargo: days of breach whose daily fine no charge holds yet, its record not annulled
    "uncharged_breaches": lambda penalty: (
        penalty.record.status != RecordStatus.ANNULLED and uncharged_breaches(penalty).exists()
    ),
    # a suspension up to its last day; every other penalty until lifted
    "in_force": lambda penalty: (
        penalty.kind != PenaltyKind.SUSPENSION or penalty.ends_on >= timezone.localdate()
    ),
}


@dataclass(frozen=True)
class Wait:
    """Why a step is not possible yet, and when it opens: a moment or a day, or None when it
    opens with an act still to come. `code` and `message` are the guard's refusal."""

    reason: str  # as the case page lists it: "depois das 72 h da notificação"
    opens: datetime.datetime | datetime.date | None
    code: str
    message: str
    status: int | None = None  # of the refusal; None: the error's own (400)

    def text(self, label: str) -> str:
        """“Lavrar auto de infração: depois das 72 h da notificação, a partir de 07/12 10:00”."""
        if isinstance(self.opens, datetime.datetime):
            when = f", a partir de {timezone.localtime(self.opens):%d/%m %H:%M}"
        elif isinstance(self.opens, datetime.date):
            when = f", a partir de {self.opens:%d/%m/%Y}"
        else:
            when = ""
        return f"{label}: {self.reason}{when}"


MINUTE = datetime.timedelta(minutes=1)
DAY = datetime.timedelta(days=1)


def _wait_notice_first(case) -> Wait | None:
    """A non-recidivist gets a notice to repair before any record (Lei 3.978/2007 art. 28)."""
    framework = case.framework
    if framework.notice_first != NoticeFirst.NON_RECIDIVIST or case.notices.exists():
        return None
    if not notice_possible(case):
        return None
    return Wait(
        f"depois da notificação para reparar e das {framework.repair_hours} h dela",
        None,
        "notice_required",
        "Infrator não reincidente: notifique-o antes para reparar o dano em "
        f"{framework.repair_hours} horas ({framework.cite('notice_first')}).",
    )


def _wait_notice_hours(case) -> Wait | None:
    """The record only after the hours to repair (art. 27-29), which run from the receipt."""
    if not notice_running(case):
        return None
    notice = case.notices.order_by("-issued_at").first()
    hours = case.framework.repair_hours
    due = notice_due(notice)
    if due is None:
        return Wait(
            f"depois de registrada a entrega da notificação {notice.number} e das {hours} h dela",
            None,
            "notice_not_delivered",
            f"Registre a entrega da notificação {notice.number}: o prazo de {hours} horas só "
            "corre a partir do recebimento.",
        )
    return Wait(
        f"depois das {hours} h da notificação",
        due + MINUTE,
        "notice_running",
        f"O prazo para reparar o dano vence em {timezone.localtime(due):%d/%m/%Y %H:%M}: o auto "
        "só pode ser lavrado depois dele (art. 27).",
    )


def _wait_fine_applied(record) -> Wait | None:
    """No payment nor Dívida Ativa of a fine the authority has not applied (art. 35)."""
    if record.fine_applied_at is not None:
        return None
    authority = record.case.framework.authority
    return Wait(
        f"depois da aplicação da multa pela autoridade — {authority}",
        None,
        "fine_not_applied",
        f"A multa proposta no auto ainda não foi aplicada pela autoridade — {authority}: "
        "pagamento e Dívida Ativa só depois da aplicação.",
    )


def _wait_payment_days(record) -> Wait | None:
    """Dívida Ativa only after the payment deadline (art. 36, art. 22 IV) and, where an appeal
    suspends collection, after the appeal window."""
    if record.fine_applied_at is None:
        return None
    today = timezone.localdate()
    last = payment_last_day(record)
    if no_deadline := record.case.framework.payment_deadline_notice():
        # Rio de Janeiro: no deadline in the law, so none passes.
        return Wait(
            "a lei não fixa prazo de pagamento", None, "no_payment_deadline", no_deadline, 409
        )
    if last is None:
        return Wait(
            "depois do prazo de pagamento, que ainda não começou a correr",
            None,
            "payment_not_started",
            "O prazo de pagamento ainda não começou a correr: só depois dele o auto pode ser "
            "enviado à Dívida Ativa (art. 22 IV).",
        )
    if today <= last:
        return Wait(
            "depois do prazo de pagamento",
            last + DAY,
            "payment_running",
            f"O prazo de pagamento vai até {last:%d/%m/%Y}: só depois o auto pode ser enviado à "
            "Dívida Ativa (art. 36, art. 22 IV).",
        )
    if record.status == RecordStatus.ISSUED and record.case.framework.appeal_suspensive:
        appeal_last = appeal_last_day(record)
        if appeal_last is None or today <= appeal_last:
            return Wait(
                "depois do prazo de recurso"
                + (", que começa com a entrega do auto" if appeal_last is None else ""),
                appeal_last + DAY if appeal_last else None,
                "appeal_running",
                "O prazo de recurso ainda corre (ou a entrega do auto não foi registrada): "
                "aguarde-o antes de enviar à Dívida Ativa.",
            )
    return None


def _wait_charge(charge) -> Wait | None:
    """The daily fines of an embargo (art. 31) go to Dívida Ativa after their payment days,
    and never while an appeal that suspends collection is pending against the record."""
    record = charge.penalty.record
    if record.status == RecordStatus.APPEALED and record.case.framework.appeal_suspensive:
        return Wait(
            "depois da decisão do recurso contra o auto",
            None,
            "appeal_pending",
            f"O recurso contra o auto {record.number} está pendente e suspende a cobrança: a "
            "multa diária só vai à Dívida Ativa depois da decisão.",
        )
    last = charge_last_day(charge)
    if timezone.localdate() <= last:
        return Wait(
            "depois do prazo de pagamento da multa diária",
            last + DAY,
            "payment_running",
            f"O prazo de pagamento vai até {last:%d/%m/%Y}: só depois a multa diária pode ser "
            "enviada à Dívida Ativa (art. 36, art. 22 IV).",
        )
    return None


# What a step waits for, by name (Action.waits): a Wait while it is not possible yet.
GATES: dict[str, Callable[[object], Wait | None]] = {
    "notice_first": _wait_notice_first,
    "notice_hours": _wait_notice_hours,
    "fine_applied": _wait_fine_applied,
    "payment_days": _wait_payment_days,
    "charge_days": _wait_charge,
}


def holds(condition: str, subject) -> bool:
    if condition.startswith("not "):
        return not CONDITIONS[condition[4:]](subject)
    return CONDITIONS[condition](subject)


NOT_ANNULLED = frozenset(RecordStatus.values) - {RecordStatus.ANNULLED}
ANY = None  # allowed from every state (printing)


@dataclass(frozen=True)
class Action:
    """A step of the procedure, as the guards, the case page and the timeline read it."""

    name: str  # its service function in fiscalization.enforcement ("print_*": none)
    subject: str  # CASE, NOTICE, RECORD, PENALTY or CHARGE
    allowed_from: frozenset[str] | None  # the subject's states; ANY: every state
    refusal: str = ""  # outside them ({status}: the subject's status, as users read it)
    code: str = "status"
    # A state with a refusal of its own: state -> (message, code).
    refused_in: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    refused_if: tuple[str, ...] = ()  # conditions that refuse too, with the same refusal
    # Conditions that refuse with a refusal of their own: (condition, message, code); the
    # message may name the framework's {authority}.
    refused_when: tuple[tuple[str, str, str], ...] = ()
    # What it waits for (GATES): refused until then, and listed on the case page with the
    # reason and the date it opens instead of a button.
    waits: tuple[str, ...] = ()
    who: str = MUNICIPAL
    # The authority's power the step needs besides (AUTHORITY_REFUSALS, held by the
    # authority's role in the case's municipality: ctr.roles.AUTHORITY_POWERS), "" none.
    permission: str = ""
    # The penalty the step applies (FINE or a PenaltyKind): the framework says who applies it
    # (PenaltyFramework.applied_by); where the record itself imposes it, no permission.
    penalty: str = ""
    # The button: shown when allowed and every `offered_if` condition holds.
    label: str = ""
    relabel: tuple[tuple[str, str], ...] = ()  # (condition, label): the first that holds
    primary: bool | str = False  # or a condition
    offered_if: tuple[str, ...] = ()
    url: str = ""  # URL name; the subject's pk, then url_args
    url_args: tuple[str, ...] = ()
    # The step's page (a form): its route, its form in enforcement_forms, its template. A page
    # exists for a subject only where every `page_if` condition holds (404 otherwise).
    path: str = ""
    form: str = ""
    template: str = ACTION_TEMPLATE
    page_if: tuple[str, ...] = ()
    legal: str = ""
    # What the timeline says when the step is due: situation -> text ("" the usual one),
    # completed with str.format() by the timeline's values.
    hints: Mapping[str, str] = field(default_factory=dict)

    def in_state(self, subject) -> bool:
        return self.allowed_from is ANY or state_of(subject) in self.allowed_from

    def refused_now(self, subject) -> bool:
        """Refused in its state by a condition: it will not open by waiting."""
        return any(holds(c, subject) for c in self.refused_if) or any(
            holds(c, subject) for c, _, _ in self.refused_when
        )

    def wait(self, subject) -> Wait | None:
        return next((w for name in self.waits if (w := GATES[name](subject))), None)

    def allows(self, subject) -> bool:
        return (
            self.in_state(subject) and not self.refused_now(subject) and self.wait(subject) is None
        )

    def needs(self, subject) -> str:
        """The authority's permission the step needs on `subject` ("" none): a penalty the
        case's framework gives to the record itself needs none."""
        if self.penalty and case_of(subject).framework.applier(self.penalty) == Applier.RECORD:
            return ""
        return self.permission

    def permits(self, user, subject) -> bool:
        """Whether `user` may take the step on `subject`: it acts in the case's municipality
        (art. 35: the municipality where the facts happened), with the authority's role for
        the authority's steps. None: nobody in particular, refused the authority's steps."""
        permission = self.needs(subject)
        if user is None:
            return not permission
        municipality_id = case_of(subject).municipality_id
        held = AUTHORITY_POWERS[permission] if permission else None
        if held is None:
            return jurisdiction_of(user).acts(municipality_id)
        return jurisdiction_of(user).acts(municipality_id, held)

    def is_offered(self, subject, user=None) -> bool:
        """Given a user, only if he may take it; given none, for whoever may."""
        return (
            (user is None or self.permits(user, subject))
            and self.allows(subject)
            and all(holds(c, subject) for c in self.offered_if)
        )

    def label_for(self, subject) -> str:
        return next((text for c, text in self.relabel if holds(c, subject)), self.label)

    def is_primary(self, subject) -> bool:
        return holds(self.primary, subject) if isinstance(self.primary, str) else self.primary

    def has_page(self, subject) -> bool:
        return all(holds(c, subject) for c in self.page_if)


def state_of(subject) -> str:
    if isinstance(subject, Notice):
        return subject.case.status
    if isinstance(subject, Penalty):
        return subject.kind
    return subject.status
