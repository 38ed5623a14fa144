"""Import of municipal boundaries (IBGE meshes and their simplified copies).

The file is read, and its geometry judged, by geofile.py as for the facility import; here, the
municipality's columns (IBGE code, name, UF) and the writing."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import shapely
from django.contrib.gis.geos import GEOSGeometry
from django.db import transaction
from tqdm import tqdm

from config.errors import DomainError

from . import geofile
from .models import Municipality, known_law_fields
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
# A boundary has far more vertices than a facility's plot (the detailed São Paulo fixture has
# 1,222; IBGE's full mesh draws long rivers and coastlines vertex by vertex): a higher bound,
# still one that keeps a runaway feature from stalling the import.
MAX_VERTICES_PER_BOUNDARY = 1_000_000


class BoundaryImportError(DomainError):
    """The boundary file was refused whole: nothing was imported."""


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


def import_municipalities(
    path: Path,
    uf: str | None = None,
    code_field: str | None = None,
    name_field: str | None = None,
    keep_existing: bool = False,
    fix_invalid: bool = False,
    dry_run: bool = False,
    progress: bool = False,
    layer: str | None = None,
) -> BoundaryReport:
    """Create or update municipalities from a file; all or nothing (one transaction).

    The file is read and its geometry judged as the facility import does (geofile.py): an
    invalid boundary is refused, or with `fix_invalid` repaired with make_valid and listed in
    the report.
    """
    source = geofile.read(path, layer=layer, code_column=code_field)
    if source.frame is None:
        raise _refusal([str(p) for p in source.problems])
    frame = source.frame
    columns = [str(c) for c in frame.columns if c != frame.geometry.name]
    code_col = _pick(columns, code_field, CODE_FIELDS, "código IBGE")
    name_col = _pick(columns, name_field, NAME_FIELDS, "nome")
    uf_col = None
    if not uf:
        try:
            uf_col = _pick(columns, None, UF_FIELDS, "UF")
        except BoundaryImportError:
            uf_col = None  # derived from the IBGE code below
    codes = [(c or "").split(".")[0] for c in geofile.cell_texts(frame, code_col)]
    names = [n or "" for n in geofile.cell_texts(frame, name_col)]
    ufs = geofile.cell_texts(frame, uf_col)
    checked = geofile.polygons(
        geofile.to_wgs84(frame, max_vertices=MAX_VERTICES_PER_BOUNDARY),
        codes=codes,
        source_crs=source.source_crs,
        fix_invalid=fix_invalid,
        wrong_type=lambda geom_type: f"a geometria não é um polígono ({geom_type})",
    )
    geometry_problems = {p.number: p.reason for p in checked.problems}
    fixes = {fix.number: fix.description for fix in checked.fixes}

    report = BoundaryReport(dry_run=dry_run)
    problems: list[str] = [str(p) for p in source.problems]  # a CSV row's coordinates
    rows = []
    for i, (code, name, area) in enumerate(zip(codes, names, checked.areas, strict=True)):
        number = i + 1
        report.read += 1
        where = f"feição {number} ({name or 'sem nome'})"
        if not (len(code) == 7 and code.isdigit()):
            problems.append(f"{where}, campo '{code_col}': código IBGE inválido '{code}'")
            continue
        row_uf = (uf or ufs[i] or "").strip().upper()
        row_uf = row_uf or UF_BY_IBGE_PREFIX.get(code[:2], "")
        if len(row_uf) != 2:
            problems.append(f"{where}, campo 'uf': UF ausente ou inválida")
            continue
        if area is None:
            problems.append(f"{where}: {geometry_problems[number]}")
            continue
        if number in fixes:
            report.repaired.append(f"{where} ({code}): {fixes[number]}")
        rows.append((code, name, row_uf, area))
    if problems:
        raise _refusal(problems)

    boundary_source = Path(path).name
    with transaction.atomic():
        existing = set(Municipality.objects.values_list("ibge_code", flat=True))
        touched = []
        for code, name, row_uf, area in tqdm(rows, disable=not progress, desc="municípios"):
            if code in existing and keep_existing:
                report.kept += 1
                continue
            boundary = GEOSGeometry(memoryview(area.wkb), srid=4326)
            fields = {
                "name": name,
                "uf": row_uf,
                "boundary": boundary,
                "boundary_source": boundary_source,
            }
            municipality, created = Municipality.objects.update_or_create(
                ibge_code=code,
                defaults=fields,
                # A new municipality starts with its waste law when the platform knows it.
                create_defaults={**fields, **known_law_fields(code)},
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


@dataclass(frozen=True)
class Boundary:
    """One municipality's boundary read from a file (read_boundary): what a new municipality
    is created from (nucleo.onboarding)."""

    ibge_code: str
    name: str
    uf: str
    # MultiPolygon in WGS 84, as the Municipality stores it.
    geometry: GEOSGeometry
    source: str
    vertices: int
    repaired: str | None = None


def read_boundary(
    path: Path,
    ibge_code: str,
    *,
    layer: str | None = None,
    code_field: str | None = None,
    name_field: str | None = None,
    fix_invalid: bool = False,
) -> Boundary:
    """The boundary of the municipality `ibge_code` in a file of one or many (a state's 645):
    the file is read as import_municipalities reads it, and only that feature's geometry is
    judged (another municipality's bad polygon is not this one's problem). Writes nothing."""
    path = Path(path)
    source = geofile.read(path, layer=layer, code_column=code_field)
    if source.frame is None:
        raise _refusal([str(p) for p in source.problems], what="Arquivo de limites")
    frame = source.frame
    columns = [str(c) for c in frame.columns if c != frame.geometry.name]
    code_col = _pick(columns, code_field, CODE_FIELDS, "código IBGE")
    name_col = _pick(columns, name_field, NAME_FIELDS, "nome")
    codes = [(c or "").split(".")[0] for c in geofile.cell_texts(frame, code_col)]
    rows = [i for i, code in enumerate(codes) if code == ibge_code]
    if not rows:
        raise BoundaryImportError(
            f"O arquivo {path.name} não tem o limite do município {ibge_code} (coluna "
            f"'{code_col}', {len(codes)} feição(ões)): confira o código ou use o arquivo do "
            "estado dele.",
            "boundary_missing",
        )
    if len(rows) > 1:
        numbers = ", ".join(str(i + 1) for i in rows)
        raise BoundaryImportError(
            f"O arquivo {path.name} tem {len(rows)} feições com o código {ibge_code} "
            f"(feições {numbers}): deixe uma só.",
            "boundary_ambiguous",
        )
    one = frame.iloc[rows]
    checked = geofile.polygons(
        geofile.to_wgs84(one, max_vertices=MAX_VERTICES_PER_BOUNDARY),
        codes=[ibge_code],
        source_crs=source.source_crs,
        fix_invalid=fix_invalid,
        wrong_type=lambda geom_type: f"a geometria não é um polígono ({geom_type})",
    )
    area = checked.areas[0]
    if area is None:
        reasons = "; ".join(p.reason for p in checked.problems)
        raise BoundaryImportError(
            f"O limite do município {ibge_code} em {path.name} foi recusado: {reasons}.",
            "boundary_invalid",
        )
    name = (geofile.cell_texts(one, name_col)[0] or "").strip()
    if not name:
        raise BoundaryImportError(
            f"A feição do município {ibge_code} em {path.name} não tem nome (coluna '{name_col}').",
            "boundary_invalid",
        )
    return Boundary(
        ibge_code=ibge_code,
        name=name,
        uf=UF_BY_IBGE_PREFIX.get(ibge_code[:2], ""),
        geometry=GEOSGeometry(memoryview(area.wkb), srid=4326),
        source=path.name,
        vertices=int(shapely.get_num_coordinates(area)),
        repaired=checked.fixes[0].description if checked.fixes else None,
    )


def _refusal(problems: list[str], what: str = "Arquivo") -> BoundaryImportError:
    return BoundaryImportError(
        f"{what} recusado; nada foi importado:\n" + "\n".join(f"  {p}" for p in problems)
    )
