"""Dumping reports: intake (citizens and inspectors), the inspectors' queries and decisions.

Plain functions, used alike by the web pages (intake_views), the API (api) and the admin. Each
decision is one transaction that leaves an event in the report's history (DumpingReportEvent):
who, when, from which status to which, and the note.
"""

from __future__ import annotations

import datetime
import json
import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from django.conf import settings
from django.contrib.gis.geos import GEOSGeometry, MultiPolygon, Point, Polygon
from django.core.files.base import ContentFile
from django.db import IntegrityError, connection, transaction
from django.db.models import BooleanField, Count, FloatField, Func, QuerySet
from django.db.models.expressions import RawSQL
from django.utils import timezone

from config.errors import DomainError
from ctr import roles
from jurisdiction.scope import jurisdiction_of, require_acting
from pev_network import services as network
from pev_network.geometry_messages import validity_reason_pt
from pev_network.models import CatchmentBasin, FacilityLicense, ReceivingFacility

from . import signals
from .models import (
    DumpingCategory,
    DumpingPhoto,
    DumpingReport,
    DumpingReportEvent,
    ReporterKind,
    ReportStatus,
)
from .photos import CheckedPhoto

log = logging.getLogger(__name__)

# "Is it one of these?": open reports this close and this recent are offered before saving.
NEARBY_RADIUS_M = 250
NEARBY_DAYS = 30
# Not open: the dumping is gone, was never there, or is reported elsewhere.
CLOSED_STATUSES = (ReportStatus.DUPLICATE, ReportStatus.UNFOUNDED, ReportStatus.CLEANED)
MAX_RADIUS_M = 50_000
# A polygon filter is typed or pasted by a person: a few thousand vertices is plenty.
MAX_POLYGON_VERTICES = 5_000
MAX_POLYGON_TEXT = 200_000

REPORT_TABLE = DumpingReport._meta.db_table

S = ReportStatus
# Which status may follow which through change_status(). DUPLICATE is reached only by
# merge_duplicate(). Going back (reopening) needs a note.
TRANSITIONS: dict[str, tuple[str, ...]] = {
    S.NEW: (S.CONFIRMED, S.CLEANUP_SCHEDULED, S.CLEANED, S.UNFOUNDED),
    S.CONFIRMED: (S.CLEANUP_SCHEDULED, S.CLEANED, S.UNFOUNDED, S.NEW),
    S.CLEANUP_SCHEDULED: (S.CLEANED, S.CONFIRMED, S.UNFOUNDED),
    S.CLEANED: (S.CONFIRMED,),
    S.UNFOUNDED: (S.NEW, S.CONFIRMED),
    S.DUPLICATE: (S.NEW, S.CONFIRMED),
}
NOTE_REQUIRED: set[tuple[str, str]] = {
    (S.NEW, S.UNFOUNDED),
    (S.CONFIRMED, S.UNFOUNDED),
    (S.CLEANUP_SCHEDULED, S.UNFOUNDED),
    (S.CONFIRMED, S.NEW),
    (S.CLEANUP_SCHEDULED, S.CONFIRMED),
    (S.CLEANED, S.CONFIRMED),
    (S.UNFOUNDED, S.NEW),
    (S.UNFOUNDED, S.CONFIRMED),
    (S.DUPLICATE, S.NEW),
    (S.DUPLICATE, S.CONFIRMED),
}
STATUS_LABELS = dict(ReportStatus.choices)
CATEGORY_LABELS = dict(DumpingCategory.choices)


class IntakeError(DomainError):
    """A dumping report or its handling refused."""


class NearbyReportsExist(IntakeError):
    """Open reports near the point: the reporter must say it is another one (confirm_new)."""

    def __init__(self, reports: list[DumpingReport]):
        n = len(reports)
        super().__init__(
            f"Há {n} denúncia{'s' if n > 1 else ''} "
            f"aberta{'s' if n > 1 else ''} a até {NEARBY_RADIUS_M} m deste ponto nos últimos "
            f"{NEARBY_DAYS} dias. Se for o mesmo descarte, acompanhe pelo protocolo; se for "
            "outro, confirme que é uma nova denúncia.",
            code="nearby_reports",
            status=409,
        )
        self.reports = reports


# --- intake ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class NewReport:
    location: Point
    category: str
    description: str = ""
    estimated_volume_m3: Decimal | None = None
    contact_name: str = ""
    contact: str = ""


def _geography(point: Point) -> tuple[str, list[float]]:
    # Geography: ST_DWithin and ST_Distance in metres on the spheroid, the same everywhere
    # (a radius in degrees would shrink east-west with latitude).
    return "ST_SetSRID(ST_MakePoint(%s, %s), 4326)::geography", [point.x, point.y]


def _box_around(point: Point, radius_m: float) -> tuple[str, list[float]]:
    """An envelope (4326) that surely contains the circle of `radius_m` around `point`.

    `location::geography` cannot use the GiST index of the geometry column; `&&` against this
    box can, and ST_DWithin then decides on the few rows left. 110 km per degree is below the
    shortest degree of latitude on the spheroid (110.57 km), so the box errs on the large side.
    """
    dlat = radius_m / 110_000
    dlon = radius_m / (110_000 * max(math.cos(math.radians(min(abs(point.y), 89.0))), 0.01))
    return (
        "ST_MakeEnvelope(%s, %s, %s, %s, 4326)",
        [point.x - dlon, point.y - dlat, point.x + dlon, point.y + dlat],
    )


def _column(name: str) -> str:
    return f'"{REPORT_TABLE}"."{name}"'


def within_metres(queryset: QuerySet, point: Point, radius_m: float) -> QuerySet:
    """Reports within `radius_m` metres of `point` (a report at exactly R counts)."""
    box_sql, box_params = _box_around(point, radius_m)
    geo_sql, geo_params = _geography(point)
    loc = _column("location")
    condition = RawSQL(
        f"({loc} && {box_sql} AND ST_DWithin({loc}::geography, {geo_sql}, %s))",
        [*box_params, *geo_params, float(radius_m)],
        output_field=BooleanField(),
    )
    return queryset.filter(condition)


def with_distance(queryset: QuerySet, point: Point) -> QuerySet:
    geo_sql, geo_params = _geography(point)
    return queryset.annotate(
        distance_m=RawSQL(
            f"ST_Distance({_column('location')}::geography, {geo_sql})",
            geo_params,
            output_field=FloatField(),
        )
    )


def point_distance_m(a: Point, b: Point) -> float:
    """Geodesic distance in metres between two WGS 84 points (PostGIS geography)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT ST_Distance(ST_SetSRID(ST_MakePoint(%s, %s), 4326)::geography, "
            "ST_SetSRID(ST_MakePoint(%s, %s), 4326)::geography)",
            [a.x, a.y, b.x, b.y],
        )
        return float(cursor.fetchone()[0])


def nearby_open_reports(
    point: Point,
    radius_m: float = NEARBY_RADIUS_M,
    days: int = NEARBY_DAYS,
    exclude: DumpingReport | None = None,
    at: datetime.datetime | None = None,
) -> list[DumpingReport]:
    """Open reports (not duplicate, unfounded or cleaned) received in the last `days` days
    within `radius_m` metres of `point`, nearest first, each with `distance_m`."""
    since = (at or timezone.now()) - datetime.timedelta(days=days)
    queryset = DumpingReport.objects.filter(created_at__gte=since).exclude(
        status__in=CLOSED_STATUSES
    )
    if exclude is not None:
        queryset = queryset.exclude(pk=exclude.pk)
    queryset = with_distance(within_metres(queryset, point, radius_m), point)
    return list(queryset.defer("description").order_by("distance_m", "-created_at")[:20])


def _cleanup_files(names: list[str]) -> None:
    for name in names:
        try:
            DumpingPhoto._meta.get_field("image").storage.delete(name)
        except OSError:
            log.warning("Could not delete orphan photo file %s", name)


def create_report(
    data: NewReport,
    photos: Sequence[CheckedPhoto] = (),
    by=None,
    confirm_new: bool = False,
    at: datetime.datetime | None = None,
) -> DumpingReport:
    """Save a report with its photos and its first event, all or nothing, received `at` (now
    unless told).

    The municipality is the one whose boundary covers the point; a point outside every
    municipality we serve is refused. Unless `confirm_new`, open reports within 250 m from the
    last 30 days raise NearbyReportsExist (the reporter may be seeing the same dumping).
    `by` is the inspector filing it, or None for a citizen (who stays anonymous: the report
    keeps only the contact the citizen chose to give). Staff filing a report in a municipality
    where they do not act file it as anyone would (a report is the municipality's
    where the point is, art. 2 §1).
    """
    if data.category not in CATEGORY_LABELS:
        raise IntakeError("Escolha uma categoria da lista.", "category", "category")
    if data.estimated_volume_m3 is not None and data.estimated_volume_m3 < 0:
        raise IntakeError("O volume estimado não pode ser negativo.", "volume", "volume")
    location = Point(data.location.x, data.location.y, srid=4326)
    municipality_id = network.municipality_id_at(location)
    if municipality_id is None:
        raise IntakeError(
            "O ponto informado não fica em nenhum município atendido por este sistema. "
            "Confira o local no mapa (longitude e latitude não estão trocadas?).",
            "outside_municipality",
            "location",
        )
    at = at or timezone.now()
    if not confirm_new:
        nearby = nearby_open_reports(location, at=at)
        if nearby:
            raise NearbyReportsExist(nearby)

    inspector = by is not None and jurisdiction_of(by).acts(municipality_id)
    saved_files: list[str] = []
    try:
        for attempt in range(3):
            try:
                with transaction.atomic():
                    report = DumpingReport.objects.create(
                        municipality_id=municipality_id,
                        location=location,
                        description=data.description.strip(),
                        category=data.category,
                        estimated_volume_m3=data.estimated_volume_m3,
                        reporter_kind=ReporterKind.INSPECTOR if inspector else ReporterKind.CITIZEN,
                        reporter=by if inspector else None,
                        contact_name="" if inspector else data.contact_name.strip(),
                        contact="" if inspector else data.contact.strip(),
                        created_at=at,
                        updated_at=at,
                    )
                    DumpingReportEvent.objects.create(
                        report=report,
                        at=at,
                        actor=by if inspector else None,
                        from_status="",
                        to_status=ReportStatus.NEW,
                        note="Registrada pela fiscalização." if inspector else "Recebida.",
                    )
                    for checked in photos:
                        photo = DumpingPhoto(
                            report=report,
                            content_type=checked.content_type,
                            extension=checked.extension,
                            size_bytes=checked.size_bytes,
                            width=checked.width,
                            height=checked.height,
                            sha256=checked.sha256,
                            exif_location=checked.exif_location,
                        )
                        photo.image.save(
                            f"foto.{checked.extension}", ContentFile(checked.content), save=False
                        )
                        saved_files.append(photo.image.name)
                        photo.save()
                return report
            except IntegrityError:
                # The only unique column we fill is the random protocol (30^8 values): a
                # collision is rare enough to retry blindly.
                _cleanup_files(saved_files)
                saved_files = []
                if attempt == 2:
                    raise
    except BaseException:
        _cleanup_files(saved_files)
        raise
    raise AssertionError("unreachable")


# --- inspectors' decisions -------------------------------------------------------------------


def _require_inspector(by, report: DumpingReport) -> None:
    """The Núcleo and the inspectors of the report's municipality, where the dumping is
    (Lei 3.978/2007 art. 21-22): another municipality's staff do not even see it (404), the
    auditor reads it (403)."""
    if by is None or not roles.is_municipal(by):
        raise IntakeError(
            "Somente o Núcleo e a fiscalização municipal alteram denúncias.",
            "forbidden",
            status=403,
        )
    require_acting(by, report.municipality_id)


def _locked(report: DumpingReport) -> DumpingReport:
    return DumpingReport.objects.select_for_update().get(pk=report.pk)


def allowed_statuses(report: DumpingReport) -> tuple[str, ...]:
    return TRANSITIONS.get(report.status, ())


@transaction.atomic
def change_status(
    report: DumpingReport,
    to_status: str,
    by,
    note: str = "",
    at: datetime.datetime | None = None,
) -> DumpingReport:
    """Move a report to another status `at` (now unless told), with a note in its history.
    Cleaning sets cleaned_at; leaving a duplicate detaches it from its original."""
    _require_inspector(by, report)
    note = (note or "").strip()
    if to_status not in STATUS_LABELS:
        raise IntakeError(f"Situação '{to_status}' desconhecida.", "status", "status")
    if to_status == S.DUPLICATE:
        raise IntakeError(
            "Para marcar como duplicada, mescle a denúncia na original.", "use_merge", "status"
        )
    report = _locked(report)
    current = report.status
    if to_status == current:
        raise IntakeError(
            f"A denúncia já está na situação “{STATUS_LABELS[current]}”.", "same_status", "status"
        )
    if to_status not in TRANSITIONS.get(current, ()):
        raise IntakeError(
            f"Não é possível passar de “{STATUS_LABELS[current]}” para "
            f"“{STATUS_LABELS[to_status]}”.",
            "transition",
            "status",
            status=409,
        )
    if (current, to_status) in NOTE_REQUIRED and not note:
        raise IntakeError(
            f"Explique na observação por que a denúncia passa a “{STATUS_LABELS[to_status]}”.",
            "note_required",
            "note",
        )
    now = at or timezone.now()
    report.status = to_status
    report.updated_at = now
    fields = ["status", "updated_at"]
    if to_status == S.CLEANED:
        report.cleaned_at = now
        fields.append("cleaned_at")
    elif report.cleaned_at is not None:
        report.cleaned_at = None
        fields.append("cleaned_at")
    if current == S.DUPLICATE:
        report.duplicate_of = None
        fields.append("duplicate_of")
    report.save(update_fields=fields)
    DumpingReportEvent.objects.create(
        report=report, at=now, actor=by, from_status=current, to_status=to_status, note=note
    )
    # Webhooks: the citizen who left an e-mail hears of it.
    signals.report_status_changed.send(
        sender=DumpingReport, report=report, from_status=current, to_status=to_status, at=now
    )
    return report


@transaction.atomic
def merge_duplicate(
    duplicate: DumpingReport,
    original: DumpingReport,
    by,
    note: str = "",
    at: datetime.datetime | None = None,
) -> DumpingReport:
    """Mark `duplicate` as a duplicate of `original` `at` (now unless told), with an event on
    both. Reports already merged into `duplicate` move to `original`, so chains stay one level
    deep. Returns the duplicate. Both are one municipality's: a dumping in another is another
    municipality's report."""
    _require_inspector(by, duplicate)
    note = (note or "").strip()
    if duplicate.pk == original.pk:
        raise IntakeError("Uma denúncia não pode ser duplicata de si mesma.", "same", "into")
    if original.municipality_id != duplicate.municipality_id:
        raise IntakeError(
            f"A denúncia {original.protocol} é de outro município: só se mescla uma denúncia "
            "em outra do mesmo município.",
            "other_municipality",
            "into",
        )
    # Lock both rows in a fixed order: two inspectors merging A→B and B→A cannot deadlock.
    locked = {
        r.pk: r
        for r in DumpingReport.objects.select_for_update()
        .filter(pk__in=[duplicate.pk, original.pk])
        .order_by("pk")
    }
    duplicate, original = locked[duplicate.pk], locked[original.pk]
    if duplicate.status == S.DUPLICATE:
        raise IntakeError(
            f"A denúncia {duplicate.protocol} já é duplicata de outra.", "already", "into"
        )
    if original.status == S.DUPLICATE:
        root = DumpingReport.objects.only("protocol").get(pk=original.duplicate_of_id)
        raise IntakeError(
            f"A denúncia {original.protocol} já é duplicata de {root.protocol}: mescle nesta.",
            "into_duplicate",
            "into",
        )
    now = at or timezone.now()
    suffix = f" {note}" if note else ""
    previous = duplicate.status
    duplicate.status = S.DUPLICATE
    duplicate.duplicate_of = original
    duplicate.cleaned_at = None
    duplicate.updated_at = now
    duplicate.save(update_fields=["status", "duplicate_of", "cleaned_at", "updated_at"])
    DumpingReportEvent.objects.create(
        report=duplicate,
        at=now,
        actor=by,
        from_status=previous,
        to_status=S.DUPLICATE,
        note=f"Duplicata da denúncia {original.protocol}.{suffix}",
    )
    signals.report_status_changed.send(
        sender=DumpingReport, report=duplicate, from_status=previous, to_status=S.DUPLICATE, at=now
    )
    moved = list(
        DumpingReport.objects.select_for_update()
        .filter(duplicate_of=duplicate)
        .only("pk", "protocol", "status")
    )
    for child in moved:
        child.duplicate_of = original
        child.updated_at = now
        child.save(update_fields=["duplicate_of", "updated_at"])
        DumpingReportEvent.objects.create(
            report=child,
            at=now,
            actor=by,
            from_status=child.status,
            to_status=child.status,
            note=f"Passa a ser duplicata de {original.protocol} "
            f"(a denúncia {duplicate.protocol} foi mesclada nela).",
        )
    extra = f" e as suas duplicatas ({', '.join(c.protocol for c in moved)})" if moved else ""
    DumpingReportEvent.objects.create(
        report=original,
        at=now,
        actor=by,
        from_status=original.status,
        to_status=original.status,
        note=f"A denúncia {duplicate.protocol}{extra} foi mesclada nesta (duplicata).{suffix}",
    )
    original.updated_at = now
    original.save(update_fields=["updated_at"])
    return duplicate


@transaction.atomic
def change_category(report: DumpingReport, category: str, by, note: str = "") -> DumpingReport:
    """Correct the category (the citizen's choice, or an overlay's suggestion), with an event."""
    _require_inspector(by, report)
    if category not in CATEGORY_LABELS:
        raise IntakeError("Escolha uma categoria da lista.", "category", "category")
    report = _locked(report)
    if report.category == category:
        raise IntakeError("A denúncia já está nesta categoria.", "same_category", "category")
    previous = report.category
    now = timezone.now()
    report.category, report.updated_at = category, now
    report.save(update_fields=["category", "updated_at"])
    text = (
        f"Categoria alterada de “{CATEGORY_LABELS[previous]}” para “{CATEGORY_LABELS[category]}”."
    )
    note = (note or "").strip()
    DumpingReportEvent.objects.create(
        report=report,
        at=now,
        actor=by,
        from_status=report.status,
        to_status=report.status,
        note=f"{text} {note}".strip(),
    )
    return report


# --- category suggestions --------------------------------------------------------------------


@dataclass(frozen=True)
class Suggestion:
    """What the layers say about a point. `category` None: a warning, not a category."""

    category: str | None
    reason: str
    kind: str = "suggestion"  # or "warning"

    @property
    def label(self) -> str:
        return CATEGORY_LABELS.get(self.category, "") if self.category else ""

    def as_dict(self) -> dict:
        return {
            "category": self.category,
            "category_label": self.label or None,
            "kind": self.kind,
            "reason": self.reason,
        }


_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$")


@dataclass(frozen=True)
class OverlayLayer:
    """A layer of the law's protected places, read from any PostGIS table with a geometry
    column in EPSG:4326: protected areas (art. 2 §1 VII), water bodies (III), slopes (II)...

    A point matches when it lies within `within_m` metres of a feature (0: inside it; a point
    on the edge counts). For a water body, 30 m is the narrowest riverside APP of the Código
    Florestal (Lei 12.651/2012 art. 4 I a). None of these layers exist in the project yet:
    load one into a table and list it in settings.CTR_DUMPING_OVERLAYS, e.g.

        CTR_DUMPING_OVERLAYS = [
            {"table": "overlays_app", "category": "AREA_PROTEGIDA",
             "label": "Área de Preservação Permanente", "name_column": "nome"},
            {"table": "overlays_hidrografia", "category": "CORPO_DAGUA",
             "label": "corpo d’água", "within_m": 30, "name_column": "nome"},
        ]
    """

    table: str
    category: str
    label: str  # pt-BR, what the layer is: "Área de Preservação Permanente"
    within_m: float = 0
    geometry_column: str = "geom"
    name_column: str | None = None

    def __post_init__(self):
        for name in (self.table, self.geometry_column, self.name_column):
            if name is not None and not _IDENTIFIER.match(name):
                raise ValueError(f"Invalid SQL identifier in overlay layer: {name!r}")
        if self.category not in CATEGORY_LABELS:
            raise ValueError(f"Unknown dumping category in overlay layer: {self.category!r}")

    def matches(self, point: Point, limit: int = 3) -> list[tuple[str, float]]:
        """(feature name, distance in metres) of the features near the point, nearest first."""
        quote = connection.ops.quote_name
        table = ".".join(quote(part) for part in self.table.split("."))
        geom = quote(self.geometry_column)
        name = f"{quote(self.name_column)}::text" if self.name_column else "''"
        geo_sql, geo_params = _geography(point)
        box_sql, box_params = _box_around(point, max(self.within_m, 1))
        sql = f"""
            SELECT {name}, ST_Distance({geom}::geography, {geo_sql}) AS d
            FROM {table}
            WHERE {geom} && {box_sql} AND ST_DWithin({geom}::geography, {geo_sql}, %s)
            ORDER BY d LIMIT %s
        """
        with connection.cursor() as cursor:
            cursor.execute(
                sql, [*geo_params, *box_params, *geo_params, float(self.within_m), limit]
            )
            return [(row[0] or "", float(row[1])) for row in cursor.fetchall()]

    def reason(self, name: str, distance_m: float) -> str:
        what = f"{self.label} “{name}”" if name else self.label
        if self.within_m and distance_m > 0.5:
            return f"A {distance_m:.0f} m de {what} (limite de {self.within_m:g} m)."
        return f"Dentro de {what}."


def configured_overlays() -> list[OverlayLayer]:
    return [OverlayLayer(**spec) for spec in getattr(settings, "CTR_DUMPING_OVERLAYS", [])]


def suggest_categories(
    point: Point,
    overlays: Sequence[OverlayLayer] | None = None,
    on: datetime.date | None = None,
) -> list[Suggestion]:
    """Categories the map suggests for a point, each with its reason, for the inspector to
    decide (they are hints, never applied by themselves):

    - inside a receiving facility with a valid license: a warning, "probably not dumping"
      (a licensed area receiving waste is the law working, art. 14);
    - inside a facility whose license is not valid that day: UNLICENSED_AREA (art. 2 §1 VI);
    - the overlay layers (protected areas, water bodies...), when configured: see OverlayLayer.
    """
    day = on or timezone.localdate()
    point = Point(point.x, point.y, srid=4326)
    suggestions: list[Suggestion] = []
    # intersects, not contains: a point on the fence counts as inside.
    facilities = list(
        ReceivingFacility.objects.filter(area__intersects=point)
        .only("pk", "name", "kind")
        .order_by("pk")
    )
    licensed = set(
        FacilityLicense.objects.valid_on(day)
        .filter(facility__in=facilities)
        .values_list("facility_id", flat=True)
    )
    for facility in facilities:
        if facility.pk in licensed:
            suggestions.append(
                Suggestion(
                    None,
                    f"Dentro da área licenciada “{facility.name}” "
                    f"({facility.get_kind_display()}): provavelmente não é descarte irregular "
                    "(não use “Área não licenciada”).",
                    "warning",
                )
            )
        else:
            suggestions.append(
                Suggestion(
                    DumpingCategory.UNLICENSED_AREA,
                    f"Dentro de “{facility.name}” ({facility.get_kind_display()}), que não tem "
                    f"licença válida em {day:%d/%m/%Y} (art. 2º, § 1º, VI).",
                )
            )
    for layer in configured_overlays() if overlays is None else overlays:
        for name, distance in layer.matches(point):
            suggestions.append(Suggestion(layer.category, layer.reason(name, distance)))
    return suggestions


# --- inspectors' queries ---------------------------------------------------------------------


@dataclass
class ReportQuery:
    """The filters of the inspectors' list, map and API (all optional, all combined)."""

    bbox: Polygon | None = None
    polygon: GEOSGeometry | None = None
    basin_id: int | None = None
    municipality_ibge: str | None = None
    date_from: datetime.date | None = None
    date_to: datetime.date | None = None
    statuses: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    near: Point | None = None
    radius_m: float | None = None

    def is_empty(self) -> bool:
        return not any(
            (
                self.bbox,
                self.polygon,
                self.basin_id,
                self.municipality_ibge,
                self.date_from,
                self.date_to,
                self.statuses,
                self.categories,
                self.near,
            )
        )


def polygon_from_text(raw: str) -> GEOSGeometry:
    """A Polygon or MultiPolygon in WGS 84 from GeoJSON or WKT text (EWKT with SRID=4326 too).
    Raises IntakeError saying what is wrong."""
    text = (raw or "").strip()
    if not text:
        raise IntakeError("Informe um polígono em GeoJSON ou WKT.", "polygon", "polygon")
    if len(text) > MAX_POLYGON_TEXT:
        raise IntakeError("O polígono é grande demais.", "polygon", "polygon")
    try:
        if text.startswith("{"):
            obj = json.loads(text)
            if isinstance(obj, dict) and obj.get("type") == "Feature":
                obj = obj.get("geometry")
            if not isinstance(obj, dict) or "crs" in obj:
                raise ValueError("not a plain geometry")
            geom = GEOSGeometry(json.dumps(obj))
            geom.srid = 4326  # GeoJSON is WGS 84 (RFC 7946)
        elif re.match(r"^(SRID=\d+;)?\s*(MULTI)?POLYGON\b", text, re.IGNORECASE):
            geom = GEOSGeometry(text)
            if geom.srid not in (None, 4326):
                raise IntakeError(
                    f"O polígono deve estar em WGS 84 (SRID 4326), não em SRID {geom.srid}.",
                    "polygon_srid",
                    "polygon",
                )
            geom.srid = 4326
        else:
            raise ValueError("neither GeoJSON nor WKT")
    except IntakeError:
        raise
    except Exception:  # JSON, GEOS and GDAL parse errors alike
        raise IntakeError(
            'Polígono ilegível: use GeoJSON ({"type": "Polygon", "coordinates": ...}) ou '
            "WKT (POLYGON((lon lat, ...))) em WGS 84.",
            "polygon",
            "polygon",
        ) from None
    if not isinstance(geom, Polygon | MultiPolygon):
        raise IntakeError(
            f"Esperava um Polygon ou MultiPolygon, recebi {geom.geom_type}.", "polygon", "polygon"
        )
    if geom.num_coords > MAX_POLYGON_VERTICES:
        raise IntakeError(
            f"O polígono tem {geom.num_coords} vértices; o limite é {MAX_POLYGON_VERTICES}.",
            "polygon",
            "polygon",
        )
    xmin, ymin, xmax, ymax = geom.extent
    if not (-180 <= xmin <= xmax <= 180 and -90 <= ymin <= ymax <= 90):
        raise IntakeError(
            "Coordenadas do polígono fora de WGS 84 (longitude, latitude).", "polygon", "polygon"
        )
    if not geom.valid:
        raise IntakeError(
            f"Polígono inválido: {validity_reason_pt(geom.valid_reason)}.",
            "polygon_invalid",
            "polygon",
        )
    return geom


def base_queryset(user=None, current: bool = False) -> QuerySet:
    """The reports with what the pages and the API show of them: those `user` sees (its
    municipalities'; `current`: the one it works in now), or every one given no user (a
    report already found)."""
    reports = (
        DumpingReport.objects.all()
        if user is None
        else DumpingReport.objects.visible_to(user, current=current)
    )
    return reports.select_related("municipality", "duplicate_of").defer("municipality__boundary")


def search_reports(query: ReportQuery, queryset: QuerySet | None = None) -> QuerySet:
    """The reports matching every filter of `query`, newest first."""
    qs = base_queryset() if queryset is None else queryset
    # intersects, not within: a report on the edge of the box or polygon counts.
    if query.bbox is not None:
        qs = qs.filter(location__intersects=query.bbox)
    if query.polygon is not None:
        qs = qs.filter(location__intersects=query.polygon)
    if query.basin_id is not None:
        basin = CatchmentBasin.objects.filter(pk=query.basin_id).only("area").first()
        if basin is None:
            raise IntakeError(f"A bacia {query.basin_id} não existe.", "basin", "bacia")
        qs = qs.filter(location__intersects=basin.area)
    if query.municipality_ibge:
        qs = qs.filter(municipality__ibge_code=query.municipality_ibge)
    # Dates of the municipality's clock (settings.TIME_ZONE), both ends included.
    if query.date_from:
        qs = qs.filter(created_at__date__gte=query.date_from)
    if query.date_to:
        qs = qs.filter(created_at__date__lte=query.date_to)
    if query.statuses:
        qs = qs.filter(status__in=query.statuses)
    if query.categories:
        qs = qs.filter(category__in=query.categories)
    if query.near is not None:
        qs = within_metres(qs, query.near, query.radius_m or NEARBY_RADIUS_M)
    return qs.order_by("-created_at", "-pk")


def report_cells_for(queryset: QuerySet, cell: float, limit: int = 2000) -> list[tuple]:
    """The reports of `queryset` counted per grid cell of `cell` degrees: (lon, lat, count) of
    each cell's centre, busiest first. Like services.report_cells, but honouring every filter
    of the inspectors' query; for maps of more reports than a page should draw."""
    x = Func("location", function="ST_X", output_field=FloatField())
    y = Func("location", function="ST_Y", output_field=FloatField())
    floor_x = Func(x / cell, function="floor", output_field=FloatField())
    floor_y = Func(y / cell, function="floor", output_field=FloatField())
    rows = (
        queryset.order_by()
        .annotate(cx=floor_x, cy=floor_y)
        .values("cx", "cy")
        .annotate(n=Count("pk"))
        .order_by("-n")[:limit]
    )
    return [((r["cx"] + 0.5) * cell, (r["cy"] + 0.5) * cell, r["n"]) for r in rows]


# --- what the public sees --------------------------------------------------------------------


@dataclass(frozen=True)
class PublicEvent:
    at: datetime.datetime
    status: str
    status_label: str
    text: str


def public_history(report: DumpingReport) -> list[PublicEvent]:
    """The status changes of a report as the citizen sees them: dates and statuses only, no
    inspector names and no notes (notes are internal)."""
    events = []
    for event in report.events.all().only("at", "from_status", "to_status"):
        if event.from_status == "":
            text = "Denúncia recebida."
        elif event.from_status == event.to_status:
            continue  # internal bookkeeping: a merge into this one, a category fix
        else:
            text = f"Situação alterada para “{STATUS_LABELS.get(event.to_status, '')}”."
        events.append(
            PublicEvent(event.at, event.to_status, STATUS_LABELS.get(event.to_status, ""), text)
        )
    return events


def _metres(value: float | None) -> int | None:
    return None if value is None else round(value)


def public_nearby(reports: Sequence[DumpingReport]) -> list[dict]:
    """What a citizen may see of nearby reports: protocol, date, category, status, distance.
    Never the contact, the description or the photos."""
    return [
        {
            "protocol": r.protocol,
            "created_at": timezone.localtime(r.created_at).isoformat(),
            "created_on": timezone.localtime(r.created_at).strftime("%d/%m/%Y"),
            "category": r.category,
            "category_label": CATEGORY_LABELS.get(r.category, r.category),
            "status": r.status,
            "status_label": STATUS_LABELS.get(r.status, r.status),
            "distance_m": round(r.distance_m)
            if getattr(r, "distance_m", None) is not None
            else None,
        }
        for r in reports
    ]


PROTOCOL_RE = re.compile(r"^(\d{4})([0-9A-Z]{4})([0-9A-Z]{4})$")


def normalize_protocol(text: str) -> str | None:
    """A protocol as a citizen types it: any case, with or without the dashes or with spaces
    ("2026 abcd efgh") becomes 2026-ABCD-EFGH; None when it cannot be one."""
    compact = re.sub(r"[^0-9A-Za-z]", "", text or "").upper()
    match = PROTOCOL_RE.match(compact)
    return "-".join(match.groups()) if match else None


def find_report(reference: str, user) -> DumpingReport | None:
    """A report `user` sees (its municipalities') by its protocol (any case, spaces
    ignored) or its number (id)."""
    text = re.sub(r"\s+", "", reference or "").upper()
    if not text:
        return None
    reports = DumpingReport.objects.visible_to(user)
    if text.isdigit():
        return reports.filter(pk=int(text)).first()
    return reports.filter(protocol=normalize_protocol(text) or text).first()
