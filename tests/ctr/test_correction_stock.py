"""A correction that moves a facility's stock: approved, or decided by the Núcleo, it is refused
when the corrected values leave the facility with less of a class than already left it on onward
CTRs (or in processing), past the sorting tolerance (Lei 3.978/2007 art. 3 III;
OVER_FACILITY_STOCK's bound); nothing is written. Raising a volume, or correcting at a facility that
shipped nothing, passes as before."""

from __future__ import annotations

import datetime
import threading
from decimal import Decimal

import pytest
from django.db import connection

from ctr import closing as ctr_closing
from ctr import services
from ctr.custody import processing, stock
from ctr.errors import CorrectionOverStock
from ctr.field import corrections
from ctr.field.corrections import Proposal
from ctr.models import (
    CTR,
    CorrectionStatus,
    CTRCorrection,
    CTREvent,
    OnSiteProcessing,
    ProcessingKind,
)
from ctr.rules import WasteLine
from tests.builders import set_parameters
from tests.ctr.onward_world import api_client, inbound, onward, web_client
from tests.ctr_world import TODAY, build_world, make_user
from tests.races import wait_until_blocked

pytestmark = pytest.mark.django_db

CLASS_A = "Classe A (agregados: concreto, tijolo, solo…)"


@pytest.fixture
def world(frozen_today):
    return build_world()


def loaded(world, shipped: str = "5.5"):
    """10 m³ of class A received at the ATT (the CTR to correct) and `shipped` m³ of it gone
    onward; the town's sorting tolerance is 10 % (its default)."""
    load = inbound(world, {"A": "10"}, received="10")
    return CTR.objects.get(pk=load.pk), onward(world, {"A": shipped})


def proposed(world, ctr: CTR, **values) -> CTRCorrection:
    """Proposed by the transporter (Alfa): the ATT's operator approves."""
    return corrections.propose(ctr, world.alfa_user, Proposal(**values), "Recontagem na balança")


def escalated(world, ctr: CTR, **values) -> CTRCorrection:
    correction = proposed(world, ctr, **values)
    corrections.refuse(correction, world.operator, "A balança marcou 10 m³")
    return corrections.escalate(correction, world.alfa_user)


def volume(value: str) -> dict:
    return {"received_volume_m3": Decimal(value)}


def lines(**by_class: str) -> dict:
    return {"waste": [WasteLine(c, Decimal(v), "misturado") for c, v in by_class.items()]}


def written(ctr: CTR) -> tuple:
    """What applying a correction writes: unchanged after a refusal."""
    ctr.refresh_from_db()
    return (
        ctr.received_volume_m3,
        ctr.total_volume_m3,
        ctr.fee_ufesp,
        tuple(f["code"] for f in ctr.findings),
        tuple(ctr.waste.order_by("pk").values_list("waste_class", "volume_m3")),
        CTREvent.objects.count(),
        tuple(
            CTRCorrection.objects.order_by("pk").values_list(
                "status", "applied", "answered_by", "decided_by"
            )
        ),
    )


def closing(world, waste_class: str = "A") -> Decimal:
    return stock.stock_on(world.att, TODAY)[waste_class].closing


def approve_by(world, how: str, ctr: CTR, **values) -> CTRCorrection:
    """The counterpart approves, or the Núcleo decides in favour of a correction sent to it."""
    if how == "approve":
        return corrections.approve(proposed(world, ctr, **values), world.operator)
    correction = escalated(world, ctr, **values)
    return corrections.decide(correction, world.nucleo, True, "A balança estava descalibrada")


BOTH = pytest.mark.parametrize("how", ["approve", "decide"])


# --- the bound: the stock plus the sorting tolerance --------------------------------------------


@BOTH
def test_lowering_the_received_volume_to_the_bound_is_applied(world, how):
    # 5 m³ received, 5.5 shipped: 0.5 m³ over the stock, the 10 % of 5 m³ that sorting admits.
    ctr, _ = loaded(world, "5.5")
    correction = approve_by(world, how, ctr, **volume("5"))
    assert correction.applied
    ctr.refresh_from_db()
    assert ctr.received_volume_m3 == Decimal("5")
    assert closing(world) == Decimal("-0.5")


@BOTH
def test_lowering_it_a_litre_past_the_bound_is_refused_naming_the_onward_ctr(world, how):
    ctr, shipped = loaded(world, "5.5")
    correction = (
        proposed(world, ctr, **volume("4.999"))
        if how == "approve"
        else escalated(world, ctr, **volume("4.999"))
    )
    before = written(ctr)
    with pytest.raises(CorrectionOverStock) as raised:
        if how == "approve":
            corrections.approve(correction, world.operator)
        else:
            corrections.decide(correction, world.nucleo, True, "A balança estava descalibrada")
    message = raised.value.message
    assert raised.value.status == 409 and raised.value.code == "correction_over_stock"
    assert message.startswith("A correção não pode ser aplicada.")
    assert f"a área “{world.att.name}” teria recebido 4,999 m³ de {CLASS_A} até 30/11/2026" in (
        message
    )
    assert "já saíram dela 5,5 m³ dessa classe" in message
    assert "tolerância de triagem de 10% (5,499 m³)" in message
    assert f"{shipped.number} (5,5 m³, 30/11/2026)" in message
    assert written(ctr) == before
    correction.refresh_from_db()
    expected = CorrectionStatus.PROPOSED if how == "approve" else CorrectionStatus.ESCALATED
    assert correction.status == expected and not correction.applied
    assert closing(world) == Decimal("4.5")


def test_without_tolerance_the_bound_is_the_stock_itself(world):
    set_parameters(world.town, sorting_tolerance_pct={"A": "0"})
    ctr, _ = loaded(world, "6")
    with pytest.raises(CorrectionOverStock, match=r"tolerância de triagem de 0% \(5,999 m³\)"):
        corrections.approve(proposed(world, ctr, **volume("5.999")), world.operator)
    corrections.refuse(CTRCorrection.objects.get(), world.operator, "Não confere")
    assert corrections.approve(proposed(world, ctr, **volume("6")), world.operator).applied
    assert closing(world) == Decimal("0")


# --- the class and the onward CTRs named ------------------------------------------------------


def test_a_class_corrected_away_is_checked_per_class(world):
    """6 m³ of A left; the load was partly class B: A keeps 5.455 m³ (bound 6.0005) but not
    5.45 (bound 5.995)."""
    ctr, shipped = loaded(world, "6")
    correction = proposed(world, ctr, **lines(A="5.45", B="4.55"))
    before = written(ctr)
    with pytest.raises(CorrectionOverStock) as raised:
        corrections.approve(correction, world.operator)
    assert f"5,45 m³ de {CLASS_A}" in raised.value.message
    assert "(5,995 m³)" in raised.value.message and shipped.number in raised.value.message
    assert "Classe B" not in raised.value.message
    assert written(ctr) == before
    corrections.refuse(CTRCorrection.objects.get(), world.operator, "Não confere")
    assert corrections.approve(
        proposed(world, ctr, **lines(A="5.455", B="4.545")), world.operator
    ).applied


def test_a_whole_load_of_another_class_is_refused(world):
    ctr, shipped = loaded(world, "1")
    with pytest.raises(CorrectionOverStock) as raised:
        corrections.approve(proposed(world, ctr, **lines(B="10")), world.operator)
    assert f"teria recebido 0 m³ de {CLASS_A}" in raised.value.message
    assert "(0 m³)" in raised.value.message and shipped.number in raised.value.message


def test_only_the_outflows_past_the_corrected_stock_are_named(world):
    """10 m³ on the 28th; 4 m³ left on the 29th and 4 on the 30th. Received 7: the 29th stays
    within (3 m³ left), the 30th does not; received 3: both pass it."""
    day = datetime.timedelta(days=1)
    load = inbound(world, {"A": "10"}, received="10", day=TODAY - 2 * day)
    ctr = CTR.objects.get(pk=load.pk)
    first = onward(world, {"A": "4"}, day=TODAY - day)
    second = onward(world, {"A": "4"}, day=TODAY)
    with pytest.raises(CorrectionOverStock) as raised:
        corrections.approve(proposed(world, ctr, **volume("7")), world.operator)
    message = raised.value.message
    assert "até 30/11/2026" in message and "já saíram dela 8 m³" in message
    assert second.number in message and first.number not in message
    corrections.refuse(CTRCorrection.objects.get(), world.operator, "Não confere")
    with pytest.raises(CorrectionOverStock) as raised:
        corrections.approve(proposed(world, ctr, **volume("3")), world.operator)
    message = raised.value.message
    assert "até 29/11/2026" in message and "já saíram dela 4 m³" in message
    assert f"{first.number} (4 m³, 29/11/2026), {second.number} (4 m³, 30/11/2026)" in message


def test_processing_on_site_counts_as_what_left(world):
    ctr = CTR.objects.get(pk=inbound(world, {"A": "10"}, received="10").pk)
    processing.record_processing(
        world.operator, world.att, "A", Decimal("5"), TODAY, ProcessingKind.RECYCLED
    )
    with pytest.raises(CorrectionOverStock, match="beneficiamento de 5 m³ em 30/11/2026"):
        corrections.approve(proposed(world, ctr, **volume("4.5")), world.operator)


def test_an_onward_ctr_corrected_upwards_is_checked_at_its_origin(world):
    """The onward CTR's own lines are what its origin shipped: raised past the ATT's stock
    plus the tolerance (11 m³ of 10 received), the correction is refused."""
    inbound(world, {"A": "10"}, received="10")
    shipped = onward(world, {"A": "6"})
    receiver = make_user("reciclagem", facility=world.recycling)
    ctr_closing.receive(shipped, receiver, Decimal("6"))
    shipped = CTR.objects.get(pk=shipped.pk)
    correction = corrections.propose(
        shipped, world.beta_user, Proposal(**lines(A="11.001")), "Faltou uma caçamba"
    )
    with pytest.raises(CorrectionOverStock) as raised:
        corrections.approve(correction, receiver)
    assert f"a área “{world.att.name}” teria recebido 10 m³" in raised.value.message
    assert f"{shipped.number} (11,001 m³, 30/11/2026)" in raised.value.message
    corrections.refuse(correction, receiver, "Não confere")
    correction = corrections.propose(
        shipped, world.beta_user, Proposal(**lines(A="11")), "Faltou uma caçamba"
    )
    assert corrections.approve(correction, receiver).applied


# --- what passes as before --------------------------------------------------------------------


def test_raising_the_received_volume_passes_at_the_bound(world):
    ctr, _ = loaded(world, "5.5")
    assert corrections.approve(proposed(world, ctr, **volume("5")), world.operator).applied
    assert corrections.approve(proposed(world, ctr, **volume("5.1")), world.operator).applied


def short_by_earlier_processing(world, day):
    """5 m³ of A processed on `day`, written as record_processing wrote it before it read the
    later days: the 8 m³ shipped after it are then past the stock."""
    OnSiteProcessing.objects.create(
        facility=world.att,
        waste_class="A",
        volume_m3=Decimal("5"),
        day=day,
        kind=ProcessingKind.RECYCLED,
        recorded_by=world.operator,
    )


def test_a_shortage_the_correction_does_not_worsen_is_not_its_own(world):
    """A later day already short (processing written before record_processing read the later
    days): a correction that raises the volume is not refused for it."""
    day = datetime.timedelta(days=1)
    ctr = CTR.objects.get(pk=inbound(world, {"A": "10"}, received="10", day=TODAY - day).pk)
    onward(world, {"A": "8"})
    short_by_earlier_processing(world, TODAY - day)
    assert closing(world) == Decimal("-3")
    assert corrections.approve(proposed(world, ctr, **volume("10.5")), world.operator).applied


def test_a_facility_that_shipped_nothing_takes_any_lower_volume(world):
    ctr = CTR.objects.get(pk=inbound(world, {"A": "10"}, received="10").pk)
    assert corrections.approve(proposed(world, ctr, **volume("0.001")), world.operator).applied


def test_a_correction_not_moving_the_stock_is_applied_with_the_stock_short(world):
    """The stock already short (as above); a new equipment does not touch the stock."""
    day = datetime.timedelta(days=1)
    ctr = CTR.objects.get(pk=inbound(world, {"A": "10"}, received="10", day=TODAY - day).pk)
    onward(world, {"A": "8"})
    short_by_earlier_processing(world, TODAY - day)
    correction = corrections.propose(
        ctr, world.operator, Proposal(equipment_code="C-01"), "Outra caçamba"
    )
    assert "equipment" in correction.changes
    assert corrections.approve(correction, world.alfa_user).applied


# --- the API and the pages ----------------------------------------------------------------------


def a_litre_short(world):
    """A correction to 4.999 m³ of the 10 received, 5.5 shipped: just past the bound."""
    ctr, shipped = loaded(world, "5.5")
    correction = proposed(world, ctr, **volume("4.999"))
    return ctr, shipped, correction, written(ctr)


def test_the_api_answers_409_in_portuguese_and_writes_nothing(world):
    ctr, shipped, correction, before = a_litre_short(world)
    response = api_client(world.operator).post(f"/api/v1/corrections/{correction.pk}/approve/")
    assert response.status_code == 409
    assert response["Content-Type"].startswith("application/problem+json")
    body = response.json()
    assert "A correção não pode ser aplicada." in body["detail"]
    assert shipped.number in body["detail"] and "4,999 m³" in body["detail"]
    assert written(ctr) == before
    corrections.refuse(correction, world.operator, "Não confere")
    up = api_client(world.alfa_user).post(
        f"/api/v1/corrections/{correction.pk}/escalate/", {}, format="json"
    )
    assert up.status_code == 200
    before = written(ctr)
    response = api_client(world.nucleo).post(
        f"/api/v1/corrections/{correction.pk}/decide/",
        {"approve": True, "note": "Confere"},
        format="json",
    )
    assert response.status_code == 409
    assert "A correção não pode ser aplicada." in response.json()["detail"]
    assert written(ctr) == before
    refused = api_client(world.nucleo).post(
        f"/api/v1/corrections/{correction.pk}/decide/",
        {"approve": False, "note": "A saída confere com a balança"},
        format="json",
    )
    assert refused.status_code == 200  # deciding against writes as before


def test_the_api_applies_a_correction_at_the_bound(world):
    ctr, _ = loaded(world, "5.5")
    correction = proposed(world, ctr, **volume("5"))
    response = api_client(world.operator).post(f"/api/v1/corrections/{correction.pk}/approve/")
    assert response.status_code == 200 and response.json()["applied"] is True


def test_the_pages_show_the_refusal_and_write_nothing(world):
    ctr, shipped, correction, before = a_litre_short(world)
    response = web_client(world.operator).post(f"/correcoes/{correction.pk}/aprovar/")
    assert response.status_code == 409
    page = " ".join(response.content.decode().split())
    assert "A correção não pode ser aplicada." in page and shipped.number in page
    assert written(ctr) == before

    corrections.refuse(correction, world.operator, "Não confere")
    corrections.escalate(correction, world.alfa_user)
    before = written(ctr)
    response = web_client(world.nucleo).post(
        f"/correcoes/{correction.pk}/decidir/", {"decision": "approve", "note": "Confere"}
    )
    assert response.status_code == 409
    page = " ".join(response.content.decode().split())
    assert "A correção não pode ser aplicada." in page and "4,999 m³" in page
    assert written(ctr) == before


def test_the_page_applies_a_correction_at_the_bound(world):
    ctr, _ = loaded(world, "5.5")
    correction = proposed(world, ctr, **volume("5"))
    response = web_client(world.operator).post(f"/correcoes/{correction.pk}/aprovar/")
    assert response.status_code == 302
    ctr.refresh_from_db()
    assert ctr.received_volume_m3 == Decimal("5")


# --- at once ----------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_an_onward_ctr_and_an_approval_at_once_cannot_both_pass(frozen_today, monkeypatch):
    """The onward CTR reads the stock (10 m³) and, before it commits, the approval lowering
    the load to 5 m³ starts: it waits for the facility the onward CTR locked, then finds the
    6 m³ shipped and is refused (without the lock both would pass: 6 m³ out of 5). The onward
    CTR goes on only once the approval waits on its lock (tests/races.py): no sleep orders
    them, and an approval that does not wait fails the test."""
    world = build_world()
    set_parameters(world.town, sorting_tolerance_pct={"A": "0"})
    ctr = CTR.objects.get(pk=inbound(world, {"A": "10"}, received="10").pk)
    correction = proposed(world, ctr, **volume("5"))
    read, results, threads = threading.Event(), {}, []
    real_origin_stock = services.origin_stock

    def slow_origin_stock(facility, day):
        found = real_origin_stock(facility, day)
        if threading.current_thread() is threads[0]:
            read.set()
            wait_until_blocked(threads[1:])  # the approval, on the facility locked here
        return found

    monkeypatch.setattr(services, "origin_stock", slow_origin_stock)

    def ship():
        try:
            results["onward"] = onward(world, {"A": "6"})
        except Exception as error:  # noqa: BLE001 - the test reads which one failed
            results["onward"] = error
        finally:
            connection.close()

    def approve():
        try:
            assert read.wait(120), "o CTR de saída não leu o estoque"
            results["approval"] = corrections.approve(correction, world.operator)
        except Exception as error:  # noqa: BLE001
            results["approval"] = error
        finally:
            connection.close()

    threads[:] = [threading.Thread(target=ship), threading.Thread(target=approve)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert isinstance(results["onward"], CTR), results
    assert isinstance(results["approval"], CorrectionOverStock), results
    assert CTR.objects.get(pk=ctr.pk).received_volume_m3 == Decimal("10")
    assert stock.stock_on(world.att, TODAY)["A"].closing == Decimal("4")
