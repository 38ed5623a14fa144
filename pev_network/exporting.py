"""Export the receiving network as GeoJSON, GeoPackage or CSV (WKT), in EPSG:4326.

The columns are the import's default names, so an exported file can be imported back as is.
Written with pyogrio; the files are meant for QGIS, GDAL/ogr2ogr and spreadsheets.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path

import geopandas as gpd
import pyogrio
import shapely

from .facility_fields import normalize_kind
from .importing import Progress
from .models import CatchmentBasin, FacilityLicense, ReceivingFacility
from .services import NetworkError, today

LAYER_NAME = "areas_de_recebimento"
STAGE_EXPORT = "exportando"

COLUMNS = [
    "code",
    "kind",
    "name",
    "operator",
    "address",
    "municipality_ibge_code",
    "accepted_classes",
    "capacity_m3_per_day",
    "license_number",
    "license_issuer",
    "license_valid_from",
    "license_valid_until",
    "license_status",
    "license_status_since",
]


@dataclass(frozen=True)
class OutputFormat:
    driver: str
    # Extra files GDAL writes next to the main one (removed before writing a new export).
    sidecars: tuple[str, ...]
    dataset_options: dict[str, str]
    layer_options: dict[str, str]


FORMATS: dict[str, OutputFormat] = {
    # RFC 7946: lon/lat in WGS 84, no "crs" member, right-hand winding.
    "geojson": OutputFormat("GeoJSON", (), {}, {"RFC7946": "YES"}),
    # GeoPackage 1.2: the newest GDAL writes 1.4, which GDAL < 3.7 and older QGIS warn about.
    "gpkg": OutputFormat("GPKG", (), {"VERSION": "1.2"}, {}),
    # Geometry as WKT in a column named WKT (GDAL's CSV driver finds it by that name); the .csvt
    # (column types) and .prj (EPSG:4326) next to it let GDAL and QGIS read types and CRS.
    "csv": OutputFormat("CSV", (".csvt", ".prj"), {}, {"GEOMETRY": "AS_WKT", "CREATE_CSVT": "YES"}),
}
# What the export reads of a facility (the municipality's boundary stays in the database).
_FACILITY_COLUMNS = [
    "code",
    "kind",
    "name",
    "operator",
    "address",
    "municipality",
    "accepted_classes",
    "capacity_m3_per_day",
    "area",
]
EXTENSIONS = {".geojson": "geojson", ".json": "geojson", ".gpkg": "gpkg", ".csv": "csv"}


def write_layer(
    frame: gpd.GeoDataFrame,
    path: str | Path,
    *,
    layer: str,
    geometry_type: str,
    fmt: str = "gpkg",
    replace: bool = False,
    append: bool = False,
) -> None:
    """Write `frame` as the layer `layer` of `path`, in one of FORMATS: the one way every
    export of the project writes a geographic file. `replace`: the file and its sidecars go
    first (a new file); else the layer joins the file, or with `append` its rows join the
    layer. The format's file options go with the layer that creates the file. The geometry
    type is declared, so that an empty layer is still a typed one."""
    path = Path(path)
    spec = FORMATS[fmt]
    if replace:
        for stale in [path, *(path.with_suffix(s) for s in spec.sidecars)]:
            stale.unlink(missing_ok=True)
    creates = not path.exists()
    pyogrio.write_dataframe(
        frame,
        path,
        layer=layer,
        driver=spec.driver,
        geometry_type=geometry_type,
        append=append,
        dataset_options=(spec.dataset_options or None) if creates else None,
        layer_options=spec.layer_options or None,
    )


@dataclass(frozen=True)
class ExportReport:
    path: str
    format: str
    count: int
    on: datetime.date
    kind: str | None

    def summary(self) -> str:
        what = f" do tipo {self.kind}" if self.kind else ""
        return (
            f"{self.count} área(s) de recebimento{what} exportada(s) para {self.path} "
            f"({self.format}, EPSG:4326; licenças vigentes em {self.on:%d/%m/%Y})."
        )


def output_format(path: str | Path, fmt: str | None = None) -> str:
    """The format asked for, or the one the file's extension implies."""
    if fmt:
        fmt = fmt.lower()
        if fmt not in FORMATS:
            raise NetworkError(
                f"Formato desconhecido '{fmt}' (use {', '.join(FORMATS)}).", "bad_format"
            )
        return fmt
    suffix = Path(path).suffix.lower()
    if suffix not in EXTENSIONS:
        raise NetworkError(
            f"Não sei o formato de '{Path(path).name}': use a extensão .geojson, .gpkg ou .csv, "
            "ou --format geojson|gpkg|csv.",
            "bad_format",
        )
    return EXTENSIONS[suffix]


def facilities_frame(
    kind: str | None = None,
    on: datetime.date | None = None,
    progress: Progress | None = None,
    municipality_id: int | None = None,
) -> gpd.GeoDataFrame:
    """One row per facility (of one municipality, given one), in EPSG:4326, with the license
    in force on `on` (today)."""
    day = on or today()
    facilities = (
        ReceivingFacility.objects.select_related("municipality")
        .only(*_FACILITY_COLUMNS, "municipality__ibge_code")
        .order_by("kind", "code", "name", "pk")
    )
    if municipality_id is not None:
        facilities = facilities.filter(municipality_id=municipality_id)
    if kind:
        facilities = facilities.filter(kind=kind)
    facilities = list(facilities)
    # The license in force on the day; with more than one, the most recent.
    licenses: dict[int, FacilityLicense] = {}
    for license_ in (
        FacilityLicense.objects.valid_on(day)
        .filter(facility__in=[f.pk for f in facilities])
        .order_by("facility_id", "-valid_from", "-pk")
    ):
        licenses.setdefault(license_.facility_id, license_)

    rows, geometries = [], []
    total = len(facilities)
    for done, facility in enumerate(facilities, start=1):
        license_ = licenses.get(facility.pk)
        rows.append(
            {
                "code": facility.code,
                "kind": facility.kind,
                "name": facility.name,
                "operator": facility.operator,
                "address": facility.address,
                "municipality_ibge_code": (
                    facility.municipality.ibge_code if facility.municipality else None
                ),
                "accepted_classes": ",".join(facility.accepted_classes),
                "capacity_m3_per_day": (
                    float(facility.capacity_m3_per_day)
                    if facility.capacity_m3_per_day is not None
                    else None
                ),
                "license_number": license_.number if license_ else None,
                "license_issuer": license_.issuer if license_ else None,
                "license_valid_from": _iso(license_.valid_from) if license_ else None,
                "license_valid_until": _iso(license_.valid_until) if license_ else None,
                "license_status": license_.status if license_ else None,
                "license_status_since": _iso(license_.status_since) if license_ else None,
            }
        )
        geometries.append(shapely.from_wkb(bytes(facility.area.wkb)))
        if progress:
            progress(STAGE_EXPORT, done, total)
    frame = gpd.GeoDataFrame(rows, columns=COLUMNS, geometry=geometries, crs=4326)
    # Numbers stay numbers even when every value is empty.
    frame["capacity_m3_per_day"] = frame["capacity_m3_per_day"].astype("float64")
    return frame


def export_facilities(
    path: str | Path,
    fmt: str | None = None,
    *,
    kind: str | None = None,
    on: datetime.date | None = None,
    progress: Progress | None = None,
    municipality_id: int | None = None,
) -> ExportReport:
    """Write the facilities (of one kind, or all; of one municipality, or all) to `path`,
    replacing an existing file."""
    path = Path(path)
    fmt = output_format(path, fmt)
    if kind:
        normalized = normalize_kind(kind)
        if normalized is None:
            raise NetworkError(
                f"Tipo desconhecido '{kind}' (use PEV, ATT, RECYCLING ou LANDFILL).", "bad_kind"
            )
        kind = normalized
    if not path.parent.is_dir():
        raise NetworkError(f"A pasta {path.parent} não existe.", "bad_path")
    day = on or today()
    frame = facilities_frame(kind, day, progress, municipality_id)
    write_layer(frame, path, layer=LAYER_NAME, geometry_type="MultiPolygon", fmt=fmt, replace=True)
    return ExportReport(str(path), fmt, len(frame), day, kind)


def _iso(day: datetime.date | None) -> str | None:
    return day.isoformat() if day else None


BASIN_LAYER = "bacias_de_captacao"
BASIN_COLUMNS = ["code", "name", "municipality_ibge_code", "served_by_code", "served_by_name"]


def export_basins(
    path: str | Path, fmt: str | None = None, municipality_id: int | None = None
) -> int:
    """Write the bacias de captação (of one municipality, given one) with the PEV that serves
    each; returns how many."""
    path = Path(path)
    fmt = output_format(path, fmt)
    if not path.parent.is_dir():
        raise NetworkError(f"A pasta {path.parent} não existe.", "bad_path")
    basins = CatchmentBasin.objects.select_related("municipality", "served_by").only(
        "code", "name", "area", "municipality__ibge_code", "served_by__code", "served_by__name"
    )
    rows, geometries = [], []
    if municipality_id is not None:
        basins = basins.filter(municipality_id=municipality_id)
    for basin in basins.order_by("municipality_id", "name", "pk"):
        rows.append(
            {
                "code": basin.code,
                "name": basin.name,
                "municipality_ibge_code": basin.municipality.ibge_code,
                "served_by_code": basin.served_by.code if basin.served_by else None,
                "served_by_name": basin.served_by.name if basin.served_by else None,
            }
        )
        geometries.append(shapely.from_wkb(bytes(basin.area.wkb)))
    frame = gpd.GeoDataFrame(rows, columns=BASIN_COLUMNS, geometry=geometries, crs=4326)
    write_layer(frame, path, layer=BASIN_LAYER, geometry_type="MultiPolygon", fmt=fmt, replace=True)
    return len(frame)
