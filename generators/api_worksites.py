"""REST API of the worksites a generator registers (/api/v1/worksites/): the generator's
account lists, registers and changes its own; the municipality every one (filterable), and
registers on a generator's behalf. GeoJSON in and out: a worksite is a Feature whose geometry
is the contour drawn (Polygon) or its point. The worksite's destinations
(/api/v1/worksites/{id}/destinations/) are ctr's (ctr/api_destinations.py)."""

from __future__ import annotations

import json

import django_filters
from django.contrib.gis.geos import GEOSGeometry
from django.core.exceptions import ValidationError as DjangoValidationError
from django.shortcuts import get_object_or_404
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_view
from rest_framework import generics, permissions, serializers, status
from rest_framework.response import Response

import audit
from config.api_errors import InvalidParameter
from config.api_filters import BBoxFilter
from config.geojson_fields import GeoJSONPointField
from ctr import roles
from ctr.api_serializers import GEOJSON_POINT_SCHEMA, DocumentField
from ctr.documents import normalize_document
from ctr.models import WorkKind, Worksite
from jurisdiction.access import DataScope, reads_only
from jurisdiction.scope import AUDITOR_REFUSAL
from pev_network.api import Pagination, problems

from . import worksites
from .worksites import Registration, WorksiteInvalid

# --- geometry --------------------------------------------------------------------------------

POSITION = {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 3}
GEOJSON_POLYGON_SCHEMA = {
    "type": "object",
    "required": ["type", "coordinates"],
    "properties": {
        "type": {"type": "string", "enum": ["Polygon"]},
        "coordinates": {
            "type": "array",
            "items": {"type": "array", "items": POSITION, "minItems": 4},
            "minItems": 1,
            "description": "anéis de [longitude, latitude] em WGS 84, o primeiro o contorno",
        },
    },
}
WORKSITE_GEOMETRY_SCHEMA = {
    "oneOf": [GEOJSON_POINT_SCHEMA, GEOJSON_POLYGON_SCHEMA],
    "description": "A obra: o contorno desenhado (Polygon) ou um ponto (Point), em WGS 84.",
}


class WorksiteGeometryField(serializers.Field):
    """A GeoJSON Point or Polygon in (generators.worksites.geometry_from_geojson says what is
    wrong); out, the worksite's contour, or its point when it has none."""

    def to_internal_value(self, data) -> GEOSGeometry:
        try:
            return worksites.geometry_from_geojson(data, self.field_name)
        except WorksiteInvalid as error:
            raise serializers.ValidationError([m for _, m in error.problems]) from None

    def to_representation(self, value) -> dict:
        if isinstance(value, Worksite):
            value = value.area if value.area is not None else value.location
        return json.loads(value.geojson)


class WorksiteGeometrySchema(OpenApiSerializerFieldExtension):
    target_class = "generators.api_worksites.WorksiteGeometryField"

    def map_serializer_field(self, auto_schema, direction):
        return WORKSITE_GEOMETRY_SCHEMA


# --- input and output ------------------------------------------------------------------------


class WorksiteRegistrationInput(serializers.Serializer):
    generator = DocumentField(
        max_length=20,
        required=False,
        help_text="CPF ou CNPJ do gerador: só o município informa (cadastra em nome dele); a "
        "conta do gerador cadastra as próprias obras.",
    )
    generator_name = serializers.CharField(
        max_length=200,
        required=False,
        help_text="O nome do gerador, quando o CPF/CNPJ ainda não está no cadastro.",
    )
    address = serializers.CharField(max_length=300)
    neighbourhood = serializers.CharField(
        max_length=120, required=False, allow_blank=True, default=""
    )
    geometry = WorksiteGeometryField()
    permit_number = serializers.CharField(
        max_length=60, required=False, allow_blank=True, default="", help_text="Número do alvará."
    )
    built_area_m2 = serializers.DecimalField(max_digits=12, decimal_places=2)
    work_kind = serializers.ChoiceField(choices=WorkKind.choices)
    start_date = serializers.DateField(input_formats=["iso-8601"])
    expected_end = serializers.DateField(input_formats=["iso-8601"])
    declared_large_generator = serializers.BooleanField(
        required=False,
        default=False,
        help_text="O gerador declara-se grande gerador nesta obra (Lei 3.978/2007 art. 9), "
        "além da regra do município (alvará e área construída).",
    )

    def registration(self, base: Registration | None = None) -> Registration:
        """The registration sent; in a PATCH, the worksite's with the fields sent replaced."""
        data = self.validated_data
        fields = {k: v for k, v in data.items() if k not in ("generator", "generator_name")}
        if base is None:
            return Registration(**fields)
        for name, value in fields.items():
            setattr(base, name, value)
        return base


class WorksiteGeneratorOutput(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    document = serializers.CharField(help_text="CPF ou CNPJ, só os dígitos")


class WorksiteProperties(serializers.Serializer):
    generator = WorksiteGeneratorOutput()
    address = serializers.CharField()
    neighbourhood = serializers.CharField()
    location = GeoJSONPointField(
        help_text="O ponto da obra (com contorno, um ponto dentro dele): o que o mapa marca."
    )
    drawn = serializers.SerializerMethodField(help_text="true quando a obra tem contorno.")
    municipality = serializers.CharField(
        source="municipality.ibge_code", allow_null=True, default=None, help_text="código IBGE"
    )
    permit_number = serializers.CharField()
    built_area_m2 = serializers.DecimalField(max_digits=12, decimal_places=2, allow_null=True)
    work_kind = serializers.CharField(help_text="new_building, renovation, demolition ou vazio")
    work_kind_label = serializers.CharField(source="get_work_kind_display")
    start_date = serializers.DateField(allow_null=True)
    expected_end = serializers.DateField(allow_null=True)
    ended_on = serializers.DateField(allow_null=True)
    is_large_generator = serializers.BooleanField(
        help_text="Grande gerador (PGRCC): declarado, ou obra com alvará e área construída a "
        "partir do limite do município."
    )
    registered = serializers.SerializerMethodField(
        help_text="false: obra criada pelo CTR de um transportador, sem cadastro do gerador."
    )
    registered_at = serializers.DateTimeField(allow_null=True)

    def get_drawn(self, worksite: Worksite) -> bool:
        return worksite.area is not None

    def get_registered(self, worksite: Worksite) -> bool:
        return worksite.registered_at is not None


class WorksiteOutput(serializers.Serializer):
    """Uma obra como Feature GeoJSON."""

    type = serializers.SerializerMethodField()
    id = serializers.IntegerField()
    geometry = WorksiteGeometryField(source="*")
    properties = WorksiteProperties(source="*")

    @extend_schema_field({"type": "string", "enum": ["Feature"]})
    def get_type(self, worksite: Worksite) -> str:
        return "Feature"


class WorksitePagination(Pagination):
    def get_paginated_response_schema(self, schema):
        """A FeatureCollection of the worksites with count, next and previous."""
        link = {"type": "string", "format": "uri", "nullable": True}
        return {
            "type": "object",
            "required": ["type", "count", "features"],
            "properties": {
                "type": {"type": "string", "enum": ["FeatureCollection"]},
                "count": {"type": "integer", "example": 12},
                "next": link,
                "previous": link,
                "features": schema,
            },
        }


# --- views -----------------------------------------------------------------------------------


class MayRegisterWorksites(permissions.BasePermission):
    message = "Só as contas de gerador e o município têm acesso às obras cadastradas."

    def has_permission(self, request, view) -> bool:
        if request.method not in permissions.SAFE_METHODS and reads_only(request.user):
            self.message = AUDITOR_REFUSAL
            return False
        return worksites.may_register(request.user)


class WorksiteFilter(django_filters.FilterSet):
    generator = django_filters.CharFilter(
        method="filter_generator", label="CPF ou CNPJ do gerador (o município)"
    )
    municipality = django_filters.CharFilter(
        field_name="municipality__ibge_code", label="código IBGE do município"
    )
    registered = django_filters.BooleanFilter(
        method="filter_registered", label="true: cadastradas; false: criadas por CTR"
    )
    large_generator = django_filters.BooleanFilter(field_name="is_large_generator")
    work_kind = django_filters.ChoiceFilter(choices=WorkKind.choices)
    bbox = BBoxFilter("location")

    class Meta:
        model = Worksite
        fields = ["generator", "municipality", "registered", "large_generator", "work_kind"]

    def filter_generator(self, queryset, name, value):
        try:
            return queryset.filter(generator__document=normalize_document(value))
        except DjangoValidationError as error:
            raise InvalidParameter("generator", error.messages[0]) from None

    def filter_registered(self, queryset, name, value):
        if value is None:
            return queryset
        return queryset.filter(registered_at__isnull=not value)


def visible(request):
    """The generator's own worksites, the staff's of all its municipalities (filterable by
    `municipality`); another's is a 404."""
    return (
        worksites.visible_worksites(request.user)
        .select_related("generator", "municipality")
        .defer("municipality__boundary")
        .order_by("address", "pk")
    )


MANAGER_FORBIDDEN = "Acesso negado: só as contas de gerador e o município"


@extend_schema_view(
    get=extend_schema(
        summary="Obras do gerador (o município: as dos seus municípios)",
        responses={200: WorksiteOutput, **problems(400, 401, 403, 404)},
    ),
    post=extend_schema(
        summary="Cadastrar uma obra",
        request=WorksiteRegistrationInput,
        responses={
            201: WorksiteOutput,
            **problems(
                400,
                401,
                403,
                404,
                409,
                c403=MANAGER_FORBIDDEN,
                c404="Não encontrado: a obra fica num município que não é o seu (o município)",
                c409="Conflito: o alvará já está em outra obra do município, ou o gerador já "
                "tem obra cadastrada no endereço",
            ),
        },
    ),
)
class WorksiteListView(generics.ListCreateAPIView):
    """Obras: o gerador vê e cadastra as suas; o município vê as dos seus municípios e
    cadastra em nome de um gerador (`generator`) onde atua. No endereço de uma obra criada pelo
    CTR de um transportador, sem cadastro, o cadastro completa aquela obra (a mesma obra, com
    os seus CTRs)."""

    # The generator's and the staff's, each what Worksite.objects.visible_to gives it.
    data_scope = DataScope.SIGNED_IN
    permission_classes = [permissions.IsAuthenticated, MayRegisterWorksites]
    serializer_class = WorksiteOutput
    filterset_class = WorksiteFilter
    pagination_class = WorksitePagination

    def get_queryset(self):
        return visible(self.request)

    def get_serializer_class(self):
        return WorksiteRegistrationInput if self.request.method == "POST" else WorksiteOutput

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        # GeoJsonPagination takes the collection a GeoFeatureModelSerializer would give.
        features = WorksiteOutput(page, many=True).data
        return self.get_paginated_response({"type": "FeatureCollection", "features": features})

    def create(self, request, *args, **kwargs):
        payload = WorksiteRegistrationInput(data=request.data)
        payload.is_valid(raise_exception=True)
        generator = self._generator(request, payload.validated_data)
        worksite = worksites.register(generator, payload.registration(), request.user)
        return Response(WorksiteOutput(worksite).data, status=status.HTTP_201_CREATED)

    @staticmethod
    def _generator(request, data):
        if not roles.is_municipal(request.user):
            if "generator" in data:
                raise serializers.ValidationError(
                    {"generator": "A conta do gerador cadastra só as próprias obras: omita-o."}
                )
            return roles.generator_of(request.user)
        if "generator" not in data:
            raise serializers.ValidationError(
                {"generator": "Informe o CPF ou CNPJ do gerador da obra."}
            )
        return worksites.generator_to_register(data["generator"], data.get("generator_name", ""))


class WorksiteDetailView(generics.GenericAPIView):
    """Uma obra: o seu gerador e o município; a de outro gerador (ou município) não existe
    (404)."""

    data_scope = DataScope.SIGNED_IN
    permission_classes = [permissions.IsAuthenticated, MayRegisterWorksites]
    serializer_class = WorksiteOutput
    http_method_names = ["get", "patch", "head", "options"]

    def get_queryset(self):
        return visible(self.request)

    @extend_schema(summary="Uma obra", responses={200: WorksiteOutput, **problems(401, 403, 404)})
    def get(self, request, pk: int):
        worksite = get_object_or_404(self.get_queryset(), pk=pk)
        audit.record(request, worksite, "API: detalhe da obra")
        return Response(WorksiteOutput(worksite).data)

    @extend_schema(
        summary="Alterar o cadastro de uma obra",
        request=WorksiteRegistrationInput(partial=True),
        responses={
            200: WorksiteOutput,
            **problems(
                400,
                401,
                403,
                404,
                409,
                c403=MANAGER_FORBIDDEN,
                c409="Conflito: o alvará já está em outra obra do município, ou o gerador já "
                "tem outra obra no endereço",
            ),
        },
    )
    def patch(self, request, pk: int):
        """Altera só os campos enviados; a obra criada por um CTR fica cadastrada por esta
        alteração, que então precisa de todos os campos do cadastro."""
        worksite = get_object_or_404(self.get_queryset(), pk=pk)
        payload = WorksiteRegistrationInput(data=request.data, partial=True)
        payload.is_valid(raise_exception=True)
        if "generator" in payload.validated_data:
            raise serializers.ValidationError(
                {"generator": "O gerador de uma obra não muda: omita o campo."}
            )
        base = Registration.of(worksite)
        worksite = worksites.update(worksite, payload.registration(base), request.user)
        return Response(WorksiteOutput(worksite).data)
