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
the state (a delivery registered, a penalty still standing) is a condition named in CONDITIONS
(action_row.py, with the other words a row is written in).

Adding a step: a row here, its service function (which calls `check` before anything else)
and its form in fiscalization/enforcement_forms/ (its fields, named as the service's
parameters, and what its page says). The URL and the page come from the row
(enforcement_urls.py, enforcement_views.step_page).
"""

from __future__ import annotations

from ctr.roles import APPLY_PENALTY, DECIDE_APPEAL
from jurisdiction.scope import AUDITOR_REFUSAL, OutsideJurisdiction, ReadOnlyRole, jurisdiction_of

from ..models.enforcement import (
    CaseStatus,
    ChargeStatus,
    Notice,
    Penalty,
    PenaltyKind,
    RecordStatus,
)
from .action_row import (
    ANY,
    CASE,
    CHARGE,
    NOT_ANNULLED,
    NOTICE,
    PENALTY,
    RECORD,
    SUBJECTS,
    Action,
    Wait,
    authority_refusal,
    holds,
    state_of,
)
from .errors import AuthorityRequired, EnforcementError
from .facts import case_of


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
