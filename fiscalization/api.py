"""API of dumping reports (intake and inspectors' queries).

POST /api/v1/dumping-reports/ is open to anyone (citizens report without an account), rate
limited per client. Everything else (list, detail, status, merge) is for the Núcleo and the
inspectors only (roles.is_municipal), each within its municipalities (another
municipality's report is a 404). Errors are problem+json in Portuguese.
"""

from __future__ import annotations

import json
from decimal import Decimal

from django.contrib.gis.geos import Point
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import mixins, permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter
from rest_framework_gis.serializers import GeoFeatureModelSerializer

import audit
from config.api_errors import PROBLEM_CONTENT_TYPE, TITLES, InvalidParameter, Problem
from config.api_params import parse_bbox, parse_date, parse_float, parse_int
from config.geojson_fields import GeoJSONPointField
from ctr import roles
from jurisdiction.access import DataScope
from pev_network.api import Pagination as GeoJSONPagination
from pev_network.api import ProblemSerializer, problems

from . import intake, throttle
from .models import DumpingCategory, DumpingPhoto, DumpingReport, ReportStatus
from .photos import MAX_PHOTOS, check_photos

router = SimpleRouter()

MAX_VOLUME_M3 = Decimal("10000")


# --- input -----------------------------------------------------------------------------------


POINT_SCHEMA = {
    "type": "object",
    "properties": {
        "type": {"type": "string", "enum": ["Point"]},
        "coordinates": {"type": "array", "items": {"type": "number"}, "minItems": 2},
    },
    "example": {"type": "Point", "coordinates": [-45.1921, -22.8157]},
}


@extend_schema_field(POINT_SCHEMA)
class LocationField(GeoJSONPointField):
    """A GeoJSON point, also as a JSON string (a multipart form field carries text only)."""

    def to_internal_value(self, data):
        if isinstance(data, str):
            try:
                data = json.loads(data)
            except ValueError:
                self.fail("not_object")
        return super().to_internal_value(data)


class ReportInput(serializers.Serializer):
    location = LocationField(required=False)
    lon = serializers.FloatField(required=False, min_value=-180, max_value=180)
    lat = serializers.FloatField(required=False, min_value=-90, max_value=90)
    category = serializers.ChoiceField(choices=DumpingCategory.choices)
    description = serializers.CharField(
        max_length=2000, required=False, default="", allow_blank=True
    )
    estimated_volume_m3 = serializers.DecimalField(
        max_digits=8,
        decimal_places=2,
        min_value=Decimal("0"),
        max_value=MAX_VOLUME_M3,
        required=False,
        allow_null=True,
    )
    contact_name = serializers.CharField(
        max_length=120, required=False, default="", allow_blank=True
    )
    contact = serializers.CharField(max_length=120, required=False, default="", allow_blank=True)
    confirm_new = serializers.BooleanField(required=False, default=False)

    OPTIONAL_BLANKS = ("location", "lon", "lat", "estimated_volume_m3")

    def to_internal_value(self, data):
        # A multipart form sends empty inputs as "": for these fields that means "absent".
        if hasattr(data, "dict"):
            data = {k: v for k, v in data.dict().items()}
        if isinstance(data, dict):
            data = {k: v for k, v in data.items() if not (k in self.OPTIONAL_BLANKS and v == "")}
        return super().to_internal_value(data)

    def validate(self, data):
        has_pair = "lon" in data or "lat" in data
        if "location" in data and has_pair:
            raise serializers.ValidationError(
                {"location": "Informe location ou lon/lat, não os dois."}
            )
        if "location" not in data:
            if not ("lon" in data and "lat" in data):
                raise serializers.ValidationError(
                    {
                        "location": 'Informe o local: {"type": "Point", "coordinates": '
                        "[lon, lat]} ou os campos lon e lat."
                    }
                )
            data["location"] = GeoJSONPointField().to_internal_value(
                {"type": "Point", "coordinates": [data.pop("lon"), data.pop("lat")]}
            )
        return data

    def to_new_report(self) -> intake.NewReport:
        data = self.validated_data
        return intake.NewReport(
            location=data["location"],
            category=data["category"],
            description=data["description"],
            estimated_volume_m3=data.get("estimated_volume_m3"),
            contact_name=data["contact_name"],
            contact=data["contact"],
        )


class StatusInput(serializers.Serializer):
    status = serializers.ChoiceField(choices=ReportStatus.choices)
    note = serializers.CharField(max_length=2000, required=False, default="", allow_blank=True)


class MergeInput(serializers.Serializer):
    into = serializers.IntegerField(min_value=1, help_text="id da denúncia original")
    note = serializers.CharField(max_length=2000, required=False, default="", allow_blank=True)


# --- output ----------------------------------------------------------------------------------


class NearbyConflictOutput(ProblemSerializer):
    """409 of a new report: open reports nearby (each a public summary with its protocol)."""

    code = serializers.CharField()
    nearby = serializers.ListField(child=serializers.DictField())

    class Meta:
        ref_name = "NearbyReportsProblem"


class CreatedOutput(serializers.Serializer):
    protocol = serializers.CharField()
    status = serializers.CharField()
    status_label = serializers.CharField()
    follow_url = serializers.URLField()


class ReportFeature(GeoFeatureModelSerializer):
    municipality = serializers.CharField(source="municipality.ibge_code", read_only=True)
    category_label = serializers.CharField(source="get_category_display", read_only=True)
    status_label = serializers.CharField(source="get_status_display", read_only=True)
    duplicate_of = serializers.SerializerMethodField()
    photo_count = serializers.SerializerMethodField()

    class Meta:
        model = DumpingReport
        geo_field = "location"
        fields = [
            "id", "protocol", "municipality", "category", "category_label", "status",
            "status_label", "description", "estimated_volume_m3", "reporter_kind",
            "contact_name", "contact", "duplicate_of", "photo_count", "created_at", "updated_at",
            "cleaned_at",
        ]  # fmt: skip

    def get_duplicate_of(self, report) -> dict | None:
        original = report.duplicate_of
        if original is None:
            return None
        return {"id": original.pk, "protocol": original.protocol}

    def get_photo_count(self, report) -> int:
        count = getattr(report, "photo_count", None)
        return count if count is not None else report.photos.count()


class PhotoOutput(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    exif_location = LocationField(read_only=True, allow_null=True)
    distance_from_report_m = serializers.SerializerMethodField()

    class Meta:
        model = DumpingPhoto
        fields = [
            "id", "url", "content_type", "width", "height", "size_bytes", "sha256",
            "exif_location", "distance_from_report_m", "created_at",
        ]  # fmt: skip

    def get_url(self, photo) -> str:
        path = reverse("intake:photo", args=[photo.pk])
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request else path

    def get_distance_from_report_m(self, photo) -> float | None:
        distance = getattr(photo, "distance_from_report_m", None)
        return None if distance is None else round(distance, 1)

    def to_representation(self, photo):
        data = super().to_representation(photo)
        if photo.exif_location is None:
            data["exif_location"] = None
        return data


class ReportEventOutput(serializers.Serializer):
    at = serializers.DateTimeField()
    actor = serializers.CharField(source="actor.username", default=None, allow_null=True)
    from_status = serializers.CharField()
    to_status = serializers.CharField()
    note = serializers.CharField()


class ReportDetailFeature(ReportFeature):
    photos = serializers.SerializerMethodField()
    events = ReportEventOutput(many=True, read_only=True)
    duplicates = serializers.SerializerMethodField()
    suggestions = serializers.SerializerMethodField()
    follow_url = serializers.SerializerMethodField()
    suspects_url = serializers.SerializerMethodField()

    class Meta(ReportFeature.Meta):
        fields = [
            *ReportFeature.Meta.fields,
            "photos",
            "events",
            "duplicates",
            "suggestions",
            "follow_url",
            "suspects_url",
        ]

    def get_photos(self, report) -> list[dict]:
        photos = photos_with_distance(report)
        return PhotoOutput(photos, many=True, context=self.context).data

    def get_duplicates(self, report) -> list[dict]:
        return [
            {"id": r.pk, "protocol": r.protocol}
            for r in report.duplicates.only("pk", "protocol").order_by("created_at")
        ]

    def get_suggestions(self, report) -> list[dict]:
        return [s.as_dict() for s in intake.suggest_categories(report.location)]

    def _absolute(self, path: str) -> str:
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request else path

    def get_follow_url(self, report) -> str:
        return self._absolute(reverse("intake:follow", args=[report.protocol]))

    def get_suspects_url(self, report) -> str:
        # The page of suspects of a report (fiscalization.analysis); a plain path, so that this
        # API does not depend on that module's URL names.
        return self._absolute(f"/fiscalizacao/denuncias/{report.pk}/suspeitos/")


def photos_with_distance(report: DumpingReport) -> list[DumpingPhoto]:
    """The report's photos, each with the distance (m) from its EXIF location to the report."""
    photos = list(report.photos.order_by("pk"))
    for photo in photos:
        photo.distance_from_report_m = None
        if photo.exif_location is not None:
            # Geodesic distance in metres (geography), computed in PostGIS on the two points.
            photo.distance_from_report_m = intake.point_distance_m(
                photo.exif_location, report.location
            )
    return photos


# --- query parameters ------------------------------------------------------------------------


def _choices(name: str, raw: str | None, allowed: list[str]) -> list[str]:
    if not raw:
        return []
    values = [v.strip().upper() for v in raw.split(",") if v.strip()]
    wrong = [v for v in values if v not in allowed]
    if wrong:
        raise InvalidParameter(
            name, f"Valor(es) inválido(s): {', '.join(wrong)}. Use: {', '.join(allowed)}."
        )
    return values


def query_from_params(params) -> intake.ReportQuery:
    """The filters of GET /dumping-reports/, each error naming its parameter."""
    query = intake.ReportQuery()
    if params.get("bbox"):
        query.bbox = parse_bbox("bbox", params["bbox"])
    if params.get("polygon"):
        try:
            query.polygon = intake.polygon_from_text(params["polygon"])
        except intake.IntakeError as error:
            raise InvalidParameter("polygon", error.message) from None
    if params.get("bacia"):
        query.basin_id = parse_int("bacia", params["bacia"], 1, 2**62)
    if params.get("municipality"):
        code = params["municipality"].strip()
        if not (code.isdigit() and len(code) == 7):
            raise InvalidParameter("municipality", "Informe o código IBGE de 7 dígitos.")
        query.municipality_ibge = code
    if params.get("date_from"):
        query.date_from = parse_date("date_from", params["date_from"])
    if params.get("date_to"):
        query.date_to = parse_date("date_to", params["date_to"])
    if query.date_from and query.date_to and query.date_from > query.date_to:
        raise InvalidParameter("date_to", "date_to é anterior a date_from.")
    query.statuses = _choices("status", params.get("status"), ReportStatus.values)
    query.categories = _choices("category", params.get("category"), DumpingCategory.values)
    if params.get("near") or params.get("radius_m"):
        raw = (params.get("near") or "").strip()
        parts = [p.strip() for p in raw.split(",")]
        if len(parts) != 2 or not all(parts):
            raise InvalidParameter("near", "Use near=lon,lat (WGS 84) junto com radius_m.")
        lon = parse_float("near", parts[0], -180, 180)
        lat = parse_float("near", parts[1], -90, 90)
        if not params.get("radius_m"):
            raise InvalidParameter("radius_m", "Informe radius_m (metros) junto com near.")
        query.radius_m = parse_float("radius_m", params["radius_m"], 1, intake.MAX_RADIUS_M)
        query.near = Point(lon, lat, srid=4326)
    return query


FILTER_PARAMETERS = [
    OpenApiParameter(
        "bbox", OpenApiTypes.STR, description="minlon,minlat,maxlon,maxlat (WGS 84; intersecta)"
    ),
    OpenApiParameter(
        "polygon", OpenApiTypes.STR, description="Polygon/MultiPolygon em GeoJSON ou WKT (WGS 84)"
    ),
    OpenApiParameter("bacia", OpenApiTypes.INT, description="id da bacia de captação"),
    OpenApiParameter("municipality", OpenApiTypes.STR, description="código IBGE do município"),
    OpenApiParameter("date_from", OpenApiTypes.DATE, description="recebidas a partir de"),
    OpenApiParameter("date_to", OpenApiTypes.DATE, description="recebidas até (inclusive)"),
    OpenApiParameter(
        "status", OpenApiTypes.STR, description=f"uma ou mais, por vírgula: {ReportStatus.values}"
    ),
    OpenApiParameter(
        "category",
        OpenApiTypes.STR,
        description=f"uma ou mais, por vírgula: {DumpingCategory.values}",
    ),
    OpenApiParameter("near", OpenApiTypes.STR, description="lon,lat: com radius_m"),
    OpenApiParameter("radius_m", OpenApiTypes.DOUBLE, description="raio em metros (até 50 km)"),
]


# --- views -----------------------------------------------------------------------------------


class IsMunicipal(roles.IsMunicipal):
    message = "Somente o Núcleo Permanente de Gestão e a fiscalização municipal veem as denúncias."


class Pagination(GeoJSONPagination):  # its schema: the FeatureCollection with count/next/previous
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000


DECISION_PROBLEMS = problems(
    400, 401, 403, 404, 409, c409="Conflito: a denúncia não pode passar a esta situação"
)


def nearby_conflict(error: intake.NearbyReportsExist, request) -> Response:
    nearby = intake.public_nearby(error.reports)
    for item in nearby:
        item["follow_url"] = request.build_absolute_uri(
            reverse("intake:follow", args=[item["protocol"]])
        )
    body = {
        "type": "about:blank",
        "title": TITLES[409],
        "status": 409,
        "detail": error.message + ' Para enviar mesmo assim, repita com "confirm_new": true.',
        "code": error.code,
        "nearby": nearby,
        "instance": request.get_full_path(),
    }
    return Response(body, status=409, content_type=PROBLEM_CONTENT_TYPE)


@extend_schema_view(
    retrieve=extend_schema(
        responses={200: ReportDetailFeature, **problems(401, 403, 404)},
    ),
)
class DumpingReportViewSet(
    mixins.CreateModelMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    """Denúncias de descarte irregular (Lei 3.978/2007 art. 2º, § 1º). Qualquer pessoa envia,
    sem conta; só o Núcleo e a fiscalização consultam e decidem."""

    # The staff's, of their municipalities (`create`, the citizens' report, is open to anyone:
    # the municipality is the one where the point is).
    data_scope = DataScope.STAFF
    lookup_value_regex = r"\d+"
    pagination_class = Pagination
    filter_backends: list = []  # the filters are parsed by query_from_params
    serializer_class = ReportFeature

    def get_permissions(self):
        if self.action == "create":
            return [permissions.AllowAny()]
        return [permissions.IsAuthenticated(), IsMunicipal()]

    def get_queryset(self):
        queryset = intake.base_queryset(self.request.user)
        if self.action == "list":
            query = query_from_params(self.request.query_params)
            try:
                found = intake.search_reports(query, queryset)
            except intake.IntakeError as error:
                raise InvalidParameter(error.field or "filtro", error.message) from None
            # A correlated count rather than Count("photos"): the page's COUNT(*) can then
            # drop it, where the join and GROUP BY of an aggregate were kept (P5 bench).
            photos = (
                DumpingPhoto.objects.filter(report=OuterRef("pk"))
                .order_by()
                .values("report")
                .annotate(n=Count("pk"))
                .values("n")
            )
            return found.annotate(photo_count=Coalesce(Subquery(photos), 0))
        if self.action == "retrieve":
            queryset = queryset.prefetch_related("events__actor")
        return queryset.order_by("-created_at", "-pk")

    def get_serializer_class(self):
        if self.action == "retrieve":
            return ReportDetailFeature
        return ReportFeature

    def retrieve(self, request, *args, **kwargs):
        report = self.get_object()
        # The reporter's name and contact, and the photos: personal data (LGPD art. 37).
        audit.record(request, report, "API: detalhe da denúncia")
        return Response(self.get_serializer(report).data)

    @extend_schema(
        parameters=FILTER_PARAMETERS,
        responses={200: ReportFeature, **problems(400, 401, 403, 404)},
    )
    def list(self, request, *args, **kwargs):
        """Denúncias em GeoJSON (FeatureCollection paginada), com filtros combináveis."""
        return super().list(request, *args, **kwargs)

    @extend_schema(
        request={
            "application/json": ReportInput,
            "multipart/form-data": {
                "type": "object",
                "properties": {
                    "location": {"type": "string", "description": "ponto GeoJSON como texto"},
                    "lon": {"type": "number"},
                    "lat": {"type": "number"},
                    "category": {"type": "string", "enum": DumpingCategory.values},
                    "description": {"type": "string"},
                    "estimated_volume_m3": {"type": "string"},
                    "contact_name": {"type": "string"},
                    "contact": {"type": "string"},
                    "confirm_new": {"type": "boolean"},
                    "photos": {
                        "type": "array",
                        "items": {"type": "string", "format": "binary"},
                        "maxItems": MAX_PHOTOS,
                    },
                },
                "required": ["category"],
            },
        },
        responses={
            201: CreatedOutput,
            **problems(
                400,
                401,
                413,
                415,
                429,
                c400="dados ou fotos inválidos; ponto fora dos municípios",
                c413="foto acima de 8 MB",
                c429="limite de envios; veja Retry-After",
            ),
            (409, PROBLEM_CONTENT_TYPE): OpenApiResponse(
                NearbyConflictOutput,
                description="denúncias abertas a até 250 m: veja `nearby`",
            ),
        },
    )
    def create(self, request, *args, **kwargs):
        """Envia uma denúncia (sem conta). JSON, ou multipart com até 5 fotos em `photos`
        (JPEG, PNG ou WebP, até 8 MB cada). Se houver denúncias abertas a até 250 m nos
        últimos 30 dias, responde 409 com a lista em `nearby`: repita com
        `"confirm_new": true` se for outro descarte."""
        inspector = roles.is_municipal(request.user)
        client = throttle.client_of(request)
        if not inspector:
            throttle.check_report_attempt(client)
        unexpected = [name for name in request.FILES if name != "photos"]
        if unexpected:
            raise Problem(
                400,
                f"Envie as fotos no campo 'photos' (recebi: {', '.join(unexpected)}).",
                [
                    {"campo": name, "mensagem": "campo de arquivo desconhecido"}
                    for name in unexpected
                ],
            )
        payload = ReportInput(data=request.data)
        payload.is_valid(raise_exception=True)
        photos = check_photos(request.FILES.getlist("photos"))
        try:
            report = intake.create_report(
                payload.to_new_report(),
                photos,
                by=request.user if inspector else None,
                confirm_new=payload.validated_data["confirm_new"],
            )
        except intake.NearbyReportsExist as error:
            return nearby_conflict(error, request)
        if not inspector:
            throttle.count_report(client)
        body = {
            "protocol": report.protocol,
            "status": report.status,
            "status_label": report.get_status_display(),
            "follow_url": request.build_absolute_uri(
                reverse("intake:follow", args=[report.protocol])
            ),
        }
        return Response(
            body, status=status.HTTP_201_CREATED, headers={"Location": body["follow_url"]}
        )

    def _detail(self, report):
        report = self.get_queryset().get(pk=report.pk)
        return Response(ReportDetailFeature(report, context=self.get_serializer_context()).data)

    @extend_schema(request=StatusInput, responses={200: ReportDetailFeature, **DECISION_PROBLEMS})
    @action(detail=True, methods=["post"])
    def status(self, request, pk=None):
        """Muda a situação, com uma observação (obrigatória ao declarar improcedente ou ao
        reabrir). Para marcar como duplicada, use merge."""
        report = self.get_object()
        payload = StatusInput(data=request.data)
        payload.is_valid(raise_exception=True)
        report = intake.change_status(
            report, payload.validated_data["status"], request.user, payload.validated_data["note"]
        )
        return self._detail(report)

    @extend_schema(request=MergeInput, responses={200: ReportDetailFeature, **DECISION_PROBLEMS})
    @action(detail=True, methods=["post"])
    def merge(self, request, pk=None):
        """Marca esta denúncia como duplicata de `into` (a original); registra nas duas."""
        report = self.get_object()
        payload = MergeInput(data=request.data)
        payload.is_valid(raise_exception=True)
        # One the user sees: another municipality's report does not exist for it.
        original = (
            DumpingReport.objects.visible_to(request.user)
            .filter(pk=payload.validated_data["into"])
            .first()
        )
        if original is None:
            raise Problem(
                400,
                f"A denúncia {payload.validated_data['into']} não existe.",
                [{"campo": "into", "mensagem": "denúncia inexistente"}],
            )
        report = intake.merge_duplicate(
            report, original, request.user, payload.validated_data["note"]
        )
        return self._detail(report)


router.register("dumping-reports", DumpingReportViewSet, basename="dumping-report")
