"""The soak's run (bench/soak.py): the local webhook receiver, the outbox, the worker killed
mid-delivery, and the phases — warm-up, capacity, the lone client, the soak at a share of the
capacity, the drain — with what each found (Soak)."""

from __future__ import annotations

import collections
import contextlib
import hmac
import http.client
import http.server
import os
import threading
import time
from dataclasses import dataclass

from .p2_http import CLIENTS, Load, ms, run_load, say
from .production import Production, children
from .soak_load import Mix, Tally, World, closed_loop, open_loop

WARMUP_SECONDS = 3
CAPACITY_SECONDS = 15  # closed loop: the capacity the soak's rate is half of
LONE_SECONDS = 10
RATE_SHARE = 0.5
SAMPLE_SECONDS = 10  # RSS (and load average) samples during the soak
HOLD_SECONDS = 30  # how long the kill waits for a delivery to hold in flight
DRAIN_SECONDS = 300


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
