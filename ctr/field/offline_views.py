"""The transporter's installable web app: its manifest, its service worker
and the offline bundle the phone keeps (ctr/field/offline.py builds it). Thin, like ctr.views."""

from __future__ import annotations

import json

from django.conf import settings
from django.contrib.staticfiles import finders
from django.contrib.staticfiles.storage import staticfiles_storage
from django.http import HttpResponse, JsonResponse
from django.templatetags.static import static
from django.urls import reverse
from django.views.decorators.http import require_safe
from drf_spectacular.utils import extend_schema
from rest_framework import permissions, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

import audit
from config.api_errors import Problem
from jurisdiction.access import DataScope, declare
from pev_network.api import problems

from .. import roles
from . import offline

BRAND = "#14532d"  # --brand of maps/static/maps/ctr.css
PAPER = "#f5f6f3"  # --paper
# The app covers the transporter's pages only: the worker is served from under them, so its
# default scope is /transportador/ (no Service-Worker-Allowed needed, no wider reach).
SCOPE = "/transportador/"


@declare(DataScope.PUBLIC)  # like a static file: no one's data
@require_safe
def manifest(request):
    """The web app manifest (W3C): installs the transporter's pages as an app that opens on
    the issue form. Public like a static file: it holds no one's data."""
    icons = [
        {"src": static("ctr/icons/icon-192.png"), "sizes": "192x192", "type": "image/png"},
        {"src": static("ctr/icons/icon-512.png"), "sizes": "512x512", "type": "image/png"},
        {
            "src": static("ctr/icons/icon-maskable-512.png"),
            "sizes": "512x512",
            "type": "image/png",
            "purpose": "maskable",
        },
    ]
    body = {
        "name": "CTR — Transportador",
        "short_name": "CTR",
        "description": "Emitir CTR da obra, mesmo sem conexão (CTR provisório).",
        "lang": "pt-BR",
        "dir": "ltr",
        "id": SCOPE,
        "start_url": reverse("ctr_web:ctr-new"),
        "scope": SCOPE,
        "display": "standalone",
        "orientation": "portrait",
        "theme_color": BRAND,
        "background_color": PAPER,
        "icons": icons,
    }
    return JsonResponse(
        body,
        content_type="application/manifest+json",
        json_dumps_params={"ensure_ascii": False},
    )


def _worker_source() -> str:
    path = finders.find("ctr/offline/sw.js")
    if path is None:  # collected only (production without the app directories)
        with staticfiles_storage.open("ctr/offline/sw.js") as stored:
            return stored.read().decode()
    with open(path, encoding="utf-8") as source:
        return source.read()


@declare(DataScope.PUBLIC)  # like a static file: no one's data
@require_safe
def service_worker(request):
    """The service worker, from our static file, with the URLs it needs (the bundle, the issue
    form, the offline scripts under their static names). Never cached by the browser's HTTP
    cache, so that a new version reaches the phones on their next visit."""
    config = {
        "scope": SCOPE,
        "static": settings.STATIC_URL,
        "form": reverse("ctr_web:ctr-new"),
        "bundle": reverse("offline-bundle"),
        "precache": [
            static("ctr/offline/queue.js"),
            static("ctr/offline/app.js"),
            static("ctr/offline/offline.css"),
            static("ctr/icons/icon-192.png"),
        ],
    }
    prefix = f"self.CTR_OFFLINE = {json.dumps(config)};\n"
    response = HttpResponse(prefix + _worker_source(), content_type="text/javascript")
    response["Cache-Control"] = "no-cache"
    response["Service-Worker-Allowed"] = SCOPE
    return response


# --- the offline bundle (API) ---------------------------------------------------------------


class BundleVehicle(serializers.Serializer):
    id = serializers.IntegerField()
    plate = serializers.CharField()


class BundleEquipment(serializers.Serializer):
    id = serializers.IntegerField()
    code = serializers.CharField()
    capacity_m3 = serializers.CharField(help_text="Capacidade nominal, ponto decimal.")


class BundleGenerator(serializers.Serializer):
    name = serializers.CharField()
    document = serializers.CharField()


class BundleWorksite(serializers.Serializer):
    id = serializers.IntegerField()
    address = serializers.CharField()
    neighbourhood = serializers.CharField()
    generator = BundleGenerator()
    point = serializers.ListField(child=serializers.FloatField(), help_text="[lon, lat]")
    registered = serializers.BooleanField(help_text="Obra cadastrada pelo gerador.")
    tolerance_m = serializers.FloatField(
        allow_null=True,
        help_text="Tolerância do GPS (m) da regra ORIGIN_OUTSIDE_WORKSITE; nula sem cadastro.",
    )
    area = serializers.ListField(
        child=serializers.ListField(child=serializers.ListField(child=serializers.FloatField())),
        allow_null=True,
        help_text="Polígono da obra cadastrada (anéis de [lon, lat]), ou nulo.",
    )


class BundleFacility(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField()
    kind_label = serializers.CharField()
    point = serializers.ListField(
        child=serializers.FloatField(), help_text="[lon, lat], um ponto dentro da área"
    )


class BundleTransporter(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class BundleOutput(serializers.Serializer):
    generated_at = serializers.DateTimeField()
    transporter = BundleTransporter()
    provisional_sync_max_hours = serializers.IntegerField()
    vehicles = BundleVehicle(many=True)
    equipment = BundleEquipment(many=True)
    worksites = BundleWorksite(many=True)
    facilities = BundleFacility(many=True)


class OfflineBundleView(APIView):
    """Pacote offline do transportador: a frota ativa, as obras recentes (90 dias) com o
    gerador e as áreas licenciadas hoje perto delas (30 km), para o formulário de emissão
    funcionar sem conexão (CTR provisório)."""

    permission_classes = [permissions.IsAuthenticated]
    data_scope = DataScope.SIDE

    @extend_schema(
        responses={
            200: BundleOutput,
            **problems(401, 403, c403="Só usuários de um transportador cadastrado"),
        }
    )
    def get(self, request):
        transporter = roles.transporter_of(request.user)
        if transporter is None:
            raise Problem(403, "Só usuários de um transportador cadastrado têm o pacote offline.")
        data, generators = offline.bundle(transporter)
        for generator in generators:
            audit.record(request, generator, "API: pacote offline")
        response = Response(data)
        # The phone's copy is the service worker's; no shared cache keeps a fleet.
        response["Cache-Control"] = "private, no-cache"
        return response
