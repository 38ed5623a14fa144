"""What issue 25 added to the enforcement (the authority's queue of records awaiting it, art.
35; the menu's badges of what waits), tried with two municipalities that both have data
(tests.neighbour_world): a person with roles in A and in B works in the one chosen
(/municipio/), and sees and acts on that one's records only."""

from __future__ import annotations

import pytest
from django.urls import reverse

from ctr import roles
from fiscalization import enforcement
from fiscalization.enforcement import OffenderData
from fiscalization.models.enforcement import DeliveryMethod, InfractionRecord, OffenderRole
from jurisdiction.models import StaffRole
from tests.ctr_world import make_user
from tests.enforcement_world import (
    at,
    ensure_frameworks,
    entries,
    notified_and_expired,
    own_framework,
    record_for,
)
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
