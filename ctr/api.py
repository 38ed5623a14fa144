"""REST API of the CTR: issue, list, see, receive, refuse, cancel; vehicles, equipment, rules."""

from __future__ import annotations

import copy
from decimal import Decimal

import django_filters
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Prefetch, prefetch_related_objects
from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.extensions import OpenApiSerializerFieldExtension, OpenApiViewExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import generics, mixins, permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.views import APIView

import audit
from config.api_errors import Problem
from config.api_filters import BBoxFilter
from config.api_params import parse_date
from config.geojson_fields import GeoJSONPointField
from config.pagination import NewestFirstCursorPagination
from jurisdiction.access import DataScope
from jurisdiction.scope import jurisdiction_of
from pev_network.api import problems
from pev_network.models import ReceivingFacility, WasteClass

from . import fleet, lifecycle, roles, rules, services
from .custody import stock
from .documents import normalize_document, normalize_plate
from .field import offline
from .idempotency import idempotent  # safe retries
from .models import (
    CTR,
    CTRAction,
    CTRStatus,
    CTRWasteClass,
    Equipment,
    OnSiteProcessing,
    ProcessingKind,
    Vehicle,
)

MAX_LINE_VOLUME = Decimal("100")  # m³: no single load of RCC comes near this
MAX_ID = 2**31 - 1  # the primary keys are PostgreSQL integers


# --- schema ----------------------------------------------------------------------------------

GEOJSON_POINT_SCHEMA = {
    "type": "object",
    "required": ["type", "coordinates"],
    "properties": {
        "type": {"type": "string", "enum": ["Point"]},
        "coordinates": {
            "type": "array",
            "items": {"type": "number"},
            "minItems": 2,
            "maxItems": 3,
            "description": "[longitude, latitude] em WGS 84",
        },
    },
    "example": {"type": "Point", "coordinates": [-45.1921, -22.8157]},
}


class GeoJSONPointFieldSchema(OpenApiSerializerFieldExtension):
    """A GeoJSON Point in the schema (spectacular cannot infer a custom field: it said string)."""

    target_class = "config.geojson_fields.GeoJSONPointField"
    match_subclasses = True

    def map_serializer_field(self, auto_schema, direction):
        return GEOJSON_POINT_SCHEMA


class TokenOutput(serializers.Serializer):
    token = serializers.CharField()


class TokenInput(serializers.Serializer):
    username = serializers.CharField()
    password = serializers.CharField()


class ObtainAuthTokenSchema(OpenApiViewExtension):
    """DRF's token view, with what it really answers: open to anyone, 400 on wrong credentials."""

    target_class = "rest_framework.authtoken.views.ObtainAuthToken"
    match_subclasses = True
    priority = 1  # before drf-spectacular's own extension of this view

    def view_replacement(self):
        return extend_schema_view(
            post=extend_schema(
                summary="Token de acesso à API (usuário e senha)",
                request=TokenInput,
                responses={
                    200: TokenOutput,
                    **problems(400, 401, 429, c429="muitas tentativas erradas: acesso bloqueado"),
                },
                auth=[{}],
            )
        )(type("ObtainAuthToken", (self.target,), {}))


# --- input -----------------------------------------------------------------------------------


class FieldsBuiltOnce:
    """A serializer whose fields are built once per class and copied for each instance.

    DRF deep-copies every declared field for each serializer (each copy runs the field's
    __init__ again) and a ModelSerializer rebuilds its model's fields as well: ~0.3 ms of CPU
    for an issued CTR's output and ~0.2 ms for its input. A plain field is
    copied shallowly here: binding it to the new serializer sets attributes on the copy only,
    and validating or representing a value changes no state a copy shares. A nested
    serializer is deep-copied, as DRF does (its own fields are bound to it)."""

    def get_fields(self):
        built = type(self).__dict__.get("_built_fields")
        if built is None:
            built = super().get_fields()
            type(self)._built_fields = built
        return {
            name: copy.deepcopy(field)
            if isinstance(field, serializers.BaseSerializer)
            else copy.copy(field)
            for name, field in built.items()
        }


class DocumentField(serializers.CharField):
    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        try:
            return normalize_document(value)
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.messages) from None


class PlateField(serializers.CharField):
    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        try:
            return normalize_plate(value)
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.messages) from None


class GeneratorInput(FieldsBuiltOnce, serializers.Serializer):
    name = serializers.CharField(max_length=200)
    document = DocumentField(max_length=20)


class WorksiteInput(FieldsBuiltOnce, serializers.Serializer):
    address = serializers.CharField(max_length=300)
    location = GeoJSONPointField()
    neighbourhood = serializers.CharField(max_length=120, required=False, default="")


class WasteInput(FieldsBuiltOnce, serializers.Serializer):
    # "class" is a Python keyword: the field is declared under its JSON name below.
    volume_m3 = serializers.DecimalField(
        max_digits=8,
        decimal_places=3,
        min_value=Decimal("0.001"),
        max_value=MAX_LINE_VOLUME,
    )
    description = serializers.CharField(
        max_length=300, required=False, default="", allow_blank=True
    )

    def get_fields(self):
        fields = super().get_fields()
        fields["class"] = serializers.ChoiceField(choices=CTRWasteClass.choices)
        return fields


class CTRInput(FieldsBuiltOnce, serializers.Serializer):
    transport_date = serializers.DateField(input_formats=["iso-8601"])
    vehicle_plate = PlateField(max_length=10)
    equipment_code = serializers.CharField(
        max_length=30, required=False, default="", allow_blank=True
    )
    generator = GeneratorInput(required=False)
    worksite = WorksiteInput(required=False)
    worksite_id = serializers.IntegerField(required=False, min_value=1)
    origin = GeoJSONPointField(
        required=False,
        help_text="Obrigatória, exceto no CTR de saída (origin_facility): então, por padrão, "
        "um ponto dentro da área de origem.",
    )
    destination = GeoJSONPointField()
    destination_facility = serializers.IntegerField(required=False, min_value=1)
    origin_facility = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_ID,
        help_text="CTR de saída: a ATT ou o PEV de onde saem os resíduos triados (art. 3 III). "
        "Emitido pelo operador da área (o município, dos seus PEVs).",
    )
    transporter = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_ID,
        help_text="CTR de saída: o transportador cadastrado que leva a carga.",
    )
    waste = WasteInput(many=True, allow_empty=False, max_length=20)
    # The offline provisional CTR (ctr/offline.py): kept on the driver's phone without a connection.
    provisional_number = serializers.CharField(
        max_length=20,
        required=False,
        default="",
        allow_blank=True,
        help_text="CTR provisório: o número que o aparelho deu sem conexão (PROV-XXXX-0000); "
        "envie também como Idempotency-Key.",
    )
    provisional_departure_at = serializers.DateTimeField(
        required=False,
        allow_null=True,
        default=None,
        help_text="CTR provisório: hora da saída da carga (ISO 8601), no passado se preciso; "
        "transport_date é a data dela.",
    )

    def validate(self, data):
        try:  # an offline provisional CTR
            offline.check_provisional(
                data["provisional_number"].strip().upper(),
                data["provisional_departure_at"],
                data["transport_date"],
            )
        except offline.ProvisionalError as error:
            raise serializers.ValidationError({error.field: error.message}) from None
        onward = "origin_facility" in data
        if onward and "transporter" not in data:
            raise serializers.ValidationError(
                {"transporter": "Informe o transportador que leva a carga do CTR de saída."}
            )
        if not onward and "origin" not in data:
            raise serializers.ValidationError({"origin": "Informe a origem."})
        if onward and ("worksite" in data or "worksite_id" in data):
            raise serializers.ValidationError(
                {"worksite": "O CTR de saída parte de uma área de recebimento, não de uma obra."}
            )
        if not onward and "generator" not in data and "worksite_id" not in data:
            raise serializers.ValidationError(
                {"generator": "Informe o gerador (nome e CPF/CNPJ) ou uma obra já cadastrada."}
            )
        if "worksite" in data and "worksite_id" in data:
            raise serializers.ValidationError(
                {"worksite": "Informe a obra ou worksite_id, não os dois."}
            )
        return data

    def to_request(self) -> services.IssueRequest:
        data = self.validated_data
        generator = data.get("generator")
        worksite = data.get("worksite")
        return services.IssueRequest(
            transport_date=data["transport_date"],
            vehicle_plate=data["vehicle_plate"],
            equipment_code=data["equipment_code"].strip().upper(),
            origin=data.get("origin"),
            destination=data["destination"],
            waste=[
                rules.WasteLine(w["class"], w["volume_m3"], w.get("description", ""))
                for w in data["waste"]
            ],
            generator=services.GeneratorData(generator["name"], generator["document"])
            if generator
            else None,
            worksite=services.WorksiteData(
                worksite["address"], worksite["location"], worksite.get("neighbourhood", "")
            )
            if worksite
            else None,
            worksite_id=data.get("worksite_id"),
            destination_facility_id=data.get("destination_facility"),
            origin_facility_id=data.get("origin_facility"),
            provisional_number=data["provisional_number"].strip().upper(),  # offline CTR
            provisional_departure_at=data["provisional_departure_at"],
        )


class ReceiveInput(serializers.Serializer):
    received_volume_m3 = serializers.DecimalField(
        max_digits=8, decimal_places=3, min_value=Decimal("0.001"), max_value=MAX_LINE_VOLUME * 20
    )
    location = GeoJSONPointField(
        required=False,
        help_text="Onde estava o aparelho do receptor ao confirmar (opcional). Longe "
        "da área além da tolerância do GPS do município não é recusa: fica a constatação "
        "RECEPTION_AWAY_FROM_FACILITY (aviso), com a distância. Um ponto inválido é 400.",
    )
    note = serializers.CharField(max_length=500, required=False, default="", allow_blank=True)


class ReasonInput(serializers.Serializer):
    reason = serializers.CharField(max_length=500)


# --- output ----------------------------------------------------------------------------------


class EventOutput(serializers.Serializer):
    at = serializers.DateTimeField()
    actor = serializers.CharField(source="actor.username")
    action = serializers.CharField()
    from_status = serializers.CharField()
    to_status = serializers.CharField()
    data = serializers.JSONField()


class GeneratorOutput(serializers.Serializer):
    """The generator of a CTR (docs/api.md): the name as declared on it, and the registry's."""

    name = serializers.CharField(help_text="Nome do gerador como declarado neste CTR.")
    document = serializers.CharField(help_text="CPF ou CNPJ, só os números.")
    registered_name = serializers.CharField(
        help_text="Nome do gerador no cadastro (o do primeiro CTR com este CPF/CNPJ)."
    )
    name_matches_registry = serializers.BooleanField(
        help_text="false quando o nome declarado difere do cadastrado (maiúsculas e espaços à "
        "parte)."
    )


class FacilitySummary(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField()


def facility_summary(facility) -> dict:
    return {"id": facility.pk, "name": facility.name, "kind": facility.kind}


class CTROutput(FieldsBuiltOnce, serializers.ModelSerializer):
    municipality = serializers.CharField(source="municipality.ibge_code")
    transporter = serializers.SerializerMethodField()
    vehicle_plate = serializers.CharField(source="vehicle.plate")
    equipment_code = serializers.CharField(source="equipment.code", default=None, allow_null=True)
    generator = serializers.SerializerMethodField()
    destination_facility = serializers.SerializerMethodField()
    origin_facility = serializers.SerializerMethodField()
    origin = GeoJSONPointField()
    destination = GeoJSONPointField()
    waste = serializers.SerializerMethodField()
    status_label = serializers.CharField(source="get_status_display")
    # Where the receiver's device was at the confirmation (null: none sent).
    received_location = GeoJSONPointField(read_only=True, allow_null=True)

    class Meta:
        model = CTR
        fields = [
            "number", "status", "status_label", "municipality", "transport_date", "transporter",
            "vehicle_plate", "equipment_code", "generator", "worksite", "origin", "destination",
            "destination_facility", "origin_facility", "waste", "total_volume_m3",
            "received_volume_m3", "fee_ufesp", "findings", "created_at", "closed_at",
            "generator_confirmed_at", "received_location",
            "provisional_number", "provisional_departure_at",  # offline CTR
        ]  # fmt: skip

    def get_transporter(self, ctr) -> dict:
        return {"id": ctr.transporter_id, "name": ctr.transporter.name}

    @extend_schema_field(GeneratorOutput)
    def get_generator(self, ctr) -> dict:
        """The name as declared on the CTR, and the registry's name for the document: a
        client sees when they differ (docs/api.md)."""
        registered = ctr.generator.name
        declared = ctr.generator_name or registered
        return {
            "name": declared,
            "document": ctr.generator.document,
            "registered_name": registered,
            "name_matches_registry": services.same_name(declared, registered),
        }

    def get_destination_facility(self, ctr) -> dict:
        return facility_summary(ctr.destination_facility)

    @extend_schema_field(FacilitySummary(allow_null=True))
    def get_origin_facility(self, ctr) -> dict | None:
        """The facility an onward CTR leaves (null for a CTR from a worksite)."""
        return facility_summary(ctr.origin_facility) if ctr.origin_facility_id else None

    def get_waste(self, ctr) -> list[dict]:
        return [
            {"class": w.waste_class, "volume_m3": str(w.volume_m3), "description": w.description}
            for w in ctr.waste.all()
        ]


class CTRDetailOutput(CTROutput):
    events = EventOutput(many=True)

    class Meta(CTROutput.Meta):
        fields = [*CTROutput.Meta.fields, "events"]


# --- views -----------------------------------------------------------------------------------

# What CTROutput reads besides the CTR: each relation, with the geometry it never shows.
OUTPUT_RELATIONS = {
    "municipality": "boundary",
    "transporter": None,
    "vehicle": None,
    "equipment": None,
    "generator": None,
    "destination_facility": "area",
    "origin_facility": "area",
}
OUTPUT_DEFERRED = [f"{name}__{unused}" for name, unused in OUTPUT_RELATIONS.items() if unused]
# The same, fetched for a page of CTRs by primary key (one query per relation).
OUTPUT_PREFETCH = [
    Prefetch(name, CTR._meta.get_field(name).related_model.objects.defer(unused))
    if unused
    else name
    for name, unused in OUTPUT_RELATIONS.items()
] + ["waste"]

TRANSITION_PROBLEMS = problems(
    400, 401, 403, 404, 409, 422, c409="Conflito: o CTR não está numa situação que permita isto"
)


class CTRFilter(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=CTRStatus.choices)
    date_from = django_filters.DateFilter(field_name="transport_date", lookup_expr="gte")
    date_to = django_filters.DateFilter(field_name="transport_date", lookup_expr="lte")
    facility = django_filters.NumberFilter(field_name="destination_facility_id")
    transporter = django_filters.NumberFilter(field_name="transporter_id")
    plate = django_filters.CharFilter(method="filter_plate")
    bbox = BBoxFilter("origin")
    overdue = django_filters.BooleanFilter(method="filter_overdue")

    class Meta:
        model = CTR
        fields = ["status", "date_from", "date_to", "facility", "transporter", "plate", "bbox"]

    def filter_plate(self, queryset, name, value):
        return queryset.filter(vehicle__plate=value.replace("-", "").replace(" ", "").upper())

    def filter_overdue(self, queryset, name, value):
        if value:
            return services.overdue(queryset)
        return queryset


@extend_schema_view(
    list=extend_schema(responses={200: CTROutput, **problems(400, 401, 404)}),
    retrieve=extend_schema(responses={200: CTRDetailOutput, **problems(401, 404)}),
)
class CTRViewSet(
    mixins.CreateModelMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    """CTRs do usuário: o transportador vê os seus; o operador, os destinados à sua área; o
    gerador, os que o nomeiam ou saem das suas obras (só leitura); Núcleo e fiscalização,
    todos."""

    lookup_field = "number"
    lookup_value_regex = r"CTR-\d{7}-\d{4}-\d{6}"
    permission_classes = [permissions.IsAuthenticated]
    data_scope = DataScope.SIGNED_IN
    filterset_class = CTRFilter

    pagination_class = NewestFirstCursorPagination

    def get_queryset(self):
        if self.action == "list":
            # The page is chosen on ctr_ctr alone (see list): joining first would make
            # PostgreSQL join every CTR in the bbox before sorting and cutting the page.
            queryset = CTR.objects.all()
        else:
            queryset = CTR.objects.select_related(*OUTPUT_RELATIONS).defer(*OUTPUT_DEFERRED)
            queryset = queryset.prefetch_related("waste")
        if self.action == "retrieve":
            queryset = queryset.prefetch_related("events__actor")
        return roles.visible_ctrs(self.request.user, queryset).order_by("-created_at", "-pk")

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        prefetch_related_objects(page, *OUTPUT_PREFETCH)
        return self.get_paginated_response(CTROutput(page, many=True).data)

    def get_serializer_class(self):
        if self.action == "create":
            return CTRInput
        if self.action == "retrieve":
            return CTRDetailOutput
        return CTROutput

    def retrieve(self, request, *args, **kwargs):
        ctr = self.get_object()
        audit.record(request, ctr, "API: detalhe do CTR")
        return Response(self.get_serializer(ctr).data)

    @idempotent
    @extend_schema(
        request=CTRInput,
        responses={
            201: CTROutput,
            **problems(
                400,
                401,
                403,
                422,
                c403="Acesso negado: só usuários de um transportador emitem; o CTR de saída, "
                "só o operador da área de origem",
            ),
        },
    )
    def create(self, request, *args, **kwargs):
        """Emite um CTR: o transportador, da obra; o operador de uma ATT ou PEV, um CTR de
        saída (origin_facility e transporter), com as regras próprias do CTR de saída."""
        onward = isinstance(request.data, dict) and request.data.get("origin_facility")
        transporter = roles.transporter_of(request.user)
        if transporter is None and not onward:
            raise Problem(403, lifecycle.row(CTRAction.ISSUE).refusal)
        if onward and str(onward).isdigit():
            # Who may issue from the facility, before the body: a stranger learns nothing else.
            services.onward_origin(request.user, int(onward))
        payload = CTRInput(data=request.data)
        payload.is_valid(raise_exception=True)
        if onward:
            ctr = services.issue_onward(
                request.user, payload.validated_data["transporter"], payload.to_request()
            )
        else:
            # No savepoint of its own: an error leaves the request (idempotency.run's
            # savepoint, or no outer transaction at all, takes the writes back).
            ctr = services.issue(transporter, request.user, payload.to_request(), savepoint=False)
        # services.issue returns the CTR with every relation the output shows already loaded.
        return Response(CTROutput(ctr).data, status=status.HTTP_201_CREATED)

    def _transition(self, request, number, input_class, run):
        ctr = self.get_object()
        payload = input_class(data=request.data)
        payload.is_valid(raise_exception=True)
        ctr = run(ctr, payload.validated_data)
        return Response(CTRDetailOutput(self.get_queryset().get(pk=ctr.pk)).data)

    @idempotent
    @extend_schema(request=ReceiveInput, responses={200: CTRDetailOutput, **TRANSITION_PROBLEMS})
    @action(detail=True, methods=["post"])
    def receive(self, request, number=None):
        """O operador da área de destino confirma o recebimento (art. 13 p.ú.)."""
        return self._transition(
            request,
            number,
            ReceiveInput,
            lambda ctr, data: services.receive(
                ctr, request.user, data["received_volume_m3"], data.get("location"), data["note"]
            ),
        )

    @idempotent
    @extend_schema(request=ReasonInput, responses={200: CTRDetailOutput, **TRANSITION_PROBLEMS})
    @action(detail=True, methods=["post"])
    def refuse(self, request, number=None):
        """O operador da área de destino recusa a carga."""
        return self._transition(
            request,
            number,
            ReasonInput,
            lambda ctr, data: services.refuse(ctr, request.user, data["reason"]),
        )

    @idempotent
    @extend_schema(request=ReasonInput, responses={200: CTRDetailOutput, **TRANSITION_PROBLEMS})
    @action(detail=True, methods=["post"])
    def cancel(self, request, number=None):
        """O transportador cancela o CTR antes do recebimento."""
        return self._transition(
            request,
            number,
            ReasonInput,
            lambda ctr, data: services.cancel(ctr, request.user, data["reason"]),
        )


class VehicleSerializer(serializers.ModelSerializer):
    """The API's input; ctr.fleet.add_vehicle holds the rules, as it does for the page."""

    plate = serializers.CharField(max_length=10)

    class Meta:
        model = Vehicle
        fields = ["id", "plate", "description", "active"]


class EquipmentSerializer(serializers.ModelSerializer):
    """The API's input; ctr.fleet.add_equipment holds the rules, as it does for the page."""

    # Declared without the model's minimum: fleet.add_equipment says it, as on the page.
    nominal_capacity_m3 = serializers.DecimalField(max_digits=6, decimal_places=2)

    class Meta:
        model = Equipment
        fields = ["id", "code", "kind", "nominal_capacity_m3", "active"]


def fleet_schema(serializer):
    """The declared responses of vehicles and equipment, each with its serializer."""
    return extend_schema_view(
        list=extend_schema(responses={200: serializer, **problems(401, 404)}),
        create=extend_schema(
            responses={
                201: serializer,
                **problems(400, 401, 403, c403="Acesso negado: só usuários de um transportador"),
            }
        ),
        retrieve=extend_schema(responses={200: serializer, **problems(401, 404)}),
    )


class OwnFleetViewSet(
    mixins.ListModelMixin,
    mixins.CreateModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    permission_classes = [permissions.IsAuthenticated]
    data_scope = DataScope.SIDE
    model = None

    def transporter(self):
        transporter = roles.transporter_of(self.request.user)
        if transporter is None and self.action == "create":
            raise Problem(403, "Só usuários de um transportador cadastram a frota.")
        return transporter

    def get_queryset(self):
        transporter = self.transporter()
        if transporter is None:
            return self.model.objects.none()
        return self.model.objects.filter(transporter=transporter).order_by("pk")

    def create(self, request, *args, **kwargs):
        # Who may register comes before what is sent: anyone else hears 403, not a 400.
        self.transporter()
        return super().create(request, *args, **kwargs)

    def perform_create(self, serializer):
        serializer.instance = self.add(self.transporter(), **serializer.validated_data)


@fleet_schema(VehicleSerializer)
class VehicleViewSet(OwnFleetViewSet):
    """Veículos do transportador do usuário."""

    model = Vehicle
    serializer_class = VehicleSerializer
    add = staticmethod(fleet.add_vehicle)


@fleet_schema(EquipmentSerializer)
class EquipmentViewSet(OwnFleetViewSet):
    """Equipamentos (caçambas) do transportador do usuário."""

    model = Equipment
    serializer_class = EquipmentSerializer
    add = staticmethod(fleet.add_equipment)


class RuleOutput(serializers.Serializer):
    code = serializers.CharField()
    severity = serializers.CharField()
    article = serializers.CharField()
    title = serializers.CharField()
    description = serializers.CharField()
    stage = serializers.CharField()


class RuleListView(APIView):
    """O catálogo de regras do CTR, com o artigo de lei de cada uma."""

    data_scope = DataScope.PUBLIC  # the catalogue: no one's data
    permission_classes = [permissions.AllowAny]

    @extend_schema(responses={200: RuleOutput(many=True), **problems(401)})
    def get(self, request):
        return Response(RuleOutput(list(rules.REGISTRY.values()), many=True).data)


# --- a facility's stock ----------------------------------------------------------------------


class ClassBalanceOutput(serializers.Serializer):
    waste_class = serializers.CharField(help_text="A, B, C, D ou VOLUMOSO")
    opening_m3 = serializers.DecimalField(
        max_digits=12, decimal_places=3, source="opening", help_text="Estoque antes de date_from."
    )
    received_m3 = serializers.DecimalField(
        max_digits=12,
        decimal_places=3,
        source="received",
        help_text="Recebido no período (CTRs recebidos: o volume recebido, repartido pelas "
        "linhas de resíduo).",
    )
    shipped_m3 = serializers.DecimalField(
        max_digits=12,
        decimal_places=3,
        source="shipped",
        help_text="Expedido no período (CTRs de saída emitidos ou recebidos; recusados e "
        "cancelados não contam).",
    )
    processed_m3 = serializers.DecimalField(
        max_digits=12,
        decimal_places=3,
        source="processed",
        help_text="Reciclado ou reutilizado na própria área no período.",
    )
    closing_m3 = serializers.DecimalField(
        max_digits=12, decimal_places=3, source="closing", help_text="Estoque ao fim de date_to."
    )


class FacilityBalanceOutput(serializers.Serializer):
    facility = FacilitySummary()
    date_from = serializers.DateField(allow_null=True)
    date_to = serializers.DateField(allow_null=True)
    classes = ClassBalanceOutput(many=True)


PERIOD_PARAMETERS = [
    OpenApiParameter("date_from", OpenApiTypes.DATE, description="Primeiro dia (incluso)"),
    OpenApiParameter("date_to", OpenApiTypes.DATE, description="Último dia (incluso)"),
]


def period(params) -> tuple:
    """?date_from=&date_to= (AAAA-MM-DD, both optional, in order), each error naming its
    parameter."""
    date_from = parse_date("date_from", params["date_from"]) if params.get("date_from") else None
    date_to = parse_date("date_to", params["date_to"]) if params.get("date_to") else None
    if date_from and date_to and date_from > date_to:
        raise Problem(400, "date_from deve ser anterior ou igual a date_to.")
    return date_from, date_to


def facility_for_reader(request, pk: int, refusal: str) -> ReceivingFacility:
    """The facility, when the caller may read its stock: its operator, or the municipality."""
    facility = get_object_or_404(ReceivingFacility.objects.defer("area"), pk=pk)
    operated = roles.facility_of(request.user)
    if operated is not None and operated.pk == pk:
        return facility
    if roles.is_municipal(request.user):
        # Another municipality's facility does not exist for its staff.
        if not jurisdiction_of(request.user).reads(facility.municipality_id):
            raise Http404
        return facility
    raise Problem(403, refusal)


class FacilityBalanceView(APIView):
    """O balanço de uma área de recebimento por classe (art. 3 III): estoque inicial +
    recebido − expedido − beneficiado na área = estoque final. O operador vê o da sua área;
    Núcleo e fiscalização, o das áreas do seu município."""

    permission_classes = [permissions.IsAuthenticated]
    data_scope = DataScope.SIGNED_IN

    @extend_schema(
        parameters=PERIOD_PARAMETERS,
        responses={
            200: FacilityBalanceOutput,
            **problems(
                400, 401, 403, 404, c403="Acesso negado: só o operador da área e o município"
            ),
        },
    )
    def get(self, request, pk: int):
        facility = facility_for_reader(
            request, pk, "Só o operador da área e o município veem o seu balanço."
        )
        date_from, date_to = period(request.query_params)
        body = {
            "facility": facility_summary(facility),
            "date_from": date_from,
            "date_to": date_to,
            "classes": stock.balance(facility, date_from, date_to),
        }
        return Response(FacilityBalanceOutput(body).data)


# --- on-site processing --------------------------------------------------------------------


class ProcessingInput(serializers.Serializer):
    waste_class = serializers.ChoiceField(
        choices=WasteClass.choices, help_text="A, B, C, D ou VOLUMOSO"
    )
    kind = serializers.ChoiceField(
        choices=ProcessingKind.choices,
        help_text="recycled: agregado reciclado produzido; reused: material reutilizado.",
    )
    volume_m3 = serializers.DecimalField(
        max_digits=10,
        decimal_places=3,
        min_value=Decimal("0.001"),
        max_value=services.MAX_PROCESSING_M3,
        help_text="Volume que sai do estoque da classe; até o estoque do dia mais a tolerância "
        "de triagem do município.",
    )
    day = serializers.DateField(input_formats=["iso-8601"], help_text="Não posterior a hoje.")
    note = serializers.CharField(max_length=300, required=False, default="", allow_blank=True)


class ProcessingOutput(serializers.ModelSerializer):
    facility = serializers.SerializerMethodField()
    kind_label = serializers.CharField(source="get_kind_display")
    recorded_by = serializers.CharField(source="recorded_by.username")

    class Meta:
        model = OnSiteProcessing
        fields = [
            "id", "facility", "waste_class", "kind", "kind_label", "volume_m3", "day", "note",
            "recorded_by", "recorded_at",
        ]  # fmt: skip

    @extend_schema_field(FacilitySummary)
    def get_facility(self, processing) -> dict:
        return facility_summary(processing.facility)


class NewestRecordedFirst(NewestFirstCursorPagination):
    ordering = ("-recorded_at", "-pk")


@extend_schema_view(
    get=extend_schema(
        summary="Beneficiamento registrado na área",
        parameters=PERIOD_PARAMETERS,
        responses={
            200: ProcessingOutput(many=True),
            **problems(
                400, 401, 403, 404, c403="Acesso negado: só o operador da área e o município"
            ),
        },
    ),
    post=extend_schema(
        summary="Registrar beneficiamento na área",
        request=ProcessingInput,
        responses={
            201: ProcessingOutput,
            **problems(
                400,
                401,
                403,
                404,
                422,
                c403="Acesso negado: só o operador da área registra",
                c422="Volume acima do estoque da classe mais a tolerância de triagem",
            ),
        },
    ),
)
class FacilityProcessingView(generics.ListCreateAPIView):
    """O beneficiamento na própria área (art. 2: reutilização, reciclagem): agregado reciclado
    produzido ou material reutilizado, que sai do estoque sem CTR de saída. O operador da
    área registra (POST, dentro do estoque da classe no dia); ele e o município consultam,
    mais recentes primeiro (GET, `date_from`/`date_to` pelo dia)."""

    permission_classes = [permissions.IsAuthenticated]
    data_scope = DataScope.SIGNED_IN
    pagination_class = NewestRecordedFirst
    queryset = OnSiteProcessing.objects.all()  # the model, for the schema
    serializer_class = ProcessingOutput

    def get_queryset(self):
        facility = facility_for_reader(
            self.request,
            self.kwargs["pk"],
            "Só o operador da área e o município veem o seu beneficiamento.",
        )
        date_from, date_to = period(self.request.query_params)
        queryset = (
            OnSiteProcessing.objects.filter(facility=facility)
            .select_related("recorded_by", "facility")
            .defer("facility__area")
        )
        if date_from:
            queryset = queryset.filter(day__gte=date_from)
        if date_to:
            queryset = queryset.filter(day__lte=date_to)
        return queryset

    def create(self, request, pk: int):
        facility = get_object_or_404(ReceivingFacility.objects.defer("area"), pk=pk)
        # Who may record, before the body: a stranger learns nothing else.
        services.require_facility_operator(request.user, facility)
        payload = ProcessingInput(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        done = services.record_processing(
            request.user,
            facility,
            data["waste_class"],
            data["volume_m3"],
            data["day"],
            data["kind"],
            data["note"].strip(),
        )
        return Response(ProcessingOutput(done).data, status=status.HTTP_201_CREATED)
