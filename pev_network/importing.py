"""Import the licensed receiving network (Lei 3.978/2007 art. 14 §2) from geodata files.

GeoJSON, GeoPackage and (zipped) Shapefile, read with geopandas + pyogrio. The import is all or
nothing: every feature is validated first and every problem is reported (feature number, field,
reason); a file with any problem is refused whole. A clean file is written in one transaction.
Plain functions: the caller (a management command, an admin action) renders the report and the
progress; nothing here prints.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import logging
import math
import re
import struct
import unicodedata
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path, PurePosixPath
from typing import NoReturn

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import shapely
from django.contrib.gis.geos import GEOSGeometry
from django.db import DatabaseError, transaction
from pyogrio.errors import DataLayerError, DataSourceError
from pyproj import CRS, Geod
from pyproj.exceptions import CRSError
from shapely.errors import GEOSException
from shapely.geometry import MultiPolygon, Polygon
from shapely.geometry.base import BaseGeometry

from config.br import br_number

from .geometry_messages import validity_reason_pt
from .models import (
    FacilityKind,
    FacilityLicense,
    LicenseStatus,
    ReceivingFacility,
    WasteClass,
    default_accepted_classes,
)
from .services import NetworkError, municipality_id_at

# Our attribute names, in the order the docs list them. `--field OURS=THEIRS` maps them.
FIELDS: tuple[str, ...] = (
    "code",
    "kind",
    "name",
    "operator",
    "address",
    "accepted_classes",
    "capacity_m3_per_day",
    "license_number",
    "license_issuer",
    "license_valid_from",
    "license_valid_until",
    "license_status",
    "license_status_since",
)
GEOMETRY_FIELD = "geometry"

# The column names Brazilian open data uses for each field (municipal registries of ecopontos,
# spreadsheets of licensed areas, CETESB-style licence tables), compared after _column_key:
# lower case, no accents, "do/da/de" dropped, spaces and punctuation as "_" ("Nome do
# Ecoponto" -> nome_ecoponto, "Nº Licença" -> no_licenca). Our own name comes first, then these
# in order; the first present wins, and `--field` overrides them all. Each name belongs to one
# field only. "classe" is the waste class (CONAMA 307: A, B, C, D), not the kind of area.
# Shapefile cuts names to 10 characters: the unambiguous cuts of ours are here too.
COLUMN_ALIASES: dict[str, tuple[str, ...]] = {
    "code": (
        "codigo", "cod", "codigo_ecoponto", "cod_ecoponto", "codigo_pev", "cod_pev",
        "codigo_area", "cod_area", "codigo_unidade", "cod_unidade", "id_ecoponto", "id_pev",
        "cadastro", "numero_cadastro", "no_cadastro",
    ),
    "kind": (
        "tipo", "tipo_area", "tipo_unidade", "tipo_equipamento", "tipo_instalacao",
        "categoria", "classificacao", "modalidade", "tipologia", "equipamento",
    ),
    "name": (
        "nome", "nome_ecoponto", "nome_pev", "nome_area", "nome_unidade", "nome_equipamento",
        "nome_local", "denominacao", "identificacao", "ecoponto", "pev", "unidade",
    ),
    "operator": (
        "operador", "operadora", "responsavel", "empresa", "razao_social", "gestor",
        "gestora", "administrador", "administracao", "concessionaria", "empreendedor",
    ),
    "address": (
        "endereco", "endereco_completo", "logradouro", "localizacao", "local",
    ),
    "accepted_classes": (
        "accepted_c", "classes", "classe", "classes_aceitas", "classe_residuo",
        "classes_residuos", "residuos_aceitos", "tipos_residuo",
    ),
    "capacity_m3_per_day": (
        "capacity_m", "capacidade", "capacidade_m3_dia", "capacidade_m3", "capacidade_diaria",
        "capacidade_dia",
    ),
    "license_number": (
        "license_nu", "licenca", "numero_licenca", "no_licenca", "n_licenca", "num_licenca",
        "licenca_ambiental", "licenca_operacao", "lo", "numero_lo", "no_lo",
    ),
    "license_issuer": (
        "license_is", "orgao_emissor", "emissor", "orgao_licenciador", "orgao_ambiental",
        "orgao",
    ),
    "license_valid_from": (
        "license_va", "inicio_validade", "validade_inicio", "valida_desde", "data_emissao",
        "emissao", "data_licenca", "data_inicio",
    ),
    # "Validade" on a Brazilian licence is the day it ends.
    "license_valid_until": (
        "validade", "fim_validade", "validade_fim", "valida_ate", "vencimento",
        "data_vencimento", "data_validade", "data_fim",
    ),
    "license_status": (
        "license_st", "situacao", "status", "situacao_licenca", "status_licenca",
    ),
    "license_status_since": (
        "situacao_desde", "status_desde", "data_situacao", "data_status",
    ),
}  # fmt: skip

# A CSV of points, as municipal portals publish their ecopontos: the coordinate columns (same
# comparison as above), in degrees; a column named like these holds WKT and GDAL reads it.
LONLAT_ALIASES: dict[str, tuple[str, ...]] = {
    "longitude": ("longitude", "lon", "long", "lng", "x", "coord_x", "coordenada_x"),
    "latitude": ("latitude", "lat", "y", "coord_y", "coordenada_y"),
}
WKT_COLUMNS = frozenset({"wkt", "geometry", "geometria", "geom", "the_geom"})

logger = logging.getLogger(__name__)

MB = 1024 * 1024
# Limits of what is read at all: the file, a zip once inflated (and how much it may inflate:
# a Shapefile compresses ~3-10 times; a zip bomb, hundreds), the vertices of one feature (a
# receiving area is the outline of a plot, drawn with tens or hundreds of vertices).
MAX_FILE_BYTES = 200 * MB
MAX_INFLATED_BYTES = 200 * MB
MAX_COMPRESSION_RATIO = 100
RATIO_CHECK_FROM_BYTES = 10 * MB
MAX_VERTICES_PER_FEATURE = 100_000

# Accented, lower-case or spaced variants are normalised first (see _token).
KIND_ALIASES: dict[str, str] = {
    "PEV": FacilityKind.PEV,
    "ECOPONTO": FacilityKind.PEV,
    "PONTO DE ENTREGA VOLUNTARIA": FacilityKind.PEV,
    "ATT": FacilityKind.ATT,
    "TRANSBORDO": FacilityKind.ATT,
    "AREA DE TRANSBORDO E TRIAGEM": FacilityKind.ATT,
    "AREA DE TRANSBORDO": FacilityKind.ATT,
    "AREA DE TRIAGEM E TRANSBORDO": FacilityKind.ATT,
    "RECYCLING": FacilityKind.RECYCLING,
    "RECICLAGEM": FacilityKind.RECYCLING,
    "AREA DE RECICLAGEM": FacilityKind.RECYCLING,
    "USINA DE RECICLAGEM": FacilityKind.RECYCLING,
    "CENTRAL DE RECICLAGEM": FacilityKind.RECYCLING,
    "LANDFILL": FacilityKind.LANDFILL,
    "ATERRO": FacilityKind.LANDFILL,
    "ATERRO DE RCC": FacilityKind.LANDFILL,
    "ATERRO DE INERTES": FacilityKind.LANDFILL,
    "ATERRO DE RESIDUOS DA CONSTRUCAO CIVIL": FacilityKind.LANDFILL,
}
STATUS_ALIASES: dict[str, str] = {
    "ACTIVE": LicenseStatus.ACTIVE,
    "ATIVA": LicenseStatus.ACTIVE,
    "ATIVO": LicenseStatus.ACTIVE,
    # How municipal registries write a working facility in their "Situação" column.
    "VIGENTE": LicenseStatus.ACTIVE,
    "VALIDA": LicenseStatus.ACTIVE,
    "REGULAR": LicenseStatus.ACTIVE,
    "EM FUNCIONAMENTO": LicenseStatus.ACTIVE,
    "EM OPERACAO": LicenseStatus.ACTIVE,
    "FUNCIONANDO": LicenseStatus.ACTIVE,
    "INTERDITADA": LicenseStatus.SUSPENDED,
    "INTERDITADO": LicenseStatus.SUSPENDED,
    "SUSPENDED": LicenseStatus.SUSPENDED,
    "SUSPENSA": LicenseStatus.SUSPENDED,
    "SUSPENSO": LicenseStatus.SUSPENDED,
    "REVOKED": LicenseStatus.REVOKED,
    "CASSADA": LicenseStatus.REVOKED,
    "CASSADO": LicenseStatus.REVOKED,
    "REVOGADA": LicenseStatus.REVOKED,
    "REVOGADO": LicenseStatus.REVOKED,
}
CLASS_ALIASES: dict[str, str] = {str(c): str(c) for c in WasteClass} | {
    "VOLUMOSOS": WasteClass.VOLUMOSO
}

ISO_DATE = re.compile(
    # A date-typed column read as text may carry a midnight time (GeoPackage DATETIME).
    r"^(\d{4})-(\d{2})-(\d{2})(?:[T ]00:00(?::00(?:\.0+)?)?(?:Z|[+-]00:?00)?)?$"
)
BR_DATE = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{4})$")

# Geodesic areas in m² on the WGS 84 ellipsoid, for the report of what a repair changed.
GEOD = Geod(ellps="WGS84")

# (stage, done, total): the caller draws the progress bar.
Progress = Callable[[str, int, int], None]
STAGE_VALIDATE = "validando"
STAGE_WRITE = "gravando"


@dataclass(frozen=True)
class Problem:
    """One reason to refuse the file. `number` is the 1-based feature number, None for the file."""

    number: int | None
    field: str | None
    reason: str
    code: str | None = None
    column: str | None = None

    def __str__(self) -> str:
        if self.number is None:
            where = "arquivo"
        else:
            where = f"feição {self.number}" + (f" (código {self.code})" if self.code else "")
        if self.field:
            where += f", campo '{self.field}'"
            if self.column and self.column != self.field:
                where += f" (coluna '{self.column}')"
        return f"{where}: {self.reason}"


@dataclass(frozen=True)
class GeometryFix:
    """What --fix-invalid changed in one feature."""

    number: int
    description: str
    code: str | None = None

    def __str__(self) -> str:
        where = f"feição {self.number}" + (f" (código {self.code})" if self.code else "")
        return f"{where}: {self.description}"


@dataclass(frozen=True)
class LicenseData:
    number: str
    issuer: str
    valid_from: datetime.date
    valid_until: datetime.date | None
    status: str
    status_since: datetime.date | None


@dataclass
class FacilityData:
    """A validated feature, ready to be written."""

    number: int
    code: str | None
    kind: str
    name: str
    operator: str
    address: str
    accepted_classes: list[str]
    capacity_m3_per_day: Decimal | None
    area: MultiPolygon  # EPSG:4326
    license: LicenseData | None


@dataclass
class ImportReport:
    source: str
    dry_run: bool
    layer: str | None = None
    source_crs: str | None = None
    read: int = 0
    created: int = 0
    updated: int = 0
    refused: int = 0
    licenses_created: int = 0
    licenses_updated: int = 0
    fixes: list[GeometryFix] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    # Our field -> (the file's column, how it was chosen: "--field", "mesmo nome", "sinônimo").
    columns: dict[str, tuple[str, str]] = field(default_factory=dict)
    unused_columns: list[str] = field(default_factory=list)
    # A CSV of points: its (longitude, latitude) columns.
    coordinates: tuple[str, str] | None = None

    @property
    def fixed(self) -> int:
        return len(self.fixes)

    def column_lines(self) -> list[str]:
        if not self.columns and not self.unused_columns:
            return []
        lines = []
        if self.coordinates:
            lon, lat = self.coordinates
            lines.append(
                f"Coordenadas: longitude <- '{lon}', latitude <- '{lat}' ({self.source_crs})"
            )
        lines.append("Colunas usadas (campo <- coluna do arquivo):")
        lines += [
            f"  {ours} <- '{theirs}' ({how})"
            for ours in FIELDS
            if ours in self.columns
            for theirs, how in [self.columns[ours]]
        ]
        if self.unused_columns:
            lines.append("Colunas ignoradas: " + ", ".join(f"'{c}'" for c in self.unused_columns))
        return lines

    def summary_lines(self) -> list[str]:
        origin = f"Arquivo: {self.source}"
        details = [
            f"camada '{self.layer}'" if self.layer else "",
            f"SRC {self.source_crs}" if self.source_crs else "",
        ]
        details = [d for d in details if d]
        if details:
            origin += f" ({', '.join(details)})"
        verb = "a criar" if self.dry_run else "criadas"
        verb_updated = "a atualizar" if self.dry_run else "atualizadas"
        lines = [
            origin,
            *self.column_lines(),
            f"Feições lidas: {self.read}",
            f"Áreas {verb}: {self.created}",
            f"Áreas {verb_updated}: {self.updated}",
            f"Feições recusadas: {self.refused}",
            f"Geometrias corrigidas: {self.fixed}",
        ]
        lines += [f"  {fix}" for fix in self.fixes]
        if self.licenses_created or self.licenses_updated:
            lines.append(
                f"Licenças {verb}: {self.licenses_created}; {verb_updated}: {self.licenses_updated}"
            )
        if self.problems:
            lines.append("Arquivo recusado: nada foi gravado.")
        elif self.dry_run:
            lines.append("nada foi gravado (--dry-run)")
        return lines

    def summary(self) -> str:
        return "\n".join(self.summary_lines())


class ImportRefused(NetworkError):
    """The file was refused whole; `report.problems` lists every reason."""

    def __init__(self, report: ImportReport):
        self.report = report
        features = {p.number for p in report.problems if p.number is not None}
        header = f"Arquivo recusado, nada foi importado: {len(report.problems)} problema(s)"
        if features:
            header += f" em {len(features)} feição(ões)"
        lines = [header + "."] + [str(p) for p in report.problems]
        super().__init__("\n".join(lines), "import_refused")


# --- options ---------------------------------------------------------------------------------


def parse_field_mappings(specs: list[str] | None) -> dict[str, str]:
    """`["name=NOME", "kind=TIPO"]` -> `{"name": "NOME", "kind": "TIPO"}`. An empty column
    (`license_status=`) means: do not read that field, even if a column looks like it."""
    mapping: dict[str, str] = {}
    for spec in specs or []:
        ours, sep, theirs = spec.partition("=")
        ours, theirs = ours.strip(), theirs.strip()
        if not sep or not ours:
            raise NetworkError(
                f"--field '{spec}': use NOSSO=DELES, por exemplo --field name=NOME.", "bad_option"
            )
        if ours not in FIELDS:
            raise NetworkError(
                f"--field '{spec}': campo desconhecido '{ours}' (campos: {', '.join(FIELDS)}).",
                "bad_option",
            )
        mapping[ours] = theirs
    return mapping


def normalize_kind(value: str) -> str | None:
    """The FacilityKind for a kind name or one of its Portuguese aliases; None if unknown."""
    return KIND_ALIASES.get(_token(value))


# --- the service -----------------------------------------------------------------------------


def import_facilities(
    path: str | Path,
    *,
    layer: str | None = None,
    field_map: dict[str, str] | None = None,
    kind: str | None = None,
    buffer_m: float | None = None,
    fix_invalid: bool = False,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> ImportReport:
    """Validate every feature of the file and write them all in one transaction, or nothing.

    Raises ImportRefused (with the report) when the file or any feature has a problem.
    With `dry_run` the same writes run and are rolled back, so the counts are the real ones.
    """
    field_map = dict(field_map or {})
    for ours in field_map:
        if ours not in FIELDS:
            raise NetworkError(f"Campo desconhecido '{ours}'.", "bad_option")
    default_kind = None
    if kind:
        default_kind = normalize_kind(kind)
        if default_kind is None:
            raise NetworkError(f"--kind: {_unknown_kind_reason(kind)}", "bad_option")
    if buffer_m is not None and not (math.isfinite(buffer_m) and buffer_m > 0):
        raise NetworkError("--buffer-m: informe um raio positivo, em metros.", "bad_option")

    report = ImportReport(source=str(path), dry_run=dry_run, layer=layer)
    gdf = _read(Path(path), layer, report, field_map.get("code", "code"))
    report.read = len(gdf)
    columns = _resolve_columns(gdf, field_map, default_kind, report)
    if report.problems:
        _refuse(report)

    areas = _validate_geometries(gdf, buffer_m, fix_invalid, columns.get("code"), report)
    if report.problems and any(p.number is None for p in report.problems):
        _refuse(report)
    rows = _validate_attributes(gdf, columns, default_kind, areas, report, progress)
    _check_duplicates(rows, report)
    if report.problems:
        _refuse(report)

    try:
        with transaction.atomic():
            _write(rows, report, progress)
            if dry_run:
                # Same code path as a real import, so a dry run also meets the database's
                # constraints; then nothing stays.
                transaction.set_rollback(True)
    except DatabaseError as exc:
        report.problems.append(Problem(None, None, f"erro do banco de dados: {exc}"))
        report.created = report.updated = 0
        report.licenses_created = report.licenses_updated = 0
        _refuse(report)
    return report


def _refuse(report: ImportReport) -> NoReturn:
    report.problems.sort(key=lambda p: -1 if p.number is None else p.number)
    numbers = {p.number for p in report.problems}
    report.refused = report.read if None in numbers else len(numbers)
    raise ImportRefused(report)


# --- reading ---------------------------------------------------------------------------------


def _read(
    path: Path, layer: str | None, report: ImportReport, code_column: str = "code"
) -> gpd.GeoDataFrame:
    def refuse(reason: str) -> NoReturn:
        report.problems.append(Problem(None, None, reason))
        _refuse(report)

    if not path.exists():
        refuse(f"arquivo não encontrado: {path}")
    _check_file(path, refuse)
    if path.suffix.lower() == ".csv":
        points = _read_lonlat_csv(path, report, refuse)
        if points is not None:
            return points
    try:
        # pyogrio opens a .zip with a Shapefile inside directly (/vsizip/).
        layers = [str(name) for name, _ in pyogrio.list_layers(path)]
        if layer is None and len(layers) > 1:
            refuse(
                f"o arquivo tem {len(layers)} camadas ({', '.join(layers)}): escolha com --layer"
            )
        if layer is not None and layer not in layers:
            refuse(f"camada '{layer}' não encontrada (camadas: {', '.join(layers)})")
        # Dates as text: we parse them ourselves, so that a bad date is reported, not guessed.
        gdf = pyogrio.read_dataframe(path, layer=layer, datetime_as_string=True)
    except (DataSourceError, DataLayerError) as exc:
        refuse(f"não foi possível ler o arquivo ({exc}); use GeoJSON, GeoPackage ou Shapefile")
    except GEOSException:
        # A geometry GEOS cannot even build (an unclosed ring, NaN where a ring closes): find
        # which features, so that the refusal names them.
        _refuse_unreadable_geometries(path, layer, report, code_column)
    except ImportRefused:
        raise
    except Exception as exc:  # any other failure of GDAL/pyogrio on a malformed file
        logger.warning("Falha ao ler %s: %s: %s", path.name, type(exc).__name__, exc)
        refuse(
            f"não foi possível ler o arquivo ({type(exc).__name__}: {exc}); use GeoJSON, "
            "GeoPackage ou Shapefile"
        )
    report.layer = layer or (layers[0] if layers else None)
    if not isinstance(gdf, gpd.GeoDataFrame) or gdf.geometry.name not in gdf.columns:
        refuse(
            "o arquivo não tem geometria: use GeoJSON, GeoPackage ou Shapefile com os polígonos "
            "das áreas, ou um CSV com colunas de longitude e latitude (em graus) ou WKT"
        )
    if gdf.empty:
        refuse("o arquivo (ou a camada) não tem feições")
    if gdf.crs is None:
        # A Shapefile without .prj or a GeoPackage layer without SRS: coordinates in an unknown
        # system would land anywhere. (A GeoJSON without "crs" is EPSG:4326 by RFC 7946.)
        refuse(
            "sistema de referência (SRC) ausente: inclua o .prj do Shapefile ou defina o SRC da "
            "camada"
        )
    report.source_crs = gdf.crs.to_string()
    return gdf


def _decode(raw: bytes) -> str:
    """UTF-8 (with or without BOM), else Windows-1252 (the "CSV" of Excel in Portuguese), else
    Latin-1 (which decodes any byte)."""
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    return raw.decode("latin-1")


def _coordinate(text: str) -> float | None:
    """'-22,81' or '-22.81' -> -22.81; None if it is not a finite number."""
    value = text.strip()
    if "," in value and "." not in value:
        value = value.replace(",", ".")
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _read_lonlat_csv(
    path: Path, report: ImportReport, refuse: Callable[[str], NoReturn]
) -> gpd.GeoDataFrame | None:
    """A CSV of points with longitude and latitude columns (degrees; the CRS of a .prj beside
    it, else EPSG:4326: SIRGAS 2000 is the same to the centimetre), separated by ';', ',' or
    tab, decimal comma or point. None when the file has no such columns, or has a WKT column
    (GDAL reads that one, with its .prj). A bad coordinate is a problem of that feature."""
    text = _decode(path.read_bytes())
    header = text.lstrip().split("\n", 1)[0]
    delimiter = max(";,\t", key=header.count)
    try:
        names = [n.strip() for n in next(csv.reader([header], delimiter=delimiter), [])]
    except csv.Error:
        return None  # GDAL says what it makes of it
    keys: dict[str, str] = {}
    for name in names:
        keys.setdefault(_column_key(name), name)
    if WKT_COLUMNS & keys.keys():
        return None
    lon = next((keys[a] for a in LONLAT_ALIASES["longitude"] if a in keys), None)
    lat = next((keys[a] for a in LONLAT_ALIASES["latitude"] if a in keys), None)
    if lon is None or lat is None:
        return None
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        refuse(f"coluna(s) repetida(s) no cabeçalho do CSV: {', '.join(repeated)}")
    crs: CRS = CRS.from_epsg(4326)
    prj = path.with_suffix(".prj")
    if prj.is_file():
        try:
            crs = CRS.from_wkt(prj.read_text(errors="replace"))
        except CRSError:
            refuse(f"o arquivo {prj.name} ao lado do CSV não descreve um SRC válido")
    try:
        rows = list(csv.reader(io.StringIO(text.lstrip()), delimiter=delimiter))
    except csv.Error as exc:  # a field over the csv module's limit, a NUL byte
        refuse(f"CSV ilegível ({exc})")
    rows = [r for r in rows if any(cell.strip() for cell in r)]
    report.coordinates = (lon, lat)
    report.source_crs = crs.to_string()
    i_lon, i_lat = names.index(lon), names.index(lat)
    records: list[dict[str, str]] = []
    points: list[shapely.Point | None] = []
    for number, row in enumerate(rows[1:], start=1):
        if len(row) != len(names):
            report.problems.append(
                Problem(
                    number,
                    GEOMETRY_FIELD,
                    f"a linha tem {len(row)} campo(s) e o cabeçalho, {len(names)} (separador "
                    f"'{delimiter}'; um valor com o separador vai entre aspas)",
                )
            )
            row = (row + [""] * len(names))[: len(names)]
        records.append({n: v for n, v in zip(names, row, strict=True) if n not in (lon, lat)})
        x, y = _coordinate(row[i_lon]), _coordinate(row[i_lat])
        for value, column, parsed, bound in ((row[i_lon], lon, x, 180), (row[i_lat], lat, y, 90)):
            reason = None
            if parsed is None:
                reason = f"coordenada inválida '{value}'" if value.strip() else "sem coordenada"
            elif crs.is_geographic and abs(parsed) > bound:
                reason = (
                    f"coordenada '{value}' fora de -{bound} a {bound} graus (coordenadas "
                    "projetadas, como UTM, precisam do .prj do seu SRC ao lado do CSV)"
                )
            if reason:
                report.problems.append(Problem(number, GEOMETRY_FIELD, reason, column=column))
                x = y = None
        points.append(shapely.Point(x, y) if x is not None and y is not None else None)
    if not records:
        refuse("o arquivo não tem feições (só o cabeçalho)")
    report.layer = None
    columns = [n for n in names if n not in (lon, lat)]
    return gpd.GeoDataFrame(records, columns=columns, geometry=points, crs=crs)


def _thousands(number: int) -> str:
    return br_number(number)


def _megabytes(size: int) -> str:
    return f"{br_number(size / MB, 1)} MB"


def _check_file(path: Path, refuse: Callable[[str], NoReturn]) -> None:
    """Before GDAL opens the file: its size, a zip's contents, a GeoJSON's declared CRS."""
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        refuse(f"arquivo de {_megabytes(size)}; o limite é {_megabytes(MAX_FILE_BYTES)}")
    if path.suffix.lower() == ".zip" or zipfile.is_zipfile(path):
        _check_zip(path, refuse)
        return
    with path.open("rb") as file:
        head = file.read(1024)
    if head.removeprefix(b"\xef\xbb\xbf").lstrip().startswith(b"{"):
        reason = _geojson_crs_problem(path.read_bytes())
        if reason:
            refuse(reason)


def _check_zip(path: Path, refuse: Callable[[str], NoReturn]) -> None:
    """A zip is opened by GDAL (/vsizip/) only once its listing says it is safe to inflate: no
    absolute or '..' member names, a bounded inflated size and compression ratio."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            for member in members:
                name = member.filename.replace("\\", "/")
                if (
                    name.startswith("/")
                    or re.match(r"^[A-Za-z]:", name)
                    or ".." in PurePosixPath(name).parts
                ):
                    refuse(
                        f"o ZIP contém um caminho inseguro ('{member.filename}'): caminhos "
                        "absolutos ou com '..' não são aceitos; compacte só os arquivos da camada"
                    )
            inflated = sum(m.file_size for m in members)
            packed = sum(m.compress_size for m in members)
            if inflated > MAX_INFLATED_BYTES:
                refuse(
                    f"o ZIP descompactado ocuparia {_megabytes(inflated)}; o limite é "
                    f"{_megabytes(MAX_INFLATED_BYTES)}"
                )
            if inflated > RATIO_CHECK_FROM_BYTES and inflated > MAX_COMPRESSION_RATIO * max(
                packed, 1
            ):
                refuse(
                    f"o ZIP se expande {inflated // max(packed, 1)} vezes ao descompactar (o "
                    f"limite é {MAX_COMPRESSION_RATIO}): não parece um Shapefile compactado"
                )
            for member in members:
                if member.filename.lower().endswith((".geojson", ".json")):
                    reason = _geojson_crs_problem(archive.read(member))
                    if reason:
                        refuse(f"{member.filename}: {reason}")
    # RuntimeError: an encrypted member; zlib.error: corrupt data.
    except (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError, zlib.error) as exc:
        refuse(f"ZIP ilegível ({exc}): compacte a camada de novo, em um arquivo .zip comum")


# The names of a GeoJSON "crs" member (GeoJSON 2008; RFC 7946 dropped it) we resolve: EPSG
# codes in their usual spellings, and CRS84 (longitude, latitude on WGS 84).
EPSG_NAME = re.compile(
    r"(?:EPSG:{1,2}|urn:ogc:def:crs:EPSG:[\w.]*:|https?://www\.opengis\.net/def/crs/EPSG/"
    r"[\w.]+/)(\d{1,9})",
    re.IGNORECASE,
)
CRS84_NAMES = {
    "urn:ogc:def:crs:ogc:1.3:crs84",
    "urn:ogc:def:crs:ogc::crs84",
    "ogc:crs84",
    "crs84",
    "http://www.opengis.net/def/crs/ogc/1.3/crs84",
    "https://www.opengis.net/def/crs/ogc/1.3/crs84",
}
_MISSING = object()


def _geojson_crs_problem(content: bytes) -> str | None:
    """Why the top-level "crs" member of a GeoJSON text can't be used; None when it can (or
    there is none). GDAL reads an unresolvable name as EPSG:4326 without a word, and would
    look a "link" up: such a file is refused before GDAL opens it."""
    text = content.decode("utf-8-sig", errors="replace")
    if not re.search(r'"crs"\s*:', text):
        return None
    member = _top_level_member(text, "crs")
    if member is _MISSING:
        return (
            "não foi possível verificar o membro 'crs' do GeoJSON (JSON malformado): corrija o "
            "arquivo ou exporte-o de novo"
        )
    return _declared_crs_problem(member)


def _top_level_member(text: str, key: str) -> object:
    """The value of `key` in the top-level object of a JSON text, reading the members one by
    one (the features before it are parsed and dropped); _MISSING if absent or malformed."""
    decoder = json.JSONDecoder()
    space = re.compile(r"\s*")
    try:
        at = space.match(text).end()
        if not text.startswith("{", at):
            return _MISSING
        at = space.match(text, at + 1).end()
        while not text.startswith("}", at):
            name, at = decoder.raw_decode(text, at)
            at = space.match(text, at).end()
            if not isinstance(name, str) or not text.startswith(":", at):
                return _MISSING
            value, at = decoder.raw_decode(text, space.match(text, at + 1).end())
            if name == key:
                return value
            at = space.match(text, at).end()
            if text.startswith(",", at):
                at = space.match(text, at + 1).end()
            elif not text.startswith("}", at):
                return _MISSING
    except (ValueError, RecursionError):
        return _MISSING
    return _MISSING


def _declared_crs_problem(member: object) -> str | None:
    if member is None:
        return None
    hint = "declare o SRC por um código EPSG, como urn:ogc:def:crs:EPSG::31983"
    if not isinstance(member, dict):
        return f"membro 'crs' do GeoJSON ilegível: {hint}"
    kind = member.get("type")
    properties = member.get("properties") if isinstance(member.get("properties"), dict) else {}
    if kind == "link":
        return (
            f"membro 'crs' do tipo link (um SRC em outro arquivo ou endereço) não é aceito: {hint}"
        )
    if kind == "name" and isinstance(properties.get("name"), str):
        name = properties["name"].strip()
        if name.casefold() in CRS84_NAMES:
            return None
        match = EPSG_NAME.fullmatch(name)
        if match is None:
            return f"o SRC declarado no membro 'crs' ('{name[:80]}') não é um código EPSG: {hint}"
        code = int(match.group(1))
    elif kind == "EPSG" and isinstance(properties.get("code"), int):
        code = properties["code"]
    else:
        return f"membro 'crs' do GeoJSON ilegível: {hint}"
    try:
        CRS.from_epsg(code)
    except CRSError:
        return (
            f"o SRC declarado no membro 'crs' (EPSG:{code}) não existe no banco de SRCs do "
            f"PROJ: {hint}"
        )
    return None


def _refuse_unreadable_geometries(
    path: Path, layer: str | None, report: ImportReport, code_column: str
) -> NoReturn:
    """Refuses the file naming each feature whose geometry GEOS cannot build."""
    meta, _, wkbs, values = pyogrio.raw.read(path, layer=layer, datetime_as_string=True)
    names = [str(n) for n in meta["fields"]]
    folded = {n.casefold(): i for i, n in enumerate(names)}
    index = folded.get(code_column.casefold())
    codes = [_text(v) for v in values[index]] if index is not None else [None] * len(wkbs)
    report.read = len(wkbs)
    for i, wkb in enumerate(wkbs):
        with np.errstate(invalid="ignore"):  # NaN coordinates: said below, not warned
            if wkb is None or shapely.from_wkb(wkb, on_invalid="ignore") is not None:
                continue
        coordinates = _wkb_coordinates(wkb)
        if coordinates is not None and not np.isfinite(coordinates).all():
            reason = "coordenada que não é um número finito (NaN ou infinito)"
        elif _wkb_fixable(wkb):
            reason = "anel não fechado: o último ponto de cada anel deve repetir o primeiro"
        else:
            reason = "geometria ilegível (o GEOS não consegue montá-la)"
        report.problems.append(Problem(i + 1, GEOMETRY_FIELD, reason, codes[i]))
    if not report.problems:
        report.problems.append(Problem(None, GEOMETRY_FIELD, "geometria ilegível"))
    _refuse(report)


def _column_key(name: str) -> str:
    """A column name as COLUMN_ALIASES writes it: 'Nome do Ecoponto' -> 'nome_ecoponto',
    'ENDEREÇO' -> 'endereco', 'Nº Licença' -> 'no_licenca'."""
    decomposed = unicodedata.normalize("NFKD", str(name))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    words = [w for w in re.split(r"[^0-9a-z]+", plain) if w]
    return "_".join(w for w in words if w not in {"de", "do", "da", "dos", "das"})


def _resolve_columns(
    gdf: gpd.GeoDataFrame,
    field_map: dict[str, str],
    default_kind: str | None,
    report: ImportReport,
) -> dict[str, str]:
    """Our field name -> the file's column, for the fields the file has (report.columns says
    which column was taken for each and why; report.unused_columns, the rest)."""
    available = [str(c) for c in gdf.columns if c != gdf.geometry.name]
    by_folded: dict[str, str] = {}
    by_key: dict[str, str] = {}
    for column in available:
        by_folded.setdefault(column.casefold(), column)
        by_key.setdefault(_column_key(column), column)
    columns: dict[str, str] = {}
    # --field first: the columns it names are not offered to other fields.
    for ours, theirs in field_map.items():
        if not theirs:
            continue  # `--field ours=`: not read
        found = theirs if theirs in available else by_folded.get(theirs.casefold())
        if found is None:
            found = by_key.get(_column_key(theirs))
        if found is not None:
            columns[ours] = found
            report.columns[ours] = (found, "--field")
        else:
            report.problems.append(
                Problem(
                    None,
                    ours,
                    f"a coluna '{theirs}' indicada em --field não existe no arquivo "
                    f"(colunas: {', '.join(available) or 'nenhuma'})",
                )
            )
    taken = set(columns.values())
    for ours in FIELDS:
        if ours in field_map:
            continue
        # Our own name (exact, then in any case or spelling), then the aliases, in order.
        own = ours if ours in available else by_folded.get(ours) or by_key.get(_column_key(ours))
        candidates = [(own, "mesmo nome")]
        candidates += [(by_key.get(alias), "sinônimo") for alias in COLUMN_ALIASES[ours]]
        for found, how in candidates:
            if found is not None and found not in taken:
                columns[ours] = found
                report.columns[ours] = (found, how)
                taken.add(found)
                break
    report.unused_columns = [c for c in available if c not in taken]
    listed = f"colunas do arquivo: {', '.join(available) or 'nenhuma'}"
    if "kind" not in columns and default_kind is None:
        report.problems.append(
            Problem(
                None,
                "kind",
                f"o arquivo não tem a coluna do tipo ({listed}; procurei kind, "
                f"{', '.join(COLUMN_ALIASES['kind'][:3])}…): indique-a com --field kind=COLUNA "
                "ou use --kind PEV|ATT|RECYCLING|LANDFILL para o arquivo todo",
            )
        )
    if "name" not in columns:
        report.problems.append(
            Problem(
                None,
                "name",
                f"o arquivo não tem a coluna do nome ({listed}; procurei name, "
                f"{', '.join(COLUMN_ALIASES['name'][:4])}…): indique-a com --field name=COLUNA",
            )
        )
    return columns


def _wkb_fixable(wkb: bytes) -> bool:
    try:
        with np.errstate(invalid="ignore"):
            return shapely.from_wkb(wkb, on_invalid="fix") is not None
    except GEOSException:
        return False


def _wkb_coordinates(wkb: bytes) -> np.ndarray | None:
    """Every coordinate value of a (ISO or extended) WKB Point, LineString, Polygon, their
    Multi- forms and collections, read without GEOS; None for anything else."""
    values: list[float] = []

    def geometry(at: int) -> int:
        order = "<" if wkb[at] == 1 else ">"
        (code,) = struct.unpack_from(f"{order}I", wkb, at + 1)
        at += 5
        dims = 2 + bool(code & 0x80000000 or (code & 0xFFFF) // 1000 in (1, 3))
        dims += bool(code & 0x40000000 or (code & 0xFFFF) // 1000 in (2, 3))
        if code & 0x20000000:  # EWKB SRID
            at += 4
        kind = (code & 0xFFFF) % 1000

        def points(at: int, count: int) -> int:
            values.extend(struct.unpack_from(f"{order}{count * dims}d", wkb, at))
            return at + 8 * count * dims

        def count(at: int) -> tuple[int, int]:
            return struct.unpack_from(f"{order}I", wkb, at)[0], at + 4

        if kind == 1:
            return points(at, 1)
        if kind == 2:
            n, at = count(at)
            return points(at, n)
        if kind == 3:
            rings, at = count(at)
            for _ in range(rings):
                n, at = count(at)
                at = points(at, n)
            return at
        if kind in (4, 5, 6, 7):
            parts, at = count(at)
            for _ in range(parts):
                at = geometry(at)
            return at
        raise ValueError(f"tipo WKB {code}")

    try:
        geometry(0)
    except (ValueError, IndexError, struct.error, RecursionError):
        return None
    return np.array(values, dtype=float)


# --- geometry --------------------------------------------------------------------------------


def _validate_geometries(
    gdf: gpd.GeoDataFrame,
    buffer_m: float | None,
    fix_invalid: bool,
    code_column: str | None,
    report: ImportReport,
) -> list[MultiPolygon | None]:
    """One MultiPolygon in EPSG:4326 per feature (None where there is a problem)."""
    # A feature past the vertex limit is refused before any work on it (reprojection, validity).
    vertices = shapely.get_num_coordinates(gdf.geometry.to_numpy())
    too_many = vertices > MAX_VERTICES_PER_FEATURE
    source = gdf.geometry
    if too_many.any():
        source = source.copy()
        source[too_many] = None
    # Vertex-by-vertex reprojection; an invalid polygon stays invalid, so validity is judged
    # on what we store.
    geoms = source.to_crs(4326)
    types = geoms.geom_type
    is_point = types.isin(["Point", "MultiPoint"]).to_numpy()
    codes = _codes(gdf, code_column)
    # Features whose geometry the reader already refused (a CSV's bad coordinate).
    said = {p.number for p in report.problems if p.field == GEOMETRY_FIELD}

    if is_point.any() and buffer_m is None and is_point.all():
        report.problems.append(
            Problem(
                None,
                GEOMETRY_FIELD,
                "a camada é de pontos, mas uma área de recebimento é um polígono: use "
                "--buffer-m N para importar cada ponto como um círculo de N metros de raio",
            )
        )
        return [None] * len(gdf)
    if is_point.any() and buffer_m is not None:
        geoms = geoms.copy()
        geoms[is_point] = _buffer_points(geoms[is_point], buffer_m)

    areas: list[MultiPolygon | None] = []
    for i, geom in enumerate(geoms.to_numpy()):
        number, code = i + 1, codes[i]

        def problem(reason: str, number=number, code=code) -> None:
            report.problems.append(Problem(number, GEOMETRY_FIELD, reason, code))

        area = None
        if too_many[i]:
            problem(
                f"geometria com {_thousands(int(vertices[i]))} vértices; o limite é "
                f"{_thousands(MAX_VERTICES_PER_FEATURE)} por feição (simplifique-a, por exemplo "
                "no QGIS: Vetor › Geometria › Simplificar)"
            )
        elif geom is None or geom.is_empty:
            if number not in said:
                problem("geometria ausente ou vazia")
        elif geom.geom_type in ("Point", "MultiPoint"):
            problem("ponto: use --buffer-m N para importá-lo como um círculo de N metros de raio")
        elif geom.geom_type not in ("Polygon", "MultiPolygon"):
            problem(
                f"geometria do tipo {geom.geom_type}: aceitam-se polígonos (ou pontos, "
                "com --buffer-m)"
            )
        elif not _inside_lonlat(geom):
            problem(
                f"coordenadas fora de longitude/latitude depois de reprojetar de "
                f"{report.source_crs}: o SRC declarado no arquivo não corresponde às coordenadas"
            )
        elif not geom.is_valid:
            reason = _validity_reason(geom)
            if fix_invalid:
                fixed = _polygonal_part(shapely.make_valid(geom))
                if fixed is None:
                    problem(f"geometria inválida ({reason}) e make_valid não deixou polígono")
                else:
                    report.fixes.append(
                        GeometryFix(number, _describe_fix(geom, fixed, reason), code)
                    )
                    area = fixed
            else:
                problem(f"geometria inválida: {reason} (use --fix-invalid para corrigir)")
        else:
            area = geom
        areas.append(_as_multipolygon(shapely.force_2d(area)) if area is not None else None)
    return areas


def _buffer_points(points: gpd.GeoSeries, radius_m: float) -> gpd.GeoSeries:
    """Circles of `radius_m` metres around points given in EPSG:4326.

    A buffer in degrees would be an ellipse whose size varies with latitude; each point is
    buffered in metres in its own UTM zone (WGS 84 UTM: SIRGAS 2000 differs by centimetres),
    where the scale error is under 0.1%, and brought back to 4326. One zone for a whole state
    would put points 6° away from the central meridian and distort their area by ~2%.
    """
    centres = shapely.centroid(points.to_numpy())
    lon, lat = shapely.get_x(centres), shapely.get_y(centres)
    zone = (np.floor((lon + 180) / 6).astype(int) % 60) + 1
    epsg = np.where(lat < 0, 32700, 32600) + zone
    result = points.copy()
    for code in np.unique(epsg):
        mask = epsg == code
        metric = points[mask].to_crs(int(code))
        result[mask] = metric.buffer(radius_m).to_crs(4326)
    return result


def _inside_lonlat(geom: BaseGeometry) -> bool:
    xy = shapely.get_coordinates(geom)
    return bool(
        np.isfinite(xy).all() and (np.abs(xy[:, 0]) <= 180).all() and (np.abs(xy[:, 1]) <= 90).all()
    )


def _validity_reason(geom: BaseGeometry) -> str:
    return validity_reason_pt(shapely.is_valid_reason(geom))


def _polygonal_part(geom: BaseGeometry) -> MultiPolygon | None:
    """The polygons of a make_valid result (which may add lines or points where it collapses)."""
    polygons: list[Polygon] = []
    for part in shapely.get_parts(geom):
        if isinstance(part, Polygon) and not part.is_empty:
            polygons.append(part)
        elif isinstance(part, MultiPolygon):
            polygons.extend(p for p in part.geoms if not p.is_empty)
        elif part.geom_type == "GeometryCollection":
            nested = _polygonal_part(part)
            if nested is not None:
                polygons.extend(nested.geoms)
    return MultiPolygon(polygons) if polygons else None


def _describe_fix(before: BaseGeometry, after: MultiPolygon, reason: str) -> str:
    dropped = any(
        part.geom_type not in ("Polygon", "MultiPolygon")
        for part in shapely.get_parts(shapely.make_valid(before))
    )
    parts_before = len(shapely.get_parts(before))
    text = (
        f"geometria corrigida com make_valid: {reason}; área antes {_m2(before)}, "
        f"depois {_m2(after)}; {parts_before} → {len(after.geoms)} polígono(s)"
    )
    if dropped:
        text += "; partes não poligonais descartadas"
    return text


def _m2(geom: BaseGeometry) -> str:
    # The signed area of a self-intersecting ring cancels out (a bow-tie has area 0).
    area = abs(GEOD.geometry_area_perimeter(geom)[0])
    return f"{br_number(area, 1)} m²"


def _as_multipolygon(geom: BaseGeometry) -> MultiPolygon:
    return geom if isinstance(geom, MultiPolygon) else MultiPolygon([geom])


# --- attributes ------------------------------------------------------------------------------


class _FieldError(ValueError):
    pass


def _validate_attributes(
    gdf: gpd.GeoDataFrame,
    columns: dict[str, str],
    default_kind: str | None,
    areas: list[MultiPolygon | None],
    report: ImportReport,
    progress: Progress | None,
) -> list[FacilityData]:
    rows: list[FacilityData] = []
    records = gdf[list(columns.values())].to_dict("records") if columns else [{}] * len(gdf)
    total = len(records)
    for i, record in enumerate(records):
        number = i + 1
        values = {ours: _text(record.get(theirs)) for ours, theirs in columns.items()}
        code = values.get("code")
        ok = True

        def check(
            ours: str,
            parse: Callable[[str | None], object],
            values=values,
            code=code,
            number=number,
        ):
            nonlocal ok
            try:
                return parse(values.get(ours))
            except _FieldError as exc:
                ok = False
                report.problems.append(
                    Problem(number, ours, str(exc), code, columns.get(ours, ours))
                )
                return None

        code = check("code", _max_length("code"))
        kind = check("kind", lambda v: _parse_kind(v, default_kind))
        name = check("name", _required(_max_length("name"), "nome ausente"))
        operator = check("operator", _max_length("operator"))
        address = check("address", _max_length("address"))
        classes = check("accepted_classes", _parse_classes)
        capacity = check("capacity_m3_per_day", _parse_capacity)
        license_data = _validate_license(values, check)
        if ok and areas[i] is not None:
            rows.append(
                FacilityData(
                    number=number,
                    code=code,
                    kind=kind,
                    name=name,
                    operator=operator or "",
                    address=address or "",
                    accepted_classes=classes or default_accepted_classes(kind),
                    capacity_m3_per_day=capacity,
                    area=areas[i],
                    license=license_data,
                )
            )
        if progress:
            progress(STAGE_VALIDATE, number, total)
    return rows


def _validate_license(values: dict[str, str | None], check) -> LicenseData | None:
    number = check("license_number", _max_length("license_number", FacilityLicense, "number"))
    issuer = check("license_issuer", _max_length("license_issuer", FacilityLicense, "issuer"))
    valid_from = check("license_valid_from", _parse_date)
    valid_until = check("license_valid_until", _parse_date)
    status = check("license_status", _parse_status)
    status_since = check("license_status_since", _parse_date)
    if not values.get("license_number"):
        if valid_from or valid_until or status_since:
            check("license_number", _fail("número da licença ausente, mas há datas de licença"))
        return None
    if not values.get("license_issuer"):
        check("license_issuer", _fail("órgão emissor ausente (obrigatório com número de licença)"))
    if not values.get("license_valid_from"):
        check("license_valid_from", _fail("início da validade ausente (obrigatório com licença)"))
    if valid_from and valid_until and valid_until < valid_from:
        check("license_valid_until", _fail("a validade termina antes de começar"))
    status = status or LicenseStatus.ACTIVE
    if status != LicenseStatus.ACTIVE and not values.get("license_status_since"):
        check(
            "license_status_since",
            _fail("informe desde quando a licença está suspensa ou cassada"),
        )
    if None in (number, issuer, valid_from) or (
        status != LicenseStatus.ACTIVE and not status_since
    ):
        return None
    return LicenseData(number, issuer, valid_from, valid_until, status, status_since)


def _check_duplicates(rows: list[FacilityData], report: ImportReport) -> None:
    first_code: dict[str, int] = {}
    first_license: dict[tuple[str, str], int] = {}
    for row in rows:
        if row.code:
            if row.code in first_code:
                report.problems.append(
                    Problem(
                        row.number,
                        "code",
                        f"código repetido (já usado na feição {first_code[row.code]})",
                        row.code,
                    )
                )
            first_code.setdefault(row.code, row.number)
        if row.license:
            key = (row.license.issuer, row.license.number)
            if key in first_license:
                report.problems.append(
                    Problem(
                        row.number,
                        "license_number",
                        f"licença {key[1]} ({key[0]}) repetida "
                        f"(já usada na feição {first_license[key]})",
                        row.code,
                    )
                )
            first_license.setdefault(key, row.number)


def _text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, float | np.floating):
        if math.isnan(value):
            return None
        if float(value).is_integer():
            # A numeric column: 7.0 is the code "7".
            value = int(value)
    elif pd.isna(value):
        return None
    text = str(value).strip()
    return text or None


def _token(value: str) -> str:
    """Upper case, no accents, single spaces: 'Área de  reciclagem' -> 'AREA DE RECICLAGEM'."""
    decomposed = unicodedata.normalize("NFKD", value)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(plain.replace("_", " ").upper().split())


def _fail(reason: str) -> Callable[[str | None], None]:
    def parse(_value: str | None) -> None:
        raise _FieldError(reason)

    return parse


def _required(parse: Callable[[str | None], object], reason: str):
    def wrapped(value: str | None):
        if value is None:
            raise _FieldError(reason)
        return parse(value)

    return wrapped


def _max_length(ours: str, model=ReceivingFacility, model_field: str | None = None):
    limit = model._meta.get_field(model_field or ours).max_length

    def parse(value: str | None) -> str | None:
        if value is not None and len(value) > limit:
            raise _FieldError(f"texto com {len(value)} caracteres; o máximo é {limit}")
        return value

    return parse


def _unknown_kind_reason(value: str) -> str:
    return f"tipo desconhecido '{value}' (use PEV, ATT, RECYCLING ou LANDFILL)"


def _parse_kind(value: str | None, default_kind: str | None) -> str:
    if value is None:
        if default_kind is None:
            raise _FieldError("tipo ausente (use PEV, ATT, RECYCLING ou LANDFILL, ou --kind)")
        return default_kind
    kind = normalize_kind(value)
    if kind is None:
        raise _FieldError(_unknown_kind_reason(value))
    return kind


def _parse_classes(value: str | None) -> list[str]:
    if value is None:
        return []
    classes: list[str] = []
    unknown: list[str] = []
    for item in re.split(r"[,;]", value):
        token = _token(item)
        token = token.removeprefix("CLASSE ").strip()
        if not token:
            continue
        waste_class = CLASS_ALIASES.get(token)
        if waste_class is None:
            unknown.append(item.strip())
        elif str(waste_class) not in classes:
            classes.append(str(waste_class))
    if unknown:
        raise _FieldError(
            f"classe(s) desconhecida(s) {', '.join(repr(u) for u in unknown)} "
            "(use A, B, C, D ou VOLUMOSO, separadas por vírgula)"
        )
    return classes


def _parse_capacity(value: str | None) -> Decimal | None:
    if value is None:
        return None
    text = value.replace(" ", "")
    if "," in text:
        # Brazilian notation: 1.234,5
        text = text.replace(".", "").replace(",", ".")
    try:
        number = Decimal(text)
    except InvalidOperation:
        raise _FieldError(f"número inválido '{value}'") from None
    if not number.is_finite() or number < 0:
        raise _FieldError(f"capacidade inválida '{value}' (informe m³ por dia, não negativo)")
    number = number.quantize(Decimal("0.01"))
    if number >= Decimal("1e8"):
        raise _FieldError(f"capacidade grande demais '{value}'")
    return number


def _parse_date(value: str | None) -> datetime.date | None:
    if value is None:
        return None
    if match := ISO_DATE.match(value):
        year, month, day = (int(g) for g in match.groups())
    elif match := BR_DATE.match(value):
        day, month, year = (int(g) for g in match.groups())
    else:
        raise _FieldError(f"data inválida '{value}' (use AAAA-MM-DD ou DD/MM/AAAA)")
    try:
        return datetime.date(year, month, day)
    except ValueError:
        raise _FieldError(f"data inválida '{value}': esse dia não existe") from None


def _parse_status(value: str | None) -> str | None:
    if value is None:
        return None
    status = STATUS_ALIASES.get(_token(value))
    if status is None:
        raise _FieldError(
            f"situação desconhecida '{value}' (use ACTIVE, SUSPENDED ou REVOKED; "
            "ou ATIVA, SUSPENSA ou CASSADA; se a coluna não é a situação da licença, "
            "--field license_status= deixa de lê-la)"
        )
    return status


def _codes(gdf: gpd.GeoDataFrame, code_column: str | None) -> list[str | None]:
    if code_column is None:
        return [None] * len(gdf)
    return [_text(v) for v in gdf[code_column].tolist()]


# --- writing ---------------------------------------------------------------------------------

FACILITY_FIELDS = [
    "kind",
    "name",
    "operator",
    "address",
    "accepted_classes",
    "capacity_m3_per_day",
    "area",
    "municipality",
]


def _write(rows: list[FacilityData], report: ImportReport, progress: Progress | None) -> None:
    """Create or update (by code) every facility and its license. Runs inside the caller's
    transaction."""
    codes = [r.code for r in rows if r.code]
    existing = {f.code: f for f in ReceivingFacility.objects.filter(code__in=codes)}
    numbers = {r.license.number for r in rows if r.license}
    licenses = {
        (lic.issuer, lic.number): lic
        for lic in FacilityLicense.objects.filter(number__in=numbers).select_related("facility")
    }
    _check_license_owners(rows, existing, licenses, report)
    if report.problems:
        _refuse(report)

    to_create: list[ReceivingFacility] = []
    to_update: list[ReceivingFacility] = []
    facility_of: dict[int, ReceivingFacility] = {}
    total = len(rows)
    for done, row in enumerate(rows, start=1):
        facility = existing.get(row.code) if row.code else None
        if facility is None:
            facility = ReceivingFacility(code=row.code)
            to_create.append(facility)
        else:
            to_update.append(facility)
        area = GEOSGeometry(shapely.to_wkb(row.area, hex=True), srid=4326)
        facility.kind = row.kind
        facility.name = row.name
        facility.operator = row.operator
        facility.address = row.address
        # Filled here because bulk_create skips ReceivingFacility.save().
        facility.accepted_classes = row.accepted_classes
        facility.capacity_m3_per_day = row.capacity_m3_per_day
        facility.area = area
        # The municipality whose boundary holds the area; None outside every known boundary.
        facility.municipality_id = municipality_id_at(area.point_on_surface)
        facility_of[row.number] = facility
        if progress:
            progress(STAGE_WRITE, done, total)
    ReceivingFacility.objects.bulk_create(to_create)
    ReceivingFacility.objects.bulk_update(to_update, FACILITY_FIELDS)
    report.created, report.updated = len(to_create), len(to_update)

    licenses_to_create: list[FacilityLicense] = []
    licenses_to_update: list[FacilityLicense] = []
    for row in rows:
        if row.license is None:
            continue
        data = row.license
        license_ = licenses.get((data.issuer, data.number))
        if license_ is None:
            license_ = FacilityLicense(number=data.number, issuer=data.issuer)
            licenses_to_create.append(license_)
        else:
            licenses_to_update.append(license_)
        license_.facility = facility_of[row.number]
        license_.valid_from = data.valid_from
        license_.valid_until = data.valid_until
        license_.status = data.status
        license_.status_since = data.status_since
    FacilityLicense.objects.bulk_create(licenses_to_create)
    FacilityLicense.objects.bulk_update(
        licenses_to_update, ["facility", "valid_from", "valid_until", "status", "status_since"]
    )
    report.licenses_created = len(licenses_to_create)
    report.licenses_updated = len(licenses_to_update)


def _check_license_owners(
    rows: list[FacilityData],
    existing: dict[str, ReceivingFacility],
    licenses: dict[tuple[str, str], FacilityLicense],
    report: ImportReport,
) -> None:
    """A license already registered for another facility is not moved silently."""
    for row in rows:
        if row.license is None:
            continue
        license_ = licenses.get((row.license.issuer, row.license.number))
        if license_ is None:
            continue
        target = existing.get(row.code) if row.code else None
        if target is None or license_.facility_id != target.pk:
            owner = license_.facility.code or f"id {license_.facility_id}"
            report.problems.append(
                Problem(
                    row.number,
                    "license_number",
                    f"a licença {row.license.number} ({row.license.issuer}) já pertence a outra "
                    f"área (código {owner})",
                    row.code,
                )
            )
