"""The soak's world and load (bench/soak.py): its transporter, vehicles, operators and webhook
endpoint on the bench database, and the clients — closed loop and open loop at a fixed rate —
that issue and receive CTRs over the API, with the latencies they saw."""

from __future__ import annotations

import collections
import contextlib
import http.client
import http.server
import itertools
import json
import os
import queue
import statistics
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import quote

from .p2_http import PROXY_HEADERS, say

CONNECTIONS = 16  # the open loop's senders: enough that a slot rarely waits for one
PAYLOADS = 500

REGISTRATION = "BENCH-SOAK"
DOCUMENT = "11222333000262"  # the soak's transporter (P2's is …0181)
USERNAME = "bench-soak"
PLATES = ("BSK1C11", "BSK2C22")  # vehicles' plates are unique across transporters
OPERATOR_PREFIX = "bench-soak-op-"

# --- the soak's world and mix ------------------------------------------------------------------


@dataclass
class World:
    """Who issues and receives: the transporter's API token, CTR payloads (JSON) it may issue,
    the token of an operator of each destination facility, the endpoint hearing every event."""

    token: str
    payloads: list[str]
    operators: dict[int, str]  # facility id → token
    endpoint_id: int = 0


def subscribe(world: World, owner, user, url: str) -> str:
    """The endpoint of the soak's transporter for every CTR event, at `url`; its secret.
    Through the ORM: the loopback URL is the bench's own (webhooks/targets.py would refuse it
    where CTR_WEBHOOKS_ALLOW_LOOPBACK is off, as in this process)."""
    from webhooks.models import Endpoint, EventType

    Endpoint.objects.filter(transporter=owner).delete()
    endpoint = Endpoint.objects.create(
        transporter=owner, url=url, events=list(EventType.values), created_by=user
    )
    world.endpoint_id = endpoint.pk
    return endpoint.secret


def operator_tokens(facility_ids, prefix: str = OPERATOR_PREFIX) -> dict[int, str]:
    """A user acting for each facility (Membership.facility), with an API token."""
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from ctr.models import Membership

    tokens = {}
    for facility_id in sorted(set(facility_ids)):
        user, created = get_user_model().objects.get_or_create(username=f"{prefix}{facility_id}")
        if created:
            user.set_unusable_password()
            user.save(update_fields=["password"])
        Membership.objects.get_or_create(user=user, defaults={"facility_id": facility_id})
        tokens[facility_id] = Token.objects.get_or_create(user=user)[0].key
    return tokens


def bench_world():
    """On the bench database: the soak's transporter licensed everywhere, payloads copied from
    synthetic CTRs (bench/p2_http.py's), operators of their destinations; (world, transporter,
    user)."""
    from rest_framework.authtoken.models import Token

    from .fleet import bench_transporter
    from .p2_http import build_payloads

    transporter, user = bench_transporter(
        REGISTRATION,
        "Caçambas Benchmark Soak Ltda.",
        DOCUMENT,
        PLATES,
        (("P2-05", "5"), ("P2-10", "10"), ("P2-12", "12")),
        USERNAME,
    )
    payloads, rejected = build_payloads(transporter, PAYLOADS, PLATES)
    if not payloads:
        raise RuntimeError("nenhum CTR sintético válido para copiar (dados sintéticos?)")
    say(f"{len(payloads)} CTRs válidos preparados ({rejected} amostras recusadas).")
    facilities = [json.loads(p)["destination_facility"] for p in payloads]
    world = World(
        Token.objects.get_or_create(user=user)[0].key, payloads, operator_tokens(facilities)
    )
    return world, transporter, user


@dataclass
class Tally:
    """The requests of one phase, by kind (issue, receive): latencies (s) and statuses."""

    seconds: float = 0.0
    latencies: dict = field(default_factory=lambda: collections.defaultdict(list))
    statuses: dict = field(default_factory=lambda: collections.defaultdict(collections.Counter))
    late: int = 0  # open loop: slots that waited for a free sender
    # Open loop: (seconds from the start to the request's slot, its latency), in order of answer.
    series: list = field(default_factory=list)
    started: float = 0.0

    def add(self, kind: str, status: int, seconds: float) -> None:
        self.latencies[kind].append(seconds)
        self.statuses[kind][status] += 1

    @property
    def requests(self) -> int:
        return sum(len(v) for v in self.latencies.values())

    @property
    def errors(self) -> int:
        return sum(
            n for c in self.statuses.values() for status, n in c.items() if not 200 <= status < 300
        )

    def count(self, kind: str) -> int:
        return len(self.latencies.get(kind, ()))

    def p(self, q: int, kind: str | None = None) -> float:
        values = self.latencies[kind] if kind else [x for v in self.latencies.values() for x in v]
        if len(values) < 2:
            return values[0] if values else 0.0
        return statistics.quantiles(values, n=100, method="inclusive")[q - 1]

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


class Mix:
    """The soak's requests: in turn an issue (the payloads in a cycle) and the reception of the
    oldest CTR issued and not yet received, by its destination's operator (an issue when none
    is waiting). Each with its own Idempotency-Key, as a phone sends them."""

    def __init__(self, port: int, world: World):
        self.port = port
        self.world = world
        self.waiting: collections.deque = collections.deque()  # (number, facility, m³)
        self.turn = itertools.count()
        self.prefix = f"soak-{os.getpid()}-{time.time_ns()}"

    def next(self) -> tuple[str, str, bytes, dict]:
        n = next(self.turn)
        if n % 2:
            with contextlib.suppress(IndexError):
                number, facility, volume = self.waiting.popleft()
                body = json.dumps({"received_volume_m3": volume}).encode()
                token = self.world.operators[facility]
                path = f"/api/v1/ctrs/{quote(number)}/receive/"
                return "receive", path, body, self._headers(token, n)
        payload = self.world.payloads[(n // 2) % len(self.world.payloads)]
        return "issue", "/api/v1/ctrs/", payload.encode(), self._headers(self.world.token, n)

    def _headers(self, token: str, n: int) -> dict:
        return {
            **PROXY_HEADERS,
            "Authorization": f"Token {token}",
            "Content-Type": "application/json",
            "Idempotency-Key": f"{self.prefix}-{n}",
        }

    def send(self, request) -> int:
        """One request on a connection of its own, as a proxy without upstream keep-alive
        sends it (kept alive, a sender idle past gunicorn's keepalive of 2 s finds its
        connection closed by the server: a client's artefact, not an error of the app). The
        status, 0 for a socket error."""
        kind, path, body, headers = request
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request("POST", path, body=body, headers=headers)
            response = conn.getresponse()
            answer = response.read()
            status = response.status
        except (OSError, http.client.HTTPException):
            return 0
        finally:
            conn.close()
        if kind == "issue" and status == 201:
            ctr = json.loads(answer)
            facility = ctr["destination_facility"]
            if isinstance(facility, dict):
                facility = facility["id"]
            self.waiting.append((ctr["number"], facility, str(ctr["total_volume_m3"])))
        return status


def closed_loop(mix: Mix, seconds: float) -> Tally:
    """One client alone: each request sent when the last is answered."""
    tally = Tally()
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        request = mix.next()
        sent = time.perf_counter()
        status = mix.send(request)
        tally.add(request[0], status, time.perf_counter() - sent)
    tally.seconds = time.perf_counter() - started
    return tally


def open_loop(mix: Mix, seconds: float, rate: float, every=None) -> Tally:
    """`rate` requests per second for `seconds`, handed to CONNECTIONS senders; each latency
    from its slot (a request waiting for a sender counts its wait). `every(elapsed)` is called
    between slots (the RSS samples)."""
    tally = Tally()
    slots: queue.Queue = queue.Queue()
    lock = threading.Lock()

    def sender() -> None:
        while (slot := slots.get()) is not None:
            request = mix.next()
            status = mix.send(request)
            with lock:
                took = time.perf_counter() - slot
                tally.add(request[0], status, took)
                tally.series.append((slot - tally.started, took))

    threads = [threading.Thread(target=sender, daemon=True) for _ in range(CONNECTIONS)]
    for t in threads:
        t.start()
    started = tally.started = time.perf_counter()
    for n in itertools.count():
        slot = started + n / rate
        if slot >= started + seconds:
            break
        if every:
            every(time.perf_counter() - started)
        time.sleep(max(0.0, slot - time.perf_counter()))
        if slots.qsize() > 0:
            tally.late += 1
        slots.put(slot)
    for _ in threads:
        slots.put(None)
    for t in threads:
        t.join(timeout=60)
    tally.seconds = time.perf_counter() - started
    return tally
