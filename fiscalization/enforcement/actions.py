"""What may happen next in a case: the one table of the procedure's steps.

A row per step says what it acts on (the case, its notice, a record, a penalty or the
daily-fine charge of an embargo), the states
of that subject it is allowed from and the refusal otherwise, who may take it, its button on
the case page (label, URL name and route, form and template), its legal reference and the hint
the timeline gives when it is due. Three readers, so that they cannot disagree:

- the services' guards: `check(name, subject, by)` raises the row's refusal (EnforcementError),
  or AuthorityRequired when the row needs a permission `by` does not hold (art. 35);
- the case page: `offered(subject, user)` is the rows whose button shows for it, in the table's
  order, among those the user may take;
- the timeline: `hint(name, subject, ...)` is the row's "what to do next", when it is allowed.

The state of a subject is its status: the case's, the record's; a notice's is its case's (the
notice runs while the case is NOTIFIED); a penalty's is its kind. What a button needs beyond
the state (a delivery registered, a penalty still standing) is a condition named in CONDITIONS.

Adding a step: a row here, its service function (which calls `check` before anything else)
and its form in fiscalization/enforcement_forms.py (its fields, named as the service's
parameters, and what its page says). The URL and the page come from the row
(enforcement_urls.py, enforcement_views.step_page).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from django.utils import timezone

from ctr.roles import APPLY_PENALTY, AUTHORITY_POWERS, DECIDE_APPEAL
from jurisdiction.scope import (
    AUDITOR_REFUSAL,
    OutsideJurisdiction,
    ReadOnlyRole,
    jurisdiction_of,
)

from ..models.enforcement import (
    CaseStatus,
    ChargeStatus,
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
from .errors import AuthorityRequired, EnforcementError
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


def _status_label(subject) -> str:
    if isinstance(subject, Notice):
        return subject.case.get_status_display()
    if isinstance(subject, Penalty):
        return subject.get_kind_display()
    return subject.get_status_display()


def _penalty_step(kind: PenaltyKind, slug: str, form: str, legal: str, **more) -> Action:
    """Applying a penalty of art. 25 II-V to a record not annulled: one page, by the slug."""
    return Action(
        f"apply_{kind.name.lower()}",
        RECORD,
        NOT_ANNULLED,
        "O auto foi anulado: não cabe penalidade.",
        code="annulled",
        permission=APPLY_PENALTY,
        penalty=kind.value,
        label=f"Aplicar {kind.label.lower()}",
        url="enforcement:penalty-new",
        url_args=(slug,),
        path="fiscalizacao/autos/<int:pk>/penalidade/<slug:kind>/",
        form=form,
        legal=legal,
        **more,
    )


# The step that applies each penalty.
PENALTIES = {
    PenaltyKind.EMBARGO: _penalty_step(
        PenaltyKind.EMBARGO, "embargo", "EmbargoForm", "Lei 3.978/2007 art. 25 II, art. 31"
    ),
    PenaltyKind.SEIZURE: _penalty_step(
        PenaltyKind.SEIZURE, "apreensao", "SeizureForm", "Lei 3.978/2007 art. 25 III, art. 32"
    ),
    PenaltyKind.SUSPENSION: _penalty_step(
        PenaltyKind.SUSPENSION, "suspensao", "SuspensionForm", "Lei 3.978/2007 art. 25 IV"
    ),
    PenaltyKind.REVOCATION: _penalty_step(
        PenaltyKind.REVOCATION,
        "cassacao",
        "RevocationForm",
        "Lei 3.978/2007 art. 25 V, art. 34",
        hints={"": "Aplicar a cassação do alvará (art. 34, art. 25 V)."},
    ),
}

_ROWS = (
    # --- the case: notice first, then the record (art. 27-29) ---------------------------------
    Action(
        "issue_notice",
        CASE,
        frozenset({CaseStatus.OPEN}),
        "O processo está “{status}”: a notificação é o primeiro ato depois da constatação.",
        label="Emitir notificação (72 h)",
        primary=True,
        offered_if=("notice_possible",),
        url="enforcement:notice-new",
        path="fiscalizacao/processos/<int:pk>/notificar/",
        form="NoticeForm",
        legal="Lei 3.978/2007 art. 28",
        hints={"": "Emitir a notificação para reparar o dano em 72 horas (art. 28)."},
    ),
    Action(
        "draw_up_record",
        CASE,
        frozenset({CaseStatus.OPEN, CaseStatus.NOTIFIED}),
        "O processo está “{status}”: não cabe novo auto.",
        waits=("notice_first", "notice_hours"),
        label="Lavrar auto de infração",
        url="enforcement:record-new",
        path="fiscalizacao/processos/<int:pk>/auto/",
        form="RecordForm",
        legal="Lei 3.978/2007 art. 22 III, 23, 26, 30, 36",
        hints={
            "recidivist": "Infrator reincidente: lavrar o auto de infração, sem notificação "
            "prévia (art. 28); multa em dobro (art. 30).",
            "notice_expired": "Prazo vencido sem reparação: lavrar o auto de infração (art. 29).",
        },
    ),
    # --- the notice (art. 28) ---------------------------------------------------------------
    Action("print_notice", NOTICE, ANY, label="Imprimir (PDF)", url="enforcement:notice-pdf"),
    Action(
        "register_notice_delivery",
        NOTICE,
        frozenset({CaseStatus.NOTIFIED}),
        "A entrega só pode ser registrada enquanto a notificação está em curso.",
        refused_if=("repaired",),
        label="Registrar a entrega",
        relabel=(("delivered", "Corrigir a entrega"),),
        primary=True,
        url="enforcement:notice-delivery",
        path="fiscalizacao/notificacoes/<int:pk>/entrega/",
        form="NoticeDeliveryForm",
        legal="Lei 3.978/2007 art. 28 §2; Lei 3.190/2013 art. 11-12",
        hints={
            "": "Registrar a entrega da notificação {number} (recibo, AR ou publicação do edital)."
        },
    ),
    Action(
        "register_notice_failure",
        NOTICE,
        frozenset({CaseStatus.NOTIFIED}),
        "A entrega frustrada só se registra numa notificação em curso, ainda não recebida nem "
        "publicada em edital.",
        refused_if=("received", "edital"),
        label="Registrar entrega frustrada ou impraticável",
        offered_if=("not failed",),
        url="enforcement:notice-failure",
        path="fiscalizacao/notificacoes/<int:pk>/entrega-frustrada/",
        form="NoticeFailureForm",
        legal="Lei 3.978/2007 art. 28 §2; Lei 3.190/2013 art. 11",
    ),
    Action(
        "publish_notice_edital",
        NOTICE,
        frozenset({CaseStatus.NOTIFIED}),
        "O edital só supre a notificação individual negativa ou impraticável (art. 28 §2): "
        "cabe na notificação em curso, ainda não recebida, depois de registrada a entrega "
        "frustrada (recusa, destinatário não encontrado ou AR devolvido).",
        code="individual_first",
        refused_if=("not failed", "received"),
        label="Publicar edital",
        primary=True,
        url="enforcement:notice-edital",
        path="fiscalizacao/notificacoes/<int:pk>/edital/",
        form="NoticeEditalForm",
        legal="Lei 3.978/2007 art. 28 §2",
        hints={
            "": "Entrega da notificação {number} frustrada: publicar o edital na imprensa "
            "oficial (art. 28 §2)."
        },
    ),
    Action(
        "mark_repaired",
        NOTICE,
        frozenset({CaseStatus.NOTIFIED}),
        "Esta notificação não está mais em curso.",
        label="Registrar a reparação",
        offered_if=("delivered", "not repaired"),
        url="enforcement:notice-repaired",
        path="fiscalizacao/notificacoes/<int:pk>/reparacao/",
        form="RepairForm",
        legal="Lei 3.978/2007 art. 27-28",
        hints={"": "Aguardar a reparação até {due} e vistoriar."},
    ),
    # --- the record: delivery, appeal, payment (art. 36; Lei 3.190/2013 art. 11-14) ----------
    Action("print_record", RECORD, ANY, label="Imprimir (PDF)", url="enforcement:record-pdf"),
    Action(
        "register_record_delivery",
        RECORD,
        frozenset({RecordStatus.ISSUED}),
        "O auto está “{status}”: a entrega não pode mais mudar.",
        label="Registrar a entrega",
        relabel=(("delivered", "Corrigir a entrega"),),
        primary="not delivered",
        offered_if=("not by_hand",),
        url="enforcement:record-delivery",
        path="fiscalizacao/autos/<int:pk>/entrega/",
        form="RecordDeliveryForm",
        page_if=("not by_hand",),
        legal="Lei 3.978/2007 art. 28 §2; Lei 3.190/2013 art. 11-12",
        hints={"": "Registrar a entrega do auto {number} (AR ou publicação do edital)."},
    ),
    Action(
        "register_record_failure",
        RECORD,
        frozenset({RecordStatus.ISSUED}),
        "A entrega frustrada só se registra num auto lavrado, ainda não recebido nem publicado "
        "em edital.",
        refused_if=("received", "edital"),
        label="Registrar entrega frustrada ou impraticável",
        offered_if=("not failed",),
        url="enforcement:record-failure",
        path="fiscalizacao/autos/<int:pk>/entrega-frustrada/",
        form="RecordFailureForm",
        legal="Lei 3.978/2007 art. 28 §2, art. 36 p.ú.; Lei 3.190/2013 art. 11",
    ),
    Action(
        "publish_record_edital",
        RECORD,
        frozenset({RecordStatus.ISSUED}),
        "O edital só supre a entrega individual do auto negativa ou impraticável (art. 28 §2; "
        "Lei 3.190/2013 art. 11 III): cabe no auto lavrado, ainda não recebido, depois de "
        "registrada a entrega frustrada (recusa, destinatário não encontrado ou AR devolvido).",
        code="individual_first",
        refused_if=("not failed", "received"),
        label="Publicar edital",
        primary=True,
        url="enforcement:record-edital",
        path="fiscalizacao/autos/<int:pk>/edital/",
        form="RecordEditalForm",
        legal="Lei 3.978/2007 art. 28 §2; Lei 3.190/2013 art. 11 III",
        hints={
            "": "Entrega do auto {number} frustrada: publicar o edital na imprensa oficial "
            "(art. 28 §2)."
        },
    ),
    Action(
        "apply_fine",
        RECORD,
        frozenset({RecordStatus.ISSUED, RecordStatus.APPEALED, RecordStatus.UPHELD}),
        "O auto está “{status}”: não cabe aplicar a multa.",
        refused_when=(("fine_applied", "A multa deste auto já foi aplicada.", "fine_applied"),),
        permission=APPLY_PENALTY,
        penalty="FINE",
        label="Aplicar a multa",
        primary=True,
        url="enforcement:apply-fine",
        path="fiscalizacao/autos/<int:pk>/aplicar-multa/",
        form="ApplyFineForm",
        legal="Lei 3.978/2007 art. 25 I, art. 35",
        hints={
            "": "Multa proposta no auto {number}: aguarda a aplicação pela autoridade — "
            "{authority}."
        },
    ),
    Action(
        "file_appeal",
        RECORD,
        frozenset({RecordStatus.ISSUED}),
        "O auto está “{status}”: não cabe recurso.",
        label="Registrar recurso",
        offered_if=("delivered",),
        url="enforcement:appeal-new",
        path="fiscalizacao/autos/<int:pk>/recurso/",
        form="AppealForm",
        legal="Lei 3.190/2013 art. 13",
        hints={"": "Prazo de recurso até {last}."},
    ),
    Action(
        "decide_appeal",
        RECORD,
        frozenset({RecordStatus.APPEALED}),
        "Não há recurso pendente neste auto.",
        permission=DECIDE_APPEAL,
        label="Registrar a decisão do recurso",
        primary=True,
        url="enforcement:appeal-decision",
        path="fiscalizacao/autos/<int:pk>/decisao/",
        form="DecisionForm",
        legal="Lei 3.190/2013 art. 14",
        hints={"": "Decidir o recurso (Lei 3.190/2013 art. 14: em até 30 dias)."},
    ),
    Action(
        "register_payment",
        RECORD,
        # Under appeal only where the appeal does not suspend collection (Rio de Janeiro
        # art. 150 sole §); Lei 3.978/2007 and Lei 3.190/2013 art. 15 wait for the decision.
        frozenset({RecordStatus.ISSUED, RecordStatus.UPHELD, RecordStatus.APPEALED}),
        "O auto está “{status}”: não cabe registrar pagamento.",
        refused_in={
            RecordStatus.APPEALED: (
                "O recurso está pendente e suspende a cobrança: registre antes a decisão.",
                "appeal_pending",
            )
        },
        refused_if=("suspended_by_appeal",),
        waits=("fine_applied",),
        label="Registrar pagamento",
        primary=True,
        url="enforcement:payment",
        path="fiscalizacao/autos/<int:pk>/pagamento/",
        form="PaymentForm",
        legal="Lei 3.978/2007 art. 36",
        hints={"": "Pagamento da multa até {last}."},
    ),
    Action(
        "send_to_divida_ativa",
        RECORD,
        frozenset({RecordStatus.ISSUED, RecordStatus.UPHELD, RecordStatus.APPEALED}),
        "O auto está “{status}”: não vai à Dívida Ativa.",
        refused_in={
            RecordStatus.APPEALED: (
                "O recurso está pendente e suspende a cobrança: registre antes a decisão.",
                "appeal_pending",
            )
        },
        refused_if=("suspended_by_appeal",),
        waits=("fine_applied", "payment_days"),
        label="Enviar à Dívida Ativa",
        url="enforcement:divida-ativa",
        path="fiscalizacao/autos/<int:pk>/divida-ativa/",
        form="DividaAtivaForm",
        legal="Lei 3.978/2007 art. 22 IV",
        hints={
            "": "Multa não paga no prazo: enviar à Dívida Ativa (art. 22 IV).",
            "appeal_running": "Multa vencida em {last}: a Dívida Ativa espera o fim do prazo de "
            "recurso.",
        },
    ),
    Action(
        "register_repair",
        RECORD,
        NOT_ANNULLED,
        "O auto foi anulado: não há reparação a registrar nele.",
        code="annulled",
        label="Registrar a reparação do dano",
        offered_if=("repair_owed",),
        url="enforcement:record-repair",
        path="fiscalizacao/autos/<int:pk>/reparacao/",
        form="RecordRepairForm",
        legal="Lei 3.978/2007 art. 30 §2",
        hints={
            "": "Registrar a reparação do dano: pagar a multa não exime de reparar "
            "(art. 30 §2); o processo só se encerra depois dela."
        },
    ),
    # --- penalties on the record (art. 25 II-V) ---------------------------------------------
    *PENALTIES.values(),
    # --- a penalty's life: breach, lifting, costs, release (art. 31-32) ----------------------
    Action(
        "register_embargo_breach",
        PENALTY,
        frozenset({PenaltyKind.EMBARGO}),
        "Descumprimento só se registra em embargo.",
        code="kind",
        label="Registrar descumprimento",
        offered_if=("standing",),
        url="enforcement:embargo-breach",
        path="fiscalizacao/penalidades/<int:pk>/descumprimento/",
        form="BreachForm",
        legal="Lei 3.978/2007 art. 31",
        hints={
            "": "Multa diária por descumprimento do embargo: {days} dia(s) = {ufesp} UFESP "
            "(art. 31)."
        },
    ),
    Action(
        "assess_embargo_fine",
        PENALTY,
        frozenset({PenaltyKind.EMBARGO}),
        "Multa diária só se lança em embargo.",
        code="kind",
        label="Lançar a multa diária",
        primary=True,
        offered_if=("uncharged_breaches",),
        url="enforcement:embargo-fine",
        path="fiscalizacao/penalidades/<int:pk>/multa-diaria/",
        form="EmbargoFineForm",
        legal="Lei 3.978/2007 art. 31, art. 36",
        hints={
            "": "Lançar a multa diária de {days} dia(s) de descumprimento ainda sem cobrança: "
            "{ufesp} UFESP (art. 31)."
        },
    ),
    Action(
        "lift_penalty",
        PENALTY,
        frozenset({PenaltyKind.EMBARGO, PenaltyKind.SUSPENSION}),
        code="kind",
        refused_in={
            PenaltyKind.SEIZURE: (
                "Equipamentos apreendidos são liberados pela liberação (art. 32 p.ú.).",
                "kind",
            ),
            PenaltyKind.REVOCATION: (
                "A cassação só deixa de valer com a anulação do auto em recurso.",
                "kind",
            ),
        },
        label="Cancelar o embargo",
        relabel=(("suspension", "Levantar a suspensão"),),
        offered_if=("standing", "in_force"),
        url="enforcement:penalty-lift",
        path="fiscalizacao/penalidades/<int:pk>/levantamento/",
        form="LiftForm",
        legal="Lei 3.978/2007 art. 31 p.ú.",
        hints={
            "": "Cancelar o embargo quando as exigências forem cumpridas.",
            "suspension": "Suspensão em vigor até {ends}; depois, a atividade volta.",
        },
    ),
    Action(
        "register_seizure_costs",
        PENALTY,
        frozenset({PenaltyKind.SEIZURE}),
        "Custos de guarda só existem na apreensão.",
        code="kind",
        label="Custos de guarda",
        offered_if=("standing",),
        url="enforcement:seizure-costs",
        path="fiscalizacao/penalidades/<int:pk>/custos/",
        form="CostsForm",
        legal="Lei 3.978/2007 art. 32 p.ú.",
    ),
    Action(
        "release_seizure",
        PENALTY,
        frozenset({PenaltyKind.SEIZURE}),
        "Só equipamentos apreendidos são liberados.",
        code="kind",
        label="Liberar equipamentos",
        offered_if=("standing",),
        url="enforcement:seizure-release",
        path="fiscalizacao/penalidades/<int:pk>/liberacao/",
        form="ReleaseForm",
        legal="Lei 3.978/2007 art. 32 p.ú.",
        hints={
            "": "Liberar os equipamentos quando sanada a irregularidade e pagos os custos "
            "(art. 32 p.ú.)."
        },
    ),
    # --- a daily-fine charge of an embargo: paid or to Dívida Ativa, as a record's fine -------
    Action(
        "register_charge_payment",
        CHARGE,
        frozenset({ChargeStatus.OPEN}),
        "A multa diária está “{status}”: não cabe registrar pagamento.",
        label="Registrar pagamento da multa diária",
        primary=True,
        url="enforcement:charge-payment",
        path="fiscalizacao/multas-diarias/<int:pk>/pagamento/",
        form="ChargePaymentForm",
        legal="Lei 3.978/2007 art. 31, art. 36",
        hints={"": "Pagamento da multa diária do embargo ({ufesp} UFESP) até {last}."},
    ),
    Action(
        "send_charge_to_divida_ativa",
        CHARGE,
        frozenset({ChargeStatus.OPEN}),
        "A multa diária está “{status}”: não vai à Dívida Ativa.",
        waits=("charge_days",),
        label="Enviar a multa diária à Dívida Ativa",
        url="enforcement:charge-divida-ativa",
        path="fiscalizacao/multas-diarias/<int:pk>/divida-ativa/",
        form="ChargeDividaAtivaForm",
        legal="Lei 3.978/2007 art. 31, art. 22 IV",
        hints={
            "": "Multa diária do embargo não paga até {last}: enviar à Dívida Ativa (art. 22 IV)."
        },
    ),
)
ACTIONS: dict[str, Action] = {row.name: row for row in _ROWS}

# A case where nothing may happen next, and what the timeline says of it.
AT_REST = {
    CaseStatus.REPAIRED: "Nada pendente: dano reparado no prazo.",
    CaseStatus.CLOSED: "Nada pendente: processo encerrado.",
}


def check(name: str, subject, by=None) -> None:
    """Refuse, with the row's Portuguese message, a step `by` may not take (AuthorityRequired,
    art. 35) or its subject's state does not allow."""
    action = ACTIONS[name]
    if by is not None:
        municipality_id = case_of(subject).municipality_id
        if not jurisdiction_of(by).reads(municipality_id):
            raise OutsideJurisdiction()
        if not jurisdiction_of(by).acts(municipality_id):
            raise ReadOnlyRole(AUDITOR_REFUSAL)
    if not action.permits(by, subject):
        raise AuthorityRequired(authority_refusal(action.needs(subject), subject))
    if action.allows(subject):
        return
    state = state_of(subject)
    if action.in_state(subject):
        for condition, message, code in action.refused_when:
            if holds(condition, subject):
                raise EnforcementError(message, code)
        if not action.refused_now(subject) and (wait := action.wait(subject)):
            raise EnforcementError(wait.message, wait.code, status=wait.status)
    message, code = action.refused_in.get(state, (action.refusal, action.code))
    raise EnforcementError(message.format(status=_status_label(subject)), code)


def waiting(subject, user=None) -> list[tuple[Action, Wait]]:
    """The steps of `subject` that `user` may take (given none, whoever may) and that would be
    offered but for what they wait for, with it: the case page lists them, with the reason
    and the date they open, where it shows no button."""
    kind = next(k for k, model in SUBJECTS.items() if isinstance(subject, model))
    found = []
    for row in ACTIONS.values():
        if row.subject != kind or not row.waits or (user and not row.permits(user, subject)):
            continue
        if not row.in_state(subject) or row.refused_now(subject):
            continue
        if all(holds(c, subject) for c in row.offered_if) and (wait := row.wait(subject)):
            found.append((row, wait))
    return found


def allowed(name: str, subject) -> bool:
    return ACTIONS[name].allows(subject)


def offered(subject, user=None) -> list[Action]:
    """The steps whose button shows on the case page for `subject`, in the table's order: those
    `user` may take (given none, whoever may)."""
    kind = next(k for k, model in SUBJECTS.items() if isinstance(subject, model))
    rows = ACTIONS.values()
    return [row for row in rows if row.subject == kind and row.is_offered(subject, user)]


def hint(name: str, subject=None, situation: str = "", **values) -> str | None:
    """The row's "what to do next" for `situation`, completed with `values`; None when the step
    is not allowed for `subject` (given no subject, the text alone)."""
    if subject is not None and not allowed(name, subject):
        return None
    return ACTIONS[name].hints[situation].format(**values)


def for_url(url: str, *url_args: str) -> Action | None:
    """The row a step page's URL name and arguments (after the pk) stand for."""
    rows = ACTIONS.values()
    return next((row for row in rows if row.url == url and row.url_args == url_args), None)
