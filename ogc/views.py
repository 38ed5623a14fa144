"""OGC API – Features, Part 1 (Core) with GeoJSON, for QGIS, ArcGIS and GDAL clients.

Every response is JSON; errors are JSON too, with the status the standard asks for (400 for an
unknown or malformed parameter, 404 for an unknown collection or feature).
"""

from __future__ import annotations

import datetime
import json
import math

from django.http import HttpResponse, JsonResponse
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET
from rest_framework.exceptions import AuthenticationFailed

from config.authentication import TokenAuthentication
from config.br import br_number
from config.replica import read_connection, replica_readable
from jurisdiction.access import DataScope
from jurisdiction.scope import jurisdiction_of

from .collections import COLLECTIONS, Collection

GEOJSON = "application/geo+json"
CONFORMANCE = [
    "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core",
    "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson",
]
DEFAULT_LIMIT = 100
MAX_LIMIT = 10_000
# Far beyond any collection of ours, and far below PostgreSQL's bigint.
MAX_OFFSET = 10_000_000
# Feature ids are bigint: 19 digits at most.
MAX_ID_DIGITS = 18
CRS84 = "http://www.opengis.net/def/crs/OGC/1.3/CRS84"


class BadRequest(Exception):
    pass


def problem(status: int, detail: str) -> JsonResponse:
    titles = {400: "Requisição inválida", 401: "Não autenticado", 404: "Não encontrado"}
    return JsonResponse(
        {"type": "about:blank", "title": titles.get(status, "Erro"), "status": status,
         "detail": detail},
        status=status,
        content_type="application/problem+json",
        json_dumps_params={"ensure_ascii": False},
    )  # fmt: skip


def user_of(request):
    """Session or API token: GIS clients send `Authorization: Token …` (GDAL_HTTP_HEADERS)."""
    if request.user.is_authenticated:
        return request.user
    try:
        found = TokenAuthentication().authenticate(request)
    except AuthenticationFailed:
        return request.user
    return found[0] if found else request.user


def readable(request) -> frozenset[int] | None:
    """The municipalities whose rows the caller reads (jurisdiction.scope); None: all."""
    return jurisdiction_of(user_of(request)).readable_ids


def absolute(request, name: str, *args) -> str:
    return request.build_absolute_uri(reverse(name, args=args))


def only_params(request, allowed: set[str]) -> None:
    unknown = sorted(set(request.GET) - allowed)
    if unknown:
        raise BadRequest(f"Parâmetro(s) desconhecido(s): {', '.join(unknown)}.")


def json_response(body: dict, content_type: str = "application/json") -> HttpResponse:
    return HttpResponse(
        json.dumps(body, ensure_ascii=False, default=str), content_type=content_type
    )


def guarded(view):
    def wrapper(request, *args, **kwargs):
        try:
            return view(request, *args, **kwargs)
        except BadRequest as exc:
            return problem(400, str(exc))

    wrapper.__name__ = view.__name__
    wrapper.__doc__ = view.__doc__
    # Public collections (the network) for anyone; the CTRs' only to the municipal staff, each
    # its municipalities' rows (Collection.scope).
    wrapper.data_scope = DataScope.SIGNED_IN
    # Read from the replica when there is one (config/replica.py): QGIS clients page through
    # whole layers.
    return replica_readable(require_GET(wrapper))


@guarded
def landing(request):
    only_params(request, {"f"})
    return json_response(
        {
            "title": "CTR — Controle de Transporte de Resíduos: dados geográficos",
            "description": "Rede licenciada de recebimento de RCC e volumosos, bacias de "
            "captação e municípios (OGC API – Features).",
            "links": [
                {"href": absolute(request, "ogc-landing"), "rel": "self",
                 "type": "application/json", "title": "esta página"},
                {"href": absolute(request, "api-docs"), "rel": "service-doc",
                 "type": "text/html", "title": "documentação"},
                {"href": absolute(request, "ogc-conformance"), "rel": "conformance",
                 "type": "application/json", "title": "conformidade"},
                {"href": absolute(request, "ogc-collections"), "rel": "data",
                 "type": "application/json", "title": "coleções"},
            ],
        }
    )  # fmt: skip


@guarded
def conformance(request):
    only_params(request, {"f"})
    return json_response({"conformsTo": CONFORMANCE})


def scope_sql(collection: Collection, municipalities, part: int | None = None):
    """The WHERE fragment and params of a scoped collection's rows of `municipalities`: any of
    its fragments; with `part`, that fragment's rows without those of the fragments before
    it (the rows of all the parts add up to the scope's, each once). None for a collection
    that is the same for everyone, or a caller who reads every municipality."""
    if collection.scope is None or municipalities is None:
        return None
    ids = sorted(municipalities)
    if part is None:
        sql = "(" + " OR ".join(collection.scope) + ")"
    else:
        sql = f"({collection.scope[part]})"
        if part:
            # IS NOT TRUE: a fragment that is NULL on a row did not take it either.
            sql += f" AND ({' OR '.join(collection.scope[:part])}) IS NOT TRUE"
    return sql, [ids] * sql.count("%s")


def extent_of(collection: Collection, municipalities=None) -> list[float]:
    """The extent of the rows the caller reads (a scoped collection's: its municipalities')."""
    where, params = collection.where_sql(timezone.localdate()), []
    scoped = scope_sql(collection, municipalities)
    if scoped is not None:
        where, params = f"{where} AND {scoped[0]}", scoped[1]
    with read_connection.cursor() as cursor:
        cursor.execute(
            f"SELECT ST_Extent(t.{collection.geometry}) FROM {collection.table} t WHERE {where}",
            params,
        )
        box = cursor.fetchone()[0]
    if not box:
        return [-180.0, -90.0, 180.0, 90.0]
    corners = box.removeprefix("BOX(").removesuffix(")").replace(",", " ").split()
    return [float(v) for v in corners]


def describe(request, collection: Collection) -> dict:
    items = absolute(request, "ogc-items", collection.id)
    return {
        "id": collection.id,
        "title": collection.title,
        "description": collection.description,
        "itemType": "feature",
        "crs": [CRS84],
        "extent": {
            "spatial": {"bbox": [extent_of(collection, readable(request))], "crs": CRS84}
        },
        "links": [
            {"href": absolute(request, "ogc-collection", collection.id), "rel": "self",
             "type": "application/json", "title": collection.title},
            {"href": items, "rel": "items", "type": GEOJSON, "title": collection.title},
        ],
    }  # fmt: skip


def visible_collection(request, collection_id: str) -> Collection | None:
    collection = COLLECTIONS.get(collection_id)
    if collection is None or not collection.is_visible(user_of(request)):
        return None
    return collection


@guarded
def collections(request):
    only_params(request, {"f"})
    user = user_of(request)
    return json_response(
        {
            "links": [{"href": absolute(request, "ogc-collections"), "rel": "self",
                       "type": "application/json", "title": "coleções"}],
            "collections": [describe(request, c) for c in COLLECTIONS.values()
                            if c.is_visible(user)],
        }
    )  # fmt: skip


@guarded
def collection(request, collection_id: str):
    only_params(request, {"f"})
    found = visible_collection(request, collection_id)
    if found is None:
        return problem(404, f"A coleção '{collection_id}' não existe.")
    return json_response(describe(request, found))


def _integer(name: str, raw: str) -> int:
    """An integer written in ASCII digits, with an optional sign: not '²', not 5,000 digits
    (anything past MAX_ID_DIGITS digits comes back as a number past every limit)."""
    text = raw.strip()
    digits = text[1:] if text[:1] in "+-" else text
    if not (digits.isascii() and digits.isdigit()):
        raise BadRequest(f"{name} '{raw[:40]}' não é um número inteiro.")
    significant = digits.lstrip("0") or "0"
    value = int(significant[: MAX_ID_DIGITS + 1])
    return -value if text.startswith("-") else value


def parse_limit(raw: str | None) -> int:
    if raw is None:
        return DEFAULT_LIMIT
    value = _integer("limit", raw)
    if value < 1:
        raise BadRequest("limit deve ser pelo menos 1.")
    return min(value, MAX_LIMIT)  # the standard lets the server cap it


def parse_offset(raw: str | None) -> int:
    if raw is None:
        return 0
    value = _integer("offset", raw)
    if value < 0:
        raise BadRequest("offset não pode ser negativo.")
    if value > MAX_OFFSET:
        raise BadRequest(f"offset grande demais: o limite é {br_number(MAX_OFFSET)}.")
    return value


def parse_after(raw: str | None) -> int | None:
    """`after`: the id of the last feature of the previous page (our `next` links carry it)."""
    if raw is None:
        return None
    value = _integer("after", raw)
    if value < 0:
        raise BadRequest("after não pode ser negativo: use o link “next” da página anterior.")
    return min(value, 10**MAX_ID_DIGITS)  # past every id, and still a bigint


def parse_bbox(raw: str | None) -> list[float] | None:
    if raw is None:
        return None
    parts = raw.split(",")
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise BadRequest("bbox deve ter 4 (ou 6) números separados por vírgula.") from None
    if len(values) == 6:  # 3D box: keep the horizontal part
        values = [values[0], values[1], values[3], values[4]]
    if len(values) != 4 or not all(math.isfinite(v) for v in values):
        raise BadRequest("bbox deve ter 4 (ou 6) números separados por vírgula.")
    min_lon, min_lat, max_lon, max_lat = values
    if not (-180 <= min_lon <= 180 and -180 <= max_lon <= 180):
        raise BadRequest("bbox: longitude fora do intervalo de -180 a 180.")
    if not (-90 <= min_lat <= max_lat <= 90):
        raise BadRequest("bbox: latitudes fora do intervalo ou invertidas.")
    if min_lon > max_lon:
        raise BadRequest("bbox atravessando o antimeridiano não é suportado.")
    return values


def parse_datetime(raw: str | None) -> tuple[datetime.date | None, datetime.date | None] | None:
    """A date, or an interval `start/end` with `..` for open ends (RFC 3339 dates or times)."""
    if raw is None:
        return None

    def one(text: str) -> datetime.date | None:
        if text in ("..", ""):
            return None
        try:
            return datetime.date.fromisoformat(text[:10])
        except ValueError:
            raise BadRequest(
                f"datetime '{raw}' não é uma data RFC 3339 nem um intervalo."
            ) from None

    if "/" in raw:
        start, end = raw.split("/", 1)
        return one(start), one(end)
    day = one(raw)
    return day, day


def items_sql(
    collection: Collection,
    bbox,
    dates,
    feature_id=None,
    after=None,
    municipalities=None,
    scope_part: int | None = None,
) -> tuple[str, str, list]:
    """WHERE clause and its params, and the feature expression, for the collection; a scoped
    collection's rows of `municipalities` only (None: every municipality's, the superuser's),
    or of one part of its scope (scope_sql)."""
    today = timezone.localdate()
    where = [collection.where_sql(today)]
    params: list = []
    scoped = scope_sql(collection, municipalities, scope_part)
    if scoped is not None:
        where.append(scoped[0])
        params.extend(scoped[1])
    if feature_id is not None:
        where.append("t.id = %s")
        params.append(feature_id)
    if after is not None:
        where.append("t.id > %s")
        params.append(after)
    if bbox is not None:
        # Intersects a box explicitly in 4326: the GiST index answers the && part.
        where.append(
            f"ST_Intersects(t.{collection.geometry}, ST_MakeEnvelope(%s, %s, %s, %s, 4326))"
        )
        params.extend(bbox)
    if dates is not None and collection.temporal:
        start, end = dates
        if start:
            where.append(f"t.{collection.temporal_end or collection.temporal} >= %s")
            params.append(start)
        if end:
            where.append(f"t.{collection.temporal} <= %s")
            params.append(end)
    properties = ", ".join(
        f"'{name}', {expr}" for name, expr in collection.properties_sql(today).items()
    )
    feature = (
        "json_build_object('type', 'Feature', 'id', t.id, "
        f"'geometry', ST_AsGeoJSON(t.{collection.geometry}, 7)::json, "
        f"'properties', json_build_object({properties}))"
    )
    return " AND ".join(where), feature, params


def count_sql(collection: Collection, bbox, dates, municipalities=None) -> tuple[str, list]:
    """The SELECT of numberMatched: for a scope of several fragments, the sum of each part's
    count (scope_sql), so that each is answered by its own index alone."""
    parts = [None]
    if collection.scope is not None and municipalities is not None and len(collection.scope) > 1:
        parts = list(range(len(collection.scope)))
    counts, params = [], []
    for part in parts:
        where, _feature, part_params = items_sql(
            collection, bbox, dates, municipalities=municipalities, scope_part=part
        )
        counts.append(f"(SELECT count(*) FROM {collection.table} t WHERE {where})")
        params.extend(part_params)
    return "SELECT " + " + ".join(counts), params


@guarded
def items(request, collection_id: str):
    """A page of features in id order. The `next` link continues after the last id of the page
    (keyset): each page costs the same however deep, where an OFFSET walks every row before it
    (a GIS client reading a million CTR origins page by page did that a hundred times).
    `offset` still works for clients that build their own pages; numberMatched comes with the
    first page (and offset pages), not with every `after` page, where it would count the whole
    collection again each time."""
    only_params(request, {"f", "limit", "offset", "after", "bbox", "datetime"})
    found = visible_collection(request, collection_id)
    if found is None:
        return problem(404, f"A coleção '{collection_id}' não existe.")
    limit = parse_limit(request.GET.get("limit"))
    offset = parse_offset(request.GET.get("offset"))
    after = parse_after(request.GET.get("after"))
    if after is not None and offset:
        raise BadRequest("Use after ou offset, não os dois.")
    bbox = parse_bbox(request.GET.get("bbox"))
    dates = parse_datetime(request.GET.get("datetime"))
    municipalities = readable(request)
    where, feature, params = items_sql(
        found, bbox, dates, after=after, municipalities=municipalities
    )
    matched = None
    with read_connection.cursor() as cursor:
        if after is None:
            cursor.execute(*count_sql(found, bbox, dates, municipalities))
            matched = cursor.fetchone()[0]
        cursor.execute(
            f"SELECT coalesce(json_agg(f), '[]'::json) FROM ("
            f"SELECT {feature} AS f FROM {found.table} t WHERE {where} "
            f"ORDER BY t.id LIMIT %s OFFSET %s) s",
            [*params, limit + 1, offset],  # one more: is there a next page?
        )
        features = cursor.fetchone()[0]
    if isinstance(features, str):
        features = json.loads(features)
    more, features = len(features) > limit, features[:limit]
    base = absolute(request, "ogc-items", found.id)
    query = request.GET.copy()
    for name in ("offset", "after"):
        query.pop(name, None)
    query["limit"] = str(limit)
    here = f"&after={after}" if after is not None else f"&offset={offset}"
    links = [{"href": f"{base}?{query.urlencode()}{here}", "rel": "self",
              "type": GEOJSON, "title": "esta página"},
             {"href": absolute(request, "ogc-collection", found.id), "rel": "collection",
              "type": "application/json", "title": found.title}]  # fmt: skip
    if more:
        links.append({"href": f"{base}?{query.urlencode()}&after={features[-1]['id']}",
                      "rel": "next", "type": GEOJSON, "title": "próxima página"})  # fmt: skip
    body = {
        "type": "FeatureCollection",
        "features": features,
        **({"numberMatched": matched} if matched is not None else {}),
        "numberReturned": len(features),
        "timeStamp": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "links": links,
    }
    return json_response(body, GEOJSON)


@guarded
def item(request, collection_id: str, feature_id: str):
    only_params(request, {"f"})
    found = visible_collection(request, collection_id)
    if found is None:
        return problem(404, f"A coleção '{collection_id}' não existe.")
    if not (feature_id.isascii() and feature_id.isdigit()) or len(feature_id) > MAX_ID_DIGITS:
        return problem(404, f"A feição '{feature_id[:40]}' não existe.")
    where, feature, params = items_sql(
        found, None, None, int(feature_id), municipalities=readable(request)
    )
    with read_connection.cursor() as cursor:
        cursor.execute(f"SELECT {feature} FROM {found.table} t WHERE {where}", params)
        row = cursor.fetchone()
    if row is None:
        return problem(404, f"A feição '{feature_id}' não existe na coleção '{found.id}'.")
    body = row[0] if isinstance(row[0], dict) else json.loads(row[0])
    body["links"] = [
        {"href": absolute(request, "ogc-item", found.id, feature_id), "rel": "self",
         "type": GEOJSON, "title": "esta feição"},
        {"href": absolute(request, "ogc-collection", found.id), "rel": "collection",
         "type": "application/json", "title": found.title},
    ]  # fmt: skip
    return json_response(body, GEOJSON)
