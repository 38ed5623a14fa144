"""The worksites a generator registers (Lei 3.978/2007 art. 9): address,
location (a point, or the polygon drawn on the map), building permit, built area, kind of work
and dates. Registered by the generator's own account or by the municipality on its behalf.

A worksite may already exist without a registration: the first CTR a transporter issued from
an address created it (ctr.services.worksite_for). Registering at that address completes that
worksite (its CTRs stay its own) instead of making a second one; a worksite registered there
already is a conflict. The rule ORIGIN_OUTSIDE_WORKSITE (ctr/rules/issue.py) reads the registered
location: the origin of each CTR from the worksite must lie within it.

Plain functions, one transaction each; every refusal is a WorksiteError (a DomainError) in
Portuguese, naming the field, with nothing written."""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from decimal import Decimal

from django.contrib.gis.geos import GEOSException, GEOSGeometry, Point, Polygon
from django.db import IntegrityError, connection, transaction
from django.db.models import QuerySet
from django.utils import timezone

from config.br import br_number
from config.br_forms import format_point
from config.errors import DomainError
from ctr import roles
from ctr.models import Generator, WorkKind, Worksite
from ctr.services import GeneratorData, find_worksite, generator_for
from jurisdiction.scope import require_acting
from pev_network import services as network
from pev_network.geometry_messages import validity_reason_pt
from pev_network.models import Municipality

# m² built: a building of a million m² is beyond any one permit in the municipalities we serve
# (the largest Brazilian buildings are a few hundred thousand); more is a typing mistake.
MAX_BUILT_AREA_M2 = Decimal("1000000")
# The drawn area: a worksite of more than 2 km² (200 ha) is a drawing gone astray, and would
# make the origin rule meaningless (any point of a neighbourhood would be "inside").
MAX_AREA_M2 = 2_000_000
MAX_VERTICES = 500
# A work lasting over 30 years, or started before 1990, is a mistyped date.
MAX_DURATION_DAYS = 30 * 366
EARLIEST_START = datetime.date(1990, 1, 1)
# How far ahead a start may be registered (a permit is valid for a few years before works).
MAX_START_AHEAD_DAYS = 5 * 366


class WorksiteError(DomainError):
    """A worksite registration or edit refused; nothing was written."""


class WorksiteInvalid(WorksiteError):
    """Several fields refused at once (every problem, like the CTR's rules): `problems` holds
    (field, message) pairs; `field` and `message` are the first one's."""

    code = "worksite_invalid"

    def __init__(self, problems: list[tuple[str, str]]):
        field, message = problems[0]
        if len(problems) > 1:
            message = f"A obra tem {len(problems)} problemas: " + " ".join(m for _, m in problems)
        super().__init__(message, field=field)
        self.problems = problems

    def problem_errors(self) -> list[dict]:
        return [{"campo": field, "mensagem": message} for field, message in self.problems]


def conflict(message: str, code: str, field: str) -> WorksiteError:
    return WorksiteError(message, code, field, status=409)


def forbidden(message: str) -> WorksiteError:
    return WorksiteError(message, "forbidden", status=403)


@dataclass
class Registration:
    """What a generator declares about a worksite (the web form and the API build this)."""

    address: str
    # A Point, or the Polygon drawn on the map (then the location is a point inside it).
    geometry: GEOSGeometry | None
    work_kind: str
    built_area_m2: Decimal | None
    start_date: datetime.date | None
    expected_end: datetime.date | None
    neighbourhood: str = ""
    permit_number: str = ""
    # The generator says it is a large generator (art. 9), whatever the municipality's
    # threshold says (large_generator_by_rule).
    declared_large_generator: bool = False

    @classmethod
    def of(cls, worksite: Worksite) -> Registration:
        """The worksite's registration as it is (an edit starts from it)."""
        return cls(
            address=worksite.address,
            geometry=worksite.area if worksite.area is not None else worksite.location,
            work_kind=worksite.work_kind,
            built_area_m2=worksite.built_area_m2,
            start_date=worksite.start_date,
            expected_end=worksite.expected_end,
            neighbourhood=worksite.neighbourhood,
            permit_number=worksite.permit_number,
            declared_large_generator=worksite.is_large_generator
            and not large_generator_by_rule(worksite),
        )


# --- who sees and edits ----------------------------------------------------------------------


def may_register(user) -> bool:
    """The generators' accounts and the municipality (on a generator's behalf)."""
    return roles.is_municipal(user) or roles.generator_of(user) is not None


def visible_worksites(user, current: bool = False) -> QuerySet:
    """A generator sees its own worksites (registered or created by its CTRs), the staff those
    of its municipalities (`current`: of the one it works in now: the lists); anyone else none
    (ctr.models.WorksiteQuerySet)."""
    return Worksite.objects.visible_to(user, current=current)


def require_manager(user, generator: Generator, municipality_ids=()) -> None:
    """Only the generator's own account, or the staff of the worksite's municipality (each of
    `municipality_ids`: where it is, where it moves to), registers and edits its worksites."""
    own = roles.generator_of(user)
    if own is not None and own.pk == generator.pk:
        return
    if roles.is_municipal(user):
        for municipality_id in municipality_ids:
            require_acting(user, municipality_id)
        return
    raise forbidden("Só o próprio gerador ou o Núcleo cadastram e alteram as suas obras.")


def generator_to_register(document: str, name: str = "") -> Generator:
    """The generator the municipality registers a worksite for: the registry's (by CPF/CNPJ,
    digits), or a new one with `name`, saved only with the worksite (register)."""
    found = Generator.objects.filter(document=document).first()
    if found is not None:
        return found
    name = " ".join((name or "").split())
    if not name:
        raise WorksiteInvalid(
            [("generator", "Este CPF/CNPJ não está no cadastro: informe também o nome do gerador.")]
        )
    return Generator(name=name[:200], document=document)


# --- geometry --------------------------------------------------------------------------------


def geometry_from_geojson(value, field: str = "geometry") -> GEOSGeometry:
    """A GeoJSON Point or Polygon (a dict or its text) in WGS 84, as drawn on the map or sent
    to the API, in two dimensions; refused with what is wrong. The checks of its shape and
    place are _geometry_problems's and municipality_for's."""
    try:
        data = json.loads(value) if isinstance(value, str) else value
    except ValueError:
        raise WorksiteInvalid([(field, "A geometria da obra não é um GeoJSON legível.")]) from None
    kind = data.get("type") if isinstance(data, dict) else type(data).__name__
    if kind not in ("Point", "Polygon"):
        raise WorksiteInvalid(
            [(field, f"A obra é um ponto (Point) ou um polígono (Polygon), não {kind!s}.")]
        )
    coordinates = data.get("coordinates")
    try:
        if kind == "Point":
            return Point(_position(coordinates), srid=4326)
        rings = [_ring(coordinates[0], field)] + [_ring(r, field) for r in coordinates[1:]]
        return Polygon(*rings, srid=4326)
    except (GEOSException, ValueError, TypeError, IndexError, KeyError):
        raise WorksiteInvalid(
            [(field, "As coordenadas da obra devem ser [longitude, latitude] em números.")]
        ) from None


def _position(value) -> tuple[float, float]:
    # [lon, lat] or [lon, lat, height]: the height is dropped (the columns are 2D).
    if not isinstance(value, list | tuple) or len(value) not in (2, 3):
        raise ValueError(value)
    if any(isinstance(n, bool) or not isinstance(n, int | float) for n in value):
        raise ValueError(value)
    return float(value[0]), float(value[1])


def _ring(points, field: str) -> list[tuple[float, float]]:
    """A ring of the polygon, closed if the client left it open; at least 3 vertices."""
    if not isinstance(points, list):
        raise ValueError(points)
    ring = [_position(p) for p in points]
    if ring and ring[0] != ring[-1]:
        ring.append(ring[0])
    vertices = max(len(ring) - 1, 0)
    if vertices < 3:
        raise WorksiteInvalid(
            [(field, f"O polígono da obra precisa de pelo menos 3 vértices; tem {vertices}.")]
        )
    if vertices > MAX_VERTICES:
        raise WorksiteInvalid(
            [(field, f"O polígono da obra tem {vertices} vértices; o limite é {MAX_VERTICES}.")]
        )
    return ring


def _geometry_problems(geometry: GEOSGeometry) -> list[str]:
    if not isinstance(geometry, Point | Polygon):
        return [f"A obra é um ponto ou um polígono, não {geometry.geom_type}."]
    xmin, ymin, xmax, ymax = geometry.extent
    if not (-180 <= xmin <= xmax <= 180 and -90 <= ymin <= ymax <= 90):
        return [
            "Coordenadas da obra fora de WGS 84: longitude de -180 a 180, latitude de -90 a 90."
        ]
    if isinstance(geometry, Point):
        return []
    if len(geometry.exterior_ring) - 1 < 3 or geometry.num_coords > MAX_VERTICES + 1:
        return [f"O polígono da obra precisa de 3 a {MAX_VERTICES} vértices."]
    if not geometry.valid:
        return [
            f"O polígono da obra é inválido ({validity_reason_pt(geometry.valid_reason)}): "
            "desenhe o contorno sem que os lados se cruzem."
        ]
    area = _area_m2(geometry)
    if area <= 0:
        return ["O polígono da obra não tem área: os vértices estão alinhados."]
    if area > MAX_AREA_M2:
        return [
            f"O polígono da obra tem {br_number(area / 10_000, 1)} ha; uma obra vai até "
            f"{br_number(MAX_AREA_M2 / 10_000, 0)} ha. Confira o desenho."
        ]
    return []


def _area_m2(polygon: Polygon) -> float:
    # Geography: square metres on the spheroid (degrees² would shrink with latitude).
    with connection.cursor() as cursor:
        cursor.execute("SELECT ST_Area(ST_GeomFromEWKB(%s)::geography)", [bytes(polygon.ewkb)])
        return cursor.fetchone()[0]


def municipality_for(location: Point, area: Polygon | None) -> Municipality:
    """The municipality whose boundary holds the whole worksite: the point, or all of the
    polygon (covers, not contains: a fence on the border counts as inside). A polygon partly
    outside it is refused: its permit, its GPS tolerance and its Núcleo are one
    municipality's."""
    places = Municipality.objects.defer("boundary").order_by("pk")
    if area is None:
        found = network.municipality_at(location)
    else:
        # On the whole boundary, once per registration: the subdivided pieces
        # (MunicipalityPiece) answer points, not a polygon that may span several of them.
        found = places.filter(boundary__covers=area).first()
        if found is None:
            touched = places.filter(boundary__intersects=area).first()
            if touched is not None:
                raise WorksiteInvalid(
                    [
                        (
                            "geometry",
                            f"Parte da área desenhada fica fora de {touched}: a obra deve "
                            "ficar inteira dentro de um município. Ajuste o contorno.",
                        )
                    ]
                )
    if found is None:
        where = format_point(location.x, location.y)
        raise WorksiteInvalid(
            [
                (
                    "geometry",
                    f"A obra em {where} fica fora dos municípios atendidos por esta plataforma.",
                )
            ]
        )
    return found


# --- the registration ------------------------------------------------------------------------


def _clean(data: Registration) -> tuple[Registration, list[tuple[str, str]]]:
    """The registration with its text trimmed, and every problem found in it."""
    problems: list[tuple[str, str]] = []
    address = " ".join((data.address or "").split())
    neighbourhood = " ".join((data.neighbourhood or "").split())
    permit = " ".join((data.permit_number or "").split()).upper()
    if not address:
        problems.append(("address", "Informe o endereço da obra."))
    elif len(address) > 300:
        problems.append(("address", "O endereço da obra vai até 300 caracteres."))
    if len(neighbourhood) > 120:
        problems.append(("neighbourhood", "O bairro vai até 120 caracteres."))
    if len(permit) > 60:
        problems.append(("permit_number", "O número do alvará vai até 60 caracteres."))
    if data.geometry is None:
        problems.append(("geometry", "Marque a obra no mapa: um ponto ou o contorno da obra."))
    else:
        problems += [("geometry", m) for m in _geometry_problems(data.geometry)]
    if data.work_kind not in WorkKind.values:
        kinds = ", ".join(str(label) for label in WorkKind.labels)
        problems.append(("work_kind", f"Informe o tipo de obra: {kinds}."))
    area = data.built_area_m2
    if area is None:
        problems.append(("built_area_m2", "Informe a área construída em m²."))
    elif not area.is_finite() or area <= 0:
        problems.append(("built_area_m2", "A área construída deve ser maior que zero."))
    elif area > MAX_BUILT_AREA_M2:
        problems.append(
            (
                "built_area_m2",
                f"Área construída de {br_number(area)} m²: o limite é "
                f"{br_number(MAX_BUILT_AREA_M2)} m². Confira o número.",
            )
        )
    problems += _date_problems(data.start_date, data.expected_end)
    cleaned = Registration(
        address=address,
        geometry=data.geometry,
        work_kind=data.work_kind,
        built_area_m2=area,
        start_date=data.start_date,
        expected_end=data.expected_end,
        neighbourhood=neighbourhood,
        permit_number=permit,
        declared_large_generator=bool(data.declared_large_generator),
    )
    return cleaned, problems


def _date_problems(start, end) -> list[tuple[str, str]]:
    problems = []
    if start is None:
        problems.append(("start_date", "Informe a data de início da obra."))
    elif start < EARLIEST_START:
        problems.append(("start_date", f"Início em {start:%d/%m/%Y}: confira o ano."))
    elif (start - timezone.localdate()).days > MAX_START_AHEAD_DAYS:
        problems.append(
            ("start_date", f"Início em {start:%d/%m/%Y}: mais de 5 anos à frente. Confira o ano.")
        )
    if end is None:
        problems.append(("expected_end", "Informe o término previsto da obra."))
    elif start is not None and end < start:
        problems.append(
            (
                "expected_end",
                f"O término previsto ({end:%d/%m/%Y}) é anterior ao início ({start:%d/%m/%Y}).",
            )
        )
    elif start is not None and (end - start).days > MAX_DURATION_DAYS:
        problems.append(
            ("expected_end", "Uma obra de mais de 30 anos: confira o término previsto.")
        )
    return problems


def large_generator_min_area(municipality: Municipality | None) -> Decimal | None:
    """The municipality's built-area threshold of a large generator (Lei 3.978/2007 art. 9
    p.ú. III, MunicipalParameters.large_generator_min_area_m2) in force today: registering a
    worksite is no CTR whose day would choose it."""
    if municipality is None:
        return None
    return municipality.parameters_on(timezone.localdate()).large_generator_min_area_m2


def large_generator_by_rule(worksite: Worksite | Registration, municipality=None) -> bool:
    """Art. 9 caput: a work that needs a building permit (its number registered) makes its
    generator a large generator, from the municipality's built-area threshold on
    (large_generator_min_area)."""
    municipality = municipality or getattr(worksite, "municipality", None)
    if not worksite.permit_number or worksite.built_area_m2 is None or municipality is None:
        return False
    return worksite.built_area_m2 >= large_generator_min_area(municipality)


def register(generator: Generator, data: Registration, by) -> Worksite:
    """Register a worksite of `generator`: by its account, or by the municipality. At an
    address where one of its CTRs created a worksite already (no registration yet), that
    worksite is completed; one registered there already is a conflict (409). The staff
    register only in a municipality where they act."""
    require_manager(by, generator)
    data, location, area, municipality = _validated(data)
    require_manager(by, generator, [municipality.pk])
    with transaction.atomic():
        if generator.pk is None:  # new to the registry (generator_to_register)
            generator = generator_for(GeneratorData(generator.name, generator.document))
        existing = find_worksite(generator, data.address)
        if existing is not None:
            existing = Worksite.objects.select_for_update().get(pk=existing.pk)
            if existing.registered_at is not None:
                raise conflict(
                    f"{generator.name} já tem uma obra cadastrada em “{existing.address}”: "
                    "altere aquela obra em vez de cadastrar outra.",
                    "worksite_address_taken",
                    "address",
                )
        worksite = existing or Worksite(generator=generator)
        return _save(worksite, data, location, area, municipality, by)


def update(worksite: Worksite, data: Registration, by) -> Worksite:
    """Change a worksite's registration (its generator's account or the municipality); a
    worksite created by a CTR is registered by its first edit. The staff change only a
    worksite of a municipality where they act, and keep it in one."""
    require_manager(by, worksite.generator, [worksite.municipality_id])
    data, location, area, municipality = _validated(data)
    require_manager(by, worksite.generator, [municipality.pk])
    with transaction.atomic():
        locked = Worksite.objects.select_for_update().get(pk=worksite.pk)
        other = find_worksite(locked.generator, data.address)
        if other is not None and other.pk != locked.pk:
            raise conflict(
                f"{locked.generator.name} já tem outra obra em “{other.address}”.",
                "worksite_address_taken",
                "address",
            )
        return _save(locked, data, location, area, municipality, by)


def _validated(data: Registration):
    data, problems = _clean(data)
    if problems:
        raise WorksiteInvalid(problems)
    geometry = data.geometry
    area = geometry if isinstance(geometry, Polygon) else None
    location = area.point_on_surface if area is not None else geometry
    location.srid = 4326
    return data, location, area, municipality_for(location, area)


# The unique constraints of ctr.Worksite a concurrent registration can still meet after the
# checks above (two submissions at once): their refusals.
CONSTRAINT_REFUSALS = {
    "worksite_permit_unique": ("worksite_permit_taken", "permit_number"),
    "worksite_generator_address_unique": ("worksite_address_taken", "address"),
}


def _save(worksite, data: Registration, location, area, municipality, by) -> Worksite:
    if _permit_used(municipality, data.permit_number, worksite.pk):
        raise permit_taken(municipality, data.permit_number)
    worksite.address = data.address
    worksite.neighbourhood = data.neighbourhood
    worksite.location = location
    worksite.area = area
    worksite.municipality = municipality
    worksite.permit_number = data.permit_number
    worksite.built_area_m2 = data.built_area_m2
    worksite.work_kind = data.work_kind
    worksite.start_date = data.start_date
    worksite.expected_end = data.expected_end
    worksite.is_large_generator = data.declared_large_generator or large_generator_by_rule(
        data, municipality
    )
    if worksite.registered_at is None:
        worksite.registered_at = timezone.now()
        worksite.registered_by = by
    try:
        with transaction.atomic():  # a savepoint: the constraint is the last word under races
            worksite.save()
    except IntegrityError as error:
        name = getattr(getattr(error.__cause__, "diag", None), "constraint_name", None)
        if name not in CONSTRAINT_REFUSALS:
            raise
        if name == "worksite_permit_unique":
            raise permit_taken(municipality, data.permit_number) from None
        code, field = CONSTRAINT_REFUSALS[name]
        raise conflict(
            f"{worksite.generator.name} já tem uma obra em “{data.address}”.", code, field
        ) from None
    return worksite


def _permit_used(municipality, permit: str, own_pk) -> bool:
    """Whether another worksite of the municipality registered this permit number."""
    if not permit:
        return False
    return (
        Worksite.objects.filter(municipality=municipality, permit_number=permit)
        .exclude(pk=own_pk)
        .exists()
    )


def permit_taken(municipality, permit: str) -> WorksiteError:
    # Another generator's worksite is not named: its address is that generator's data.
    return conflict(
        f"O alvará nº {permit} já está cadastrado em outra obra de {municipality}: confira o "
        "número (cada alvará é de uma obra só).",
        "worksite_permit_taken",
        "permit_number",
    )
