"""What waits for each role: on its landing page and as a badge in its
menu, counted in the user's current municipality, with a fixed number of queries per request
whatever the data."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from ctr import closing
from ctr.field import corrections
from ctr.field.corrections import Proposal
from ctr.models import CTR, CTRCorrection
from fiscalization import enforcement
from fiscalization.models.enforcement import DeliveryMethod
from nucleo.waiting import compute
from tests.ctr.onward_world import inbound, web_client
from tests.ctr_world import build_world
from tests.enforcement_world import at, entries, open_case

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(frozen_today):
    return build_world()


def waiting_counts(html: str) -> dict[str, int]:
    """The landing page's "O que aguarda você": {key: count}."""
    panel = re.search(r'<section class="waiting-panel".*?</section>', html, re.S)
    assert panel, "the landing page shows what waits"
    return {
        key: int(count)
        for key, count in re.findall(
            r'data-waiting="([a-z_]+)"><strong class="waiting-count">(\d+)</strong>', panel[0]
        )
    }


def menu_badge(html: str) -> int:
    """The badge of the area's link in the main menu (0 when none is shown)."""
    area = re.search(r'<ul class="nav-group nav-area".*?</ul>', html, re.S)[0]
    first = re.search(r"<li><a [^>]*>[^<]*(.*?)</a></li>", area, re.S)[1]
    badge = re.search(r'data-count="(\d+)"', first)
    return int(badge[1]) if badge else 0


def landing(user) -> str:
    client = web_client(user)
    response = client.get("/painel/", follow=True)
    assert response.status_code == 200
    return response.content.decode()


def propose_by_transporter(world, ctr):
    return corrections.propose(
        CTR.objects.get(pk=ctr.pk),
        world.alfa_user,
        Proposal(received_volume_m3=Decimal("9")),
        "Recontagem na balança",
    )


def test_the_operator_sees_loads_to_receive_and_corrections_to_decide(world):
    before = waiting_counts(landing(world.operator))
    assert before == {"to_receive": 0, "corrections": 0}
    inbound(world, {"A": "4"})
    inbound(world, {"A": "3"})
    received = inbound(world, {"A": "10"}, received="10")
    propose_by_transporter(world, received)
    html = landing(world.operator)
    assert waiting_counts(html) == {"to_receive": 2, "corrections": 1}
    assert menu_badge(html) == 3
    # The row of the received CTR says a correction waits for the operator.
    row = re.search(rf"<tr>\s*<th scope=\"row\"><a [^>]*>{received.number}</a>.*?</tr>", html, re.S)
    assert row and "correção a decidir" in row[0]
    # The other facility's operator has nothing waiting.
    assert waiting_counts(landing(world.pev_operator)) == {"to_receive": 0, "corrections": 0}


def test_the_transporter_sees_corrections_to_answer_and_refused_loads(world):
    assert waiting_counts(landing(world.alfa_user)) == {"corrections": 0, "refused": 0}
    refused = inbound(world, {"A": "4"})
    closing.refuse(CTR.objects.get(pk=refused.pk), world.operator, "Carga com gesso")
    received = inbound(world, {"A": "10"}, received="10")
    corrections.propose(
        CTR.objects.get(pk=received.pk),
        world.operator,
        Proposal(received_volume_m3=Decimal("8")),
        "Pesagem refeita",
    )
    html = landing(world.alfa_user)
    assert waiting_counts(html) == {"corrections": 1, "refused": 1}
    assert menu_badge(html) == 2
    assert waiting_counts(landing(world.beta_user)) == {"corrections": 0, "refused": 0}


def test_the_nucleo_sees_its_queues_in_its_menu(world):
    received = inbound(world, {"A": "10"}, received="10")
    correction = propose_by_transporter(world, received)
    corrections.refuse(correction, world.operator, "A balança marcou 10 m³")
    corrections.escalate(correction, world.alfa_user)
    html = landing(world.nucleo)
    counts = waiting_counts(html)
    assert counts["corrections"] == 1
    assert {"declarations", "plans", "registrations"} <= set(counts)
    menu = re.search(r'<details class="nav-details" id="pendencias">.*?</details>', html, re.S)[0]
    for name, path in (
        ("declarations", "/nucleo/habite-se/"),
        ("plans", "/nucleo/pgrcc/"),
        ("registrations", "/nucleo/geradores/cadastros/"),
        ("corrections", "/nucleo/correcoes/"),
    ):
        assert f'href="{path}" data-waiting="{name}"' in menu


def test_inspectors_and_the_authority_see_deadlines_and_records(world):
    for user in (world.fiscal, world.authority):
        counts = waiting_counts(landing(user))
        assert set(counts) == {"deadlines", "authority", "appeals"}


def test_the_authority_sees_the_records_whose_fine_it_has_to_apply(world):
    """Lei 3.978/2007 art. 35: the record proposes the fine, the authority applies it; the
    badge counts the queue `enforcement:records-awaiting` and links to it."""
    case = open_case(world, at(2025, 3, 3, 9))
    notice = enforcement.issue_notice(
        case, "Remover o entulho.", DeliveryMethod.HAND, at(2025, 3, 3, 10), by=world.fiscal
    )
    enforcement.register_notice_delivery(notice, at(2025, 3, 3, 10), by=world.fiscal)
    record = enforcement.draw_up_record(
        case,
        entries("INF-01"),
        delivery_method=DeliveryMethod.HAND,
        signed_by_offender=True,
        drawn_up_at=at(2025, 3, 7, 10),
        by=world.fiscal,
    )
    html = landing(world.authority)
    assert waiting_counts(html)["authority"] == 1
    assert f'href="{reverse("enforcement:records-awaiting")}" data-waiting="authority"' in html
    enforcement.apply_fine(record, at(2025, 3, 8, 10), by=world.authority)
    assert waiting_counts(landing(world.authority))["authority"] == 0


def test_the_counts_take_a_fixed_number_of_queries(world):
    """One COUNT per kind, whatever the rows: the badges do not slow every page."""

    def queries(user) -> int:
        fresh = get_user_model().objects.get(pk=user.pk)  # as a request's user: nothing cached
        with CaptureQueriesContext(connection) as captured:
            compute(fresh)
        return len(captured)

    users = (world.operator, world.alfa_user, world.nucleo, world.generator_user)
    empty = [queries(user) for user in users]
    for volume in ("3", "4", "5"):
        propose_by_transporter(world, inbound(world, {"A": volume}, received=volume))
        inbound(world, {"A": volume})
    assert [queries(user) for user in users] == empty
    for user, count in zip(users, empty, strict=True):
        # The membership and its side, the jurisdiction's roles, then one COUNT per kind.
        assert count <= len(compute(user).items) + 4, user


def test_one_computation_per_page(world):
    """The menu's badge and the landing page's panel share one computation."""
    client = web_client(world.operator)
    with CaptureQueriesContext(connection) as captured:
        client.get("/recebimentos/")
    table = f'FROM "{CTRCorrection._meta.db_table}"'
    counts = [q["sql"] for q in captured if "COUNT(" in q["sql"] and table in q["sql"]]
    assert len(counts) == 1


def test_the_generator_sees_departures_and_returned_plans(world):
    html = landing(world.generator_user)
    assert set(waiting_counts(html)) == {"departures", "plans_returned"}
