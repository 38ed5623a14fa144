"""GeoJSON layers of the public map, built in PostGIS.

Each layer is one SQL query that returns a whole FeatureCollection (ST_AsGeoJSON inside
json_build_object/json_agg): serializing features one by one in Python (DRF) costs ~0.5 ms per
feature (design.md, "Known pitfalls"), while PostGIS assembles thousands in a few milliseconds.
Only public data leaves here: no capacities, no internal notes.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Sequence

from django.utils import timezone

from config.replica import read_connection

from .models import (
    CatchmentBasin,
    FacilityKind,
    FacilityLicense,
    Municipality,
    ReceivingFacility,
    WasteClass,
    licensed_sql,
    parameters_sql,
    valid_on_sql,
)

# Six decimals of a degree are ~0.1 m: more than the survey of any facility, and half the bytes
# of PostGIS's default 9.
COORDINATE_DECIMALS = 6
# A municipal outline is drawn at city scale: ~1 m is plenty for ~700 vertices.
OUTLINE_DECIMALS = 5

BBox = Sequence[float]  # (min lon, min lat, max lon, max lat), WGS 84


def bbox_sql(column: str, bbox: BBox | None, params: dict) -> str:
    """An `AND` clause keeping rows whose geometry's box overlaps `bbox` (SRID 4326 explicit).

    `&&` is box-overlap, answered by the GiST index: right for a display window, where a
    feature whose box touches the window may be visible.
    """
    if bbox is None:
        return ""
    min_lon, min_lat, max_lon, max_lat = (float(v) for v in bbox)
    params.update(min_lon=min_lon, min_lat=min_lat, max_lon=max_lon, max_lat=max_lat)
    return (
        f"AND {column} && ST_MakeEnvelope(%(min_lon)s, %(min_lat)s, %(max_lon)s, %(max_lat)s, 4326)"
    )


def municipality_sql(column: str, municipality_id: int | None, params: dict) -> str:
    """An `AND` clause keeping one municipality's rows (a municipality's
    public map shows its own network, not its neighbours'); rows of no municipality yet (a
    facility imported without one) stay, within the map's window. Nothing without one."""
    if municipality_id is None:
        return ""
    params["municipality_id"] = municipality_id
    return f"AND ({column} = %(municipality_id)s OR {column} IS NULL)"


def fetch_json(sql: str, params: dict):
    with read_connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None or row[0] is None:
        return None
    # psycopg2 decodes json columns already; a str means a driver without that adapter.
    return json.loads(row[0]) if isinstance(row[0], str) else row[0]


def feature_collection_sql(
    *, alias: str, geometry: str, properties: dict[str, str], source: str, order: str
) -> str:
    """One query returning the FeatureCollection of the rows of `source` (a FROM clause with
    its joins and WHERE; `alias` its main table, whose `id` is each feature's id): the one
    builder of the map layers' features. `properties`: name -> SQL expression; `order`: the
    features' order, inside json_agg. No row is an empty collection, not NULL."""
    members = ",\n".join(f"'{name}', {expression}" for name, expression in properties.items())
    return f"""
        SELECT json_build_object(
            'type', 'FeatureCollection',
            'features', COALESCE(json_agg(json_build_object(
                'type', 'Feature',
                'id', {alias}.id,
                'geometry', ST_AsGeoJSON({geometry}, {COORDINATE_DECIMALS})::json,
                'properties', json_build_object({members})
            ) ORDER BY {order}), '[]'::json)
        )
        FROM {source}
    """


def anchor_sql(point: str) -> str:
    """`anchor`: a [lon, lat] point inside the area, for drawing it as a symbol when its polygon
    is too small to see (ST_PointOnSurface: unlike the centroid, always inside)."""
    return (
        f"json_build_array(round(ST_X({point})::numeric, {COORDINATE_DECIMALS}), "
        f"round(ST_Y({point})::numeric, {COORDINATE_DECIMALS}))"
    )


# The properties every facility layer has, whatever else it tells: the management's layer and
# the public one name, place and label a facility alike.
FACILITY_PROPERTIES = {
    "id": "f.id",
    "code": "f.code",
    "name": "f.name",
    "kind": "f.kind",
    "kind_label": "COALESCE(%(kind_labels)s::jsonb ->> f.kind, f.kind)",
}


def facilities_geojson(properties: dict[str, str], source: str, params: dict) -> dict:
    """The facilities of `source` (alias f) as a FeatureCollection, in the facility layers'
    order, with FACILITY_PROPERTIES and then `properties`."""
    params["kind_labels"] = json.dumps({k.value: k.label for k in FacilityKind})
    sql = feature_collection_sql(
        alias="f",
        geometry="f.area",
        properties={**FACILITY_PROPERTIES, **properties},
        source=source,
        order="f.kind, f.name, f.id",
    )
    return fetch_json(sql, params)


def licensed_facilities_geojson(
    day: datetime.date | None = None, bbox: BBox | None = None, municipality_id: int | None = None
) -> dict:
    """The receiving facilities licensed on `day` (today by default), as a FeatureCollection.

    Only licensed facilities are public destinations (Lei 3.978/2007 art. 14 §1). Each feature
    is the facility's area (a MultiPolygon) with, as properties: id, code, name, kind and its
    pt-BR label, operator, address, accepted classes (codes and pt-BR labels), the license in
    force (number, issuer, valid_from, valid_until; the latest one when several overlap, as
    ReceivingFacility.license_on picks), and `anchor`, a [lon, lat] point inside the area
    (ST_PointOnSurface, which unlike the centroid is always inside) for drawing the facility
    as a symbol when its polygon is too small to see. With `municipality_id`, that
    municipality's facilities only (municipality_sql).
    """
    params: dict = {
        "day": day or timezone.localdate(),
        "class_labels": json.dumps({c.value: c.label for c in WasteClass}),
    }
    where_bbox = bbox_sql("f.area", bbox, params)
    where_bbox += " " + municipality_sql("f.municipality_id", municipality_id, params)
    properties = {
        "operator": "f.operator",
        "address": "f.address",
        "accepted_classes": "to_json(f.accepted_classes)",
        "accepted_class_labels": """(
            SELECT COALESCE(
                json_agg(COALESCE(%(class_labels)s::jsonb ->> c.code, c.code) ORDER BY c.n),
                '[]'::json)
            FROM unnest(f.accepted_classes) WITH ORDINALITY AS c(code, n))""",
        "license_number": "lic.number",
        "license_issuer": "lic.issuer",
        "license_valid_from": "lic.valid_from",
        "license_valid_until": "lic.valid_until",
        "anchor": anchor_sql("anchor.p"),
    }
    source = f"""{ReceivingFacility._meta.db_table} f
        -- Inner lateral join: a facility without a license in force is left out.
        CROSS JOIN LATERAL (
            SELECT l.number, l.issuer, l.valid_from, l.valid_until
            FROM {FacilityLicense._meta.db_table} l
            WHERE l.facility_id = f.id AND {valid_on_sql("l")}
            ORDER BY l.valid_from DESC, l.id DESC
            LIMIT 1
        ) lic
        CROSS JOIN LATERAL (SELECT ST_PointOnSurface(f.area) AS p) anchor
        WHERE TRUE {where_bbox}"""
    return facilities_geojson(properties, source, params)


def catchment_basins_geojson(
    day: datetime.date | None = None, bbox: BBox | None = None, municipality_id: int | None = None
) -> dict:
    """The bacias de captação (Lei 3.978/2007 art. 3 V) as a FeatureCollection.

    Properties: id, code, name, municipality, served_by_id, served_by (the PEV's name, null
    when none) and served_by_licensed (whether that PEV's license is in force on `day`, so the
    page does not send anyone to a PEV that may not receive). With `municipality_id`, that
    municipality's bacias only.
    """
    params: dict = {"day": day or timezone.localdate()}
    where_bbox = bbox_sql("b.area", bbox, params)
    where_bbox += " " + municipality_sql("b.municipality_id", municipality_id, params)
    sql = feature_collection_sql(
        alias="b",
        geometry="b.area",
        properties={
            "id": "b.id",
            "code": "b.code",
            "name": "b.name",
            "municipality": "m.name",
            "served_by_id": "f.id",
            "served_by": "f.name",
            "served_by_licensed": f"f.id IS NOT NULL AND {licensed_sql('f.id')}",
        },
        source=f"""{CatchmentBasin._meta.db_table} b
            JOIN {Municipality._meta.db_table} m ON m.id = b.municipality_id
            LEFT JOIN {ReceivingFacility._meta.db_table} f ON f.id = b.served_by_id
            WHERE TRUE {where_bbox}""",
        order="b.name, b.id",
    )
    return fetch_json(sql, params)


def municipality_outline_geojson(ibge_code: str, day: datetime.date | None = None) -> dict | None:
    """The boundary of a municipality as a GeoJSON Feature with its `bbox`, or None.

    Properties: id, ibge_code, name, uf, small_volume_limit_m3 (as a string, exact; of the
    set of parameters in force on `day`, today by default: the map has no CTR's day).
    """
    sql = f"""
        SELECT json_build_object(
            'type', 'Feature',
            'id', m.id,
            'bbox', json_build_array(
                ST_XMin(m.boundary), ST_YMin(m.boundary),
                ST_XMax(m.boundary), ST_YMax(m.boundary)),
            'geometry', ST_AsGeoJSON(m.boundary, {OUTLINE_DECIMALS})::json,
            'properties', json_build_object(
                'id', m.id,
                'ibge_code', m.ibge_code,
                'name', m.name,
                'uf', m.uf,
                'small_volume_limit_m3', mp.small_volume_limit_m3::text
            )
        )
        FROM {Municipality._meta.db_table} m
        JOIN LATERAL {parameters_sql("m.id", "%(day)s::date")} AS mp ON true
        WHERE m.ibge_code = %(ibge_code)s
    """
    return fetch_json(sql, {"ibge_code": ibge_code, "day": day or timezone.localdate()})
