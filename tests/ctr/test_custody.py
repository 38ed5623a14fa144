"""The chain of custody: FIFO allocation of inbound loads to the onward CTRs
and processing that took them on, rebuilt when a movement changes, and a worksite's loads
followed to where they are now."""

import datetime
import random
from decimal import Decimal

import pytest

from ctr import closing, services
from ctr.custody import chain as custody
from ctr.custody import processing, stock
from ctr.custody.chain import Outcome
from ctr.models import CustodyAllocation, CustodyStale, ProcessingKind, Worksite
from tests.ctr.onward_world import inbound, onward
from tests.ctr_world import build_world, make_user

pytestmark = pytest.mark.django_db

D = datetime.date
M3 = Decimal


@pytest.fixture
def world(frozen_today):
    world = build_world()
    world.recycling_operator = make_user("operador_reciclagem", facility=world.recycling)
    return world


def site(world, address="Rua das Obras, 1"):
    return services.WorksiteData(address, world.origin)


def pieces_by_line(world):
    """The stored allocation at the ATT as {(inbound CTR, outbound CTR or 'processed'/'stock'):
    m³}."""
    custody.refresh()
    result = {}
    for piece in CustodyAllocation.objects.filter(facility=world.att).select_related(
        "inbound__ctr", "outbound__ctr"
    ):
        source = piece.inbound.ctr.number if piece.inbound else "excesso"
        if piece.outbound:
            target = piece.outbound.ctr.number
        elif piece.processing_id:
            target = "beneficiado"
        else:
            target = "estoque"
        result[source, target] = result.get((source, target), 0) + piece.volume_m3
    return {key: value.quantize(M3("0.001")) for key, value in result.items()}


def test_first_in_first_out_per_class(world):
    first = inbound(world, {"A": "5", "B": "2"}, received="7", day=D(2026, 11, 1))
    second = inbound(world, {"A": "3"}, received="3", day=D(2026, 11, 2))
    out1 = onward(world, {"A": "4"}, day=D(2026, 11, 3))
    out2 = onward(world, {"A": "3"}, day=D(2026, 11, 4))

    assert pieces_by_line(world) == {
        (first.number, out1.number): M3("4.000"),
        (first.number, out2.number): M3("1.000"),
        (second.number, out2.number): M3("2.000"),
        (second.number, "estoque"): M3("1.000"),
        (first.number, "estoque"): M3("2.000"),  # its class B: no class B left the ATT
    }


def test_the_order_is_the_transport_date_not_the_order_of_issue(world):
    late = inbound(world, {"A": "2"}, received="2", day=D(2026, 11, 10))
    early = inbound(world, {"A": "2"}, received="2", day=D(2026, 11, 5))
    out = onward(world, {"A": "2"}, day=D(2026, 11, 12))

    assert pieces_by_line(world) == {
        (early.number, out.number): M3("2.000"),
        (late.number, "estoque"): M3("2.000"),
    }


def test_received_volume_is_what_is_allocated(world):
    # 10 m³ declared, 8 received: the ATT holds 8 of it.
    load = inbound(world, {"A": "10"}, received="8", day=D(2026, 11, 1))
    out = onward(world, {"A": "6"}, day=D(2026, 11, 2))

    assert pieces_by_line(world) == {
        (load.number, out.number): M3("6.000"),
        (load.number, "estoque"): M3("2.000"),
    }


def test_processing_on_site_takes_its_turn(world):
    load = inbound(world, {"A": "5"}, received="5", day=D(2026, 11, 1))
    processing.record_processing(
        world.operator, world.att, "A", M3("2"), D(2026, 11, 2), ProcessingKind.RECYCLED
    )
    out = onward(world, {"A": "3"}, day=D(2026, 11, 3))

    assert pieces_by_line(world) == {
        (load.number, "beneficiado"): M3("2.000"),
        (load.number, out.number): M3("3.000"),
    }


def test_shipping_past_what_was_received_is_excess_within_the_tolerance(world):
    load = inbound(world, {"A": "10"}, received="10", day=D(2026, 11, 1))
    out = onward(world, {"A": "10.5"}, day=D(2026, 11, 2))  # within 10 % of sorting gain

    assert pieces_by_line(world) == {
        (load.number, out.number): M3("10.000"),
        ("excesso", out.number): M3("0.500"),
    }


def test_a_refused_onward_ctr_gives_its_volume_back_and_the_allocation_follows(world):
    load = inbound(world, {"A": "5"}, received="5", day=D(2026, 11, 1))
    out1 = onward(world, {"A": "3"}, day=D(2026, 11, 2))
    out2 = onward(world, {"A": "2"}, day=D(2026, 11, 3))
    assert pieces_by_line(world) == {
        (load.number, out1.number): M3("3.000"),
        (load.number, out2.number): M3("2.000"),
    }

    closing.refuse(out1, world.recycling_operator, "fora de especificação")
    assert CustodyStale.objects.filter(facility=world.att).exists()
    assert pieces_by_line(world) == {
        (load.number, out2.number): M3("2.000"),
        (load.number, "estoque"): M3("3.000"),
    }
    assert not CustodyStale.objects.exists()


def test_a_reception_marks_the_facility_and_a_new_inbound_is_allocated(world):
    inbound(world, {"A": "2"}, received="2", day=D(2026, 11, 1))
    out = onward(world, {"A": "2"}, day=D(2026, 11, 5))
    custody.refresh()
    later = inbound(world, {"A": "3"}, day=D(2026, 11, 3))
    assert not CustodyStale.objects.filter(facility=world.att).exists()  # issued: no stock yet

    closing.receive(later, world.operator, M3("3"))
    assert CustodyStale.objects.filter(facility=world.att).exists()
    assert pieces_by_line(world)[later.number, "estoque"] == M3("3.000")
    assert (later.number, out.number) not in pieces_by_line(world)


def test_what_the_allocation_leaves_in_stock_is_the_facility_stock(world):
    for day, volume, received in ((1, "4", "4"), (2, "6", "5.5"), (4, "3", "3")):
        inbound(world, {"A": volume, "B": "1"}, received=received, day=D(2026, 11, day))
    onward(world, {"A": "5"}, day=D(2026, 11, 3))
    processing.record_processing(
        world.operator, world.att, "B", M3("1.5"), D(2026, 11, 5), ProcessingKind.REUSED
    )
    onward(world, {"A": "3"}, day=D(2026, 11, 6))
    custody.refresh()

    for line in stock.balance(world.att):
        left = sum(
            piece.volume_m3
            for piece in CustodyAllocation.objects.filter(
                facility=world.att,
                waste_class=line.waste_class,
                outbound=None,
                processing=None,
                inbound__isnull=False,
            )
        )
        assert left.quantize(M3("0.001")) == line.closing


def reference_fifo(inbound_lines, outbound_lines):
    """A plain FIFO over (key, volume) lists already in order: {(in key, out key): m³}."""
    result = {}
    pending = [[key, volume] for key, volume in inbound_lines]
    for out_key, volume in outbound_lines:
        while volume > 0 and pending:
            taken = min(volume, pending[0][1])
            result[pending[0][0], out_key] = result.get((pending[0][0], out_key), 0) + taken
            pending[0][1] -= taken
            volume -= taken
            if pending[0][1] == 0:
                pending.pop(0)
        if volume > 0:
            result["excesso", out_key] = volume
    for key, volume in pending:
        result[key, "estoque"] = result.get((key, "estoque"), 0) + volume
    return result


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_sweep_agrees_with_a_plain_fifo(world, seed):
    """Random days and volumes, ties included: the set-based sweep gives what a loop would."""
    chooser = random.Random(seed)
    loads = []
    for _ in range(8):
        day = D(2026, 11, chooser.randint(1, 10))
        volume = M3(chooser.randint(1, 12)) / 2
        loads.append((day, inbound(world, {"A": str(volume)}, received=str(volume), day=day)))
    shipped = []
    total_in = sum(ctr.total_volume_m3 for _, ctr in loads)
    left = total_in
    for _ in range(5):
        volume = min(M3(chooser.randint(1, 10)) / 2, left)
        if volume <= 0:
            break
        day = D(2026, 11, chooser.randint(11, 20))
        shipped.append((day, onward(world, {"A": str(volume)}, day=day)))
        left -= volume
    in_order = sorted(loads, key=lambda pair: (pair[0], pair[1].pk))
    out_order = sorted(shipped, key=lambda pair: (pair[0], pair[1].pk))

    expected = reference_fifo(
        [(ctr.number, ctr.total_volume_m3) for _, ctr in in_order],
        [(ctr.number, ctr.total_volume_m3) for _, ctr in out_order],
    )
    assert pieces_by_line(world) == {
        key: value.quantize(M3("0.001")) for key, value in expected.items()
    }


# --- a worksite's loads, followed ------------------------------------------------------------


def outcomes(pieces):
    return sorted((p.outcome, p.facility_id, p.volume_m3) for p in pieces)


def test_a_worksite_load_followed_through_the_att_to_its_final_destinations(world):
    load = inbound(world, {"A": "6"}, received="6", day=D(2026, 11, 1), worksite=site(world))
    worksite = load.worksite
    to_recycling = onward(world, {"A": "4"}, day=D(2026, 11, 2))
    closing.receive(to_recycling, world.recycling_operator, M3("4"))
    onward(world, {"A": "1"}, day=D(2026, 11, 3), destination=world.landfill)  # not received

    assert outcomes(custody.worksite_pieces(worksite.pk)) == [
        (Outcome.DESTINED, world.recycling.pk, M3("4.000")),
        (Outcome.STOCK, world.att.pk, M3("1.000")),
        (Outcome.TRANSIT, world.landfill.pk, M3("1.000")),
    ]
    destinations = custody.Destinations(custody.worksite_pieces(worksite.pk))
    assert not destinations.conclusive
    assert destinations.total(Outcome.STOCK, Outcome.TRANSIT) == M3("2.000")


def test_a_load_through_a_pev_and_an_att_with_what_each_received(world):
    # Two small loads to the PEV (1 m³ each at most there, art. 12 §1), carried on together.
    loads = [
        inbound(
            world,
            {"A": "1"},
            received="1",
            day=D(2026, 11, 1),
            facility=world.pev,
            worksite=site(world),
        )
        for _ in range(2)
    ]
    to_att = onward(
        world,
        {"A": "2"},
        user=world.pev_operator,
        facility=world.pev,
        destination=world.att,
        day=D(2026, 11, 2),
    )
    closing.receive(to_att, world.operator, M3("1.5"))  # the ATT weighed 1.5 m³
    to_recycling = onward(world, {"A": "1.5"}, day=D(2026, 11, 3))
    closing.receive(to_recycling, world.recycling_operator, M3("1.5"))

    pieces = custody.worksite_pieces(loads[0].worksite_id)
    assert outcomes(pieces) == [
        (Outcome.DESTINED, world.recycling.pk, M3("0.750")),
        (Outcome.DESTINED, world.recycling.pk, M3("0.750")),
    ]
    assert {p.first_facility_id for p in pieces} == {world.pev.pk}
    assert {p.hops for p in pieces} == {2}
    assert custody.Destinations(pieces).conclusive


def test_loads_straight_to_a_final_destination_are_conclusive(world):
    address = site(world)
    inbound(world, {"A": "3"}, received="3", facility=world.recycling, worksite=address)
    make_user("operador_aterro", facility=world.landfill)
    second = inbound(world, {"A": "1"}, received="1", facility=world.landfill, worksite=address)

    destinations = custody.Destinations(custody.worksite_pieces(second.worksite_id))
    assert destinations.conclusive
    assert outcomes(destinations.pieces) == [
        (Outcome.DESTINED, world.landfill.pk, M3("1.000")),
        (Outcome.DESTINED, world.recycling.pk, M3("3.000")),
    ]


def test_refused_and_issued_loads_are_not_conclusive_and_cancelled_ones_do_not_count(world):
    address = site(world)
    refused = inbound(world, {"A": "3"}, worksite=address)
    closing.refuse(refused, world.operator, "carga misturada com lixo")
    inbound(world, {"A": "2"}, worksite=address)  # on its way
    closing.cancel(inbound(world, {"A": "9"}, worksite=address), world.alfa_user, "desistência")

    worksite = Worksite.objects.get(pk=refused.worksite_id)
    assert outcomes(custody.worksite_pieces(worksite.pk)) == [
        (Outcome.REFUSED, world.att.pk, M3("3.000")),
        (Outcome.TRANSIT, world.att.pk, M3("2.000")),
    ]


def test_the_generator_over_a_period(world):
    address = site(world)
    inbound(
        world,
        {"A": "3"},
        received="3",
        facility=world.recycling,
        worksite=address,
        day=D(2026, 10, 10),
    )
    inbound(
        world,
        {"A": "4"},
        received="4",
        facility=world.recycling,
        worksite=address,
        day=D(2026, 11, 10),
    )
    generator_id = Worksite.objects.get().generator_id

    november = custody.generator_pieces(generator_id, D(2026, 11, 1), D(2026, 11, 30))
    assert [p.volume_m3 for p in november] == [M3("4.000")]
    assert len(custody.generator_pieces(generator_id, None, None)) == 2


def test_an_onward_ctr_is_not_a_worksite_load_of_the_operator(world):
    inbound(world, {"A": "3"}, received="3", worksite=site(world))
    onward(world, {"A": "3"})
    operator_generator = services.generator_for(
        services.GeneratorData("Triagem Vale Ltda.", "12345678000195")
    )
    assert custody.generator_pieces(operator_generator.pk, None, None) == []
