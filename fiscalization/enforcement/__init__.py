"""The enforcement procedure of Lei 3.978/2007 art. 21-36, as services.

Plain functions, one transaction each, taking domain objects and returning them; they raise
EnforcementError with a Portuguese message and a stable code, and never see a request.

The procedure, in order:
  open_case            an irregularity found, against an offender of art. 24
  issue_notice         a non-recidivist gets 72 hours to repair (art. 27-28)
  register_*_delivery  by hand (receipt) or mail (AR): the presumed receipt
  register_*_failure   the individual delivery failed (refused, not found, AR returned)
  publish_*_edital     only then the public notice supplies it (art. 28 §2)
  mark_repaired        repaired in time: no penalty (art. 27)
  draw_up_record       the auto de infração: entries of the table (art. 23), cumulative
                       (art. 30 §3), doubled for recidivism (art. 30), aggravated for obstruction
                       (art. 26 I), signed or certified (art. 36 sole §)
  apply_fine           the authority applies the fine the record proposes (art. 35), where the
                       framework gives it the fine; the payment counts from then
  file_appeal / decide_appeal        30 days from receipt (Lei 3.190/2013 art. 13)
  register_payment / send_to_divida_ativa   30 days from the record, UFESP of the payment date
                       (art. 36); unpaid to Dívida Ativa (art. 22 IV)
  apply_embargo / register_embargo_breach / lift_penalty   (art. 25 II, art. 31)
  assess_embargo_fine / register_charge_payment / send_charge_to_divida_ativa
                       the embargo's daily fines made payable, paid or to Dívida Ativa (art. 31)
  register_repair      the repair after the record: paying does not end it (art. 30 §2)
  apply_seizure / register_seizure_costs / release_seizure (art. 25 III, art. 32)
  apply_suspension (≤ 15 days, art. 25 IV) / apply_revocation (art. 25 V, art. 34)

Where each part lives:
  actions     what may happen next: the one table of steps (the states each is allowed from,
              who may take it, its button, page and form, legal reference and hint), read by
              the guards of the services below, the timeline's hints and the case page
  action_row  a row of that table and its words: subjects, conditions, waits, the authority
  procedure   case, notice, record, their deliveries; closing a settled case
  appeals     appeal and decision;  payments   payment and Dívida Ativa
  penalties   embargo, seizure, suspension, revocation, and lifting them
  authorship  who did each act and in what capacity (art. 35: penalties and appeal decisions
              are the authority's), written on the act's row by the services above
  facts       deadlines of a notice or record (arithmetic in fiscalization.deadlines),
              recidivism, an earlier suspension, fines (arithmetic in fiscalization.fines)
  timeline    the case's timeline and what is due next
  expiring    what expires across cases (manage.py enforcement_deadlines)

This module is the interface: callers use `from fiscalization import enforcement` and the
names below. Every step's service takes the acting user as `by=` and stores him with his
capacity (authorship); a penalty or an appeal decision without the authority's permission is
refused with AuthorityRequired.
"""

from .action_row import Action
from .actions import ACTIONS, PENALTIES, allowed, check, for_url, hint, offered
from .appeals import decide_appeal, file_appeal
from .errors import AuthorityRequired, EnforcementError
from .expiring import Due, expiring
from .facts import (
    appeal_last_day,
    calendar_for,
    charge_last_day,
    charge_paid_late,
    discount_last_day,
    earlier_final_records,
    earlier_suspension,
    embargo_fine_ufesp,
    final_on,
    has_appeal,
    is_recidivist,
    notice_due,
    notice_possible,
    notice_running,
    paid_late,
    payment_last_day,
    receipt_of,
    record_fine,
    repair_owed,
    revocation_pending,
    uncharged_breaches,
    unit_label,
)
from .frameworks import framework_in_force, missing_framework_message, own_framework_in_force
from .payments import (
    register_charge_payment,
    register_payment,
    send_charge_to_divida_ativa,
    send_to_divida_ativa,
)
from .penalties import (
    apply_embargo,
    apply_fine,
    apply_revocation,
    apply_seizure,
    apply_suspension,
    assess_embargo_fine,
    awaiting_authority,
    ended_facility_suspensions,
    lift_penalty,
    records_awaiting_authority,
    register_embargo_breach,
    register_seizure_costs,
    release_seizure,
    restore_ended_suspensions,
)
from .procedure import (
    OffenderData,
    draw_up_record,
    facts_municipality,
    issue_notice,
    mark_repaired,
    next_number,
    open_case,
    publish_notice_edital,
    publish_record_edital,
    register_notice_delivery,
    register_notice_failure,
    register_record_delivery,
    register_record_failure,
    register_repair,
)
from .timeline import Step, Timeline, case_timeline

__all__ = [
    "ACTIONS",
    "PENALTIES",
    "Action",
    "allowed",
    "check",
    "for_url",
    "hint",
    "offered",
    "AuthorityRequired",
    "Due",
    "EnforcementError",
    "OffenderData",
    "Step",
    "Timeline",
    "appeal_last_day",
    "apply_embargo",
    "apply_fine",
    "awaiting_authority",
    "records_awaiting_authority",
    "apply_revocation",
    "apply_seizure",
    "apply_suspension",
    "assess_embargo_fine",
    "calendar_for",
    "charge_last_day",
    "charge_paid_late",
    "case_timeline",
    "decide_appeal",
    "discount_last_day",
    "framework_in_force",
    "missing_framework_message",
    "own_framework_in_force",
    "notice_possible",
    "notice_running",
    "unit_label",
    "draw_up_record",
    "earlier_final_records",
    "earlier_suspension",
    "embargo_fine_ufesp",
    "ended_facility_suspensions",
    "expiring",
    "facts_municipality",
    "final_on",
    "file_appeal",
    "has_appeal",
    "is_recidivist",
    "issue_notice",
    "lift_penalty",
    "mark_repaired",
    "next_number",
    "notice_due",
    "open_case",
    "paid_late",
    "payment_last_day",
    "receipt_of",
    "record_fine",
    "register_charge_payment",
    "register_embargo_breach",
    "publish_notice_edital",
    "publish_record_edital",
    "register_notice_delivery",
    "register_notice_failure",
    "register_payment",
    "register_record_delivery",
    "register_record_failure",
    "register_repair",
    "register_seizure_costs",
    "release_seizure",
    "repair_owed",
    "restore_ended_suspensions",
    "revocation_pending",
    "send_charge_to_divida_ativa",
    "send_to_divida_ativa",
    "uncharged_breaches",
]
