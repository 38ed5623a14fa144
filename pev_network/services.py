"""Business logic of the receiving network: plain functions, used by API, views and commands."""

from __future__ import annotations

import datetime
from decimal import Decimal

from django.contrib.gis.geos import GEOSGeometry, MultiPolygon, Point, Polygon
from django.db import connection, transaction
from django.db.models import Q
from django.db.models.expressions import RawSQL
from django.utils import timezone

from config.br import br_number
from config.errors import DomainError

from .models import (
    CatchmentBasin,
    FacilityKind,
    Municipality,
    MunicipalityPiece,
    MunicipalParameters,
    ReceivingFacility,
    known_law_fields,
    parameter_on,
)

# Vertices per piece of a subdivided boundary: small enough that a point test is cheap,
# large enough that a 700-vertex boundary becomes a few dozen pieces.
SUBDIVIDE_MAX_VERTICES = 64


class NetworkError(DomainError):
    """The receiving network, its geodata or a search in it refused the operation."""


def today() -> datetime.date:
    return timezone.localdate()


@transaction.atomic
def parameters_from(municipality: Municipality, day: datetime.date, **values):
    """The municipality's parameters change from `day` on to `values`: the set starting that
    day if there is one (it must not have started yet), else a new one with the figures of the
    set in force on `day` and `values`. Validated by the model (MunicipalParameters.clean:
    nothing changes backwards), so a refusal is a ValidationError and nothing is written."""
    found = MunicipalParameters.objects.filter(municipality=municipality, valid_from=day).first()
    if found is None:
        found = MunicipalParameters(municipality=municipality, valid_from=day)
        found.take_values_of(municipality.parameters_on(day))
    for name, value in values.items():
        setattr(found, name, value)
    found.full_clean()
    found.save()
    return found


def as_multipolygon(geom: GEOSGeometry) -> MultiPolygon:
    if isinstance(geom, MultiPolygon):
        return geom
    if isinstance(geom, Polygon):
        multi = MultiPolygon(geom)
        multi.srid = geom.srid
        return multi
    raise NetworkError(f"Geometria do tipo {geom.geom_type} onde se espera um polígono.")


@transaction.atomic
def refresh_municipality_pieces(municipality_ids: list[int] | None = None) -> int:
    """Rebuild the subdivided copies of the given boundaries (all, when None)."""
    where = "" if municipality_ids is None else "WHERE m.id = ANY(%s)"
    params = [] if municipality_ids is None else [list(municipality_ids)]
    with connection.cursor() as cursor:
        if municipality_ids is None:
            cursor.execute(f"DELETE FROM {MunicipalityPiece._meta.db_table}")
        else:
            cursor.execute(
                f"DELETE FROM {MunicipalityPiece._meta.db_table} WHERE municipality_id = ANY(%s)",
                params,
            )
        # ST_Subdivide of a polygon yields polygons; the type filter guards odd inputs.
        cursor.execute(
            f"""
            INSERT INTO {MunicipalityPiece._meta.db_table} (municipality_id, geom)
            SELECT id, piece FROM (
                SELECT m.id, ST_Subdivide(m.boundary, {SUBDIVIDE_MAX_VERTICES}) AS piece
                FROM {Municipality._meta.db_table} m {where}
            ) s
            WHERE GeometryType(piece) = 'POLYGON'
            """,
            params,
        )
        return cursor.rowcount


@transaction.atomic
def save_municipality(
    ibge_code: str, name: str, uf: str, boundary: GEOSGeometry, source: str = ""
) -> tuple[Municipality, bool]:
    """Create or update a municipality by IBGE code; its legal parameters are kept on update
    (a new one starts with its waste law when the platform knows it)."""
    boundary = as_multipolygon(boundary)
    municipality, created = Municipality.objects.update_or_create(
        ibge_code=ibge_code,
        defaults={"name": name, "uf": uf.upper(), "boundary": boundary, "boundary_source": source},
        create_defaults={
            "name": name,
            "uf": uf.upper(),
            "boundary": boundary,
            "boundary_source": source,
            **known_law_fields(ibge_code),
        },
    )
    refresh_municipality_pieces([municipality.pk])
    return municipality, created


# The municipality whose boundary covers a point (a point on the border counts), on the
# subdivided pieces: ST_Intersects of a point and a polygon is covers (the fence counts as
# inside), and it lets the planner use the GiST index on the small pieces. Params: lon, lat.
MUNICIPALITY_AT_SQL = f"""
    SELECT municipality_id FROM {MunicipalityPiece._meta.db_table}
    WHERE ST_Intersects(geom, ST_SetSRID(ST_MakePoint(%s, %s), 4326))
    ORDER BY municipality_id LIMIT 1
"""


def municipality_id_at(point: Point) -> int | None:
    """Id of the municipality whose boundary covers `point` (MUNICIPALITY_AT_SQL)."""
    with connection.cursor() as cursor:
        cursor.execute(MUNICIPALITY_AT_SQL, [point.x, point.y])
        row = cursor.fetchone()
    return row[0] if row else None


def municipality_at(point: Point) -> Municipality | None:
    """The municipality under `point`, as municipality_id_at finds it, in one query."""
    return (
        Municipality.objects.defer("boundary")
        .filter(pk=RawSQL(MUNICIPALITY_AT_SQL, [point.x, point.y]))
        .first()
    )


# A search point farther than this from every municipality of the platform is a mistake (a
# phone's last fix in another state, or lat and lon swapped), not a load to route 3,000 km.
SERVICE_AREA_M = 50_000

# Which municipalities lie within SERVICE_AREA_M of the given point and of the swapped one, on
# the subdivided pieces (a whole 700-vertex boundary is slow to cast to geography); the bbox
# test (1 degree, more than 50 km at Brazil's latitudes) lets the GiST index pick the pieces.
_NEAR_SQL = f"""
    SELECT DISTINCT m.id, m.name, m.uf, p.near_given, p.near_swapped
    FROM (
        SELECT municipality_id,
               ST_DWithin(geom::geography, ST_SetSRID(ST_MakePoint(%(x)s, %(y)s), 4326)::geography,
                          %(metres)s) AND %(given_ok)s AS near_given,
               %(swap_ok)s AND ST_DWithin(
                   geom::geography,
                   ST_SetSRID(ST_MakePoint(%(sx)s, %(sy)s), 4326)::geography,
                   %(metres)s) AS near_swapped
        FROM {MunicipalityPiece._meta.db_table}
        WHERE (%(given_ok)s AND geom && ST_Expand(ST_SetSRID(ST_MakePoint(%(x)s, %(y)s), 4326), 1))
           OR (%(swap_ok)s AND geom && ST_Expand(ST_SetSRID(ST_MakePoint(%(sx)s, %(sy)s), 4326), 1))
    ) p JOIN {Municipality._meta.db_table} m ON m.id = p.municipality_id
"""


def _br(value: float) -> str:
    # Up to 5 decimals (about a metre), decimal comma: -22,81 and not -22,81000.
    return br_number(round(value, 5), grouping=False)


def check_search_point(point: Point) -> None:
    """Refuse, with a message that says what is wrong, a search point that lies farther than
    SERVICE_AREA_M from every municipality of the platform; and say so when swapping latitude
    and longitude would put it there (a common slip when typing or pasting coordinates).
    Nothing is refused while no municipality is loaded."""
    lon, lat = point.x, point.y
    given_ok = -180 <= lon <= 180 and -90 <= lat <= 90
    swap_ok = -180 <= lat <= 180 and -90 <= lon <= 90
    with connection.cursor() as cursor:
        cursor.execute(
            _NEAR_SQL,
            {
                "x": lon,
                "y": lat,
                "sx": lat if swap_ok else 0,
                "sy": lon if swap_ok else 0,
                "metres": SERVICE_AREA_M,
                "given_ok": given_ok,
                "swap_ok": swap_ok,
            },
        )
        rows = cursor.fetchall()
    if any(row[3] for row in rows):
        return
    swapped = [row for row in rows if row[4]]
    if swapped:
        name, uf = swapped[0][1], swapped[0][2]
        raise NetworkError(
            f"A latitude e a longitude parecem trocadas: o ponto informado (latitude "
            f"{_br(lat)}, longitude {_br(lon)}) fica fora da área atendida, mas com os valores "
            f"trocados (latitude {_br(lon)}, longitude {_br(lat)}) cai em {name}/{uf}. "
            "Confira a ordem: a latitude vem primeiro e, no Brasil, fica entre +5 e −34; "
            "a longitude, entre −34 e −74.",
            "coordinates_swapped",
        )
    reference = Municipality.objects.defer("boundary").order_by("name").values("name", "uf").first()
    if reference is None:
        return
    where = "fora do Brasil" if not _in_brazil(lon, lat) else "fora da área atendida"
    raise NetworkError(
        f"O ponto informado (latitude {_br(lat)}, longitude {_br(lon)}) fica {where}: a mais "
        f"de {SERVICE_AREA_M // 1000} km de {reference['name']}/{reference['uf']} e dos demais "
        "municípios da plataforma. Confira as coordenadas (em graus decimais, com o sinal de "
        "menos ao sul e a oeste) ou marque o ponto no mapa.",
        "point_out_of_area",
    )


def _in_brazil(lon: float, lat: float) -> bool:
    # The country's bounding box (Ponta do Seixas to the Serra do Divisor; Monte Caburaí to
    # Chuí): enough to tell "outside Brazil" from "elsewhere in Brazil" in a message.
    return -74.0 <= lon <= -28.8 and -33.8 <= lat <= 5.3


def point_within_facility(
    point: Point, facility: ReceivingFacility, tolerance_m: Decimal | float = 0
) -> bool:
    """Whether a discharge point lies in the facility's area, allowing a GPS tolerance in metres.

    Geography (metres on the spheroid), since a tolerance in degrees would vary with latitude;
    ST_DWithin at 0 is covers, so a point on the fence counts.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT ST_DWithin(area::geography, ST_SetSRID(ST_MakePoint(%s, %s), 4326)::geography,
                              %s)
            FROM {ReceivingFacility._meta.db_table} WHERE id = %s
            """,
            [point.x, point.y, float(tolerance_m), facility.pk],
        )
        row = cursor.fetchone()
    return bool(row and row[0])


def _geography_of(point: Point) -> tuple[str, tuple[float, float]]:
    return "ST_SetSRID(ST_MakePoint(%s, %s), 4326)::geography", (point.x, point.y)


def nearest_legal_facilities(
    point: Point,
    volume_m3: Decimal,
    waste_class: str | None = None,
    on: datetime.date | None = None,
    limit: int = 5,
) -> list[ReceivingFacility]:
    """The `limit` nearest facilities that may legally receive this load (see below)."""
    return list(legal_destinations_by_distance(point, volume_m3, waste_class, on)[:limit])


def legal_destinations_by_distance(
    point: Point,
    volume_m3: Decimal,
    waste_class: str | None = None,
    on: datetime.date | None = None,
):
    """The facilities that may legally receive this load, nearest first, each with
    `distance_m` (metres on the spheroid; 0 inside the area).

    A PEV takes at most its municipality's small-volume limit per discharge (Lei 3.978/2007
    art. 12 §1-2), a facility takes only the classes it accepts, and only a facility whose
    license is valid on the day may receive anything (art. 14 §1).

    The ORDER BY is exactly the indexed expression (area::geography, migration 0002), so the
    planner walks the GiST index in distance order (KNN) instead of sorting every facility.
    """
    if volume_m3 < 0:
        raise NetworkError("O volume não pode ser negativo.", "volume_negative")
    day = on or today()
    point_sql, point_params = _geography_of(point)
    table = ReceivingFacility._meta.db_table
    default_limit = MunicipalParameters._meta.get_field("small_volume_limit_m3").default
    # The limit in force on the day searched for (today, unless a CTR's transport date).
    pev_allowed = Q(small_volume_limit_m3__gte=volume_m3)
    if volume_m3 <= default_limit:
        pev_allowed |= Q(municipality__isnull=True)
    queryset = (
        ReceivingFacility.objects.licensed_on(day)
        .alias(small_volume_limit_m3=parameter_on("small_volume_limit_m3", day))
        .filter(~Q(kind=FacilityKind.PEV) | pev_allowed)
        .select_related("municipality")
        .defer("municipality__boundary")
        .annotate(
            distance_m=RawSQL(f"ST_Distance({table}.area::geography, {point_sql})", point_params)
        )
        .order_by(RawSQL(f"{table}.area::geography <-> {point_sql}", point_params))
    )
    if waste_class:
        queryset = queryset.filter(accepted_classes__contains=[waste_class])
    return queryset


def basin_at(point: Point) -> CatchmentBasin | None:
    """The bacia de captação covering a point (border included)."""
    return (
        CatchmentBasin.objects.filter(area__intersects=point)
        .select_related("served_by")
        .order_by("pk")
        .first()
    )
