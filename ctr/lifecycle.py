"""What may happen to a CTR: the one table of its actions.

A row per action a CTR's history records (CTRAction): the CTR statuses it is allowed from and
the refusal otherwise, who may take it and the refusal otherwise, its label (the infinitive a
refusal says), participle and button, the status it moves the CTR to (None: the status stays)
and the event a system outside hears (None: nobody outside hears it). Its readers, so that they
cannot disagree:

- the services' guards: `check_party(name, ctr, user)` and `check_state(name, ctr)` raise the
  row's refusals (ctr.services, ctr.field.corrections, generators.confirmation);
- the CTR page: `offered(name, ctr, user)` says whether the row's button shows, with the
  same two checks, and the button's text is the row's;
- the history: `history_label(action)` names each event (ctr.reports.event_rows);
- the webhooks: `events()` lists the event types an endpoint may subscribe to, and
  `event_of(action, onward)` is the one an action emits (webhooks.models, webhooks.outbox:
  ctr does not import webhooks).

A correction's steps are rows too: the CTR must be received, and `correction_from` says from
which of the correction's own states (CorrectionStatus) the step is taken and by whom.

Adding an action: a CTRAction member (and its migration: the column's choices), a row here,
and its service function, which calls `check_party` and `check_state` (under the CTR's row
lock) before writing, and records the event with `closing.record_event`; the webhook event, if
any, is then offered to endpoints and written to the outbox with no change in webhooks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from . import roles
from .errors import NotAllowed, TransitionNotAllowed
from .models import CTR, CorrectionStatus, CTRAction, CTRStatus


@dataclass(frozen=True)
class Event:
    """An event type a system outside subscribes to: its name in the payload and its label on
    the endpoint's page."""

    name: str
    label: str


@dataclass(frozen=True)
class Action:
    name: str  # the CTRAction the history records
    label: str  # the infinitive: "Não é possível cancelar o …"
    participle: str  # "Só um CTR emitido pode ser cancelado."
    button: str  # the button that takes it, on the page that offers it
    who: str  # a key of PARTIES
    refusal: str  # to anyone else
    allowed_from: frozenset[str]  # CTR statuses; empty: the action creates the CTR
    # When the CTR's status does not allow it; {number}, {status}, {label}, {participle}.
    state_refusal: str
    to_status: str | None  # None: the status does not change
    event: Event | None  # None: the action concerns nobody outside
    code: str = TransitionNotAllowed.code  # the state refusal's code
    # An onward CTR (leaving a facility) is its issuer's: another refusal, another event.
    onward_refusal: str = ""
    onward_event: Event | None = None
    # A correction's step: the correction's states it is taken from, and by whom there.
    correction_from: Mapping[str, str] = field(default_factory=dict)

    @property
    def changes_status(self) -> bool:
        return self.to_status is not None


def _transporter(ctr: CTR, user) -> bool:
    transporter = roles.transporter_of(user)
    return transporter is not None and transporter.pk == ctr.transporter_id


def _destination_operator(ctr: CTR, user) -> bool:
    facility = roles.facility_of(user)
    return facility is not None and facility.pk == ctr.destination_facility_id


def _issuer(ctr: CTR, user) -> bool:
    # An onward CTR: who issued it (a facility's operator, or the municipality for its PEVs).
    if ctr.origin_facility_id is not None:
        return ctr.created_by_id == user.pk
    return _transporter(ctr, user)


def _generator(ctr: CTR, user) -> bool:
    generator = roles.generator_of(user)
    return (
        generator is not None
        and CTR.objects.filter(roles.generator_ctrs_q(generator.pk), pk=ctr.pk).exists()
    )


def _reception_party(ctr: CTR, user) -> bool:
    return _transporter(ctr, user) or _destination_operator(ctr, user)


def _nucleo(ctr: CTR, user) -> bool:
    return roles.is_nucleo(user, ctr.municipality_id)


# Who may take an action, about a CTR and a user.
PARTIES: dict[str, Callable[[CTR, object], bool]] = {
    "transporter": _transporter,
    "destination_operator": _destination_operator,
    "issuer": _issuer,
    "generator": _generator,
    "reception_party": _reception_party,
    "nucleo": _nucleo,
}
# A correction's step, by the correction's state: its counterpart answers, the Núcleo decides
# what was sent to it, either party sends a refused one to the Núcleo.
COUNTERPART, NUCLEO, PARTY = "counterpart", "nucleo", "party"

_ISSUED_ONLY = frozenset({CTRStatus.ISSUED})
_RECEIVED_ONLY = frozenset({CTRStatus.RECEIVED})
_NOT_ISSUED = (
    "Não é possível {label} o {number}: ele está “{status}”. Só um CTR emitido pode ser "
    "{participle}."
)
_NOT_RECEIVED = "Só um CTR recebido pode ser corrigido: o {number} está “{status}”."
_CORRECTION_CONFLICT = "correction_conflict"
_ANSWER_REFUSAL = (
    "Só a outra parte do recebimento (transportador ou área de destino) aprova ou recusa a "
    "correção; o Núcleo decide só as que lhe são enviadas."
)

_ANSWERED = {CorrectionStatus.PROPOSED: COUNTERPART, CorrectionStatus.ESCALATED: NUCLEO}


def _correction_step(**fields) -> Action:
    """A row of a correction's step: the parties of the reception, on a received CTR, and the
    CTR's status stays."""
    return Action(
        who="reception_party",
        allowed_from=_RECEIVED_ONLY,
        state_refusal=_NOT_RECEIVED,
        code=_CORRECTION_CONFLICT,
        to_status=None,
        **fields,
    )


ROWS = (
    Action(
        name=CTRAction.ISSUE,
        label="emitir",
        participle="emitido",
        button="Emitir CTR",
        who="transporter",
        refusal="Só usuários de um transportador cadastrado emitem CTR.",
        allowed_from=frozenset(),
        state_refusal="",
        to_status=CTRStatus.ISSUED,
        event=Event("ctr.issued", "CTR emitido"),
        # {facility}: the origin facility's name.
        onward_refusal="Só um operador da área “{facility}” emite CTR de saída dela (o "
        "município, dos seus PEVs).",
        onward_event=Event("ctr.onward_issued", "CTR de saída emitido (de uma área)"),
    ),
    Action(
        name=CTRAction.RECEIVE,
        label="receber",
        participle="recebido",
        button="Confirmar recebimento",
        who="destination_operator",
        refusal="Só um operador da área de destino pode receber ou recusar este CTR.",
        allowed_from=_ISSUED_ONLY,
        state_refusal=_NOT_ISSUED,
        to_status=CTRStatus.RECEIVED,
        event=Event("ctr.received", "CTR recebido"),
    ),
    Action(
        name=CTRAction.REFUSE,
        label="recusar",
        participle="recusado",
        button="Recusar",
        who="destination_operator",
        refusal="Só um operador da área de destino pode receber ou recusar este CTR.",
        allowed_from=_ISSUED_ONLY,
        state_refusal=_NOT_ISSUED,
        to_status=CTRStatus.REFUSED,
        event=Event("ctr.refused", "CTR recusado"),
    ),
    Action(
        name=CTRAction.CANCEL,
        label="cancelar",
        participle="cancelado",
        button="Cancelar o CTR",
        who="issuer",
        refusal="Só o transportador que emitiu o CTR pode cancelá-lo.",
        onward_refusal="Só quem emitiu o CTR de saída pode cancelá-lo.",
        allowed_from=_ISSUED_ONLY,
        state_refusal=_NOT_ISSUED,
        to_status=CTRStatus.CANCELLED,
        event=Event("ctr.cancelled", "CTR cancelado"),
    ),
    Action(
        # The generator confirms the load left its worksite: the generator's business only.
        # A received or refused CTR may still be confirmed: the load did leave.
        name=CTRAction.CONFIRM_DEPARTURE,
        label="confirmar a saída de",
        participle="confirmado",
        button="Confirmar a saída",
        who="generator",
        refusal="Só o gerador do CTR confirma a saída da carga.",
        allowed_from=frozenset({CTRStatus.ISSUED, CTRStatus.RECEIVED, CTRStatus.REFUSED}),
        state_refusal="O {number} foi cancelado: não há saída a confirmar.",
        code="confirmation_cancelled",
        to_status=None,
        event=None,
    ),
    _correction_step(
        name=CTRAction.CORRECTION_PROPOSED,
        label="propor",
        participle="proposta",
        button="Propor a correção",
        refusal="Só o transportador e o operador da área de destino do CTR propõem correções.",
        event=Event("ctr.correction_proposed", "Correção proposta"),
    ),
    _correction_step(
        name=CTRAction.CORRECTION_APPROVED,
        label="aprovar",
        participle="aprovada",
        button="Aprovar a correção",
        refusal=_ANSWER_REFUSAL,
        event=Event("ctr.correction_approved", "Correção aprovada"),
        correction_from=_ANSWERED,
    ),
    _correction_step(
        name=CTRAction.CORRECTION_REFUSED,
        label="recusar",
        participle="recusada",
        button="Recusar",
        refusal=_ANSWER_REFUSAL,
        event=Event("ctr.correction_refused", "Correção recusada"),
        correction_from=_ANSWERED,
    ),
    _correction_step(
        # Sent to the Núcleo: only the Núcleo hears it (its queue), no system outside.
        name=CTRAction.CORRECTION_ESCALATED,
        label="enviar ao Núcleo",
        participle="enviada ao Núcleo",
        button="Enviar ao Núcleo",
        refusal="Só o transportador e o operador da área de destino enviam a correção ao Núcleo.",
        event=None,
        correction_from={CorrectionStatus.REFUSED: PARTY},
    ),
)
ACTIONS: dict[str, Action] = {row.name: row for row in ROWS}


def row(name: str) -> Action:
    return ACTIONS[name]


def may(name: str, ctr: CTR, user) -> bool:
    """Whether `user` is who may take the action on `ctr` (whatever its status)."""
    return PARTIES[ACTIONS[name].who](ctr, user)


def party_refusal(name: str, ctr: CTR) -> NotAllowed:
    action = ACTIONS[name]
    if ctr.origin_facility_id is not None and action.onward_refusal:
        return NotAllowed(action.onward_refusal.format(facility=ctr.origin_facility.name))
    return NotAllowed(action.refusal)


def check_party(name: str, ctr: CTR, user) -> None:
    """Refuse (NotAllowed, 403) a user who may not take the action on the CTR."""
    if not may(name, ctr, user):
        raise party_refusal(name, ctr)


def in_state(name: str, ctr: CTR) -> bool:
    return ctr.status in ACTIONS[name].allowed_from


def state_refusal(name: str, ctr: CTR, error: type = TransitionNotAllowed):
    """The row's refusal of the CTR's status, as `error` (a CTRError subclass)."""
    action = ACTIONS[name]
    message = action.state_refusal.format(
        number=ctr.number,
        status=ctr.get_status_display().lower(),
        label=action.label,
        participle=action.participle,
    )
    return error(message, action.code)


def check_state(name: str, ctr: CTR, error: type = TransitionNotAllowed) -> None:
    """Refuse the action when the CTR's status does not allow it (call it under the row lock:
    of two concurrent actions, one wins and the other sees the new status)."""
    if not in_state(name, ctr):
        raise state_refusal(name, ctr, error)


def offered(name: str, ctr: CTR, user) -> bool:
    """Whether the action's button shows for `user` on the CTR's page: the guards' checks."""
    return in_state(name, ctr) and may(name, ctr, user)


def correction_step(name: str, status: str) -> str | None:
    """Who takes the correction step from the correction's `status` (COUNTERPART, NUCLEO or
    PARTY); None when the step is not taken from there."""
    return ACTIONS[name].correction_from.get(status)


# The column's choices (CTRAction): the names the history has always shown.
_HISTORY_LABELS = dict(CTRAction.choices)


def history_label(action: str) -> str:
    """How the CTR's history names an event of the action."""
    return _HISTORY_LABELS.get(action, action)


def events() -> list[Event]:
    """The event types a system outside may subscribe to, in the table's order."""
    found: dict[str, Event] = {}
    for action in ACTIONS.values():
        for event in (action.event, action.onward_event):
            if event is not None:
                found.setdefault(event.name, event)
    return list(found.values())


def event_of(action: str, onward: bool = False) -> str | None:
    """The event type the action emits (an onward CTR's own, when its row has one)."""
    row_ = ACTIONS.get(action)
    if row_ is None:
        return None
    event = row_.onward_event if onward and row_.onward_event else row_.event
    return event.name if event else None


def missing(action: Action) -> list[str]:
    """What a row lacks or gets wrong, by field (empty: the row is whole). Every row says
    who, in words, the states it is allowed from (but the one that creates the CTR), and
    what its refusals say; an event or a status change is there or explicitly None."""
    problems = [
        name
        for name in ("label", "participle", "button", "refusal")
        if not str(getattr(action, name)).strip()
    ]
    if action.name not in CTRAction.values:
        problems.append("name")
    if action.who not in PARTIES:
        problems.append("who")
    if not set(action.allowed_from) <= set(CTRStatus.values):
        problems.append("allowed_from")
    if action.allowed_from and not action.state_refusal.strip():
        problems.append("state_refusal")
    if action.to_status is not None and action.to_status not in CTRStatus.values:
        problems.append("to_status")
    for name in ("event", "onward_event"):
        event = getattr(action, name)
        if event is not None and not (event.name.startswith("ctr.") and event.label.strip()):
            problems.append(name)
    if not set(action.correction_from) <= set(CorrectionStatus.values) or not set(
        action.correction_from.values()
    ) <= {COUNTERPART, NUCLEO, PARTY}:
        problems.append("correction_from")
    return problems
