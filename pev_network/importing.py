"""Import the licensed receiving network (Lei 3.978/2007 art. 14 §2) from geodata files.

GeoJSON, GeoPackage, (zipped) Shapefile and CSV, read by geofile.py (with the geometry policy
shared with the boundary import); what each column means is in facility_fields.py. Here: the
run, points as circles, its report and the writing. The import is all or nothing: every feature
is validated first and every problem is reported (feature number, field, reason); a file with
any problem is refused whole. A clean file is written in one transaction.
Plain functions: the caller (a management command, an admin action) renders the report and the
progress; nothing here prints.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

import geopandas as gpd
import numpy as np
import shapely
from django.contrib.gis.geos import GEOSGeometry
from django.db import DatabaseError, transaction
from shapely.geometry import MultiPolygon

from . import geofile
from .facility_fields import (
    FIELDS,
    FacilityData,
    check_duplicates,
    normalize_kind,
    resolve_columns,
    unknown_kind_reason,
    validate_attributes,
)
from .geofile import GEOMETRY_FIELD, GeometryFix, Problem, cell_texts
from .models import FacilityLicense, Municipality, ReceivingFacility
from .services import NetworkError, municipality_id_at

# (stage, done, total): the caller draws the progress bar.
Progress = Callable[[str, int, int], None]
STAGE_VALIDATE = "validando"
STAGE_WRITE = "gravando"


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
    municipality_id: int | None = None,
) -> ImportReport:
    """Validate every feature of the file and write them all in one transaction, or nothing.

    Raises ImportRefused (with the report) when the file or any feature has a problem.
    With `dry_run` the same writes run and are rolled back, so the counts are the real ones.
    With `municipality_id` (a municipality's own network, nucleo.onboarding) every area must
    lie in that municipality, and no code may name another municipality's facility: the file
    of one municipality never moves or overwrites a neighbour's area.
    """
    field_map = dict(field_map or {})
    for ours in field_map:
        if ours not in FIELDS:
            raise NetworkError(f"Campo desconhecido '{ours}'.", "bad_option")
    default_kind = None
    if kind:
        default_kind = normalize_kind(kind)
        if default_kind is None:
            raise NetworkError(
                f"--kind: {unknown_kind_reason(kind, in_column=False)}", "bad_option"
            )
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
    columns = resolve_columns(gdf, field_map, default_kind, report.problems)
    report.columns, report.unused_columns = columns.chosen, columns.unused
    if report.problems:
        _refuse(report)

    areas = _validate_geometries(gdf, buffer_m, fix_invalid, columns.of.get("code"), report)
    if report.problems and any(p.number is None for p in report.problems):
        _refuse(report)
    rows = validate_attributes(
        gdf,
        columns.of,
        default_kind,
        areas,
        report.problems,
        (lambda done, total: progress(STAGE_VALIDATE, done, total)) if progress else None,
    )
    check_duplicates(rows, report.problems)
    if report.problems:
        _refuse(report)

    try:
        with transaction.atomic():
            _write(rows, report, progress, municipality_id)
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


def _write(
    rows: list[FacilityData],
    report: ImportReport,
    progress: Progress | None,
    municipality_id: int | None = None,
) -> None:
    """Create or update (by code) every facility and its license. Runs inside the caller's
    transaction. With `municipality_id`, an area elsewhere, or a code of another
    municipality's facility, is a problem of its feature."""
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
        if (
            municipality_id is not None
            and facility is not None
            and facility.municipality_id not in (None, municipality_id)
        ):
            report.problems.append(
                Problem(
                    row.number,
                    "code",
                    f"o código {row.code} já é de uma área de outro município "
                    f"({facility.name}): use outro código",
                    row.code,
                )
            )
            continue
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
        if municipality_id is not None and facility.municipality_id != municipality_id:
            report.problems.append(
                Problem(
                    row.number,
                    GEOMETRY_FIELD,
                    "a área fica fora do limite do município"
                    + (
                        f" (em {_municipality_name(facility.municipality_id)})"
                        if facility.municipality_id
                        else ""
                    ),
                    row.code,
                )
            )
        facility_of[row.number] = facility
        if progress:
            progress(STAGE_WRITE, done, total)
    if report.problems:
        _refuse(report)
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


def _municipality_name(municipality_id: int) -> str:
    return str(Municipality.objects.defer("boundary").get(pk=municipality_id))


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
