"""Import many CTRs from a CSV file: one row = one CTR (Lei 3.978/2007 art. 3 VI, art. 13).

Every row is parsed and checked; a row with any problem (a value that does not parse, or a
rule of the catalogue broken with severity error) issues nothing and is reported with every
problem; the good rows are issued with gap-free numbers. The checks and the issue are
set-based (ctr.bulk.importer, one transaction per chunk of rows); the per-row path
(ctr.services.issue for each row, one transaction per CTR) stays as the reference, with the
same results. No request object here: the web page and the `import_ctrs` command share it; the
command streams files of any size (open_stream), the page takes up to config.csv_reader's
MAX_ROWS rows and MAX_BYTES.

config.csv_reader reads the file (encoding, delimiter, header, rows), with the CTR file's
columns here; the format of a row and its result are ctr.bulk.csv_format's.
"""

from __future__ import annotations

import contextlib
import datetime
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from django.contrib.gis.db.models.functions import PointOnSurface
from django.contrib.gis.geos import Point
from django.db import transaction

from config import csv_reader
from config.br import br_number
from config.csv_reader import CSVFileError, StreamedFile, check_size, decode
from pev_network.models import FacilityKind, Municipality, ReceivingFacility

from .. import onward as ctr_onward
from .. import rules, services
from ..errors import CTRError, NotAllowed, RuleViolation
from ..models import Transporter, TransporterLicence
from . import importer
from .csv_format import (
    COLUMNS,
    ENGLISH_NAMES,
    PORTUGUESE_NAMES,
    REQUIRED_COLUMNS,
    Problem,
    RowResult,
    RowValues,
    error_problem,
    facility_id,
    finding_problem,
    origin_facility_problem,
    parse_values,
)


class OriginRefused(CSVFileError):
    """Rows name an origin facility (origin_facility) that is not a number, does not exist or
    is not the user's to ship from (ctr.services.onward_origin): as the API refuses such an
    onward CTR, the file is refused as a whole, nothing issued, with every such row. 403 when
    a facility is another's, else 400."""

    code = "origin_facility"

    def __init__(self, rows: list[RowResult], forbidden: bool):
        lines = f"{len(rows)} linhas do arquivo indicam" if len(rows) > 1 else "Uma linha indica"
        super().__init__(
            f"{lines} uma área de origem (coluna origin_facility) inexistente, inválida ou de "
            "que você não pode emitir CTR de saída.",
            status=403 if forbidden else 400,
        )
        self.rows = tuple(rows)


def check_origins(rows: Iterable[tuple[int, dict[str, str]]], user) -> None:
    """Raise OriginRefused when any row names an origin facility `user` may not issue an
    onward CTR from, before anything is issued: one query for the file's facilities."""
    problems: dict[int, Problem] = {}
    lines_of: dict[int, list[int]] = {}
    for line, row in rows:
        # A row with more fields than the header has its cells out of place: its own problem.
        if (text := row.get("origin_facility", "")) and not row.get("__extra__"):
            facility = facility_id(text)
            if facility is None:
                problems[line] = origin_facility_problem(text)
            else:
                lines_of.setdefault(facility, []).append(line)
    forbidden = False
    if lines_of:
        found = ctr_onward.onward_origins(user, lines_of)
        for facility, lines in lines_of.items():
            origin = found.get(facility) or services.unknown_origin(facility)
            if isinstance(origin, CTRError):
                forbidden = forbidden or isinstance(origin, NotAllowed)
                for line in lines:
                    problems[line] = error_problem(origin)
    if problems:
        raise OriginRefused(
            [RowResult(line, problems=[problems[line]]) for line in sorted(problems)], forbidden
        )


@dataclass
class ImportReport:
    rows: list[RowResult] = field(default_factory=list)
    delimiter: str = ";"
    encoding: str = "utf-8"
    ignored_columns: list[str] = field(default_factory=list)
    dry_run: bool = False

    @property
    def issued(self) -> list[RowResult]:
        return [row for row in self.rows if row.number]

    @property
    def refused(self) -> list[RowResult]:
        return [row for row in self.rows if row.problems]

    @property
    def checked(self) -> list[RowResult]:
        return [row for row in self.rows if row.checked]


# --- reading the file: config.csv_reader, with the CTR file's columns -------------------------


def read_rows(text: str) -> tuple[list[str], list[tuple[int, dict[str, str]]], str, list[str]]:
    """The CTR file's rows (csv_reader.read_rows); its columns by their English or Portuguese
    names (csv_format.PORTUGUESE_NAMES)."""
    return csv_reader.read_rows(
        text, REQUIRED_COLUMNS, COLUMNS, "de CTR", ENGLISH_NAMES, PORTUGUESE_NAMES
    )


def open_stream(path: Path) -> StreamedFile:
    """A CTR file of any size, read row by row (csv_reader.open_stream), named as read_rows."""
    return csv_reader.open_stream(
        path, REQUIRED_COLUMNS, COLUMNS, "de CTR", ENGLISH_NAMES, PORTUGUESE_NAMES
    )


# --- one row -> its values -> an IssueRequest ----------------------------------------------------


# --- one row -> an IssueRequest ---------------------------------------------------------------


def request_of(values: RowValues) -> services.IssueRequest:
    origin_point = Point(*values.origin, srid=4326) if values.origin is not None else None
    onward = values.origin_facility_id is not None
    return services.IssueRequest(
        transport_date=values.transport_date,
        vehicle_plate=values.vehicle_plate,
        equipment_code=values.equipment_code,
        origin=origin_point,
        destination=Point(*values.destination, srid=4326),
        waste=[rules.WasteLine(c, v, values.description) for c, v in values.waste],
        # An onward row may leave its generator (the facility's operator) to the registry.
        generator=services.GeneratorData(values.generator_name, values.generator_document)
        if values.generator_document
        else None,
        worksite=None
        if onward
        else services.WorksiteData(
            values.worksite_address, origin_point, values.worksite_neighbourhood
        ),
        destination_facility_id=values.destination_facility_id,
        origin_facility_id=values.origin_facility_id,
    )


def parse_row(row: dict[str, str]) -> tuple[services.IssueRequest | None, list[Problem]]:
    """The request a row declares, or every problem that keeps it from being one."""
    values, problems = parse_values(row)
    if values is None:
        return None, problems
    return request_of(values), []


# --- the whole import ---------------------------------------------------------------------------


def import_ctrs(
    data: bytes,
    transporter: Transporter,
    user,
    dry_run: bool = False,
    progress: Callable[[int, int], None] | None = None,
    per_row: bool = False,
) -> ImportReport:
    """Parse `data` (the file's bytes), then issue a CTR for each good row (or, in a dry run,
    only check it). Raises CSVFileError when the file as a whole is unusable: too big, empty,
    binary, without the required columns or with too many rows; then nothing is issued.

    The rows go through the set-based import (ctr.bulk.importer); `per_row` takes the reference
    path instead, ctr.services.check/issue once per row (one transaction per CTR). Both give
    the same findings and the same CTRs (tests/ctr/test_ctr_bulk.py)."""
    check_size(len(data))
    text, encoding = decode(data)
    columns, rows, delimiter, ignored = read_rows(text)
    if "origin_facility" in columns:
        check_origins(rows, user)
    report = ImportReport(delimiter=delimiter, encoding=encoding, ignored_columns=ignored)
    report.dry_run = dry_run
    if per_row:
        # A dry run issues each row as the import would, then takes it all back: an onward
        # row ships stock that the rows after it no longer find (as ctr.bulk.importer counts
        # it).
        with transaction.atomic() if dry_run else contextlib.nullcontext():
            for index, (line, row) in enumerate(rows, start=1):
                report.rows.append(import_row(line, row, transporter, user, dry_run))
                if progress:
                    progress(index, len(rows))
            if dry_run:
                transaction.set_rollback(True)
        return report

    importer.import_rows(
        rows,
        transporter,
        user,
        on_results=report.rows.extend,
        dry_run=dry_run,
        progress=(lambda done: progress(done, len(rows))) if progress else None,
    )
    return report


def import_row(line: int, row: dict[str, str], transporter: Transporter, user, dry_run: bool):
    """One row through ctr.services (the per-row reference path): issued, or in a dry run
    issued inside the caller's transaction that import_ctrs takes back."""
    result = RowResult(line)
    request, problems = parse_row(row)
    if request is not None:
        try:
            if request.origin_facility_id is not None:
                ctr = services.issue_onward(user, transporter.pk, request)
            else:
                ctr = services.issue(transporter, user, request)
            if dry_run:
                result.checked = True
            else:
                result.number = ctr.number
            findings = [rules.Finding(**f) for f in ctr.findings]
            result.findings = findings
            result.warnings = [finding_problem(f) for f in findings]
        except RuleViolation as violation:
            result.findings = violation.findings
            errors = [f for f in violation.findings if f.severity == rules.Severity.ERROR]
            problems = [finding_problem(f) for f in errors]
        except CTRError as error:
            problems = [error_problem(error)]
    result.problems = problems
    return result


def example_rows(transporter: Transporter, day: datetime.date) -> list[list[str]] | None:
    """The example file's rows for `transporter`, that import without a
    finding on `day`: its own active plates and caçambas, a worksite inside the municipality
    of a licence in force, and the discharge point inside a facility licensed there that
    receives class A, not a PEV (by its id in the second row). None when it has no licence,
    vehicle or such facility: the demo rows then. Scoped by the transporter: its licences
    and fleet."""
    licence = (
        TransporterLicence.objects.in_force_on(day)
        .filter(transporter=transporter)
        .order_by("pk")
        .first()
    )
    plates = list(
        transporter.vehicles.filter(active=True).order_by("pk").values_list("plate", flat=True)[:2]
    )
    if licence is None or not plates:
        return None
    facility = (
        ReceivingFacility.objects.licensed_on(day)
        .filter(municipality_id=licence.municipality_id, accepted_classes__contains=["A"])
        # A PEV takes small volumes only (LARGE_VOLUME_AT_PEV): the example carries 2,5 m³.
        .exclude(kind=FacilityKind.PEV)
        .annotate(inside=PointOnSurface("area"))
        .order_by("pk")
        .first()
    )
    origin = (
        Municipality.objects.filter(pk=licence.municipality_id)
        .annotate(inside=PointOnSurface("boundary"))
        .values_list("inside", flat=True)
        .first()
    )
    if facility is None or facility.inside is None or origin is None:
        return None
    skip_code = (
        transporter.equipment.filter(active=True, nominal_capacity_m3__gte=Decimal("2.5"))
        .order_by("pk")
        .values_list("code", flat=True)
        .first()
    )

    def coord(value: float) -> str:
        return br_number(value, 6, grouping=False)

    ends = [coord(origin.x), coord(origin.y), coord(facility.inside.x), coord(facility.inside.y)]
    return [
        [day.isoformat(), plates[0], skip_code or "", "Maria da Obra", "529.982.247-25",
         "Rua das Flores, 10", "Centro", *ends, "", "A=2,5", "entulho de alvenaria", ""],
        [day.strftime("%d/%m/%Y"), plates[-1], "", "José Reforma", "11.222.333/0001-81",
         "Av. Brasil, 200", "Jardim", *ends, str(facility.pk), "A=0,8", "", ""],
    ]  # fmt: skip
