"""P2 of "Performance at real sizes": issuing CTRs over HTTP.

The app under gunicorn as in production (README: Produção: 2 workers, DEBUG off, static files
hashed by `collectstatic` and served by WhiteNoise, behind an HTTPS proxy, here simulated by
`X-Forwarded-Proto: https`), on 127.0.0.1 and a free port, against the bench database. The
load generator is Debian's `wrk` (bench/wrk/cycle.lua) with 16 connections for 30 s; without
`wrk`, a Python generator (16 threads, http.client keep-alive) does the same, and says so.

- P2: `POST /api/v1/ctrs/` with a token of the benchmark's transporter (``BENCH-P2``), each
  request a valid CTR copied from a synthetic one (origin in a municipality, discharge point
  inside a licensed facility, loads within the equipment's capacity), checked beforehand by
  ctr.services.check;
- the baseline, in the same server and run: `GET /bench/pip/` (bench/urls.py), one PostGIS
  point-in-polygon lookup.

Every issue carries its own `Idempotency-Key` (safe retries are in the path), as a
driver's phone sends them. Targets of the issue path, as ratios within one run (absolute
times on these shared 2-core machines vary two-fold between runs):
(a) one lone client issuing: p99 ≤ 6 × the p99 of the baseline with one lone client;
(b) open loop (bench/wrk/paced.lua: a fixed arrival rate, half the closed-loop throughput
    measured in the same run): p99 ≤ 3 × the lone client's p99, zero errors;
(c) closed loop, 16 clients: throughput ≥ 7 % of the baseline's.
And the numbers issued gapless. The CTRs issued are removed afterwards (the dataset keeps its
size). The earlier absolute targets (p99 ≤ 50 ms, throughput ≥ 50 % with 16 clients) are still
reported.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from .timing import Result, Stats

NAME = "p2_http"
TITLE = "Emissão de CTR por HTTP sob gunicorn (P2)"
REGISTRATION = "BENCH-P2"
DOCUMENT = "11222333000181"  # the bench transporter (its CTRs, found by it)
USERNAME = "bench-p2"
PLATES = ("BPB2C22", "BPB1C11")
# Never called: see subscribe_webhook.
WEBHOOK_URL = "https://webhooks.bench.invalid/ctr"
CLIENTS = 16
SECONDS = int(os.environ.get("BENCH_HTTP_SECONDS", "30"))
# One client alone: the time of an issue without waiting in the workers' queue.
ALONE_SECONDS = 10
WARMUP_SECONDS = 3
WORKERS = 2
# Threads per worker (gunicorn's gthread worker when above 1): README, Produção.
THREADS = int(os.environ.get("BENCH_GUNICORN_THREADS", "1"))
PAYLOADS = 2000
MAX_P99_S = 0.050
MIN_THROUGHPUT_SHARE = 0.5
# The targets as ratios within one run.
MAX_ALONE_P99_RATIO = 6.0  # lone issuing p99 / lone baseline p99
MAX_OPEN_P99_RATIO = 3.0  # open-loop issuing p99 / lone issuing p99
OPEN_RATE_SHARE = 0.5  # open-loop arrival rate / closed-loop issuing throughput
MIN_CLOSED_SHARE = 0.07  # closed-loop issuing throughput / baseline's
# The issue path back down.
MAX_ALONE_P50_RATIO = 8.0  # lone issuing p50 / lone baseline p50
MIN_CLOSED_SHARE_27 = 0.10  # closed-loop issuing throughput / baseline's
OPEN_CONNECTIONS = 8

ROOT = Path(__file__).resolve().parent.parent
LUA = ROOT / "bench" / "wrk" / "cycle.lua"
PACED_LUA = ROOT / "bench" / "wrk" / "paced.lua"
PROXY_HEADERS = {"X-Forwarded-Proto": "https"}
_LAST: dict = {}  # the last run's load figures, for verdict()


def say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


# --- the server --------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """gunicorn (bench.urls:application = the production URLs + the baseline view), 2 workers,
    with the static files collected to a temporary STATIC_ROOT for WhiteNoise."""

    def __init__(self, extra_env: dict[str, str] | None = None):
        self.port = free_port()
        self.static = tempfile.mkdtemp(prefix="ctr-bench-static-")
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DJANGO_DEBUG": "false",
            "DJANGO_STATIC_MANIFEST": "true",
            "DJANGO_STATIC_ROOT": self.static,
            "DJANGO_SECURE_PROXY_SSL_HEADER": "true",
            # No JSON line per request on the bench's terminal (gunicorn's output is ours):
            # the line costs ~0.1 ms of a request's time (measured, docs/operations.md).
            "CTR_ACCESS_LOG": "false",
            **(extra_env or {}),
        }
        self.process: subprocess.Popen | None = None
        self.command = (
            f"gunicorn bench.urls:application --workers {WORKERS} --threads {THREADS} "
            f"--bind 127.0.0.1:{self.port}"
        )

    def __enter__(self) -> Server:
        python = sys.executable
        subprocess.run(
            [python, "manage.py", "collectstatic", "--noinput", "-v", "0"],
            cwd=ROOT,
            env=self.env,
            check=True,
        )
        gunicorn = str(Path(python).with_name("gunicorn"))
        self.process = subprocess.Popen(
            [gunicorn, "bench.urls:application", "--workers", str(WORKERS)]
            + ["--threads", str(THREADS)]
            + ["--bind", f"127.0.0.1:{self.port}", "--log-level", "warning"],
            cwd=ROOT,
            env=self.env,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                status, _, _ = self.get("/static/ctr/web.css")
                if status:
                    break
            except OSError:
                time.sleep(0.3)
        else:
            self.__exit__()
            raise RuntimeError("gunicorn não respondeu em 60 s")
        say(f"gunicorn na porta {self.port} (pid {self.process.pid}, {WORKERS} workers)")
        return self

    def __exit__(self, *exc) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
        shutil.rmtree(self.static, ignore_errors=True)

    def get(self, path: str, headers: dict | None = None) -> tuple[int, bytes, float]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            started = time.perf_counter()
            conn.request("GET", path, headers={**PROXY_HEADERS, **(headers or {})})
            response = conn.getresponse()
            body = response.read()
            return response.status, body, time.perf_counter() - started
        finally:
            conn.close()


# --- the load ----------------------------------------------------------------------------------


@dataclass
class Load:
    """One run of the load generator: `clients` connections for `seconds`."""

    tool: str
    requests: int
    seconds: float
    errors: int
    p50: float
    p95: float
    p99: float
    min: float
    max: float
    statuses: dict = field(default_factory=dict)
    # Open loop only: the requests sent after their slot because every connection was busy,
    # and the worst delay (s); and the arrival rate asked for.
    late: int = 0
    late_max: float = 0.0
    rate: float | None = None

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


def have_wrk() -> bool:
    return shutil.which("wrk") is not None


def _write_requests(lines: list[tuple[str, str, str]]) -> str:
    handle, path = tempfile.mkstemp(prefix="ctr-bench-", suffix=".tsv")
    with os.fdopen(handle, "w") as out:
        for method, url, body in lines:
            out.write(f"{method}\t{url}\t{body}\n")
    return path


def idempotency_prefix() -> str:
    """A prefix no earlier run used: each request's key is the prefix, the generator's thread
    and a counter."""
    return f"bench-{os.getpid()}-{time.time_ns()}"


def run_load(
    port: int,
    lines: list[tuple[str, str, str]],
    headers: dict,
    seconds: int,
    clients: int,
    rate: float | None = None,
    idempotent: bool = False,
) -> Load:
    """`clients` connections for `seconds`: in a closed loop, or at `rate` requests per second
    (open loop). `idempotent`: each request with its own Idempotency-Key."""
    headers = {**PROXY_HEADERS, **headers}
    prefix = idempotency_prefix() if idempotent else ""
    if have_wrk():
        return _wrk(port, lines, headers, seconds, clients, rate, prefix)
    say("`wrk` não está instalado (apt-get install -y wrk): uso o gerador em Python.")
    if rate:
        return _python_paced(port, lines, headers, seconds, clients, rate, prefix)
    return _python_load(port, lines, headers, seconds, clients, prefix)


def _wrk(port, lines, headers, seconds, clients, rate=None, prefix="") -> Load:
    path = _write_requests(lines)
    threads = min(2, clients)
    try:
        env = {
            **os.environ,
            "BENCH_REQUESTS": path,
            "BENCH_HEADERS": "\n".join(f"{k}: {v}" for k, v in headers.items()),
            "BENCH_IDEMPOTENCY_PREFIX": prefix,
            "BENCH_RATE": str(rate or ""),
            "BENCH_THREADS": str(threads),
        }
        out = subprocess.run(
            ["wrk", f"-t{threads}", f"-c{clients}", f"-d{seconds}s", "--timeout", "10s"]
            + ["--latency"]
            + ["-s", str(PACED_LUA if rate else LUA), f"http://127.0.0.1:{port}"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    finally:
        os.unlink(path)
    line = next(x for x in out.splitlines() if x.startswith("BENCH-JSON "))
    d = json.loads(line.removeprefix("BENCH-JSON "))
    errors = d["connect"] + d["read"] + d["write"] + d["status"] + d["timeout"]
    return Load(
        "wrk",
        d["requests"],
        d["duration_us"] / 1e6,
        errors,
        d["p50"] / 1e6,
        d["p95"] / 1e6,
        d["p99"] / 1e6,
        d["min"] / 1e6,
        d["max"] / 1e6,
        {"non-2xx/3xx": d["status"], "socket": errors - d["status"]},
        late=d.get("late", 0),
        late_max=d.get("late_max_us", 0) / 1e6,
        rate=rate,
    )


def _python_paced(port, lines, headers, seconds, clients, rate, prefix="") -> Load:
    """The open loop without wrk: a request every 1/rate s handed to `clients` sender
    threads; each latency counts from the request's slot, so a server that falls behind is
    seen (no coordinated omission)."""
    import queue

    slots: queue.Queue = queue.Queue()
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    lock = threading.Lock()

    def sender() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        while (item := slots.get()) is not None:
            n, slot = item
            method, url, body = lines[n % len(lines)]
            h = dict(headers)
            if body:
                h["Content-Type"] = "application/json"
            if prefix:
                h["Idempotency-Key"] = f"{prefix}-{n}"
            try:
                conn.request(method, url, body=body.encode() if body else None, headers=h)
                response = conn.getresponse()
                response.read()
                code = response.status
            except OSError:
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                code = 0
            with lock:
                latencies.append(time.perf_counter() - slot)
                statuses[code] = statuses.get(code, 0) + 1

    threads = [threading.Thread(target=sender) for _ in range(clients)]
    for t in threads:
        t.start()
    started = time.perf_counter()
    n = 0
    while (slot := started + n / rate) < started + seconds:
        time.sleep(max(0.0, slot - time.perf_counter()))
        slots.put((n, slot))
        n += 1
    for _ in threads:
        slots.put(None)
    for t in threads:
        t.join()
    took = time.perf_counter() - started
    q = statistics.quantiles(latencies, n=100, method="inclusive")
    errors = sum(v for k, v in statuses.items() if not 200 <= k < 400)
    return Load(
        "python (ritmo fixo)",
        len(latencies),
        took,
        errors,
        q[49],
        q[94],
        q[98],
        min(latencies),
        max(latencies),
        statuses,
        rate=rate,
    )


def _python_load(port, lines, headers, seconds, clients, prefix="") -> Load:
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    lock = threading.Lock()
    stop = time.perf_counter() + seconds

    def worker(offset: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        mine, codes, i = [], {}, offset
        while time.perf_counter() < stop:
            method, url, body = lines[i % len(lines)]
            i += 1
            h = dict(headers)
            if body:
                h["Content-Type"] = "application/json"
            if prefix:
                h["Idempotency-Key"] = f"{prefix}-{offset}-{i}"
            started = time.perf_counter()
            try:
                conn.request(method, url, body=body.encode() if body else None, headers=h)
                response = conn.getresponse()
                response.read()
                code = response.status
            except OSError:
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                code = 0
            mine.append(time.perf_counter() - started)
            codes[code] = codes.get(code, 0) + 1
        with lock:
            latencies.extend(mine)
            for k, v in codes.items():
                statuses[k] = statuses.get(k, 0) + v

    started = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(n * 7919,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.perf_counter() - started
    q = statistics.quantiles(latencies, n=100, method="inclusive")
    errors = sum(v for k, v in statuses.items() if not 200 <= k < 400)
    return Load(
        "python",
        len(latencies),
        took,
        errors,
        q[49],
        q[94],
        q[98],
        min(latencies),
        max(latencies),
        statuses,
    )


def load_result(
    benchmark: str,
    case: str,
    label: str,
    size: int,
    reports: int,
    url: str,
    load: Load,
    body_bytes: int,
    queries: int,
    sql_seconds: float,
    baseline: bool = False,
) -> Result:
    stats = Stats(load.p50, load.min, load.max, load.requests)
    return Result(
        benchmark, case, label, size, reports, url, body_bytes, stats, queries, sql_seconds,
        baseline=baseline,
    )  # fmt: skip


def profile_request(client, method: str, url: str, **kwargs) -> tuple[int, int, float, int]:
    """One request in this process (django.test.Client): status, queries, SQL seconds, bytes."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        response = getattr(client, method)(url, secure=True, **kwargs)
    sql = sum(float(q.get("time") or 0) for q in captured.captured_queries)
    return response.status_code, len(captured), sql, len(response.content)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


# --- the data ----------------------------------------------------------------------------------

PAYLOAD_SQL = """
SELECT c.id, ST_X(c.origin), ST_Y(c.origin), ST_X(c.destination), ST_Y(c.destination),
       c.destination_facility_id, f.kind, c.total_volume_m3, g.name, g.document,
       (SELECT json_agg(json_build_object('class', x.waste_class, 'volume_m3', x.volume_m3::text)
                        ORDER BY x.id)
        FROM ctr_ctrwaste x WHERE x.ctr_id = c.id)
FROM ctr_ctr c TABLESAMPLE SYSTEM (1) REPEATABLE (42)
JOIN ctr_transporterlicence t ON t.transporter_id = c.transporter_id AND t.number LIKE 'SYN-T-%%'
JOIN ctr_generator g ON g.id = c.generator_id
JOIN pev_network_receivingfacility f ON f.id = c.destination_facility_id
LIMIT %s
"""


def prepare_transporter():
    from rest_framework.authtoken.models import Token

    from bench.fleet import bench_transporter

    transporter, user = bench_transporter(
        REGISTRATION,
        "Caçambas Benchmark HTTP Ltda.",
        DOCUMENT,
        PLATES,
        (("P2-05", "5"), ("P2-10", "10"), ("P2-12", "12")),
        USERNAME,
    )
    token, _ = Token.objects.get_or_create(user=user)
    subscribe_webhook(transporter, user)
    return transporter, user, token.key


def subscribe_webhook(transporter, user) -> None:
    """The issue path is measured with webhooks in the path: an endpoint of the bench
    transporter hears every CTR event, so each issue writes its outbox row in its own
    transaction. Created through the ORM: the URL is never called (no delivery worker runs in
    the bench; delivery is off the request path) and the SSRF guard would resolve its name."""
    from webhooks.models import Endpoint, EventType

    Endpoint.objects.get_or_create(
        transporter=transporter,
        url=WEBHOOK_URL,
        defaults={"events": list(EventType.values), "created_by": user},
    )


def build_payloads(transporter, n: int, plates=PLATES) -> tuple[list[str], int]:
    """Up to `n` JSON payloads that ctr.services.check accepts (no error finding), on the
    transporter's two vehicles `plates`."""
    from django.db import connection
    from django.utils import timezone

    from ctr import rules, services
    from ctr.api_serializers import CTRInput

    today = timezone.localdate().isoformat()
    with connection.cursor() as cursor:
        cursor.execute(PAYLOAD_SQL, [n * 2])
        rows = cursor.fetchall()
    payloads, rejected = [], 0
    for i, (_, ox, oy, dx, dy, facility, kind, total, gname, gdoc, waste) in enumerate(rows):
        if kind == "PEV":
            equipment = ""
        else:
            equipment = "P2-12" if total > 10 else "P2-10" if total > 5 else "P2-05"
        payload = {
            "transport_date": today,
            "vehicle_plate": plates[i % 2],
            "equipment_code": equipment,
            "generator": {"name": gname, "document": gdoc},
            "origin": {"type": "Point", "coordinates": [ox, oy]},
            "destination": {"type": "Point", "coordinates": [dx, dy]},
            "destination_facility": facility,
            "waste": waste,
        }
        serializer = CTRInput(data=payload)
        if not serializer.is_valid():
            rejected += 1
            continue
        _, findings = services.check(transporter, serializer.to_request())
        if rules.has_errors(findings):
            rejected += 1
            continue
        payloads.append(json.dumps(payload, separators=(",", ":")))
        if len(payloads) >= n:
            break
    return payloads, rejected


def cleanup(document: str = DOCUMENT, usernames: tuple[str, ...] = (USERNAME,)) -> int:
    """Remove the benchmark transporter's CTRs (events are append-only: the others are kept
    aside, the table truncated and put back, as bench/p1_bulk.py does), its users'
    idempotency keys, and give the numbers back to the sequences (bench/soak.py passes its own
    transporter and users)."""
    from django.db import connection, transaction

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(
            "CREATE TEMP TABLE p2_ids ON COMMIT DROP AS SELECT c.id FROM ctr_ctr c "
            "JOIN ctr_transporter t ON t.id = c.transporter_id "
            "WHERE t.document = %s",
            [document],
        )
        cursor.execute("SELECT count(*) FROM p2_ids")
        count = cursor.fetchone()[0]
        if not count:
            return 0
        cursor.execute("CREATE INDEX ON p2_ids (id)")
        cursor.execute("ANALYZE p2_ids")
        # The outbox rows of these CTRs (PROTECT: they go first) and the bench user's keys.
        cursor.execute(
            "DELETE FROM webhooks_attempt a USING webhooks_delivery d, p2_ids i "
            "WHERE a.delivery_id = d.id AND d.ctr_id = i.id"
        )
        cursor.execute("DELETE FROM webhooks_delivery d USING p2_ids i WHERE d.ctr_id = i.id")
        cursor.execute(
            "DELETE FROM ctr_idempotencykey k USING auth_user u "
            "WHERE k.user_id = u.id AND u.username = ANY(%s)",
            [list(usernames)],
        )
        cursor.execute(
            "CREATE TEMP TABLE p2_kept ON COMMIT DROP AS SELECT e.* FROM ctr_ctrevent e "
            "WHERE NOT EXISTS (SELECT 1 FROM p2_ids i WHERE i.id = e.ctr_id)"
        )
        cursor.execute("TRUNCATE ctr_ctrevent")
        cursor.execute("INSERT INTO ctr_ctrevent SELECT * FROM p2_kept ORDER BY id")
        cursor.execute("DELETE FROM ctr_ctrwaste w USING p2_ids i WHERE w.ctr_id = i.id")
        cursor.execute("DELETE FROM ctr_ctr c USING p2_ids i WHERE c.id = i.id")
        cursor.execute(
            "UPDATE ctr_numbersequence ns SET last_value = coalesce((SELECT max(c.sequence) "
            "FROM ctr_ctr c WHERE c.municipality_id = ns.municipality_id "
            "AND c.year = ns.year), 0)"
        )
    with connection.cursor() as cursor:
        for table in ("ctr_ctr", "ctr_ctrwaste", "ctr_ctrevent"):
            cursor.execute(f"VACUUM (ANALYZE) {table}")
    return count


def outbox_rows() -> int:
    """The webhook deliveries the bench transporter's CTRs wrote (one per issue)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM webhooks_delivery d JOIN ctr_ctr c ON c.id = d.ctr_id "
            "JOIN ctr_transporter t ON t.id = c.transporter_id "
            "WHERE t.document = %s",
            [DOCUMENT],
        )
        return cursor.fetchone()[0]


def sequences() -> dict[tuple[int, int], int]:
    from ctr.models import NumberSequence

    return {
        (s.municipality_id, s.year): s.last_value
        for s in NumberSequence.objects.all().only("municipality_id", "year", "last_value")
    }


def last_id() -> int:
    from ctr.models import CTR

    return CTR.objects.order_by("-pk").values_list("pk", flat=True).first() or 0


def snapshot() -> tuple[dict[tuple[int, int], int], int]:
    """The sequences and the last CTR id read in one snapshot. A request still in flight when
    a load stops commits at some moment: read apart, the two could fall on either side of it,
    and the check below would count its number as missing (it did, in two runs)."""
    from django.db import connection, transaction

    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        return sequences(), last_id()


def gapless(before: dict, since_id: int, issued_by_us: int) -> tuple[bool, str]:
    """Every sequence advanced by the CTRs issued since `since_id` only (all ours), and their
    numbers fill each advance exactly."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.municipality_id, c.year, array_agg(c.sequence ORDER BY c.sequence) "
            "FROM ctr_ctr c JOIN ctr_transporter t ON t.id = c.transporter_id "
            "WHERE t.document = %s AND c.id > %s GROUP BY 1, 2",
            [DOCUMENT, since_id],
        )
        ours = {(m, y): seqs for m, y, seqs in cursor.fetchall()}
    after = sequences()
    total = sum(len(s) for s in ours.values())
    problems = []
    for key, seqs in ours.items():
        start = before.get(key, 0)
        expected = list(range(start + 1, after[key] + 1))
        if seqs != expected:
            problems.append(f"{key}: {len(seqs)} números, esperado {start + 1}…{after[key]}")
    for key, value in after.items():
        if key not in ours and value != before.get(key, 0):
            problems.append(f"{key}: sequência avançou sem CTR")
    text = (
        f"{total} CTRs em {len(ours)} sequências (município, ano); "
        f"{issued_by_us} respostas sem erro contadas pelo cliente (as que ainda estavam em curso "
        "quando a carga parou também emitem)"
    )
    if problems:
        return False, text + "; falhas: " + "; ".join(problems[:5])
    return True, text


# --- the benchmark -----------------------------------------------------------------------------


@dataclass
class State:
    transporter: object = None
    user: object = None
    token: str = ""
    payloads: list[str] = field(default_factory=list)
    rejected: int = 0
    points: list[tuple[float, float]] = field(default_factory=list)
    extra: dict = field(default_factory=dict)


def setup() -> State:
    state = State()
    state.transporter, state.user, state.token = prepare_transporter()
    removed = cleanup()
    if removed:
        say(f"{removed} CTRs de uma execução anterior do P2 removidos.")
    return state


def run(state: State, size: int, reports: int, runs: int) -> list[Result]:
    from django.db import connection
    from django.test import Client

    state.payloads, state.rejected = build_payloads(state.transporter, PAYLOADS)
    say(f"{len(state.payloads)} CTRs válidos preparados ({state.rejected} amostras recusadas).")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT ST_X(origin), ST_Y(origin) FROM ctr_ctr TABLESAMPLE SYSTEM (1) "
            "REPEATABLE (7) LIMIT %s",
            [PAYLOADS],
        )
        state.points = cursor.fetchall()
    auth = {"Authorization": f"Token {state.token}"}
    client = Client(headers={**auth})
    issue_lines = [("POST", "/api/v1/ctrs/", p) for p in state.payloads]
    pip_lines = [("GET", f"/bench/pip/?lon={x}&lat={y}", "") for x, y in state.points]
    # The in-process profile (queries, SQL) of one request of each, before the sequences
    # are read: its CTR is issued through the same service and counted by the check.
    issue_profile = profile_request(
        client, "post", "/api/v1/ctrs/", data=state.payloads[0], content_type="application/json"
    )
    if issue_profile[0] != 201:
        raise RuntimeError(f"emissão de teste recusada: {issue_profile}")
    # The baseline's one query (the view of bench/urls.py, not imported here: that module
    # replaces ROOT_URLCONF in the process that imports it).
    from django.contrib.gis.geos import Point
    from django.test.utils import CaptureQueriesContext

    from pev_network.services import municipality_id_at

    x, y = state.points[0]
    with CaptureQueriesContext(connection) as captured:
        found = municipality_id_at(Point(x, y, srid=4326))
    pip_profile = (
        200,
        len(captured),
        sum(float(q["time"]) for q in captured.captured_queries),
        len(json.dumps({"municipality": found})),
    )

    def told(name: str, load: Load) -> None:
        late = f", {load.late} envios atrasados" if load.rate else ""
        say(
            f"  {name}: {load.rps:.0f} req/s, p50 {ms(load.p50)}, p99 {ms(load.p99)}, "
            f"{load.errors} erros{late}"
        )

    with Server() as server:
        for lines, headers in ((pip_lines, {}), (issue_lines, auth)):
            run_load(server.port, lines, headers, WARMUP_SECONDS, CLIENTS, idempotent=True)
        say(f"Base (ponto-em-polígono): 1 conexão, {ALONE_SECONDS} s; {CLIENTS}, {SECONDS} s…")
        base_alone = run_load(server.port, pip_lines, {}, ALONE_SECONDS, 1)
        told("base, 1 cliente", base_alone)
        base = run_load(server.port, pip_lines, {}, SECONDS, CLIENTS)
        told(f"base, {CLIENTS} clientes", base)
        say(f"P2 (emissão): 1 conexão, {ALONE_SECONDS} s…")
        alone = run_load(server.port, issue_lines, auth, ALONE_SECONDS, 1, idempotent=True)
        told("emissão, 1 cliente", alone)
        # The warm-up and the lone client issued CTRs too: the gapless check starts here.
        before, since_id = snapshot()
        say(f"P2 (emissão): {CLIENTS} conexões, {SECONDS} s…")
        issue = run_load(server.port, issue_lines, auth, SECONDS, CLIENTS, idempotent=True)
        told(f"emissão, {CLIENTS} clientes", issue)
        rate = max(1.0, OPEN_RATE_SHARE * issue.rps)
        say(f"P2 (emissão): laço aberto a {rate:.0f} req/s, {OPEN_CONNECTIONS} conexões…")
        open_loop = run_load(
            server.port, issue_lines, auth, SECONDS, OPEN_CONNECTIONS, rate, idempotent=True
        )
        told("emissão, laço aberto", open_loop)
        command = server.command
    answered = issue.requests - issue.errors + open_loop.requests - open_loop.errors
    ok, detail = gapless(before, since_id, answered)
    outbox = outbox_rows()
    say(f"Outbox de webhooks: {outbox} entregas pendentes escritas pelas emissões do P2.")
    say(f"Numeração: {'sem lacunas' if ok else 'COM LACUNAS'} — {detail}")
    state.extra = {
        "base": base,
        "base_alone": base_alone,
        "issue": issue,
        "alone": alone,
        "open": open_loop,
        "gapless": (ok, detail),
        "command": command,
        "issued": answered,
        "outbox": outbox,
    }
    _LAST["extra"] = state.extra
    removed = cleanup()
    say(f"{removed} CTRs do P2 removidos.")
    results = [
        load_result(
            NAME, "issue", "P2: emitir CTR (`POST`, JSON, token de transportador)", size,
            reports, "POST /api/v1/ctrs/", issue, issue_profile[3], issue_profile[1],
            issue_profile[2],
        ),
        load_result(
            NAME, "pip", "Base: ponto-em-polígono (bench/urls.py, uma consulta PostGIS)", size,
            reports, "/bench/pip/?lon=…&lat=…", base, pip_profile[3], pip_profile[1],
            pip_profile[2], baseline=True,
        ),
    ]  # fmt: skip
    results[0].ratio = issue.p50 / base.p50 if base.p50 else None
    results[1].ratio = 1.0
    return results


def profile(state: State, results: list[Result]) -> list:
    return []


def ratio_targets(extra: dict) -> list[tuple[str, float, float, bool]]:
    """As (what, measured ratio, bound, met) within the run's figures."""
    base, base_alone = extra["base"], extra["base_alone"]
    issue, alone, open_loop = extra["issue"], extra["alone"], extra["open"]

    def share(a: float, b: float) -> float:
        return a / b if b else float("inf")

    a = share(alone.p99, base_alone.p99)
    b = share(open_loop.p99, alone.p99)
    c = share(issue.rps, base.rps)
    return [
        ("(a) p99 da emissão com 1 cliente ÷ p99 da base com 1 cliente", a,
         MAX_ALONE_P99_RATIO, a <= MAX_ALONE_P99_RATIO),
        ("(b) p99 da emissão em laço aberto ÷ p99 da emissão com 1 cliente", b,
         MAX_OPEN_P99_RATIO, b <= MAX_OPEN_P99_RATIO and open_loop.errors == 0),
        (f"(c) vazão da emissão com {CLIENTS} clientes ÷ vazão da base", c,
         MIN_CLOSED_SHARE, c >= MIN_CLOSED_SHARE),
    ]  # fmt: skip


def issue27_targets(extra: dict) -> list[tuple[str, float, float, bool]]:
    """The issue path back down, as ratio_targets gives its own: the lone
    client's p50 against the lone baseline's p50, and the closed loop's throughput against
    the baseline's, both within the run."""
    base, base_alone = extra["base"], extra["base_alone"]
    issue, alone = extra["issue"], extra["alone"]
    d = alone.p50 / base_alone.p50 if base_alone.p50 else float("inf")
    e = issue.rps / base.rps if base.rps else 0.0
    return [
        ("(d) p50 da emissão com 1 cliente ÷ p50 da base com 1 cliente", d,
         MAX_ALONE_P50_RATIO, d <= MAX_ALONE_P50_RATIO),
        (f"(e) vazão da emissão com {CLIENTS} clientes ÷ vazão da base", e,
         MIN_CLOSED_SHARE_27, e >= MIN_CLOSED_SHARE_27),
    ]  # fmt: skip


def verdict(results: list[Result]) -> str:
    extra = _LAST.get("extra")
    if not extra:
        return ""
    base, issue, alone = extra["base"], extra["issue"], extra["alone"]
    base_alone, open_loop = extra["base_alone"], extra["open"]
    share = issue.rps / base.rps if base.rps else 0
    ok_gap, gap_text = extra["gapless"]
    p99_ok = issue.p99 <= MAX_P99_S
    share_ok = share >= MIN_THROUGHPUT_SHARE

    def yes(flag: bool) -> str:
        return "atingida" if flag else "**NÃO atingida**"

    def row(name: str, load: Load) -> str:
        return (
            f"| {name} | {load.rps:.0f} | {ms(load.p50)} | {ms(load.p95)} | {ms(load.p99)} | "
            f"{load.errors} | {load.requests} |"
        )

    targets = ratio_targets(extra) + issue27_targets(extra)
    lines = [
        f"Servidor: `{extra['command']}` (o app de produção mais a view-base; `DEBUG=false`, "
        "estáticos por WhiteNoise com `DJANGO_STATIC_MANIFEST=true`, "
        "`X-Forwarded-Proto: https` como um proxy HTTPS); carga: "
        f"`{issue.tool}` com {CLIENTS} conexões por {SECONDS} s cada (laço fechado), no "
        f"loopback, depois de {WARMUP_SECONDS} s de aquecimento; cada emissão com a sua "
        "`Idempotency-Key`, e o transportador tem um webhook de todos os eventos, de modo que cada "
        f"emissão escreve a sua entrega no outbox na mesma transação ({extra['outbox']} "
        "entregas escritas; nenhum entregador roda durante a medição). O laço aberto "
        "(`bench/wrk/paced.lua`) chega a uma taxa fixa, "
        f"{100 * OPEN_RATE_SHARE:.0f} % da vazão medida em laço fechado nesta mesma execução, "
        f"com {OPEN_CONNECTIONS} conexões. Na tabela acima, mediana/mín/máx são "
        "latências de requisição; consultas e SQL, de uma requisição medida no processo "
        "(`django.test.Client`). A máquina tem 2 núcleos, divididos entre gunicorn, "
        "PostgreSQL e o gerador de carga.",
        "",
        "| | req/s | p50 | p95 | p99 | erros | requisições |",
        "|---|---:|---:|---:|---:|---:|---:|",
        row(f"P2: emissão, {CLIENTS} clientes (laço fechado)", issue),
        row(f"P2: emissão, laço aberto a {open_loop.rate or 0:.0f} req/s", open_loop),
        row(f"P2: emissão, 1 cliente só ({ALONE_SECONDS} s, sem fila)", alone),
        row(f"base: ponto-em-polígono, {CLIENTS} clientes", base),
        row(f"base: ponto-em-polígono, 1 cliente só ({ALONE_SECONDS} s)", base_alone),
        "",
        "**Metas das issues 16, (a)–(c), e 27, (d)–(e) (razões na mesma execução)**:",
        "",
        "| meta | medido | limite | situação |",
        "|---|---:|---:|---|",
        *(
            f"| {name} | {value:.2f} × | {'≤' if 'vazão' not in name else '≥'} {bound:.2f} × | "
            f"{yes(met)} |"
            for name, value, bound, met in targets
        ),
        "",
        f"Laço aberto: {open_loop.errors} erros; {open_loop.late} de {open_loop.requests} "
        "envios saíram depois do seu horário por falta de conexão livre (atraso máximo "
        f"{ms(open_loop.late_max)}): com atrasos a taxa pedida não foi oferecida inteira e a "
        "latência medida desde o envio subestima a espera.",
        "",
        f"Metas antigas (absolutas): p99 ≤ 50 ms com {CLIENTS} clientes — {yes(p99_ok)} "
        f"({ms(issue.p99)}); vazão ≥ 50 % da base — {yes(share_ok)} ({100 * share:.0f} %); "
        f"zero erros — {yes(issue.errors == 0)}; numeração sem lacunas — {yes(ok_gap)} "
        f"({gap_text}).",
    ]
    return "\n".join(lines)
