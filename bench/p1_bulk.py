"""P1 of "Performance at real sizes": `manage.py import_ctrs FILE.csv` (the service of the web
CSV upload) checks every rule and stores 100k CTRs, set-based (ctr/bulk/).

In the same run, on the same data:

- (a) the floor: geopandas `sjoin` of the file's origins against the municipality pieces and
  of its discharge points against the facility polygons, in memory (polygons loaded and
  indexed beforehand; only the two joins are timed);
- (b) the per-CTR path (ctr.services.issue for each row, as the API and `--per-row` do) on
  a sample of the file's rows;
- (P1) the bulk import of the whole file, in this process (`call_command`), with the time of
  each step; then again as a separate `manage.py import_ctrs` process, for its peak memory
  (VmHWM), at 100k rows and at 1M rows (the file is streamed: the peak must not grow).

Targets: P1 ≤ 20 × (a); P1 per CTR ≥ 30 × faster than (b); peak memory < 500 MB at 1M rows.

It runs on a database of its own (``ctr_bench_p1`` beside ``ctr_bench``, or
``BENCH_P1_DATABASE_URL``): the synthetic network of the 645 municipalities of São Paulo and
100k synthetic CTRs (synthetic/generator.py), whose origins, destinations, generators and loads
become the rows of the CSV, issued by one transporter of the benchmark's own (``BENCH-P1``),
about 5% of them broken on purpose. The imported CTRs are removed after each measurement.

`python -m bench.p1_bulk [--rows 100000] [--memory-rows 1000000] [--sample 500]`; the
figures go to their own section of docs/performance.md (between the ``p1:`` markers; the
rest of the file is left as it is).
"""

from __future__ import annotations

import argparse
import io
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

NAME = "p1_bulk"
TITLE = "Importação de CTRs por CSV em lote (P1)"
BENCH_DB = "ctr_bench_p1"
USERNAME = "bench-p1"
REGISTRATION = "BENCH-P1"
DOCUMENT = "11444777000161"  # the bench transporter (its CTRs, found by it)
SOURCE_CTRS = 100_000
DEFAULT_ROWS = 100_000
DEFAULT_MEMORY_ROWS = 1_000_000
DEFAULT_SAMPLE = 500
DEFAULT_SEED = 42
# The issue's targets.
MAX_FLOOR_RATIO = 20
MIN_SPEEDUP = 30
MAX_PEAK_MB = 500

ROOT = Path(__file__).resolve().parent.parent
BEGIN = "<!-- p1:begin — gerado por `python -m bench.p1_bulk`; não edite entre estes marcadores -->"
END = "<!-- p1:end -->"


def say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


# --- the database ------------------------------------------------------------------------------


def prepare(seed: int, generate: bool = True) -> object:
    """The synthetic network and CTRs (once, unless `generate` is off: then the synthetic CTRs
    already there are the source), and the benchmark's transporter and user."""
    from django.db import connection

    from bench.fleet import bench_transporter
    from synthetic import generator as synthetic

    created = synthetic.ensure_municipalities(say)
    if created:
        say(f"{created} municípios carregados.")
    existing = synthetic.counts()["CTRs"]
    if not generate and not existing:
        raise RuntimeError("Não há CTRs sintéticos no banco para servirem de origem do arquivo.")
    if generate and existing < SOURCE_CTRS:
        say(f"Gerando a rede sintética e {SOURCE_CTRS} CTRs (semente {seed})…")
        synthetic.reset()
        synthetic.generate(ctrs=SOURCE_CTRS, reports=0, seed=seed, progress=None)
    transporter, _user = bench_transporter(
        REGISTRATION,
        "Caçambas Benchmark Ltda.",
        DOCUMENT,
        ("BPA1B11", "BPA2B22"),
        (("P1-05", "5"), ("P1-10", "10"), ("P1-12", "12")),
        USERNAME,
    )
    cleanup()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE) ctr_ctr")
    return transporter


# --- the CSV file --------------------------------------------------------------------------

SOURCE_SQL = """
CREATE TEMP TABLE p1_source AS
SELECT row_number() OVER (ORDER BY c.id) AS k, c.transport_date, g.name AS generator_name,
       g.document, w.address, w.neighbourhood, ST_X(c.origin) AS ox, ST_Y(c.origin) AS oy,
       ST_X(c.destination) AS dx, ST_Y(c.destination) AS dy, f.kind, c.total_volume_m3 AS total,
       (SELECT string_agg(x.waste_class || '=' || replace(trim_scale(x.volume_m3)::text, '.', ','),
                          '; ' ORDER BY x.id)
        FROM ctr_ctrwaste x WHERE x.ctr_id = c.id) AS waste
FROM ctr_ctr c
JOIN ctr_transporterlicence t ON t.transporter_id = c.transporter_id AND t.number LIKE 'SYN-T-%%'
JOIN ctr_generator g ON g.id = c.generator_id
JOIN ctr_worksite w ON w.id = c.worksite_id
JOIN pev_network_receivingfacility f ON f.id = c.destination_facility_id
"""

# Row i copies synthetic CTR (i mod n) + 1; bucket b (a fixed scramble of i) breaks 5% of
# them: an unknown plate, an origin in the sea, a discharge point 1 km off its facility,
# prohibited waste, 20 m³ in one line (over any skip, and a large volume at a PEV).
CSV_SQL = """
COPY (
    SELECT to_char(s.transport_date, 'YYYY-MM-DD') AS transport_date,
           CASE WHEN b < 10 THEN 'ZZZ9Z99' WHEN i %% 2 = 0 THEN 'BPA1B11'
                ELSE 'BPA-2B22' END AS vehicle_plate,
           CASE WHEN s.kind = 'PEV' THEN '' WHEN s.total > 10 THEN 'P1-12'
                WHEN s.total > 5 THEN 'P1-10' ELSE 'P1-05' END AS equipment_code,
           s.generator_name, s.document AS generator_document, s.address AS worksite_address,
           s.neighbourhood AS worksite_neighbourhood,
           replace((CASE WHEN b BETWEEN 10 AND 19 THEN -30.0 ELSE s.ox END)::text, '.', ',')
               AS origin_lon,
           replace(s.oy::text, '.', ',') AS origin_lat,
           replace(s.dx::text, '.', ',') AS destination_lon,
           replace((CASE WHEN b BETWEEN 20 AND 29 THEN s.dy + 0.01 ELSE s.dy END)::text,
                   '.', ',') AS destination_lat,
           '' AS destination_facility,
           CASE WHEN b BETWEEN 30 AND 39 THEN s.waste || '; DOMICILIAR=0,5'
                WHEN b BETWEEN 40 AND 49 THEN 'A=20' ELSE s.waste END AS waste,
           'carga da obra' AS description
    FROM (
        SELECT n * %(every)s AS i, (n::bigint * %(every)s * 7919 + 13) %% 1000 AS b
        FROM generate_series(0, %(rows)s - 1) g(n)
    ) r
    JOIN p1_source s ON s.k = r.i %% (SELECT count(*) FROM p1_source) + 1
    ORDER BY r.i
) TO STDOUT WITH (FORMAT csv, HEADER, DELIMITER ';')
"""


def write_csv(path: Path, rows: int, every: int = 1) -> int:
    """The file of `rows` rows (every `every`-th of the big one, for a sample), streamed from
    the database to disk; its size in bytes."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS p1_source")
        cursor.execute(SOURCE_SQL)
        statement = cursor.mogrify(CSV_SQL, {"rows": rows, "every": every}).decode()
        with open(path, "wb") as out:
            cursor.copy_expert(statement, out)
        cursor.execute("DROP TABLE p1_source")
    return path.stat().st_size


# --- (a) the floor: geopandas sjoin in memory --------------------------------------------------


def floor_sjoin(path: Path, runs: int) -> tuple[float, list[float], dict]:
    """Median seconds of the two joins (origins × municipality pieces, discharge points ×
    facility polygons), the polygons and their STRtrees built beforehand."""
    import geopandas
    import pandas
    import shapely
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT municipality_id, ST_AsBinary(geom) FROM pev_network_municipalitypiece"
        )
        pieces = cursor.fetchall()
        cursor.execute("SELECT id, ST_AsBinary(area) FROM pev_network_receivingfacility")
        facilities = cursor.fetchall()
    piece_df = geopandas.GeoDataFrame(
        {"municipality_id": [p[0] for p in pieces]},
        geometry=shapely.from_wkb([bytes(p[1]) for p in pieces]),
        crs=4326,
    )
    facility_df = geopandas.GeoDataFrame(
        {"facility_id": [f[0] for f in facilities]},
        geometry=shapely.from_wkb([bytes(f[1]) for f in facilities]),
        crs=4326,
    )
    piece_df.sindex, facility_df.sindex  # noqa: B018 - build the trees before timing
    frame = pandas.read_csv(
        path,
        sep=";",
        decimal=",",
        usecols=["origin_lon", "origin_lat", "destination_lon", "destination_lat"],
    )
    origins = geopandas.GeoDataFrame(
        geometry=geopandas.points_from_xy(frame.origin_lon, frame.origin_lat), crs=4326
    )
    destinations = geopandas.GeoDataFrame(
        geometry=geopandas.points_from_xy(frame.destination_lon, frame.destination_lat),
        crs=4326,
    )
    times, matched = [], {}
    for _ in range(runs + 1):  # the first is a warm-up
        started = time.perf_counter()
        a = geopandas.sjoin(origins, piece_df, how="left", predicate="intersects")
        b = geopandas.sjoin(destinations, facility_df, how="left", predicate="intersects")
        times.append(time.perf_counter() - started)
        matched = {
            "origens num município": int(a["municipality_id"].notna().sum()),
            "descargas numa área": int(b["facility_id"].notna().sum()),
        }
    times = times[1:]
    return statistics.median(times), times, matched


# --- (b) and P1 ---------------------------------------------------------------------------------


class _Null(io.TextIOBase):
    def write(self, text: str) -> int:
        return len(text)


def per_row(path: Path, transporter, user) -> tuple[float, int, int]:
    """Seconds for the sample through ctr.services (parse, check, issue per row), rows, issued."""
    from ctr.bulk import csv_import

    data = path.read_bytes()
    started = time.perf_counter()
    report = csv_import.import_ctrs(data, transporter, user, per_row=True)
    seconds = time.perf_counter() - started
    return seconds, len(report.rows), len(report.issued)


def bulk_in_process(path: Path, transporter, user, dry_run: bool = False) -> tuple[float, object]:
    """Seconds for the whole file through the command's service (streamed), and its totals."""
    from ctr.bulk import csv_import
    from ctr.bulk import importer as bulk

    importer = bulk.BulkImporter(transporter, user, dry_run=dry_run)
    started = time.perf_counter()
    with csv_import.open_stream(path) as stream:
        importer.run(stream.rows(), lambda results: None)
    return time.perf_counter() - started, importer.totals


def command_in_process(path: Path) -> float:
    """`manage.py import_ctrs FILE --user bench-p1` in this process, its report discarded."""
    from django.core.management import CommandError, call_command

    started = time.perf_counter()
    try:
        call_command("import_ctrs", str(path), user=USERNAME, stdout=_Null(), stderr=_Null())
    except CommandError as error:
        if error.returncode != 2:  # 2: some rows refused, as planned
            raise
    return time.perf_counter() - started


# The child reports its own high-water mark (VmHWM of its address space, fresh at exec): the
# ru_maxrss that wait4 returns would include this process's size at the fork.
MEMORY_WRAPPER = """
import os, sys
sys.path.insert(0, os.getcwd())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
from django.core.management import execute_from_command_line
code = 0
try:
    execute_from_command_line(["manage.py", "import_ctrs", *sys.argv[2:]])
except SystemExit as exit:
    code = exit.code or 0
with open("/proc/self/status") as status, open(sys.argv[1], "w") as out:
    out.write(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
sys.exit(code)
"""


def command_process(path: Path, url: str) -> tuple[float, float, int]:
    """`manage.py import_ctrs` as its own process: wall seconds, peak RSS in MB, exit code."""
    env = {**os.environ, "DATABASE_URL": url, "DJANGO_DEBUG": "false"}
    # --skip-checks: the system checks import every URLconf (folium, geopandas…), 120 MB that
    # are not the importer's.
    arguments = [str(path), "--user", USERNAME, "--skip-checks"]
    with (
        open(os.devnull, "wb") as devnull,
        tempfile.TemporaryFile() as errors,
        tempfile.NamedTemporaryFile("r") as peak,
    ):
        started = time.perf_counter()
        code = subprocess.call(
            [sys.executable, "-c", MEMORY_WRAPPER, peak.name, *arguments],
            cwd=ROOT,
            env=env,
            stdout=devnull,
            stderr=errors,
        )
        seconds = time.perf_counter() - started
        if code not in (0, 2):  # 2: some rows refused, as planned
            errors.seek(0)
            raise RuntimeError(f"import_ctrs terminou com o código {code}: {errors.read()!r}")
        peak_kib = int(peak.read().strip())
    return seconds, peak_kib / 1024, code


def cleanup() -> int:
    """Remove the benchmark transporter's CTRs (events are append-only: the others are kept
    aside, the table truncated, and put back), and give their numbers back."""
    from django.db import connection, transaction

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(
            "CREATE TEMP TABLE p1_ids ON COMMIT DROP AS SELECT c.id FROM ctr_ctr c "
            "JOIN ctr_transporter t ON t.id = c.transporter_id "
            "WHERE t.document = %s",
            [DOCUMENT],
        )
        cursor.execute("SELECT count(*) FROM p1_ids")
        count = cursor.fetchone()[0]
        if not count:
            return 0
        cursor.execute("CREATE INDEX ON p1_ids (id)")
        cursor.execute("ANALYZE p1_ids")
        cursor.execute(
            "CREATE TEMP TABLE p1_kept ON COMMIT DROP AS SELECT e.* FROM ctr_ctrevent e "
            "WHERE NOT EXISTS (SELECT 1 FROM p1_ids i WHERE i.id = e.ctr_id)"
        )
        cursor.execute("TRUNCATE ctr_ctrevent")
        cursor.execute("INSERT INTO ctr_ctrevent SELECT * FROM p1_kept ORDER BY id")
        cursor.execute("DELETE FROM ctr_ctrwaste w USING p1_ids i WHERE w.ctr_id = i.id")
        cursor.execute("DELETE FROM ctr_ctr c USING p1_ids i WHERE c.id = i.id")
        cursor.execute(
            "UPDATE ctr_numbersequence ns SET last_value = coalesce((SELECT max(c.sequence) "
            "FROM ctr_ctr c WHERE c.municipality_id = ns.municipality_id "
            "AND c.year = ns.year), 0)"
        )
    with connection.cursor() as cursor:
        for table in ("ctr_ctr", "ctr_ctrwaste", "ctr_ctrevent"):
            cursor.execute(f"VACUUM (ANALYZE) {table}")
    return count


# --- EXPLAIN ANALYZE of the set-based steps, on one chunk -------------------------------------


RESOLVE_LABELS = {
    "CREATE TEMP TABLE ctr_bulk_place": ("origem → município (partes, ST_Intersects)", True),
    "CREATE TEMP TABLE ctr_bulk_near": ("descarga → áreas (ST_DWithin em geography)", True),
    "CREATE TEMP TABLE ctr_bulk_candidate": ("candidatas: licença na data, distância", False),
    "CREATE TEMP TABLE ctr_bulk_fact": ("fatos: veículo, equipamento, área escolhida", False),
}
ISSUE_LABELS = {
    "INSERT INTO ctr_ctr (id,": ("INSERT … SELECT em ctr_ctr (chaves estrangeiras na hora)", True),
    "INSERT INTO ctr_ctrwaste": ("INSERT … SELECT em ctr_ctrwaste", False),
    "INSERT INTO ctr_ctrevent": ("INSERT … SELECT em ctr_ctrevent", False),
    "CREATE TEMP TABLE ctr_bulk_numbered": ("numeração e dados de cada CTR", False),
}


def _label(statement: str, labels: dict) -> tuple[str, bool] | None:
    text = " ".join(statement.split())
    for head, label in labels.items():
        if head in text:
            return label
    return None


def explain_chunk(path: Path, transporter, user, rows: int) -> list[tuple[str, float, str, bool]]:
    """(step, seconds, plan, show) of the statements of one chunk of `rows` rows: EXPLAIN
    (ANALYZE, BUFFERS), the issue rolled back, its foreign keys checked at once so that the
    plan shows what their triggers cost."""
    import itertools

    from django.db import connection, transaction
    from django.utils import timezone

    from ctr.bulk import csv_import
    from ctr.bulk import importer as bulk
    from ctr.bulk import sql as bulk_sql
    from ctr.models import CTRStatus

    plans = []

    def explain(cursor, label, statement, params):
        started = time.perf_counter()
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + statement, params)
        plan = "\n".join(r[0] for r in cursor.fetchall())
        plans.append((label[0], time.perf_counter() - started, plan, label[1]))

    importer = bulk.BulkImporter(transporter, user)
    with csv_import.open_stream(path) as stream, connection.cursor() as cursor:
        previous = importer.open(cursor)
        chunk = bulk._Chunk()
        for line, row in itertools.islice(stream.rows(), rows):
            chunk.add(line, row)
        started = time.perf_counter()
        bulk.stage(cursor, chunk)
        plans.append(
            (
                "COPY e índices GiST da tabela de preparação",
                time.perf_counter() - started,
                "",
                False,
            )
        )
        params = importer.params
        for statement in bulk_sql.RESOLVE_SQL:
            label = _label(statement, RESOLVE_LABELS)
            if label:
                explain(cursor, label, statement, params)
            else:
                cursor.execute(statement, params)
        for code, statement in bulk_sql.CHECK_SQL:
            if code:
                explain(cursor, (f"regra {code}", False), statement, params)
            else:
                cursor.execute(statement, params)
        issue_params = {
            **params,
            "at": timezone.now(),
            "user": user.pk,
            "status": CTRStatus.ISSUED.value,
        }
        with transaction.atomic():
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            for statement in bulk_sql.ISSUE_SQL:
                label = _label(statement, ISSUE_LABELS)
                if label:
                    explain(cursor, label, statement, issue_params)
                else:
                    cursor.execute(statement, issue_params)
            transaction.set_rollback(True)
        importer.close(cursor, previous)
    return plans


# --- the report --------------------------------------------------------------------------------


@dataclass
class Figures:
    rows: int
    file_bytes: int
    floor_seconds: float
    floor_runs: list[float]
    floor_matched: dict
    sample_rows: int
    sample_issued: int
    per_row_seconds: float
    bulk_seconds: float
    bulk_runs: list[float]
    service_seconds: float
    dry_run_seconds: float
    steps: dict[str, float]
    dry_run_steps: dict[str, float]
    read: int
    issued: int
    refused: int
    memory: list[tuple[int, int, float, float]] = field(default_factory=list)
    plans: list[tuple[str, float, str, bool]] = field(default_factory=list)
    machine: dict[str, str] = field(default_factory=dict)
    command: str = ""
    when: str = ""

    @property
    def floor_ratio(self) -> float:
        return self.bulk_seconds / self.floor_seconds

    @property
    def per_ctr_bulk(self) -> float:
        return self.bulk_seconds / self.rows

    @property
    def per_ctr_row(self) -> float:
        return self.per_row_seconds / self.sample_rows

    @property
    def speedup(self) -> float:
        return self.per_ctr_row / self.per_ctr_bulk


def _ms(seconds: float) -> str:
    from .report import thousands

    return f"{thousands(seconds * 1000, 0)} ms" if seconds < 10 else f"{thousands(seconds, 1)} s"


def render(fig: Figures) -> str:
    from .report import thousands

    ok = {True: "atingida", False: "**NÃO atingida**"}
    lines = [
        f"## {TITLE}",
        "",
        f"`manage.py import_ctrs ARQUIVO.csv` (o serviço da página de importação) com "
        f"{thousands(fig.rows)} linhas, todas as regras do catálogo, gravando os CTRs "
        f"({thousands(fig.issued)} emitidos, {thousands(fig.refused)} recusados de propósito). "
        f"Banco próprio (`{BENCH_DB}`): a rede sintética dos 645 municípios de SP "
        "(1.398 partes de limites, 2.864 áreas) e 100 mil CTRs sintéticos, cujas origens, "
        "destinos, geradores e cargas viram as linhas do arquivo.",
        "",
        "| | |",
        "|---|---|",
    ]
    lines += [f"| {k} | {v} |" for k, v in fig.machine.items()]
    lines += [
        f"| data | {fig.when} |",
        f"| comando | `{fig.command}` |",
        f"| arquivo | {thousands(fig.rows)} linhas, {thousands(fig.file_bytes / 1e6, 1)} MB |",
        "",
        "| medição | tempo | por CTR | razão |",
        "|---|---:|---:|---:|",
        f"| (a) piso: `geopandas.sjoin` das origens × partes dos municípios e das descargas × "
        f"áreas, em memória (só as junções; mediana de {len(fig.floor_runs)}) "
        f"| {_ms(fig.floor_seconds)} | {thousands(fig.floor_seconds / fig.rows * 1e6, 1)} µs "
        "| 1 |",
        f"| (b) caminho por CTR (`services.issue` linha a linha, `--per-row`), amostra de "
        f"{thousands(fig.sample_rows)} linhas ({thousands(fig.sample_issued)} emitidas) "
        f"| {_ms(fig.per_row_seconds)} | {thousands(fig.per_ctr_row * 1000, 2)} ms | — |",
        f"| **P1**: `manage.py import_ctrs` do arquivo inteiro, neste processo "
        f"(`call_command`, relatório de cada linha descartado; mediana de {len(fig.bulk_runs)}) "
        f"| {_ms(fig.bulk_seconds)} | {thousands(fig.per_ctr_bulk * 1e6, 1)} µs "
        f"| {thousands(fig.floor_ratio, 1)} × (a) |",
        f"| P1 pelo serviço (`ctr.bulk`, sem o relatório) "
        f"| {_ms(fig.service_seconds)} | {thousands(fig.service_seconds / fig.rows * 1e6, 1)} µs "
        f"| {thousands(fig.service_seconds / fig.floor_seconds, 1)} × (a) |",
        f"| P1 só conferindo (`--dry-run`: leitura, junções e regras, nada gravado) "
        f"| {_ms(fig.dry_run_seconds)} | {thousands(fig.dry_run_seconds / fig.rows * 1e6, 1)} µs "
        f"| {thousands(fig.dry_run_seconds / fig.floor_seconds, 1)} × (a) |",
        "",
        f"**Metas**: P1 ≤ {MAX_FLOOR_RATIO} × (a) — {ok[fig.floor_ratio <= MAX_FLOOR_RATIO]} "
        f"({thousands(fig.floor_ratio, 1)} ×); P1 por CTR ≥ {MIN_SPEEDUP} × mais rápido que (b) — "
        f"{ok[fig.speedup >= MIN_SPEEDUP]} ({thousands(fig.speedup, 0)} ×)",
    ]
    if fig.memory:
        worst = max(m[2] for m in fig.memory)
        largest = max(m[0] for m in fig.memory)
        verdict = ok[worst < MAX_PEAK_MB] if largest >= 1_000_000 else "não medida com 1 milhão"
        lines[-1] += (
            f"; memória de pico abaixo de {MAX_PEAK_MB} MB com 1 milhão de linhas — {verdict} "
            f"(pico {thousands(worst, 0)} MB com {thousands(largest)} linhas)."
        )
        lines += [
            "",
            "Memória: `manage.py import_ctrs --skip-checks` como processo próprio (`VmHWM`, "
            "o pico do conjunto residente, com o Django e o psycopg2; sem `--skip-checks` as "
            "verificações do Django importam todas as URLs, folium e geopandas, e o piso sobe "
            "cerca de 120 MB), lotes de até " + thousands(bulk_chunk()) + " linhas (o primeiro "
            "de " + thousands(first_chunk()) + ", cada seguinte o dobro; um lote sendo lido "
            "enquanto outro está no banco):",
            "",
            "| linhas | arquivo | pico de memória | tempo do processo |",
            "|---:|---:|---:|---:|",
        ]
        for rows, size, peak, seconds in fig.memory:
            lines.append(
                f"| {thousands(rows)} | {thousands(size / 1e6, 1)} MB | "
                f"{thousands(peak, 0)} MB | {_ms(seconds)} |"
            )
    else:
        lines[-1] += "."
    parallel = parallel_step()
    steps = {k: v for k, v in fig.steps.items() if k != parallel}
    total = sum(steps.values())
    lines += [
        "",
        f"Onde vai o tempo de P1 ({_ms(total)} somando as etapas da linha principal, última "
        f"medição de {_ms(fig.service_seconds)}; a leitura e a análise das linhas correm numa "
        "linha de execução própria, o próximo lote enquanto o banco trabalha neste, e só a "
        "espera por elas conta no total):",
        "",
        "| etapa | tempo | % |",
        "|---|---:|---:|",
    ]
    for step, seconds in sorted(steps.items(), key=lambda s: -s[1]):
        lines.append(f"| {step} | {_ms(seconds)} | {thousands(100 * seconds / total, 0)} |")
    if parallel in fig.steps:
        lines.append(f"| {parallel} | {_ms(fig.steps[parallel])} | — |")
    if fig.plans:
        lines += [
            "",
            f"Um lote de {thousands(bulk_chunk())} linhas, comando a comando, com `EXPLAIN "
            "(ANALYZE, BUFFERS)` (a emissão desfeita ao final; nela as chaves estrangeiras "
            "verificadas na hora, para o plano mostrar o custo dos seus gatilhos, que na "
            "importação correm no COMMIT: um por chave estrangeira e por CTR, custo que a "
            "importação não tem como evitar sem abrir mão das chaves):",
            "",
            "| comando | tempo |",
            "|---|---:|",
        ]
        lines += [f"| {label} | {_ms(seconds)} |" for label, seconds, _, _ in fig.plans]
        for label, seconds, plan, show in fig.plans:
            if show and plan:
                lines += ["", f"**{label}** ({_ms(seconds)})", "", "```", plan, "```"]
    return "\n".join(lines)


def parallel_step() -> str:
    from ctr.bulk import importer as bulk

    return bulk.PARSE_STEP


def first_chunk() -> int:
    from ctr.bulk import importer as bulk

    return min(bulk.FIRST_CHUNK_ROWS, bulk.CHUNK_ROWS)


def bulk_chunk() -> int:
    from ctr.bulk import importer as bulk

    return bulk.CHUNK_ROWS


# --- the run ------------------------------------------------------------------------------------


def measure_all(
    rows: int = DEFAULT_ROWS,
    sample: int = DEFAULT_SAMPLE,
    runs: int = 3,
    memory_rows: list[int] | None = None,
    seed: int = DEFAULT_SEED,
    url: str = "",
    workdir: Path | None = None,
    explain: bool = True,
    generate: bool = True,
) -> Figures:
    """Every figure of the section; Django must be set up on the benchmark's database."""
    from django.contrib.auth import get_user_model

    if workdir is None:  # the files go away with the run
        with tempfile.TemporaryDirectory(prefix="p1-bulk-") as scratch:
            return measure_all(
                rows, sample, runs, memory_rows, seed, url, Path(scratch), explain, generate
            )
    transporter = prepare(seed, generate)
    user = get_user_model().objects.get(username=USERNAME)
    path = workdir / f"ctrs-{rows}.csv"
    say(f"Gerando {path} ({rows} linhas)…")
    size = write_csv(path, rows)

    say("(a) geopandas sjoin em memória…")
    floor, floor_runs, matched = floor_sjoin(path, runs=max(runs, 3))
    say(f"  (a) {floor:.3f} s {matched}")

    sample_path = workdir / f"amostra-{sample}.csv"
    # A stride prime to 1000, so that the sample has the file's share of broken rows.
    every = max(rows // sample, 1)
    while every > 1 and math.gcd(every, 1000) != 1:
        every -= 1
    write_csv(sample_path, sample, every=every)
    say(f"(b) caminho por CTR em {sample} linhas…")
    per_row_seconds, sample_rows, sample_issued = per_row(sample_path, transporter, user)
    cleanup()
    say(f"  (b) {per_row_seconds:.2f} s, {per_row_seconds / sample_rows * 1000:.2f} ms por CTR")

    bulk_runs = []
    for i in range(runs):
        say(f"P1 {i + 1}/{runs}: manage.py import_ctrs com {rows} linhas (neste processo)…")
        seconds = command_in_process(path)
        bulk_runs.append(seconds)
        say(f"  P1 {seconds:.2f} s")
        cleanup()
    say("P1 pelo serviço, com o tempo de cada etapa…")
    service_seconds, totals = bulk_in_process(path, transporter, user)
    cleanup()
    say(f"  {service_seconds:.2f} s ({totals.issued} emitidos, {totals.refused} recusados)")
    say("P1 só conferindo (--dry-run)…")
    dry_seconds, dry_totals = bulk_in_process(path, transporter, user, dry_run=True)
    say(f"  {dry_seconds:.2f} s")

    memory = []
    for n in memory_rows or []:
        big = path if n == rows else workdir / f"ctrs-{n}.csv"
        big_size = size if n == rows else write_csv(big, n)
        say(f"Memória: manage.py import_ctrs com {n} linhas…")
        seconds, peak, _ = command_process(big, url)
        say(f"  pico {peak:.0f} MB em {seconds:.1f} s")
        memory.append((n, big_size, peak, seconds))
        cleanup()
        if big != path:
            big.unlink()

    plans = explain_chunk(path, transporter, user, bulk_chunk()) if explain else []
    return Figures(
        rows=rows,
        file_bytes=size,
        floor_seconds=floor,
        floor_runs=floor_runs,
        floor_matched=matched,
        sample_rows=sample_rows,
        sample_issued=sample_issued,
        per_row_seconds=per_row_seconds,
        bulk_seconds=statistics.median(bulk_runs),
        bulk_runs=bulk_runs,
        service_seconds=service_seconds,
        dry_run_seconds=dry_seconds,
        steps=dict(totals.seconds),
        dry_run_steps=dict(dry_totals.seconds),
        read=totals.read,
        issued=totals.issued,
        refused=totals.refused,
        memory=memory,
        plans=plans,
    )


# --- as a module of `python -m bench` (bench/__init__.py BENCHMARKS) ------------------------
#
# The framework measures pages at each size of the synthetic data (its `size` is the CTRs in
# the database): here the rows of the file stay DEFAULT_ROWS, the CTRs already generated are
# their source (nothing is regenerated), and the memory at 1M rows is measured at the largest
# size only. The full section, with the plans, is `python -m bench.p1_bulk`.

_LAST: dict[int, Figures] = {}


def setup() -> dict:
    return {}


def run(state: dict, size: int, reports: int, runs: int) -> list:
    from .report import thousands
    from .timing import Result, Stats

    figures = measure_all(
        rows=DEFAULT_ROWS,
        sample=DEFAULT_SAMPLE,
        runs=min(runs, 3),
        memory_rows=[DEFAULT_MEMORY_ROWS] if size >= DEFAULT_MEMORY_ROWS else [],
        url=os.environ.get("DATABASE_URL", ""),
        explain=False,
        generate=False,
    )
    _LAST[size] = figures
    where = "(manage.py import_ctrs, sem HTTP)"

    def result(case, label, url, times, baseline=False):
        stats = Stats(statistics.median(times), min(times), max(times), len(times))
        row = Result(NAME, case, label, size, reports, url, 0, stats, 0, 0.0, baseline=baseline)
        row.ratio = stats.median / figures.floor_seconds
        return row

    rows = thousands(DEFAULT_ROWS)
    return [
        result(
            "piso",
            "(a) piso: geopandas.sjoin das origens e descargas, em memória",
            "(em memória, sem banco)",
            figures.floor_runs,
            baseline=True,
        ),
        result("p1", f"P1: importação em lote de {rows} linhas", where, figures.bulk_runs),
        result("p1-dry", "P1 só conferindo (--dry-run)", where, [figures.dry_run_seconds]),
        result(
            "por-ctr",
            f"(b) caminho por CTR, {figures.sample_rows} linhas",
            "(manage.py import_ctrs --per-row, sem HTTP)",
            [figures.per_row_seconds],
        ),
    ]


def profile(state: dict, results: list) -> list:
    return []  # the plans are in `python -m bench.p1_bulk`'s section


def verdict(results: list) -> str:
    from .report import thousands

    if not _LAST:
        return ""
    fig = _LAST[max(_LAST)]
    memory = max((m for m in fig.memory), key=lambda m: m[0], default=None)
    text = (
        f"**Metas P1**: P1 ≤ {MAX_FLOOR_RATIO} × (a) — "
        f"{'atingida' if fig.floor_ratio <= MAX_FLOOR_RATIO else '**NÃO atingida**'} "
        f"({thousands(fig.floor_ratio, 1)} ×); P1 por CTR ≥ {MIN_SPEEDUP} × mais rápido que "
        f"(b) — {'atingida' if fig.speedup >= MIN_SPEEDUP else '**NÃO atingida**'} "
        f"({thousands(fig.speedup, 0)} ×)"
    )
    if memory:
        text += (
            f"; pico de memória com {thousands(memory[0])} linhas: {thousands(memory[2], 0)} MB "
            f"(meta: abaixo de {MAX_PEAK_MB} MB)"
        )
    return text + ". Detalhes e planos: seção P1 (`python -m bench.p1_bulk`)."


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.p1_bulk",
        description="Mede a importação de CTRs por CSV em lote (P1) contra o piso em memória "
        "(geopandas) e o caminho por CTR; escreve a seção P1 de docs/performance.md.",
    )
    parser.add_argument("--rows", type=int, default=DEFAULT_ROWS, help="linhas do arquivo")
    parser.add_argument("--sample", type=int, default=DEFAULT_SAMPLE, help="amostra de (b)")
    parser.add_argument("--runs", type=int, default=3, help="medições de P1 e de (a)")
    parser.add_argument(
        "--memory-rows",
        default=f"{DEFAULT_ROWS},{DEFAULT_MEMORY_ROWS}",
        help="tamanhos do arquivo para a medição de memória (vazio: nenhuma)",
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--no-explain", action="store_true", help="sem EXPLAIN ANALYZE")
    parser.add_argument(
        "--output", type=Path, default=ROOT / "docs" / "performance.md", help="o relatório"
    )
    parser.add_argument("--no-write", action="store_true", help="só imprime, não escreve")
    args = parser.parse_args(argv)
    args.memory_rows = [int(x.replace("_", "")) for x in args.memory_rows.split(",") if x.strip()]
    return args


def main(argv: list[str] | None = None) -> int:
    from .database import own_database

    args = parse(sys.argv[1:] if argv is None else argv)
    url = own_database("BENCH_P1_DATABASE_URL", BENCH_DB, "P1", say)
    if url is None:
        return 2
    from django.utils import timezone

    from . import machine, report

    figures = measure_all(
        rows=args.rows,
        sample=args.sample,
        runs=args.runs,
        memory_rows=args.memory_rows,
        seed=args.seed,
        url=url,
        explain=not args.no_explain,
    )
    figures.machine = machine.describe()
    figures.when = timezone.localtime().strftime("%Y-%m-%d %H:%M %Z")
    figures.command = report.command_line("bench.p1_bulk", argv)
    figures.machine["pico de memória do processo do benchmark (geopandas incluso)"] = (
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB"
    )
    text = render(figures)
    report.publish(text, args.output, args.no_write, say, BEGIN, END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
