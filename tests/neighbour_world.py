"""Two municipalities side by side: tests.ctr_world's town (A, Guaratinguetá) and a
neighbour B (Aparecida, the square of the same size 20 km east), each with its own Núcleo,
inspector and authority; an auditor of A (reads, never acts) and a consortium's inspector
acting in both. What lies in one is not the other's staff's to see or act on."""

from __future__ import annotations

from dataclasses import dataclass

from django.test import Client
from rest_framework.test import APIClient

from ctr import roles
from jurisdiction.models import StaffRole
from pev_network.models import Municipality
from tests.builders import ORIGIN, municipality, offset, point
from tests.ctr_world import World, build_world, make_user

# B's centre: 20 km east of A's (the squares share their eastern / western edge at 10 km).
B_EAST_M = 20_000


@dataclass
class Neighbours:
    world: World  # A: build_world's town, its network, transporters, staff and generator
    b: Municipality
    b_nucleo: object
    b_fiscal: object
    b_authority: object
    a_auditor: object  # the state's or a consortium's audit of A: reads, never acts
    consortium: object  # an inspector of A and of B

    @property
    def a(self) -> Municipality:
        return self.world.town

    @staticmethod
    def in_b(east_m: float = 0, north_m: float = 0):
        """A point in B, `east_m`/`north_m` metres from its centre."""
        return point(*offset(*ORIGIN, B_EAST_M + east_m, north_m))


def build_neighbours() -> Neighbours:
    world = build_world()
    b = municipality("3502507", "Aparecida (teste)", east_m=B_EAST_M)
    consortium = make_user("consorcio", roles.FISCAL, world.town)
    StaffRole.objects.create(user=consortium, municipality=b, role=roles.FISCAL)
    return Neighbours(
        world=world,
        b=b,
        b_nucleo=make_user("nucleo_b", roles.NUCLEO, b),
        b_fiscal=make_user("fiscal_b", roles.FISCAL, b),
        b_authority=make_user("autoridade_b", roles.AUTORIDADE, b),
        a_auditor=make_user("auditor_a", roles.AUDITOR, world.town),
        consortium=consortium,
    )


def web(user=None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def api(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def choose(client: Client, municipality: Municipality) -> None:
    """The one place a person with several municipalities picks the one it works in."""
    response = client.post("/municipio/", {"municipality": municipality.pk, "next": "/painel/"})
    assert response.status_code == 302, response.content.decode()[:500]
