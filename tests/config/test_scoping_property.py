"""A municipality's data is its own, as a property-based test. The staff of municipality B ask, page
by page and route by route, for the objects of municipality A, by their real ids and by ids around
them; they never get one (404, as if it did not exist), while A's own staff do get them. A random
order and choice of routes, ids and people, with hypothesis."""

from __future__ import annotations

from dataclasses import dataclass

import hypothesis
import pytest
from django.test import Client
from hypothesis import HealthCheck
from hypothesis import strategies as st
from rest_framework.test import APIClient

from fiscalization import intake, photos
from generators.models import WastePlan
from tests import dumping_fixtures as fx
from tests.ctr_world import ctr_payload
from tests.enforcement_world import record_for
from tests.generators.worksite_world import registered
from tests.two_towns import TwoTowns, build_two_towns

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen_today", "private_media")]


@dataclass(frozen=True)
class Route:
    """A page or API route of one object: `{}` takes its id; `api` is called with a token."""

    template: str
    kind: str  # the kind of object whose ids fill it
    api: bool = False


ROUTES = [
    Route("/api/v1/ctrs/{}/", "ctr", api=True),
    Route("/ctrs/{}/pdf/", "ctr"),
    Route("/ctrs/{}/correcoes/", "ctr"),
    Route("/api/v1/ctrs/{}/corrections/", "ctr", api=True),
    Route("/api/v1/dumping-reports/{}/", "report", api=True),
    Route("/api/v1/dumping-reports/{}/suspects/", "report", api=True),
    Route("/fiscalizacao/denuncias/{}/", "report"),
    Route("/fiscalizacao/denuncias/{}/suspeitos/", "report"),
    Route("/fiscalizacao/processos/{}/", "case"),
    Route("/fiscalizacao/autos/{}/pdf/", "record"),
    Route("/obras/{}/relatorio/", "worksite"),
    Route("/obras/{}/cdf/", "worksite"),
    Route("/api/v1/worksites/{}/", "worksite", api=True),
    Route("/api/v1/worksites/{}/destinations/", "worksite", api=True),
    Route("/nucleo/obras/{}/", "worksite"),
    Route("/api/v1/facilities/{}/balance/", "facility", api=True),
    Route("/api/v1/facilities/{}/processing/", "facility", api=True),
    Route("/ogc/collections/ctr-origins/items/{}", "ctr_id"),
]


def objects_of_a(towns: TwoTowns) -> dict[str, list]:
    """A's objects, built through the services as its people would."""
    world = towns.a
    client = APIClient()
    client.force_authenticate(world.alfa_user)
    numbers = []
    for _ in range(2):
        response = client.post("/api/v1/ctrs/", ctr_payload(world), format="json")
        assert response.status_code == 201, response.content
        numbers.append(response.json()["number"])
    report = intake.create_report(
        intake.NewReport(fx.at(east_m=-800, north_m=-600), "LOTE_VAGO"),
        photos.check_photos([fx.upload("a.jpg", fx.jpeg_plain())]),
    )
    record = record_for(world)
    worksite = registered(world.gama, municipality=world.town)
    WastePlan.objects.create(worksite=worksite, version=1)
    from ctr.models import CTR

    return {
        "ctr": numbers,
        "ctr_id": list(CTR.objects.filter(number__in=numbers).values_list("pk", flat=True)),
        "report": [report.pk],
        "case": [record.case_id],
        "record": [record.pk],
        "worksite": [worksite.pk],
        "facility": [world.att.pk, world.landfill.pk],
    }


def get(user, route: Route, value) -> int:
    path = route.template.format(value)
    if route.api:
        client = APIClient()
        client.force_authenticate(user)
        return client.get(path).status_code
    client = Client()
    client.force_login(user)
    return client.get(path).status_code


@pytest.fixture
def setting():
    towns = build_two_towns()
    return towns, objects_of_a(towns)


def test_the_other_municipalitys_staff_never_get_an_object_of_a(setting):
    towns, objects = setting
    outsiders = [towns.nucleo_b, towns.fiscal_b, towns.authority_b]

    @hypothesis.settings(
        max_examples=120,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @hypothesis.given(
        route=st.sampled_from(ROUTES),
        who=st.sampled_from(outsiders),
        pick=st.integers(min_value=0, max_value=50),
        near=st.integers(min_value=-3, max_value=3),
    )
    def asks(route, who, pick, near):
        ids = objects[route.kind]
        value = ids[pick % len(ids)]
        if near and isinstance(value, int):
            value = max(1, value + near)
            hypothesis.assume(value not in ids)  # a neighbour id: A's or nobody's, never B's
        status = get(who, route, value)
        assert status == 404, f"{who.username} {route.template.format(value)}: {status}"

    asks()


def test_a_own_staff_do_get_them(setting):
    """The control: the same routes answer A's Núcleo (or the test above would prove
    nothing)."""
    towns, objects = setting
    failing = [
        (route.template, status)
        for route in ROUTES
        if (status := get(towns.a.nucleo, route, objects[route.kind][0])) != 200
    ]
    assert failing == []
