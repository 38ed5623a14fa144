"""P3 of "Performance at real sizes": the nearest legal drop-off points with 100k facilities.

The synthetic network has a few thousand facilities; for this benchmark the bench database is
topped up to 100,000 with small square areas (~45 m) at random places inside São Paulo state
(code ``SYN-P3-…``, kinds PEV/ATT/RECYCLING, each with a license, 10 % of them expired), in
one SQL statement, and they are removed at the end (the other benchmarks, e.g. the Núcleo
selectors, see the usual network).

- in the database: the query of pev_network.services.nearest_legal_facilities (the SQL Django
  builds, with the licence filter and the KNN ORDER BY on area::geography), for random points
  (origins of synthetic CTRs), 1 m³ of class A, limit 5, timed from this process
  (execute + fetch; loopback): p50/p95/p99; and its `EXPLAIN (ANALYZE, BUFFERS)`, which must
  show the KNN index scan (pev_facility_area_geog_idx);
- over HTTP: `GET /api/v1/facilities/nearest/` through gunicorn (bench/p2_http.Server, 2
  workers), one client at a time on a keep-alive connection (latency, not throughput), behind
  one proxy (`CTR_TRUSTED_PROXY_COUNT=1`), each request with its own `X-Forwarded-For`, so the
  public rate limit (60/min per client) stays as configured and its cache queries run;
- baseline in the same run: the point-in-polygon lookup (municipality under the point), in the
  database and over HTTP (`/bench/pip/`).

Targets: p99 ≤ 5 ms in the database, ≤ 20 ms over HTTP; the KNN index in the plan.
"""

from __future__ import annotations

import http.client
import statistics
import time
from decimal import Decimal

from .p2_http import PROXY_HEADERS, Server, ms, say
from .timing import Result, Stats

NAME = "p3_nearest"
TITLE = "Áreas legais mais próximas com 100 mil áreas (P3)"
FACILITIES = 100_000
SAMPLES = 1000
HTTP_SAMPLES = 500
MAX_DB_P99 = 0.005
MAX_HTTP_P99 = 0.020
INDEX = "pev_facility_area_geog_idx"
_LAST: dict = {}

INSERT_SQL = """
WITH candidates AS (
    SELECT n, ST_SetSRID(ST_MakePoint(-53.1 + random() * 8.9, -25.3 + random() * 5.5), 4326) p
    FROM generate_series(1, %(candidates)s) n
), placed AS (
    SELECT c.n, c.p, (SELECT mp.municipality_id FROM pev_network_municipalitypiece mp
                      WHERE ST_Intersects(mp.geom, c.p) LIMIT 1) AS municipality_id
    FROM candidates c
), chosen AS (
    SELECT row_number() OVER (ORDER BY n) AS k, p, municipality_id
    FROM placed WHERE municipality_id IS NOT NULL ORDER BY n LIMIT %(wanted)s
), inserted AS (
    INSERT INTO pev_network_receivingfacility
        (code, kind, name, operator, address, area, accepted_classes, municipality_id)
    SELECT 'SYN-P3-' || lpad(k::text, 6, '0'), (ARRAY['PEV', 'ATT', 'RECYCLING'])[1 + k %% 3],
           'Área P3 ' || k, 'Benchmark P3', 'Endereço P3 ' || k,
           ST_Multi(ST_Expand(p, 0.0002)), ARRAY['A', 'B', 'C', 'VOLUMOSO']::varchar[],
           municipality_id
    FROM chosen
    RETURNING id, code
)
INSERT INTO pev_network_facilitylicense
    (number, issuer, valid_from, valid_until, status, status_since, facility_id)
SELECT code, 'Benchmark P3', current_date - 365,
       CASE WHEN id %% 10 = 0 THEN current_date - 30 ELSE current_date + 365 END,
       'ACTIVE', NULL, id
FROM inserted
"""


def add_facilities() -> int:
    from django.db import connection, transaction

    remove_facilities()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pev_network_receivingfacility")
        existing = cursor.fetchone()[0]
    wanted = max(0, FACILITIES - existing)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT setseed(0.42)")
        cursor.execute(INSERT_SQL, {"candidates": wanted * 3, "wanted": wanted})
    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE) pev_network_receivingfacility")
        cursor.execute("VACUUM (ANALYZE) pev_network_facilitylicense")
        cursor.execute("SELECT count(*) FROM pev_network_receivingfacility")
        return cursor.fetchone()[0]


def remove_facilities() -> int:
    from django.db import connection, transaction

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM pev_network_facilitylicense l USING pev_network_receivingfacility f "
            "WHERE f.id = l.facility_id AND f.code LIKE 'SYN-P3-%%'"
        )
        cursor.execute("DELETE FROM pev_network_receivingfacility WHERE code LIKE 'SYN-P3-%%'")
        removed = cursor.rowcount
    if removed:
        with connection.cursor() as cursor:
            cursor.execute("VACUUM (ANALYZE) pev_network_receivingfacility")
            cursor.execute("VACUUM (ANALYZE) pev_network_facilitylicense")
    return removed


def quantiles(times: list[float]) -> tuple[float, float, float]:
    q = statistics.quantiles(times, n=100, method="inclusive")
    return q[49], q[94], q[98]


def setup() -> dict:
    return {}


def run(state: dict, size: int, reports: int, runs: int) -> list[Result]:
    from django.contrib.gis.geos import Point
    from django.db import connection

    from pev_network import services

    say(f"Completando a rede até {FACILITIES} áreas (SYN-P3)…")
    started = time.perf_counter()
    total = add_facilities()
    say(f"{total} áreas no banco ({time.perf_counter() - started:.1f} s).")
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT ST_X(origin), ST_Y(origin) FROM ctr_ctr TABLESAMPLE SYSTEM (1) "
                "REPEATABLE (3) LIMIT %s",
                [SAMPLES],
            )
            points = cursor.fetchall()
        volume = Decimal("1")

        def nearest_sql(x, y):
            qs = services.legal_destinations_by_distance(Point(x, y, srid=4326), volume, "A")
            return qs[:5].query.sql_with_params()

        pip_sql = (
            "SELECT municipality_id FROM pev_network_municipalitypiece "
            "WHERE ST_Intersects(geom, ST_SetSRID(ST_MakePoint(%s, %s), 4326)) "
            "ORDER BY municipality_id LIMIT 1"
        )
        db_knn, db_pip = [], []
        with connection.cursor() as cursor:
            for x, y in points[:50]:  # warm-up
                cursor.execute(*nearest_sql(x, y))
                cursor.fetchall()
            for x, y in points:
                sql, params = nearest_sql(x, y)
                started = time.perf_counter()
                cursor.execute(sql, params)
                cursor.fetchall()
                db_knn.append(time.perf_counter() - started)
                started = time.perf_counter()
                cursor.execute(pip_sql, [x, y])
                cursor.fetchall()
                db_pip.append(time.perf_counter() - started)
            x, y = points[0]
            sql, params = nearest_sql(x, y)
            cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params)
            plan = "\n".join(r[0] for r in cursor.fetchall())
            shown = cursor.mogrify(sql, params).decode()
        say(f"  banco: KNN p99 {ms(quantiles(db_knn)[2])}, base p99 {ms(quantiles(db_pip)[2])}")

        http_knn, http_pip, errors, body_bytes = [], [], 0, 0
        # Behind one proxy (as in production), each request from its own client address:
        # the public limit (60/min per client) stays as configured, its cache queries run.
        extra_env = {"CTR_TRUSTED_PROXY_COUNT": "1"}
        with Server(extra_env) as server:
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
            sample = points[:HTTP_SAMPLES]
            n = 0
            for phase in ("warm", "measure"):
                for x, y in sample[:50] if phase == "warm" else sample:
                    for path, sink in (
                        (f"/api/v1/facilities/nearest/?lon={x}&lat={y}&volume_m3=1"
                         "&waste_class=A&limit=5", http_knn),
                        (f"/bench/pip/?lon={x}&lat={y}", http_pip),
                    ):  # fmt: skip
                        n += 1
                        client = f"10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}"
                        headers = {**PROXY_HEADERS, "X-Forwarded-For": client}
                        started = time.perf_counter()
                        conn.request("GET", path, headers=headers)
                        response = conn.getresponse()
                        body = response.read()
                        took = time.perf_counter() - started
                        if phase == "measure":
                            sink.append(took)
                            if response.status != 200:
                                errors += 1
                            if sink is http_knn:
                                body_bytes = max(body_bytes, len(body))
            conn.close()
            command = server.command
        say(f"  HTTP: KNN p99 {ms(quantiles(http_knn)[2])}, base p99 {ms(quantiles(http_pip)[2])}")
    finally:
        removed = remove_facilities()
        say(f"{removed} áreas SYN-P3 removidas.")

    _LAST.update(
        total=total, db_knn=db_knn, db_pip=db_pip, http_knn=http_knn, http_pip=http_pip,
        errors=errors, plan=plan, sql=shown, command=command,
    )  # fmt: skip

    def result(case, label, url, times, baseline, nbytes, queries):
        stats = Stats(statistics.median(times), min(times), max(times), len(times))
        return Result(
            NAME, case, label, size, reports, url, nbytes, stats, queries, 0.0,
            baseline=baseline,
        )  # fmt: skip

    db_base = statistics.median(db_pip)
    http_base = statistics.median(http_pip)
    results = [
        result("db", "P3 no banco: 5 áreas legais mais próximas (SQL do serviço)",
               "(SQL, sem HTTP)", db_knn, False, 0, 1),
        result("db-pip", "Base no banco: ponto-em-polígono (município)", "(SQL, sem HTTP)",
               db_pip, True, 0, 1),
        result("http", "P3 por HTTP (gunicorn, 1 cliente)",
               "/api/v1/facilities/nearest/?lon=…&lat=…&volume_m3=1&waste_class=A&limit=5",
               http_knn, False, body_bytes, 0),
        result("http-pip", "Base por HTTP: ponto-em-polígono (gunicorn, 1 cliente)",
               "/bench/pip/?lon=…&lat=…", http_pip, True, 0, 0),
    ]  # fmt: skip
    results[0].ratio = results[0].stats.median / db_base
    results[1].ratio = 1.0
    results[2].ratio = results[2].stats.median / http_base
    results[3].ratio = 1.0
    return results


def profile(state: dict, results: list[Result]) -> list:
    return []


def verdict(results: list[Result]) -> str:
    if not _LAST:
        return ""
    d = _LAST
    rows = [
        ("P3 no banco", d["db_knn"]),
        ("base no banco (ponto-em-polígono)", d["db_pip"]),
        ("P3 por HTTP", d["http_knn"]),
        ("base por HTTP", d["http_pip"]),
    ]
    lines = [
        f"{d['total']} áreas de recebimento no banco durante a medição (a rede sintética mais "
        "as áreas SYN-P3, removidas depois). Pontos: origens de CTRs sintéticos; 1 m³ de classe "
        f"A, 5 áreas. No banco: {len(d['db_knn'])} consultas, tempo no cliente (execute + fetch "
        f"pelo loopback). Por HTTP: `{d['command']}`, {len(d['http_knn'])} requisições em "
        "sequência numa conexão keep-alive (`http.client`), atrás de um proxy "
        "(`CTR_TRUSTED_PROXY_COUNT=1`), cada requisição com seu próprio `X-Forwarded-For`: o "
        "limite público (60/min por cliente) fica como configurado e suas consultas ao cache "
        "(leitura, contagem, atualização e commit) entram no tempo. "
        f"Erros HTTP: {d['errors']}.",
        "",
        "| | p50 | p95 | p99 | máx |",
        "|---|---:|---:|---:|---:|",
    ]
    for label, times in rows:
        p50, p95, p99 = quantiles(times)
        lines.append(f"| {label} | {ms(p50)} | {ms(p95)} | {ms(p99)} | {ms(max(times))} |")
    db99, http99 = quantiles(d["db_knn"])[2], quantiles(d["http_knn"])[2]
    used = f"Index Scan using {INDEX}" in d["plan"]

    def yes(flag: bool) -> str:
        return "atingida" if flag else "**NÃO atingida**"

    lines += [
        "",
        f"**Metas**: p99 no banco ≤ 5 ms — {yes(db99 <= MAX_DB_P99)} ({ms(db99)}); p99 por "
        f"HTTP ≤ 20 ms — {yes(http99 <= MAX_HTTP_P99)} ({ms(http99)}); índice KNN "
        f"(`{INDEX}`) no plano — {yes(used)}.",
        "",
        "```sql",
        d["sql"],
        "```",
        "",
        "`EXPLAIN (ANALYZE, BUFFERS)`, cache aquecido:",
        "",
        "```",
        d["plan"],
        "```",
    ]
    return "\n".join(lines)
