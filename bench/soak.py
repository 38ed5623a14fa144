"""The soak: the production mode held at half its capacity for 10 minutes.

`python -m bench.soak [--minutes 10] [--no-write]`, run by `make bench` after the others, on
the bench database (ctr_bench; 10 000 synthetic CTRs generated when it has fewer, for the
payloads). What runs, as in production (Procfile):

- gunicorn with deploy/gunicorn.conf.py (its workers, threads, max_requests recycling), DEBUG
  off, hashed static files, behind an HTTPS proxy (`X-Forwarded-Proto: https`), on 127.0.0.1
  and a free port; and the worker (`manage.py worker`), each in a process group of its own;
- a local webhook receiver (a threaded http.server on a free port) where the soak's
  transporter has an endpoint for every CTR event: it counts each delivery by its event id
  (`X-CTR-Event-Id`) and checks its signature.

The run: a warm-up; the capacity (closed loop, 16 connections, issues over the API, `wrk`
as P2); the outbox drained; the lone client's p99 (one connection, closed loop, the soak's own
mix); then the soak: an open loop at half the capacity (a fixed arrival rate; each latency
counted from its slot, so a server falling behind is seen), issues and receptions of the CTRs
issued (by the destination's operator) in turn, so that each CTR fires two webhooks. The RSS
of gunicorn (master and workers) and of the worker is read from /proc at the start and the end
(and every 10 s). Midway the worker is killed (SIGKILL) while the receiver holds a delivery
in flight, and started again. At the end the outbox is drained and every event id written for
the endpoint is checked against what the receiver got.

Delivery is at least once, by design (webhooks/delivery.py): a row is sent inside the
transaction that claimed it, so a worker killed after the receiver got the request but before
the commit leaves the row due again, and the next worker sends it a second time, with the same
event id (receivers de-duplicate on it: docs/api.md). The report counts those duplicates and
says whether they are exactly the deliveries in flight at the kill."""

from __future__ import annotations

import argparse
import collections
import contextlib
import hmac
import http.client
import http.server
import itertools
import json
import os
import queue
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from . import machine
from .p2_http import CLIENTS, PROXY_HEADERS, Load, free_port, ms, run_load, say

ROOT = Path(__file__).resolve().parent.parent
GUNICORN_CONFIG = ROOT / "deploy" / "gunicorn.conf.py"
BEGIN = "<!-- soak:begin — gerado por `python -m bench.soak`; não edite entre estes marcadores -->"
END = "<!-- soak:end -->"

DEFAULT_MINUTES = 10
WARMUP_SECONDS = 3
CAPACITY_SECONDS = 15  # closed loop: the capacity the soak's rate is half of
LONE_SECONDS = 10
RATE_SHARE = 0.5
CONNECTIONS = 16  # the open loop's senders: enough that a slot rarely waits for one
SAMPLE_SECONDS = 10  # RSS (and load average) samples during the soak
SHOWN_SECONDS = 60  # the report's table shows one sample a minute
HOLD_SECONDS = 30  # how long the kill waits for a delivery to hold in flight
DRAIN_SECONDS = 300
START_SECONDS = 120
MIN_CTRS = 10_000  # synthetic CTRs the payloads are copied from
SEED = 42
PAYLOADS = 500
# Goals of the soak; the p99 bound is the issue path's open loop's (bench/p2_http.py).
MAX_RSS_GROWTH = 0.10
MAX_P99_RATIO = 3.0

REGISTRATION = "BENCH-SOAK"
DOCUMENT = "11222333000262"  # the soak's transporter (P2's is …0181)
USERNAME = "bench-soak"
PLATES = ("BSK1C11", "BSK2C22")  # vehicles' plates are unique across transporters
OPERATOR_PREFIX = "bench-soak-op-"


# --- memory ------------------------------------------------------------------------------------


def rss_kib(pid: int) -> int:
    """VmRSS of one process (kB), 0 when it is gone."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            # The command may hold spaces and parentheses: the fields follow the last ")".
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(stat.parent.name))
    return found


# --- the production processes ------------------------------------------------------------------


class Production:
    """gunicorn (deploy/gunicorn.conf.py) and the worker, each in a session of its own (the
    worker is killed alone; gunicorn's master and workers are stopped as one group)."""

    def __init__(self, env: dict[str, str], worker: bool = True):
        self.port = free_port()
        self.with_worker = worker  # the page benchmark (bench/pages.py) needs only gunicorn
        self.root = Path(tempfile.mkdtemp(prefix="ctr-soak-"))
        metrics = self.root / "metrics"
        metrics.mkdir()
        self.env = {
            **env,
            "HOST": "127.0.0.1",
            "PORT": str(self.port),
            "PROMETHEUS_MULTIPROC_DIR": str(metrics),
            "CTR_SITE_URL": f"http://127.0.0.1:{self.port}",
            # The receiver listens on the loopback (webhooks/targets.py refuses it otherwise).
            "CTR_WEBHOOKS_ALLOW_LOOPBACK": "true",
            # No line per request on the terminal (gunicorn's and the app's JSON line).
            "GUNICORN_ACCESS_LOG": "0",
            "CTR_ACCESS_LOG": "false",
            "PYTHONUNBUFFERED": "1",
        }
        self.web: subprocess.Popen | None = None
        self.worker: subprocess.Popen | None = None
        self.workers_started = 0
        self.command = (
            f"gunicorn -c deploy/gunicorn.conf.py config.wsgi:application; {self.worker_line}"
        )

    worker_line = "python manage.py worker"

    def _start(self, name: str, command: list[str]) -> subprocess.Popen:
        log = (self.root / f"{name}.log").open("a")
        try:
            return subprocess.Popen(
                command,
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        finally:
            log.close()

    def log_tail(self, name: str) -> str:
        with contextlib.suppress(OSError):
            return (self.root / f"{name}.log").read_text(errors="replace")[-3000:]
        return ""

    def __enter__(self) -> Production:
        python = sys.executable
        self.web = self._start(
            "gunicorn",
            [python, "-m", "gunicorn", "-c", str(GUNICORN_CONFIG), "config.wsgi:application"],
        )
        if self.with_worker:
            self.start_worker()
        deadline = time.monotonic() + START_SECONDS
        while True:
            if self.web.poll() is not None or time.monotonic() > deadline:
                tail = self.log_tail("gunicorn")
                self.__exit__()
                raise RuntimeError(f"gunicorn não respondeu:\n{tail}")
            with contextlib.suppress(OSError):
                if self.get("/healthz") == 200:
                    break
            time.sleep(0.3)
        worker = f"; worker pid {self.worker.pid}" if self.worker else ""
        say(
            f"gunicorn na porta {self.port} (pid {self.web.pid}, "
            f"{len(children(self.web.pid))} workers){worker}"
        )
        return self

    def start_worker(self) -> None:
        self.worker = self._start("worker", [sys.executable, "manage.py", "worker"])
        self.workers_started += 1

    def kill_worker(self) -> int:
        """SIGKILL, no goodbye: what a crash or the OOM killer does. The pid killed."""
        pid = self.worker.pid
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
        self.worker.wait(timeout=30)
        return pid

    def rss(self) -> dict[str, int]:
        """kB: gunicorn's master plus its workers, and the worker."""
        web = rss_kib(self.web.pid) + sum(rss_kib(p) for p in children(self.web.pid))
        return {"gunicorn": web, "worker": rss_kib(self.worker.pid)}

    def get(self, path: str) -> int:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request("GET", path, headers=PROXY_HEADERS)
            response = conn.getresponse()
            response.read()
            return response.status
        finally:
            conn.close()

    def __exit__(self, *exc) -> None:
        for process in (self.worker, self.web):
            if process is None or process.poll() is not None:
                continue
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
        shutil.rmtree(self.root, ignore_errors=True)


# --- the receiver ------------------------------------------------------------------------------


class Receiver:
    """A webhook receiver on 127.0.0.1 and a free port: every delivery counted by its event id,
    its signature checked with the endpoint's secret; on request (hold_next) the next
    delivery is held unanswered until released, so the worker can be killed mid-delivery."""

    def __init__(self):
        self.secret = ""
        self.counts: collections.Counter = collections.Counter()
        self.bad_signatures = 0
        self.lock = threading.Lock()
        self._hold = False
        self.held = threading.Event()
        self.released = threading.Event()
        self.held_id = ""

    def hold_next(self) -> None:
        self.held.clear()
        self.released.clear()
        self._hold = True

    def release(self) -> None:
        self.released.set()

    def __enter__(self) -> Receiver:
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.record(
                    self.headers.get("X-CTR-Event-Id", ""),
                    self.headers.get("X-CTR-Signature", ""),
                    body,
                )
                with contextlib.suppress(OSError):  # a killed worker closed the connection
                    self.send_response(200)
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"ok")

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def record(self, event_id: str, header: str, body: bytes) -> None:
        from webhooks.delivery import signature

        parts = dict(item.split("=", 1) for item in header.split(",") if "=" in item)
        expected = signature(self.secret, int(parts.get("t") or 0), body)
        with self.lock:
            self.counts[event_id] += 1
            if not hmac.compare_digest(expected, header):
                self.bad_signatures += 1
            hold, self._hold = self._hold, False
        if hold:
            self.held_id = event_id
            self.held.set()
            self.released.wait(HOLD_SECONDS)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/ctr-eventos"

    def __exit__(self, *exc) -> None:
        self.release()
        self.server.shutdown()
        self.server.server_close()


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


# --- the outbox --------------------------------------------------------------------------------


def last_delivery_id() -> int:
    from webhooks.models import Delivery

    return Delivery.objects.order_by("-pk").values_list("pk", flat=True).first() or 0


def outbox(endpoint_id: int, since: int) -> dict[str, int]:
    """The endpoint's deliveries written since `since` (a delivery id), by status."""
    from django.db.models import Count

    from webhooks.models import Delivery

    rows = (
        Delivery.objects.filter(endpoint_id=endpoint_id, pk__gt=since)
        .values("status")
        .annotate(n=Count("pk"))
    )
    return {row["status"]: row["n"] for row in rows}


def wait_drained(endpoint_id: int, since: int, seconds: float) -> int:
    """Until no delivery of the endpoint is pending (polled, at most `seconds`): how many
    still are."""
    deadline = time.monotonic() + seconds
    while (pending := outbox(endpoint_id, since).get("pending", 0)) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.5)
    return pending


def event_ids(endpoint_id: int, since: int) -> list[str]:
    from webhooks.models import Delivery

    rows = Delivery.objects.filter(endpoint_id=endpoint_id, pk__gt=since)
    return [str(e) for e in rows.values_list("event_id", flat=True)]


@dataclass
class Kill:
    at: float = 0.0  # seconds into the soak
    held: str = ""  # the event id in flight when the worker died ("" if none came)
    pending: int = 0  # deliveries pending at the kill
    pid: int = 0
    restarted_pid: int = 0


def kill_mid_delivery(production: Production, receiver: Receiver, world: World, since: int):
    """Hold the next delivery at the receiver, SIGKILL the worker while it waits for the
    answer, start a new one. Runs in its own thread (the load goes on)."""
    from django.db import connection

    kill = Kill()
    try:
        receiver.hold_next()
        receiver.held.wait(HOLD_SECONDS)
        kill.held = receiver.held_id if receiver.held.is_set() else ""
        kill.pid = production.kill_worker()
        receiver.release()
        kill.pending = outbox(world.endpoint_id, since).get("pending", 0)
        production.start_worker()
        kill.restarted_pid = production.worker.pid
    finally:
        connection.close()
    return kill


@dataclass
class Soak:
    minutes: float
    capacity: Load
    rate: float
    lone: Tally
    load: Tally
    rss_start: dict
    rss_end: dict
    rss_samples: list  # (seconds, {gunicorn, worker} kB, the machine's 1-min load average)
    kill: Kill
    outbox: dict  # status → deliveries, after the drain
    expected: int  # event ids written for the endpoint
    received: int  # deliveries the receiver got
    missing: int
    duplicates: dict  # event id → times received, for those received more than once
    unexpected: int
    bad_signatures: int
    pending_after_drain: int
    command: str = ""
    workers: int = 0

    @property
    def p99_ratio(self) -> float:
        lone = self.lone.p(99)
        return self.load.p(99) / lone if lone else float("inf")

    def growth(self, name: str) -> float:
        start = self.rss_start[name]
        return (self.rss_end[name] - start) / start if start else float("inf")

    @property
    def duplicates_explained(self) -> bool:
        """Every duplicate is the delivery held in flight at the kill, received twice."""
        return not self.duplicates or self.duplicates == {self.kill.held: 2}


def run(
    production: Production,
    receiver: Receiver,
    world: World,
    seconds: float,
    capacity_seconds: float = CAPACITY_SECONDS,
    lone_seconds: float = LONE_SECONDS,
    drain_seconds: float = DRAIN_SECONDS,
    warmup_seconds: float = WARMUP_SECONDS,
) -> Soak:
    """The soak's phases on running processes (docstring above); the endpoint subscribed."""
    since = last_delivery_id()
    issue_lines = [("POST", "/api/v1/ctrs/", p) for p in world.payloads]
    auth = {"Authorization": f"Token {world.token}"}
    run_load(production.port, issue_lines, auth, warmup_seconds, CLIENTS, idempotent=True)
    say(f"Capacidade: emissões, {CLIENTS} conexões, laço fechado, {capacity_seconds:g} s…")
    capacity = run_load(
        production.port, issue_lines, auth, capacity_seconds, CLIENTS, idempotent=True
    )
    rate = max(1.0, RATE_SHARE * capacity.rps)
    say(f"  {capacity.rps:.0f} req/s, p99 {ms(capacity.p99)}, {capacity.errors} erros")
    left = wait_drained(world.endpoint_id, since, drain_seconds)
    say(f"Outbox esvaziado ({left} pendentes). Cliente só (emissões e recebimentos)…")
    mix = Mix(production.port, world)
    lone = closed_loop(mix, lone_seconds)
    say(f"  {lone.rps:.0f} req/s, p99 {ms(lone.p(99))}, {lone.errors} erros")

    rss_start = production.rss()
    samples = [(0.0, rss_start, os.getloadavg()[0])]
    holder: dict = {}

    def midway() -> None:
        holder["kill"] = kill_mid_delivery(production, receiver, world, since)
        holder["kill"].at = seconds / 2

    killer = threading.Timer(seconds / 2, midway)

    def every(elapsed: float) -> None:
        if elapsed - samples[-1][0] >= SAMPLE_SECONDS:
            samples.append((elapsed, production.rss(), os.getloadavg()[0]))

    say(
        f"Soak: {rate:.1f} req/s ({100 * RATE_SHARE:.0f} % da capacidade) por {seconds:g} s; "
        f"RSS no início {rss_start}"
    )
    killer.start()
    load = open_loop(mix, seconds, rate, every)
    killer.join()
    rss_end = production.rss()
    samples.append((load.seconds, rss_end, os.getloadavg()[0]))
    kill = holder.get("kill", Kill())
    say(
        f"  {load.rps:.1f} req/s, p99 {ms(load.p(99))}, {load.errors} erros; RSS no fim "
        f"{rss_end}; worker morto (pid {kill.pid}) com {kill.pending} entregas pendentes"
    )
    pending = wait_drained(world.endpoint_id, since, drain_seconds)
    expected = set(event_ids(world.endpoint_id, since))
    with receiver.lock:
        counts = collections.Counter(receiver.counts)
    duplicates = {e: n for e, n in counts.items() if n > 1}
    say(
        f"Entregas: {len(expected)} eventos, {sum(counts.values())} recebidas, "
        f"{len(expected - set(counts))} faltando, {len(duplicates)} duplicadas"
    )
    return Soak(
        minutes=seconds / 60,
        capacity=capacity,
        rate=rate,
        lone=lone,
        load=load,
        rss_start=rss_start,
        rss_end=rss_end,
        rss_samples=samples,
        kill=kill,
        outbox=outbox(world.endpoint_id, since),
        expected=len(expected),
        received=sum(counts.values()),
        missing=len(expected - set(counts)),
        duplicates=duplicates,
        unexpected=len(set(counts) - expected),
        bad_signatures=receiver.bad_signatures,
        pending_after_drain=pending,
        command=production.command,
        workers=len(children(production.web.pid)),
    )


# --- the report --------------------------------------------------------------------------------


def mib(kib: int) -> str:
    return f"{kib / 1024:.0f} MiB"


def shown(samples: list) -> list:
    """The first sample of each minute, and the last."""
    kept, minute = [], -1
    for sample in samples:
        if int(sample[0] // SHOWN_SECONDS) > minute:
            kept.append(sample)
            minute = int(sample[0] // SHOWN_SECONDS)
    if samples and kept[-1] is not samples[-1]:
        kept.append(samples[-1])
    return kept


def minute_p99(load: Tally, at: float) -> str:
    """The requests whose slot fell in the minute from `at`, and their p99 ("—" if none)."""
    start = SHOWN_SECONDS * int(at // SHOWN_SECONDS)
    took = [x for t, x in load.series if start <= t < start + SHOWN_SECONDS]
    if not took:
        return "— | —"
    p99 = statistics.quantiles(took, n=100, method="inclusive")[98] if len(took) > 1 else took[0]
    return f"{len(took)} | {ms(p99)}"


def render(soak: Soak, described: dict, when: str, command: str) -> str:
    def yes(flag: bool) -> str:
        return "atingida" if flag else "**NÃO atingida**"

    def row(name: str, t: Tally, kind: str | None = None) -> str:
        n = t.count(kind) if kind else t.requests
        return (
            f"| {name} | {n} | {n / t.seconds if t.seconds else 0:.1f} | {ms(t.p(50, kind))} "
            f"| {ms(t.p(95, kind))} | {ms(t.p(99, kind))} |"
        )

    load, lone, kill = soak.load, soak.lone, soak.kill
    growth = {name: soak.growth(name) for name in ("gunicorn", "worker")}
    rss_peak = max(s["gunicorn"] for _, s, _ in soak.rss_samples)
    dup = sum(n - 1 for n in soak.duplicates.values())
    lines = [
        "## Soak: o modo de produção a meia capacidade (issue 26, item 10)",
        "",
        f"Medido em {when} com `{command}` ({soak.minutes:g} min de carga). Processos: "
        f"`{soak.command}` ({soak.workers} workers do gunicorn, da configuração de produção), "
        "`DEBUG=false`, contra o banco `ctr_bench`; um receptor de webhooks local (http.server "
        "com threads) onde o transportador do soak assina todos os eventos de CTR. A máquina "
        "é compartilhada (2 núcleos, outras tarefas rodando ao mesmo tempo): os números "
        "absolutos variam entre execuções; as razões são da mesma execução.",
        "",
        f"Capacidade medida na mesma execução: {soak.capacity.rps:.0f} emissões/s "
        f"(`{soak.capacity.tool}`, {CLIENTS} conexões, laço fechado, p99 "
        f"{ms(soak.capacity.p99)}); o soak chega a **{soak.rate:.1f} req/s** (laço aberto, "
        f"{100 * RATE_SHARE:.0f} %), emissões e recebimentos dos CTRs emitidos alternados, cada "
        f"latência contada desde o horário da requisição; atendidas {load.rps:.1f} req/s, em "
        f"{load.seconds:.0f} s ({load.late} requisições esperaram por uma das {CONNECTIONS} "
        "conexões livres: o servidor ficou para trás quando há muitas). Cada requisição numa "
        "conexão nova, como um proxy sem keep-alive com o gunicorn.",
        "",
        "| | requisições | req/s | p50 | p95 | p99 |",
        "|---|---:|---:|---:|---:|---:|",
        row("cliente só (laço fechado)", lone),
        row("soak: tudo", load),
        row("soak: emissões (`POST /api/v1/ctrs/`)", load, "issue"),
        row("soak: recebimentos (`POST …/receive/`)", load, "receive"),
        "",
        "| meta | medido | situação |",
        "|---|---|---|",
        f"| erros = 0 | {load.errors} de {load.requests} (cliente só: {lone.errors}) "
        f"| {yes(load.errors == 0)} |",
        f"| p99 do soak ÷ p99 do cliente só (referência ≤ {MAX_P99_RATIO:g} ×, a da issue 16) "
        f"| {soak.p99_ratio:.2f} × ({ms(load.p(99))} ÷ {ms(lone.p(99))}) "
        f"| {yes(soak.p99_ratio <= MAX_P99_RATIO)} |",
        f"| RSS do gunicorn (mestre + workers) estável (± {100 * MAX_RSS_GROWTH:.0f} %) "
        f"| {mib(soak.rss_start['gunicorn'])} → {mib(soak.rss_end['gunicorn'])} "
        f"({100 * growth['gunicorn']:+.1f} %; pico {mib(rss_peak)}) "
        f"| {yes(abs(growth['gunicorn']) <= MAX_RSS_GROWTH)} |",
        f"| RSS do worker estável (± {100 * MAX_RSS_GROWTH:.0f} %) "
        f"| {mib(soak.rss_start['worker'])} → {mib(soak.rss_end['worker'])} "
        f"({100 * growth['worker']:+.1f} %; o do fim é o worker reiniciado) "
        f"| {yes(abs(growth['worker']) <= MAX_RSS_GROWTH)} |",
        f"| nenhuma entrega perdida | {soak.missing} de {soak.expected} eventos sem entrega; "
        f"{soak.pending_after_drain} pendentes após esperar o outbox | "
        f"{yes(soak.missing == 0 and soak.pending_after_drain == 0)} |",
        f"| cada evento entregue exatamente uma vez | {soak.received} entregas para "
        f"{soak.expected} eventos: {len(soak.duplicates)} eventos recebidos mais de uma vez "
        f"({dup} entregas a mais), {soak.unexpected} desconhecidos | "
        f"{yes(not soak.duplicates and not soak.unexpected)} |",
        "",
        f"Assinaturas inválidas no receptor: {soak.bad_signatures}. Outbox do endpoint no fim: "
        + ", ".join(f"{k} {v}" for k, v in sorted(soak.outbox.items()))
        + ".",
        "",
        f"**O worker morto no meio de uma entrega.** Aos {kill.at:.0f} s o receptor segurou "
        f"uma entrega sem responder (evento `{kill.held or 'nenhum'}`), o worker (pid "
        f"{kill.pid}) levou SIGKILL com {kill.pending} entregas pendentes no outbox, e um novo "
        f"(pid {kill.restarted_pid}) assumiu. "
        + (
            "Nenhuma entrega se perdeu. "
            if soak.missing == 0
            else f"**{soak.missing} entregas se perderam.** "
        )
        + (
            "A entrega em curso foi recebida duas vezes, e só ela: o worker envia dentro da "
            "transação que reservou a linha (`webhooks/delivery.py`); morto antes do COMMIT, a "
            "transação é desfeita e a linha volta a ficar pendente, e o novo worker a envia de "
            "novo com o mesmo id de evento. A entrega é *pelo menos uma vez*, não exatamente "
            "uma vez: o receptor deve descartar um `X-CTR-Event-Id` já visto "
            "(`docs/operations.md`)."
            if soak.duplicates and soak.duplicates_explained
            else "Nenhuma entrega foi recebida duas vezes."
            if not soak.duplicates
            else "**Há duplicatas além da entrega em curso na morte do worker.**"
        ),
        "",
        f"Minuto a minuto: o RSS no início do minuto (lido a cada {SAMPLE_SECONDS} s), a "
        "carga da máquina (load average de 1 min, de todos os processos da máquina, não só "
        "destes) e o p99 das requisições cujo horário caiu naquele minuto. Os workers do "
        "gunicorn são reciclados a cada ~2 000 requisições (`max_requests` de "
        "`deploy/gunicorn.conf.py`): as quedas são reciclagens; somar o RSS conta mais de uma "
        "vez as páginas que os workers dividem com o mestre.",
        "",
        "| s | gunicorn | worker | carga | requisições do minuto | p99 do minuto |",
        "|---:|---:|---:|---:|---:|---:|",
        *(
            f"| {t:.0f} | {mib(r['gunicorn'])} | {mib(r['worker'])} | {load1:.1f} | "
            + minute_p99(load, t)
            + " |"
            for t, r, load1 in shown(soak.rss_samples)
        ),
        "",
        "Máquina: " + "; ".join(f"{k}: {v}" for k, v in described.items()) + ".",
    ]
    return "\n".join(lines)


# --- the command -------------------------------------------------------------------------------


def ensure_data() -> None:
    from synthetic import generator as synthetic

    from .database import warm

    if synthetic.ensure_municipalities(say):
        say("Municípios carregados.")
    if synthetic.counts()["CTRs"] < MIN_CTRS:
        say(f"Gerando {MIN_CTRS} CTRs sintéticos (os payloads do soak são cópias deles)…")
        synthetic.reset()
        synthetic.generate(ctrs=MIN_CTRS, reports=0, seed=SEED)
    warm(say)


def production_env(static_root: str) -> dict[str, str]:
    """This process's environment (the bench database) as production runs: DEBUG off, the
    static files hashed and collected, behind an HTTPS proxy."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DJANGO_DEBUG": "false",
        "DJANGO_STATIC_MANIFEST": "true",
        "DJANGO_STATIC_ROOT": static_root,
        "DJANGO_SECURE_PROXY_SSL_HEADER": "true",
    }


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.soak",
        description="Mantém o modo de produção (gunicorn e worker) a meia capacidade, com "
        "emissões, recebimentos e webhooks para um receptor local; escreve a seção do soak "
        "em docs/performance.md.",
    )
    parser.add_argument("--minutes", type=float, default=DEFAULT_MINUTES, help="padrão: 10")
    # Tests and trials: the soak in seconds, the capacity and the lone client short.
    parser.add_argument("--seconds", type=float, default=None, help=argparse.SUPPRESS)
    parser.add_argument(
        "--output", type=Path, default=ROOT / "docs" / "performance.md", help="o relatório"
    )
    parser.add_argument("--no-write", action="store_true", help="só imprime, não escreve")
    args = parser.parse_args(argv)
    if (args.seconds if args.seconds is not None else args.minutes * 60) < 2:
        parser.error("o soak precisa de ao menos 2 s")
    return args


def main(argv: list[str] | None = None) -> int:
    from .database import open_bench

    args = parse(sys.argv[1:] if argv is None else argv)
    seconds = args.seconds if args.seconds is not None else args.minutes * 60
    load_at_start = machine.load()
    if open_bench(say) is None:
        return 2
    from django.utils import timezone

    from . import report
    from .p2_http import cleanup

    ensure_data()
    world, transporter, user = bench_world()
    usernames = (USERNAME, *(f"{OPERATOR_PREFIX}{f}" for f in world.operators))
    removed = cleanup(DOCUMENT, usernames)
    if removed:
        say(f"{removed} CTRs de um soak anterior removidos.")
    static = tempfile.mkdtemp(prefix="ctr-soak-static-")
    env = production_env(static)
    try:
        subprocess.run(
            [sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"],
            cwd=ROOT,
            env=env,
            check=True,
        )
        with Receiver() as receiver:
            receiver.secret = subscribe(world, transporter, user, receiver.url)
            with Production(env) as production:
                short = args.seconds is not None
                soak = run(
                    production,
                    receiver,
                    world,
                    seconds,
                    capacity_seconds=min(CAPACITY_SECONDS, 5) if short else CAPACITY_SECONDS,
                    lone_seconds=min(LONE_SECONDS, 3) if short else LONE_SECONDS,
                )
    finally:
        shutil.rmtree(static, ignore_errors=True)
        say(f"{cleanup(DOCUMENT, usernames)} CTRs do soak removidos.")
    text = render(
        soak,
        machine.describe(load_at_start),
        timezone.localtime().strftime("%Y-%m-%d %H:%M %Z"),
        report.command_line("bench.soak", argv),
    )
    report.publish(text, args.output, args.no_write, say, BEGIN, END)
    ok = soak.missing == 0 and soak.pending_after_drain == 0 and soak.duplicates_explained
    return 0 if ok else 1


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
