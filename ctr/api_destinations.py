"""REST API of the final destinations: a worksite's loads, or a generator's over a
period, followed through the chain of custody to where they are now
(ctr/custody/certificates.py), with the addresses of the Certificado de Destinação Final. Same
access as the certificate: the municipality, the generator its own, and a transporter for the
loads it carried (art. 13 p.ú.)."""

from __future__ import annotations

from django.urls import reverse
from django.utils.http import urlencode
from drf_spectacular.utils import extend_schema
from rest_framework import permissions, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api_errors import Problem
from jurisdiction.access import DataScope
from pev_network.api import problems

from . import roles
from .api import PERIOD_PARAMETERS, period
from .custody import certificates
from .models import Generator, Worksite

VOLUME = {"max_digits": 14, "decimal_places": 3}
OUTCOMES = ", ".join(certificates.OUTCOME_ORDER)
FORBIDDEN = (
    "Só o Núcleo, a fiscalização e os transportadores que levaram cargas {of} veem a sua "
    "destinação, além do próprio gerador."
)


class PlaceOutput(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField(help_text="PEV, ATT, RECYCLING ou LANDFILL")


class ShareOutput(serializers.Serializer):
    outcome = serializers.CharField(
        help_text=f"Onde o volume está: {OUTCOMES}. destined (área de reciclagem ou aterro) e "
        "processed (beneficiado na área) concluem a destinação."
    )
    outcome_label = serializers.CharField()
    facility = PlaceOutput(
        source="place",
        help_text="A área onde o volume está (em trânsito: para onde vai; recusado: quem recusou).",
    )
    waste_class = serializers.CharField(help_text="A, B, C, D ou VOLUMOSO")
    volume_m3 = serializers.DecimalField(**VOLUME)


class LineOutput(serializers.Serializer):
    waste_class = serializers.CharField()
    declared_m3 = serializers.DecimalField(**VOLUME)
    received_m3 = serializers.DecimalField(
        **VOLUME,
        allow_null=True,
        help_text="O volume recebido repartido pelas linhas; null enquanto não recebido.",
    )


class LoadOutput(serializers.Serializer):
    number = serializers.CharField()
    transport_date = serializers.DateField()
    status = serializers.CharField(help_text="issued, received ou refused")
    transporter = serializers.CharField()
    first_facility = PlaceOutput(source="first_place")
    conclusive = serializers.BooleanField()
    lines = LineOutput(many=True)
    destinations = ShareOutput(many=True, source="shares")


class ClassTotalOutput(serializers.Serializer):
    waste_class = serializers.CharField()
    declared_m3 = serializers.DecimalField(**VOLUME)
    received_m3 = serializers.DecimalField(**VOLUME)
    destined_m3 = serializers.DecimalField(**VOLUME)
    processed_m3 = serializers.DecimalField(**VOLUME)
    stock_m3 = serializers.DecimalField(**VOLUME)
    transit_m3 = serializers.DecimalField(**VOLUME)
    refused_m3 = serializers.DecimalField(**VOLUME)
    unmatched_m3 = serializers.DecimalField(**VOLUME)


class SubjectOutput(serializers.Serializer):
    generator_id = serializers.IntegerField()
    generator_name = serializers.CharField()
    generator_document = serializers.CharField()
    worksite_id = serializers.IntegerField(allow_null=True)
    address = serializers.CharField()
    date_from = serializers.DateField(allow_null=True)
    date_to = serializers.DateField(allow_null=True)
    transporter_id = serializers.IntegerField(
        allow_null=True,
        help_text="Preenchido quando a resposta cobre só os CTRs deste transportador (o "
        "transportador vê as cargas que levou).",
    )


class CertificateLinks(serializers.Serializer):
    html = serializers.URLField(help_text="O certificado (página; emite-o, com o seu código).")
    pdf = serializers.URLField(help_text="O certificado em PDF, com o QR code da verificação.")


class DestinationsOutput(serializers.Serializer):
    subject = SubjectOutput()
    conclusive = serializers.BooleanField(
        help_text="Todo o volume chegou a uma destinação final ou foi beneficiado na área."
    )
    statement = serializers.CharField(help_text="A conclusão em português, com os motivos.")
    reasons = serializers.ListField(
        child=serializers.CharField(), help_text="Por que não é conclusivo (vazio se é)."
    )
    ctrs = LoadOutput(many=True, source="loads")
    destinations = ShareOutput(many=True, help_text="O volume por situação, área e classe.")
    by_class = ClassTotalOutput(many=True)
    cancelled_count = serializers.IntegerField(help_text="CTRs cancelados, fora das contas.")
    certificate = CertificateLinks()


def _answer(request, cdf: certificates.Certificate, page: str, pdf: str) -> Response:
    body = {
        "subject": cdf.subject,
        "conclusive": cdf.conclusive,
        "statement": cdf.statement,
        "reasons": [] if cdf.conclusive else cdf.reasons,
        "loads": cdf.loads,
        "destinations": cdf.destinations,
        "by_class": cdf.by_class,
        "cancelled_count": cdf.cancelled_count,
        "certificate": {
            "html": request.build_absolute_uri(page),
            "pdf": request.build_absolute_uri(pdf),
        },
    }
    return Response(DestinationsOutput(body).data)


class WorksiteDestinationsView(APIView):
    """Onde estão os resíduos da obra (Lei 3.978/2007 art. 9 p.ú. II): cada CTR seguido pelas
    ATTs e PEVs até a destinação final, o volume por situação, área e classe, e se a
    destinação é conclusiva (e por quê não). O certificado (CDF) está em `certificate`."""

    permission_classes = [permissions.IsAuthenticated]
    data_scope = DataScope.SIGNED_IN

    @extend_schema(
        summary="Destinação final dos resíduos de uma obra",
        responses={
            200: DestinationsOutput,
            **problems(
                401, 403, 404, c403="Acesso negado: só o município, o gerador e os transportadores"
            ),
        },
    )
    def get(self, request, pk: int):
        worksite = Worksite.objects.select_related("generator").filter(pk=pk).first()
        if worksite is None:
            raise Problem(404, "Obra não encontrada.")
        scope = certificates.for_user(request.user, certificates.Scope.of_worksite(worksite))
        if scope is None:
            # Another municipality's worksite does not exist for its staff.
            if roles.is_municipal(request.user):
                raise Problem(404, "Obra não encontrada.")
            raise Problem(403, FORBIDDEN.format(of="da obra"))
        return _answer(
            request,
            certificates.build(scope),
            reverse("worksite-cdf", args=[pk]),
            reverse("worksite-cdf-pdf", args=[pk]),
        )


class GeneratorDestinationsView(APIView):
    """Onde estão os resíduos de um gerador transportados no período (todas as suas obras),
    como na obra."""

    permission_classes = [permissions.IsAuthenticated]
    data_scope = DataScope.SIGNED_IN

    @extend_schema(
        summary="Destinação final dos resíduos de um gerador no período",
        parameters=PERIOD_PARAMETERS,
        responses={
            200: DestinationsOutput,
            **problems(
                400,
                401,
                403,
                404,
                c403="Acesso negado: só o município, o gerador e os transportadores",
            ),
        },
    )
    def get(self, request, pk: int):
        date_from, date_to = period(request.query_params)
        generator = Generator.objects.filter(pk=pk).first()
        if generator is None:
            raise Problem(404, "Gerador não encontrado.")
        scope = certificates.for_user(
            request.user, certificates.Scope(generator, None, date_from, date_to)
        )
        if scope is None:
            if roles.is_municipal(request.user):
                raise Problem(404, "Gerador não encontrado.")
            raise Problem(403, FORBIDDEN.format(of="do gerador no período"))
        days = {"date_from": date_from, "date_to": date_to}
        query = urlencode({name: day.isoformat() for name, day in days.items() if day})
        query = f"?{query}" if query else ""
        return _answer(
            request,
            certificates.build(scope),
            reverse("generator-cdf", args=[pk]) + query,
            reverse("generator-cdf-pdf", args=[pk]) + query,
        )
