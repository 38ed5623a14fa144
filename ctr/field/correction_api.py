"""REST API of the corrections of a received CTR (ctr/field/corrections.py):
propose and list them per CTR, see one, approve, refuse, send to the Núcleo, decide."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import permissions, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from config.geojson_fields import GeoJSONPointField
from jurisdiction.access import DataScope
from pev_network.api import problems

from ..api_serializers import WasteInput
from ..models import CTRCorrection
from ..rules import WasteLine
from . import corrections
from .corrections import Proposal

# --- input -------------------------------------------------------------------------------------


class CorrectionWasteInput(WasteInput):
    """A corrected waste line: as at issue; the service refuses a volume ≤ 0 naming the line."""

    volume_m3 = serializers.DecimalField(max_digits=8, decimal_places=3)


class CorrectionInput(serializers.Serializer):
    reason = serializers.CharField(max_length=1000, help_text="Obrigatório.")
    received_volume_m3 = serializers.DecimalField(
        max_digits=8, decimal_places=3, required=False, help_text="Novo volume recebido (m³)."
    )
    waste = CorrectionWasteInput(
        many=True,
        required=False,
        max_length=corrections.MAX_LINES,
        help_text="Todas as linhas de resíduo do CTR corrigidas (substituem as atuais).",
    )
    equipment_code = serializers.CharField(
        max_length=30, required=False, help_text="Código de um equipamento ativo do transportador."
    )
    destination = GeoJSONPointField(
        required=False, help_text="Novo ponto de descarga, dentro da área de destino."
    )

    def to_proposal(self) -> Proposal:
        data = self.validated_data
        waste = data.get("waste")
        return Proposal(
            received_volume_m3=data.get("received_volume_m3"),
            waste=(
                [WasteLine(w["class"], w["volume_m3"], w["description"]) for w in waste]
                if waste is not None
                else None
            ),
            equipment_code=data.get("equipment_code"),
            destination=data.get("destination"),
        )


class CorrectionRefusalInput(serializers.Serializer):
    reason = serializers.CharField(max_length=1000, help_text="Por que a correção é recusada.")


class CorrectionEscalationInput(serializers.Serializer):
    note = serializers.CharField(max_length=1000, required=False, default="", allow_blank=True)


class CorrectionDecisionInput(serializers.Serializer):
    approve = serializers.BooleanField(help_text="true: aplica a correção; false: recusa.")
    note = serializers.CharField(max_length=1000, help_text="A nota da decisão do Núcleo.")


# --- output ------------------------------------------------------------------------------------


class CorrectionOutput(serializers.ModelSerializer):
    ctr = serializers.CharField(source="ctr.number")
    status_label = serializers.CharField(source="get_status_display")
    proposed_by = serializers.CharField(source="proposed_by.username")
    answered_by = serializers.CharField(source="answered_by.username", allow_null=True)
    escalated_by = serializers.CharField(source="escalated_by.username", allow_null=True)
    decided_by = serializers.CharField(source="decided_by.username", allow_null=True)
    decides = serializers.SerializerMethodField(
        help_text="De quem a correção aguarda a decisão: transporter, facility, management "
        "(o Núcleo) ou null."
    )
    original = serializers.JSONField(help_text="Os valores antes da correção (só os alterados).")
    changes = serializers.JSONField(help_text="Os valores propostos.")

    class Meta:
        model = CTRCorrection
        fields = [
            "id", "ctr", "status", "status_label", "decides", "proposed_side", "proposed_by",
            "proposed_at", "reason", "original", "changes", "answered_by", "answered_at",
            "answer_note", "escalated_by", "escalated_at", "decided_by", "decided_at", "note",
            "applied",
        ]  # fmt: skip

    def get_decides(self, correction) -> str | None:
        return corrections.deciding_side(correction)


# --- views -------------------------------------------------------------------------------------

ACTION_PROBLEMS = problems(
    401,
    403,
    404,
    409,
    c403="Acesso negado: a outra parte aprova ou recusa; as partes enviam ao Núcleo; o Núcleo "
    "decide",
    c409="Conflito: a correção não está numa situação que permita isto, ou, aplicada, deixaria "
    "a área com menos resíduo de uma classe do que já saiu dela (CTRs de saída, beneficiamento)",
)


def _output(correction: CTRCorrection) -> dict:
    return CorrectionOutput(
        CTRCorrection.objects.select_related(
            "ctr", "proposed_by", "answered_by", "escalated_by", "decided_by"
        ).get(pk=correction.pk)
    ).data


class CTRCorrectionsView(APIView):
    """As correções de um CTR recebido: o transportador ou o operador da área de
    destino propõe (POST, com o motivo); a outra parte aprova ou recusa; recusada, qualquer das
    partes envia ao Núcleo, que decide. Uma correção em aberto por CTR."""

    permission_classes = [permissions.IsAuthenticated]
    data_scope = DataScope.SIGNED_IN

    def _ctr(self, request, number: str):
        return get_object_or_404(corrections.readable_ctrs(request.user), number=number)

    @extend_schema(
        summary="Correções do CTR",
        responses={200: CorrectionOutput(many=True), **problems(401, 404)},
    )
    def get(self, request, number: str):
        ctr = self._ctr(request, number)
        items = corrections.readable(request.user).filter(ctr=ctr).order_by("pk")
        return Response(CorrectionOutput(items, many=True).data)

    @extend_schema(
        summary="Propor uma correção do CTR recebido",
        request=CorrectionInput,
        responses={
            201: CorrectionOutput,
            **problems(
                400,
                401,
                403,
                404,
                409,
                c400="Dados inválidos ou correção que não altera nada",
                c403="Acesso negado: só o transportador e o operador da área de destino propõem",
                c409="Conflito: o CTR não está recebido ou já tem uma correção em aberto",
            ),
        },
    )
    def post(self, request, number: str):
        ctr = self._ctr(request, number)
        # Who may propose, before the body: a stranger learns nothing else.
        refusal = corrections.why_not_propose(ctr, request.user)
        if refusal is not None and refusal.status == 403:
            raise refusal
        payload = CorrectionInput(data=request.data)
        payload.is_valid(raise_exception=True)
        correction = corrections.propose(
            ctr, request.user, payload.to_proposal(), payload.validated_data["reason"]
        )
        return Response(_output(correction), status=status.HTTP_201_CREATED)


class CorrectionDetailView(APIView):
    permission_classes = [permissions.IsAuthenticated]
    data_scope = DataScope.SIGNED_IN

    @extend_schema(summary="Uma correção", responses={200: CorrectionOutput, **problems(401, 404)})
    def get(self, request, pk: int):
        return Response(_output(get_object_or_404(corrections.readable(request.user), pk=pk)))


class CorrectionActionView(APIView):
    """One step of a correction: `action` and `input_class` per subclass."""

    permission_classes = [permissions.IsAuthenticated]
    data_scope = DataScope.SIGNED_IN
    action = ""
    input_class: type[serializers.Serializer] | None = None

    def run(self, correction, user, data):  # pragma: no cover - each subclass has its own
        raise NotImplementedError

    def post(self, request, pk: int):
        correction = get_object_or_404(corrections.readable(request.user), pk=pk)
        corrections.check_actor(correction, request.user, self.action)
        data = {}
        if self.input_class is not None:
            payload = self.input_class(data=request.data)
            payload.is_valid(raise_exception=True)
            data = payload.validated_data
        return Response(_output(self.run(correction, request.user, data)))


def _schema(summary: str, request=None, bad_body: bool = False):
    codes = {**ACTION_PROBLEMS, **(problems(400) if bad_body else {})}
    return extend_schema(
        summary=summary,
        request=request,
        responses={200: OpenApiResponse(CorrectionOutput), **codes},
    )


class CorrectionApproveView(CorrectionActionView):
    """A outra parte do recebimento aprova: o CTR passa a ter os valores corrigidos."""

    action = "approve"

    @_schema("Aprovar a correção")
    def post(self, request, pk: int):
        return super().post(request, pk)

    def run(self, correction, user, data):
        return corrections.approve(correction, user)


class CorrectionRefuseView(CorrectionActionView):
    """A outra parte do recebimento recusa, com o motivo."""

    action = "refuse"
    input_class = CorrectionRefusalInput

    @_schema("Recusar a correção", CorrectionRefusalInput, bad_body=True)
    def post(self, request, pk: int):
        return super().post(request, pk)

    def run(self, correction, user, data):
        return corrections.refuse(correction, user, data["reason"])


class CorrectionEscalateView(CorrectionActionView):
    """O transportador ou o operador da área envia a correção recusada ao Núcleo."""

    action = "escalate"
    input_class = CorrectionEscalationInput

    @_schema("Enviar a correção recusada ao Núcleo", CorrectionEscalationInput, bad_body=True)
    def post(self, request, pk: int):
        return super().post(request, pk)

    def run(self, correction, user, data):
        return corrections.escalate(correction, user, data["note"])


class CorrectionDecideView(CorrectionActionView):
    """O Núcleo Permanente de Gestão decide a correção enviada a ele, com uma nota."""

    action = "decide"
    input_class = CorrectionDecisionInput

    @_schema("Decisão do Núcleo sobre a correção", CorrectionDecisionInput, bad_body=True)
    def post(self, request, pk: int):
        return super().post(request, pk)

    def run(self, correction, user, data):
        return corrections.decide(correction, user, data["approve"], data["note"])
