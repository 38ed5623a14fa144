"""Import many CTRs from a CSV file: one row = one CTR (Lei 3.978/2007 art. 3 VI, art. 13).

Every row is parsed and checked; a row with any problem (a value that does not parse, or a
rule of the catalogue broken with severity error) issues nothing and is reported with every
problem; each good row is issued by ctr.services.issue, one transaction per CTR, so numbers
stay gap-free. No request object here: the web page and the `import_ctrs` command share it.

The format (docs/transportador.md): a header row with the column names below, ';' or ','
between fields, UTF-8 (with or without BOM) or Latin-1, decimal comma or point.
"""

from __future__ import annotations

import csv
import datetime
import io
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal

from django.contrib.gis.geos import Point
from django.core.exceptions import ValidationError

from . import rules, services
from .documents import normalize_document, normalize_plate
from .forms import MAX_LINE_VOLUME, MAX_WASTE_LINES, parse_decimal
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


class CSVFileError(Exception):
    """The file as a whole cannot be read: nothing is issued. `message` is in Portuguese."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


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
        raise CSVFileError(
            "O arquivo não é um CSV de texto (parece um arquivo binário, como uma planilha "
            ".xlsx). Na planilha, use “Salvar como” e escolha CSV."
        )
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        # Latin-1 decodes any byte: Excel in Portuguese saves CSV in Windows-1252/Latin-1.
        return data.decode("latin-1"), "latin-1"


def sniff_delimiter(header_line: str) -> str:
    """';' or ',', whichever separates the header. The header, not the data: a decimal comma
    in the data would fool a sniffer that counts commas in the rows."""
    return ";" if header_line.count(";") >= header_line.count(",") else ","


def read_rows(text: str) -> tuple[list[str], list[tuple[int, dict[str, str]]], str, list[str]]:
    """(columns, [(line, row)], delimiter, ignored columns) or CSVFileError."""
    first_line = text.lstrip("\ufeff").split("\n", 1)[0]
    delimiter = sniff_delimiter(first_line)
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff"), newline=""), delimiter=delimiter)
    try:
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
                f"(separados por “{delimiter}”)."
            )
        ignored = [c for c in columns if c and c not in COLUMNS]
        rows: list[tuple[int, dict[str, str]]] = []
        line = 1
        for cells in reader:
            line += 1
            if not any(cell.strip() for cell in cells):
                continue  # a blank line (spreadsheets leave some at the end)
            if len(rows) >= MAX_ROWS:
                raise CSVFileError(
                    f"O arquivo tem mais de {MAX_ROWS} linhas de CTR; divida-o em arquivos menores."
                )
            row = {
                name: (cells[i].strip() if i < len(cells) else "")
                for i, name in enumerate(columns)
                if name
            }
            if len(cells) > len(columns) and any(c.strip() for c in cells[len(columns) :]):
                row["__extra__"] = "1"
            rows.append((line, row))
    except csv.Error as error:
        raise CSVFileError(f"O arquivo não pôde ser lido como CSV: {error}.") from None
    if not rows:
        raise CSVFileError("O arquivo só tem o cabeçalho: nenhuma linha de CTR.")
    return columns, rows, delimiter, ignored


# --- one row -> an IssueRequest ----------------------------------------------------------------


def parse_date(text: str) -> datetime.date:
    for fmt in ("%Y-%m-%d", "%d/%m/%Y"):
        try:
            return datetime.datetime.strptime(text.strip(), fmt).date()
        except ValueError:
            continue
    raise ValueError(text)


def parse_waste(text: str, description: str) -> tuple[list[rules.WasteLine], list[Problem]]:
    """'A=2,5; B=0,5' -> waste lines. Items are separated by ';' or '|'."""
    lines: list[rules.WasteLine] = []
    problems: list[Problem] = []
    items = [item for item in re.split(r"[;|]", text) if item.strip()]
    if not items:
        return [], [Problem("waste", "Informe ao menos um resíduo no formato CLASSE=VOLUME.")]
    if len(items) > MAX_WASTE_LINES:
        return [], [Problem("waste", f"No máximo {MAX_WASTE_LINES} resíduos por CTR.")]
    valid_classes = ", ".join(CTRWasteClass.values)
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
        if waste_class not in CTRWasteClass.values:
            problems.append(
                Problem("waste", f"Classe de resíduo desconhecida: “{name}”; use {valid_classes}.")
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
        if volume != volume.quantize(Decimal("0.001")):
            problems.append(
                Problem("waste", f"Volume com mais de 3 casas decimais em “{item.strip()}”.")
            )
            continue
        if waste_class in CTRWasteClass.values:
            lines.append(rules.WasteLine(waste_class, volume, description))
    return lines, problems


def parse_row(row: dict[str, str]) -> tuple[services.IssueRequest | None, list[Problem]]:
    """The request a row declares, or every problem that keeps it from being one."""
    problems: list[Problem] = []

    def required(name: str) -> str:
        value = row.get(name, "")
        if not value:
            problems.append(Problem(name, "Campo obrigatório vazio."))
        return value

    if row.get("__extra__"):
        problems.append(
            Problem(
                "",
                "A linha tem mais campos que o cabeçalho: um valor que contém o separador "
                "(como a vírgula decimal de -45,19 num arquivo separado por vírgulas) precisa "
                "estar entre aspas.",
            )
        )
    for name, limit in MAX_LENGTHS.items():
        if len(row.get(name, "")) > limit:
            problems.append(Problem(name, f"Texto longo demais (máximo {limit} caracteres)."))
    if problems:
        return None, problems

    transport_date = None
    if text := required("transport_date"):
        try:
            transport_date = parse_date(text)
        except ValueError:
            problems.append(
                Problem("transport_date", f"Data inválida: “{text}”; use AAAA-MM-DD ou DD/MM/AAAA.")
            )
    plate = ""
    if text := required("vehicle_plate"):
        try:
            plate = normalize_plate(text)
        except ValidationError as error:
            problems.append(Problem("vehicle_plate", error.messages[0]))
    generator_name = required("generator_name")
    document = ""
    if text := required("generator_document"):
        try:
            document = normalize_document(text)
        except ValidationError as error:
            problems.append(Problem("generator_document", error.messages[0]))
    address = required("worksite_address")

    def coordinate(name: str, limit: int) -> float | None:
        text = required(name)
        if not text:
            return None
        try:
            value = parse_decimal(text)
        except ValueError:
            problems.append(
                Problem(name, f"Coordenada inválida: “{text}”; informe graus decimais.")
            )
            return None
        if abs(value) > limit:
            problems.append(Problem(name, f"Coordenada fora do intervalo de -{limit} a {limit}."))
            return None
        return float(value)

    origin = [coordinate("origin_lon", 180), coordinate("origin_lat", 90)]
    destination = [coordinate("destination_lon", 180), coordinate("destination_lat", 90)]
    facility_id = None
    if text := row.get("destination_facility", ""):
        if text.isdigit() and 0 < int(text) < 2**31:
            facility_id = int(text)
        else:
            problems.append(
                Problem(
                    "destination_facility", f"Área de destino inválida: “{text}”; informe o número."
                )
            )
    waste: list[rules.WasteLine] = []
    if text := required("waste"):
        waste, waste_problems = parse_waste(text, row.get("description", ""))
        problems.extend(waste_problems)
    if problems:
        return None, problems
    origin_point = Point(*origin, srid=4326)
    return (
        services.IssueRequest(
            transport_date=transport_date,
            vehicle_plate=plate,
            equipment_code=row.get("equipment_code", "").upper(),
            origin=origin_point,
            destination=Point(*destination, srid=4326),
            waste=waste,
            generator=services.GeneratorData(generator_name, document),
            worksite=services.WorksiteData(
                address, origin_point, row.get("worksite_neighbourhood", "")
            ),
            destination_facility_id=facility_id,
        ),
        [],
    )


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
) -> ImportReport:
    """Parse `data` (the file's bytes), then issue a CTR for each good row (or, in a dry run,
    only check it). Raises CSVFileError when the file as a whole is unusable: too big, empty,
    binary, without the required columns or with too many rows; then nothing is issued."""
    check_size(len(data))
    text, encoding = decode(data)
    _, rows, delimiter, ignored = read_rows(text)
    report = ImportReport(delimiter=delimiter, encoding=encoding, ignored_columns=ignored)
    report.dry_run = dry_run
    for index, (line, row) in enumerate(rows, start=1):
        result = RowResult(line)
        request, problems = parse_row(row)
        if request is not None:
            try:
                if dry_run:
                    _, findings = services.check(transporter, request)
                    if rules.has_errors(findings):
                        raise services.RuleViolation(findings)
                    result.checked = True
                else:
                    ctr = services.issue(transporter, user, request)
                    result.number = ctr.number
                    findings = [rules.Finding(**f) for f in ctr.findings]
                result.warnings = [finding_problem(f) for f in findings]
            except services.RuleViolation as violation:
                errors = [f for f in violation.findings if f.severity == rules.Severity.ERROR]
                problems = [finding_problem(f) for f in errors]
            except services.CTRError as error:
                problems = [error_problem(error)]
        result.problems = problems
        report.rows.append(result)
        if progress:
            progress(index, len(rows))
    return report


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
