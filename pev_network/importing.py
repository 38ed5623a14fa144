"""Import the licensed receiving network (Lei 3.978/2007 art. 14 §2) from geodata files.

GeoJSON, GeoPackage, (zipped) Shapefile and CSV, read by geofile.py (which also holds the
geometry policy shared with the boundary import); here, the facility's columns, attributes,
points as circles, and the writing. The import is all or
nothing: every feature is validated first and every problem is reported (feature number, field,
reason); a file with any problem is refused whole. A clean file is written in one transaction.
Plain functions: the caller (a management command, an admin action) renders the report and the
progress; nothing here prints.
"""

from __future__ import annotations

import datetime
import math
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import NoReturn

import geopandas as gpd
import numpy as np
import shapely
from django.contrib.gis.geos import GEOSGeometry
from django.db import DatabaseError, transaction
from shapely.geometry import MultiPolygon

from . import geofile
from .geofile import GEOMETRY_FIELD, GeometryFix, Problem, cell_text, cell_texts, column_key
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

# The column names Brazilian open data uses for each field (municipal registries of ecopontos,
# spreadsheets of licensed areas, CETESB-style licence tables), compared after column_key:
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

# (stage, done, total): the caller draws the progress bar.
Progress = Callable[[str, int, int], None]
STAGE_VALIDATE = "validando"
STAGE_WRITE = "gravando"


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
    source = geofile.read(path, layer=layer, code_column=field_map.get("code", "code"))
    report.layer, report.source_crs = source.layer, source.source_crs
    report.coordinates, report.read = source.coordinates, source.count
    report.problems += source.problems
    if source.frame is None:
        _refuse(report)
    gdf = source.frame
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
        by_key.setdefault(column_key(column), column)
    columns: dict[str, str] = {}
    # --field first: the columns it names are not offered to other fields.
    for ours, theirs in field_map.items():
        if not theirs:
            continue  # `--field ours=`: not read
        found = theirs if theirs in available else by_folded.get(theirs.casefold())
        if found is None:
            found = by_key.get(column_key(theirs))
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
        own = ours if ours in available else by_folded.get(ours) or by_key.get(column_key(ours))
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


# --- geometry --------------------------------------------------------------------------------


def _validate_geometries(
    gdf: gpd.GeoDataFrame,
    buffer_m: float | None,
    fix_invalid: bool,
    code_column: str | None,
    report: ImportReport,
) -> list[MultiPolygon | None]:
    """One MultiPolygon in EPSG:4326 per feature (None where there is a problem)."""
    geometries = geofile.to_wgs84(gdf)
    is_point = geometries.wgs84.geom_type.isin(["Point", "MultiPoint"]).to_numpy()
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
        geometries.wgs84 = geometries.wgs84.copy()
        geometries.wgs84[is_point] = _buffer_points(geometries.wgs84[is_point], buffer_m)
    checked = geofile.polygons(
        geometries,
        codes=cell_texts(gdf, code_column),
        source_crs=report.source_crs,
        fix_invalid=fix_invalid,
        wrong_type=_wrong_type,
        # Features whose geometry the reader already refused (a CSV's bad coordinate).
        said={p.number for p in report.problems if p.field == GEOMETRY_FIELD},
    )
    report.problems += checked.problems
    report.fixes += checked.fixes
    return checked.areas


def _wrong_type(geom_type: str) -> str:
    if geom_type in ("Point", "MultiPoint"):
        return "ponto: use --buffer-m N para importá-lo como um círculo de N metros de raio"
    return f"geometria do tipo {geom_type}: aceitam-se polígonos (ou pontos, com --buffer-m)"


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
        values = {ours: cell_text(record.get(theirs)) for ours, theirs in columns.items()}
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
