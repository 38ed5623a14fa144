"""The corrections after reception the authorization matrix acts on (tests/authorization_table.py):
received CTRs of Alfa at the ATT, and a correction in each state a step starts from, one per step
and interface (each check changes its own)."""

from __future__ import annotations

from decimal import Decimal

from ctr import closing
from ctr.field import corrections
from ctr.field.corrections import Proposal
from tests.ctr_world import World, issue_hours_ago


def _received(world: World):
    return closing.receive(issue_hours_ago(world, 1), world.operator, Decimal("3"))


def _proposed(world: World):
    """Proposed by the transporter: the ATT's operator decides."""
    return corrections.propose(
        _received(world), world.alfa_user, Proposal(received_volume_m3=Decimal("2")), "Recontagem"
    )


def _refused(world: World):
    correction = _proposed(world)
    return corrections.refuse(correction, world.operator, "A balança marcou 3 m³")


def _escalated(world: World):
    correction = _refused(world)
    return corrections.escalate(correction, world.alfa_user)


def matrix_objects(world: World) -> dict:
    objects = {"corr_ctr": _received(world).number}
    for prefix in ("api", "web"):
        approve = _proposed(world)
        objects[f"{prefix}_corr_approve"] = approve.pk
        objects[f"{prefix}_corr_approve_ctr"] = approve.ctr.number
        objects[f"{prefix}_corr_refuse"] = _proposed(world).pk
        escalate = _refused(world)
        objects[f"{prefix}_corr_escalate"] = escalate.pk
        objects[f"{prefix}_corr_escalate_ctr"] = escalate.ctr.number
        objects[f"{prefix}_corr_decide"] = _escalated(world).pk
    return objects
