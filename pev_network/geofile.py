"""Geodata files as the importers read them: one reader, one policy for what may be stored.

Used by the facility import (importing.py) and the municipal boundary import (boundaries.py).
GeoJSON, GeoPackage, (zipped) Shapefile and CSV, read with pyogrio. `read` checks the file
before GDAL opens it (size, a zip's listing, a GeoJSON's declared CRS), picks the layer and
refuses a file without CRS; `to_wgs84` and `polygons` apply the geometry policy: a vertex limit
per feature, EPSG:4326 within longitude/latitude, and validity (an invalid polygon is refused,
or repaired with make_valid when the caller asks, and the repair described). Nothing here
raises for bad input: every reason comes back as a Problem, and each importer refuses with its
own error and report.
"""

from __future__ import annotations

import csv
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
from pathlib import Path, PurePosixPath
from typing import NoReturn

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import shapely
from pyogrio.errors import DataLayerError, DataSourceError
from pyproj import CRS, Geod
from pyproj.exceptions import CRSError
from shapely.errors import GEOSException
from shapely.geometry import MultiPolygon, Polygon
from shapely.geometry.base import BaseGeometry

from config.br import br_number

from .geometry_messages import validity_reason_pt

GEOMETRY_FIELD = "geometry"

# A CSV of points, as municipal portals publish their ecopontos: the coordinate columns
# (compared after column_key), in degrees; a column named like these holds WKT and GDAL reads it.
LONLAT_ALIASES: dict[str, tuple[str, ...]] = {
    "longitude": ("longitude", "lon", "long", "lng", "x", "coord_x", "coordenada_x"),
    "latitude": ("latitude", "lat", "y", "coord_y", "coordenada_y"),
}
WKT_COLUMNS = frozenset({"wkt", "geometry", "geometria", "geom", "the_geom"})

MB = 1024 * 1024
# Limits of what is read at all: the file, a zip once inflated (and how much it may inflate:
# a Shapefile compresses ~3-10 times; a zip bomb, hundreds), the vertices of one feature by
# default (a receiving area is the outline of a plot, drawn with tens or hundreds of vertices;
# an importer of larger features passes its own limit to to_wgs84).
MAX_FILE_BYTES = 200 * MB
MAX_INFLATED_BYTES = 200 * MB
MAX_COMPRESSION_RATIO = 100
RATIO_CHECK_FROM_BYTES = 10 * MB
MAX_VERTICES_PER_FEATURE = 100_000

# Geodesic areas in m² on the WGS 84 ellipsoid, for the report of what a repair changed.
GEOD = Geod(ellps="WGS84")

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Problem:
    """One reason to refuse the file. `number` is the 1-based feature number, None for the file."""

    number: int | None
    field: str | None
    reason: str
    code: str | None = None
    column: str | None = None

    def __str__(self) -> str:
        where = "arquivo" if self.number is None else _feature(self.number, self.code)
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
        return f"{_feature(self.number, self.code)}: {self.description}"


def _feature(number: int, code: str | None) -> str:
    return f"feição {number}" + (f" (código {code})" if code else "")


# --- reading ---------------------------------------------------------------------------------


@dataclass
class GeoFile:
    """What `read` made of a file. `frame` is None when the file is refused whole: a problem
    without feature number says why, or one problem per feature GEOS cannot even build."""

    layer: str | None
    frame: gpd.GeoDataFrame | None = None
    source_crs: str | None = None
    # A CSV of points: its (longitude, latitude) columns.
    coordinates: tuple[str, str] | None = None
    # Features read; also when refused for geometries GEOS cannot build.
    count: int = 0
    # With a frame: the features whose coordinates a CSV row got wrong.
    problems: list[Problem] = field(default_factory=list)


class _Refused(Exception):
    """Stops reading: the file is refused whole (GeoFile.problems says why)."""


def read(path: str | Path, *, layer: str | None = None, code_column: str | None = None) -> GeoFile:
    """Open a geodata file and its layer, in its own CRS, after the checks of what is read at
    all. `code_column` names features in the problems of geometries GEOS cannot build."""
    source = GeoFile(layer=layer)
    try:
        source.frame = _read(Path(path), source, code_column)
    except _Refused:
        return source
    source.count = len(source.frame)
    return source


def _read(path: Path, source: GeoFile, code_column: str | None) -> gpd.GeoDataFrame:
    layer = source.layer

    def refuse(reason: str) -> NoReturn:
        source.problems.append(Problem(None, None, reason))
        raise _Refused

    if not path.exists():
        refuse(f"arquivo não encontrado: {path}")
    _check_file(path, refuse)
    if path.suffix.lower() == ".csv":
        points = _read_lonlat_csv(path, source, refuse)
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
        _name_unreadable_geometries(path, source, code_column)
        raise _Refused from None
    except _Refused:
        raise
    except Exception as exc:  # any other failure of GDAL/pyogrio on a malformed file
        logger.warning("Falha ao ler %s: %s: %s", path.name, type(exc).__name__, exc)
        refuse(
            f"não foi possível ler o arquivo ({type(exc).__name__}: {exc}); use GeoJSON, "
            "GeoPackage ou Shapefile"
        )
    source.layer = layer or (layers[0] if layers else None)
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
    source.source_crs = gdf.crs.to_string()
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
    path: Path, source: GeoFile, refuse: Callable[[str], NoReturn]
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
        keys.setdefault(column_key(name), name)
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
    source.coordinates = (lon, lat)
    source.source_crs = crs.to_string()
    i_lon, i_lat = names.index(lon), names.index(lat)
    records: list[dict[str, str]] = []
    points: list[shapely.Point | None] = []
    for number, row in enumerate(rows[1:], start=1):
        if len(row) != len(names):
            source.problems.append(
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
                source.problems.append(Problem(number, GEOMETRY_FIELD, reason, column=column))
                x = y = None
        points.append(shapely.Point(x, y) if x is not None and y is not None else None)
    if not records:
        refuse("o arquivo não tem feições (só o cabeçalho)")
    source.layer = None
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


def _name_unreadable_geometries(path: Path, source: GeoFile, code_column: str | None) -> None:
    """One problem per feature whose geometry GEOS cannot build."""
    meta, _, wkbs, values = pyogrio.raw.read(path, layer=source.layer, datetime_as_string=True)
    names = [str(n) for n in meta["fields"]]
    folded = {n.casefold(): i for i, n in enumerate(names)}
    index = folded.get(code_column.casefold()) if code_column is not None else None
    codes = [cell_text(v) for v in values[index]] if index is not None else [None] * len(wkbs)
    source.count = len(wkbs)
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
        source.problems.append(Problem(i + 1, GEOMETRY_FIELD, reason, codes[i]))
    if not source.problems:
        source.problems.append(Problem(None, GEOMETRY_FIELD, "geometria ilegível"))


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


@dataclass
class Geometries:
    """A layer's geometries in EPSG:4326; None where a feature is over the vertex limit."""

    wgs84: gpd.GeoSeries
    vertices: np.ndarray
    max_vertices: int

    @property
    def too_many(self) -> np.ndarray:
        return self.vertices > self.max_vertices


@dataclass
class Polygons:
    """What `polygons` made of each feature: its area (None where there is a problem)."""

    areas: list[MultiPolygon | None]
    problems: list[Problem]
    fixes: list[GeometryFix]


def to_wgs84(frame: gpd.GeoDataFrame, max_vertices: int = MAX_VERTICES_PER_FEATURE) -> Geometries:
    """Reproject vertex by vertex (an invalid polygon stays invalid, so validity is judged on
    what is stored). A feature past the vertex limit is dropped before any work on it."""
    vertices = shapely.get_num_coordinates(frame.geometry.to_numpy())
    too_many = vertices > max_vertices
    source = frame.geometry
    if too_many.any():
        source = source.copy()
        source[too_many] = None
    return Geometries(source.to_crs(4326), vertices, max_vertices)


def polygons(
    geometries: Geometries,
    *,
    codes: list[str | None],
    source_crs: str | None,
    fix_invalid: bool,
    wrong_type: Callable[[str], str],
    said: set[int] | frozenset[int] = frozenset(),
) -> Polygons:
    """One 2D MultiPolygon per feature, or the reason why not. `wrong_type` words the refusal
    of a geometry type that is not a polygon (each importer has its own advice); `said` are
    the features whose missing geometry the reader has already explained."""
    result = Polygons([], [], [])
    too_many = geometries.too_many
    for i, geom in enumerate(geometries.wgs84.to_numpy()):
        number, code = i + 1, codes[i]

        def problem(reason: str, number=number, code=code) -> None:
            result.problems.append(Problem(number, GEOMETRY_FIELD, reason, code))

        area = None
        if too_many[i]:
            problem(
                f"geometria com {_thousands(int(geometries.vertices[i]))} vértices; o limite é "
                f"{_thousands(geometries.max_vertices)} por feição (simplifique-a, por exemplo "
                "no QGIS: Vetor › Geometria › Simplificar)"
            )
        elif geom is None or geom.is_empty:
            if number not in said:
                problem("geometria ausente ou vazia")
        elif geom.geom_type not in ("Polygon", "MultiPolygon"):
            problem(wrong_type(geom.geom_type))
        elif not _inside_lonlat(geom):
            problem(
                f"coordenadas fora de longitude/latitude depois de reprojetar de "
                f"{source_crs}: o SRC declarado no arquivo não corresponde às coordenadas"
            )
        elif not geom.is_valid:
            reason = _validity_reason(geom)
            if fix_invalid:
                fixed = _polygonal_part(shapely.make_valid(geom))
                if fixed is None:
                    problem(f"geometria inválida ({reason}) e make_valid não deixou polígono")
                else:
                    result.fixes.append(
                        GeometryFix(number, _describe_fix(geom, fixed, reason), code)
                    )
                    area = fixed
            else:
                problem(f"geometria inválida: {reason} (use --fix-invalid para corrigir)")
        else:
            area = geom
        result.areas.append(_as_multipolygon(shapely.force_2d(area)) if area is not None else None)
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
    found: list[Polygon] = []
    for part in shapely.get_parts(geom):
        if isinstance(part, Polygon) and not part.is_empty:
            found.append(part)
        elif isinstance(part, MultiPolygon):
            found.extend(p for p in part.geoms if not p.is_empty)
        elif part.geom_type == "GeometryCollection":
            nested = _polygonal_part(part)
            if nested is not None:
                found.extend(nested.geoms)
    return MultiPolygon(found) if found else None


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


# --- columns and cells -----------------------------------------------------------------------


def column_key(name: str) -> str:
    """A column name without case, accents or "de/do/da": 'Nome do Ecoponto' ->
    'nome_ecoponto', 'ENDEREÇO' -> 'endereco', 'Nº Licença' -> 'no_licenca'."""
    decomposed = unicodedata.normalize("NFKD", str(name))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    words = [w for w in re.split(r"[^0-9a-z]+", plain) if w]
    return "_".join(w for w in words if w not in {"de", "do", "da", "dos", "das"})


def cell_text(value: object) -> str | None:
    """A cell of a read frame as text; None when empty (NaN, None, blanks)."""
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


def cell_texts(frame: gpd.GeoDataFrame, column: str | None) -> list[str | None]:
    """A column as text (cell_text), or one None per feature when there is no such column."""
    if column is None:
        return [None] * len(frame)
    return [cell_text(v) for v in frame[column].tolist()]
