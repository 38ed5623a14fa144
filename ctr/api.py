"""REST API of the CTR: issue, list, see, receive, refuse, cancel; vehicles, equipment, rules.

Its serializers are in ctr.api_serializers."""

from __future__ import annotations

from decimal import Decimal

import django_filters
from django.db.models import Prefetch, prefetch_related_objects
from django.http import Http404
from django.shortcuts import get_object_or_404
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
from config.pagination import NewestFirstCursorPagination
from jurisdiction.access import DataScope
from jurisdiction.scope import jurisdiction_of
from pev_network.api import problems
from pev_network.models import ReceivingFacility, WasteClass

from . import alerts, closing, fleet, lifecycle, roles, rules, services
from .api_serializers import (
    CTRDetailOutput,
    CTRInput,
    CTROutput,
    FacilitySummary,
    ReasonInput,
    ReceiveInput,
    facility_summary,
)
from .custody import processing as ctr_processing
from .custody import stock
from .idempotency import idempotent  # safe retries
from .models import (
    CTR,
    CTRAction,
    CTRStatus,
    Equipment,
    OnSiteProcessing,
    ProcessingKind,
    Vehicle,
)

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
            return alerts.overdue(queryset)
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
            lambda ctr, data: closing.receive(
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
            lambda ctr, data: closing.refuse(ctr, request.user, data["reason"]),
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
            lambda ctr, data: closing.cancel(ctr, request.user, data["reason"]),
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
        max_value=ctr_processing.MAX_PROCESSING_M3,
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
        ctr_processing.require_facility_operator(request.user, facility)
        payload = ProcessingInput(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        done = ctr_processing.record_processing(
            request.user,
            facility,
            data["waste_class"],
            data["volume_m3"],
            data["day"],
            data["kind"],
            data["note"].strip(),
        )
        return Response(ProcessingOutput(done).data, status=status.HTTP_201_CREATED)
