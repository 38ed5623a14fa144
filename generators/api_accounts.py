"""REST API of the generator accounts: invitations by the Núcleo or a
transporter, and the Núcleo's decisions on self-registrations. Thin: generators.accounts does
the work and raises its AccountError, answered as problem+json by config.api_errors."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import generics, permissions, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

import audit
from config.api_errors import InvalidParameter
from config.pagination import NewestFirstCursorPagination
from ctr import roles
from ctr.documents import format_document, mask_document
from jurisdiction.access import DataScope
from pev_network.api import problems

from . import accounts
from .models import GeneratorInvitation, GeneratorRegistration, RegistrationStatus

# --- invitations -----------------------------------------------------------------------------


class InvitationInput(serializers.Serializer):
    document = serializers.CharField(
        max_length=30, help_text="CPF ou CNPJ do gerador, com ou sem pontuação."
    )
    email = serializers.CharField(
        max_length=254, help_text="Para onde vai o endereço de uso único do convite."
    )
    name = serializers.CharField(
        max_length=200,
        required=False,
        allow_blank=True,
        default="",
        help_text="Só o Núcleo, para um gerador ainda não cadastrado (um já cadastrado mantém "
        "o seu nome).",
    )


class InvitedGeneratorOutput(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    document = serializers.CharField(help_text="CPF ou CNPJ, só os dígitos.")


class InvitationOutput(serializers.Serializer):
    id = serializers.IntegerField()
    generator = InvitedGeneratorOutput()
    email = serializers.EmailField()
    state = serializers.SerializerMethodField(help_text="pending, accepted ou expired")
    created_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField()
    accepted_at = serializers.DateTimeField(allow_null=True)
    invited_by = serializers.CharField(source="invited_by.username")
    transporter_id = serializers.IntegerField(
        allow_null=True, help_text="O transportador que convidou; null: o Núcleo."
    )
    municipality = serializers.CharField(
        source="municipality.ibge_code",
        allow_null=True,
        default=None,
        help_text="Código IBGE do município do convite: o do Núcleo que convidou, ou o do CTR "
        "em que o transportador atendeu o gerador.",
    )

    def get_state(self, invitation) -> str:
        return invitation.state()


class InvitationPagination(NewestFirstCursorPagination):
    ordering = ("-created_at", "-pk")


class InvitationListView(generics.ListCreateAPIView):
    """Convites de geradores. POST: convida o gerador de um CPF/CNPJ, que recebe por e-mail um
    endereço de uso único (7 dias) para criar a sua conta; o Núcleo convida qualquer gerador
    (e o cadastra com `name` se preciso), um transportador só um que aparece num CTR seu (art.
    13 p.ú.; os outros: 403). O token do convite só vai no e-mail. GET: os convites enviados,
    mais novos primeiro (o município os dos seus municípios, o transportador os seus). O
    Núcleo convida pelo município em que trabalha (o atual, escolhido em /municipio/)."""

    # The staff's and the transporters' (each what visible_to gives it).
    data_scope = DataScope.SIGNED_IN
    permission_classes = [permissions.IsAuthenticated]
    pagination_class = InvitationPagination
    serializer_class = InvitationOutput
    queryset = GeneratorInvitation.objects.all()  # the model, for the schema

    def get_queryset(self):
        accounts.require_inviter(self.request.user)
        return accounts.invitations_for(self.request.user, current=False)

    @extend_schema(
        summary="Convites de geradores enviados",
        responses={200: InvitationOutput(many=True), **problems(400, 401, 403)},
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    @extend_schema(
        summary="Convidar um gerador a abrir a sua conta",
        request=InvitationInput,
        responses={
            201: InvitationOutput,
            **problems(
                400, 401, 403, c403="Acesso negado, ou gerador que não aparece nos seus CTRs"
            ),
        },
    )
    def post(self, request, *args, **kwargs):
        # Who may invite, before the body: a stranger learns nothing else.
        accounts.require_inviter(request.user, acting=True)
        payload = InvitationInput(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        invitation = accounts.invite(request.user, data["email"], data["document"], data["name"])
        return Response(InvitationOutput(invitation).data, status=status.HTTP_201_CREATED)


# --- self-registrations (the Núcleo) ---------------------------------------------------------


class IsMunicipal(roles.IsMunicipal):
    message = (
        "Só o Núcleo Permanente de Gestão e a fiscalização municipal veem os cadastros de "
        "geradores."
    )


class RegistrationSummary(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField(help_text="pending, confirmed ou refused")
    name = serializers.CharField()
    document = serializers.SerializerMethodField(
        help_text="Mascarado nas listas (CPF: ***.456.789-**); completo no detalhe."
    )
    municipality = serializers.CharField(
        source="municipality.ibge_code",
        allow_null=True,
        default=None,
        help_text="Código IBGE do município cujo Núcleo confere o cadastro.",
    )
    created_at = serializers.DateTimeField()
    decided_at = serializers.DateTimeField(allow_null=True)

    def get_document(self, registration) -> str:
        return mask_document(registration.document)


class KnownGeneratorOutput(serializers.Serializer):
    id = serializers.IntegerField(source="generator.id")
    name = serializers.CharField(source="generator.name")
    ctrs = serializers.IntegerField(help_text="CTRs que citam o gerador.")
    worksites = serializers.IntegerField()
    accounts = serializers.ListField(
        child=serializers.CharField(), help_text="Usuários das contas ativas do gerador."
    )


class RegistrationOutput(RegistrationSummary):
    document = serializers.SerializerMethodField(help_text="CPF ou CNPJ, com a pontuação.")
    email = serializers.EmailField()
    username = serializers.CharField(source="user.username")
    reason = serializers.CharField(help_text="O motivo da recusa (vazio nos demais).")
    decided_by = serializers.CharField(source="decided_by.username", allow_null=True)
    generator_id = serializers.IntegerField(
        allow_null=True, help_text="O gerador a que a conta foi vinculada (confirmado)."
    )
    known_generator = serializers.SerializerMethodField(
        help_text="O gerador já cadastrado com este CPF/CNPJ (null se nenhum): confirmar "
        "vincula a conta a ele, sem mudar o seu nome."
    )

    def get_document(self, registration) -> str:
        return format_document(registration.document)

    @extend_schema_field(KnownGeneratorOutput(allow_null=True))
    def get_known_generator(self, registration):
        known = accounts.known_generator(
            registration.document, self.context["request"].user, registration.user
        )
        return KnownGeneratorOutput(known).data if known else None


STATUS_PARAMETER = OpenApiParameter(
    "status",
    str,
    enum=RegistrationStatus.values,
    description="pending (padrão), confirmed ou refused.",
)


class RegistrationPagination(NewestFirstCursorPagination):
    ordering = ("-created_at", "-pk")


def _registration(request, pk: int) -> GeneratorRegistration:
    """The registration, if of one of the user's municipalities (another's: 404)."""
    return get_object_or_404(
        GeneratorRegistration.objects.visible_to(request.user).select_related(
            "user", "decided_by", "municipality"
        ),
        pk=pk,
    )


def _detail(request, registration: GeneratorRegistration, purpose: str) -> Response:
    # Name, CPF/CNPJ and e-mail in full (LGPD art. 37).
    audit.record(request, registration, purpose)
    return Response(RegistrationOutput(registration, context={"request": request}).data)


class RegistrationListView(generics.ListAPIView):
    """Cadastros de geradores feitos em /gerador/cadastro/ com os municípios do usuário, mais
    novos primeiro; por padrão os que aguardam decisão. CPF/CNPJ mascarado; completo no
    detalhe."""

    data_scope = DataScope.STAFF
    permission_classes = [permissions.IsAuthenticated, IsMunicipal]
    pagination_class = RegistrationPagination
    serializer_class = RegistrationSummary
    queryset = GeneratorRegistration.objects.all()  # the model, for the schema

    def get_queryset(self):
        wanted = self.request.query_params.get("status", RegistrationStatus.PENDING)
        if wanted not in RegistrationStatus.values:
            raise InvalidParameter(
                "status", f"Situação desconhecida: use {', '.join(RegistrationStatus.values)}."
            )
        return (
            accounts.registrations_for(self.request.user, current=False)
            .filter(status=wanted)
            .select_related("municipality")
            .defer("municipality__boundary")
        )

    @extend_schema(
        summary="Cadastros de geradores",
        parameters=[STATUS_PARAMETER],
        responses={200: RegistrationSummary(many=True), **problems(400, 401, 403)},
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class RegistrationDetailView(APIView):
    """Um cadastro de gerador, com o gerador já cadastrado do mesmo CPF/CNPJ (se houver) e as
    suas contas ativas: o que o Núcleo confere antes de decidir."""

    data_scope = DataScope.STAFF
    permission_classes = [permissions.IsAuthenticated, IsMunicipal]

    @extend_schema(
        summary="Um cadastro de gerador",
        responses={200: RegistrationOutput, **problems(401, 403, 404)},
    )
    def get(self, request, pk: int):
        return _detail(request, _registration(request, pk), "API: cadastro de gerador")


class RefuseInput(serializers.Serializer):
    reason = serializers.CharField(
        max_length=accounts.MAX_REASON, help_text="Vai no e-mail a quem pediu o cadastro."
    )


class RegistrationConfirmView(APIView):
    """Confirma o cadastro: a conta passa a agir pelo gerador do CPF/CNPJ (criado a partir do
    cadastro se não existe; um existente mantém o seu nome). A pessoa é avisada por e-mail.
    Um cadastro já decidido: 409."""

    data_scope = DataScope.STAFF
    permission_classes = [permissions.IsAuthenticated, IsMunicipal]

    @extend_schema(
        summary="Confirmar um cadastro de gerador",
        request=None,
        responses={200: RegistrationOutput, **problems(401, 403, 404, 409)},
    )
    def post(self, request, pk: int):
        registration = accounts.confirm_registration(_registration(request, pk), request.user)
        return _detail(request, registration, "API: cadastro de gerador confirmado")


class RegistrationRefuseView(APIView):
    """Recusa o cadastro com o motivo, que vai por e-mail à pessoa; a conta fica sem papel.
    Sem motivo: 400; já decidido: 409."""

    data_scope = DataScope.STAFF
    permission_classes = [permissions.IsAuthenticated, IsMunicipal]

    @extend_schema(
        summary="Recusar um cadastro de gerador",
        request=RefuseInput,
        responses={200: RegistrationOutput, **problems(400, 401, 403, 404, 409)},
    )
    def post(self, request, pk: int):
        registration = _registration(request, pk)
        payload = RefuseInput(data=request.data)
        payload.is_valid(raise_exception=True)
        registration = accounts.refuse_registration(
            registration, request.user, payload.validated_data["reason"]
        )
        return _detail(request, registration, "API: cadastro de gerador recusado")
