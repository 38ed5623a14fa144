"""Sorted waste leaving the world's ATT: inbound CTRs received there, onward CTRs
from it, as tests/ctr/test_ctr_onward.py and test_facility_stock.py build them."""

from __future__ import annotations

import datetime
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from ctr import closing, services
from ctr.models import (
    CTR,
    CTREvent,
    FacilityOperator,
    Generator,
    Membership,
    NumberSequence,
    OnSiteProcessing,
)
from ctr.rules import WasteLine
from tests.ctr_world import TODAY, World, build_world

# The ATT's operator company, the generator of the sorted waste (a valid CNPJ).
CNPJ_OPERATOR = "12345678000195"
OPERATOR_GENERATOR = services.GeneratorData("Triagem Vale Ltda.", CNPJ_OPERATOR)


def inbound(
    world: World,
    lines: dict[str, str],
    received: str | None = None,
    day: datetime.date = TODAY,
    facility=None,
    worksite: services.WorksiteData | None = None,
    worksite_id: int | None = None,
):
    """A CTR of Alfa from a worksite (`worksite`, a registered one `worksite_id` whose generator
    it names, or none declared) to the ATT (or `facility`) with one waste line per class;
    received with `received` m³ when given (else left issued)."""
    facility = facility or world.att
    ctr = services.issue(
        world.alfa,
        world.alfa_user,
        services.IssueRequest(
            transport_date=day,
            vehicle_plate="ABC1D23",
            origin=world.origin,
            destination=world.inside(facility),
            waste=[WasteLine(c, Decimal(v), "misturado") for c, v in lines.items()],
            generator=None
            if worksite_id
            else services.GeneratorData("Maria da Obra", "52998224725"),
            worksite=worksite,
            worksite_id=worksite_id,
        ),
    )
    if received is not None:
        operator = Membership.objects.filter(facility=facility).first().user
        closing.receive(ctr, operator, Decimal(received))
    return ctr


def onward_request(
    world: World,
    lines: dict[str, str],
    day: datetime.date = TODAY,
    destination=None,
    origin=None,
    facility=None,
    generator=OPERATOR_GENERATOR,
) -> services.IssueRequest:
    """Sorted waste from the ATT (or `facility`) to the recycling area (or `destination`),
    carried by Beta."""
    return services.IssueRequest(
        transport_date=day,
        vehicle_plate="XYZ9876",
        origin=origin,
        destination=world.inside(destination or world.recycling),
        waste=[WasteLine(c, Decimal(v), "triado") for c, v in lines.items()],
        generator=generator,
        origin_facility_id=(facility or world.att).pk,
    )


def onward(world: World, lines: dict[str, str], user=None, **kwargs):
    return services.issue_onward(
        user or world.operator, world.beta.pk, onward_request(world, lines, **kwargs)
    )


def onward_findings(world: World, lines: dict[str, str], **kwargs) -> list:
    """The findings of an onward CTR from the ATT, without storing anything."""
    request = onward_request(world, lines, **kwargs)
    facility = request.origin_facility_id
    if request.origin is None:
        from pev_network.models import ReceivingFacility

        request.origin = ReceivingFacility.objects.get(pk=facility).area.point_on_surface
    _, findings = services.check(world.beta, request)
    return findings


def codes(findings) -> list[str]:
    return sorted(f.code for f in findings if f.severity == "error")


def onward_payload(world: World, **overrides) -> dict:
    """An onward CTR of 6 m³ of class A from the ATT to the recycling area, as the API takes it."""
    target = world.inside(world.recycling)
    body = {
        "transport_date": TODAY.isoformat(),
        "vehicle_plate": "XYZ-9876",
        "origin_facility": world.att.pk,
        "transporter": world.beta.pk,
        "generator": {"name": "Triagem Vale Ltda.", "document": "12.345.678/0001-95"},
        "destination": {"type": "Point", "coordinates": [target.x, target.y]},
        "waste": [{"class": "A", "volume_m3": "6", "description": "agregado triado"}],
    }
    body.update(overrides)
    return body


def stocked_world() -> World:
    """The world with 10 m³ of class A received at the ATT today: the stock to ship or
    process."""
    world = build_world()
    inbound(world, {"A": "10"}, received="10")
    return world


def api_client(user) -> APIClient:
    client = APIClient()
    # A fresh user per client, as in a real request: no membership cached from the world.
    client.force_authenticate(get_user_model().objects.get(pk=user.pk))
    return client


def web_client(user) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.get(pk=user.pk))
    return client


def written() -> tuple[int, ...]:
    """What issuing an onward CTR or recording processing writes: unchanged after a refusal."""
    return (
        CTR.objects.count(),
        CTREvent.objects.count(),
        FacilityOperator.objects.count(),
        Generator.objects.count(),
        sum(NumberSequence.objects.values_list("last_value", flat=True)),
        OnSiteProcessing.objects.count(),
    )
