"""A corpus of bad inputs, one test each: GeoJSON, JSON, uploads, CSV, headers, query strings.

Every case must end in a clear Portuguese 4xx (or an import refused with a Portuguese message),
never a 500 or an English default of Django/DRF/GDAL, and must leave every table of the
database as it was: same row count and same content (a checksum of every row) in each table.

Cases that show a bug still open in a module owned elsewhere are marked xfail(strict=True) with
the bug named: they turn into failures (XPASS) the day the bug is fixed, so that the mark goes.
"""

from __future__ import annotations

import csv
import datetime
import html
import io
import json
import math
import re
import struct
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import geopandas as gpd
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient
from shapely.geometry import Polygon

from ctr import rules, services
from ctr.bulk import csv_import
from ctr.models import CTR, Equipment
from pev_network import importing
from tests.ctr_world import TODAY, World, build_world, ctr_payload
from tests.portuguese import assert_portuguese

pytestmark = [
    pytest.mark.django_db,
    # GDAL warns of the unclosed rings the corpus feeds it; the refusal is what is tested.
    pytest.mark.filterwarnings("ignore:Non closed ring detected:RuntimeWarning"),
]

# Around Guaratinguetá/SP (lon, lat): inside the test town of tests/ctr_world.py.
LON, LAT = -45.19, -22.81
MB = 1024 * 1024


def page_text(content: bytes) -> str:
    """The visible text of an HTML page (no scripts or styles), unescaped."""
    text = content.decode("utf-8", "replace")
    text = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", text)
    text = re.sub(r"(?s)<[^>]+>", " ", text)
    return re.sub(r"\s+", " ", html.unescape(text))


# --- the state of every table -------------------------------------------------------------------

# Counted only (8,500 rows of PostGIS's reference data that no request touches).
COUNT_ONLY = {"spatial_ref_sys"}
# The database cache holds the rate-limit windows of the public endpoints, which count refused
# requests too, on purpose (a client hammering with bad input is still limited): not data.
CACHE_TABLES = {
    cache["LOCATION"]
    for cache in settings.CACHES.values()
    if cache["BACKEND"].endswith("DatabaseCache")
}


def database_state() -> dict[str, tuple[int, str]]:
    """(row count, checksum of every row) of every table of the database, in one query."""
    selects = []
    tables = sorted(set(connection.introspection.table_names()) - CACHE_TABLES)
    for table in tables:
        name = connection.ops.quote_name(table)
        checksum = (
            "''"
            if table in COUNT_ONLY
            else "coalesce(md5(string_agg(md5(t::text), '' ORDER BY md5(t::text))), '')"
        )
        selects.append(f"SELECT %s, count(*), {checksum} FROM {name} t")
    params = tables
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(selects), params)
        return {table: (count, digest) for table, count, digest in cursor.fetchall()}


def changed_tables(before: dict, after: dict) -> dict[str, tuple]:
    return {
        table: (before.get(table), after.get(table))
        for table in sorted(set(before) | set(after))
        if before.get(table) != after.get(table)
    }


# --- the world and its clients ---------------------------------------------------------------


@dataclass
class Context:
    world: World
    api: APIClient  # the transporter Alfa, by API token
    inspector: APIClient  # a fiscal, by API token (municipal: no rate limit on reports)
    web: Client  # the transporter Alfa, signed in on the web pages
    nucleo_web: Client
    issued: str  # the number of a CTR issued before the snapshot
    tmp_path: Path


@dataclass
class Outcome:
    status: int  # HTTP status; 0 for a service call (the facility import)
    message: str
    refused_import: bool = False
    english_allowed: bool = False  # a refused import may quote GDAL's own diagnostics


def token_client(user) -> APIClient:
    client = APIClient(raise_request_exception=False)
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def web_client(user) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(get_user_model().objects.get(pk=user.pk))
    return client


@pytest.fixture
def ctx(tmp_path) -> Context:
    world = build_world()
    api = token_client(world.alfa_user)
    response = api.post("/api/v1/ctrs/", ctr_payload(world), format="json")
    assert response.status_code == 201, response.content
    return Context(
        world=world,
        api=api,
        inspector=token_client(world.fiscal),
        web=web_client(world.alfa_user),
        nucleo_web=web_client(world.nucleo),
        issued=response.json()["number"],
        tmp_path=tmp_path,
    )


# --- how a response is read --------------------------------------------------------------------


def api_outcome(response) -> Outcome:
    content_type = response.get("Content-Type", "")
    if content_type.startswith(("application/problem+json", "application/json")):
        body = response.json()
        # The detail and every error, not the title: titles are ours and always Portuguese.
        parts = [str(body.get("detail", ""))]
        parts += [str(e.get("mensagem", "")) for e in body.get("errors", []) or []]
        message = " ".join(p for p in parts if p) or str(body.get("title", ""))
        return Outcome(response.status_code, message)
    return Outcome(response.status_code, page_text(response.content))


def web_outcome(response, expected: str) -> Outcome:
    """The sentence of the page that holds `expected` (the page's layout is Portuguese anyway:
    what counts is the message about the input)."""
    text = page_text(response.content)
    at = text.find(expected)
    assert at >= 0, f"esperava “{expected}” na página: {text!r}"
    start = max(text.rfind(". ", 0, at) + 2, at - 200, 0)
    end = text.find(". ", at)
    return Outcome(response.status_code, text[start : end + 1 if end >= 0 else at + 200])


# --- GeoJSON -----------------------------------------------------------------------------------


def issue_raw(ctx: Context, body: str | bytes, content_type: str = "application/json", **extra):
    return api_outcome(ctx.api.post("/api/v1/ctrs/", body, content_type=content_type, **extra))


def issue(ctx: Context, **overrides) -> Outcome:
    return issue_raw(ctx, json.dumps(ctr_payload(ctx.world, **overrides), allow_nan=True))


def issue_literal(ctx: Context, literal: str, **overrides) -> Outcome:
    """The payload with the JSON text `literal` where an override holds "@": a number json.dumps
    would not write (1e999, a 5,000-digit integer), a raw control character."""
    text = json.dumps(ctr_payload(ctx.world, **overrides))
    assert text.count('"@"') == 1
    return issue_raw(ctx, text.replace('"@"', literal))


def issue_without(ctx: Context, *keys: str, **overrides) -> Outcome:
    payload = ctr_payload(ctx.world, **overrides)
    for key in keys:
        payload.pop(key)
    return issue_raw(ctx, json.dumps(payload))


def point(*coordinates, **extra) -> dict:
    return {"type": "Point", "coordinates": list(coordinates), **extra}


def report(ctx: Context, data, fmt: str = "json") -> Outcome:
    return api_outcome(ctx.inspector.post("/api/v1/dumping-reports/", data, format=fmt))


def polygon_filter(ctx: Context, polygon: str) -> Outcome:
    return api_outcome(ctx.inspector.get("/api/v1/dumping-reports/", {"polygon": polygon}))


def ring(lon: float = LON, lat: float = LAT, side: float = 0.01) -> list[list[float]]:
    return [[lon, lat], [lon + side, lat], [lon + side, lat + side], [lon, lat + side], [lon, lat]]


def geojson_polygon(rings, **extra) -> str:
    return json.dumps({"type": "Polygon", "coordinates": rings, **extra}, allow_nan=True)


BOW_TIE = [[[LON, LAT], [LON + 0.01, LAT + 0.01], [LON + 0.01, LAT], [LON, LAT + 0.01], [LON, LAT]]]


# --- the facility import (zipped Shapefile, GeoPackage, GeoJSON) --------------------------------


def import_file(ctx: Context, name: str, content: str | bytes) -> Outcome:
    path = ctx.tmp_path / name
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
    return import_path(path)


def import_path(path: Path) -> Outcome:
    try:
        importing.import_facilities(path)
    except importing.ImportRefused as refused:
        message = str(refused)
        assert message.startswith("Arquivo recusado, nada foi importado"), message
        return Outcome(0, message, refused_import=True, english_allowed=True)
    raise AssertionError(f"{path.name}: importado, esperava recusa")


def facility_collection(geometry, crs: dict | None = None) -> str:
    feature = {
        "type": "Feature",
        "properties": {"code": "PEV-X", "kind": "PEV", "name": "PEV do corpus"},
        "geometry": geometry,
    }
    collection = {"type": "FeatureCollection", "features": [feature]}
    if crs is not None:
        collection["crs"] = crs
    return json.dumps(collection, allow_nan=True)


def named_crs(name: str) -> dict:
    return {"type": "name", "properties": {"name": name}}


def shapefile_zip(ctx: Context, member_name: str = "{}") -> Path:
    folder = ctx.tmp_path / "shp"
    folder.mkdir()
    shp = folder / "rede.shp"
    gpd.GeoDataFrame(
        [{"code": "PEV-Z", "kind": "PEV", "name": "PEV zipado"}],
        geometry=[Polygon(ring(side=0.0005))],
        crs=4326,
    ).to_file(shp, engine="pyogrio")
    archive = ctx.tmp_path / "rede.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        for part in sorted(folder.glob("rede.*")):
            zipped.write(part, member_name.format(part.name))
    return archive


def zip_bomb(ctx: Context) -> Path:
    """A zipped Shapefile of ~2 MB whose .shp inflates to ~240 MB: a valid header announcing 20
    million records, every one of them empty."""
    records = 20_000_000
    length_words = (100 + records * 12) // 2
    header = struct.pack(">7i", 9994, 0, 0, 0, 0, 0, length_words)
    header += struct.pack("<2i8d", 1000, 5, LON, LAT, LON + 0.01, LAT + 0.01, 0, 0, 0, 0)
    block = b"".join(struct.pack(">2i", n + 1, 2) + struct.pack("<i", 0) for n in range(1000))
    archive = ctx.tmp_path / "bomba.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        with zipped.open("rede.shp", "w", force_zip64=True) as member:
            member.write(header)
            for _ in range(records // 1000):
                member.write(block)
        zipped.writestr("rede.prj", gpd.GeoSeries([], crs=4326).crs.to_wkt())
    return archive


def million_vertices() -> str:
    n = 1_000_000
    points = [
        [LON + 0.01 * math.cos(2 * math.pi * i / n), LAT + 0.01 * math.sin(2 * math.pi * i / n)]
        for i in range(n)
    ]
    return facility_collection({"type": "Polygon", "coordinates": [[*points, points[0]]]})


# --- CSV: the import page of the transporter --------------------------------------------------

HEADER = ";".join(csv_import.COLUMNS)
ROW = (
    "2026-11-30;ABC1D23;C-01;Maria da Obra;529.982.247-25;Rua das Flores, 10;Centro;"
    "-45,194836;-22,814502;-45,175021;-22,809554;;A=2,5;entulho"
)


def csv_upload(ctx: Context, content: bytes, name: str = "ctrs.csv") -> object:
    upload = SimpleUploadedFile(name, content, content_type="text/csv")
    return ctx.web.post("/transportador/ctrs/importar/", {"file": upload})


def csv_refused(ctx: Context, content: bytes, expected: str, name: str = "ctrs.csv") -> Outcome:
    response = csv_upload(ctx, content, name)
    assert response.status_code == 400, response.status_code
    return web_outcome(response, expected)


def csv_rows_refused(ctx: Context, content: bytes, expected: str) -> Outcome:
    """The file is read but its rows are refused, each with its problems: nothing issued."""
    response = csv_upload(ctx, content)
    outcome = web_outcome(response, expected)
    return Outcome(outcome.status, outcome.message, refused_import=True)


def photo_report(ctx: Context, files: list[tuple[str, bytes]], field: str = "photos") -> Outcome:
    data = {"category": "LOTE_VAGO", "lon": str(LON), "lat": str(LAT)}
    data[field] = [SimpleUploadedFile(name, content, "image/jpeg") for name, content in files]
    return report(ctx, data, fmt="multipart")


# --- the cases; one showing a bug still open is marked xfail (see the module docstring) --


def xfail(reason: str):
    return pytest.mark.xfail(strict=True, reason=f"BUG: {reason}")


Case = Callable[[Context], Outcome]


def case(fn: Case, id: str, bug: str | None = None):
    return pytest.param(fn, id=id, marks=[xfail(bug)] if bug else [])


CASES = [
    # --- GeoJSON in the API: points of the CTR and of dumping reports --------------------------
    case(lambda c: issue(c, origin=point(math.nan, LAT)), "geojson-nan"),
    case(lambda c: issue(c, origin=point(math.inf, LAT)), "geojson-infinity"),
    case(
        lambda c: issue_literal(c, "1e999", origin=point("@", LAT)),
        "geojson-overflowing-float",
    ),
    case(lambda c: issue(c, origin=point()), "geojson-empty-coordinates"),
    case(lambda c: issue(c, origin=point(LON, LAT, 700, 1)), "geojson-four-coordinates"),
    case(
        lambda c: issue_literal(c, "1e999", origin=point(LON, LAT, "@")),
        "geojson-3d-infinite-altitude",
    ),
    case(
        lambda c: issue(c, origin={"type": "Polygon", "coordinates": [ring()]}),
        "geojson-polygon-for-point",
    ),
    case(lambda c: issue(c, origin=[LON, LAT]), "geojson-bare-array"),
    case(lambda c: issue(c, origin=point(str(LON), str(LAT))), "geojson-string-coordinates"),
    case(lambda c: issue(c, origin=point(True, False)), "geojson-boolean-coordinates"),
    case(lambda c: issue(c, origin={"type": "Point"}), "geojson-no-coordinates"),
    case(
        lambda c: issue(c, origin=point(456_000, 7_476_000, crs=named_crs("EPSG:31983"))),
        "geojson-crs-member-utm",
    ),
    case(lambda c: issue(c, origin=point(LAT, LON)), "geojson-lat-lon-swapped-origin"),
    case(
        lambda c: issue(c, destination=point(*reversed(c.world.inside(c.world.att).coords))),
        "geojson-lat-lon-swapped-destination",
    ),
    case(
        lambda c: report(c, {"category": "LOTE_VAGO", "location": point(LAT, LON)}),
        "geojson-report-swapped",
    ),
    case(
        lambda c: report(c, {"category": "LOTE_VAGO", "location": "POINT(-45.19 -22.81)"}),
        "geojson-report-wkt-for-geojson",
    ),
    case(
        lambda c: report(
            c,
            {"category": "LOTE_VAGO", "location": '{"type": "Point", "coordinates": [NaN, 1]}'},
            fmt="multipart",
        ),
        "geojson-report-nan-in-form-text",
    ),
    # --- GeoJSON/WKT polygons of the inspectors' filter ------------------------------------------
    case(lambda c: polygon_filter(c, geojson_polygon([ring()[:-1]])), "polygon-unclosed-ring"),
    case(lambda c: polygon_filter(c, geojson_polygon(BOW_TIE)), "polygon-self-intersecting"),
    case(
        lambda c: polygon_filter(
            c, geojson_polygon([[[math.nan, LAT], *ring()[1:-1], [math.nan, LAT]]])
        ),
        "polygon-nan",
    ),
    case(
        lambda c: polygon_filter(c, geojson_polygon([ring()]).replace("-45.19", "1e999")),
        "polygon-infinity",
    ),
    case(lambda c: polygon_filter(c, geojson_polygon([])), "polygon-empty-coordinates"),
    case(
        lambda c: polygon_filter(c, geojson_polygon([ring()], crs=named_crs("EPSG:31983"))),
        "polygon-crs-member",
    ),
    case(
        lambda c: polygon_filter(
            c,
            geojson_polygon(
                [[[LON + i * 1e-6, LAT] for i in range(6000)] + [[LON, LAT + 0.01], [LON, LAT]]]
            ),
        ),
        "polygon-6000-vertices",
    ),
    case(
        lambda c: polygon_filter(
            c,
            "POLYGON((" + ",".join(f"{LON + i * 1e-9:.9f} {LAT}" for i in range(1_000_000)) + "))",
        ),
        "polygon-million-vertices",
    ),
    case(
        lambda c: polygon_filter(c, '{"type": "LineString", "coordinates": [[1, 1], [2, 2]]}'),
        "polygon-wrong-type",
    ),
    case(
        lambda c: polygon_filter(c, "SRID=31983;POLYGON((0 0, 1 0, 1 1, 0 0))"),
        "polygon-projected-srid",
    ),
    case(
        lambda c: polygon_filter(c, '{"type": "Polygon", "coordinates": "abc"}'),
        "polygon-coordinates-string",
    ),
    # --- GeoJSON files of the facility import --------------------------------------------------
    case(
        lambda c: import_file(
            c,
            "rede.geojson",
            facility_collection(
                {"type": "Polygon", "coordinates": [[[math.nan, LAT], *ring()[1:]]]}
            ),
        ),
        "import-geojson-nan",
    ),
    case(
        lambda c: import_file(
            c,
            "rede.geojson",
            facility_collection(
                {"type": "Polygon", "coordinates": [[[math.inf, LAT], *ring()[1:]]]}
            ),
        ),
        "import-geojson-infinity",
    ),
    case(
        lambda c: import_file(
            c,
            "rede.geojson",
            facility_collection({"type": "Polygon", "coordinates": [ring()[:-1]]}),
        ),
        "import-geojson-unclosed-ring",
    ),
    case(
        lambda c: import_file(
            c, "rede.geojson", facility_collection({"type": "Polygon", "coordinates": []})
        ),
        "import-geojson-empty-coordinates",
    ),
    case(
        lambda c: import_file(c, "rede.geojson", facility_collection(None)),
        "import-geojson-null-geometry",
    ),
    case(
        lambda c: import_file(
            c, "rede.geojson", facility_collection({"type": "Polygon", "coordinates": BOW_TIE})
        ),
        "import-geojson-self-intersecting",
    ),
    case(
        lambda c: import_file(c, "rede.geojson", million_vertices()),
        "import-geojson-million-vertices",
    ),
    case(
        lambda c: import_file(
            c, "rede.geojson", facility_collection({"type": "LineString", "coordinates": ring()})
        ),
        "import-geojson-linestring",
    ),
    case(
        lambda c: import_file(
            c,
            "rede.geojson",
            facility_collection(
                {"type": "Polygon", "coordinates": [[[str(x), str(y)] for x, y in ring()]]}
            ),
        ),
        "import-geojson-string-coordinates",
    ),
    case(
        lambda c: import_file(
            c,
            "rede.geojson",
            facility_collection(
                {"type": "Polygon", "coordinates": [ring()]}, named_crs("EPSG:999999")
            ),
        ),
        "import-geojson-unknown-crs",
    ),
    case(
        lambda c: import_file(
            c,
            "rede.geojson",
            facility_collection(
                {"type": "Polygon", "coordinates": [ring()]}, named_crs("/etc/passwd")
            ),
        ),
        "import-geojson-crs-naming-a-file",
    ),
    case(
        lambda c: import_file(c, "rede.geojson", '{"type": "FeatureCollection", "features": "x"}'),
        "import-geojson-features-string",
    ),
    case(
        lambda c: import_file(c, "rede.geojson", "[" * 100_000 + "]" * 100_000),
        "import-geojson-deep-nesting",
    ),
    # --- uploads: zipped Shapefile, empty file, wrong extension ----------------------------------
    case(lambda c: import_path(shapefile_zip(c, "../../{}")), "import-zip-path-traversal"),
    case(lambda c: import_path(shapefile_zip(c, "/tmp/{}")), "import-zip-absolute-paths"),
    case(lambda c: import_path(zip_bomb(c)), "import-zip-bomb"),
    case(lambda c: import_file(c, "rede.geojson", b""), "import-empty-file"),
    case(lambda c: import_file(c, "rede.geojson", "{ isto não é JSON"), "import-not-json"),
    case(
        lambda c: import_file(c, "rede.gpkg", b"\x89PNG\r\n\x1a\n" + bytes(200)),
        "import-png-named-gpkg",
    ),
    case(
        lambda c: import_file(
            c, "rede.zip", facility_collection({"type": "Polygon", "coordinates": [ring()]})
        ),
        "import-geojson-named-zip",
    ),
    case(
        lambda c: import_file(c, "rede.csv", "code,kind,name\nP1,PEV,PEV\n"),
        "import-table-without-geometry",
    ),
    # --- JSON bodies ------------------------------------------------------------------------------
    case(lambda c: issue_raw(c, "[" * 100_000 + "]" * 100_000), "json-deep-nesting-arrays"),
    case(lambda c: issue_raw(c, '{"a":' * 5_000 + "1" + "}" * 5_000), "json-deep-nesting-objects"),
    case(
        lambda c: issue(
            c,
            generator={
                "name": json.loads('{"a":' * 50 + "1" + "}" * 50),
                "document": "529.982.247-25",
            },
        ),
        "json-nested-object-for-text",
    ),
    case(
        lambda c: issue_literal(c, "9" * 5000, waste=[{"class": "A", "volume_m3": "@"}]),
        "json-huge-integer",
    ),
    case(
        lambda c: issue_literal(c, "1e400", waste=[{"class": "A", "volume_m3": "@"}]),
        "json-huge-float",
    ),
    case(
        lambda c: issue(c, waste=[{"class": "A", "volume_m3": "9" * 40}]),
        "json-huge-decimal-string",
    ),
    case(lambda c: issue_without(c, "worksite", worksite_id=10**20), "json-id-beyond-bigint"),
    case(lambda c: issue(c, destination_facility=10**20), "json-facility-beyond-bigint"),
    case(
        lambda c: issue(c, generator={"name": "x" * MB, "document": "529.982.247-25"}),
        "json-huge-string",
    ),
    case(lambda c: issue(c, pad="x" * (13 * MB)), "json-body-over-the-limit"),
    case(lambda c: issue_raw(c, "null"), "json-null-body"),
    case(lambda c: issue_raw(c, '"um texto"'), "json-string-body"),
    case(lambda c: issue_raw(c, ""), "json-empty-body"),
    case(lambda c: issue(c, origin=None), "json-null-field"),
    case(lambda c: issue(c, waste=[None]), "json-null-list-item"),
    case(lambda c: issue(c, waste={"class": "A", "volume_m3": "1"}), "json-object-for-list"),
    case(lambda c: issue(c, transport_date=20261130), "json-number-for-date"),
    case(lambda c: issue(c, vehicle_plate=["ABC1D23"]), "json-list-for-text"),
    case(
        lambda c: issue(c, waste=[{"class": "A", "volume_m3": "NaN"}]),
        "json-nan-string-for-decimal",
    ),
    case(lambda c: issue(c, waste=[{"class": "A", "volume_m3": "1"}] * 21), "json-too-many-lines"),
    case(
        lambda c: issue(c, generator={"name": "Maria\x00da Obra", "document": "529.982.247-25"}),
        "json-nul-character",
    ),
    case(
        lambda c: issue_literal(
            c, '"Ma\x01ria"', generator={"name": "@", "document": "529.982.247-25"}
        ),
        "json-raw-control-character",
    ),
    case(lambda c: issue_raw(c, "{não é json"), "json-malformed"),
    case(
        lambda c: issue_raw(
            c,
            json.dumps(ctr_payload(c.world), ensure_ascii=False)
            .replace("Maria", "Mária")
            .encode("latin-1"),
        ),
        "json-latin1-bytes",
    ),
    case(
        lambda c: api_outcome(
            c.api.post(
                f"/api/v1/ctrs/{c.issued}/cancel/", {"reason": "sem\x00motivo"}, format="json"
            )
        ),
        "json-nul-in-cancel-reason",
    ),
    case(
        lambda c: report(
            c, {"category": "LOTE_VAGO", "lon": LON, "lat": LAT, "description": "a\x00b"}
        ),
        "json-nul-in-report",
    ),
    case(
        lambda c: report(c, {"category": ["LOTE_VAGO"], "lon": LON, "lat": LAT}),
        "json-list-for-choice",
    ),
    # --- headers ----------------------------------------------------------------------------
    case(
        lambda c: issue_raw(c, json.dumps(ctr_payload(c.world)), "text/plain"),
        "header-content-type-text",
    ),
    case(lambda c: issue_raw(c, "<ctr/>", "application/xml"), "header-content-type-xml"),
    case(
        lambda c: api_outcome(c.api.get("/api/v1/ctrs/", HTTP_ACCEPT="application/xml")),
        "header-accept-xml",
    ),
    case(
        lambda c: api_outcome(APIClient().get("/api/v1/ctrs/", HTTP_AUTHORIZATION="Token abc")),
        "header-unknown-token",
    ),
    case(
        lambda c: api_outcome(APIClient().get("/api/v1/ctrs/", HTTP_AUTHORIZATION="Token a b")),
        "header-token-with-space",
    ),
    case(
        lambda c: api_outcome(
            APIClient(raise_request_exception=False).get(
                "/api/v1/ctrs/", HTTP_AUTHORIZATION="Token a\x00b"
            )
        ),
        "header-token-with-nul",
    ),
    case(
        lambda c: api_outcome(APIClient().get("/api/v1/ctrs/", HTTP_AUTHORIZATION="Bearer xyz")),
        "header-other-scheme",
    ),
    case(
        lambda c: api_outcome(
            APIClient().get("/api/v1/ctrs/", HTTP_AUTHORIZATION="Token " + "a" * 10_000)
        ),
        "header-huge-token",
    ),
    case(
        lambda c: api_outcome(c.api.get("/api/v1/ctrs/", HTTP_HOST="invasor.example")),
        "header-foreign-host",
    ),
    case(
        lambda c: api_outcome(c.api.patch("/api/v1/ctrs/", {}, format="json")),
        "header-method-not-allowed",
    ),
    # --- query strings --------------------------------------------------------------------------
    case(lambda c: api_outcome(c.api.get("/api/v1/ctrs/?cursor=abc")), "query-cursor-garbled"),
    case(lambda c: api_outcome(c.api.get("/api/v1/ctrs/?status=XX")), "query-unknown-choice"),
    case(
        lambda c: api_outcome(c.api.get("/api/v1/ctrs/?date_from=2026-13-45")),
        "query-impossible-date",
    ),
    case(lambda c: api_outcome(c.api.get("/api/v1/ctrs/?bbox=nan,1,2,3")), "query-bbox-nan"),
    case(
        lambda c: api_outcome(c.api.get("/api/v1/facilities/?bbox=1,2,3,4,5")),
        "query-bbox-five-numbers",
    ),
    case(
        lambda c: api_outcome(c.api.get("/api/v1/facilities/?bbox=-45.1,-22.7,-45.2,-22.8")),
        "query-bbox-inverted",
    ),
    case(
        lambda c: api_outcome(c.api.get("/api/v1/facilities/?municipality=%00")),
        "query-nul-character",
    ),
    case(lambda c: api_outcome(c.api.get("/api/v1/ctrs/?plate=AB%00C")), "query-nul-in-plate"),
    case(
        lambda c: api_outcome(
            c.api.get("/api/v1/facilities/nearest/?lon=1e999&lat=-22.8&volume_m3=1")
        ),
        "query-longitude-infinite",
    ),
    case(
        lambda c: api_outcome(
            c.api.get(
                f"/api/v1/facilities/nearest/?lon={LON}&lat={LAT}&volume_m3=1&limit={'9' * 30}"
            )
        ),
        "query-huge-limit",
    ),
    case(
        lambda c: api_outcome(c.api.get(f"/api/v1/facilities/nearest/?lon={LON}&lat={LAT}")),
        "query-missing-parameter",
    ),
    case(
        lambda c: api_outcome(c.api.get("/ogc/collections/facilities/items?bbox=1,2,3")),
        "query-ogc-bbox",
    ),
    case(
        lambda c: api_outcome(c.api.get("/ogc/collections/facilities/items?foo=1")),
        "query-ogc-unknown-parameter",
    ),
    case(
        lambda c: api_outcome(c.api.get("/ogc/collections/facilities/items?datetime=ontem")),
        "query-ogc-datetime",
    ),
    case(
        lambda c: api_outcome(c.api.get("/ogc/collections/facilities/items?limit=0")),
        "query-ogc-limit-zero",
    ),
    case(
        lambda c: api_outcome(c.api.get("/ogc/collections/facilities/items?offset=" + "9" * 30)),
        "query-ogc-huge-offset",
    ),
    case(
        lambda c: api_outcome(c.api.get("/ogc/collections/facilities/items/%C2%B2")),
        "query-ogc-superscript-id",
    ),
    case(
        lambda c: api_outcome(c.inspector.get("/api/v1/dumping-reports/?near=nan,nan&radius_m=10")),
        "query-near-nan",
    ),
    case(
        lambda c: api_outcome(c.inspector.get("/api/v1/dumping-reports/?municipality=123")),
        "query-short-ibge-code",
    ),
    case(
        lambda c: api_outcome(
            c.inspector.get("/api/v1/dumping-reports/?date_from=2026-12-01&date_to=2026-01-01")
        ),
        "query-dates-inverted",
    ),
    case(
        lambda c: web_outcome(c.web.get("/transportador/ctrs/?status=%00"), "escolha válida"),
        "query-web-nul-filter",
    ),
    case(
        lambda c: web_outcome(c.web.get("/taxas/2026-99/"), "não é um mês válido"),
        "query-web-impossible-month",
    ),
    case(
        lambda c: web_outcome(c.nucleo_web.get("/nucleo/?date_from=0000-01-01"), "data válida"),
        "query-web-year-zero",
    ),
    case(
        lambda c: web_outcome(
            c.nucleo_web.get("/nucleo/?date_from=2026-12-01&date_to=2026-01-01"), "posterior"
        ),
        "query-web-dates-inverted",
    ),
    case(
        lambda c: web_outcome(c.nucleo_web.get("/nucleo/?csv=senhas"), "não existe"),
        "query-web-unknown-table",
    ),
    case(
        lambda c: web_outcome(
            c.nucleo_web.get("/nucleo/exportar/..%2F..%2Fetc%2Fpasswd"), "não existe"
        ),
        "query-web-export-path-traversal",
    ),
    # --- CSV uploads (the transporter's import page) -----------------------------------------
    case(lambda c: csv_refused(c, b"", "arquivo submetido"), "csv-empty-file"),
    case(lambda c: csv_refused(c, b"\xef\xbb\xbf", "cabeçalho"), "csv-bom-only"),
    case(
        lambda c: csv_refused(c, ("\ufeff" + HEADER + "\r\n").encode(), "cabeçalho"),
        "csv-bom-header-only",
    ),
    case(
        lambda c: csv_refused(c, ("\ufeff" + HEADER + "\r\n" + ROW).encode("utf-16-le"), "binário"),
        "csv-utf16-with-bom",
    ),
    case(
        lambda c: csv_refused(
            c, (HEADER + "\n" + ROW).replace(";", "\t").encode(), "Faltam colunas"
        ),
        "csv-tab-separated",
    ),
    case(
        lambda c: csv_refused(
            c, (HEADER + "\n" + ROW).replace(";", "|").encode(), "Faltam colunas"
        ),
        "csv-pipe-separated",
    ),
    case(
        lambda c: csv_refused(
            c, b"PK\x03\x04\x14\x00\x00\x00\x08\x00" + bytes(64), "binário", "ctrs.xlsx"
        ),
        "csv-spreadsheet-with-wrong-extension",
    ),
    case(
        lambda c: csv_refused(
            c, (HEADER + "\n" + ROW.replace("Maria", "Ma\x00ria")).encode(), "binário"
        ),
        "csv-nul-byte",
    ),
    case(lambda c: csv_refused(c, b"x" * (3 * MB), "limite"), "csv-over-the-limit"),
    case(lambda c: csv_refused(c, b"x" * (100 * MB), "limite"), "csv-100-mb"),
    case(
        lambda c: csv_rows_refused(
            c, (HEADER + "\n" + ROW.replace("A=2,5", "=1+1")).encode(), "CLASSE=VOLUME"
        ),
        "csv-formula-in-cell",
    ),
    case(
        lambda c: csv_rows_refused(
            c,
            (
                HEADER + "\n" + ROW.replace("-45,194836;-22,814502", "-22,814502;-45,194836")
            ).encode(),
            "município",
        ),
        "csv-lat-lon-swapped",
    ),
    case(
        lambda c: csv_rows_refused(
            c, (HEADER + "\n" + ROW + ";a;b").encode(), "mais campos que o cabeçalho"
        ),
        "csv-more-fields-than-header",
    ),
    case(
        lambda c: csv_rows_refused(
            c, (HEADER.replace(";", ",") + "\n" + ROW.replace(";", ",")).encode(), "mais campos"
        ),
        "csv-comma-separated-with-decimal-commas",
    ),
    # --- photo uploads of dumping reports ----------------------------------------------------
    case(lambda c: photo_report(c, [("foto.jpg", b"isto e texto")]), "upload-text-named-jpg"),
    case(lambda c: photo_report(c, [("foto.jpg", b"")]), "upload-empty-photo"),
    case(
        lambda c: photo_report(c, [("foto.svg", b"<svg xmlns='http://www.w3.org/2000/svg'/>")]),
        "upload-svg",
    ),
    case(
        lambda c: photo_report(c, [("../../etc/passwd.jpg", b"root:x:0:0")]),
        "upload-path-traversal-name",
    ),
    case(
        lambda c: photo_report(c, [("grande.jpg", b"\xff\xd8" + bytes(9 * MB))]),
        "upload-photo-over-the-limit",
    ),
    case(lambda c: photo_report(c, [("f.jpg", b"x")] * 6), "upload-too-many-photos"),
    case(
        lambda c: photo_report(c, [("foto.jpg", b"x")], field="arquivo"),
        "upload-unknown-file-field",
    ),
]


@pytest.mark.parametrize("run", CASES)
def test_bad_input_is_refused_in_portuguese_and_changes_nothing(ctx, run):
    before = database_state()
    outcome = run(ctx)
    if outcome.refused_import:
        assert outcome.status in (0, 200, 400), outcome
    else:
        assert 400 <= outcome.status < 500, outcome
    assert_portuguese(outcome.message, english_allowed=outcome.english_allowed)
    assert changed_tables(before, database_state()) == {}


def test_corpus_has_at_least_50_cases():
    assert len(CASES) >= 50
    assert len({p.id for p in CASES}) == len(CASES)


# --- CSV export: a cell that a spreadsheet would run as a formula ------------------------------

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def is_number(text: str) -> bool:
    try:
        float(text.replace(",", "."))
    except ValueError:
        return False
    return True


def test_exported_csv_neutralizes_formulas(tmp_path):
    """An equipment code is text a transporter types; the Núcleo opens the export in a
    spreadsheet. A cell starting with = + - @ must not be taken for a formula there (OWASP:
    prefix it with an apostrophe), unless it is a plain number such as a longitude."""
    world = build_world()
    formula = '=HYPERLINK("http://x";"ok")'
    client = token_client(world.alfa_user)
    created = client.post(
        "/api/v1/equipment/",
        {"code": formula, "kind": "CACAMBA", "nominal_capacity_m3": "5"},
        format="json",
    )
    if 400 <= created.status_code < 500:  # refused at the door is fine too
        return
    equipment = Equipment.objects.get(transporter=world.alfa, code__startswith="=")
    services.issue(
        world.alfa,
        world.alfa_user,
        services.IssueRequest(
            transport_date=TODAY,
            vehicle_plate="ABC1D23",
            equipment_code=equipment.code,
            origin=world.origin,
            destination=world.inside(world.att),
            waste=[rules.WasteLine("A", Decimal("3"), "")],
            generator=services.GeneratorData("Maria da Obra", "52998224725"),
        ),
    )
    assert CTR.objects.filter(equipment=equipment).exists()
    from ctr.exports import export_ctrs

    path = tmp_path / "ctrs.csv"
    export_ctrs(path, TODAY - datetime.timedelta(days=1), TODAY + datetime.timedelta(days=1))
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig")), delimiter=";"))
    cells = [cell for row in rows[1:] for cell in row]
    dangerous = [c for c in cells if c.startswith(FORMULA_STARTS) and not is_number(c)]
    assert dangerous == []
