"""P5 of "Performance at real sizes": hotspots (DBSCAN) and the list endpoints with bbox.

- Hotspots: fiscalization.hotspots.find_hotspots on the municipality with the most dumping
  reports (São Paulo in the synthetic data, ~26k of the 100k), over the whole period of the
  data; then with that municipality topped up to 100,000 reports by jittered copies of its own
  (``SYN-P5-…``, within ~300 m of an original, removed afterwards), over the whole period and
  over the default 180 days. Timed in this process (the SQL does the clustering).
- `GET /api/v1/dumping-reports/?bbox=…` and `GET /api/v1/ctrs/?bbox=…` as a Núcleo user (token),
  through `django.test.Client` in this process (middleware, DRF, SQL, serialisation; no
  network), with random city-sized boxes (0.1° × 0.1°, ~11 km, centred on CTR origins): p50 and
  p95; with the queries of the slowest request and the `EXPLAIN (ANALYZE, BUFFERS)` of its two
  slowest ones.
- Baseline in the same run: the point-in-polygon lookup through the same client (a public
  endpoint: `GET /api/v1/municipalities/lookup/?lon=…&lat=…` if present; see the table).

Targets: hotspots ≤ 1 s on 100k reports of one municipality; the lists p95 ≤ 100 ms at 1M CTRs.
"""

from __future__ import annotations

import datetime
import random
import statistics
import time

from .p2_http import ms, say
from .report import explained_query
from .timing import Result, Stats

NAME = "p5_lists"
TITLE = "Pontos críticos (DBSCAN) e listas da API com bbox (P5)"
USERNAME = "bench-p5"
REQUESTS = 30
TARGET_REPORTS = 100_000
MAX_HOTSPOT_S = 1.0
MAX_LIST_P95 = 0.100
_LAST: dict = {}

COPY_SQL = """
WITH o AS (
    SELECT row_number() OVER (ORDER BY id) - 1 AS i, *
    FROM fiscalization_dumpingreport
    WHERE municipality_id = %(m)s AND protocol NOT LIKE 'SYN-P5-%%'
)
INSERT INTO fiscalization_dumpingreport
    (protocol, location, description, category, estimated_volume_m3, status, reporter_kind,
     contact_name, contact, created_at, updated_at, cleaned_at, duplicate_of_id,
     municipality_id, reporter_id)
SELECT 'SYN-P5-' || lpad(g.k::text, 7, '0'),
       ST_SetSRID(ST_MakePoint(ST_X(r.location) + (random() - 0.5) * 0.006,
                               ST_Y(r.location) + (random() - 0.5) * 0.006), 4326),
       r.description, r.category, r.estimated_volume_m3, r.status, r.reporter_kind,
       r.contact_name, r.contact, r.created_at - (random() * interval '30 days'),
       r.updated_at, r.cleaned_at, NULL, r.municipality_id, NULL
FROM generate_series(1, %(copies)s) g(k)
JOIN o r ON r.i = g.k %% %(originals)s
"""


def remove_copies() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM fiscalization_dumpingreport WHERE protocol LIKE 'SYN-P5-%%'")
        removed = cursor.rowcount
        if removed:
            cursor.execute("VACUUM (ANALYZE) fiscalization_dumpingreport")
    return removed


def setup() -> dict:
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from .staff import nucleo_everywhere

    user, created = get_user_model().objects.get_or_create(username=USERNAME)
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    nucleo_everywhere(user)
    token, _ = Token.objects.get_or_create(user=user)
    removed = remove_copies()
    if removed:
        say(f"{removed} denúncias SYN-P5 de uma execução anterior removidas.")
    return {"token": token.key}


def _timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def _explain(sql: str) -> str:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql)
        return "\n".join(r[0] for r in cursor.fetchall())


def run(state: dict, size: int, reports: int, runs: int) -> list[Result]:
    from django.contrib.gis.geos import Point
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from fiscalization import hotspots
    from pev_network.services import municipality_id_at

    client = Client(headers={"Authorization": f"Token {state['token']}"})
    rng = random.Random(42)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT ST_X(origin), ST_Y(origin) FROM ctr_ctr TABLESAMPLE SYSTEM (1) "
            "REPEATABLE (5) LIMIT 2000"
        )
        origins = cursor.fetchall()
    boxes = []
    for x, y in rng.sample(origins, REQUESTS):
        boxes.append(f"{x - 0.05:.5f},{y - 0.05:.5f},{x + 0.05:.5f},{y + 0.05:.5f}")

    # --- the lists ------------------------------------------------------------------------
    lists = {}
    for case, base in (("reports", "/api/v1/dumping-reports/"), ("ctrs", "/api/v1/ctrs/")):
        client.get(f"{base}?bbox={boxes[0]}", secure=True)  # warm-up
        times, statuses, nbytes = [], set(), 0
        for box in boxes:
            started = time.perf_counter()
            response = client.get(f"{base}?bbox={box}", secure=True)
            times.append(time.perf_counter() - started)
            statuses.add(response.status_code)
            nbytes = max(nbytes, len(response.content))
        slowest = boxes[times.index(max(times))]
        with CaptureQueriesContext(connection) as captured:
            client.get(f"{base}?bbox={slowest}", secure=True)
        queries = sorted(captured.captured_queries, key=lambda q: -float(q["time"]))
        plans = [
            (float(q["time"]), q["sql"], _explain(q["sql"]))
            for q in queries[:2]
            if q["sql"].lstrip().upper().startswith("SELECT")
        ]
        lists[case] = {
            "url": base,
            "times": times,
            "statuses": sorted(statuses),
            "bytes": nbytes,
            "queries": len(captured),
            "sql": sum(float(q["time"]) for q in captured.captured_queries),
            "plans": plans,
            "box": slowest,
        }
        q = statistics.quantiles(times, n=100, method="inclusive")
        say(f"  {base}: p50 {ms(q[49])}, p95 {ms(q[94])}, status {sorted(statuses)}")

    # the baseline: one point-in-polygon lookup, same process
    pip = []
    for x, y in origins[:REQUESTS]:
        pip.append(_timed(lambda x=x, y=y: municipality_id_at(Point(x, y, srid=4326))))

    # --- the hotspots ---------------------------------------------------------------------
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT m.id, m.name, count(*) FROM fiscalization_dumpingreport r "
            "JOIN pev_network_municipality m ON m.id = r.municipality_id "
            "GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 1"
        )
        mid, mname, originals = cursor.fetchone()
    since_all = timezone.localdate() - datetime.timedelta(days=3 * 365)

    def hotspot_runs(query) -> tuple[list[float], int]:
        found = hotspots.find_hotspots(query)  # warm-up
        return [_timed(lambda: hotspots.find_hotspots(query)) for _ in range(max(3, runs))], len(
            found
        )

    hot = {}
    say(f"Pontos críticos em {mname}: {originals} denúncias…")
    hot["orig-all"] = (
        originals,
        *hotspot_runs(hotspots.HotspotQuery(municipality_id=mid, since=since_all)),
    )
    copies = max(0, TARGET_REPORTS - originals)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT setseed(0.5)")
            cursor.execute(COPY_SQL, {"copies": copies, "m": mid, "originals": originals})
            cursor.execute("VACUUM (ANALYZE) fiscalization_dumpingreport")
            cursor.execute(
                "SELECT count(*), count(*) FILTER (WHERE created_at >= now() - interval "
                "'180 days') FROM fiscalization_dumpingreport WHERE municipality_id = %s",
                [mid],
            )
            total, recent = cursor.fetchone()
        say(f"  com cópias: {total} denúncias ({recent} nos últimos 180 dias)…")
        hot["100k-all"] = (
            total,
            *hotspot_runs(hotspots.HotspotQuery(municipality_id=mid, since=since_all)),
        )
        hot["100k-180"] = (recent, *hotspot_runs(hotspots.HotspotQuery(municipality_id=mid)))
        sql, params = hotspots._sql(hotspots.HotspotQuery(municipality_id=mid, since=since_all))
        with connection.cursor() as cursor:
            hot_sql = cursor.mogrify(sql, params).decode()
    finally:
        removed = remove_copies()
        say(f"  {removed} denúncias SYN-P5 removidas.")
    for key, (n, times, found) in hot.items():
        say(f"  {key}: {n} denúncias, mediana {statistics.median(times):.3f} s, {found} pontos")

    _LAST.update(lists=lists, hot=hot, mname=mname, pip=pip, hot_sql=hot_sql)

    def result(case, label, url, times, nbytes=0, queries=0, sql=0.0, baseline=False):
        stats = Stats(statistics.median(times), min(times), max(times), len(times))
        return Result(
            NAME, case, label, size, reports, url, nbytes, stats, queries, sql, baseline=baseline
        )

    pip_median = statistics.median(pip)
    labels = {
        "orig-all": f"Pontos críticos: {mname}, {hot['orig-all'][0]} denúncias (todo o período)",
        "100k-all": f"Pontos críticos: {mname} com cópias, {hot['100k-all'][0]} denúncias "
        "(todo o período)",
        "100k-180": f"Pontos críticos: {mname} com cópias, {hot['100k-180'][0]} denúncias "
        "(últimos 180 dias, o padrão)",
    }
    results = [
        result(key, labels[key], "fiscalization.hotspots.find_hotspots (no processo)", times)
        for key, (_, times, _) in hot.items()
    ]
    for case, label in (("reports", "Denúncias com bbox"), ("ctrs", "CTRs com bbox")):
        d = lists[case]
        results.append(
            result(case, f"{label} (Núcleo, token; {REQUESTS} caixas de 0,1°)",
                   f"{d['url']}?bbox=…", d["times"], d["bytes"], d["queries"], d["sql"])
        )  # fmt: skip
    results.append(
        result("pip", "Base: ponto-em-polígono (município sob o ponto), no processo",
               "pev_network.services.municipality_id_at", pip, 0, 1, 0.0, True)
    )  # fmt: skip
    for r in results:
        r.ratio = r.stats.median / pip_median if pip_median else None
    return results


def profile(state: dict, results: list[Result]) -> list:
    return []


def verdict(results: list[Result]) -> str:
    if not _LAST:
        return ""
    lists, hot = _LAST["lists"], _LAST["hot"]

    def yes(flag: bool) -> str:
        return "atingida" if flag else "**NÃO atingida**"

    lines = [
        "Listas: `django.test.Client` no processo (sem rede), usuário do Núcleo com token, "
        f"{REQUESTS} caixas aleatórias de 0,1° × 0,1° centradas em origens de CTRs; página "
        "padrão (100).",
        "",
        "| lista | p50 | p95 | máx | status | consultas (req. mais lenta) | SQL |",
        "|---|---:|---:|---:|---|---:|---:|",
    ]
    p95s = {}
    for case, d in lists.items():
        q = statistics.quantiles(d["times"], n=100, method="inclusive")
        p95s[case] = q[94]
        lines.append(
            f"| `GET {d['url']}?bbox=…` | {ms(q[49])} | {ms(q[94])} | {ms(max(d['times']))} | "
            f"{d['statuses']} | {d['queries']} | {ms(d['sql'])} |"
        )
    lines += [
        "",
        "| pontos críticos | denúncias | mediana | mín | máx | pontos |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for key, (n, times, found) in hot.items():
        lines.append(
            f"| {key} | {n} | {ms(statistics.median(times))} | {ms(min(times))} | "
            f"{ms(max(times))} | {found} |"
        )
    hot100 = statistics.median(hot["100k-all"][1])
    lines += [
        "",
        f"**Metas**: pontos críticos com 100 mil denúncias num município ≤ 1 s — "
        f"{yes(hot100 <= MAX_HOTSPOT_S)} ({ms(hot100)}, todo o período); denúncias com bbox "
        f"p95 ≤ 100 ms — {yes(p95s['reports'] <= MAX_LIST_P95)} ({ms(p95s['reports'])}); "
        f"CTRs com bbox p95 ≤ 100 ms — {yes(p95s['ctrs'] <= MAX_LIST_P95)} "
        f"({ms(p95s['ctrs'])}).",
    ]
    for d in lists.values():
        for i, (seconds, sql, plan) in enumerate(d["plans"], start=1):
            lines += explained_query(
                f"`{d['url']}` — consulta {i} da requisição mais lenta ({ms(seconds)}; "
                f"bbox {d['box']})",
                sql,
                plan,
            )
    return "\n".join(lines)
