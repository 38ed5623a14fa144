"""Authorization matrix: every URL pattern of the project against every role.

tests/authorization_table.py holds the explicit table (one entry per URL name, the expected
outcome of each role); this module enumerates the URLconf, fails on any pattern without an
entry, requests each one as each role and lists every outcome that differs from the table.

Web pages are requested with a session (force_login), the API with each user's token: the way
each is used. Outcomes: the status code, "login" for a redirect to the sign-in page, or
"302→/path/" for any other redirect.
"""

from __future__ import annotations

import dataclasses
import datetime
import re
from decimal import Decimal
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve, reverse
from django.urls.exceptions import Resolver404
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from ctr import closing, roles, services
from ctr.custody import certificates
from ctr.field import templates as ctr_templates
from ctr.models import CTR, Equipment, Transporter, TransporterLicence, Vehicle, Worksite
from fiscalization import enforcement, intake, photos
from fiscalization.models.enforcement import DeliveryMethod
from generators import plans
from pev_network.models import CatchmentBasin, FacilityKind
from tests import dumping_fixtures as fx
from tests.authorization_table import (
    ACROSS,
    ACROSS_ROLES,
    ACTING,
    B_STAFF,
    B_TABLE,
    EXCLUDED_NAMESPACES,
    GHOSTS,
    ROLES,
    TABLE,
    Check,
)
from tests.builders import ORIGIN, licensed_facility, multi, municipality, offset, point, square
from tests.ctr import correction_world
from tests.ctr.onward_world import onward_request
from tests.ctr_world import build_world, ctr_payload, make_user
from tests.enforcement_world import at, record_for
from tests.generators import declaration_world
from tests.generators.account_world import account_objects
from tests.two_towns import NEIGHBOUR_IBGE
from tests.webhooks.world import webhook_objects

# Issues CTRs on the day the clock says: frozen on TODAY (tests/clock.py).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen_today")]

USERNAMES = {
    "anon": None,
    "alfa": "alfa",
    "beta": "beta",
    "operador": "operador",
    "operador_pev": "operador_pev",
    "nucleo": "nucleo",
    "autoridade": "autoridade",
    "fiscal": "fiscal",
    "curioso": "curioso",
    "gerador": "gerador",
    # Municipality B and the state's auditor of A.
    "transportador_b": "transportador_b",
    "operador_b": "operador_b",
    "nucleo_b": "nucleo_b",
    "autoridade_b": "autoridade_b",
    "fiscal_b": "fiscal_b",
    "auditor_a": "auditor_a",
}


# --- the URLconf -----------------------------------------------------------------------------


def url_patterns(resolver=None, prefix: str = "", namespace: str | None = None):
    """(name, route, pattern) of every pattern, namespaced names as `ns:name`; the routes of
    excluded namespaces are left out (the table says why)."""
    resolver = resolver or get_resolver()
    for item in resolver.url_patterns:
        route = prefix + str(item.pattern)
        if isinstance(item, URLResolver):
            ns = namespace
            if item.namespace:
                ns = f"{namespace}:{item.namespace}" if namespace else item.namespace
            if ns in EXCLUDED_NAMESPACES:
                continue
            yield from url_patterns(item, route, ns)
        elif isinstance(item, URLPattern):
            name = item.name and (f"{namespace}:{item.name}" if namespace else item.name)
            yield name or route, route, item


def test_every_url_pattern_has_an_entry():
    names = {name for name, _, _ in url_patterns()}
    missing = sorted(names - TABLE.keys())
    stale = sorted(TABLE.keys() - names - {"admin:index"})
    assert not missing, f"URLs sem entrada em tests/authorization_table.py: {missing}"
    assert not stale, f"entradas de URLs que não existem mais: {stale}"


def test_uploaded_files_are_served_by_no_url():
    """Photos of dumping reports live under MEDIA_ROOT and are reached only through the
    view that checks the role (intake:photo): no pattern serves MEDIA_URL."""
    with pytest.raises(Resolver404):
        resolve(f"{settings.MEDIA_URL}fotos/a.jpg")


# --- the world the table refers to -----------------------------------------------------------


def build_objects() -> dict[str, object]:
    """The objects of the table's placeholders ({ctr}, {report}...)."""
    world = build_world()
    today = timezone.localdate()

    def issue(**overrides) -> CTR:
        client = APIClient()
        client.force_authenticate(world.alfa_user)
        payload = ctr_payload(world, transport_date=today.isoformat(), **overrides)
        response = client.post("/api/v1/ctrs/", payload, format="json")
        assert response.status_code == 201, response.content
        return CTR.objects.get(number=response.json()["number"])

    ctr, to_receive, to_refuse, to_cancel = issue(), issue(), issue(), issue()
    # A CTR of Construtora Gama, the generator with an account: its worksite too.
    gama_ctr = issue(
        generator={"name": world.gama.name, "document": world.gama.document},
        worksite={
            "address": "Av. da Gama, 500",
            "location": {"type": "Point", "coordinates": list(world.origin.coords)},
        },
    )
    # An onward CTR from the ATT, of a load received there.
    closing.receive(issue(), world.operator, Decimal("3"))
    onward_ctr = services.issue_onward(
        world.operator, world.beta.pk, onward_request(world, {"A": "1"}, day=today)
    )
    report = intake.create_report(
        intake.NewReport(fx.at(east_m=-800, north_m=-600), "LOTE_VAGO"),
        photos.check_photos([fx.upload("a.jpg", fx.jpeg_plain())]),
    )
    record = record_for(world)
    by_mail = record_for(world, opened_at=at(2025, 5, 5, 9), delivery=DeliveryMethod.MAIL)
    embargo = enforcement.apply_embargo(
        record, datetime.date(2025, 3, 7), "Obra da Rua A, 1", by=world.authority
    )
    enforcement.register_embargo_breach(embargo, datetime.date(2025, 3, 8))
    charge = enforcement.assess_embargo_fine(embargo, datetime.date(2025, 3, 9))
    basin = CatchmentBasin.objects.create(
        municipality=world.town,
        code="B-01",
        name="Bacia Centro",
        area=multi(square(*world.origin.coords, 800)),
        served_by=world.pev,
    )

    # The PGRCC: Gama's worksites, with a plan waiting for the Núcleo, one
    # to approve, and a complete draft to submit.
    def gama_plan(address: str, submit: bool = True):
        site = Worksite.objects.create(
            generator=world.gama,
            address=address,
            location=world.origin,
            municipality=world.town,
            built_area_m2=Decimal("500"),
            work_kind="new_building",
        )
        data = plans.PlanInput({"A": "40"}, [world.alfa.pk], [world.att.pk])
        return plans.save(site, world.generator_user, data, submit=submit)

    plan = gama_plan("Av. das Obras, 1")
    return {
        "world": world,
        "gama_site": plan.worksite_id,
        "plan": plan.pk,
        "plan_to_approve": gama_plan("Av. das Obras, 2").pk,
        "plan_draft": gama_plan("Av. das Obras, 3", submit=False).pk,
        "ctr": ctr.number,
        "ctr_pk": ctr.pk,
        "ctr_to_receive": to_receive.number,
        "ctr_to_refuse": to_refuse.number,
        "ctr_to_cancel": to_cancel.number,
        "onward_ctr": onward_ctr.number,
        "worksite": ctr.worksite_id,
        "generator": ctr.generator_id,
        "gama_ctr": gama_ctr.number,
        "gama_worksite": gama_ctr.worksite_id,
        "gama_generator": gama_ctr.generator_id,
        "certificate": certificates.issue(
            certificates.Scope.of_worksite(ctr.worksite), world.nucleo
        )[0].code,
        # CTR templates: alfa's, saved from its CTR.
        "ctr_template": ctr_templates.from_ctr(ctr, world.alfa_user, "Modelo").pk,
        "ctr_template_to_delete": ctr_templates.from_ctr(ctr, world.alfa_user, "Outro").pk,
        "vehicle": world.alfa.vehicles.first().pk,
        "equipment": world.alfa.equipment.first().pk,
        "facility": world.att.pk,
        "pev": world.pev.pk,
        "municipality": world.town.pk,
        "report": report.pk,
        "protocol": report.protocol,
        "photo": report.photos.get().pk,
        "case": record.case_id,
        "notice": record.case.notices.get().pk,
        "record": record.pk,
        "record_by_mail": by_mail.pk,
        "basin": basin.pk,
        "alfa_id": world.alfa.pk,
        "penalty": embargo.pk,
        "charge": charge.pk,
        "beta_id": world.beta.pk,
        "month": f"{today:%Y-%m}",
        **account_objects(world),
        **declaration_world.matrix_objects(world),
        **webhook_objects(world),
        **correction_world.matrix_objects(world),
        **other_municipality(world),
    }


def other_municipality(world) -> dict[str, object]:
    """Municipality B beside the town, sharing the town's landfill (B accepts it), with its
    staff, a transporter licensed in B only, the operator of B's PEV, a CTR of B to the shared
    landfill and a dumping report of B; and the state's auditor of A."""
    b = municipality(NEIGHBOUR_IBGE, "Aparecida (teste)", east_m=20_000)
    b.accepted_destinations.add(world.town)
    for username, role in (
        ("nucleo_b", roles.NUCLEO),
        ("autoridade_b", roles.AUTORIDADE),
        ("fiscal_b", roles.FISCAL),
    ):
        make_user(username, role, b)
    make_user("auditor_a", roles.AUDITOR, world.town)
    carrier = Transporter.objects.create(name="Transportes Basílica Ltda.", document=CNPJ_B)
    TransporterLicence.objects.create(
        transporter=carrier, municipality=b, number="APA-001", valid_from=D(2025, 1, 1)
    )
    Vehicle.objects.create(transporter=carrier, plate="BBB1B11")
    Equipment.objects.create(transporter=carrier, code="B-05", nominal_capacity_m3=Decimal("5"))
    user = make_user("transportador_b", transporter=carrier)
    pev_b = licensed_facility(
        FacilityKind.PEV, square(*offset(*ORIGIN, 20_000, 0), 30), "PEV de B", b
    )
    make_user("operador_b", facility=pev_b)
    origin = point(*offset(*ORIGIN, 19_000, 500))
    client = APIClient()
    client.force_authenticate(user)
    payload = ctr_payload(
        world,
        facility=world.landfill,
        transport_date=timezone.localdate().isoformat(),
        vehicle_plate="BBB1B11",
        equipment_code="B-05",
        origin={"type": "Point", "coordinates": list(origin.coords)},
        # A generator of B's own (a generator of both would put A's certificates across the
        # line: tests/ctr/test_certificates.py).
        generator={"name": "Construtora de Aparecida Ltda.", "document": CNPJ_B_GENERATOR},
        worksite={
            "address": "Rua da Basílica, 7",
            "location": {"type": "Point", "coordinates": list(origin.coords)},
        },
    )
    response = client.post("/api/v1/ctrs/", payload, format="json")
    assert response.status_code == 201, response.content
    report = intake.create_report(
        intake.NewReport(point(*offset(*ORIGIN, 19_500, -400)), "LOTE_VAGO"),
        photos.check_photos([fx.upload("b.jpg", fx.jpeg_plain())]),
    )
    assert report.municipality_id == b.pk
    return {"ctr_b": response.json()["number"], "report_b": report.pk}


D = datetime.date
CNPJ_B = "45723174000110"
CNPJ_B_GENERATOR = "98765432000198"


def fill(value, objects):
    if isinstance(value, str):
        return value.format(**objects)
    if isinstance(value, dict):
        return {k: fill(v, objects) for k, v in value.items()}
    return value


# Views that end the session: the web client signs in again after them.
SIGN_OUT = {"ctr_web:logout"}


class Clients:
    """Per role a web client with a session and an API client with the user's token."""

    def __init__(self):
        self.users = {
            role: get_user_model().objects.get(username=username)
            for role, username in USERNAMES.items()
            if username
        }
        self.web, self.api = {}, {}
        for role in USERNAMES:
            self.web[role] = self._signed_in(role)
            api = Client(raise_request_exception=False)
            if role in self.users:
                token = Token.objects.get_or_create(user=self.users[role])[0]
                api.defaults["HTTP_AUTHORIZATION"] = f"Token {token.key}"
            self.api[role] = api

    def _signed_in(self, role: str) -> Client:
        client = Client(raise_request_exception=False)
        if role in self.users:
            client.force_login(self.users[role])
        return client

    def get(self, role: str, url: str) -> Client:
        return self.api[role] if url.startswith("/api/") else self.web[role]

    def after(self, name: str, role: str) -> None:
        if name in SIGN_OUT:
            self.web[role] = self._signed_in(role)


def outcome(response) -> str:
    if response.status_code in (301, 302, 303, 307, 308):
        target = urlsplit(response["Location"]).path
        if target == settings.LOGIN_URL:
            return "login"
        return f"{response.status_code}→{target}"
    return str(response.status_code)


def urls_of(name: str, check: Check, objects) -> list[str]:
    """Each route of the name (the API router adds `.json` variants), with the check's
    parameters and query string."""
    kwargs = fill(check.kwargs, objects)
    urls = []
    routes = [route for n, route, _ in url_patterns() if n == name] or [name]
    for route in routes:
        suffixed = "format>" in route
        if check.routes != "all" and suffixed != (check.routes == "format"):
            continue
        extra = {"format": "json"} if suffixed else {}
        url = reverse(name, kwargs={**kwargs, **extra} or None)
        urls.append(url + (f"?{fill(check.query, objects)}" if check.query else ""))
    return sorted(set(urls))


def request(client: Client, method: str, url: str, check: Check, objects):
    if method == "GET":
        return client.get(url)
    data = fill(check.data, objects) if check.data is not None else {}
    if url.startswith("/api/"):
        return client.post(url, data, content_type="application/json")
    return client.post(url, data)


def run_checks(objects, checks) -> tuple[list[str], int]:
    """Each (name, check) on each of its routes, method and role against the table: the
    mismatches and how many requests were compared."""
    clients = Clients()
    mismatches = []
    count = 0
    for name, check in checks:
        real, ghostly = urls_of(name, check, objects), urls_of(name, ghost(check), objects)
        ghosts = dict(zip(real, ghostly, strict=True))
        for url in urls_of(name, check, objects):
            for method, expected in (("GET", check.get), ("POST", check.post)):
                if expected is None:
                    continue
                # In the table's order (the roles that may act come last), then B's people.
                for role in (*ROLES, *ACROSS_ROLES):
                    want = expected_of(
                        (name, check, method, expected), role, clients, ghosts.get(url), objects
                    )
                    client = clients.get(role, url)
                    cache.clear()  # rate limits are not what this test is about
                    got = outcome(request(client, method, url, check, objects))
                    clients.after(name, role)
                    count += 1
                    want = fill(want, objects)
                    if got != want:
                        mismatches.append(
                            f"{name} {method} {url} como {role}: esperado {want}, obtido {got}"
                        )
    return mismatches, count


def ghost(check: Check) -> Check:
    """The check with each object of its URL (path and query) replaced by an id of nothing
    (GHOSTS)."""
    kwargs = {k: GHOSTS.get(k, v) for k, v in check.kwargs.items()}
    query = re.sub(r"\{[a-z_]+\}", GHOSTS["pk"], check.query)
    return dataclasses.replace(check, kwargs=kwargs, query=query)


def names_an_object(check: Check) -> bool:
    return any(k in GHOSTS for k in check.kwargs) or "{" in check.query


def reaches(outcome_: str) -> bool:
    return outcome_ in ACTING or outcome_.startswith("30")


def expected_of(entry, role: str, clients, ghost_url: str | None, objects) -> str:
    """The table's outcome for `role`; for B's people and A's auditor, as
    tests/authorization_table.py derives it from their counterpart in A (ACROSS_ROLES)."""
    name, check, method, expected = entry
    if role in expected:
        return expected[role]
    if role in ACROSS.get((name, method), {}):
        return ACROSS[(name, method)][role]
    counterpart = ACROSS_ROLES[role]
    base = expected[counterpart]
    if role == "auditor_a":
        # The auditor reads and never acts: 403 where A's staff act and not everyone may.
        if method == "POST" and reaches(base) and not reaches(expected["curioso"]):
            return "403"
        return base
    if role not in B_STAFF or expected["anon"] == "200" or not names_an_object(check):
        return base  # a side (as its counterpart in A), public, or no object of A named
    # As if the object did not exist: what the counterpart gets for an object of nobody.
    cache.clear()
    client = clients.get(counterpart, ghost_url)
    answer = outcome(request(client, method, ghost_url, check, objects))
    clients.after(name, counterpart)
    return answer


CHECKS = [(name, check) for name, checks in TABLE.items() for check in checks] + [
    (name, check) for name, checks in B_TABLE.items() for check in checks
]
# The table in parts, each on objects of its own, so that parallel runs (make test) share it
# out: one test of ~6,000 requests was the longest of the suite. Each part is a run of the
# table in its order, never splitting a URL name's checks.
PARTS = 6


def parts_of(checks: list, count: int) -> list[list]:
    size = -(-len(checks) // count)
    parts, start = [], 0
    while start < len(checks):
        end = min(start + size, len(checks))
        while end < len(checks) and checks[end][0] == checks[end - 1][0]:
            end += 1
        parts.append(checks[start:end])
        start = end
    return parts


def test_the_parts_hold_the_whole_table_once_in_order():
    parts = parts_of(CHECKS, PARTS)
    assert len(parts) == PARTS
    assert [entry for part in parts for entry in part] == CHECKS
    assert all(a[-1][0] != b[0][0] for a, b in zip(parts, parts[1:], strict=False))


@pytest.mark.parametrize("part", range(PARTS))
def test_authorization_matrix(part, private_media):
    objects = build_objects()
    mismatches, count = run_checks(objects, parts_of(CHECKS, PARTS)[part])
    print(f"\n{count} requisições conferidas com a tabela")
    assert not mismatches, "\n".join(mismatches)
