"""The set-based CSV import: the same findings and the same CTRs as the per-row path
(ctr.bulk.csv_import with ctr.services.issue), for files of any size.

The rows are parsed in Python (ctr.bulk.csv_format.parse_values, shared with the per-row path)
and streamed in chunks; each chunk goes through PostgreSQL as sets, never as a Python loop over
rows (the statements are ctr.bulk.sql's):

1. COPY the parsed rows into a temporary staging table (points as EWKB, waste as arrays);
2. resolve the references with joins: the vehicle and the equipment by transporter and code,
   the named destination facility, the municipality of each origin (the subdivided boundary
   pieces, GiST), the destination facility (ST_DWithin on geography with the municipality's
   GPS tolerance; licensed first, then the nearest: ctr.services.resolve_destination) and
   whether its license is valid on the transport date; for an onward row (origin_facility)
   the facility it leaves (who may ship from it: ctr.onward.onward_origins, one
   query for the chunk; locked when issuing, as ctr.services.issue_onward locks its one), its
   license, whether the origin is inside it, its operator, and its stock per class at the end
   of the transport day (ctr.custody.stock.moves_sql);
3. one INSERT … SELECT per rule into a findings table: the SQL that ctr.rules declares with
   each message, the message built in SQL from the same template (format()/to_char); errors
   first, then warnings, each in catalogue order, as rules.evaluate orders them. The rules
   whose fact depends on the rows before it in the file (rules.Rule.sequential: the stock an
   onward row finds) run after a recursive query walks each facility's onward rows in line
   order (WALK_SQL), each row shipping only if nothing refuses it, as one issue per row would;
4. unless it is a dry run, issue the rows without errors in one transaction per chunk (from
   the lock on the facilities shipped from): generators and worksites as the per-row path
   creates them (the first row wins; ON CONFLICT on their unique indexes, so a concurrent
   issuer is no error), a facility's operator from its first onward CTR, numbers allocated per
   (municipality, year) with the sequence rows locked in a fixed order and row_number() in
   line order (gap-free, the same numbers as one issue per row), then INSERT … SELECT into
   ctr_ctr, ctr_ctrwaste and ctr_ctrevent. A dry run keeps what each chunk would have issued
   from a facility for the chunks after it (the ctr_bulk_carried_* tables).

A row with any problem issues nothing and is reported with every problem, as before; the
warnings stay on the issued CTRs. tests/ctr/test_ctr_bulk.py runs both paths on the same rows.
Where the per-row path leaves a choice to the database (two facilities at the same distance),
this path takes the lowest id.

A session runs one import at a time (the staging tables are temporary, hence private to it);
concurrent imports and per-row issuers share only the numbering rows and the facilities
shipped from, each locked in order (facilities first).
"""

from __future__ import annotations

import contextlib
import csv
import io
import queue
import struct
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from django.db import DatabaseError, connection, transaction
from django.utils import timezone, translation

from pev_network.models import DEFAULT_SORTING_TOLERANCE_PCT, MunicipalParameters, ReceivingFacility

from .. import onward, rules, services, signals
from ..custody import stock
from ..models import CTRStatus, Transporter
from .csv_format import (
    FINDING_COLUMNS,
    Problem,
    RowResult,
    RowValues,
    error_problem,
    finding_problem,
    parse_values,
)
from .sql import (
    CARRY_SQL,
    CHECK_SQL,
    CREATE_SQL,
    DROP_SQL,
    FINDINGS_SQL,
    ISSUE_SQL,
    ISSUED_SQL,
    ISSUED_TABLE,
    REFUSALS_SQL,
    RESOLVE_SQL,
    STAGE_COLUMNS,
    TEXT_COLUMNS,
)

CHUNK_ROWS = 50_000


class CatalogueMismatch(RuntimeError):
    """A rule of the catalogue has no set-based counterpart here: the bulk import would
    silently miss it, so it refuses to run."""


def check_catalogue() -> None:
    missing = {
        r.code
        for r in rules.REGISTRY.values()
        if r.stage == rules.Stage.ISSUE and not r.in_bulk and not r.not_in_bulk
    }
    if missing:
        raise CatalogueMismatch(
            "Regras sem a SQL da importação em lote (ctr/rules.py): " + ", ".join(sorted(missing))
        )


@dataclass
class Totals:
    read: int = 0
    issued: int = 0
    checked: int = 0
    refused: int = 0
    seconds: dict[str, float] = field(default_factory=dict)  # per step, for the benchmark


# Points as hex EWKB (SRID 4326, little-endian): PostgreSQL reads them without parsing text,
# and the doubles are the parsed ones, bit for bit.
EWKB_POINT = "0101000020E6100000"
_pack_xy = struct.Struct("<dd").pack


def _rule_rows() -> list[tuple[str, str, str, int, int]]:
    return [
        (r.code, r.severity, r.article, rules.Severity.ORDER[r.severity], rank)
        for rank, r in enumerate(rules.REGISTRY.values())
    ]


def _static_params(transporter: Transporter) -> dict:
    default_limit = MunicipalParameters._meta.get_field("small_volume_limit_m3").default
    default_tolerance = MunicipalParameters._meta.get_field("gps_tolerance_m").default
    return {
        **rules.sql_params(transporter),
        "transporter": transporter.pk,
        "default_limit": default_limit,
        "default_tolerance": float(default_tolerance),
        "default_sorting_tolerance": DEFAULT_SORTING_TOLERANCE_PCT,
        "shipped_statuses": stock.SHIPPED_STATUSES,
        "onward_ids": [],
    }


class _Chunk:
    """The rows of one chunk: the parsed ones as COPY text, the others with their problems."""

    def __init__(self):
        # UTF-8 bytes: a StringIO holding one accented name keeps 4 bytes a character.
        self.buffer = io.BytesIO()
        self._text = io.TextIOWrapper(self.buffer, encoding="utf-8", newline="")
        self.writer = csv.writer(self._text, lineterminator="\n")
        self.lines: list[int] = []
        self.problems: dict[int, list[Problem]] = {}
        self.staged = 0

    def add(self, line: int, row: dict[str, str]) -> None:
        self.lines.append(line)
        values, problems = parse_values(row)
        if values is None:
            self.problems[line] = problems
            return
        self.staged += 1
        self.writer.writerow(_copy_record(line, values))

    def __len__(self) -> int:
        return len(self.lines)

    def data(self) -> io.BytesIO:
        self._text.flush()
        self.buffer.seek(0)
        return self.buffer

    def release(self) -> None:
        """Drop the COPY text once it is in the database."""
        self._text.detach()
        self.buffer = self._text = self.writer = None


def _copy_record(line: int, v: RowValues) -> tuple:
    return (
        line,
        v.transport_date.isoformat(),
        v.vehicle_plate,
        v.equipment_code,
        v.generator_name,
        v.generator_document,
        v.worksite_address,
        v.worksite_neighbourhood,
        EWKB_POINT + _pack_xy(*v.origin).hex() if v.origin is not None else None,
        EWKB_POINT + _pack_xy(*v.destination).hex(),
        v.destination_facility_id,
        "{" + ",".join([c for c, _ in v.waste]) + "}",
        "{" + ",".join([str(q) for _, q in v.waste]) + "}",
        v.description,
        v.origin_facility_id,
    )


PARSE_STEP = "leitura e análise das linhas (Python, em paralelo)"
WAIT_STEP = "espera pela leitura das linhas"
# Chunks parsed ahead of the one in the database: one keeps the database busy (the parse of
# a chunk takes less than its SQL) and bounds the memory to three chunks.
READ_AHEAD = 1
FIRST_CHUNK_ROWS = 5_000


class _Reader(threading.Thread):
    """Reads and parses the rows into chunks, in a thread, while the importer's thread waits
    on the database (psycopg2 releases the GIL during a query). The chunks come out in order
    (next_chunk; None at the end); an error of the rows (CSVFileError further down the file)
    comes out in its place, after the chunks before it."""

    def __init__(self, rows: Iterable[tuple[int, dict[str, str]]], chunk_rows: int):
        super().__init__(name="ctr-bulk-reader", daemon=True)
        self.rows = rows
        self.chunk_rows = chunk_rows
        self.seconds = 0.0
        self._queue: queue.Queue = queue.Queue(maxsize=READ_AHEAD)
        self._stopped = threading.Event()
        # Messages in the caller's language (translations are per thread).
        self._language = translation.get_language()

    def run(self) -> None:
        try:
            with translation.override(self._language):
                self._read()
        except BaseException as error:  # handed over, raised by next_chunk
            self._put(error)

    def _read(self) -> None:
        started = time.perf_counter()
        chunk = _Chunk()
        stopped = self._stopped.is_set
        # The database waits for the first chunk alone: it is small, and each next one twice
        # as big, up to chunk_rows (a chunk parses in about a fifth of its SQL time).
        size = min(self.chunk_rows, FIRST_CHUNK_ROWS)
        for line, row in self.rows:
            chunk.add(line, row)
            if len(chunk) >= size:
                self.seconds += time.perf_counter() - started
                if stopped() or not self._put(chunk):
                    return
                started = time.perf_counter()
                chunk = _Chunk()
                size = min(self.chunk_rows, size * 2)
        self.seconds += time.perf_counter() - started
        if len(chunk) and not self._put(chunk):
            return
        self._put(None)

    def _put(self, item) -> bool:
        """Queue `item` unless the importer has stopped; False when it has."""
        while not self._stopped.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def next_chunk(self) -> _Chunk | None:
        item = self._queue.get()
        if isinstance(item, BaseException):
            raise item
        return item

    def stop(self) -> None:
        """Let the thread end (at the end of the chunk it is parsing) and wait for it."""
        self._stopped.set()
        if self.is_alive():
            self.join()


def stage(cursor, chunk: _Chunk) -> None:
    """The chunk's parsed rows into ctr_bulk_row, with GiST indexes on its points (built
    after the COPY: a sorted build is cheaper than one insert per row)."""
    cursor.execute("TRUNCATE ctr_bulk_row, ctr_bulk_finding")
    cursor.execute("DROP INDEX IF EXISTS ctr_bulk_row_origin, ctr_bulk_row_destination")
    data = chunk.data()
    # The whole buffer in one read: psycopg2 takes the GIL back for each read (8 kB by
    # default), and the reader thread holds it up to 5 ms at a time. The size goes by
    # position: with DEBUG on (`make run`) the cursor is Django's CursorDebugWrapper, whose
    # copy_expert(sql, file, *args) forwards positional arguments only.
    cursor.copy_expert(
        f"COPY ctr_bulk_row ({', '.join(STAGE_COLUMNS)}) FROM STDIN "
        f"WITH (FORMAT csv, FORCE_NOT_NULL ({', '.join(TEXT_COLUMNS)}))",
        data,
        max(data.getbuffer().nbytes, 8192),
    )
    chunk.release()
    cursor.execute("CREATE INDEX ctr_bulk_row_origin ON ctr_bulk_row USING gist (origin)")
    cursor.execute("CREATE INDEX ctr_bulk_row_destination ON ctr_bulk_row USING gist (destination)")
    # The row count for the planner; statistics of the geometries are not needed.
    cursor.execute("ANALYZE ctr_bulk_row (line)")


# Session settings for the import, put back afterwards: no JIT (it spent 0.2-0.5 s compiling
# each big statement of a chunk, more than some took to run), room to sort a chunk in memory.
SESSION_SETTINGS = {"jit": "off", "work_mem": "64MB"}
# Temporary tables live in the session's own buffers (8 MB by default: a 50k-row chunk went
# to disk and back); PostgreSQL accepts a new size only before the session's first temporary
# table, so this one may not take.
TEMP_BUFFERS = "256MB"


class BulkImporter:
    """Checks (and issues) the rows of one transporter, chunk by chunk, on Django's connection."""

    def __init__(
        self,
        transporter: Transporter,
        user,
        dry_run: bool = False,
        chunk_rows: int = CHUNK_ROWS,
        at=None,
    ):
        check_catalogue()
        self.transporter = transporter
        self.user = user
        self.dry_run = dry_run
        self.chunk_rows = chunk_rows
        self.at = at
        self.params = _static_params(transporter)
        self.totals = Totals()

    def _time(self, step: str, started: float) -> None:
        self.totals.seconds[step] = self.totals.seconds.get(step, 0.0) + (
            time.perf_counter() - started
        )

    def run(
        self,
        rows: Iterable[tuple[int, dict[str, str]]],
        on_results: Callable[[list[RowResult]], None],
        progress: Callable[[int], None] | None = None,
    ) -> Totals:
        """Every row of `rows` ((line, row) pairs), at most `chunk_rows` at a time (the first
        chunks smaller: _Reader); `on_results` receives each chunk's results in line order.
        The rows are read and parsed in a thread of their own, the next chunk while the
        database works on this one."""
        reader = _Reader(rows, self.chunk_rows)
        with connection.cursor() as cursor:
            previous = self.open(cursor)
            reader.start()
            try:
                while True:
                    started = time.perf_counter()
                    chunk = reader.next_chunk()
                    self._time(WAIT_STEP, started)
                    if chunk is None:
                        break
                    on_results(self._process(cursor, chunk))
                    if progress:
                        progress(self.totals.read)
            finally:
                reader.stop()
                self.totals.seconds[PARSE_STEP] = reader.seconds
                self.close(cursor, previous)
        return self.totals

    def open(self, cursor) -> dict[str, str]:
        """The session's settings and temporary tables; returns the settings to put back."""
        previous = self._configure(cursor)
        for statement in CREATE_SQL:
            cursor.execute(statement)
        cursor.executemany("INSERT INTO ctr_bulk_rule VALUES (%s, %s, %s, %s, %s)", _rule_rows())
        cursor.execute(
            # Of every set, whatever its dates: a bound on any row's tolerance.
            "SELECT greatest(max(gps_tolerance_m)::float8, %s) FROM "
            + MunicipalParameters._meta.db_table,
            [self.params["default_tolerance"]],
        )
        self.params["max_tolerance"] = cursor.fetchone()[0]
        # Once, not in each row's nextval() (it cost 2 µs a row).
        cursor.execute("SELECT pg_get_serial_sequence('ctr_ctr', 'id')")
        self.params["id_sequence"] = cursor.fetchone()[0]
        return previous

    @staticmethod
    def close(cursor, previous: dict[str, str]) -> None:
        try:
            cursor.execute(DROP_SQL)
            for name, value in previous.items():
                cursor.execute("SELECT set_config(%s, %s, false)", [name, value])
        except DatabaseError:
            # The caller's transaction failed: its rollback drops the tables and settings.
            pass

    @staticmethod
    def _configure(cursor) -> dict[str, str]:
        previous = {}
        for name, value in SESSION_SETTINGS.items():
            cursor.execute(
                "SELECT current_setting(%s), set_config(%s, %s, false)", [name, name, value]
            )
            previous[name] = cursor.fetchone()[0]
        try:
            with transaction.atomic():  # a savepoint when inside a transaction
                cursor.execute("SET temp_buffers = %s", [TEMP_BUFFERS])
        except DatabaseError:
            pass  # the session already used temporary tables: keep its size
        return previous

    def _process(self, cursor, chunk: _Chunk) -> list[RowResult]:
        findings: dict[int, list[rules.Finding]] = {}
        refusals: dict[int, Problem] = {}
        numbers: dict[int, str] = {}
        if chunk.staged:
            started = time.perf_counter()
            stage(cursor, chunk)
            self._time("COPY para a tabela de preparação", started)
            # Issuing, the chunk is one transaction from the lock on the facilities it ships
            # from (before their stock is read) to its last CTR.
            with contextlib.nullcontext() if self.dry_run else transaction.atomic():
                started = time.perf_counter()
                refusals = self._origins(cursor)
                for statement in RESOLVE_SQL:
                    cursor.execute(statement, self.params)
                self._time("referências e junções espaciais", started)
                started = time.perf_counter()
                for _, statement in CHECK_SQL:
                    cursor.execute(statement, self.params)
                self._time("regras (uma inserção por regra)", started)

                started = time.perf_counter()
                cursor.execute(FINDINGS_SQL)
                for line, code, severity, message, article, field_name in cursor.fetchall():
                    findings.setdefault(line, []).append(
                        rules.Finding(code, severity, message, article, field_name)
                    )
                # In the order ctr.services raises them, before any rule runs: the origin
                # facility (above), the onward CTR's generator, the destination named.
                cursor.execute(REFUSALS_SQL)
                for line, refusal, facility, operator in cursor.fetchall():
                    error = (
                        services.generator_required(facility)
                        if refusal == "generator_required"
                        else services.generator_not_operator(facility, operator)
                    )
                    refusals.setdefault(line, error_problem(error))
                cursor.execute(
                    "SELECT f.line, r.destination_facility_id FROM ctr_bulk_fact f "
                    "JOIN ctr_bulk_row r ON r.line = f.line WHERE f.unknown_facility"
                )
                column = FINDING_COLUMNS["destination_facility"]
                for line, facility_id in cursor.fetchall():
                    message = f"A área de destino {facility_id} não existe."
                    refusals.setdefault(line, Problem(column, message))
                self._time("leitura das constatações", started)

                started = time.perf_counter()
                if self.dry_run:
                    for statement in CARRY_SQL:
                        cursor.execute(statement)
                else:
                    params = {
                        **self.params,
                        "at": self.at or timezone.now(),
                        "user": self.user.pk,
                        "status": CTRStatus.ISSUED.value,
                    }
                    for statement in ISSUE_SQL:
                        cursor.execute(statement, params)
                    signals.ctrs_imported.send(
                        sender=BulkImporter,
                        cursor=cursor,
                        table=ISSUED_TABLE,
                        actor_id=params["user"],
                        at=params["at"],
                    )
                    cursor.execute(ISSUED_SQL)
                    numbers = dict(cursor.fetchall())
                self._time("emissão (números, CTRs, resíduos, eventos)", started)
        started = time.perf_counter()
        results = self._results(chunk, findings, refusals, numbers)
        self._time("relatório", started)
        return results

    def _origins(self, cursor) -> dict[int, Problem]:
        """The facilities the chunk's onward rows ship from: who may ship from each
        (ctr.onward.onward_origins; the others refuse their rows), locked when issuing (as
        ctr.services.issue_onward locks its one, in id order here), and the point inside each
        that a row without an origin leaves from. One query each, not one per row."""
        cursor.execute(
            "SELECT DISTINCT origin_facility_id FROM ctr_bulk_row "
            "WHERE origin_facility_id IS NOT NULL"
        )
        ids = [row[0] for row in cursor.fetchall()]
        found = onward.onward_origins(self.user, ids) if ids else {}
        allowed = {pk: o for pk, o in found.items() if isinstance(o, ReceivingFacility)}
        self.params["onward_ids"] = sorted(allowed)
        if allowed:
            if not self.dry_run:
                cursor.execute(
                    f"SELECT id FROM {ReceivingFacility._meta.db_table} WHERE id = ANY(%s) "
                    "ORDER BY id FOR UPDATE",
                    [sorted(allowed)],
                )
            points = {pk: services.default_onward_origin(o) for pk, o in allowed.items()}
            cursor.execute(
                "UPDATE ctr_bulk_row r SET origin = ST_SetSRID(ST_MakePoint(p.x, p.y), 4326) "
                "FROM unnest(%s::bigint[], %s::float8[], %s::float8[]) p(id, x, y) "
                "WHERE r.origin IS NULL AND r.origin_facility_id = p.id",
                [list(points), [p.x for p in points.values()], [p.y for p in points.values()]],
            )
        refused = {
            pk: found.get(pk) or services.unknown_origin(pk) for pk in ids if pk not in allowed
        }
        if not refused:
            return {}
        cursor.execute(
            "SELECT line, origin_facility_id FROM ctr_bulk_row WHERE origin_facility_id = ANY(%s)",
            [list(refused)],
        )
        return {line: error_problem(refused[pk]) for line, pk in cursor.fetchall()}

    def _results(
        self,
        chunk: _Chunk,
        findings: dict[int, list[rules.Finding]],
        refusals: dict[int, Problem],
        numbers: dict[int, str],
    ) -> list[RowResult]:
        results = []
        totals = self.totals
        for line in chunk.lines:
            result = RowResult(line)
            if line in chunk.problems:
                result.problems = chunk.problems[line]
            elif line in refusals:
                result.problems = [refusals[line]]
            elif line not in findings:  # most rows: nothing found
                if self.dry_run:
                    result.checked = True
                else:
                    result.number = numbers[line]
            else:
                found = findings[line]
                result.findings = found
                errors = [f for f in found if f.severity == rules.Severity.ERROR]
                if errors:
                    result.problems = [finding_problem(f) for f in errors]
                else:
                    result.warnings = [finding_problem(f) for f in found]
                    if self.dry_run:
                        result.checked = True
                    else:
                        result.number = numbers[line]
            totals.read += 1
            if result.problems:
                totals.refused += 1
            elif result.number:
                totals.issued += 1
            elif result.checked:
                totals.checked += 1
            results.append(result)
        return results


def import_rows(
    rows: Iterable[tuple[int, dict[str, str]]],
    transporter: Transporter,
    user,
    on_results: Callable[[list[RowResult]], None],
    dry_run: bool = False,
    chunk_rows: int = CHUNK_ROWS,
    progress: Callable[[int], None] | None = None,
    at=None,
) -> Totals:
    """Check every row and, unless `dry_run`, issue the good ones; see the module docstring."""
    importer = BulkImporter(transporter, user, dry_run=dry_run, chunk_rows=chunk_rows, at=at)
    return importer.run(rows, on_results, progress)
