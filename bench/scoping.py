"""What the scoping by municipality costs at state size.

The synthetic state (synthetic/generator.py: the 645 municipalities of São Paulo, a Núcleo and
a Fiscalização account in each, consortia whose members send loads to the hub's shared
facility). For two municipalities — the largest (São Paulo) and a typical one (the median by
number of CTRs) — each page is requested in the same run, interleaved:

- **scoped**: as that municipality's Núcleo (the synthetic ``syn-staff-nucleo-<IBGE>``, its
  role there only): `visible_to(user)` and `jurisdiction_of(user).current_id` as any user;
- **unscoped**: the same request as the platform's administrator (a superuser,
  ``bench-admin-<IBGE>``, whose current municipality is the same one): every figure of the
  dashboard and the map is that municipality's, as for its Núcleo, and the lists are not
  restricted (the superuser reads every municipality).

Pages: the Núcleo's dashboard (`/nucleo/`) and map (`/nucleo/mapa/`), the CTR list API
(`/api/v1/ctrs/`, first page), the dumping-report list API (`/api/v1/dumping-reports/`, first
page) and the OGC API items of the CTR origins (`/ogc/collections/ctr-origins/items?limit=100`).
Through `django.test.Client` in this process (middleware, view, SQL, serialisation; no network),
signed in with a session, as over HTTPS. The ratio is scoped / unscoped per page and
municipality; the target is 1.2 × (the scope rides on indexes). The verdict shows the
`EXPLAIN (ANALYZE, BUFFERS)` of the scoped lists' queries.
"""

from __future__ import annotations

import json
import re
import statistics
import time
from dataclasses import dataclass, field

from .report import explained_query
from .timing import Result, Stats

NAME = "scoping"
TITLE = "Escopo por município no estado inteiro (issue 24, ponto 10)"
CAPITAL_IBGE = "3550308"
ADMIN_PREFIX = "bench-admin-"
MAX_RATIO = 1.2
# The lists whose scoped queries are explained, and the table each reads.
LISTS = {"ctrs": "ctr_ctr", "denuncias": "fiscalization_dumpingreport", "ogc": "ctr_ctr"}
EXPLAINED_PER_LIST = 2
# At least this many interleaved rounds, whatever --runs says: the ratios are of two medians
# measured on a shared machine.
MIN_ROUNDS = 15
_LAST: dict = {}


@dataclass(frozen=True)
class Page:
    key: str
    label: str
    url: str


PAGES = (
    Page("painel", "Painel do Núcleo", "/nucleo/"),
    Page("mapa", "Mapa do Núcleo", "/nucleo/mapa/"),
    Page("ctrs", "Lista de CTRs (API, 1ª página)", "/api/v1/ctrs/"),
    Page("denuncias", "Lista de denúncias (API, 1ª página)", "/api/v1/dumping-reports/"),
    Page(
        "ogc",
        "OGC API: origens dos CTRs (100 itens)",
        "/ogc/collections/ctr-origins/items?limit=100",
    ),
)
WHO = {"scoped": "Núcleo do município", "unscoped": "administrador (sem escopo)"}


@dataclass
class Town:
    """One of the two municipalities measured, its figures and its two clients."""

    key: str  # "maior" or "mediano"
    pk: int
    ibge: str
    name: str
    ctrs: int
    rank: int  # by number of CTRs, 1 = the most
    of: int  # municipalities with CTRs
    arriving: int  # CTRs of other municipalities destined to its facilities
    leaving: int  # its CTRs destined to another municipality's facilities
    reports: int
    clients: dict = field(default_factory=dict)  # "scoped"/"unscoped" -> Client


def say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def setup() -> dict:
    return {}


def _towns() -> list[Town]:
    """São Paulo and the median municipality by number of CTRs (of those with any)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT m.id, m.ibge_code, m.name, count(*) AS n FROM ctr_ctr c "
            "JOIN pev_network_municipality m ON m.id = c.municipality_id "
            "GROUP BY m.id ORDER BY n DESC, m.id"
        )
        ranked = cursor.fetchall()
    if not ranked:
        raise RuntimeError("Não há CTRs no banco de benchmark.")
    capital = next((i for i, row in enumerate(ranked) if row[1] == CAPITAL_IBGE), 0)
    chosen = [("maior", capital), ("mediano", len(ranked) // 2)]
    towns = []
    for key, i in chosen:
        pk, ibge, name, n = ranked[i]
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FILTER (WHERE c.municipality_id <> %(m)s AND f.municipality_id "
                "= %(m)s), count(*) FILTER (WHERE c.municipality_id = %(m)s "
                "AND f.municipality_id <> %(m)s) FROM ctr_ctr c "
                "JOIN pev_network_receivingfacility f ON f.id = c.destination_facility_id "
                "WHERE c.municipality_id = %(m)s OR f.municipality_id = %(m)s",
                {"m": pk},
            )
            arriving, leaving = cursor.fetchone()
            cursor.execute(
                "SELECT count(*) FROM fiscalization_dumpingreport WHERE municipality_id = %s",
                [pk],
            )
            reports = cursor.fetchone()[0]
        towns.append(Town(key, pk, ibge, name, n, i + 1, len(ranked), arriving, leaving, reports))
    return towns


def _clients(town: Town) -> None:
    """Its Núcleo (the synthetic account) and the administrator working in it."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    from jurisdiction.models import CurrentMunicipality, Role
    from synthetic.generator import staff_username

    users = get_user_model().objects
    username = staff_username(Role.NUCLEO, town.ibge)
    nucleo = users.filter(username=username, is_active=True).first()
    if nucleo is None:
        raise RuntimeError(
            f"Falta a conta {username}: gere os dados de novo (a equipe por município é do "
            "gerador sintético)."
        )
    admin, created = users.get_or_create(
        username=f"{ADMIN_PREFIX}{town.ibge}",
        defaults={"is_superuser": True, "is_staff": True, "first_name": "Administração"},
    )
    if created:
        admin.set_unusable_password()
        admin.save(update_fields=["password"])
    CurrentMunicipality.objects.update_or_create(user=admin, defaults={"municipality_id": town.pk})
    for who, user in (("scoped", nucleo), ("unscoped", admin)):
        client = Client()
        client.force_login(user)
        town.clients[who] = client


def _get(client, url: str):
    # As over HTTPS in production (DEBUG off redirects plain HTTP there).
    response = client.get(url, secure=True)
    if response.status_code != 200:
        raise RuntimeError(f"GET {url} respondeu {response.status_code}")
    return response


def _outside(page: Page, town: Town, response) -> tuple[int, int]:
    """(rows in the list, rows that are not the municipality's): what the scope left out."""
    from ctr.models import CTR
    from fiscalization.models import DumpingReport

    if page.key not in LISTS:
        return 0, 0
    body = json.loads(response.content)
    if page.key == "ctrs":
        numbers = [item["number"] for item in body["results"]]
        mine = CTR.objects.in_municipalities([town.pk]).filter(number__in=numbers).count()
        return len(numbers), len(numbers) - mine
    if page.key == "denuncias":
        ids = [feature["id"] for feature in body["features"]]
        mine = DumpingReport.objects.in_municipalities([town.pk]).filter(pk__in=ids).count()
        return len(ids), len(ids) - mine
    if page.key == "ogc":
        ids = [feature["id"] for feature in body["features"]]
        mine = CTR.objects.in_municipalities([town.pk]).filter(pk__in=ids).count()
        return len(ids), len(ids) - mine
    return 0, 0


def _explain(sql: str) -> str:
    """EXPLAIN (ANALYZE, BUFFERS) under a request's settings (config.middleware: no parallel
    workers, the statement timeout), as the query ran in the page."""
    from django.db import connection, transaction

    from config.middleware import request_session_settings

    with transaction.atomic(), connection.cursor() as cursor:
        for name, value in request_session_settings().items():
            cursor.execute(f"SET LOCAL {name} = {value}")
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql)
        return "\n".join(row[0] for row in cursor.fetchall())


def _explained(page: Page, captured: list[dict]) -> list[tuple[float, str, str]]:
    """The slowest SELECTs of the scoped list on its table, with their plans."""
    table = LISTS[page.key]
    queries = [
        q
        for q in captured
        if q["sql"].lstrip().upper().startswith(("SELECT", "WITH"))
        and re.search(rf'\bFROM "?{table}"?', q["sql"])
    ]
    queries.sort(key=lambda q: -float(q["time"]))
    return [(float(q["time"]), q["sql"], _explain(q["sql"])) for q in queries[:EXPLAINED_PER_LIST]]


def run(state: dict, size: int, reports: int, runs: int) -> list[Result]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    towns = _towns()
    for town in towns:
        _clients(town)
        say(
            f"  {town.name} ({town.key}, {town.rank}º de {town.of} por CTRs): {town.ctrs} CTRs, "
            f"{town.arriving} chegando de outros municípios, {town.leaving} saindo para outros, "
            f"{town.reports} denúncias"
        )
    keys = [(town, page, who) for town in towns for page in PAGES for who in WHO]
    times: dict[tuple, list[float]] = {(t.key, p.key, w): [] for t, p, w in keys}
    cpu: dict[tuple, list[float]] = {k: [] for k in times}
    size_of, rows = {}, {}
    for town, page, who in keys:  # warm-up, and what each answers
        response = _get(town.clients[who], page.url)
        size_of[(town.key, page.key, who)] = len(response.content)
        rows[(town.key, page.key, who)] = _outside(page, town, response)
    # Interleaved: each round asks every page of both municipalities, scoped and unscoped
    # one after the other, in alternating order (neither always pays for the other's cache).
    for round_ in range(max(runs, MIN_ROUNDS)):
        for town in towns:
            for page in PAGES:
                order = list(WHO) if round_ % 2 == 0 else list(reversed(WHO))
                for who in order:
                    client = town.clients[who]
                    started, started_cpu = time.perf_counter(), time.process_time()
                    _get(client, page.url)
                    times[(town.key, page.key, who)].append(time.perf_counter() - started)
                    cpu[(town.key, page.key, who)].append(time.process_time() - started_cpu)
    queries, sql_time, plans = {}, {}, {}
    for town, page, who in keys:
        with CaptureQueriesContext(connection) as captured:
            _get(town.clients[who], page.url)
        key = (town.key, page.key, who)
        queries[key] = len(captured.captured_queries)
        sql_time[key] = sum(float(q["time"]) for q in captured.captured_queries)
        if who == "scoped" and page.key in LISTS:
            plans[(town.key, page.key)] = _explained(page, captured.captured_queries)

    results = []
    for town, page, who in keys:
        key = (town.key, page.key, who)
        ts = times[key]
        stats = Stats(statistics.median(ts), min(ts), max(ts), len(ts), statistics.median(cpu[key]))
        label = f"{page.label} — {WHO[who]}, {town.name}"
        results.append(
            Result(
                benchmark=NAME,
                case="-".join(key),
                label=label,
                size=size,
                reports=reports,
                url=page.url,
                html_bytes=size_of[key],
                stats=stats,
                queries=queries[key],
                sql_seconds=sql_time[key],
                baseline=who == "unscoped",
            )
        )
    by_case = {r.case: r for r in results}
    for r in results:
        town_key, page_key, _ = r.case.split("-")
        base = by_case[f"{town_key}-{page_key}-unscoped"]
        r.ratio = r.stats.median / base.stats.median if base.stats.median else None
    _LAST.update(towns=towns, rows=rows, plans=plans, results=results)
    for town in towns:
        for page in PAGES:
            scoped = by_case[f"{town.key}-{page.key}-scoped"]
            unscoped = by_case[f"{town.key}-{page.key}-unscoped"]
            say(
                f"  {town.name} {page.url}: escopo {ms(scoped.stats.median)}, sem escopo "
                f"{ms(unscoped.stats.median)}, razão {scoped.ratio:.2f}"
            )
    return results


def profile(state: dict, results: list[Result]) -> list:
    # The scoped lists' plans are in the verdict, next to their ratios.
    return []


def ms(seconds: float) -> str:
    from config.br import br_number

    return f"{br_number(seconds * 1000, 1)} ms"


def verdict(results: list[Result]) -> str:
    from .report import thousands

    if not _LAST:
        return ""
    towns, rows, plans = _LAST["towns"], _LAST["rows"], _LAST["plans"]
    size = max(r.size for r in results)
    by_case = {r.case: r for r in results if r.size == size}

    def brx(value: float) -> str:
        return f"{thousands(value, 2)} ×"

    lines = [
        "Municípios medidos (usuário com escopo: a conta sintética do Núcleo de cada um, "
        "`syn-staff-nucleo-<IBGE>`; sem escopo: um superusuário com o mesmo município atual):",
        "",
        "| município | posição por CTRs | CTRs | chegando de outros | saindo para outros "
        "| denúncias |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for town in towns:
        which = "o maior" if town.key == "maior" else "o mediano"
        lines.append(
            f"| {town.name} ({town.ibge}, {which}) | {town.rank}º de {town.of} "
            f"| {thousands(town.ctrs)} | {thousands(town.arriving)} | {thousands(town.leaving)} "
            f"| {thousands(town.reports)} |"
        )
    lines += [
        "",
        f"Medianas de {results[0].stats.runs} requisições de cada, intercaladas (com escopo e "
        "sem, em ordem alternada a cada rodada); razão = com escopo ÷ sem escopo; meta ≤ "
        f"{brx(MAX_RATIO)}. *Linhas*: itens da página e, entre parênteses, quantos não são do "
        "município (o que o escopo deixou de fora).",
        "",
        "| município | página | com escopo | sem escopo | razão | meta | consultas | SQL "
        "(com / sem) | linhas (com / sem) |",
        "|---|---|---:|---:|---:|---|---:|---:|---|",
    ]
    worst = []
    for town in towns:
        for page in PAGES:
            s = by_case[f"{town.key}-{page.key}-scoped"]
            u = by_case[f"{town.key}-{page.key}-unscoped"]
            ok = s.ratio is not None and s.ratio <= MAX_RATIO
            if not ok:
                worst.append(f"{page.label}, {town.name} ({brx(s.ratio or 0)})")
            counts = ""
            if page.key in LISTS:
                (sn, so), (un, uo) = (
                    rows[(town.key, page.key, "scoped")],
                    rows[(town.key, page.key, "unscoped")],
                )
                counts = f"{sn} ({so}) / {un} ({uo})"
            lines.append(
                f"| {town.name} | {page.label}<br>`GET {page.url}` | {ms(s.stats.median)} "
                f"| {ms(u.stats.median)} | {brx(s.ratio or 0)} "
                f"| {'atingida' if ok else '**NÃO atingida**'} | {s.queries} / {u.queries} "
                f"| {ms(s.sql_seconds)} / {ms(u.sql_seconds)} | {counts} |"
            )
    lines += [
        "",
        f"**Meta** (≤ {brx(MAX_RATIO)} do sem escopo em cada página): "
        + (f"**NÃO atingida** em {'; '.join(worst)}." if worst else "**atingida** em todas."),
    ]
    for town in towns:
        for page in PAGES:
            for i, (seconds, sql, plan) in enumerate(plans.get((town.key, page.key), []), 1):
                lines += explained_query(
                    f"{page.label}, {town.name} (com escopo) — consulta {i} "
                    f"({ms(seconds)} na requisição)",
                    sql,
                    plan,
                )
    return "\n".join(lines)
