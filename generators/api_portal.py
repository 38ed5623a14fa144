"""The generator's CTRs in the API: it reads them through GET /api/v1/ctrs/ (ctr.roles'
rule), and confirms a load's departure here, where its municipality asks for it
(generators.confirmation)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import permissions, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api_errors import Problem
from ctr import roles
from ctr.models import CTR
from jurisdiction.access import DataScope
from pev_network.api import problems

from . import confirmation


class ConfirmationOutput(serializers.Serializer):
    number = serializers.CharField()
    status = serializers.CharField(help_text="issued, received ou refused (não muda)")
    generator_confirmed_at = serializers.DateTimeField(
        help_text="Quando o gerador confirmou a saída da carga."
    )
    generator_confirmed_by = serializers.CharField(
        source="generator_confirmed_by.username", help_text="O usuário do gerador que confirmou."
    )


class ConfirmDepartureView(APIView):
    """O gerador confirma que a carga do CTR saiu da sua obra, uma vez, quando o município
    exige a confirmação (opção do município, desligada por padrão: a Lei 3.978/2007 não a
    exige). Fica no histórico do CTR; a situação do CTR não muda."""

    data_scope = DataScope.SIDE  # the generator's own CTRs
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        summary="Confirmação da saída da carga pelo gerador",
        request=None,
        responses={
            200: ConfirmationOutput,
            **problems(
                401,
                403,
                404,
                409,
                c403="Acesso negado: só o gerador do CTR confirma a saída",
                c409="Conflito: o município não exige a confirmação, o CTR é de saída de uma "
                "área, foi cancelado ou já foi confirmado",
            ),
        },
    )
    def post(self, request, number: str):
        ctr = roles.visible_ctrs(request.user, CTR.objects.all()).filter(number=number).first()
        if ctr is None:
            raise Problem(404, f"Não há CTR “{number[:40]}” entre os que você pode consultar.")
        return Response(ConfirmationOutput(confirmation.confirm_departure(ctr, request.user)).data)
