"""Import of municipal boundaries (IBGE meshes and their simplified copies)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import geopandas as gpd
import pyogrio
from django.contrib.gis.geos import GEOSGeometry
from django.db import transaction
from shapely import make_valid
from shapely.geometry import MultiPolygon, Polygon
from tqdm import tqdm

from .models import Municipality
from .services import refresh_municipality_pieces

# IBGE state codes (first two digits of a municipality code) to UF.
UF_BY_IBGE_PREFIX = {
    "11": "RO", "12": "AC", "13": "AM", "14": "RR", "15": "PA", "16": "AP", "17": "TO",
    "21": "MA", "22": "PI", "23": "CE", "24": "RN", "25": "PB", "26": "PE", "27": "AL",
    "28": "SE", "29": "BA", "31": "MG", "32": "ES", "33": "RJ", "35": "SP", "41": "PR",
    "42": "SC", "43": "RS", "50": "MS", "51": "MT", "52": "GO", "53": "DF",
}  # fmt: skip
CODE_FIELDS = ("cd_mun", "cd_geocmu", "cod_ibge", "codigo_ibge", "geocodigo", "ibge", "id", "code")
NAME_FIELDS = ("nm_mun", "nm_municip", "nome", "name", "municipio")
UF_FIELDS = ("uf", "sigla_uf", "sg_uf")


class BoundaryImportError(Exception):
    pass


@dataclass
class BoundaryReport:
    read: int = 0
    created: int = 0
    updated: int = 0
    kept: int = 0
    repaired: list[str] = field(default_factory=list)
    dry_run: bool = False

    def summary(self) -> str:
        lines = [
            f"Lidos: {self.read}; criados: {self.created}; atualizados: {self.updated}; "
            f"mantidos: {self.kept}; geometrias reparadas: {len(self.repaired)}."
        ]
        lines += [f"  reparado: {r}" for r in self.repaired]
        if self.dry_run:
            lines.append("Nada foi gravado (--dry-run).")
        return "\n".join(lines)


def _pick(columns: list[str], wanted: str | None, candidates: tuple[str, ...], what: str) -> str:
    by_lower = {c.lower(): c for c in columns}
    if wanted:
        if wanted.lower() not in by_lower:
            raise BoundaryImportError(
                f"A coluna '{wanted}' ({what}) não existe; "
                f"colunas do arquivo: {', '.join(columns)}."
            )
        return by_lower[wanted.lower()]
    for candidate in candidates:
        if candidate in by_lower:
            return by_lower[candidate]
    raise BoundaryImportError(
        f"Não achei a coluna do {what}; informe-a (colunas do arquivo: {', '.join(columns)})."
    )


def _as_multipolygon(geom) -> MultiPolygon | None:
    if isinstance(geom, Polygon):
        return MultiPolygon([geom])
    if isinstance(geom, MultiPolygon):
        return geom
    parts = [g for g in getattr(geom, "geoms", []) if isinstance(g, Polygon | MultiPolygon)]
    polygons = []
    for part in parts:
        polygons.extend(part.geoms if isinstance(part, MultiPolygon) else [part])
    return MultiPolygon(polygons) if polygons else None


def import_municipalities(
    path: Path,
    uf: str | None = None,
    code_field: str | None = None,
    name_field: str | None = None,
    keep_existing: bool = False,
    dry_run: bool = False,
    progress: bool = False,
) -> BoundaryReport:
    """Create or update municipalities from a file; all or nothing (one transaction)."""
    try:
        frame = gpd.read_file(path, engine="pyogrio")
    except (pyogrio.errors.DataSourceError, pyogrio.errors.DataLayerError, OSError) as exc:
        raise BoundaryImportError(f"Não consegui ler {path}: {exc}") from exc
    if frame.crs is None:
        raise BoundaryImportError(f"{path} não declara o sistema de coordenadas (CRS).")
    frame = frame.to_crs(4326)
    columns = [c for c in frame.columns if c != "geometry"]
    code_col = _pick(columns, code_field, CODE_FIELDS, "código IBGE")
    name_col = _pick(columns, name_field, NAME_FIELDS, "nome")
    uf_col = None
    if not uf:
        try:
            uf_col = _pick(columns, None, UF_FIELDS, "UF")
        except BoundaryImportError:
            uf_col = None  # derived from the IBGE code below

    report = BoundaryReport(dry_run=dry_run)
    problems: list[str] = []
    rows = []
    for number, row in enumerate(frame.itertuples(index=False), start=1):
        report.read += 1
        code = str(getattr(row, code_col) or "").strip().split(".")[0]
        name = str(getattr(row, name_col) or "").strip()
        where = f"feição {number} ({name or 'sem nome'})"
        if not (len(code) == 7 and code.isdigit()):
            problems.append(f"{where}, campo '{code_col}': código IBGE inválido '{code}'")
            continue
        row_uf = (uf or (getattr(row, uf_col) if uf_col else "") or "").strip().upper()
        row_uf = row_uf or UF_BY_IBGE_PREFIX.get(code[:2], "")
        if len(row_uf) != 2:
            problems.append(f"{where}, campo 'uf': UF ausente ou inválida")
            continue
        geom = row.geometry
        if geom is None or geom.is_empty:
            problems.append(f"{where}: sem geometria")
            continue
        if not geom.is_valid:
            geom = make_valid(geom)
            report.repaired.append(f"{where} ({code})")
        multi = _as_multipolygon(geom)
        if multi is None:
            problems.append(f"{where}: a geometria não é um polígono ({geom.geom_type})")
            continue
        rows.append((code, name, row_uf, multi))
    if problems:
        raise BoundaryImportError(
            "Arquivo recusado; nada foi importado:\n" + "\n".join(f"  {p}" for p in problems)
        )

    source = path.name
    with transaction.atomic():
        existing = set(Municipality.objects.values_list("ibge_code", flat=True))
        touched = []
        for code, name, row_uf, multi in tqdm(rows, disable=not progress, desc="municípios"):
            if code in existing and keep_existing:
                report.kept += 1
                continue
            boundary = GEOSGeometry(memoryview(multi.wkb), srid=4326)
            municipality, created = Municipality.objects.update_or_create(
                ibge_code=code,
                defaults={
                    "name": name,
                    "uf": row_uf,
                    "boundary": boundary,
                    "boundary_source": source,
                },
            )
            touched.append(municipality.pk)
            if created:
                report.created += 1
            else:
                report.updated += 1
        if touched:
            refresh_municipality_pieces(touched)
        if dry_run:
            transaction.set_rollback(True)
    return report
