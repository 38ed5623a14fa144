"""The suspect worksites in the API, for the Núcleo and the fiscalização:

- GET /api/v1/suspect-worksites/?municipality=<IBGE>&reason=<overdue|low_volume|idle|suspect>

Its own path, not under /api/v1/worksites/ (the generator's worksites live there). The
worksites of the user's municipalities; `municipality` narrows to one of them
(another municipality's: none)."""

from __future__ import annotations

from django.db.models.expressions import RawSQL
from django.urls import path, reverse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.pagination import PageNumberPagination
from rest_framework.views import APIView

import audit
from config.api_errors import InvalidParameter
from ctr.models import Worksite
from ctr.roles import IsMunicipal
from jurisdiction.access import DataScope
from jurisdiction.scope import jurisdiction_of
from pev_network.api import municipality_id_of, problems

from . import suspects

SUSPECT_ANY = "suspect"
REASONS = [*suspects.Reason.values, SUSPECT_ANY]


class Pages(PageNumberPagination):
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 500


def _reasons(raw: str | None) -> list[str] | None:
    """None (any reason), or the reasons asked for, comma-separated."""
    if raw is None or not raw.strip():
        return None
    wanted = [part.strip() for part in raw.split(",") if part.strip()]
    unknown = [part for part in wanted if part not in REASONS]
    if unknown:
        raise InvalidParameter(
            "reason",
            f"Motivo desconhecido: {', '.join(unknown)}. Use {', '.join(REASONS)}.",
        )
    reasons: list[str] = []
    for part in wanted:
        reasons += suspects.SUSPECT if part == SUSPECT_ANY else [part]
    return reasons


def _item(worksite: Worksite, figures: suspects.WorksiteFigures) -> dict:
    return {
        "id": worksite.pk,
        "address": worksite.address,
        "neighbourhood": worksite.neighbourhood,
        "municipality": worksite.municipality.ibge_code if worksite.municipality else None,
        "permit_number": worksite.permit_number,
        "work_kind": worksite.work_kind or None,
        "built_area_m2": None if worksite.built_area_m2 is None else str(worksite.built_area_m2),
        "generator": {
            "id": worksite.generator_id,
            "name": worksite.generator.name,
            "document": worksite.generator.document,
        },
        "location": {"type": "Point", "coordinates": list(worksite.location.coords)},
        "plan_status": worksite.plan_status,
        "page": reverse("nucleo:obra", args=[worksite.pk]),
        **figures.as_dict(),
    }


ITEM_SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "address": {"type": "string"},
        "municipality": {"type": "string", "nullable": True, "description": "Código IBGE."},
        "generator": {"type": "object"},
        "plan_status": {
            "type": "string",
            "enum": list(suspects.PLAN_STATES) + ["superseded"],
            "description": "Situação da versão mais recente do PGRCC (none: sem PGRCC).",
        },
        "reasons": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "code": {"type": "string", "enum": suspects.Reason.values},
                    "label": {"type": "string"},
                    "text": {"type": "string", "description": "O alerta com os números."},
                },
            },
        },
        "expected_m3": {"type": "string", "nullable": True},
        "expected_to_date_m3": {"type": "string", "nullable": True},
        "transported_m3": {"type": "string"},
        "transported_pct": {"type": "string", "nullable": True},
        "elapsed_pct": {"type": "string", "nullable": True},
        "days_past_end": {"type": "integer", "nullable": True},
        "idle_days": {"type": "integer", "nullable": True},
        "last_load": {"type": "string", "format": "date", "nullable": True},
        "thresholds": {"type": "object"},
    },
}
LINK = {"type": "string", "format": "uri", "nullable": True}
RESPONSE_SCHEMA = {
    "type": "object",
    "required": ["date", "count", "results"],
    "properties": {
        "date": {"type": "string", "format": "date", "description": "O dia da conferência."},
        "count": {"type": "integer"},
        "next": LINK,
        "previous": LINK,
        "results": {"type": "array", "items": ITEM_SCHEMA},
    },
}


def scope_of(user, municipality_id: int | None) -> suspects.Scope:
    """The worksites `user` reads (its municipalities), or those of the one asked for when it
    is one of them (another's: none, as a municipality without worksites)."""
    j = jurisdiction_of(user)
    if municipality_id is not None:
        if not j.reads(municipality_id):
            return suspects.Scope(worksite_ids=())
        return suspects.Scope(municipality_id=municipality_id)
    readable = j.readable_ids
    return suspects.Scope() if readable is None else suspects.Scope(municipality_ids=readable)


class SuspectWorksitesView(APIView):
    data_scope = DataScope.STAFF
    permission_classes = [IsMunicipal]

    @extend_schema(
        summary="Obras suspeitas e grandes geradores sem CTR, com os números de cada alerta",
        parameters=[
            OpenApiParameter("municipality", str, description="Código IBGE do município."),
            OpenApiParameter(
                "reason",
                str,
                description="overdue (além do término previsto), low_volume (transportado "
                "muito abaixo do previsto), idle (grande gerador sem CTR) ou suspect (overdue "
                "ou low_volume); vários separados por vírgula. Padrão: qualquer alerta.",
            ),
            OpenApiParameter("page", OpenApiTypes.INT, description="Página (1, 2, …)."),
            OpenApiParameter(
                "page_size", OpenApiTypes.INT, description="Itens por página (até 500)."
            ),
        ],
        responses={200: RESPONSE_SCHEMA, **problems(400, 401, 403, 404)},
    )
    def get(self, request):
        params = request.query_params
        reasons = _reasons(params.get("reason"))
        municipality_id = municipality_id_of((params.get("municipality") or "").strip())
        today = timezone.localdate()
        scope = scope_of(request.user, municipality_id)
        flagged = (
            Worksite.objects.filter(pk__in=RawSQL(*suspects.suspect_ids_sql(today, reasons, scope)))
            .select_related("generator", "municipality")
            .defer("area", "municipality__boundary")
            .annotate(plan_status=suspects.latest_plan_status())
            .order_by("pk")
        )
        pages = Pages()
        page = pages.paginate_queryset(flagged, request, view=self)
        measured = {
            f.worksite_id: f
            for f in suspects.measure(today, suspects.Scope(worksite_ids=[w.pk for w in page]))
        }
        audit.record(request, None, "API: obras suspeitas")
        response = pages.get_paginated_response([_item(w, measured[w.pk]) for w in page])
        response.data = {"date": today.isoformat(), **response.data}
        return response


urlpatterns = [
    path("suspect-worksites/", SuspectWorksitesView.as_view(), name="suspect-worksites"),
]
