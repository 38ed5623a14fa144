"""Import many CTRs from a CSV file: one row = one CTR (Lei 3.978/2007 art. 3 VI, art. 13).

Every row is parsed and checked; a row with any problem (a value that does not parse, or a
rule of the catalogue broken with severity error) issues nothing and is reported with every
problem; the good rows are issued with gap-free numbers. The checks and the issue are
set-based (ctr.bulk, one transaction per chunk of rows); the per-row path (ctr.services.issue
for each row, one transaction per CTR) stays as the reference, with the same results. No
request object here: the web page and the `import_ctrs` command share it; the command streams
files of any size (open_stream), the page takes up to MAX_ROWS rows and MAX_BYTES.

The format (docs/transportador.md): a header row with the column names below, ';' or ','
between fields, UTF-8 (with or without BOM) or Latin-1, decimal comma or point.
"""

from __future__ import annotations

import codecs
import csv
import datetime
import functools
import io
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import NamedTuple

from django.contrib.gis.geos import Point
from django.core.exceptions import ValidationError

from config.errors import DomainError

from . import rules, services
from .documents import normalize_document, normalize_plate
from .forms import DECIMAL_RE, MAX_LINE_VOLUME, MAX_WASTE_LINES, parse_decimal
from .models import CTRWasteClass, Transporter

MAX_BYTES = 2 * 1024 * 1024
MAX_ROWS = 5000

REQUIRED_COLUMNS = (
    "transport_date",
    "vehicle_plate",
    "generator_name",
    "generator_document",
    "worksite_address",
    "origin_lon",
    "origin_lat",
    "destination_lon",
    "destination_lat",
    "waste",
)
OPTIONAL_COLUMNS = (
    "equipment_code",
    "worksite_neighbourhood",
    "destination_facility",
    "description",
)
COLUMNS = (
    "transport_date",
    "vehicle_plate",
    "equipment_code",
    "generator_name",
    "generator_document",
    "worksite_address",
    "worksite_neighbourhood",
    "origin_lon",
    "origin_lat",
    "destination_lon",
    "destination_lat",
    "destination_facility",
    "waste",
    "description",
)
# What each column holds, in pt-BR (the import page and the guide show it).
COLUMN_HELP = {
    "transport_date": "Data do transporte: AAAA-MM-DD ou DD/MM/AAAA.",
    "vehicle_plate": "Placa de um veículo ativo do seu cadastro (ABC1D23 ou ABC-1234).",
    "equipment_code": "Código de um equipamento do seu cadastro (opcional).",
    "generator_name": "Nome do gerador.",
    "generator_document": "CPF ou CNPJ do gerador (com ou sem pontuação).",
    "worksite_address": "Endereço da obra ou imóvel de origem.",
    "worksite_neighbourhood": "Bairro (opcional).",
    "origin_lon": "Longitude da origem, em graus decimais (oeste é negativo).",
    "origin_lat": "Latitude da origem, em graus decimais (sul é negativo).",
    "destination_lon": "Longitude do ponto de descarga.",
    "destination_lat": "Latitude do ponto de descarga.",
    "destination_facility": "Número (id) da área de destino (opcional).",
    "waste": "Resíduos: CLASSE=VOLUME em m³, separados por ponto e vírgula (ex.: A=2,5; B=0,5).",
    "description": "Descrição da carga (opcional), aplicada a cada resíduo.",
}
MAX_LENGTHS = {
    "vehicle_plate": 10,
    "equipment_code": 30,
    "generator_name": 200,
    "generator_document": 20,
    "worksite_address": 300,
    "worksite_neighbourhood": 120,
    "description": 300,
}
# Finding fields (the API's names) -> the CSV columns they concern.
FINDING_COLUMNS = {
    "transport_date": "transport_date",
    "vehicle_plate": "vehicle_plate",
    "equipment_code": "equipment_code",
    "generator": "generator_document",
    "worksite": "worksite_address",
    "origin": "origin_lon, origin_lat",
    "destination": "destination_lon, destination_lat",
    "destination_facility": "destination_facility",
    "waste": "waste",
}
CLASS_ALIASES = {
    "SAÚDE": CTRWasteClass.SAUDE,
    "VOLUMOSOS": CTRWasteClass.VOLUMOSO,
}
WASTE_ITEM_RE = re.compile(r"^\s*([^=:]+?)\s*[=:]\s*(.+?)\s*$")


class CSVFileError(DomainError):
    """The file as a whole cannot be read: nothing is issued."""

    code = "csv_file"


@dataclass(frozen=True)
class Problem:
    column: str  # the CSV column(s) concerned, or "" for the row as a whole
    message: str
    code: str = ""  # the rule's code for findings of the catalogue
    article: str = ""


@dataclass
class RowResult:
    line: int  # the line of the file (the header is line 1)
    number: str = ""  # the CTR issued (empty when refused, or in a dry run)
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    checked: bool = False  # dry run: the row passed every check, nothing was issued
    # Every finding of the catalogue for the row (errors and warnings), as rules.evaluate
    # gives them; empty when the row did not parse or named an unknown facility.
    findings: list[rules.Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


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


# --- reading the file ------------------------------------------------------------------------


def decode(data: bytes) -> tuple[str, str]:
    """The text and its encoding: UTF-8 (a BOM is dropped), else Latin-1. A NUL byte means a
    binary file (a spreadsheet saved as .xlsx, an image), which no CSV contains."""
    if not data.strip():
        raise CSVFileError("O arquivo está vazio.")
    if b"\x00" in data:
        raise CSVFileError(BINARY_MESSAGE)
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        # Latin-1 decodes any byte: Excel in Portuguese saves CSV in Windows-1252/Latin-1.
        return data.decode("latin-1"), "latin-1"


BINARY_MESSAGE = (
    "O arquivo não é um CSV de texto (parece um arquivo binário, como uma planilha "
    ".xlsx). Na planilha, use “Salvar como” e escolha CSV."
)


def sniff_delimiter(header_line: str) -> str:
    """';' or ',', whichever separates the header. The header, not the data: a decimal comma
    in the data would fool a sniffer that counts commas in the rows."""
    return ";" if header_line.count(";") >= header_line.count(",") else ","


def read_header(reader) -> tuple[list[str], list[str]]:
    """(columns, ignored columns) from the reader's first row, or CSVFileError."""
    header = next(reader, None)
    if not header or not any(cell.strip() for cell in header):
        raise CSVFileError("O arquivo não tem a linha de cabeçalho com os nomes das colunas.")
    columns = [cell.strip().lower().lstrip("\ufeff") for cell in header]
    duplicated = sorted({c for c in columns if c and columns.count(c) > 1})
    if duplicated:
        raise CSVFileError(f"Coluna(s) repetida(s) no cabeçalho: {', '.join(duplicated)}.")
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if missing:
        raise CSVFileError(
            f"Faltam colunas obrigatórias no cabeçalho: {', '.join(missing)}. "
            "A primeira linha do arquivo deve ter os nomes das colunas "
            f"(separados por “{reader.dialect.delimiter}”)."
        )
    return columns, [c for c in columns if c and c not in COLUMNS]


def records(reader, columns: list[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """(line, row) for each non-blank row after the header (the header is line 1)."""
    named = [(i, name) for i, name in enumerate(columns) if name]
    width = len(columns)
    line = 1
    for cells in reader:
        line += 1
        if not any(cell.strip() for cell in cells):
            continue  # a blank line (spreadsheets leave some at the end)
        count = len(cells)
        row = {name: (cells[i].strip() if i < count else "") for i, name in named}
        if count > width and any(c.strip() for c in cells[width:]):
            row["__extra__"] = "1"
        yield line, row


def read_rows(text: str) -> tuple[list[str], list[tuple[int, dict[str, str]]], str, list[str]]:
    """(columns, [(line, row)], delimiter, ignored columns) or CSVFileError."""
    first_line = text.lstrip("\ufeff").split("\n", 1)[0]
    delimiter = sniff_delimiter(first_line)
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff"), newline=""), delimiter=delimiter)
    try:
        columns, ignored = read_header(reader)
        rows: list[tuple[int, dict[str, str]]] = []
        for line, row in records(reader, columns):
            if len(rows) >= MAX_ROWS:
                raise CSVFileError(
                    f"O arquivo tem mais de {MAX_ROWS} linhas de CTR; divida-o em arquivos menores."
                )
            rows.append((line, row))
    except csv.Error as error:
        raise CSVFileError(f"O arquivo não pôde ser lido como CSV: {error}.") from None
    if not rows:
        raise CSVFileError("O arquivo só tem o cabeçalho: nenhuma linha de CTR.")
    return columns, rows, delimiter, ignored


@dataclass
class StreamedFile:
    """A CSV file read as it goes (the command's big files): nothing but the current rows in
    memory. `rows` raises CSVFileError if the CSV breaks further down."""

    path: Path
    encoding: str
    delimiter: str
    columns: list[str]
    ignored: list[str]
    _reader: object = None
    _file: object = None

    def rows(self) -> Iterator[tuple[int, dict[str, str]]]:
        count = 0
        try:
            for item in records(self._reader, self.columns):
                count += 1
                yield item
        except csv.Error as error:
            raise CSVFileError(f"O arquivo não pôde ser lido como CSV: {error}.") from None
        if not count:
            raise CSVFileError("O arquivo só tem o cabeçalho: nenhuma linha de CTR.")

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> StreamedFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def sniff_encoding(path: Path, block: int = 1 << 20) -> str:
    """The encoding `decode` would choose, read block by block (the file is not held in
    memory): UTF-8 when the whole file decodes, else Latin-1; CSVFileError when it is empty or
    binary."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    utf8 = True
    blank = True
    with open(path, "rb") as stream:
        while chunk := stream.read(block):
            if b"\x00" in chunk:
                raise CSVFileError(BINARY_MESSAGE)
            blank = blank and not chunk.strip()
            if utf8:
                try:
                    decoder.decode(chunk)
                except UnicodeDecodeError:
                    utf8 = False
    if blank:
        raise CSVFileError("O arquivo está vazio.")
    if utf8:
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            utf8 = False
    return "utf-8" if utf8 else "latin-1"


def open_stream(path: Path) -> StreamedFile:
    """Open a CSV file of any size for reading row by row, with the same rules as `read_rows`
    (encoding, delimiter, header) but no limit on the number of rows."""
    encoding = sniff_encoding(path)
    # Open for the caller: StreamedFile.close (or a with block) closes it.
    stream = open(path, encoding="utf-8-sig" if encoding == "utf-8" else "latin-1", newline="")  # noqa: SIM115
    try:
        head = ""
        while "\n" not in head and (piece := stream.read(65536)):
            head += piece
        delimiter = sniff_delimiter(head.lstrip("\ufeff").split("\n", 1)[0])
        stream.seek(0)
        reader = csv.reader(stream, delimiter=delimiter)
        try:
            columns, ignored = read_header(reader)
        except csv.Error as error:
            raise CSVFileError(f"O arquivo não pôde ser lido como CSV: {error}.") from None
    except BaseException:
        stream.close()
        raise
    return StreamedFile(path, encoding, delimiter, columns, ignored, reader, stream)


# --- one row -> its values -> an IssueRequest ----------------------------------------------------


class RowValues(NamedTuple):
    """What a good row declares, as plain values (the bulk import copies these)."""

    transport_date: datetime.date
    vehicle_plate: str
    equipment_code: str
    generator_name: str
    generator_document: str
    worksite_address: str
    worksite_neighbourhood: str
    origin: tuple[float, float]
    destination: tuple[float, float]
    destination_facility_id: int | None
    waste: tuple[tuple[str, Decimal], ...]  # (class, m³) per line
    description: str


def parse_date(text: str) -> datetime.date:
    for fmt in ("%Y-%m-%d", "%d/%m/%Y"):
        try:
            return datetime.datetime.strptime(text.strip(), fmt).date()
        except ValueError:
            continue
    raise ValueError(text)


# The same values come back on every row of a file (dates, plates, the generators'
# documents, usual loads): parsing each once keeps a big import fast. Bounded caches.
@functools.lru_cache(maxsize=4096)
def _date_or_none(text: str) -> datetime.date | None:
    try:
        return parse_date(text)
    except ValueError:
        return None


@functools.lru_cache(maxsize=16384)
def _plate(text: str) -> tuple[str, str]:
    try:
        return normalize_plate(text), ""
    except ValidationError as error:
        return "", error.messages[0]


@functools.lru_cache(maxsize=65536)
def _document(text: str) -> tuple[str, str]:
    try:
        return normalize_document(text), ""
    except ValidationError as error:
        return "", error.messages[0]


WASTE_CLASSES = frozenset(CTRWasteClass.values)
VALID_CLASSES_TEXT = ", ".join(CTRWasteClass.values)
THOUSANDTH = Decimal("0.001")
WASTE_SPLIT_RE = re.compile(r"[;|]")


@functools.lru_cache(maxsize=65536)
def _waste_items(text: str) -> tuple[tuple[tuple[str, Decimal], ...], tuple[Problem, ...]]:
    """'A=2,5; B=0,5' -> ((class, m³), ...) and the problems. Items are separated by ';' or
    '|'."""
    items = [item for item in WASTE_SPLIT_RE.split(text) if item.strip()]
    if not items:
        return (), (Problem("waste", "Informe ao menos um resíduo no formato CLASSE=VOLUME."),)
    if len(items) > MAX_WASTE_LINES:
        return (), (Problem("waste", f"No máximo {MAX_WASTE_LINES} resíduos por CTR."),)
    lines: list[tuple[str, Decimal]] = []
    problems: list[Problem] = []
    for item in items:
        match = WASTE_ITEM_RE.match(item)
        if not match:
            problems.append(
                Problem(
                    "waste", f"“{item.strip()}” não está no formato CLASSE=VOLUME (ex.: A=2,5)."
                )
            )
            continue
        name, volume_text = match.group(1).strip().upper(), match.group(2)
        waste_class = CLASS_ALIASES.get(name, name)
        if waste_class not in WASTE_CLASSES:
            problems.append(
                Problem(
                    "waste", f"Classe de resíduo desconhecida: “{name}”; use {VALID_CLASSES_TEXT}."
                )
            )
        try:
            volume = parse_decimal(volume_text)
        except ValueError:
            problems.append(
                Problem("waste", f"Volume inválido em “{item.strip()}”: informe um número em m³.")
            )
            continue
        if volume <= 0 or volume > MAX_LINE_VOLUME:
            problems.append(
                Problem(
                    "waste",
                    f"Volume fora do intervalo em “{item.strip()}”: de 0,001 a "
                    f"{rules.fmt(MAX_LINE_VOLUME)} m³.",
                )
            )
            continue
        if volume != volume.quantize(THOUSANDTH):
            problems.append(
                Problem("waste", f"Volume com mais de 3 casas decimais em “{item.strip()}”.")
            )
            continue
        if waste_class in WASTE_CLASSES:
            lines.append((str(waste_class), volume))
    return tuple(lines), tuple(problems)


def parse_waste(text: str, description: str) -> tuple[list[rules.WasteLine], list[Problem]]:
    """'A=2,5; B=0,5' -> waste lines. Items are separated by ';' or '|'."""
    items, problems = _waste_items(text)
    return [rules.WasteLine(c, v, description) for c, v in items], list(problems)


def _coordinate(text: str, limit: int) -> tuple[float | None, str]:
    """forms.parse_decimal, the range check and float(), without a Decimal on the common path:
    float() of the decimal text is the same correctly rounded double, and when it is strictly
    inside the range the decimal is too (rounding is monotonic)."""
    value = text.strip().replace(" ", "")
    if not DECIMAL_RE.match(value):
        return None, f"Coordenada inválida: “{text}”; informe graus decimais."
    value = value.replace(",", ".")
    number = float(value)
    if -limit < number < limit:
        return number, ""
    exact = Decimal(value)
    if abs(exact) > limit:
        return None, f"Coordenada fora do intervalo de -{limit} a {limit}."
    return float(exact), ""


EMPTY = "Campo obrigatório vazio."
EXTRA_FIELDS = (
    "A linha tem mais campos que o cabeçalho: um valor que contém o separador "
    "(como a vírgula decimal de -45,19 num arquivo separado por vírgulas) precisa "
    "estar entre aspas."
)
LENGTH_LIMITS = tuple(MAX_LENGTHS.items())


def parse_values(row: dict[str, str]) -> tuple[RowValues | None, list[Problem]]:
    """The values a row declares, or every problem that keeps it from being a request.
    (Written out flat: the bulk import runs it on every row of files of millions.)"""
    get = row.get
    problems: list[Problem] = []
    if get("__extra__"):
        problems.append(Problem("", EXTRA_FIELDS))
    for name, limit in LENGTH_LIMITS:
        if len(get(name, "")) > limit:
            problems.append(Problem(name, f"Texto longo demais (máximo {limit} caracteres)."))
    if problems:
        return None, problems

    transport_date = None
    text = get("transport_date", "")
    if not text:
        problems.append(Problem("transport_date", EMPTY))
    else:
        transport_date = _date_or_none(text)
        if transport_date is None:
            problems.append(
                Problem("transport_date", f"Data inválida: “{text}”; use AAAA-MM-DD ou DD/MM/AAAA.")
            )
    plate = ""
    text = get("vehicle_plate", "")
    if not text:
        problems.append(Problem("vehicle_plate", EMPTY))
    else:
        plate, message = _plate(text)
        if message:
            problems.append(Problem("vehicle_plate", message))
    generator_name = get("generator_name", "")
    if not generator_name:
        problems.append(Problem("generator_name", EMPTY))
    document = ""
    text = get("generator_document", "")
    if not text:
        problems.append(Problem("generator_document", EMPTY))
    else:
        document, message = _document(text)
        if message:
            problems.append(Problem("generator_document", message))
    address = get("worksite_address", "")
    if not address:
        problems.append(Problem("worksite_address", EMPTY))

    coordinates = []
    for name, limit in COORDINATE_LIMITS:
        text = get(name, "")
        if not text:
            problems.append(Problem(name, EMPTY))
            coordinates.append(None)
            continue
        number, message = _coordinate(text, limit)
        if message:
            problems.append(Problem(name, message))
        coordinates.append(number)
    facility_id = None
    if text := get("destination_facility", ""):
        if text.isdigit() and 0 < int(text) < 2**31:
            facility_id = int(text)
        else:
            problems.append(
                Problem(
                    "destination_facility", f"Área de destino inválida: “{text}”; informe o número."
                )
            )
    waste: tuple[tuple[str, Decimal], ...] = ()
    text = get("waste", "")
    if not text:
        problems.append(Problem("waste", EMPTY))
    else:
        waste, waste_problems = _waste_items(text)
        problems.extend(waste_problems)
    if problems:
        return None, problems
    return (
        RowValues(
            transport_date,
            plate,
            get("equipment_code", "").upper(),
            generator_name,
            document,
            address,
            get("worksite_neighbourhood", ""),
            (coordinates[0], coordinates[1]),
            (coordinates[2], coordinates[3]),
            facility_id,
            waste,
            get("description", ""),
        ),
        [],
    )


COORDINATE_LIMITS = (
    ("origin_lon", 180),
    ("origin_lat", 90),
    ("destination_lon", 180),
    ("destination_lat", 90),
)


def request_of(values: RowValues) -> services.IssueRequest:
    origin_point = Point(*values.origin, srid=4326)
    return services.IssueRequest(
        transport_date=values.transport_date,
        vehicle_plate=values.vehicle_plate,
        equipment_code=values.equipment_code,
        origin=origin_point,
        destination=Point(*values.destination, srid=4326),
        waste=[rules.WasteLine(c, v, values.description) for c, v in values.waste],
        generator=services.GeneratorData(values.generator_name, values.generator_document),
        worksite=services.WorksiteData(
            values.worksite_address, origin_point, values.worksite_neighbourhood
        ),
        destination_facility_id=values.destination_facility_id,
    )


def parse_row(row: dict[str, str]) -> tuple[services.IssueRequest | None, list[Problem]]:
    """The request a row declares, or every problem that keeps it from being one."""
    values, problems = parse_values(row)
    if values is None:
        return None, problems
    return request_of(values), []


def finding_problem(finding: rules.Finding) -> Problem:
    name = finding.field or ""
    column = FINDING_COLUMNS.get(name) or ("waste" if name.startswith("waste[") else "")
    return Problem(column, finding.message, finding.code, finding.article)


def error_problem(error: services.CTRError) -> Problem:
    return Problem(FINDING_COLUMNS.get(error.field or "", error.field or ""), error.message)


# --- the whole import ---------------------------------------------------------------------------


def check_size(size: int) -> None:
    if size > MAX_BYTES:
        shown = rules.fmt(round(Decimal(size) / 1024 / 1024, 1))
        raise CSVFileError(
            f"O arquivo tem {shown} MB; o limite é {MAX_BYTES // 1024 // 1024} MB. "
            "Divida-o em arquivos menores."
        )


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

    The rows go through the set-based import (ctr.bulk); `per_row` takes the reference path
    instead, ctr.services.check/issue once per row (one transaction per CTR). Both give the
    same findings and the same CTRs (tests/test_ctr_bulk.py)."""
    check_size(len(data))
    text, encoding = decode(data)
    _, rows, delimiter, ignored = read_rows(text)
    report = ImportReport(delimiter=delimiter, encoding=encoding, ignored_columns=ignored)
    report.dry_run = dry_run
    if per_row:
        for index, (line, row) in enumerate(rows, start=1):
            report.rows.append(import_row(line, row, transporter, user, dry_run))
            if progress:
                progress(index, len(rows))
        return report

    from . import bulk  # it builds on this module

    bulk.import_rows(
        rows,
        transporter,
        user,
        on_results=report.rows.extend,
        dry_run=dry_run,
        progress=(lambda done: progress(done, len(rows))) if progress else None,
    )
    return report


def import_row(line: int, row: dict[str, str], transporter: Transporter, user, dry_run: bool):
    """One row through ctr.services (the per-row reference path)."""
    result = RowResult(line)
    request, problems = parse_row(row)
    if request is not None:
        try:
            if dry_run:
                _, findings = services.check(transporter, request)
                result.findings = findings
                if rules.has_errors(findings):
                    raise services.RuleViolation(findings)
                result.checked = True
            else:
                ctr = services.issue(transporter, user, request)
                result.number = ctr.number
                findings = [rules.Finding(**f) for f in ctr.findings]
                result.findings = findings
            result.warnings = [finding_problem(f) for f in findings]
        except services.RuleViolation as violation:
            result.findings = violation.findings
            errors = [f for f in violation.findings if f.severity == rules.Severity.ERROR]
            problems = [finding_problem(f) for f in errors]
        except services.CTRError as error:
            problems = [error_problem(error)]
    result.problems = problems
    return result


def example_csv() -> str:
    """A small example file (';' separated, decimal comma), the format documented."""
    out = io.StringIO()
    writer = csv.writer(out, delimiter=";", lineterminator="\r\n")
    writer.writerow(COLUMNS)
    writer.writerow(
        [
            "2026-11-30", "ABC1D23", "C-01", "Maria da Obra", "529.982.247-25",
            "Rua das Flores, 10", "Centro", "-45,194836", "-22,814502", "-45,175021",
            "-22,809554", "", "A=2,5; B=0,5", "entulho de alvenaria e madeira",
        ]
    )  # fmt: skip
    writer.writerow(
        [
            "30/11/2026", "ABC-1D23", "", "José Reforma", "11.222.333/0001-81",
            "Av. Brasil, 200", "Jardim", "-45,201000", "-22,802000", "-45,189700",
            "-22,810000", "12", "A=0,8", "",
        ]
    )  # fmt: skip
    return out.getvalue()
