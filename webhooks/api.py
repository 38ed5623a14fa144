"""The webhooks' API (/api/v1/webhooks/): a transporter's or a facility's own endpoints, their
deliveries with every attempt, the manual replay. The secret is in the answer of the creation
and of the rotation only."""

from __future__ import annotations

from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.views import APIView

from jurisdiction.access import DataScope
from pev_network.api import problems

from . import services
from .models import Attempt, Delivery, Endpoint, EventType


class EndpointInput(serializers.Serializer):
    url = serializers.CharField(max_length=500, help_text="https://… do seu sistema")
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=EventType.choices), min_length=1, max_length=20
    )
    description = serializers.CharField(max_length=120, required=False, default="")


class EndpointOutput(serializers.ModelSerializer):
    owner = serializers.SerializerMethodField()
    events = serializers.ListField(child=serializers.ChoiceField(choices=EventType.choices))

    class Meta:
        model = Endpoint
        fields = [
            "id",
            "url",
            "description",
            "events",
            "owner",
            "active",
            "disabled_at",
            "disabled_reason",
            "secret_rotated_at",
            "created_at",
        ]

    def get_owner(self, endpoint) -> str:
        return str(endpoint.owner)


class EndpointWithSecret(EndpointOutput):
    secret = serializers.CharField(
        help_text="Mostrado só agora: guarde-o para verificar as assinaturas."
    )

    class Meta(EndpointOutput.Meta):
        fields = [*EndpointOutput.Meta.fields, "secret"]


class AttemptOutput(serializers.ModelSerializer):
    class Meta:
        model = Attempt
        fields = ["number", "at", "ok", "response_status", "response_body", "error", "duration_ms"]


class DeliveryOutput(serializers.ModelSerializer):
    number = serializers.SerializerMethodField()
    attempt_log = AttemptOutput(many=True, read_only=True)

    class Meta:
        model = Delivery
        fields = [
            "id",
            "event_id",
            "event_type",
            "number",
            "ctr_status",
            "occurred_at",
            "status",
            "attempts",
            "next_attempt_at",
            "delivered_at",
            "attempt_log",
        ]

    def get_number(self, delivery) -> str | None:
        return delivery.ctr.number if delivery.ctr_id else None


OWNER_403 = "Acesso negado: só transportadores e operadores de áreas têm webhooks"


@extend_schema_view(
    list=extend_schema(
        summary="Webhooks do seu cadastro",
        responses={200: EndpointOutput(many=True), **problems(401, 403, c403=OWNER_403)},
    ),
    create=extend_schema(
        summary="Cadastrar webhook (o segredo vem só nesta resposta)",
        request=EndpointInput,
        responses={201: EndpointWithSecret, **problems(400, 401, 403, c403=OWNER_403)},
    ),
    retrieve=extend_schema(
        summary="Um webhook do seu cadastro",
        responses={200: EndpointOutput, **problems(401, 403, 404, c403=OWNER_403)},
    ),
)
class EndpointViewSet(viewsets.ViewSet):
    """Os endereços do seu sistema que recebem os eventos dos seus CTRs (docs/api.md:
    assinatura, repetição, id do evento)."""

    permission_classes = [permissions.IsAuthenticated]
    data_scope = DataScope.SIDE
    queryset = Endpoint.objects.all()  # the model, for the schema
    lookup_value_regex = r"[0-9]+"

    def list(self, request):
        services.require_owner(request.user)
        return Response(EndpointOutput(services.endpoints_of(request.user), many=True).data)

    def create(self, request):
        services.require_owner(request.user)
        payload = EndpointInput(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        endpoint = services.register(request.user, data["url"], data["events"], data["description"])
        return Response(EndpointWithSecret(endpoint).data, status=status.HTTP_201_CREATED)

    def retrieve(self, request, pk=None):
        return Response(EndpointOutput(_owned(request, pk)).data)

    @extend_schema(
        summary="Trocar o segredo (o novo vem só nesta resposta)",
        request=None,
        responses={200: EndpointWithSecret, **problems(401, 403, 404, c403=OWNER_403)},
    )
    @action(detail=True, methods=["post"], url_path="rotate-secret")
    def rotate_secret(self, request, pk=None):
        endpoint = _owned(request, pk)
        return Response(EndpointWithSecret(services.rotate_secret(endpoint, request.user)).data)

    @extend_schema(
        summary="Reativar (depois de um 410 ou de desativado)",
        request=None,
        responses={200: EndpointOutput, **problems(401, 403, 404, c403=OWNER_403)},
    )
    @action(detail=True, methods=["post"])
    def enable(self, request, pk=None):
        endpoint = _owned(request, pk)
        return Response(EndpointOutput(services.set_active(endpoint, request.user, True)).data)

    @extend_schema(
        summary="Desativar (as entregas esperam até reativar)",
        request=None,
        responses={200: EndpointOutput, **problems(401, 403, 404, c403=OWNER_403)},
    )
    @action(detail=True, methods=["post"])
    def disable(self, request, pk=None):
        endpoint = _owned(request, pk)
        return Response(EndpointOutput(services.set_active(endpoint, request.user, False)).data)

    @extend_schema(
        summary="Entregas recentes, com as tentativas e respostas",
        responses={200: DeliveryOutput(many=True), **problems(401, 403, 404, c403=OWNER_403)},
    )
    @action(detail=True, methods=["get"])
    def deliveries(self, request, pk=None):
        endpoint = _owned(request, pk)
        return Response(DeliveryOutput(services.deliveries_of(endpoint), many=True).data)


def _owned(request, pk) -> Endpoint:
    """One of the caller's endpoints; another's is a 404 (it does not exist for them)."""
    services.require_owner(request.user)
    if len(str(pk)) > 12:  # beyond the id column: no such endpoint
        raise Http404
    return get_object_or_404(services.endpoints_of(request.user), pk=int(pk))


class ReplayView(APIView):
    """Recolocar uma entrega na fila, agora, com o mesmo id do evento."""

    permission_classes = [permissions.IsAuthenticated]
    data_scope = DataScope.SIDE

    @extend_schema(
        summary="Reenviar uma entrega",
        request=None,
        responses={
            202: DeliveryOutput,
            **problems(401, 403, 404, 409, c403=OWNER_403, c409="A entrega já está na fila"),
        },
    )
    def post(self, request, pk: int):
        services.require_owner(request.user)
        delivery = get_object_or_404(services.webhook_deliveries_of(request.user), pk=pk)
        done = services.replay(delivery, request.user)
        return Response(DeliveryOutput(done).data, status=status.HTTP_202_ACCEPTED)
