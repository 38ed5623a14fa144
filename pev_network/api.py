"""REST API of the receiving network: GeoJSON collections, nearest legal facilities, lookups."""

from __future__ import annotations

from decimal import Decimal

import django_filters
from django.db.models import OuterRef, prefetch_related_objects
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import permissions, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework_gis.pagination import GeoJsonPagination
from rest_framework_gis.serializers import GeoFeatureModelSerializer

from config.api_errors import PROBLEM_CONTENT_TYPE, TITLES, InvalidParameter
from config.api_filters import BBoxFilter
from config.api_params import (
    parse_date,
    parse_decimal,
    parse_int,
    parse_lon_lat,
    required,
)
from jurisdiction.access import DataScope

from . import services
from .models import (
    CatchmentBasin,
    FacilityKind,
    FacilityLicense,
    Municipality,
    ReceivingFacility,
    WasteClass,
    parameter_on,
)

# --- schema of errors and of paginated GeoJSON (shared by the API modules) ---------------------


class ProblemSerializer(serializers.Serializer):
    """Erro no formato RFC 9457 (application/problem+json), em português."""

    type = serializers.CharField(help_text='"about:blank"')
    title = serializers.CharField()
    status = serializers.IntegerField()
    detail = serializers.CharField(required=False)
    instance = serializers.CharField(required=False, help_text="caminho da requisição")
    errors = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        help_text="cada erro: {campo, mensagem}; num CTR que viola regras, cada achado da regra",
    )

    class Meta:
        ref_name = "Problem"


PROBLEM_DESCRIPTIONS = {
    400: "parâmetro ou dado inválido: `errors` diz qual e por quê",
    401: "sem credenciais, ou token inválido (também nas rotas públicas, se enviado)",
    403: "o usuário não tem o papel que esta operação exige",
    404: "não existe, ou não é visível para este usuário",
    409: "conflito com a situação atual",
    413: "conteúdo grande demais",
    415: "tipo de conteúdo não suportado",
    422: "regras do CTR violadas: `errors` lista cada achado",
    429: "muitas requisições: veja Retry-After",
    503: "consulta cara demais agora: restrinja os parâmetros",
}


def municipality_id_of(ibge: str | None, name: str = "municipality") -> int | None:
    """The id of the municipality a query parameter names by its IBGE code (None when the
    parameter is absent); a 400 naming the parameter when the code is malformed or unknown."""
    if not ibge:
        return None
    if not (len(ibge) == 7 and ibge.isdigit()):
        raise InvalidParameter(name, f"'{ibge}' não é um código IBGE de 7 dígitos.")
    found = Municipality.objects.filter(ibge_code=ibge).values_list("pk", flat=True).first()
    if found is None:
        raise InvalidParameter(name, f"Nenhum município com o código IBGE {ibge} está cadastrado.")
    return found


def problems(*codes: int, **descriptions: str) -> dict:
    """Declared error responses (problem+json) for `extend_schema(responses=...)`; a keyword
    `c409="..."` replaces the standard description of that code."""
    return {
        (code, PROBLEM_CONTENT_TYPE): OpenApiResponse(
            ProblemSerializer,
            description=descriptions.get(f"c{code}")
            or f"{TITLES.get(code, 'Erro')}: {PROBLEM_DESCRIPTIONS[code]}",
        )
        for code in codes
    }


class Pagination(GeoJsonPagination):
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000

    def get_paginated_response_schema(self, schema):
        """The body is the FeatureCollection itself plus count, next and previous (drf-gis
        declares `features` as a nested FeatureCollection and still requires `results`)."""
        link = {"type": "string", "format": "uri", "nullable": True}
        return {
            "allOf": [
                schema,
                {
                    "type": "object",
                    "required": ["type", "count", "features"],
                    "properties": {
                        "count": {"type": "integer", "example": 123},
                        "next": link,
                        "previous": link,
                    },
                },
            ]
        }


LIST_PROBLEMS = problems(400, 401, 404, c404="Não encontrado: página inexistente")
DETAIL_PROBLEMS = problems(401, 404)


class LicenseSerializer(serializers.ModelSerializer):
    class Meta:
        model = FacilityLicense
        fields = ["number", "issuer", "valid_from", "valid_until", "status", "status_since"]


class FacilitySerializer(GeoFeatureModelSerializer):
    kind_label = serializers.CharField(source="get_kind_display", read_only=True)
    municipality = serializers.SlugRelatedField(slug_field="ibge_code", read_only=True)
    current_license = serializers.SerializerMethodField()

    class Meta:
        model = ReceivingFacility
        geo_field = "area"
        fields = [
            "id", "code", "kind", "kind_label", "name", "operator", "address", "municipality",
            "accepted_classes", "capacity_m3_per_day", "current_license",
        ]  # fmt: skip

    @extend_schema(exclude=True)
    def get_current_license(self, facility: ReceivingFacility) -> dict | None:
        # Reads the prefetched licenses (most recent first) instead of one query per feature.
        day = services.today()
        for lic in facility.licenses.all():
            if lic.is_valid_on(day):
                return LicenseSerializer(lic).data
        return None


class NearbyFacilitySerializer(FacilitySerializer):
    """A facility with its distance in metres from the asked point."""

    distance_m = serializers.SerializerMethodField()

    class Meta(FacilitySerializer.Meta):
        fields = [*FacilitySerializer.Meta.fields, "distance_m"]

    def get_distance_m(self, facility: ReceivingFacility) -> float:
        return round(facility.distance_m, 1)


class FacilityFilter(django_filters.FilterSet):
    kind = django_filters.ChoiceFilter(choices=FacilityKind.choices, label="tipo")
    licensed_on = django_filters.CharFilter(
        method="filter_licensed_on", label="licenciadas na data (AAAA-MM-DD)"
    )
    bbox = BBoxFilter("area")
    municipality = django_filters.CharFilter(
        field_name="municipality__ibge_code", label="código IBGE do município"
    )

    class Meta:
        model = ReceivingFacility
        fields = ["kind", "licensed_on", "bbox", "municipality"]

    def filter_licensed_on(self, queryset, name, value):
        return queryset.licensed_on(parse_date("licensed_on", value))


@extend_schema_view(
    list=extend_schema(responses={200: FacilitySerializer, **LIST_PROBLEMS}),
    retrieve=extend_schema(responses={200: FacilitySerializer, **DETAIL_PROBLEMS}),
)
class FacilityViewSet(viewsets.ReadOnlyModelViewSet):
    """Áreas de recebimento (PEV, ATT, reciclagem, aterro de RCC) em GeoJSON."""

    data_scope = DataScope.PUBLIC  # the public network: every municipality's, to anyone
    permission_classes = [permissions.AllowAny]  # public layers

    serializer_class = FacilitySerializer
    pagination_class = Pagination
    filterset_class = FacilityFilter
    queryset = (
        ReceivingFacility.objects.select_related("municipality")
        .defer("municipality__boundary")
        .prefetch_related("licenses")
        .order_by("pk")
    )

    @extend_schema(
        summary="Áreas legais mais próximas para uma carga",
        parameters=[
            OpenApiParameter("lon", OpenApiTypes.DOUBLE, required=True, description="longitude"),
            OpenApiParameter("lat", OpenApiTypes.DOUBLE, required=True, description="latitude"),
            OpenApiParameter("volume_m3", OpenApiTypes.DECIMAL, required=True),
            OpenApiParameter("waste_class", OpenApiTypes.STR, enum=WasteClass.values),
            OpenApiParameter("limit", OpenApiTypes.INT, description="1 a 50 (padrão 5)"),
        ],
        responses={200: NearbyFacilitySerializer(many=True), **problems(400, 401)},
    )
    @action(detail=False, filterset_class=None, pagination_class=None)
    def nearest(self, request, format=None):
        """As áreas mais próximas que podem receber legalmente esta carga hoje: PEV só até o
        limite de pequeno volume do município (Lei 3.978/2007 art. 12 §1-2), classes aceitas,
        licença válida (art. 14 §1). Distância em metros."""
        params = request.query_params
        point = parse_lon_lat(params)
        volume = parse_decimal(
            "volume_m3", required(params, "volume_m3"), Decimal("0"), Decimal("100000")
        )
        waste_class = params.get("waste_class") or None
        if waste_class is not None and waste_class not in WasteClass.values:
            raise InvalidParameter(
                "waste_class",
                f"Classe '{waste_class}' inválida; use {', '.join(WasteClass.values)}.",
            )
        limit = parse_int("limit", params.get("limit") or "5", 1, 50)
        try:
            services.check_search_point(point)
        except services.NetworkError as error:
            # Swapped or far-away coordinates: a 400 that says so, not a facility 3,000 km off.
            raise InvalidParameter("lon,lat", error.message) from None
        nearby = services.nearest_legal_facilities(point, volume, waste_class, limit=limit)
        prefetch_related_objects(nearby, "licenses")
        return Response(NearbyFacilitySerializer(nearby, many=True).data)


# The parameters the API shows beside a municipality: the set in force today (a municipality
# as it is now; a CTR's own day is the CTR's business), annotated by with_todays_parameters.
SHOWN_PARAMETERS = (
    "small_volume_limit_m3", "gps_tolerance_m", "open_ctr_alert_hours",
    "generator_confirmation_required", "generator_confirmation_hours",
)  # fmt: skip
TODAY = "today_{}"


def with_todays_parameters(queryset):
    day = services.today()
    return queryset.annotate(
        **{TODAY.format(n): parameter_on(n, day, OuterRef("pk")) for n in SHOWN_PARAMETERS}
    )


class TodaysParametersSerializer(serializers.ModelSerializer):
    small_volume_limit_m3 = serializers.DecimalField(
        6, 3, source=TODAY.format("small_volume_limit_m3"), read_only=True
    )
    gps_tolerance_m = serializers.DecimalField(
        6, 1, source=TODAY.format("gps_tolerance_m"), read_only=True
    )
    open_ctr_alert_hours = serializers.IntegerField(
        source=TODAY.format("open_ctr_alert_hours"), read_only=True
    )
    generator_confirmation_required = serializers.BooleanField(
        source=TODAY.format("generator_confirmation_required"), read_only=True
    )
    generator_confirmation_hours = serializers.IntegerField(
        source=TODAY.format("generator_confirmation_hours"), read_only=True
    )

    class Meta:
        model = Municipality
        fields = ["id", "ibge_code", "name", "uf", *SHOWN_PARAMETERS]


class MunicipalitySerializer(GeoFeatureModelSerializer, TodaysParametersSerializer):
    class Meta(TodaysParametersSerializer.Meta):
        geo_field = "boundary"


class MunicipalityPropertiesSerializer(TodaysParametersSerializer):
    pass


class MunicipalityFilter(django_filters.FilterSet):
    uf = django_filters.CharFilter(lookup_expr="iexact")
    bbox = BBoxFilter("boundary")

    class Meta:
        model = Municipality
        fields = ["uf", "bbox"]


@extend_schema_view(
    list=extend_schema(responses={200: MunicipalitySerializer, **LIST_PROBLEMS}),
    retrieve=extend_schema(responses={200: MunicipalitySerializer, **DETAIL_PROBLEMS}),
)
class MunicipalityViewSet(viewsets.ReadOnlyModelViewSet):
    """Municípios com limites (GeoJSON) e parâmetros legais."""

    data_scope = DataScope.PUBLIC  # the public network: every municipality's, to anyone
    permission_classes = [permissions.AllowAny]  # public layers

    serializer_class = MunicipalitySerializer
    pagination_class = Pagination
    filterset_class = MunicipalityFilter
    queryset = Municipality.objects.order_by("uf", "name")

    def get_queryset(self):
        # Per request: today is the request's day, not the day the module was imported.
        return with_todays_parameters(super().get_queryset())

    @extend_schema(
        summary="Município que contém um ponto",
        parameters=[
            OpenApiParameter("lon", OpenApiTypes.DOUBLE, required=True),
            OpenApiParameter("lat", OpenApiTypes.DOUBLE, required=True),
        ],
        responses={
            200: MunicipalityPropertiesSerializer,
            **problems(400, 401, 404, c404="Não encontrado: nenhum município contém o ponto"),
        },
    )
    @action(detail=False, filterset_class=None, pagination_class=None)
    def lookup(self, request, format=None):
        """O município cujo limite contém o ponto (um ponto na divisa conta como dentro)."""
        municipality = services.municipality_at(parse_lon_lat(request.query_params))
        if municipality is None:
            raise NotFound("Nenhum município cadastrado contém este ponto.")
        municipality = with_todays_parameters(
            Municipality.objects.defer("boundary").filter(pk=municipality.pk)
        ).get()
        return Response(MunicipalityPropertiesSerializer(municipality).data)


class BasinSerializer(GeoFeatureModelSerializer):
    municipality = serializers.SlugRelatedField(slug_field="ibge_code", read_only=True)
    served_by_name = serializers.CharField(source="served_by.name", read_only=True, default=None)

    class Meta:
        model = CatchmentBasin
        geo_field = "area"
        fields = ["id", "code", "name", "municipality", "served_by", "served_by_name"]


class BasinFilter(django_filters.FilterSet):
    municipality = django_filters.CharFilter(field_name="municipality__ibge_code")
    bbox = BBoxFilter("area")

    class Meta:
        model = CatchmentBasin
        fields = ["municipality", "bbox"]


@extend_schema_view(
    list=extend_schema(responses={200: BasinSerializer, **LIST_PROBLEMS}),
    retrieve=extend_schema(responses={200: BasinSerializer, **DETAIL_PROBLEMS}),
)
class BasinViewSet(viewsets.ReadOnlyModelViewSet):
    """Bacias de captação (Lei 3.978/2007 art. 3 V), cada uma atendida por um PEV."""

    data_scope = DataScope.PUBLIC  # the public network: every municipality's, to anyone
    permission_classes = [permissions.AllowAny]  # public layers

    serializer_class = BasinSerializer
    pagination_class = Pagination
    filterset_class = BasinFilter
    queryset = (
        CatchmentBasin.objects.select_related("municipality", "served_by")
        .defer("municipality__boundary", "served_by__area")
        .order_by("pk")
    )
