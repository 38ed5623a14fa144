"""A small, complete world for CTR tests: a town, its network, two transporters, the roles."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from decimal import Decimal

from django.contrib.auth import get_user_model

from ctr import roles
from ctr.models import Equipment, Generator, Membership, Transporter, Vehicle, Worksite
from jurisdiction.models import StaffRole
from pev_network.models import FacilityKind, Municipality, ReceivingFacility
from tests.builders import ORIGIN, licence, licensed_facility, municipality, offset, point, square

D = datetime.date
TODAY = D(2026, 11, 30)

# Valid documents (check digits computed), fictitious people and companies.
CNPJ_ALFA = "11222333000181"
CNPJ_BETA = "11444777000161"
CPF_GENERATOR = "52998224725"
# The generator with an account (role "gerador"): named on no CTR of ctr_payload.
CNPJ_GAMA = "33644555000125"


@dataclass
class World:
    town: Municipality
    pev: ReceivingFacility
    att: ReceivingFacility
    landfill: ReceivingFacility
    recycling: ReceivingFacility
    alfa: Transporter
    beta: Transporter
    alfa_user: object
    beta_user: object
    operator: object  # operates the ATT
    pev_operator: object
    nucleo: object
    fiscal: object
    authority: object  # applies penalties and decides appeals (art. 35)
    outsider: object  # authenticated, no role
    gama: Generator  # a generator with an account
    generator_user: object  # acts for Gama (Membership.generator)

    def inside(self, facility: ReceivingFacility):
        """A discharge point well inside the facility."""
        return facility.area.point_on_surface

    @property
    def origin(self):
        return point(*offset(*ORIGIN, -500, -500))


def make_user(username: str, role: str | None = None, municipality=None, **membership):
    """A user with password "senha-teste": holding `role` in `municipality` (the municipal
    roles, jurisdiction.StaffRole), or acting for the side named in `membership`."""
    user = get_user_model().objects.create_user(username, f"{username}@example.org", "senha-teste")
    if role:
        assert municipality is not None, "a municipal role is held in a municipality"
        StaffRole.objects.create(user=user, municipality=municipality, role=role)
    if membership:
        Membership.objects.create(user=user, **membership)
    return user


def build_world() -> World:
    town = municipality("3518404", "Guaratinguetá (teste)")
    pev = licensed_facility(FacilityKind.PEV, square(*offset(*ORIGIN, 200, 0), 30), "PEV", town)
    att = licensed_facility(FacilityKind.ATT, square(*offset(*ORIGIN, 1500, 0), 100), "ATT", town)
    landfill = licensed_facility(
        FacilityKind.LANDFILL, square(*offset(*ORIGIN, 0, 3000), 200), "Aterro", town
    )
    recycling = licensed_facility(
        FacilityKind.RECYCLING, square(*offset(*ORIGIN, -3000, 0), 150), "Reciclagem", town
    )
    alfa = Transporter.objects.create(name="Caçambas Alfa Ltda.", document=CNPJ_ALFA)
    beta = Transporter.objects.create(name="Entulhos Beta ME", document=CNPJ_BETA)
    # Their licences in the town (art. 13): alfa's until the end of 2027, beta's open-ended.
    licence(alfa, town, "TR-001", D(2025, 1, 1), D(2027, 12, 31))
    licence(beta, town, "TR-002", D(2025, 1, 1))
    gama = Generator.objects.create(name="Construtora Gama Ltda.", document=CNPJ_GAMA)
    for transporter, plate, code in ((alfa, "ABC1D23", "C-01"), (beta, "XYZ9876", "B-01")):
        Vehicle.objects.create(transporter=transporter, plate=plate)
        Equipment.objects.create(
            transporter=transporter, code=code, nominal_capacity_m3=Decimal("5")
        )
    return World(
        town=town,
        pev=pev,
        att=att,
        landfill=landfill,
        recycling=recycling,
        alfa=alfa,
        beta=beta,
        alfa_user=make_user("alfa", transporter=alfa),
        beta_user=make_user("beta", transporter=beta),
        operator=make_user("operador", facility=att),
        pev_operator=make_user("operador_pev", facility=pev),
        nucleo=make_user("nucleo", roles.NUCLEO, town),
        fiscal=make_user("fiscal", roles.FISCAL, town),
        authority=make_user("autoridade", roles.AUTORIDADE, town),
        outsider=make_user("curioso"),
        gama=gama,
        generator_user=make_user("gerador", generator=gama),
    )


def ctr_payload(world: World, facility: ReceivingFacility | None = None, **overrides) -> dict:
    """A valid CTR of 3 m³ of class A from the town to the ATT, as the API takes it."""
    facility = facility or world.att
    target = world.inside(facility)
    payload = {
        "transport_date": TODAY.isoformat(),
        "vehicle_plate": "ABC-1D23",
        "equipment_code": "C-01",
        "generator": {"name": "Maria da Obra", "document": "529.982.247-25"},
        "worksite": {
            "address": "Rua das Flores, 10",
            "location": {"type": "Point", "coordinates": list(world.origin.coords)},
            "neighbourhood": "Centro",
        },
        "origin": {"type": "Point", "coordinates": list(world.origin.coords)},
        "destination": {"type": "Point", "coordinates": [target.x, target.y]},
        "waste": [{"class": "A", "volume_m3": "3", "description": "entulho de alvenaria"}],
    }
    payload.update(overrides)
    return payload


def large_generator_site(world: World, transporters=(), facilities=()) -> Worksite:
    generator = Generator.objects.create(name="Construtora Grande S.A.", document=CNPJ_BETA)
    site = Worksite.objects.create(
        generator=generator,
        address="Av. Principal, 1000",
        location=world.origin,
        is_large_generator=True,
        permit_number="ALV-2026-77",
    )
    site.plan_transporters.set(transporters)
    site.plan_facilities.set(facilities)
    return site


def issue_hours_ago(world: World, hours_ago: float = 3, origin=None):
    """A CTR of Alfa to the ATT, issued `hours_ago` hours before now (past the alert hours it is
    overdue), from `origin` (the world's origin by default)."""
    from django.utils import timezone

    from ctr import services
    from ctr.rules import WasteLine

    issued_at = timezone.now() - datetime.timedelta(hours=hours_ago)
    request = services.IssueRequest(
        transport_date=timezone.localtime(issued_at).date(),
        vehicle_plate="ABC1D23",
        equipment_code="C-01",
        origin=origin or world.origin,
        destination=world.inside(world.att),
        waste=[WasteLine("A", Decimal("3"), "entulho de alvenaria")],
        generator=services.GeneratorData("Maria da Obra", "52998224725"),
    )
    return services.issue(world.alfa, world.alfa_user, request, at=issued_at)
