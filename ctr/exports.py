"""CTRs of a period for the Núcleo's own tools: CSV for spreadsheets, GeoPackage for QGIS.

The CSV is for people (docs/documentos.md): Portuguese headers and values (labels, not
codes), decimal comma, dates as dd/mm/aaaa, local time, latitude before longitude, `;` and
UTF-8 with BOM, so that a spreadsheet set to pt-BR opens it in columns. The GeoPackage is for
programs: the columns named in COLUMNS, the codes of the data (issued, ATT, VOLUMOSO), ISO
dates and UTC times, like the API.

Read in chunks through a server-side cursor and written chunk by chunk, so that a period of a
million CTRs needs the memory of one chunk, not of the whole period.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path

import geopandas as gpd
import pyogrio
import shapely
from django.db import connection, transaction
from django.utils import timezone

from config import csv_safety
from config.errors import DomainError
from pev_network.models import facility_kind_short, waste_class_short

from .documents import format_document
from .models import CTR, CTRStatus, CTRWaste
from .reports import br_number

CHUNK = 50_000
COLUMNS = [
    "number", "municipality_ibge_code", "transport_date", "status", "transporter",
    "transporter_document", "vehicle_plate", "equipment_code", "destination_facility_code",
    "destination_facility", "destination_kind", "waste_classes", "total_volume_m3",
    "received_volume_m3", "fee_ufesp", "created_at", "closed_at",
    "origin_lon", "origin_lat", "destination_lon", "destination_lat",
]  # fmt: skip
# The CSV's headers, one for each of COLUMNS (latitude first, as the forms show a point).
CSV_HEADERS = [
    "Número do CTR", "Município (código IBGE)", "Data do transporte", "Situação",
    "Transportador", "CNPJ/CPF do transportador", "Placa", "Equipamento",
    "Código da área de destino", "Área de destino", "Tipo da área de destino",
    "Classes de resíduo", "Volume declarado (m³)", "Volume recebido (m³)", "Taxa (UFESP)",
    "Emitido em", "Encerrado em",
    "Latitude da origem", "Longitude da origem", "Latitude do destino", "Longitude do destino",
]  # fmt: skip
FORMATS = {".csv": "csv", ".gpkg": "gpkg"}


class ExportError(DomainError):
    """The export cannot be written as asked: nothing was written."""


@dataclass(frozen=True)
class CTRExportReport:
    path: str
    format: str
    count: int

    def summary(self) -> str:
        return f"{self.count} CTR(s) exportado(s) para {self.path} ({self.format}, EPSG:4326)."


def _query(date_from: datetime.date, date_to: datetime.date, municipality_id: int | None):
    where = ["c.transport_date BETWEEN %s AND %s"]
    params: list = [date_from, date_to]
    if municipality_id:
        where.append("c.municipality_id = %s")
        params.append(municipality_id)
    sql = f"""
        SELECT c.number, m.ibge_code, c.transport_date, c.status, t.name, t.document,
               v.plate, e.code, f.code, f.name, f.kind,
               (SELECT string_agg(DISTINCT w.waste_class, ',') FROM {CTRWaste._meta.db_table} w
                WHERE w.ctr_id = c.id),
               c.total_volume_m3, c.received_volume_m3, c.fee_ufesp, c.created_at, c.closed_at,
               ST_X(c.origin), ST_Y(c.origin), ST_X(c.destination), ST_Y(c.destination)
        FROM {CTR._meta.db_table} c
        JOIN pev_network_municipality m ON m.id = c.municipality_id
        JOIN ctr_transporter t ON t.id = c.transporter_id
        JOIN ctr_vehicle v ON v.id = c.vehicle_id
        LEFT JOIN ctr_equipment e ON e.id = c.equipment_id
        JOIN pev_network_receivingfacility f ON f.id = c.destination_facility_id
        WHERE {" AND ".join(where)}
        ORDER BY c.municipality_id, c.year, c.sequence
    """
    return sql, params


def _chunks(sql: str, params: list):
    # A named (server-side) cursor needs a transaction; it streams rows in CHUNK batches.
    with transaction.atomic(), connection.chunked_cursor() as cursor:
        cursor.execute(sql, params)
        while rows := cursor.fetchmany(CHUNK):
            yield rows


def _plain(value):
    if isinstance(value, datetime.datetime | datetime.date):
        return value.isoformat()
    if value is None:
        return ""
    return str(value)


def _br_time(value: datetime.datetime | None) -> str:
    return timezone.localtime(value).strftime("%d/%m/%Y %H:%M") if value else ""


def _br_decimal(value, places: int | None = None) -> str:
    return "" if value is None else br_number(value, places, grouping=False)


def _csv_row(row) -> list:
    """One CTR as a person reads it (the order of CSV_HEADERS)."""
    (number, ibge, day, status, transporter, document, plate, equipment, facility_code,
     facility, kind, classes, total, received, fee, created, closed,
     olon, olat, dlon, dlat) = row  # fmt: skip
    return [
        number, ibge, day.strftime("%d/%m/%Y"), CTRStatus(status).label, transporter,
        format_document(document), f"{plate[:3]}-{plate[3:]}", equipment or "",
        facility_code or "", facility, facility_kind_short(kind),
        ", ".join(waste_class_short(c) for c in (classes or "").split(",") if c),
        _br_decimal(total), _br_decimal(received), _br_decimal(fee, 2),
        _br_time(created), _br_time(closed),
        _br_decimal(olat, 6), _br_decimal(olon, 6), _br_decimal(dlat, 6), _br_decimal(dlon, 6),
    ]  # fmt: skip


def export_ctrs(
    path: str | Path,
    date_from: datetime.date,
    date_to: datetime.date,
    municipality_id: int | None = None,
) -> CTRExportReport:
    """Write the CTRs transported in the period: CSV (one row per CTR, origin and destination
    as lon/lat columns) or GeoPackage (layers `ctr_origens` and `ctr_destinos`, points)."""
    path = Path(path)
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ExportError("Use a extensão .csv ou .gpkg para o arquivo de saída.")
    if date_from > date_to:
        raise ExportError("A data inicial é posterior à final.")
    if not path.parent.is_dir():
        raise ExportError(f"A pasta {path.parent} não existe.")
    sql, params = _query(date_from, date_to, municipality_id)
    path.unlink(missing_ok=True)
    count = 0
    if fmt == "csv":
        # UTF-8 with BOM and ';': opens right in spreadsheet programs set to pt-BR.
        with path.open("w", newline="", encoding="utf-8-sig") as handle:
            # Text cells such as an equipment code are never formulas (config/csv_safety.py).
            writer = csv_safety.writer(handle, delimiter=";")
            writer.writerow(CSV_HEADERS)
            for rows in _chunks(sql, params):
                writer.writerows(_csv_row(row) for row in rows)
                count += len(rows)
        return CTRExportReport(str(path), fmt, count)
    for rows in _chunks(sql, params):
        attributes = [dict(zip(COLUMNS[:-4], (_plain(v) for v in row[:-4]), strict=True))
                      for row in rows]  # fmt: skip
        for layer, (x, y) in (("ctr_origens", (-4, -3)), ("ctr_destinos", (-2, -1))):
            points = shapely.points([r[x] for r in rows], [r[y] for r in rows])
            frame = gpd.GeoDataFrame(attributes, geometry=points, crs=4326)
            pyogrio.write_dataframe(
                frame, path, layer=layer, driver="GPKG", append=count > 0,
                dataset_options={"VERSION": "1.2"} if count == 0 and layer == "ctr_origens"
                else None,
            )  # fmt: skip
        count += len(rows)
    if count == 0:
        empty = gpd.GeoDataFrame({c: [] for c in COLUMNS[:-4]}, geometry=[], crs=4326)
        for layer in ("ctr_origens", "ctr_destinos"):
            pyogrio.write_dataframe(empty, path, layer=layer, driver="GPKG", geometry_type="Point")
    return CTRExportReport(str(path), fmt, count)
