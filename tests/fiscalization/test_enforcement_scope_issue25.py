"""The enforcement's queues (the authority's queue of records awaiting it, art.
35; the menu's badges of what waits), tried with two municipalities that both have data
(tests.neighbour_world): a person with roles in A and in B works in the one chosen
(/municipio/), and sees and acts on that one's records only."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import timezone

from ctr import roles
from ctr.field import corrections
from ctr.field.corrections import Proposal
from ctr.models import CTR
from fiscalization import enforcement
from fiscalization.enforcement import OffenderData
from fiscalization.enforcement.expiring import expiring
from fiscalization.models.enforcement import DeliveryMethod, InfractionRecord, OffenderRole
from generators.models import PlanStatus
from jurisdiction import scope
from jurisdiction.models import StaffRole
from nucleo.waiting import compute
from tests.ctr.onward_world import inbound
from tests.ctr_world import make_user
from tests.enforcement_world import (
    D,
    at,
    ensure_frameworks,
    entries,
    notified_and_expired,
    own_framework,
    record_for,
)
from tests.generators.account_world import pending_registration
from tests.generators.declaration_world import waiting
from tests.generators.suspects_world import days, plan, site
from tests.neighbour_world import build_neighbours, choose, web

pytestmark = pytest.mark.django_db

QUEUE = "enforcement:records-awaiting"


def record_in_b(towns) -> InfractionRecord:
    """A record of B, drawn up by B's inspector under B's own framework, its fine proposed and
    not applied yet (Lei 3.978/2007 art. 35)."""
    ensure_frameworks()
    own_framework(towns.b)
    case = enforcement.open_case(
        municipality=towns.b,
        inspector=towns.b_fiscal,
        offender=OffenderData(
            "Construtora de B Ltda.", "11444777000161", OffenderRole.TRANSPORT_DIRECTOR
        ),
        description="Entulho em área pública de B.",
        location=towns.in_b(),
        opened_at=at(2025, 3, 3, 9),
    )
    drawn = notified_and_expired(case)
    return enforcement.draw_up_record(
        case,
        entries("INF-01", town=towns.b),
        delivery_method=DeliveryMethod.HAND,
        signed_by_offender=True,
        drawn_up_at=drawn,
        by=towns.b_fiscal,
    )


def staff_of_both(username: str, *held: str, towns):
    """A person holding `held` in A and in B (a consortium's staff)."""
    user = make_user(username)
    for municipality in (towns.a, towns.b):
        for role in held:
            StaffRole.objects.create(user=user, municipality=municipality, role=role)
    return user


@pytest.fixture
def towns(frozen_today):
    towns = build_neighbours()
    towns.record_a = record_for(towns.world, applied=False)
    towns.record_b = record_in_b(towns)
    towns.authority_ab = staff_of_both("autoridade_ab", roles.AUTORIDADE, towns=towns)
    return towns


def queued(client) -> set[int]:
    response = client.get(reverse(QUEUE))
    assert response.status_code == 200
    return {row["record"].pk for row in response.context["rows"]}


def test_the_queue_lists_the_current_municipality_s_records_only(towns):
    client = web(towns.authority_ab)
    choose(client, towns.a)
    assert queued(client) == {towns.record_a.pk}
    choose(client, towns.b)
    assert queued(client) == {towns.record_b.pk}


def test_an_authority_of_a_and_b_working_in_a_does_not_apply_b_s_fine_from_a_s_queue(towns):
    """The queue's act is the current municipality's: a record of B posted to A's queue is
    not there (404), even for a person who is B's authority too; chosen B, it applies."""
    client = web(towns.authority_ab)
    choose(client, towns.a)
    refused = client.post(reverse(QUEUE), {"record": towns.record_b.pk})
    assert refused.status_code == 404
    towns.record_b.refresh_from_db()
    assert towns.record_b.fine_applied_at is None
    choose(client, towns.b)
    done = client.post(reverse(QUEUE), {"record": towns.record_b.pk})
    assert done.status_code == 302
    towns.record_b.refresh_from_db()
    assert towns.record_b.fine_applied_by == towns.authority_ab
    # B's own authority never reaches A's record, from any queue.
    other = web(towns.b_authority).post(reverse(QUEUE), {"record": towns.record_a.pk})
    assert other.status_code == 404
    towns.record_a.refresh_from_db()
    assert towns.record_a.fine_applied_at is None


# --- the menu's badges (nucleo.waiting) -------------------------------------------------------


def staff_of(username: str, *municipalities):
    """The Núcleo, the inspector and the authority at once, in each of `municipalities`."""
    user = make_user(username)
    for municipality in municipalities:
        for role in (roles.NUCLEO, roles.FISCAL, roles.AUTORIDADE):
            StaffRole.objects.create(user=user, municipality=municipality, role=role)
    return user


def badges(user, municipality=None) -> dict[str, int]:
    """What waits for `user` in `municipality` (its current one), as its menu counts it."""
    user = get_user_model().objects.get(pk=user.pk)  # a request's user: nothing cached
    if municipality is not None:
        scope.choose(user, municipality.pk)
    return {item.key: item.count for item in compute(user).items}


def gama_site(towns, address: str, municipality, location=None):
    """A worksite of Gama that ended two months ago, its PGRCC sent to the Núcleo and its
    Habite-se requested (both wait for the municipality's Núcleo): the request as written
    before any load could block it (the worksite has none, and the service now refuses a
    request its review blocks)."""
    worksite = site(
        towns.world,
        address,
        start=days(-300),
        end=days(-60),
        municipality=municipality,
        location=location,
    )
    plan(worksite, status=PlanStatus.SUBMITTED, A="40")
    waiting(towns.world, worksite, ended_on=days(-1))
    return worksite


def test_the_badges_count_the_current_municipality_s_work_only(towns):
    world = towns.world
    # A: every queue has something; B: its own registration, PGRCC, Habite-se and record.
    pending_registration("cadastro-a1", municipality=towns.a)
    pending_registration("cadastro-a2", "11144477735", municipality=towns.a)
    pending_registration("cadastro-b", "39053344705", municipality=towns.b)
    gama_site(towns, "Rua de A, 1", towns.a)
    gama_site(towns, "Rua de B, 2", towns.b, location=towns.in_b())
    received = inbound(world, {"A": "10"}, received="10")
    correction = corrections.propose(
        CTR.objects.get(pk=received.pk),
        world.alfa_user,
        Proposal(received_volume_m3=Decimal("9")),
        "Recontagem na balança",
    )
    corrections.refuse(correction, world.operator, "A balança marcou 10 m³")
    corrections.escalate(correction, world.alfa_user)
    appealed = record_for(world)
    enforcement.file_appeal(appealed, D(2025, 3, 11), "Razões.")
    only_a, only_b = staff_of("so_a", towns.a), staff_of("so_b", towns.b)
    both = staff_of("consorcio_ab", towns.a, towns.b)

    in_a, in_b = badges(only_a), badges(only_b)
    # Each queue of A has work, so a count that leaked A into B's would show.
    assert all(in_a.values()), in_a
    assert in_b["registrations"] == in_b["plans"] == in_b["declarations"] == 1
    assert in_b["authority"] == 1
    # The deadlines are each municipality's figure, whoever asks: A's and B's make up all.
    every = sum(len(due) for due in expiring(timezone.now(), 0).values())
    assert in_a["deadlines"] + in_b["deadlines"] == every
    assert badges(both, towns.a) == in_a
    assert badges(both, towns.b) == in_b
