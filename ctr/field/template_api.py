"""REST API of the CTR templates: the transporter's templates, and issuing
a CTR from one with the day and the volumes to confirm (the same answer as POST /ctrs/)."""

from __future__ import annotations

from decimal import Decimal

from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_view
from rest_framework import mixins, permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from config.api_errors import Problem
from config.geojson_fields import GeoJSONPointField
from jurisdiction.access import DataScope
from pev_network.api import problems

from .. import roles, rules, services
from ..api_serializers import (
    MAX_ID,
    MAX_LINE_VOLUME,
    CTROutput,
    FacilitySummary,
    GeneratorInput,
    PlateField,
    WasteInput,
    facility_summary,
)
from ..idempotency import idempotent
from ..models import CTRTemplate
from . import templates as ctr_templates


class TemplateWorksiteInput(serializers.Serializer):
    address = serializers.CharField(max_length=300)
    neighbourhood = serializers.CharField(
        max_length=120, required=False, default="", allow_blank=True
    )


class TemplateInput(serializers.Serializer):
    name = serializers.CharField(max_length=80, help_text="Único por transportador.")
    vehicle_plate = PlateField(max_length=10)
    equipment_code = serializers.CharField(
        max_length=30, required=False, default="", allow_blank=True
    )
    generator = GeneratorInput()
    worksite = TemplateWorksiteInput()
    origin = GeoJSONPointField(help_text="A obra: a origem do CTR emitido.")
    destination = GeoJSONPointField(help_text="O ponto de descarga.")
    destination_facility = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=MAX_ID
    )
    waste = WasteInput(many=True, allow_empty=False, max_length=ctr_templates.MAX_WASTE_LINES)

    def to_data(self) -> ctr_templates.TemplateData:
        data = self.validated_data
        return ctr_templates.TemplateData(
            name=data["name"],
            generator=services.GeneratorData(
                data["generator"]["name"], data["generator"]["document"]
            ),
            worksite=services.WorksiteData(
                data["worksite"]["address"], data["origin"], data["worksite"]["neighbourhood"]
            ),
            destination=data["destination"],
            waste=[
                rules.WasteLine(w["class"], w["volume_m3"], w.get("description", ""))
                for w in data["waste"]
            ],
            vehicle_plate=data["vehicle_plate"],
            equipment_code=data["equipment_code"].strip().upper(),
            destination_facility_id=data.get("destination_facility"),
        )


class TemplateWasteOutput(serializers.Serializer):
    volume_m3 = serializers.DecimalField(max_digits=8, decimal_places=3)
    description = serializers.CharField()

    def get_fields(self):
        fields = super().get_fields()
        fields["class"] = serializers.CharField()
        return fields


class TemplateWorksiteOutput(serializers.Serializer):
    address = serializers.CharField()
    neighbourhood = serializers.CharField()


class TemplateGeneratorOutput(serializers.Serializer):
    name = serializers.CharField()
    document = serializers.CharField(help_text="CPF ou CNPJ, só os números.")


class TemplateOutput(serializers.ModelSerializer):
    generator = serializers.SerializerMethodField()
    worksite = serializers.SerializerMethodField()
    origin = GeoJSONPointField()
    destination = GeoJSONPointField()
    destination_facility = serializers.SerializerMethodField()
    vehicle_plate = serializers.CharField(source="vehicle.plate", default=None, allow_null=True)
    equipment_code = serializers.CharField(source="equipment.code", default=None, allow_null=True)
    waste = TemplateWasteOutput(many=True)

    class Meta:
        model = CTRTemplate
        fields = [
            "id", "name", "generator", "worksite", "origin", "destination",
            "destination_facility", "vehicle_plate", "equipment_code", "waste", "created_at",
            "updated_at",
        ]  # fmt: skip

    @extend_schema_field(TemplateGeneratorOutput)
    def get_generator(self, template) -> dict:
        return {"name": template.generator_name, "document": template.generator_document}

    @extend_schema_field(TemplateWorksiteOutput)
    def get_worksite(self, template) -> dict:
        return {
            "address": template.worksite_address,
            "neighbourhood": template.worksite_neighbourhood,
        }

    @extend_schema_field(FacilitySummary(allow_null=True))
    def get_destination_facility(self, template) -> dict | None:
        facility = template.destination_facility
        return facility_summary(facility) if facility else None


class TemplateIssueInput(serializers.Serializer):
    transport_date = serializers.DateField(input_formats=["iso-8601"])
    volumes = serializers.ListField(
        child=serializers.DecimalField(
            max_digits=8,
            decimal_places=3,
            min_value=Decimal("0.001"),
            max_value=MAX_LINE_VOLUME,
        ),
        required=False,
        allow_empty=False,
        max_length=ctr_templates.MAX_WASTE_LINES,
        help_text="Um volume (m³) por resíduo do modelo, na ordem; sem ele, os do modelo.",
    )


NOT_TRANSPORTER = "Acesso negado: só usuários de um transportador têm modelos de CTR"


@extend_schema_view(
    list=extend_schema(
        responses={200: TemplateOutput(many=True), **problems(401, 403, c403=NOT_TRANSPORTER)}
    ),
    retrieve=extend_schema(
        responses={200: TemplateOutput, **problems(401, 403, 404, c403=NOT_TRANSPORTER)}
    ),
    create=extend_schema(
        request=TemplateInput,
        responses={201: TemplateOutput, **problems(400, 401, 403, 409, c403=NOT_TRANSPORTER)},
    ),
    update=extend_schema(
        request=TemplateInput,
        responses={200: TemplateOutput, **problems(400, 401, 403, 404, 409, c403=NOT_TRANSPORTER)},
    ),
    destroy=extend_schema(responses={204: None, **problems(401, 403, 404, c403=NOT_TRANSPORTER)}),
)
class CTRTemplateViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    """Modelos de CTR do transportador do usuário: todos os usuários do transportador os veem;
    outros transportadores, não (404)."""

    permission_classes = [permissions.IsAuthenticated]
    data_scope = DataScope.SIDE
    serializer_class = TemplateOutput
    pagination_class = None
    http_method_names = ["get", "post", "put", "delete", "head", "options"]
    lookup_value_regex = r"\d+"

    def transporter(self):
        transporter = roles.transporter_of(self.request.user)
        if transporter is None:
            raise Problem(403, "Só usuários de um transportador têm modelos de CTR.")
        return transporter

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema generator, without a user
            return CTRTemplate.objects.none()
        return ctr_templates.of(self.transporter())

    def create(self, request):
        transporter = self.transporter()  # who may, before the body
        payload = TemplateInput(data=request.data)
        payload.is_valid(raise_exception=True)
        template = ctr_templates.save(transporter, request.user, payload.to_data())
        return Response(TemplateOutput(template).data, status=status.HTTP_201_CREATED)

    def update(self, request, pk=None):
        template = self.get_object()
        payload = TemplateInput(data=request.data)
        payload.is_valid(raise_exception=True)
        template = ctr_templates.save(
            template.transporter, request.user, payload.to_data(), template
        )
        return Response(TemplateOutput(template).data)

    def destroy(self, request, pk=None):
        ctr_templates.delete(self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)

    @idempotent  # a phone retrying an issue from a template, as POST /api/v1/ctrs/
    @extend_schema(
        request=TemplateIssueInput,
        responses={
            201: CTROutput,
            **problems(400, 401, 403, 404, 422, c403=NOT_TRANSPORTER),
        },
    )
    @action(detail=True, methods=["post"])
    def issue(self, request, pk=None):
        """Emite um CTR do modelo, na data e com os volumes informados; todas as regras são
        conferidas de novo, como em POST /api/v1/ctrs/ (mesma resposta)."""
        template = self.get_object()
        payload = TemplateIssueInput(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        ctr = ctr_templates.issue(
            template, request.user, data["transport_date"], data.get("volumes")
        )
        return Response(CTROutput(ctr).data, status=status.HTTP_201_CREATED)
