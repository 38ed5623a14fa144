"""P6 of "Performance at real sizes": the chain of custody (ctr/custody/chain.py)
with 1M synthetic CTRs, 20 % of them onward CTRs leaving the PEVs and ATTs
(synthetic/generator.py, ``--onward-share 0.2``), with the processing recorded on site.

In the same run, on the same data:

- P6a: the FIFO allocation of the busiest municipality (the most CTRs in the last 365 days):
  all its facilities marked stale, then `custody.refresh()` (the sweep, compared with the
  stored pieces, what changed written, commit: what the first reader after a change pays);
  the same with the stored pieces deleted first (every piece written, as after a change at
  the start of each facility's history); `custody.allocation_rows()` for the same facilities
  (the sweep, its rows fetched into Python), and the sweep alone in the database (`count(*)`
  over it). The allocation reads each facility's whole history (the data's two
  years). Baselines: a plain SUM of the volumes of the municipality's CTRs, the same join of
  CTR and waste lines, over the year, and over the whole period the allocation reads.
- P6b: a worksite's CDF page against the CTR detail page, through
  gunicorn as in production (bench/p2_http.Server), one client on a keep-alive connection,
  signed-in sessions: the Núcleo's for the worksite, the transporter's for its CTR. The CDF
  page (`/obras/<id>/cdf/`, ctr/custody/certificates.py) follows the site's loads to their ends and
  issues the certificate (the same facts give back the stored one); the worksite report
  page and the walk alone (in this process) are measured beside it. The worksite is the worst
  realistic case: of the busiest municipality's worksites with the most loads through an
  ATT, the one whose walk has the most pieces.

Targets: P6a ≤ 10 × the plain SUM; P6b ≤ 5 × the CTR detail page.

`python -m bench.p6_custody [--ctrs 1000000] [--runs 15] [--requests 100] [--regenerate]`, on a
database of its own (``ctr_bench_p6`` beside ``ctr_bench``, or ``BENCH_P6_DATABASE_URL``), so
that the other benchmarks' data stays what it was; the figures go to their own section of
docs/performance.md (between the ``p6:`` markers).
"""

from __future__ import annotations

import argparse
import datetime
import http.client
import importlib
import re
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from . import machine
from .p2_http import say

NAME = "p6_custody"
TITLE = "Cadeia de custódia: alocação FIFO e certificado de destinação (P6)"
BENCH_DB = "ctr_bench_p6"
DEFAULT_CTRS = 1_000_000
ONWARD_SHARE = 0.2
DEFAULT_SEED = 42
DEFAULT_RUNS = 15
DEFAULT_REQUESTS = 100
WARMUP = 10
YEAR_DAYS = 365
# Candidates for the worst worksite: the busiest municipality's sites with the most loads
# through an ATT; the one whose walk has the most pieces is measured.
CANDIDATE_WORKSITES = 20
MAX_ALLOCATION_RATIO = 10
MAX_PAGE_RATIO = 5
NUCLEO_USER = "bench-p6-nucleo"
TRANSPORTER_USER = "bench-p6-transportador"

# The CDF page of a worksite. Until it is on main: the stand-in of bench/views.py (the
# worksite report page plus the walk of its loads). The real page: change this line only.
CDF_URL = "/obras/{worksite}/cdf/"
REPORT_URL = "/obras/{worksite}/relatorio/"
CTR_DETAIL_URL = "/transportador/ctrs/{number}/"

ROOT = Path(__file__).resolve().parent.parent
BEGIN = (
    "<!-- p6:begin — gerado por `python -m bench.p6_custody`; não edite entre estes marcadores -->"
)
END = "<!-- p6:end -->"

SUM_SQL = """
SELECT count(*), sum(w.volume_m3)
FROM ctr_ctr c JOIN ctr_ctrwaste w ON w.ctr_id = c.id
WHERE c.municipality_id = %(municipality)s
  AND c.transport_date BETWEEN %(date_from)s AND %(date_to)s
"""


def quantiles(times: list[float]) -> tuple[float, float]:
    """Median and p95 (inclusive; with few runs the p95 sits near the maximum)."""
    if len(times) == 1:
        return times[0], times[0]
    q = statistics.quantiles(times, n=100, method="inclusive")
    return statistics.median(times), q[94]


def _timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


# --- the database and the data -------------------------------------------------------------


@dataclass
class Data:
    ctrs: int
    onward: int
    processing: int
    allocation_rows: int
    seconds: float  # 0 when reused
    command: str
    steps: list = field(default_factory=list)  # (name, rows, seconds) of the generation


def prepare(ctrs: int, seed: int, reuse: bool, reports: int = 0) -> Data:
    """The synthetic data with onward CTRs: reused when the database already holds exactly
    that many (and `reuse`), else generated afresh; then vacuumed, analysed and checkpointed
    (the state of a database in use)."""
    from django.db import connection

    from synthetic import generator as synthetic

    from .database import settle

    command = (
        f"python manage.py generate_synthetic --reset --municipalities --ctrs {ctrs} "
        f"--onward-share {ONWARD_SHARE} --seed {seed}"
    )
    counts = synthetic.counts()
    onward = round(ctrs * ONWARD_SHARE)
    seconds, steps = 0.0, []
    if not (reuse and counts["CTRs"] == ctrs and counts["CTRs de saída"] == onward):
        created = synthetic.ensure_municipalities(say)
        if created:
            say(f"{created} municípios carregados.")
        say(f"Gerando {ctrs} CTRs, {onward} de saída (semente {seed})…")
        started = time.perf_counter()
        synthetic.reset()
        summary = synthetic.generate(
            ctrs=ctrs, reports=reports, seed=seed, onward_share=ONWARD_SHARE, progress=say
        )
        steps = [(s.name, s.rows, s.seconds) for s in summary.steps]
        settle(say)
        seconds = time.perf_counter() - started
        counts = synthetic.counts()
    else:
        say(f"Dados de {ctrs} CTRs ({onward} de saída) reaproveitados.")
    from ctr.custody import chain as custody

    custody.refresh()  # nothing stale is left for the first measurement to rebuild
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {custody.ALLOCATION_TABLE}")
        pieces = cursor.fetchone()[0]
    return Data(
        counts["CTRs"],
        counts["CTRs de saída"],
        counts["beneficiamentos nas áreas"],
        pieces,
        seconds,
        command,
        steps,
    )


# --- the case ------------------------------------------------------------------------------


@dataclass
class Case:
    municipality_id: int
    municipality: str
    date_from: datetime.date
    date_to: datetime.date
    year_ctrs: int
    facilities: list[int]
    shipping: int  # of them, facilities that ship on or process
    inbound_lines: int  # what the sweep reads: received lines at those, and their outbound
    outbound: int
    worksite_id: int
    worksite_permit: str
    worksite_ctrs: int
    worksite_via_att: int
    pieces: int
    hops: int
    by_outcome: dict
    conclusive: bool
    ctr_number: str
    ctr_transporter_id: int


BUSIEST_SQL = """
SELECT c.municipality_id, m.name, count(*)
FROM ctr_ctr c JOIN pev_network_municipality m ON m.id = c.municipality_id
WHERE c.transport_date BETWEEN %s AND %s
GROUP BY 1, 2 ORDER BY 3 DESC, 1 LIMIT 1
"""

# What the sweep of these facilities reads.
SWEEP_INPUT_SQL = """
WITH shipping AS (
    SELECT DISTINCT c.origin_facility_id AS id FROM ctr_ctr c
    WHERE c.origin_facility_id = ANY(%(facilities)s) AND c.status IN %(shipped)s
    UNION
    SELECT p.facility_id FROM ctr_onsiteprocessing p WHERE p.facility_id = ANY(%(facilities)s)
)
SELECT (SELECT count(*) FROM shipping),
       (SELECT count(*) FROM ctr_ctr c JOIN ctr_ctrwaste w ON w.ctr_id = c.id
        WHERE c.destination_facility_id IN (SELECT id FROM shipping)
          AND c.status = %(received)s),
       (SELECT count(*) FROM ctr_ctr c JOIN ctr_ctrwaste w ON w.ctr_id = c.id
        WHERE c.origin_facility_id = ANY(%(facilities)s) AND c.status IN %(shipped)s)
       + (SELECT count(*) FROM ctr_onsiteprocessing p WHERE p.facility_id = ANY(%(facilities)s))
"""

# The busiest municipality's worksites with the most loads received at an ATT.
CANDIDATES_SQL = """
SELECT c.worksite_id
FROM ctr_ctr c JOIN pev_network_receivingfacility f ON f.id = c.destination_facility_id
WHERE c.municipality_id = %s AND c.worksite_id IS NOT NULL AND c.origin_facility_id IS NULL
GROUP BY c.worksite_id
ORDER BY count(*) FILTER (WHERE f.kind = %s AND c.status = %s) DESC, count(*) DESC,
         c.worksite_id
LIMIT %s
"""


def choose_case(today: datetime.date | None = None) -> Case:
    from django.db import connection
    from django.utils import timezone

    from ctr.custody import chain as custody
    from ctr.custody.stock import SHIPPED_STATUSES
    from ctr.models import CTR, CTRStatus, Worksite
    from pev_network.models import FacilityKind, ReceivingFacility

    today = today or timezone.localdate()
    date_from = today - datetime.timedelta(days=YEAR_DAYS - 1)
    with connection.cursor() as cursor:
        cursor.execute(BUSIEST_SQL, [date_from, today])
        municipality_id, name, year_ctrs = cursor.fetchone()
        facilities = list(
            ReceivingFacility.objects.filter(municipality_id=municipality_id)
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        cursor.execute(
            SWEEP_INPUT_SQL,
            {
                "facilities": facilities,
                "shipped": SHIPPED_STATUSES,
                "received": CTRStatus.RECEIVED.value,
            },
        )
        shipping, inbound_lines, outbound = cursor.fetchone()
        cursor.execute(
            CANDIDATES_SQL,
            [municipality_id, FacilityKind.ATT.value, CTRStatus.RECEIVED.value,
             CANDIDATE_WORKSITES],
        )  # fmt: skip
        candidates = [row[0] for row in cursor.fetchall()]
    walks = {pk: custody.worksite_pieces(pk) for pk in candidates}
    worksite_id = max(candidates, key=lambda pk: (len(walks[pk]), -pk))
    pieces = walks[worksite_id]
    destinations = custody.Destinations(pieces)
    worksite = Worksite.objects.get(pk=worksite_id)
    ctrs = CTR.objects.filter(worksite_id=worksite_id)
    via_att = ctrs.filter(
        destination_facility__kind=FacilityKind.ATT, status=CTRStatus.RECEIVED
    ).order_by("transport_date", "pk")
    ctr = via_att.first() or ctrs.order_by("pk").first()
    return Case(
        municipality_id=municipality_id,
        municipality=name,
        date_from=date_from,
        date_to=today,
        year_ctrs=year_ctrs,
        facilities=facilities,
        shipping=shipping,
        inbound_lines=inbound_lines,
        outbound=outbound,
        worksite_id=worksite_id,
        worksite_permit=worksite.permit_number,
        worksite_ctrs=ctrs.count(),
        worksite_via_att=via_att.count(),
        pieces=len(pieces),
        hops=max((p.hops for p in pieces), default=0),
        by_outcome={k: v for k, v in sorted(destinations.by_outcome.items())},
        conclusive=destinations.conclusive,
        ctr_number=ctr.number,
        ctr_transporter_id=ctr.transporter_id,
    )


READS = ("SELECT", "WITH")


def slowest_query(fn: Callable[[], object]) -> str:
    """The slowest query (a read: not a SAVEPOINT or a DELETE) `fn` runs, as it ran it
    (parameters in place)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        fn()
    reads = [q for q in captured.captured_queries if q["sql"].split(None, 1)[0].upper() in READS]
    return max(reads, key=lambda q: float(q["time"]))["sql"]


def explain_slowest(fn: Callable[[], object]) -> str:
    """`EXPLAIN (ANALYZE, BUFFERS)` of the slowest query `fn` runs."""
    from django.db import connection

    sql = slowest_query(fn)
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    # The municipality's facility ids, in every condition that names them: counted instead.
    return re.sub(r"'\{(?:\d+,){9,}\d+\}'", lambda m: f"'{{… {m[0].count(',') + 1} ids}}'", plan)


# --- P6a: the allocation ----------------------------------------------------------------------


@dataclass
class Allocation:
    refresh: list[float]  # marked stale, nothing changed: the sweep, compared with what is stored
    rewrite: list[float]  # the stored pieces deleted first: the sweep and every piece written
    rows: list[float]
    sweep: list[float]
    sum_year: list[float]
    sum_period: list[float]
    pieces: int
    year_lines: int
    period_lines: int
    plan: str = ""


def mark_stale(facilities: list[int]) -> None:
    from django.db import connection

    from ctr.custody import chain as custody

    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {custody.STALE_TABLE} (facility_id) SELECT unnest(%s::bigint[]) "
            "ON CONFLICT DO NOTHING",
            [facilities],
        )


def measure_allocation(case: Case, runs: int, explain: bool = True) -> Allocation:
    from django.db import connection

    from ctr.custody import chain as custody

    # The sweep as allocation_rows() runs it, counted in the database instead of fetched.
    sweep = slowest_query(lambda: custody.allocation_rows(case.facilities))
    count_sql = f"SELECT count(*) FROM ({sweep}) pieces"
    year = {
        "municipality": case.municipality_id,
        "date_from": case.date_from,
        "date_to": case.date_to,
    }
    period = {**year, "date_from": datetime.date.min, "date_to": datetime.date.max}

    def rebuild(from_scratch: bool = False) -> float:
        if from_scratch:  # as after a change at the start of every facility's history
            with connection.cursor() as cursor:
                cursor.execute(
                    f"DELETE FROM {custody.ALLOCATION_TABLE} WHERE facility_id = ANY(%s)",
                    [case.facilities],
                )
        mark_stale(case.facilities)
        started = time.perf_counter()
        rebuilt = custody.refresh()
        took = time.perf_counter() - started
        if set(rebuilt) != set(case.facilities):
            raise RuntimeError(f"refresh() reconstruiu {len(rebuilt)} áreas, não as do município")
        return took

    def sql(statement: str, values: dict | None) -> tuple:
        with connection.cursor() as cursor:
            cursor.execute(statement, values)
            return cursor.fetchone()

    figures = Allocation([], [], [], [], [], [], 0, 0, 0)
    # Interleaved, so that a busy moment of the machine falls on all of them alike; one
    # round first as a warm-up (cache), not counted.
    for i in range(runs + 1):
        timings = (
            rebuild(),
            rebuild(from_scratch=True),
            _timed(lambda: custody.allocation_rows(case.facilities)),
            _timed(lambda: sql(count_sql, None)),
            _timed(lambda: sql(SUM_SQL, year)),
            _timed(lambda: sql(SUM_SQL, period)),
        )
        if i:
            for sink, took in zip(
                (figures.refresh, figures.rewrite, figures.rows, figures.sweep,
                 figures.sum_year, figures.sum_period),
                timings,
                strict=True,
            ):  # fmt: skip
                sink.append(took)
    figures.pieces = sql(count_sql, None)[0]
    figures.year_lines = sql(SUM_SQL, year)[0]
    figures.period_lines = sql(SUM_SQL, period)[0]
    if explain:
        figures.plan = explain_slowest(lambda: custody.allocation_rows(case.facilities))
    return figures


# --- P6b: the pages -------------------------------------------------------------------------


@dataclass
class Pages:
    cdf: list[float]
    report: list[float]
    detail: list[float]
    walk: list[float]  # custody.worksite_pieces + Destinations, in this process
    statuses: dict
    sizes: dict
    server: str = ""
    plan: str = ""


def bench_users(case: Case):
    """The Núcleo's user (sees every worksite) and one acting for the CTR's transporter."""
    from django.contrib.auth import get_user_model

    from ctr.models import Membership

    from .staff import nucleo_everywhere

    users = get_user_model().objects
    nucleo, created = users.get_or_create(username=NUCLEO_USER)
    if created:
        nucleo.set_unusable_password()
        nucleo.save(update_fields=["password"])
    nucleo_everywhere(nucleo)
    carrier, created = users.get_or_create(username=TRANSPORTER_USER)
    if created:
        carrier.set_unusable_password()
        carrier.save(update_fields=["password"])
    Membership.objects.update_or_create(
        user=carrier, defaults={"transporter_id": case.ctr_transporter_id, "facility": None}
    )
    return nucleo, carrier


def session_cookie(user) -> str:
    """A signed-in session of `user`, as the login page would leave it."""
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY

    store = importlib.import_module(settings.SESSION_ENGINE).SessionStore()
    store[SESSION_KEY] = str(user.pk)
    store[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.save()
    return f"{settings.SESSION_COOKIE_NAME}={store.session_key}"


Fetch = Callable[[str, object], tuple[int, int]]  # (path, user) -> (status, bytes)


class HTTPFetch:
    """GET through gunicorn on one keep-alive connection, each user with its session."""

    def __init__(self, port: int):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.cookies: dict[int, str] = {}

    def __call__(self, path: str, user) -> tuple[int, int]:
        from .p2_http import PROXY_HEADERS

        if user.pk not in self.cookies:
            self.cookies[user.pk] = session_cookie(user)
        self.conn.request("GET", path, headers={**PROXY_HEADERS, "Cookie": self.cookies[user.pk]})
        response = self.conn.getresponse()
        return response.status, len(response.read())

    def close(self) -> None:
        self.conn.close()


def measure_pages(case: Case, fetch: Fetch, requests: int, explain: bool = True) -> Pages:

    from ctr.custody import chain as custody

    nucleo, carrier = bench_users(case)
    paths = {
        "cdf": (CDF_URL.format(worksite=case.worksite_id), nucleo),
        "report": (REPORT_URL.format(worksite=case.worksite_id), nucleo),
        "detail": (CTR_DETAIL_URL.format(number=case.ctr_number), carrier),
    }
    figures = Pages([], [], [], [], {}, {})
    for i in range(requests + WARMUP):
        for key, (path, user) in paths.items():
            started = time.perf_counter()
            status, size = fetch(path, user)
            took = time.perf_counter() - started
            figures.statuses.setdefault(key, set()).add(status)
            figures.sizes[key] = size
            if i >= WARMUP:
                getattr(figures, key).append(took)
    for i in range(requests + WARMUP):
        took = _timed(lambda: custody.Destinations(custody.worksite_pieces(case.worksite_id)))
        if i >= WARMUP:
            figures.walk.append(took)
    if explain:
        figures.plan = explain_slowest(lambda: custody.worksite_pieces(case.worksite_id))
    figures.statuses = {k: sorted(v) for k, v in figures.statuses.items()}
    return figures


def measure_pages_http(case: Case, requests: int, explain: bool = True) -> Pages:
    from .p2_http import Server

    with Server() as server:
        fetch = HTTPFetch(server.port)
        try:
            figures = measure_pages(case, fetch, requests, explain)
        finally:
            fetch.close()
        figures.server = server.command
    return figures


# --- the report -----------------------------------------------------------------------------


@dataclass
class Figures:
    data: Data
    case: Case
    allocation: Allocation
    pages: Pages
    machine: dict = field(default_factory=dict)
    when: str = ""
    command: str = ""

    @property
    def allocation_ratio(self) -> float:
        return quantiles(self.allocation.refresh)[0] / quantiles(self.allocation.sum_year)[0]

    @property
    def page_ratio(self) -> float:
        return quantiles(self.pages.cdf)[0] / quantiles(self.pages.detail)[0]


def _ms(seconds: float) -> str:
    from .report import thousands

    return f"{thousands(seconds * 1000, 1)} ms"


def _yes(flag: bool) -> str:
    return "atingida" if flag else "**NÃO atingida**"


def render(fig: Figures) -> str:
    from ctr.custody.chain import Outcome

    from .report import thousands

    d, c, a, p = fig.data, fig.case, fig.allocation, fig.pages
    lines = [f"## {TITLE}", ""]
    lines += [
        f"Banco próprio (`{BENCH_DB}`): a rede sintética dos 645 municípios de SP e "
        f"{thousands(d.ctrs)} CTRs sintéticos, {thousands(d.onward)} deles de saída "
        f"({thousands(100 * d.onward / d.ctrs, 0)} %: das ATTs e dos PEVs às áreas de "
        "reciclagem, aterros e ATTs, a maioria recebidos, alguns em trânsito, recusados ou "
        f"cancelados), {thousands(d.processing)} beneficiamentos registrados nas ATTs e "
        f"{thousands(d.allocation_rows)} pedaços de alocação FIFO "
        "(`ctr_custodyallocation`). Comando que reproduz os dados: "
        f"`{d.command}`"
        + (
            f" ({thousands(d.seconds, 0)} s nesta execução, com `VACUUM (ANALYZE)`)."
            if d.seconds
            else " (reaproveitados de uma execução anterior)."
        ),
        "",
        "| | |",
        "|---|---|",
    ]
    lines += [f"| {k} | {v} |" for k, v in fig.machine.items()]
    lines += [f"| data | {fig.when} |", f"| comando | `{fig.command}` |", ""]

    def row(label, times, base=None):
        median, p95 = quantiles(times)
        ratio = f"{thousands(median / quantiles(base)[0], 1)} ×" if base else "1"
        return (
            f"| {label} | {_ms(median)} | {_ms(p95)} | {_ms(min(times))} | "
            f"{_ms(max(times))} | {ratio} |"
        )

    period = f"{c.date_from:%d/%m/%Y} a {c.date_to:%d/%m/%Y}"
    lines += [
        f"### P6a: alocação de {c.municipality}, o município com mais CTRs no ano",
        "",
        f"{thousands(c.year_ctrs)} CTRs de {c.municipality} de {period}; suas "
        f"{thousands(len(c.facilities))} áreas marcadas para reconstruir, {c.shipping} delas "
        f"expedem ou beneficiam: a varredura lê {thousands(c.inbound_lines)} linhas de "
        f"resíduo recebidas nelas e {thousands(c.outbound)} saídas (CTRs de saída e "
        f"beneficiamentos), todo o histórico (os dois anos dos dados), e escreve "
        f"{thousands(a.pieces)} pedaços. {len(a.refresh)} medições de cada, intercaladas, "
        "depois de uma rodada de aquecimento; tempo no cliente (este processo, pelo "
        "loopback).",
        "",
        "| medição | mediana | p95 | mín | máx | razão × soma do ano |",
        "|---|---:|---:|---:|---:|---:|",
        row(
            f"base: `SUM` dos volumes dos CTRs de {c.municipality} no ano (CTR ⨝ resíduos, "
            f"{thousands(a.year_lines)} linhas)",
            a.sum_year,
        ),
        row(
            f"`SUM` do mesmo, nos dois anos que a alocação lê ({thousands(a.period_lines)} linhas)",
            a.sum_period,
            a.sum_year,
        ),
        row(
            "**P6a**: `custody.refresh()` das áreas do município marcadas para reconstruir "
            "(varre, compara com o gravado, grava o que mudou: nada; COMMIT)",
            a.refresh,
            a.sum_year,
        ),
        row(
            "`custody.refresh()` com os pedaços delas apagados antes (varre e grava todos, "
            "como depois de uma mudança no início do histórico de cada área)",
            a.rewrite,
            a.sum_year,
        ),
        row(
            "`custody.allocation_rows()` das mesmas áreas (a varredura, linhas lidas no Python)",
            a.rows,
            a.sum_year,
        ),
        row("a varredura só no banco (`count(*)` sobre ela)", a.sweep, a.sum_year),
    ]
    vs_period = quantiles(a.refresh)[0] / quantiles(a.sum_period)[0]
    rewrite_ratio = quantiles(a.rewrite)[0] / quantiles(a.sum_year)[0]
    lines += [
        "",
        f"**Meta P6a** ≤ {MAX_ALLOCATION_RATIO} × a soma: "
        f"{_yes(fig.allocation_ratio <= MAX_ALLOCATION_RATIO)} "
        f"({thousands(fig.allocation_ratio, 1)} × a soma do ano; "
        f"{thousands(vs_period, 1)} × a soma dos dois anos que a alocação lê). Gravando "
        f"todos os pedaços: {thousands(rewrite_ratio, 1)} × — "
        f"{'dentro' if rewrite_ratio <= MAX_ALLOCATION_RATIO else 'fora'} da meta.",
    ]

    lines += [
        "",
        "### P6b: certificado de destinação de uma obra × detalhe do CTR",
        "",
        f"Obra {c.worksite_permit} (id {c.worksite_id}), em {c.municipality}: "
        f"{c.worksite_ctrs} CTRs, {c.worksite_via_att} recebidos numa ATT; de "
        f"{CANDIDATE_WORKSITES} obras do município com mais cargas por ATT, a de mais "
        f"pedaços no caminho até o fim ({c.pieces} pedaços, até {c.hops} "
        f"{'salto' if c.hops == 1 else 'saltos'} depois da primeira área). Onde estão: "
        + "; ".join(
            f"{Outcome.LABELS.get(k, k)} {thousands(v, 1)} m³" for k, v in c.by_outcome.items()
        )
        + f" ({'conclusivo' if c.conclusive else 'não conclusivo'}). Servidor: "
        f"`{p.server}`; {len(p.cdf)} requisições de cada página, intercaladas, numa conexão "
        f"keep-alive, depois de {WARMUP} de aquecimento; sessões de login reais (o Núcleo vê "
        "a obra; o transportador, o seu CTR).",
        "",
        "| página | bytes | status | mediana | p95 | mín | máx | razão × detalhe |",
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]

    def page(label, key, base):
        times = getattr(p, key)
        median, p95 = quantiles(times)
        ratio = f"{thousands(median / quantiles(base)[0], 1)} ×" if base else "1"
        return (
            f"| {label} | {thousands(p.sizes.get(key, 0))} | {p.statuses.get(key)} | "
            f"{_ms(median)} | {_ms(p95)} | {_ms(min(times))} | {_ms(max(times))} | {ratio} |"
        )

    lines += [
        page(
            f"base: detalhe do CTR {c.ctr_number} (transportador)<br>"
            f"`GET {CTR_DETAIL_URL.format(number=c.ctr_number)}`",
            "detail",
            None,
        ),
        page(
            "**P6b**: certificado de destinação da obra"
            f"<br>`GET {CDF_URL.format(worksite=c.worksite_id)}`",
            "cdf",
            p.detail,
        ),
        page(
            f"relatório de destinação da obra (Núcleo)<br>"
            f"`GET {REPORT_URL.format(worksite=c.worksite_id)}`",
            "report",
            p.detail,
        ),
    ]
    walk_median, walk_p95 = quantiles(p.walk)
    lines += [
        f"| `custody.worksite_pieces` + `Destinations` da obra, no processo (sem HTTP) | — | — "
        f"| {_ms(walk_median)} | {_ms(walk_p95)} | {_ms(min(p.walk))} | {_ms(max(p.walk))} "
        f"| {thousands(walk_median / quantiles(p.detail)[0], 1)} × |",
        "",
        f"**Meta P6b** ≤ {MAX_PAGE_RATIO} × o detalhe do CTR: "
        f"{_yes(fig.page_ratio <= MAX_PAGE_RATIO)} ({thousands(fig.page_ratio, 1)} ×).",
    ]
    for title, plan in (
        ("Varredura da P6a (`custody.ALLOCATION_SQL`)", a.plan),
        ("Caminho das cargas da obra (`custody.DESTINATIONS_SQL`)", p.plan),
    ):
        if plan:
            lines += ["", f"`EXPLAIN (ANALYZE, BUFFERS)` — {title}, cache aquecido:", ""]
            lines += ["```", plan, "```"]
    return "\n".join(lines)


# --- the run --------------------------------------------------------------------------------


def measure_all(
    ctrs: int = DEFAULT_CTRS,
    runs: int = DEFAULT_RUNS,
    requests: int = DEFAULT_REQUESTS,
    seed: int = DEFAULT_SEED,
    reuse: bool = True,
    explain: bool = True,
) -> Figures:
    """Every figure of the section; Django must be set up on the benchmark's database."""
    data = prepare(ctrs, seed, reuse)
    say(f"{data.ctrs} CTRs, {data.onward} de saída, {data.allocation_rows} pedaços de alocação.")
    case = choose_case()
    say(
        f"Município: {case.municipality} ({case.year_ctrs} CTRs no ano, "
        f"{len(case.facilities)} áreas); obra {case.worksite_id} ({case.worksite_ctrs} CTRs, "
        f"{case.pieces} pedaços); CTR-base {case.ctr_number}."
    )
    say(f"P6b: páginas por HTTP, {requests} requisições de cada…")
    pages = measure_pages_http(case, requests, explain)
    say(
        f"  certificado {_ms(quantiles(pages.cdf)[0])}, relatório "
        f"{_ms(quantiles(pages.report)[0])}, detalhe {_ms(quantiles(pages.detail)[0])}, "
        f"caminho {_ms(quantiles(pages.walk)[0])}"
    )
    say(f"P6a: alocação de {case.municipality}, {runs} medições…")
    allocation = measure_allocation(case, runs, explain)
    say(
        f"  refresh {_ms(quantiles(allocation.refresh)[0])}, soma do ano "
        f"{_ms(quantiles(allocation.sum_year)[0])}"
    )
    from django.db import connection

    from ctr.custody import chain as custody

    with connection.cursor() as cursor:  # the rebuilds' dead rows, for the next run
        cursor.execute(f"VACUUM (ANALYZE) {custody.ALLOCATION_TABLE}")
    return Figures(data, case, allocation, pages)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.p6_custody",
        description="Mede a alocação FIFO da cadeia de custódia e a página do certificado de "
        "destinação com 1 milhão de CTRs, 20 %% de saída; escreve a seção P6 de "
        "docs/performance.md.",
    )
    parser.add_argument("--ctrs", type=int, default=DEFAULT_CTRS, help="CTRs no banco")
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS, help="medições da P6a")
    parser.add_argument(
        "--requests", type=int, default=DEFAULT_REQUESTS, help="requisições de cada página"
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument(
        "--regenerate", action="store_true", help="gera os dados de novo mesmo se já existem"
    )
    parser.add_argument("--no-explain", action="store_true", help="sem EXPLAIN ANALYZE")
    parser.add_argument(
        "--output", type=Path, default=ROOT / "docs" / "performance.md", help="o relatório"
    )
    parser.add_argument("--no-write", action="store_true", help="só imprime, não escreve")
    args = parser.parse_args(argv)
    if args.runs < 2 or args.requests < 2:
        parser.error("--runs e --requests devem ser ao menos 2")
    return args


def main(argv: list[str] | None = None) -> int:
    from .database import own_database

    args = parse(sys.argv[1:] if argv is None else argv)
    load_at_start = machine.load()
    if own_database("BENCH_P6_DATABASE_URL", BENCH_DB, "P6", say) is None:
        return 2
    from django.utils import timezone

    from config.startup import load_everything_and_freeze

    from . import report

    load_everything_and_freeze()  # in-process figures in the state of a production worker
    figures = measure_all(
        ctrs=args.ctrs,
        runs=args.runs,
        requests=args.requests,
        seed=args.seed,
        reuse=not args.regenerate,
        explain=not args.no_explain,
    )
    figures.machine = machine.describe(load_at_start)
    figures.when = timezone.localtime().strftime("%Y-%m-%d %H:%M %Z")
    figures.command = report.command_line("bench.p6_custody", argv)
    text = render(figures)
    report.publish(text, args.output, args.no_write, say, BEGIN, END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
