"""API of hotspots, suspects and roadside checks (Núcleo and inspectors only).

- GET /api/v1/dumping-reports/hotspots/?eps_m=&min_points=&since=&until=&municipality=&bbox=
- GET /api/v1/dumping-reports/{id}/suspects/?window_days=&radius_km=
  (&hotspot=true&eps_m=&min_points=&since=: the suspects of the report's hotspot instead)
- GET /api/v1/roadside/?plate=ABC1D23

Placed before the reports router (api_urls), so that `hotspots` is not taken for an id.

Each within the user's municipalities: the hotspots and suspects of their reports
and CTRs, another municipality's report is a 404; the roadside check lists the open CTRs the
user sees, and counts those of other municipalities.
"""

from __future__ import annotations

import datetime

from django.core.exceptions import ValidationError as DjangoValidationError
from django.shortcuts import get_object_or_404
from django.urls import path
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api_errors import InvalidParameter, Problem
from config.api_params import parse_bbox, parse_date, parse_float, parse_int, required
from ctr.roles import IsMunicipal
from jurisdiction.access import DataScope
from jurisdiction.scope import jurisdiction_of
from pev_network.api import municipality_id_of, problems

from . import hotspots, roadside, suspects
from .models import DumpingReport

MAX_SINCE_DAYS = 5 * 365
TRUE = {"1", "true", "sim", "yes", "on"}
FALSE = {"0", "false", "nao", "não", "no", "off", ""}


def _opt(params, name: str) -> str | None:
    value = params.get(name)
    return None if value is None or not value.strip() else value.strip()


def parse_hotspot_query(params, report_id: int | None = None, user=None) -> hotspots.HotspotQuery:
    """eps_m, min_points, since, until, municipality (IBGE), bbox and limit, all optional;
    within `user`'s municipalities (another asked for: none)."""
    eps = _opt(params, "eps_m")
    min_points = _opt(params, "min_points")
    since = _opt(params, "since")
    until = _opt(params, "until")
    ibge = _opt(params, "municipality")
    bbox = _opt(params, "bbox")
    limit = _opt(params, "limit")
    today = timezone.localdate()
    since_day = parse_date("since", since) if since else None
    until_day = parse_date("until", until) if until else None
    if since_day and since_day < today - datetime.timedelta(days=MAX_SINCE_DAYS):
        raise InvalidParameter(
            "since", f"Use uma data dos últimos {MAX_SINCE_DAYS // 365} anos (a partir de "
            f"{today - datetime.timedelta(days=MAX_SINCE_DAYS):%Y-%m-%d})."
        )  # fmt: skip
    if since_day and until_day and until_day < since_day:
        raise InvalidParameter("until", "A data final é anterior à inicial (since).")
    municipality_id = municipality_id_of(ibge)
    return hotspots.HotspotQuery(
        eps_m=parse_float("eps_m", eps, 1, 5000) if eps else hotspots.DEFAULT_EPS_M,
        min_points=parse_int("min_points", min_points, 2, 1000)
        if min_points
        else hotspots.DEFAULT_MIN_POINTS,
        since=since_day,
        until=until_day,
        municipality_id=municipality_id,
        municipality_ids=jurisdiction_of(user).readable_ids if user is not None else None,
        bbox=parse_bbox("bbox", bbox) if bbox else None,
        limit=parse_int("limit", limit, 1, 5000) if limit else hotspots.DEFAULT_LIMIT,
        report_id=report_id,
    )


def run_hotspots(query: hotspots.HotspotQuery) -> dict:
    try:
        return hotspots.hotspots_geojson(query)
    except hotspots.TooCostly as exc:
        raise Problem(503, str(exc), code="too_costly") from None


HOTSPOT_PARAMETERS = [
    OpenApiParameter("eps_m", OpenApiTypes.NUMBER, description="Raio do agrupamento, em metros: "
                     "a distância máxima de uma denúncia a outra do mesmo ponto crítico "
                     f"(1 a 5000; padrão {hotspots.DEFAULT_EPS_M:g})."),
    OpenApiParameter("min_points", OpenApiTypes.INT, description="Denúncias mínimas por ponto "
                     f"crítico (2 a 1000; padrão {hotspots.DEFAULT_MIN_POINTS})."),
    OpenApiParameter("since", OpenApiTypes.DATE, description="Denúncias recebidas a partir de "
                     f"(padrão: {hotspots.DEFAULT_DAYS} dias atrás)."),
    OpenApiParameter("until", OpenApiTypes.DATE, description="... até esta data (inclusive)."),
]  # fmt: skip


HOTSPOTS_SCHEMA = {
    "type": "object",
    "description": "FeatureCollection dos pontos críticos (polígonos), com os parâmetros usados",
    "required": ["type", "features"],
    "properties": {
        "type": {"type": "string", "enum": ["FeatureCollection"]},
        "features": {"type": "array", "items": {"type": "object"}},
    },
}


class HotspotsView(APIView):
    data_scope = DataScope.STAFF
    permission_classes = [IsMunicipal]

    @extend_schema(
        summary="Pontos críticos de descarte irregular (denúncias próximas agrupadas)",
        parameters=[
            *HOTSPOT_PARAMETERS,
            OpenApiParameter("municipality", str, description="Código IBGE do município."),
            OpenApiParameter(
                "bbox",
                str,
                description="minlon,minlat,maxlon,maxlat (WGS 84): "
                "pontos críticos cujo polígono cruza a caixa.",
            ),  # fmt: skip
            OpenApiParameter("limit", OpenApiTypes.INT, description="Máximo de pontos (1 a 5000)."),
        ],
        responses={200: HOTSPOTS_SCHEMA, **problems(400, 401, 403, 503)},
    )
    def get(self, request):
        return Response(run_hotspots(parse_hotspot_query(request.query_params, user=request.user)))


def report_summary(report: DumpingReport) -> dict:
    return {
        "id": report.pk,
        "protocol": report.protocol,
        "created_at": report.created_at.isoformat(),
        "status": report.status,
        "category": report.category,
        "location": {"type": "Point", "coordinates": list(report.location.coords)},
        "municipality": report.municipality.ibge_code,
    }


def parse_bool(name: str, raw: str | None) -> bool:
    value = (raw or "").strip().lower()
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise InvalidParameter(name, f"'{raw}' não é verdadeiro nem falso: use true ou false.")


def parse_suspect_params(params) -> tuple[int, float]:
    window = _opt(params, "window_days")
    radius = _opt(params, "radius_km")
    return (
        parse_int("window_days", window, 1, 90) if window else suspects.DEFAULT_WINDOW_DAYS,
        parse_float("radius_km", radius, 0.1, 50) if radius else suspects.DEFAULT_RADIUS_KM,
    )


def suspects_of(
    report: DumpingReport, params, user
) -> tuple[suspects.Suspects, hotspots.Hotspot | None]:
    """The suspects of the report, or of its hotspot with ?hotspot=true (404 when the report
    is in no hotspot with those parameters): the CTRs `user` sees."""
    window_days, radius_km = parse_suspect_params(params)
    hotspot = None
    if parse_bool("hotspot", params.get("hotspot")):
        query = parse_hotspot_query(params, report_id=report.pk)
        try:
            hotspot = hotspots.hotspot_of_report(report, query)
        except hotspots.TooCostly as exc:
            raise Problem(503, str(exc), code="too_costly") from None
        if hotspot is None:
            raise Problem(
                404,
                f"A denúncia {report.protocol} não faz parte de nenhum ponto crítico com "
                f"esses parâmetros (raio {query.eps_m:g} m, mínimo {query.min_points} denúncias).",
                code="not_in_hotspot",
            )
        spot = suspects.Spot.of_hotspot(hotspot)
    else:
        spot = suspects.Spot.of_report(report)
    j = jurisdiction_of(user)
    # The CTRs the user sees; the transporters' licences in its current municipality (art. 13).
    found = suspects.find_suspects(spot, window_days, radius_km, j.readable_ids, j.current_id)
    return found, hotspot


class SuspectsView(APIView):
    data_scope = DataScope.STAFF
    permission_classes = [IsMunicipal]

    @extend_schema(
        summary="CTRs suspeitos de uma denúncia (ou do seu ponto crítico)",
        parameters=[
            OpenApiParameter("window_days", OpenApiTypes.INT, description="Dias antes da "
                             "denúncia (1 a 90; padrão 7)."),
            OpenApiParameter("radius_km", OpenApiTypes.NUMBER, description="Raio em km da "
                             "origem ao ponto (0,1 a 50; padrão 3)."),
            OpenApiParameter("hotspot", OpenApiTypes.BOOL, description="Suspeitos do ponto "
                             "crítico que contém a denúncia (com eps_m, min_points, since)."),
            *HOTSPOT_PARAMETERS,
        ],
        responses={200: OpenApiTypes.OBJECT, **problems(
            400, 401, 403, 404, 503,
            c404="Não encontrado: a denúncia não existe, ou não está em ponto crítico "
                 "(com hotspot=true)",
        )},
    )  # fmt: skip
    def get(self, request, pk: int):
        report = get_object_or_404(
            DumpingReport.objects.visible_to(request.user).select_related("municipality"), pk=pk
        )
        found, hotspot = suspects_of(report, request.query_params, request.user)
        return Response(
            {
                "report": report_summary(report),
                "hotspot": hotspot.feature() if hotspot else None,
                **found.as_dict(),
            }
        )


class RoadsideView(APIView):
    data_scope = DataScope.STAFF
    permission_classes = [IsMunicipal]

    @extend_schema(
        summary="Abordagem de veículo: situação do transportador e CTRs abertos, pela placa",
        parameters=[OpenApiParameter("plate", str, required=True,
                                     description="Placa (ABC1234, ABC-1234 ou ABC1D23).")],
        responses={200: OpenApiTypes.OBJECT, **problems(400, 401, 403)},
    )  # fmt: skip
    def get(self, request):
        raw = required(request.query_params, "plate")
        try:
            answer = roadside.check_plate(raw, user=request.user)
        except DjangoValidationError as exc:
            raise InvalidParameter("plate", " ".join(exc.messages)) from None
        return Response(answer.as_dict())


urlpatterns = [
    path("dumping-reports/hotspots/", HotspotsView.as_view(), name="dumping-report-hotspots"),
    path(
        "dumping-reports/<int:pk>/suspects/",
        SuspectsView.as_view(),
        name="dumping-report-suspects",
    ),
    path("roadside/", RoadsideView.as_view(), name="roadside"),
]
