"""The PGRCC in the API: the estimator; a worksite's plans, written and
submitted by its generator; a plan's detail and history; the Núcleo's queue and decisions.
Thin: generators.plans decides, its PlanError answers as problem+json (config.api_errors)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import permissions, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

import audit
from config.api_errors import Problem
from config.api_params import required
from ctr import roles
from ctr.models import WorkKind, Worksite
from jurisdiction.access import DataScope
from pev_network.api import problems
from pev_network.models import Municipality, WasteClass

from . import estimator, plans
from .models import PlanStatus, WastePlan

VOLUME = {"max_digits": 12, "decimal_places": 2}
CLASSES = ", ".join(WasteClass.values)
KINDS = ", ".join(WorkKind.values)


# --- the estimator ----------------------------------------------------------------------------


class PlanClassEstimateOutput(serializers.Serializer):
    waste_class = serializers.CharField(help_text=CLASSES)
    rate_m3_per_m2 = serializers.DecimalField(max_digits=10, decimal_places=5)
    volume_m3 = serializers.DecimalField(**VOLUME)


class PlanEstimateOutput(serializers.Serializer):
    built_area_m2 = serializers.DecimalField(max_digits=12, decimal_places=2)
    work_kind = serializers.CharField(help_text=KINDS)
    municipality = serializers.IntegerField(
        source="municipality.pk", allow_null=True, help_text="null: os índices padrão."
    )
    total_m3 = serializers.DecimalField(**VOLUME)
    classes = PlanClassEstimateOutput(many=True)


class EstimateView(APIView):
    """O volume previsto por classe de uma obra (Lei 3.978/2007 art. 9): área construída ×
    índice do município (m³ por m², por tipo de obra e classe; padrões com fonte em
    docs/legal.md)."""

    # A municipality's rates are parameters of its law, not anyone's data.
    data_scope = DataScope.SIGNED_IN
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        summary="Estimativa de resíduos de uma obra (PGRCC)",
        parameters=[
            OpenApiParameter(
                "built_area_m2", OpenApiTypes.DECIMAL, required=True, description="m², > 0"
            ),
            OpenApiParameter("work_kind", OpenApiTypes.STR, required=True, description=KINDS),
            OpenApiParameter(
                "municipality", OpenApiTypes.INT, description="Índices do município (id)"
            ),
        ],
        responses={200: PlanEstimateOutput, **problems(400, 401)},
    )
    def get(self, request):
        params = request.query_params
        municipality = None
        if params.get("municipality"):
            raw = params["municipality"]
            municipality = (
                Municipality.objects.defer("boundary").filter(pk=raw).first()
                if raw.isdigit()
                else None
            )
            if municipality is None:
                raise Problem(400, f"Município desconhecido: {raw}.")
        area = required(params, "built_area_m2").replace(",", ".")
        result = estimator.estimate(area, required(params, "work_kind"), municipality)
        return Response(PlanEstimateOutput(result).data)


# --- plans ------------------------------------------------------------------------------------


class PlanVolumeOutput(serializers.Serializer):
    waste_class = serializers.CharField()
    volume_m3 = serializers.DecimalField(**VOLUME)


class PlanAgentOutput(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    name = serializers.CharField()


class PlanEventOutput(serializers.Serializer):
    at = serializers.DateTimeField()
    action = serializers.CharField()
    action_label = serializers.CharField(source="get_action_display")
    actor = serializers.CharField(source="actor.username", allow_null=True, default=None)
    note = serializers.CharField()
    data = serializers.JSONField(help_text="Volumes, transportadores e destinos naquele momento.")


class PlanOutput(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    worksite = serializers.IntegerField(source="worksite_id")
    version = serializers.IntegerField()
    status = serializers.CharField(help_text=", ".join(PlanStatus.values))
    status_label = serializers.CharField(source="get_status_display")
    volumes = PlanVolumeOutput(many=True, source="volumes.all")
    transporters = PlanAgentOutput(many=True, source="transporters.all")
    facilities = PlanAgentOutput(many=True, source="facilities.all")
    created_at = serializers.DateTimeField()
    submitted_at = serializers.DateTimeField(allow_null=True)
    decided_at = serializers.DateTimeField(allow_null=True)
    decision_note = serializers.CharField()


class PlanDetailOutput(PlanOutput):
    events = PlanEventOutput(many=True, source="events.all")


class PlanInput(serializers.Serializer):
    volumes = serializers.DictField(
        child=serializers.CharField(allow_blank=True),
        help_text=f"m³ previstos por classe ({CLASSES}), ponto ou vírgula decimal.",
    )
    transporters = serializers.ListField(
        child=serializers.IntegerField(), default=list, help_text="Licenciados hoje (ids)."
    )
    facilities = serializers.ListField(
        child=serializers.IntegerField(), default=list, help_text="Licenciadas hoje (ids)."
    )
    submit = serializers.BooleanField(default=False, help_text="Enviar ao Núcleo já.")


class PlanNoteInput(serializers.Serializer):
    note = serializers.CharField(required=False, default="", allow_blank=True, max_length=4000)


def _plans(user=None):
    """The plans `user` sees (its generator's, its municipalities'); given none, every one
    (a plan's detail after a step, its reader checked before)."""
    plans_ = WastePlan.objects.all() if user is None else WastePlan.objects.visible_to(user)
    return plans_.select_related("worksite").prefetch_related(
        "volumes", "transporters", "facilities"
    )


def _worksite(request, pk: int) -> Worksite:
    """The worksite, if its generator's or of the staff's municipalities."""
    worksite = (
        Worksite.objects.visible_to(request.user).select_related("generator").filter(pk=pk).first()
    )
    if worksite is None:
        raise Problem(404, "Obra não encontrada.")
    return worksite


def _plan(request, pk: int) -> WastePlan:
    """The plan, if its worksite's generator's or of the staff's municipalities."""
    plan = _plans(request.user).prefetch_related("events__actor").filter(pk=pk).first()
    if plan is None:
        raise Problem(404, "PGRCC não encontrado.")
    if roles.is_municipal(request.user):
        audit.record(request, plan.worksite, "API: PGRCC")
    return plan


def _detail(pk: int) -> dict:
    """The plan as it is after a step (its reader was checked before the step)."""
    return PlanDetailOutput(_plans().prefetch_related("events__actor").get(pk=pk)).data


def _valid(serializer_class, request):
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class WorksitePlansView(APIView):
    """As versões do PGRCC de uma obra (GET: o gerador da obra e o município); o gerador
    escreve (POST): a versão em elaboração ou devolvida, ou uma nova versão quando a última
    foi aprovada. Transportadores e destinos só entre os licenciados hoje (art. 9 p.ú. I):
    cada um que não for é recusado com o nome e o motivo, e nada é gravado."""

    # The worksite's generator and its municipality's staff (visible_to).
    data_scope = DataScope.SIGNED_IN
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        summary="Versões do PGRCC de uma obra",
        responses={200: PlanOutput(many=True), **problems(401, 404)},
    )
    def get(self, request, pk: int):
        worksite = _worksite(request, pk)
        return Response(PlanOutput(_plans().filter(worksite=worksite), many=True).data)

    @extend_schema(
        summary="Escrever (e enviar) o PGRCC de uma obra",
        request=PlanInput,
        responses={
            200: PlanDetailOutput,
            **problems(
                400,
                401,
                403,
                404,
                409,
                c403="Só o gerador da obra escreve o seu PGRCC",
                c409="Uma versão aguarda a decisão do Núcleo",
            ),
        },
    )
    def post(self, request, pk: int):
        worksite = _worksite(request, pk)
        plans.check_writer(request.user, worksite)
        data = _valid(PlanInput, request)
        plan = plans.save(
            worksite,
            request.user,
            plans.PlanInput(data["volumes"], data["transporters"], data["facilities"]),
            submit=data["submit"],
        )
        return Response(_detail(plan.pk))


class PlanQueueView(APIView):
    """Os PGRCC que aguardam a decisão do Núcleo, do mais antigo ao mais recente (o
    município: os dos seus municípios)."""

    data_scope = DataScope.STAFF
    permission_classes = [roles.IsMunicipal]

    @extend_schema(
        summary="PGRCC aguardando decisão",
        operation_id="plans_waiting_list",
        responses={200: PlanOutput(many=True), **problems(401, 403)},
    )
    def get(self, request):
        waiting = (
            _plans(request.user).filter(status=PlanStatus.SUBMITTED).order_by("submitted_at", "pk")
        )
        return Response(PlanOutput(waiting, many=True).data)


class PlanDetailView(APIView):
    """Uma versão do PGRCC com o seu histórico (cada passo com os dados daquele momento)."""

    data_scope = DataScope.SIGNED_IN
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        summary="Uma versão do PGRCC e o seu histórico",
        responses={200: PlanDetailOutput, **problems(401, 404)},
    )
    def get(self, request, pk: int):
        return Response(PlanDetailOutput(_plan(request, pk)).data)


def _step(summary: str, c403: str, c409: str, body=None):
    return extend_schema(
        summary=summary,
        request=body,
        responses={
            200: PlanDetailOutput,
            **problems(400, 401, 403, 404, 409, c403=c403, c409=c409),
        },
    )


class PlanSubmitView(APIView):
    """Enviar ao Núcleo a versão em elaboração (ou devolvida) do PGRCC."""

    data_scope = DataScope.SIGNED_IN
    permission_classes = [permissions.IsAuthenticated]

    @_step(
        "Enviar o PGRCC ao Núcleo",
        "Só o gerador da obra envia o seu PGRCC",
        "A versão não está em elaboração",
    )
    def post(self, request, pk: int):
        plans.submit(_plan(request, pk), request.user)
        return Response(_detail(pk))


class _Decision(APIView):
    """A decision of the Núcleo on a submitted plan, with its note (the service named by
    `decide`)."""

    data_scope = DataScope.SIGNED_IN
    permission_classes = [permissions.IsAuthenticated]
    decide = staticmethod(plans.approve)

    def post(self, request, pk: int):
        note = _valid(PlanNoteInput, request)["note"]
        self.decide(_plan(request, pk), request.user, note)
        return Response(_detail(pk))


DECISION = ("Só o Núcleo Permanente de Gestão decide", "O PGRCC não aguarda decisão")


class PlanApproveView(_Decision):
    """Aprovar o PGRCC (o Núcleo, art. 20): passa a ser o plano em vigor da obra, lido pela
    regra NOT_IN_GENERATOR_PLAN; o anterior aprovado fica substituído."""

    @_step("Aprovar o PGRCC", *DECISION, PlanNoteInput)
    def post(self, request, pk: int):
        return super().post(request, pk)


class PlanReturnView(_Decision):
    """Devolver o PGRCC ao gerador para ajustes (o Núcleo), com o parecer (obrigatório)."""

    decide = staticmethod(plans.request_changes)

    @_step("Devolver o PGRCC para ajustes", *DECISION, PlanNoteInput)
    def post(self, request, pk: int):
        return super().post(request, pk)
