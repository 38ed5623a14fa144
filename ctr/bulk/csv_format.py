"""The CSV format of the CTR import: one row = one CTR (Lei 3.978/2007 art. 3 VI, art. 13).

The columns, what each holds, how a row parses into plain values (RowValues) or problems,
and the result of each row (RowResult, Problem). Both import paths read it: the per-row one
(ctr.bulk.csv_import, through ctr.services) and the set-based one (ctr.bulk.importer); it
imports neither, so the arrows run csv_import -> importer -> csv_format.

The format (docs/transportador.md): a header row with the column names below, ';' or ','
between fields, UTF-8 (with or without BOM) or Latin-1, decimal comma or point.
"""

from __future__ import annotations

import csv
import datetime
import functools
import io
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import NamedTuple

from django.core.exceptions import ValidationError

from config.errors import DomainError

from .. import rules
from ..documents import normalize_document, normalize_plate
from ..forms import DECIMAL_RE, MAX_LINE_VOLUME, MAX_WASTE_LINES, parse_decimal
from ..models import CTRWasteClass

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
    "origin_facility",
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
    # Last: a file written in the order above before the column existed still lines up.
    "origin_facility",
)
# The columns' names in Portuguese: the example file's header; a file
# may use these or the English names above, in any case.
PORTUGUESE_NAMES = {
    "transport_date": "data_transporte",
    "vehicle_plate": "placa",
    "equipment_code": "cacamba",
    "generator_name": "gerador_nome",
    "generator_document": "gerador_documento",
    "worksite_address": "obra_endereco",
    "worksite_neighbourhood": "obra_bairro",
    "origin_lon": "origem_lon",
    "origin_lat": "origem_lat",
    "destination_lon": "destino_lon",
    "destination_lat": "destino_lat",
    "destination_facility": "area_destino",
    "waste": "residuos",
    "description": "descricao",
    "origin_facility": "area_origem",
}
ENGLISH_NAMES = {pt: en for en, pt in PORTUGUESE_NAMES.items()}

# What each column holds, in pt-BR (the import page and the guide show it).
COLUMN_HELP = {
    "transport_date": "Data do transporte: AAAA-MM-DD ou DD/MM/AAAA.",
    "vehicle_plate": "Placa de um veículo ativo do seu cadastro (ABC1D23 ou ABC-1234).",
    "equipment_code": "Código de um equipamento do seu cadastro (opcional).",
    "generator_name": "Nome do gerador (no CTR de saída, do operador da área; vazio depois do "
    "primeiro CTR de saída da área).",
    "generator_document": "CPF ou CNPJ do gerador (com ou sem pontuação); no CTR de saída, do "
    "operador da área, ou vazio como o nome.",
    "worksite_address": "Endereço da obra ou imóvel de origem (vazio no CTR de saída).",
    "worksite_neighbourhood": "Bairro (opcional).",
    "origin_facility": "CTR de saída: número (id) da ATT ou do PEV de onde saem os resíduos "
    "triados (opcional). Só o operador da área o emite (o município, dos seus PEVs).",
    "origin_lon": "Longitude da origem, em graus decimais (oeste é negativo); no CTR de saída, "
    "se vazia, um ponto dentro da área de origem.",
    "origin_lat": "Latitude da origem, em graus decimais (sul é negativo); no CTR de saída, se "
    "vazia, um ponto dentro da área de origem.",
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
    "origin_facility": "origin_facility",
    "waste": "waste",
}
CLASS_ALIASES = {
    "SAÚDE": CTRWasteClass.SAUDE,
    "VOLUMOSOS": CTRWasteClass.VOLUMOSO,
}
WASTE_ITEM_RE = re.compile(r"^\s*([^=:]+?)\s*[=:]\s*(.+?)\s*$")


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


# --- one row -> its values -----------------------------------------------------------------


class RowValues(NamedTuple):
    """What a good row declares, as plain values (the bulk import copies these)."""

    transport_date: datetime.date
    vehicle_plate: str
    equipment_code: str
    generator_name: str
    generator_document: str
    worksite_address: str
    worksite_neighbourhood: str
    origin: tuple[float, float] | None  # None: an onward CTR leaving from inside its facility
    destination: tuple[float, float]
    destination_facility_id: int | None
    waste: tuple[tuple[str, Decimal], ...]  # (class, m³) per line
    description: str
    # An onward CTR: the facility it leaves. Its generator (name and document) is
    # the facility's operator, empty when the row leaves it to the registry; no worksite.
    origin_facility_id: int | None = None


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
ONWARD_WORKSITE = (
    "O CTR de saída (origin_facility) parte de uma área de recebimento, não de uma obra: "
    "deixe este campo vazio."
)


def facility_id(text: str) -> int | None:
    """A facility's id as a CSV cell writes it, or None when it is not one (ASCII digits
    only: '²' is a digit to str.isdigit, not to int)."""
    if text.isascii() and text.isdigit() and 0 < int(text) < 2**31:
        return int(text)
    return None


def origin_facility_problem(text: str) -> Problem:
    return Problem("origin_facility", f"Área de origem inválida: “{text}”; informe o número.")


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
    # An onward CTR: the facility's operator is the generator (declared, or left to the
    # registry: both cells empty), there is no worksite, and the origin may be left empty.
    origin_facility = get("origin_facility", "")
    onward = bool(origin_facility)
    origin_facility_id = None
    if onward:
        origin_facility_id = facility_id(origin_facility)
        if origin_facility_id is None:
            problems.append(origin_facility_problem(origin_facility))
    generator_name = get("generator_name", "")
    text = get("generator_document", "")
    declared = not onward or generator_name or text
    if declared and not generator_name:
        problems.append(Problem("generator_name", EMPTY))
    document = ""
    if declared and not text:
        problems.append(Problem("generator_document", EMPTY))
    elif text:
        document, message = _document(text)
        if message:
            problems.append(Problem("generator_document", message))
    address = get("worksite_address", "")
    if onward:
        for name in ("worksite_address", "worksite_neighbourhood"):
            if get(name, ""):
                problems.append(Problem(name, ONWARD_WORKSITE))
    elif not address:
        problems.append(Problem("worksite_address", EMPTY))

    coordinates = []
    for index, (name, limit) in enumerate(COORDINATE_LIMITS):
        text = get(name, "")
        if not text:
            # The origin of an onward CTR defaults to a point inside its facility.
            if not (onward and index < 2 and not get(COORDINATE_LIMITS[1 - index][0], "")):
                problems.append(Problem(name, EMPTY))
            coordinates.append(None)
            continue
        number, message = _coordinate(text, limit)
        if message:
            problems.append(Problem(name, message))
        coordinates.append(number)
    destination_facility_id = None
    if text := get("destination_facility", ""):
        destination_facility_id = facility_id(text)
        if destination_facility_id is None:
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
            None if coordinates[0] is None else (coordinates[0], coordinates[1]),
            (coordinates[2], coordinates[3]),
            destination_facility_id,
            waste,
            get("description", ""),
            origin_facility_id,
        ),
        [],
    )


COORDINATE_LIMITS = (
    ("origin_lon", 180),
    ("origin_lat", 90),
    ("destination_lon", 180),
    ("destination_lat", 90),
)


def error_problem(error: DomainError) -> Problem:
    """A row refused before any rule runs (ctr.services' CTRError: an unknown facility, an
    onward CTR's origin or generator) as the report shows it."""
    return Problem(FINDING_COLUMNS.get(error.field or "", error.field or ""), error.message)


def finding_problem(finding: rules.Finding) -> Problem:
    name = finding.field or ""
    column = FINDING_COLUMNS.get(name) or ("waste" if name.startswith("waste[") else "")
    return Problem(column, finding.message, finding.code, finding.article)


def example_table(rows: list[list[str]] | None = None) -> tuple[list[str], list[list[str]]]:
    """The header and rows of a small example file (decimal comma, Portuguese column names),
    the format documented: `rows` (csv_import.example_rows, a transporter's own), else rows
    of the demo world. The transporter's, so origin_facility stays empty (docs/transportador.md
    shows an onward row, which only the facility's operator or the municipality may import)."""
    header = [PORTUGUESE_NAMES[name] for name in COLUMNS]
    if rows:
        return header, rows
    return header, [
        [
            "2026-11-30", "ABC1D23", "C-01", "Maria da Obra", "529.982.247-25",
            "Rua das Flores, 10", "Centro", "-45,194836", "-22,814502", "-45,175021",
            "-22,809554", "", "A=2,5; B=0,5", "entulho de alvenaria e madeira", "",
        ],
        [
            "30/11/2026", "ABC-1D23", "", "José Reforma", "11.222.333/0001-81",
            "Av. Brasil, 200", "Jardim", "-45,201000", "-22,802000", "-45,189700",
            "-22,810000", "12", "A=0,8", "", "",
        ],
    ]  # fmt: skip


def example_csv(rows: list[list[str]] | None = None) -> str:
    """example_table as the text of a file, ';' separated."""
    header, body = example_table(rows)
    out = io.StringIO()
    writer = csv.writer(out, delimiter=";", lineterminator="\r\n")
    writer.writerow(header)
    writer.writerows(body)
    return out.getvalue()
