"""The CTR API's serializers: what a client sends (the CTR and its parts, a reception, a
reason) and what it gets back (the CTR, its events), the fields they share, and the schema's
extensions for them (a GeoJSON point, the token view). The viewsets are ctr.api's."""

from __future__ import annotations

import copy
from decimal import Decimal

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.extensions import OpenApiSerializerFieldExtension, OpenApiViewExtension
from drf_spectacular.utils import (
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import serializers

from config.geojson_fields import GeoJSONPointField
from pev_network.api import problems

from . import rules, services
from .documents import normalize_document, normalize_plate
from .field import offline
from .models import (
    CTR,
    CTRWasteClass,
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
    # The offline provisional CTR (ctr/field/offline.py): kept on the driver's phone without a
    # connection.
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
