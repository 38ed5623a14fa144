"""The Habite-se declaration's world: a worksite of Construtora Gama (the
generator with an account, tests/ctr_world.py), its loads to the ATT or straight to the
recycling area, the ATT's sorted waste shipped on, as tests/ctr/test_certificates.py builds
them."""

from __future__ import annotations

import datetime
from decimal import Decimal

from ctr import closing
from ctr.models import CTR, Generator, Membership, WorkKind, Worksite
from generators import declarations
from generators.models import HabiteSeDeclaration
from tests.ctr.onward_world import inbound, onward
from tests.ctr_world import CPF_GENERATOR, World, make_user

D = datetime.date
ADDRESS = "Rua do Habite-se, 15"
NEIGHBOURHOOD = "Jardim das Obras"
LOAD_DAY, SHIP_DAY = D(2026, 11, 2), D(2026, 11, 10)
ENDED = D(2026, 11, 20)


def gama_site(world: World, generator: Generator | None = None, **fields) -> Worksite:
    """A registered worksite of Gama (or `generator`): permit, size, kind, dates."""
    values = {
        "address": ADDRESS,
        "neighbourhood": NEIGHBOURHOOD,
        "location": world.origin,
        "municipality": world.town,
        # Unique in the municipality: one per worksite of the test.
        "permit_number": f"ALV-2026-{Worksite.objects.count() + 15:04d}",
        "built_area_m2": Decimal("240"),
        "work_kind": WorkKind.NEW_BUILDING,
        "start_date": D(2026, 3, 2),
        "expected_end": D(2026, 10, 30),
    }
    values.update(fields)
    return Worksite.objects.create(generator=generator or world.gama, **values)


def person_site(world: World):
    """A worksite of a person (CPF) with an account: whose data the public page masks."""
    maria = Generator.objects.create(name="Maria da Obra", document=CPF_GENERATOR)
    user = make_user("maria", generator=maria)
    return gama_site(world, generator=maria, address="Rua Particular, 9"), user


def load(world: World, site: Worksite, lines: dict[str, str], received=None, facility=None,
         day=LOAD_DAY) -> CTR:  # fmt: skip
    """A CTR of Alfa from the worksite to the ATT (or `facility`), received with `received` m³
    when given."""
    facility = facility or world.att
    if received is not None:
        operator_of(facility)
    return inbound(world, lines, received, day, facility, worksite_id=site.pk)


def operator_of(facility):
    """The facility's operator (one is made when the world has none)."""
    member = Membership.objects.filter(facility=facility).first()
    return member.user if member else make_user(f"operador_{facility.pk}", facility=facility)


def ship(world: World, lines: dict[str, str], received: bool = True, to=None) -> CTR:
    """Sorted waste from the ATT to the recycling area (or `to`), received there in full."""
    destination = to or world.recycling
    ctr = onward(world, lines, day=SHIP_DAY, destination=destination)
    if received:
        closing.receive(ctr, operator_of(destination), ctr.total_volume_m3)
    return ctr


def asked(world: World, site: Worksite, user=None, ended_on=ENDED) -> HabiteSeDeclaration:
    """The generator's request, through the service: refused while the worksite's review lists
    blockers."""
    return declarations.request(site, user or world.generator_user, ended_on, "")


def waiting(world: World, site: Worksite, user=None, ended_on=ENDED) -> HabiteSeDeclaration:
    """A request waiting for the Núcleo on a worksite whose review lists blockers now: as the
    service wrote it before the loads that block it (a CTR issued from the worksite after the
    request, which the service cannot refuse then), so that what the Núcleo's `issue` checks
    again, and what happens to a waiting request, can be tested on any worksite."""
    Worksite.objects.filter(pk=site.pk).update(ended_on=ended_on)
    return HabiteSeDeclaration.objects.create(
        worksite=site, ended_on=ended_on, requested_by=user or world.generator_user
    )


def destined_declaration(world: World) -> HabiteSeDeclaration:
    """A declaration issued on a worksite whose one load went straight to the recycling area."""
    site = gama_site(world, address="Rua Destinada, 1")
    load(world, site, {"A": "4"}, received="4", facility=world.recycling)
    return declarations.issue(asked(world, site), world.nucleo)


def matrix_objects(world: World) -> dict:
    """The authorization matrix's placeholders (tests/authorization_table.py): {declaration}, a
    request waiting on Gama's worksite {declaration_worksite} whose load is still on its way (so
    the Núcleo's issue is refused, 409, and nothing changes), and {issued_declaration} with its
    code {declaration_code}."""
    site = gama_site(world, address="Rua da Matriz, 1")
    load(world, site, {"A": "1"})
    issued = destined_declaration(world)
    return {
        "declaration": waiting(world, site).pk,
        "declaration_worksite": site.pk,
        "issued_declaration": issued.pk,
        "declaration_code": issued.code,
    }
