"""The stock of a facility per class: received − shipped onward − processed
on site, over a period; the stale-stock alert; the balance endpoint and who may read it."""

import datetime
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from ctr import closing, errors
from ctr.custody import processing, stock
from ctr.models import OnSiteProcessing, ProcessingKind
from tests.builders import set_parameters
from tests.ctr.onward_world import inbound, onward
from tests.ctr_world import TODAY, build_world

pytestmark = pytest.mark.django_db

D = datetime.date


@pytest.fixture
def world(frozen_today):
    return build_world()


def by_class(rows) -> dict:
    return {row.waste_class: row for row in rows}


def process(world, waste_class, volume, day=TODAY):
    return processing.record_processing(
        world.operator, world.att, waste_class, Decimal(volume), day, ProcessingKind.RECYCLED
    )


def test_received_minus_shipped_minus_processed_is_the_stock(world):
    # Received: 10 m³ declared as 6 A + 4 B, 9 m³ received (shared 5.4 A + 3.6 B); 3 m³ A.
    inbound(world, {"A": "6", "B": "4"}, received="9")
    inbound(world, {"A": "3"}, received="3")
    # Not received: neither an issued nor a refused inbound CTR counts.
    inbound(world, {"A": "50"})
    closing.refuse(inbound(world, {"A": "40"}), world.operator, "carga misturada")
    # Shipped: issued (2 A), received at the destination (1 A) count; refused (1 A) and
    # cancelled (0.5 A) return their volume.
    onward(world, {"A": "2"})
    delivered = onward(world, {"A": "1"})
    recycling_operator = get_user_model().objects.create_user("reciclagem")
    from ctr.models import Membership

    Membership.objects.create(user=recycling_operator, facility=world.recycling)
    closing.receive(delivered, recycling_operator, Decimal("1"))
    refused = onward(world, {"A": "1"})
    closing.refuse(refused, recycling_operator, "fora de especificação")
    closing.cancel(onward(world, {"A": "0.5"}), world.operator, "desistência")
    # Processed on site: 1.4 m³ of A became recycled aggregate.
    process(world, "A", "1.4")

    rows = by_class(stock.balance(world.att))
    assert rows["A"].received == Decimal("8.400")
    assert rows["A"].shipped == Decimal("3.000")
    assert rows["A"].processed == Decimal("1.400")
    assert rows["A"].closing == Decimal("4.000")
    assert rows["B"].received == Decimal("3.600")
    assert rows["B"].closing == Decimal("3.600")
    # The destination's stock holds what it received, the onward CTR's volume.
    assert by_class(stock.balance(world.recycling))["A"].closing == Decimal("1.000")


def test_a_period_has_an_opening_its_movements_and_a_closing(world):
    inbound(world, {"A": "5"}, received="5", day=D(2026, 11, 1))
    inbound(world, {"A": "3"}, received="3", day=D(2026, 11, 20))
    onward(world, {"A": "2"}, day=D(2026, 11, 21))
    process(world, "A", "1", day=D(2026, 11, 25))
    onward(world, {"A": "4"}, day=TODAY)

    (row,) = stock.balance(world.att, D(2026, 11, 10), D(2026, 11, 29))
    assert (row.opening, row.received, row.shipped, row.processed, row.closing) == (
        Decimal("5.000"),
        Decimal("3.000"),
        Decimal("2.000"),
        Decimal("1.000"),
        Decimal("5.000"),
    )
    assert row.received_to_date == Decimal("8.000")
    (whole,) = stock.balance(world.att)
    assert whole.closing == Decimal("1.000")


def test_stock_above_zero_longer_than_the_municipality_s_days_is_an_alert(world):
    set_parameters(world.town, stock_alert_days=10)
    world.att.refresh_from_db()
    inbound(world, {"A": "5", "B": "1"}, received="6", day=D(2026, 11, 1))
    onward(world, {"A": "5"}, day=D(2026, 11, 5))  # class A empty on the 5th
    inbound(world, {"A": "2"}, received="2", day=D(2026, 11, 19))
    # A: above zero since the 19th, 11 days on the 30th (more than 10), 10 on the 29th (not).
    # B: never empty, since the 1st.
    alerts = stock.stale_stock(world.att, TODAY)
    assert [(a.waste_class, a.since, a.days, a.volume_m3) for a in alerts] == [
        ("A", D(2026, 11, 19), 11, Decimal("2.000")),
        ("B", D(2026, 11, 1), 29, Decimal("1.000")),
    ]
    assert [a.waste_class for a in stock.stale_stock(world.att, D(2026, 11, 29))] == ["B"]
    # Emptied again: no alert for the class.
    onward(world, {"A": "2"}, day=TODAY)
    assert [a.waste_class for a in stock.stale_stock(world.att, TODAY)] == ["B"]


def test_only_the_facility_s_operator_records_its_processing(world):
    with pytest.raises(errors.NotAllowed):
        processing.record_processing(
            world.pev_operator, world.att, "A", Decimal("1"), TODAY, ProcessingKind.REUSED
        )
    with pytest.raises(errors.CTRError):
        process(world, "A", "0")
    assert not OnSiteProcessing.objects.exists()


def test_processing_is_bounded_by_the_stock_plus_tolerance(world):
    inbound(world, {"A": "10"}, received="10")
    process(world, "A", "11")  # the 10 % of sorting tolerance on the 10 m³ received
    with pytest.raises(errors.CTRError) as refused:
        process(world, "A", "0.001")
    # The class by its label, as the other messages name it.
    assert str(refused.value) == (
        "A área “ATT” não tem 0,001 m³ de Classe A (agregados: concreto, tijolo, solo…) em "
        "estoque em 30/11/2026 (pode beneficiar até 0 m³)."
    )
    with pytest.raises(errors.CTRError):
        process(world, "B", "1")  # never received
    assert OnSiteProcessing.objects.count() == 1


def test_processing_on_a_past_day_may_not_leave_a_later_day_short(world):
    # 10 m³ of A in on the 1st; 10 m³ shipped on the 20th. On the 10th the ATT held 10 m³
    # (its bound with the 10 % tolerance: 11), but what it processes on the 10th is gone on
    # the 20th too, where the bound after the shipment was 1 m³.
    inbound(world, {"A": "10"}, received="10", day=D(2026, 11, 1))
    onward(world, {"A": "10"}, day=D(2026, 11, 20))
    with pytest.raises(errors.CTRError) as refused:
        process(world, "A", "2", day=D(2026, 11, 10))
    assert refused.value.code == "over_stock"
    assert refused.value.field == "volume_m3"
    assert str(refused.value) == (
        "A área “ATT” não pode beneficiar 2 m³ de Classe A (agregados: concreto, tijolo, "
        "solo…) em 10/11/2026: até 20/11/2026 já saíram dela 10 m³ dessa classe, e com este "
        "beneficiamento essas saídas passariam do estoque mais a tolerância de triagem (pode "
        "beneficiar até 1 m³ em 10/11/2026)."
    )
    assert not OnSiteProcessing.objects.exists()
    # Within the later bound it is recorded, and the 20th is then exactly at its bound.
    process(world, "A", "1", day=D(2026, 11, 10))
    with pytest.raises(errors.CTRError):
        process(world, "A", "0.001", day=D(2026, 11, 15))
    assert OnSiteProcessing.objects.count() == 1


# --- GET /api/v1/facilities/<id>/balance/ ------------------------------------------------------


def client_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(get_user_model().objects.get(pk=user.pk))
    return client


def url(world, query="") -> str:
    return f"/api/v1/facilities/{world.att.pk}/balance/{query}"


def test_the_operator_reads_its_facility_s_balance(world):
    inbound(world, {"A": "5"}, received="5", day=D(2026, 11, 1))
    onward(world, {"A": "2"}, day=TODAY)
    response = client_for(world.operator).get(
        url(world, "?date_from=2026-11-30&date_to=2026-11-30")
    )
    assert response.status_code == 200, response.content
    assert response.json() == {
        "facility": {"id": world.att.pk, "name": "ATT", "kind": "ATT"},
        "date_from": "2026-11-30",
        "date_to": "2026-11-30",
        "classes": [
            {
                "waste_class": "A",
                "opening_m3": "5.000",
                "received_m3": "0.000",
                "shipped_m3": "2.000",
                "processed_m3": "0.000",
                "closing_m3": "3.000",
            }
        ],
    }


def test_the_municipality_reads_every_balance(world):
    for user in (world.nucleo, world.fiscal):
        assert client_for(user).get(url(world)).status_code == 200


@pytest.mark.parametrize("who", ["pev_operator", "alfa_user", "outsider"])
def test_others_are_refused(world, who):
    response = client_for(getattr(world, who)).get(url(world))
    assert response.status_code == 403
    assert response.json()["detail"] == "Só o operador da área e o município veem o seu balanço."


def test_anonymous_callers_get_a_401(world):
    assert APIClient().get(url(world)).status_code == 401


@pytest.mark.parametrize(
    "query",
    ["?date_from=30/11/2026", "?date_to=2026-13-01", "?date_from=2026-11-30&date_to=2026-11-01"],
)
def test_bad_dates_are_a_400_in_portuguese(world, query):
    response = client_for(world.operator).get(url(world, query))
    assert response.status_code == 400
    assert "data" in response.content.decode() or "date_from" in response.content.decode()


def test_an_unknown_facility_is_a_404(world):
    response = client_for(world.nucleo).get("/api/v1/facilities/999999/balance/")
    assert response.status_code == 404


def test_the_endpoint_is_in_the_openapi_schema(world):
    response = APIClient().get("/api/v1/schema/?format=json")
    assert response.status_code == 200
    schema = response.json()
    operation = schema["paths"]["/api/v1/facilities/{id}/balance/"]["get"]
    assert {p["name"] for p in operation["parameters"]} >= {"date_from", "date_to"}
    ctr_input = schema["components"]["schemas"]["CTRInput"]["properties"]
    assert {"origin_facility", "transporter"} <= set(ctr_input)
