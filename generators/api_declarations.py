"""REST API of the Habite-se destination declaration (Lei 3.978/2007 art. 9 p.ú. II): the
generator asks for it on its worksite and reads it; the Núcleo lists the requests, issues or
refuses them. The same services as the pages (generators.declarations); their refusals are
problem+json in Portuguese (config.api_errors)."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import permissions, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

import audit
from config.api_errors import Problem
from ctr import roles
from ctr.models import Worksite
from jurisdiction.access import DataScope
from pev_network.api import problems

from . import declarations
from .models import DeclarationStatus, HabiteSeDeclaration

VOLUME = {"max_digits": 14, "decimal_places": 3}
NOT_FOUND = "Declaração de destinação não encontrada."
C403 = "Acesso negado: só o gerador da obra e o município"
DECIDE_403 = "Acesso negado: só o Núcleo Permanente de Gestão"


# --- output ----------------------------------------------------------------------------------


class ClassFiguresOutput(serializers.Serializer):
    waste_class = serializers.CharField(help_text="A, B, C, D ou VOLUMOSO")
    expected_m3 = serializers.DecimalField(
        **VOLUME, allow_null=True, help_text="Do PGRCC aprovado; null sem PGRCC aprovado."
    )
    transported_m3 = serializers.DecimalField(**VOLUME)
    received_m3 = serializers.DecimalField(**VOLUME)
    destined_m3 = serializers.DecimalField(
        **VOLUME, help_text="Chegou a uma área de reciclagem ou aterro, ou foi beneficiado."
    )


class FactsOutput(serializers.Serializer):
    statement = serializers.CharField(help_text="A declaração numa frase, como impressa.")
    ended_on = serializers.DateField()
    ctr_count = serializers.IntegerField(help_text="Os CTRs recebidos pela primeira área.")
    destined_m3 = serializers.DecimalField(**VOLUME)
    classes = ClassFiguresOutput(many=True)
    refused_numbers = serializers.ListField(child=serializers.CharField())
    refused_note = serializers.CharField()
    certificate_code = serializers.CharField(help_text="O Certificado de Destinação Final.")
    certificate_digest = serializers.CharField()


class DeclarationLinks(serializers.Serializer):
    pdf = serializers.URLField(help_text="A declaração em PDF, com o QR code da verificação.")
    verify = serializers.URLField(help_text="A página pública de verificação.")


class DeclarationOutput(serializers.ModelSerializer):
    status = serializers.CharField(help_text="requested, issued ou refused")
    status_label = serializers.CharField(source="get_status_display")
    requested_by = serializers.CharField(source="requested_by.username")
    decided_by = serializers.CharField(source="decided_by.username", allow_null=True)
    facts = serializers.SerializerMethodField(help_text="O conteúdo emitido (null até emitida).")
    links = serializers.SerializerMethodField()

    class Meta:
        model = HabiteSeDeclaration
        fields = [
            "id",
            "worksite",
            "status",
            "status_label",
            "ended_on",
            "note",
            "requested_at",
            "requested_by",
            "decided_at",
            "decided_by",
            "reasons",
            "code",
            "digest",
            "facts",
            "links",
        ]

    @extend_schema_field(FactsOutput(allow_null=True))
    def get_facts(self, declaration) -> dict | None:
        if declaration.status != DeclarationStatus.ISSUED:
            return None
        return FactsOutput(declarations.facts(declaration)).data

    @extend_schema_field(DeclarationLinks(allow_null=True))
    def get_links(self, declaration) -> dict | None:
        if declaration.status != DeclarationStatus.ISSUED:
            return None
        request = self.context["request"]
        return DeclarationLinks(
            {
                "pdf": request.build_absolute_uri(
                    reverse("generators:declaration-pdf", args=[declaration.pk])
                ),
                "verify": request.build_absolute_uri(
                    reverse("generators:declaration-verify", args=[declaration.code])
                ),
            }
        ).data


class ReviewOutput(serializers.Serializer):
    can_issue = serializers.BooleanField(
        help_text="Emitível agora (com a explicação das cargas recusadas, se houver)."
    )
    reasons = serializers.ListField(
        child=serializers.CharField(),
        source="open_reasons",
        help_text="O que impede a emissão: cargas não recebidas, em estoque, em trânsito.",
    )
    refused = serializers.ListField(
        child=serializers.CharField(),
        source="refused_reasons",
        help_text="As cargas recusadas pela primeira área: o Núcleo explica o que foi feito delas.",
    )
    classes = ClassFiguresOutput(many=True, source="comparison.classes")
    certificate_statement = serializers.CharField(source="certificate.statement")


class WorksiteDeclarationsOutput(serializers.Serializer):
    worksite = serializers.IntegerField(source="worksite.pk")
    review = ReviewOutput(source="*")
    declarations = DeclarationOutput(many=True)


# --- input -----------------------------------------------------------------------------------


class RequestInput(serializers.Serializer):
    ended_on = serializers.DateField(
        input_formats=["iso-8601"], help_text="O término da obra: não depois de hoje."
    )
    note = serializers.CharField(
        max_length=declarations.NOTE_MAX, required=False, default="", allow_blank=True
    )


class IssueInput(serializers.Serializer):
    refused_note = serializers.CharField(
        max_length=declarations.NOTE_MAX,
        required=False,
        default="",
        allow_blank=True,
        help_text="O que foi feito das cargas recusadas (obrigatório quando houver).",
    )


class DeclarationRefuseInput(serializers.Serializer):
    reasons = serializers.CharField(max_length=declarations.NOTE_MAX)


# --- views -----------------------------------------------------------------------------------


def _worksite(request, pk: int) -> Worksite:
    """The worksite, if its generator's or of the staff's municipalities."""
    worksite = (
        Worksite.objects.visible_to(request.user)
        .select_related("generator", "municipality")
        .filter(pk=pk)
        .first()
    )
    if worksite is None:
        raise Problem(404, "Obra não encontrada.")
    return worksite


def _declaration(request, pk: int) -> HabiteSeDeclaration:
    """The declaration, if its worksite's generator's or of the staff's municipalities; any
    other is as if it did not exist."""
    declaration = (
        HabiteSeDeclaration.objects.visible_to(request.user)
        .select_related("worksite", "worksite__generator", "requested_by", "decided_by")
        .filter(pk=pk)
        .first()
    )
    if declaration is None:
        raise Problem(404, NOT_FOUND)
    return declaration


def _output(request, declaration, code=status.HTTP_200_OK) -> Response:
    return Response(DeclarationOutput(declaration, context={"request": request}).data, code)


class WorksiteDeclarationsView(APIView):
    """A declaração de destinação para o Habite-se de uma obra (Lei 3.978/2007 art. 9 p.ú.
    II): se pode ser emitida agora (e o que impede), os volumes por classe e os pedidos."""

    # The worksite's generator and its municipality's staff (visible_to).
    data_scope = DataScope.SIGNED_IN
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        summary="Habite-se: situação da obra e os seus pedidos",
        responses={200: WorksiteDeclarationsOutput, **problems(401, 403, 404, c403=C403)},
    )
    def get(self, request, pk: int):
        worksite = _worksite(request, pk)
        audit.record(request, worksite, "API: Habite-se da obra")
        review = declarations.review(worksite)
        body = WorksiteDeclarationsOutput(
            {
                "worksite": worksite,
                "can_issue": review.can_issue,
                "open_reasons": review.open_reasons,
                "refused_reasons": review.refused_reasons,
                "comparison": review.comparison,
                "certificate": review.certificate,
                "declarations": worksite.declarations.select_related(
                    "requested_by", "decided_by", "worksite"
                ),
            },
            context={"request": request},
        )
        return Response(body.data)

    @extend_schema(
        summary="Habite-se: o gerador pede a declaração de destinação",
        request=RequestInput,
        responses={
            201: DeclarationOutput,
            **problems(
                400,
                401,
                403,
                404,
                409,
                c403="Acesso negado: só o gerador da obra pede a declaração",
                c409="Já há um pedido em análise, a declaração já foi emitida, ou ainda há "
                "pendência na destinação (cada uma em errors)",
            ),
        },
    )
    def post(self, request, pk: int):
        worksite = _worksite(request, pk)
        declarations.require_generator(request.user, worksite)
        payload = RequestInput(data=request.data)
        payload.is_valid(raise_exception=True)
        declaration = declarations.request(
            worksite,
            request.user,
            payload.validated_data["ended_on"],
            payload.validated_data["note"],
        )
        return _output(request, declaration, status.HTTP_201_CREATED)


class DeclarationListView(APIView):
    """Os pedidos de declaração de destinação, para o município: os em análise (os mais
    antigos primeiro), ou os de uma situação; os dos municípios do usuário."""

    data_scope = DataScope.STAFF
    permission_classes = [roles.IsMunicipal]

    @extend_schema(
        summary="Habite-se: os pedidos de declaração",
        operation_id="habite_se_list",
        parameters=[
            OpenApiParameter(
                "status",
                str,
                enum=[value for value, _ in DeclarationStatus.choices] + ["all"],
                description="requested (padrão), issued, refused ou all",
            )
        ],
        responses={200: DeclarationOutput(many=True), **problems(400, 401, 403)},
    )
    def get(self, request):
        chosen = request.query_params.get("status", DeclarationStatus.REQUESTED)
        if chosen not in set(DeclarationStatus.values) | {"all"}:
            raise Problem(
                400, f"status “{chosen[:20]}” inválido: use requested, issued, refused ou all."
            )
        items = declarations.queue(
            request.user, None if chosen == "all" else chosen, current=False
        )[:500]
        return Response(DeclarationOutput(items, many=True, context={"request": request}).data)


class DeclarationDetailView(APIView):
    """Uma declaração de destinação: o pedido, a decisão e, emitida, o conteúdo e os links."""

    data_scope = DataScope.SIGNED_IN
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        summary="Habite-se: uma declaração",
        operation_id="habite_se_retrieve",
        responses={200: DeclarationOutput, **problems(401, 403, 404, c403=C403)},
    )
    def get(self, request, pk: int):
        declaration = _declaration(request, pk)
        audit.record(request, declaration.worksite, "API: declaração de destinação")
        return _output(request, declaration)


DECISION_PROBLEMS = problems(
    400,
    401,
    403,
    404,
    409,
    c403=DECIDE_403,
    c409="Já decidida, ou (emitir) as cargas ainda não foram todas recebidas e destinadas",
)


def _decide(request, pk: int, verb: str, input_class, act) -> Response:
    """The Núcleo's decision: who first (anyone else 403 before the body is read), then the
    body, then the service."""
    declaration = _declaration(request, pk)
    declarations.require_nucleo(request.user, verb, declaration.worksite)
    payload = input_class(data=request.data)
    payload.is_valid(raise_exception=True)
    return _output(request, act(declaration, request.user, **payload.validated_data))


class DeclarationIssueView(APIView):
    """O Núcleo emite a declaração, com o certificado de destinação final da obra emitido no
    mesmo momento; recusada (409, com os motivos) se uma carga não foi recebida ou o seu
    resíduo ainda não chegou à destinação final."""

    data_scope = DataScope.SIGNED_IN
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        summary="Habite-se: o Núcleo emite a declaração",
        request=IssueInput,
        responses={200: DeclarationOutput, **DECISION_PROBLEMS},
    )
    def post(self, request, pk: int):
        return _decide(request, pk, "emite", IssueInput, declarations.issue)


class DeclarationRefuseView(APIView):
    """O Núcleo recusa o pedido, com os motivos (o gerador os recebe por e-mail)."""

    data_scope = DataScope.SIGNED_IN
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        summary="Habite-se: o Núcleo recusa o pedido",
        request=DeclarationRefuseInput,
        responses={200: DeclarationOutput, **DECISION_PROBLEMS},
    )
    def post(self, request, pk: int):
        return _decide(request, pk, "recusa", DeclarationRefuseInput, declarations.refuse)
