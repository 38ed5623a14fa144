"""API fuzzing: schemathesis against /api/v1/schema/, every operation, as anonymous and as
each role of build_world(). No response may be a server error, and every response must be
one the schema declares (status code, content type, body).

The requests go through Django's WSGI handler in the test's own thread, so they see the data
of the test transaction (build_world, a CTR of alfa, a dumping report). Examples are bounded
and derandomized so the run stays within a few minutes and fails the same way every time.
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import unquote

import hypothesis
import pytest
import schemathesis
from django.contrib.auth import get_user_model
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from django.test import Client
from django.urls import Resolver404, resolve
from django.utils import timezone
from hypothesis import HealthCheck, Phase
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient
from schemathesis.checks import not_a_server_error
from schemathesis.core import NOT_SET
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from config.middleware import serve_requests_only
from ctr.models import CTR
from fiscalization.models import DumpingReport
from pev_network.models import CatchmentBasin
from tests import emptying
from tests.builders import multi, offset, square
from tests.clock import frozen_clock
from tests.ctr_world import CNPJ_GAMA, build_world, ctr_payload
from tests.generators.worksite_world import api_body as worksite_body
from tests.generators.worksite_world import registered, square_m
from tests.two_towns import build_two_towns

# Issues CTRs on the day the clock says: frozen on TODAY (tests/clock.py).
pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("frozen_today", "private_media", "fresh_rate_limits"),
]

SCHEMA_PATH = "/api/v1/schema/"
# Examples per operation and role (positive and negative generation modes each).
MAX_EXAMPLES = 12


def routed(path: str) -> bool:
    try:
        resolve(unquote(path))
    except Resolver404:
        return False
    return True


def unless_unroutable(check):
    """Run `check` except on the 404 of a path that matches no route: negative path parameters
    (an id that is not a number, a malformed CTR number) never reach the API, and Django's
    handler404 answers them with its HTML page. That page is a known gap, tested on its own
    below (test_unroutable_api_path_answers_problem_json)."""

    def wrapped(ctx, response, case):
        if response.status_code == 404 and not routed(case.formatted_path):
            return None
        return check(ctx, response, case)

    wrapped.__name__ = check.__name__
    return wrapped


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    unless_unroutable(content_type_conformance),
    unless_unroutable(response_schema_conformance),
]
ROLES = {
    "anonimo": None,
    "transportador": "alfa",
    "outro_transportador": "beta",
    "operador": "operador",
    "operador_outra_area": "operador_pev",
    "nucleo": "nucleo",
    "fiscal": "fiscal",
    "sem_papel": "curioso",
    "gerador": "gerador",
}
CONFIG = schemathesis.Config.from_dict(
    {
        "generation": {
            # The Authorization header is ours (each role's token), not a random one.
            "with-security-parameters": False,
        },
    }
)


@pytest.fixture(scope="module")
def api_schema(django_db_blocker):
    """The schema, loaded once per module through the WSGI app (the middleware may touch the
    database, outside any test: nothing is written)."""
    with django_db_blocker.unblock(), in_test_transaction():
        return schemathesis.openapi.from_wsgi(SCHEMA_PATH, get_wsgi_application(), config=CONFIG)


@contextlib.contextmanager
def in_test_transaction():
    """Keep Django from closing the test's connection around each WSGI request, as its test
    Client does; otherwise the requests would not see (nor keep) the test's data. Django's
    test Client reconnects these handlers after each of its requests: use none inside.
    The requests are served as config/wsgi.py serves them in production (serve_requests_only:
    the request settings made once on the connection and kept), not SET and reset around each
    one, two round trips a request that gunicorn never makes."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    serve_requests_only()
    try:
        yield
    finally:
        serve_requests_only(on=False)
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def real_objects(world) -> dict[str, object]:
    """Objects that exist: alfa's CTR (to the ATT), two dumping reports, alfa's fleet."""
    client = APIClient()
    client.force_authenticate(world.alfa_user)
    response = client.post("/api/v1/ctrs/", valid_ctr(world), format="json")
    assert response.status_code == 201, response.content
    reports = []
    for east in (0, 2000):
        response = APIClient().post(
            "/api/v1/dumping-reports/", valid_report(world, east), format="json"
        )
        assert response.status_code == 201, response.content
        reports.append(DumpingReport.objects.get(protocol=response.json()["protocol"]).pk)
    basin = CatchmentBasin.objects.create(
        municipality=world.town,
        code="B-01",
        name="Bacia Centro",
        area=multi(square(*world.origin.coords, 800)),
        served_by=world.pev,
    )
    return {
        "basin_id": basin.pk,
        "number": CTR.objects.get().number,
        "report_id": reports[0],
        "other_report_id": reports[1],
        "vehicle_id": world.alfa.vehicles.first().pk,
        "equipment_id": world.alfa.equipment.first().pk,
        "facility_id": world.att.pk,
        "municipality_id": world.town.pk,
        # A worksite of Gama, the gerador's generator.
        "worksite_id": registered(world.gama, municipality=world.town).pk,
    }


def valid_ctr(world) -> dict:
    return ctr_payload(world, transport_date=timezone.localdate().isoformat())


def valid_report(world, east_m: float = 0) -> dict:
    lon, lat = offset(*world.origin.coords, east_m, 0)
    return {
        "location": {"type": "Point", "coordinates": [lon, lat]},
        "category": "LOTE_VAGO",
        "confirm_new": True,
    }


def known_inputs(world, objects) -> dict[str, list[dict]]:
    """Per operation, inputs that can succeed for some role: without them random data would
    almost never reach a 2xx response, and its body would go unchecked. Parameters left out
    are still generated."""
    number = {"number": objects["number"]}
    report = {"id": objects["report_id"]}
    lon, lat = world.origin.coords
    json = "application/json"
    return {
        "POST /api/v1/auth/token/": [
            {"body": {"username": "alfa", "password": "senha-teste"}, "media_type": json}
        ],
        "GET /api/v1/ctrs/{number}/": [{"path_parameters": number}],
        "POST /api/v1/ctrs/": [{"body": valid_ctr(world), "media_type": json}],
        "POST /api/v1/ctrs/{number}/receive/": [
            {"path_parameters": number, "body": {"received_volume_m3": "3"}, "media_type": json}
        ],
        "POST /api/v1/ctrs/{number}/refuse/": [
            {"path_parameters": number, "body": {"reason": "Carga misturada"}, "media_type": json}
        ],
        "POST /api/v1/ctrs/{number}/cancel/": [
            {"path_parameters": number, "body": {"reason": "Obra adiada"}, "media_type": json}
        ],
        "GET /api/v1/vehicles/{id}/": [{"path_parameters": {"id": objects["vehicle_id"]}}],
        "POST /api/v1/vehicles/": [
            {"body": {"plate": "QWE1A23", "description": "Caminhão"}, "media_type": json}
        ],
        "GET /api/v1/equipment/{id}/": [{"path_parameters": {"id": objects["equipment_id"]}}],
        "POST /api/v1/equipment/": [
            {"body": {"code": "C-99", "nominal_capacity_m3": "4.00"}, "media_type": json}
        ],
        "GET /api/v1/basins/{id}/": [{"path_parameters": {"id": objects["basin_id"]}}],
        "GET /api/v1/facilities/{id}/": [{"path_parameters": {"id": objects["facility_id"]}}],
        "GET /api/v1/facilities/nearest/": [
            {"query": {"lon": lon, "lat": lat, "volume_m3": "3", "limit": 5}}
        ],
        "GET /api/v1/municipalities/{id}/": [
            {"path_parameters": {"id": objects["municipality_id"]}}
        ],
        "GET /api/v1/municipalities/lookup/": [{"query": {"lon": lon, "lat": lat}}],
        "POST /api/v1/dumping-reports/": [{"body": valid_report(world, 4000), "media_type": json}],
        "GET /api/v1/dumping-reports/{id}/": [{"path_parameters": report}],
        "POST /api/v1/dumping-reports/{id}/status/": [
            {"path_parameters": report, "body": {"status": "CLEANED"}, "media_type": json}
        ],
        "POST /api/v1/dumping-reports/{id}/merge/": [
            {
                "path_parameters": {"id": objects["other_report_id"]},
                "body": {"into": objects["report_id"], "note": "mesmo local"},
                "media_type": json,
            }
        ],
        "GET /api/v1/dumping-reports/{id}/suspects/": [{"path_parameters": report}],
        "GET /api/v1/roadside/": [{"query": {"plate": "ABC1D23"}}],
        # The gerador's own worksite first (the boundary values replace its fields); the
        # municipality names the generator.
        "POST /api/v1/worksites/": [
            {
                "body": worksite_body(address="Rua da Obra Nova, 1", permit_number=""),
                "media_type": json,
            },
            {
                "body": worksite_body(address="Rua da Obra Nova, 2", generator=CNPJ_GAMA),
                "media_type": json,
            },
        ],
        "GET /api/v1/worksites/{id}/": [{"path_parameters": {"id": objects["worksite_id"]}}],
        "PATCH /api/v1/worksites/{id}/": [
            {
                "path_parameters": {"id": objects["worksite_id"]},
                "body": {"built_area_m2": "400", "geometry": square_m()},
                "media_type": json,
            }
        ],
        "POST /api/v1/generator-invitations/": [
            {"body": {"document": CNPJ_GAMA, "email": "gama@example.org"}, "media_type": json}
        ],
    }


def fuzz_operation(
    operation,
    headers,
    known: list[dict],
    failures: list[str],
    checks=CHECKS,
    generated: dict[str, list] | None = None,
) -> Counter:
    """Call `operation` with the cases Hypothesis generates (each generation mode, and each
    known input), under `headers`. With `generated`, the cases of a run that passed are kept
    there under the operation's label, and a later call sends those same cases again instead
    of generating them: with derandomize and the same strategies (one world, so the same known
    inputs) Hypothesis would draw exactly those, and drawing is most of the fuzz's time."""
    who = "anônimo" if "Authorization" not in headers else "token"
    statuses: Counter = Counter()
    if generated is not None and operation.label in generated:
        for case in generated[operation.label]:
            try:
                response = case.call_and_validate(headers=headers, checks=checks)
            except (Exception, BaseExceptionGroup) as exc:
                failures.append(f"{operation.label} [{who}]: {str(exc)[:3000]}")
                break
            statuses[response.status_code] += 1
        return statuses
    strategies = [
        operation.as_strategy(generation_mode=mode)
        for mode in (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE)
    ]
    strategies += [operation.as_strategy(**kwargs) for kwargs in known]
    sent = []

    @hypothesis.settings(
        max_examples=MAX_EXAMPLES * len(strategies),
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
    )
    @hypothesis.given(case=st.one_of(strategies))
    def run(case):
        sent.append(case)
        response = case.call_and_validate(headers=headers, checks=checks)
        statuses[response.status_code] += 1

    try:
        run()
    except (Exception, BaseExceptionGroup) as exc:  # every failure is listed, then the test fails
        failures.append(f"{operation.label} [{who}]: {str(exc)[:3000]}")
    else:
        if generated is not None:
            generated[operation.label] = sent
    return statuses


# Successes each role must reach, so that the bodies of 2xx responses are checked too.
MUST_SUCCEED = {
    "anonimo": ["POST /api/v1/dumping-reports/", "GET /api/v1/facilities/nearest/"],
    "transportador": ["POST /api/v1/ctrs/", "GET /api/v1/ctrs/{number}/", "GET /api/v1/ctrs/"],
    "operador": ["POST /api/v1/ctrs/{number}/receive/", "GET /api/v1/ctrs/{number}/"],
    "nucleo": [
        "GET /api/v1/dumping-reports/{id}/",
        "GET /api/v1/dumping-reports/{id}/suspects/",
        "GET /api/v1/roadside/",
        "GET /api/v1/dumping-reports/hotspots/",
    ],
    "fiscal": ["POST /api/v1/dumping-reports/{id}/status/", "GET /api/v1/ctrs/{number}/"],
    "gerador": [
        "GET /api/v1/worksites/",
        "POST /api/v1/worksites/",
        "GET /api/v1/worksites/{id}/",
        "PATCH /api/v1/worksites/{id}/",
    ],
}


def headers_of(username: str | None) -> dict:
    """A token of `username` (none for the anonymous role), and no compression: schemathesis
    calls the app through WSGI, where nothing decodes the gzip body its default headers ask for
    (a real HTTP client decodes it; tests/config/test_production.py checks that path)."""
    headers = {"Accept-Encoding": "identity"}
    if username:
        user = get_user_model().objects.get(username=username)
        headers["Authorization"] = f"Token {Token.objects.create(user=user).key}"
    return headers


@dataclass
class FuzzWorld:
    """One world for every role's fuzz, and the cases generated for it so far (by label)."""

    known: dict[str, list[dict]]
    headers: dict[str, dict]
    generated: dict[str, list] = field(default_factory=dict)


@contextlib.contextmanager
def committed_world(django_db_blocker, build):
    """`build()`'s world committed for a class of tests, and the database as it was before at the
    class's end (emptying.as_it_was: the rows the data migrations load are back, as the next
    tests in a transaction expect); each test's own transaction is rolled back after the test, so
    every role starts from this same world, as if built for it alone. The same world gives every
    role the same known inputs, hence the same generated cases (fuzz_operation's `generated`).
    Committed rather than held in a transaction open for the whole class: a transaction with
    thousands of savepoints (a request each) open for minutes keeps a new hot standby from
    accepting connections (tests/config/test_replica.py, on another worker, waited past its
    120 s)."""
    with frozen_clock(), django_db_blocker.unblock(), emptying.as_it_was("default"):
        yield build()


@pytest.fixture(scope="class")
def fuzz_world(django_db_setup, django_db_blocker):
    def build():
        world = build_world()
        known = known_inputs(world, real_objects(world))
        headers = {role: headers_of(username) for role, username in ROLES.items()}
        return FuzzWorld(known, headers)

    with committed_world(django_db_blocker, build) as world:
        yield world


# One pytest-xdist worker runs the whole class (tests/conftest.py, pytest_xdist_make_scheduler):
# the world is built and the cases drawn once in the run.
class TestEveryRoleOnOneWorld:
    """The role fuzz and the boundary values, on one world (fuzz_world)."""

    @pytest.mark.parametrize("role", ROLES)
    def test_api_fuzz(self, role, api_schema, fuzz_world):
        known = fuzz_world.known
        headers = fuzz_world.headers[role]
        failures: list[str] = []
        started = time.monotonic()
        tally: dict[str, Counter] = {}
        with in_test_transaction():
            for result in api_schema.get_all_operations():
                operation = result.ok()
                tally[operation.label] = fuzz_operation(
                    operation,
                    headers,
                    known.get(operation.label, []),
                    failures,
                    generated=fuzz_world.generated,
                )
        elapsed = time.monotonic() - started
        calls = sum(sum(c.values()) for c in tally.values())
        print(f"\n{role}: {len(tally)} operações, {calls} requisições, {elapsed:.1f} s")
        for label, statuses in tally.items():
            print(f"  {label}: " + " ".join(f"{k}×{v}" for k, v in sorted(statuses.items())))
        unreached = [
            label
            for label in MUST_SUCCEED.get(role, [])
            if not any(200 <= code < 300 for code in tally[label])
        ]
        assert not failures, "\n\n".join(failures)
        assert not unreached, f"sem nenhuma resposta 2xx: {unreached}"

    def test_another_role_is_sent_what_hypothesis_would_draw_for_it(self, api_schema, fuzz_world):
        """What makes fuzz_operation's `generated` sound: on one world, two roles' runs draw
        the same cases, whatever the responses were."""
        label = "POST /api/v1/ctrs/"
        [operation] = [
            result.ok() for result in api_schema.get_all_operations() if result.ok().label == label
        ]
        drawn = {}
        for role in ("transportador", "operador"):
            generated: dict[str, list] = {}
            failures: list[str] = []
            with in_test_transaction():
                statuses = fuzz_operation(
                    operation,
                    fuzz_world.headers[role],
                    fuzz_world.known[label],
                    failures,
                    generated=generated,
                )
            assert not failures
            drawn[role] = (
                repr([(c.formatted_path, c.query, c.body, c.headers) for c in generated[label]]),
                statuses,
            )
        (transporter_cases, issued), (operator_cases, refused) = drawn.values()
        assert transporter_cases == operator_cases
        assert issued[201] and not refused[201]  # the same cases, answered differently

    @pytest.mark.parametrize("role", ["anonimo", "transportador", "operador", "nucleo", "gerador"])
    def test_api_boundary_values(self, role, api_schema, fuzz_world):
        known = fuzz_world.known
        headers = fuzz_world.headers[role]
        failures = []
        calls = 0
        started = time.monotonic()
        with in_test_transaction():
            for result in api_schema.get_all_operations():
                operation = result.ok()
                for name, value, case in edge_cases(operation, known.get(operation.label, [])):
                    calls += 1
                    try:
                        case.call_and_validate(headers=headers, checks=CHECKS)
                    except (Exception, BaseExceptionGroup) as exc:
                        failures.append(
                            f"{operation.label} {name}={repr(value)[:40]}: {str(exc)[:1500]}"
                        )
        print(f"\n{role}: {calls} requisições, {time.monotonic() - started:.1f} s")
        assert not failures, "\n\n".join(failures)


# --- two municipalities --------------------------------------------------------------------------


def markers_of(world, objects) -> list[str]:
    """Texts that only A's objects carry: its CTRs' numbers, its reports' protocols, the person
    and the address named on its CTR. Not markers: the receiving network (public), a company
    registered as a generator (one CNPJ, one registry for the platform: B's Núcleo may
    register a worksite of it in B), and a transporter (one company, one fleet, licensed where
    it is: B's inspector stopping its truck is told whose it is, and that it holds no licence
    in B)."""
    ctrs = CTR.objects.filter(municipality=world.town)
    reports = DumpingReport.objects.filter(municipality=world.town)
    return [
        *ctrs.values_list("number", flat=True),
        *reports.values_list("protocol", flat=True),
        "Maria da Obra",
        "52998224725",
        "Rua das Flores",
    ]


def no_object_of(markers: list[str]):
    def check(ctx, response, case):
        text = response.text or ""
        # What the request itself carried may come back (a 404's `instance` is the path).
        echoed = f"{case.formatted_path} {case.query} {case.body}"
        leaked = [marker for marker in markers if marker in text and marker not in echoed]
        if leaked:
            raise AssertionError(
                f"{case.method} {case.formatted_path}: objeto do outro município na resposta "
                f"({response.status_code}): {leaked}"
            )

    check.__name__ = "no_object_of_the_other_municipality"
    return check


@dataclass
class OtherTownWorld(FuzzWorld):
    """Two municipalities; the fuzz's requests come from B's people, with A's ids among the
    inputs, and `markers` are what only A's objects carry."""

    markers: list[str] = field(default_factory=list)


@pytest.fixture(scope="class")
def other_town_world(django_db_setup, django_db_blocker):
    def build():
        towns = build_two_towns()
        objects = real_objects(towns.a)
        markers = markers_of(towns.a, objects)
        headers = {name: headers_of(name) for name in ("nucleo_b", "fiscal_b")}
        return OtherTownWorld(known_inputs(towns.a, objects), headers, markers=markers)

    with committed_world(django_db_blocker, build) as world:
        yield world


class TestTheOtherMunicipality:
    """On one world, run by one worker (as TestEveryRoleOnOneWorld): B's second person is sent
    the cases drawn for the first."""

    @pytest.mark.parametrize("username", ["nucleo_b", "fiscal_b"])
    def test_api_fuzz_as_the_other_municipality(self, username, api_schema, other_town_world):
        """Every operation fuzzed as a person of municipality B, with A's real ids among the
        inputs: no response carries any of A's objects."""
        world = other_town_world
        assert world.markers and all(world.markers)
        checks = [*CHECKS, no_object_of(world.markers)]
        failures: list[str] = []
        with in_test_transaction():
            for result in api_schema.get_all_operations():
                operation = result.ok()
                fuzz_operation(
                    operation,
                    world.headers[username],
                    world.known.get(operation.label, []),
                    failures,
                    checks=checks,
                    generated=world.generated,
                )
        assert not failures, "\n\n".join(failures)


# --- boundary values ---------------------------------------------------------------------------

LONG = "x" * 5000
# Values that random generation rarely reaches in a few examples, one parameter at a time.
QUERY_EDGES = [
    "", " ", "\x00", "0", "-1", "99999999999999999999", "1e309", "NaN", "-Infinity",
    "9999-12-31", "0001-01-01", "2026-02-30", "-180,-90,180,90", "1,1,1,1", "x" * 3000,
    "\u202eé", "true",
]  # fmt: skip
BODY_EDGES = [
    None, True, 0, -1, 1e308, 99999999999999999999999, "", "\x00", "9999-12-31", "0001-01-01",
    "NaN", "-0.0001", [], {}, LONG,
]  # fmt: skip


def edge_cases(operation, known: list[dict]):
    """(parameter, case) pairs: each query parameter and each top-level field of a known
    valid JSON body replaced, in turn, by each edge value; the rest stays valid."""
    base = known[0] if known else {}
    path_parameters = base.get("path_parameters") or {p.name: 1 for p in operation.path_parameters}
    query = dict(base.get("query") or {})
    for parameter in operation.query:
        for value in QUERY_EDGES:
            yield (
                parameter.name,
                value,
                operation.Case(
                    path_parameters=path_parameters,
                    query={**query, parameter.name: value},
                    body=base.get("body", NOT_SET),
                    media_type=base.get("media_type"),
                ),
            )
    body = base.get("body")
    if isinstance(body, dict):
        for field in body:
            for value in BODY_EDGES:
                yield (
                    field,
                    value,
                    operation.Case(
                        path_parameters=path_parameters,
                        query=query,
                        body={**body, field: value},
                        media_type=base["media_type"],
                    ),
                )


# Server errors this sweep found once (fixed): an overflowing date in the hotspots, a 5,000-
# character user name reaching django-axes' varchar(255).
@pytest.mark.parametrize(
    "method,path,data",
    [
        ("get", "/api/v1/dumping-reports/hotspots/?until=9999-12-31", None),
        ("get", "/api/v1/dumping-reports/{id}/suspects/?hotspot=true&until=9999-12-31", None),
        ("post", "/api/v1/auth/token/", {"username": LONG, "password": "x"}),
    ],
    ids=["hotspots-until", "suspects-until", "token-long-username"],
)
def test_known_server_errors_are_fixed(method, path, data):
    world = build_world()
    objects = real_objects(world)
    client = APIClient(raise_request_exception=False)
    client.force_authenticate(world.nucleo)
    path = path.replace("{id}", str(objects["report_id"]))
    response = getattr(client, method)(path, data, format="json")
    assert response.status_code < 500


def test_unroutable_api_path_answers_problem_json():
    response = Client().get("/api/v1/ctrs/nao-e-um-numero/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/problem+json")


def test_a_body_without_content_type_is_a_declared_415():
    """Found by this sweep: a raw body sent with no Content-Type (schemathesis's negative
    multipart case) got DRF's 415, which the PGRCC decisions did not declare."""
    world = build_world()
    client = APIClient(raise_request_exception=False)
    client.force_authenticate(world.nucleo)
    response = client.generic("POST", "/api/v1/plans/123/approve/", b"\r\xc2\xb8", "")
    assert response.status_code == 415
    assert "não suportado" in response.json()["detail"]
    schema = Client().get(SCHEMA_PATH, HTTP_ACCEPT="application/json").json()
    with_body = [
        (path, method)
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
        if "requestBody" in operation
    ]
    assert ("/api/v1/plans/{id}/approve/", "post") in with_body
    undeclared = [
        (path, method)
        for path, method in with_body
        if "415" not in schema["paths"][path][method]["responses"]
    ]
    assert undeclared == []
