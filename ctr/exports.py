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
from decimal import Decimal
from pathlib import Path

import geopandas as gpd
import shapely
from django.db import connections, transaction

from config import csv_safety
from config.br import br_datetime, br_number
from config.errors import DomainError
from config.replica import read_alias
from pev_network.exporting import write_layer
from pev_network.models import facility_kind_short, waste_class_short

from .custody.chain import RECEIVED_SHARE_SQL
from .custody.stock import SHIPPED_STATUSES
from .documents import format_document
from .models import CTR, CTRStatus, CTRWaste

CHUNK = 50_000
COLUMNS = [
    "number", "municipality_ibge_code", "transport_date", "status", "transporter",
    "transporter_document", "vehicle_plate", "equipment_code", "origin_facility_code",
    "origin_facility", "origin_kind", "destination_facility_code",
    "destination_facility", "destination_kind", "waste_classes", "total_volume_m3",
    "received_volume_m3", "fee_ufesp", "created_at", "closed_at",
    "origin_lon", "origin_lat", "destination_lon", "destination_lat",
]  # fmt: skip
# The CSV's headers, one for each of COLUMNS (latitude first, as the forms show a point).
CSV_HEADERS = [
    "Número do CTR", "Município (código IBGE)", "Data do transporte", "Situação",
    "Transportador", "CNPJ/CPF do transportador", "Placa", "Equipamento",
    "Código da área de origem (CTR de saída)", "Área de origem (CTR de saída)",
    "Tipo da área de origem", "Código da área de destino", "Área de destino",
    "Tipo da área de destino",
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
    what: str = "CTR(s)"

    def summary(self) -> str:
        where = f"{self.path} ({self.format}, EPSG:4326)"
        return f"{self.count} {self.what} exportado(s) para {where}."


def _query(date_from: datetime.date, date_to: datetime.date, municipality_id: int | None):
    where = ["c.transport_date BETWEEN %s AND %s"]
    params: list = [date_from, date_to]
    if municipality_id:
        where.append("c.municipality_id = %s")
        params.append(municipality_id)
    sql = f"""
        SELECT c.number, m.ibge_code, c.transport_date, c.status, t.name, t.document,
               v.plate, e.code, o.code, o.name, o.kind, f.code, f.name, f.kind,
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
        -- an onward CTR leaves a facility (issue 14); a worksite's load has none
        LEFT JOIN pev_network_receivingfacility o ON o.id = c.origin_facility_id
        WHERE {" AND ".join(where)}
        ORDER BY c.municipality_id, c.year, c.sequence
    """
    return sql, params


def _chunks(sql: str, params: list):
    # A named (server-side) cursor needs a transaction; it streams rows in CHUNK batches.
    # On the replica inside a replica-readable view (config/replica.py), else the primary.
    alias = read_alias()
    with transaction.atomic(using=alias), connections[alias].chunked_cursor() as cursor:
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
    return br_datetime(value) if value else ""


def _br_decimal(value, places: int | None = None) -> str:
    return "" if value is None else br_number(value, places, grouping=False)


def _csv_row(row) -> list:
    """One CTR as a person reads it (the order of CSV_HEADERS)."""
    (number, ibge, day, status, transporter, document, plate, equipment, origin_code,
     origin, origin_kind, facility_code, facility, kind, classes, total, received, fee,
     created, closed,
     olon, olat, dlon, dlat) = row  # fmt: skip
    return [
        number, ibge, day.strftime("%d/%m/%Y"), CTRStatus(status).label, transporter,
        format_document(document), f"{plate[:3]}-{plate[3:]}", equipment or "",
        origin_code or "", origin or "", facility_kind_short(origin_kind) if origin_kind else "",
        facility_code or "", facility, facility_kind_short(kind),
        ", ".join(waste_class_short(c) for c in (classes or "").split(",") if c),
        _br_decimal(total), _br_decimal(received), _br_decimal(fee, 2),
        _br_time(created), _br_time(closed),
        _br_decimal(olat, 6), _br_decimal(olon, 6), _br_decimal(dlat, 6), _br_decimal(dlon, 6),
    ]  # fmt: skip


def _target(path: str | Path, date_from: datetime.date, date_to: datetime.date):
    """The file to write and its format, refused before anything is written; an old file of
    the same name goes."""
    path = Path(path)
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ExportError("Use a extensão .csv ou .gpkg para o arquivo de saída.")
    if date_from > date_to:
        raise ExportError("A data inicial é posterior à final.")
    if not path.parent.is_dir():
        raise ExportError(f"A pasta {path.parent} não existe.")
    path.unlink(missing_ok=True)
    return path, fmt


def export_ctrs(
    path: str | Path,
    date_from: datetime.date,
    date_to: datetime.date,
    municipality_id: int | None = None,
) -> CTRExportReport:
    """Write the CTRs transported in the period: CSV (one row per CTR, origin and destination
    as lon/lat columns) or GeoPackage (layers `ctr_origens` and `ctr_destinos`, points)."""
    path, fmt = _target(path, date_from, date_to)
    sql, params = _query(date_from, date_to, municipality_id)
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
            write_layer(frame, path, layer=layer, geometry_type="Point", append=count > 0)
        count += len(rows)
    if count == 0:
        empty = gpd.GeoDataFrame({c: [] for c in COLUMNS[:-4]}, geometry=[], crs=4326)
        for layer in ("ctr_origens", "ctr_destinos"):
            write_layer(empty, path, layer=layer, geometry_type="Point")
    return CTRExportReport(str(path), fmt, count)


# --- onward flows ------------------------------------------------------------------------------


def onward_flows_sql(where: str = "TRUE", date_from: str = "NULL", date_to: str = "NULL") -> str:
    """The onward CTRs that left a facility (issued or received: what left its stock) summed
    per municipality, origin facility, destination facility, class and month, each row a line
    between the two facilities. `where` filters the CTRs (alias c); the period of a row is its
    month, cut to `date_from`/`date_to` (SQL expressions; NULL leaves the month whole). The
    one description of the flows for the CSV and GeoPackage exports and for the OGC API's
    `flows` collection (ogc/collections.py), whose ids are each row's first waste line."""
    month = "date_trunc('month', c.transport_date)::date"
    return f"""
        SELECT min(w.id) AS id, m.ibge_code AS municipality,
               c.municipality_id, d.municipality_id AS destination_municipality_id,
               o.code AS origin_code, o.name AS origin_name, o.kind AS origin_kind,
               d.code AS destination_code, d.name AS destination_name,
               d.kind AS destination_kind, w.waste_class,
               greatest({month}, {date_from}) AS period_start,
               least(({month} + interval '1 month - 1 day')::date, {date_to}) AS period_end,
               count(DISTINCT c.id) AS ctrs, round(sum(w.volume_m3), 3) AS volume_m3,
               round(sum({RECEIVED_SHARE_SQL})
                     FILTER (WHERE c.status = '{CTRStatus.RECEIVED.value}'), 3)
                   AS received_volume_m3,
               -- the facilities' own anchors, as the map places them
               ST_MakeLine(ST_PointOnSurface(o.area), ST_PointOnSurface(d.area)) AS geom
        FROM {CTR._meta.db_table} c
        JOIN {CTRWaste._meta.db_table} w ON w.ctr_id = c.id
        JOIN pev_network_municipality m ON m.id = c.municipality_id
        JOIN pev_network_receivingfacility o ON o.id = c.origin_facility_id
        JOIN pev_network_receivingfacility d ON d.id = c.destination_facility_id
        WHERE c.status IN ('{"', '".join(SHIPPED_STATUSES)}') AND {where}
        GROUP BY m.ibge_code, c.municipality_id, o.id, d.id, w.waste_class, {month}
    """


FLOW_COLUMNS = [
    "municipality_ibge_code", "origin_facility_code", "origin_facility", "origin_kind",
    "destination_facility_code", "destination_facility", "destination_kind", "waste_class",
    "period_start", "period_end", "ctrs", "volume_m3", "received_volume_m3",
]  # fmt: skip
FLOW_CSV_HEADERS = [
    "Município (código IBGE)", "Código da área de origem", "Área de origem",
    "Tipo da área de origem", "Código da área de destino", "Área de destino",
    "Tipo da área de destino", "Classe de resíduo", "De", "Até", "CTRs de saída",
    "Volume expedido (m³)", "Volume recebido no destino (m³)",
]  # fmt: skip


def _flow_rows(date_from: datetime.date, date_to: datetime.date, municipality_id: int | None):
    where, params = "c.transport_date BETWEEN %s AND %s", [date_from, date_to]
    if municipality_id:
        where += " AND c.municipality_id = %s"
        params.append(municipality_id)
    sql = onward_flows_sql(where, "%s::date", "%s::date")
    with connections[read_alias()].cursor() as cursor:
        cursor.execute(
            "SELECT f.id, f.municipality, f.origin_code, f.origin_name, f.origin_kind, "
            "f.destination_code, f.destination_name, f.destination_kind, f.waste_class, "
            "f.period_start, f.period_end, f.ctrs, f.volume_m3, f.received_volume_m3, f.geom, "
            f"ST_AsBinary(f.geom) FROM ({sql}) f "
            "ORDER BY f.period_start, f.origin_name, f.destination_name, f.waste_class",
            [date_from, date_to, *params],
        )
        # id and the geometry as the database holds it are not columns of the file
        return [row[1:-2] + row[-1:] for row in cursor.fetchall()]


def _flow_csv_row(row) -> list:
    (ibge, origin_code, origin, origin_kind, code, name, kind, waste_class, start, end, ctrs,
     volume, received) = row  # fmt: skip
    return [
        ibge, origin_code or "", origin, facility_kind_short(origin_kind), code or "", name,
        facility_kind_short(kind), waste_class_short(waste_class), start.strftime("%d/%m/%Y"),
        end.strftime("%d/%m/%Y"), ctrs, _br_decimal(volume), _br_decimal(received),
    ]  # fmt: skip


def export_flows(
    path: str | Path,
    date_from: datetime.date,
    date_to: datetime.date,
    municipality_id: int | None = None,
) -> CTRExportReport:
    """Write the onward flows of the period (onward_flows_sql, one row per origin,
    destination, class and month): CSV for people, or GeoPackage (layer `fluxos`, lines from
    the origin facility to the destination)."""
    path, fmt = _target(path, date_from, date_to)
    rows = _flow_rows(date_from, date_to, municipality_id)
    if fmt == "csv":
        with path.open("w", newline="", encoding="utf-8-sig") as handle:
            writer = csv_safety.writer(handle, delimiter=";")
            writer.writerow(FLOW_CSV_HEADERS)
            writer.writerows(_flow_csv_row(row[:-1]) for row in rows)
        return CTRExportReport(str(path), fmt, len(rows), "fluxo(s)")
    frame = gpd.GeoDataFrame(
        [dict(zip(FLOW_COLUMNS, (_plain_number(v) for v in row[:-1]), strict=True))
         for row in rows] or {c: [] for c in FLOW_COLUMNS},
        geometry=shapely.from_wkb([bytes(row[-1]) for row in rows]), crs=4326,
    )  # fmt: skip
    write_layer(frame, path, layer="fluxos", geometry_type="LineString")
    return CTRExportReport(str(path), fmt, len(rows), "fluxo(s)")


def _plain_number(value):
    """Numbers stay numbers in the GeoPackage (a GIS sums and styles them); the rest as in
    the CTR layers."""
    if isinstance(value, int | Decimal):
        return float(value) if isinstance(value, Decimal) else value
    return _plain(value)
