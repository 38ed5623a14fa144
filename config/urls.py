from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from config import health, metrics

admin.site.site_header = "CTR — Controle de Transporte de Resíduos"
admin.site.site_title = "CTR — administração"
admin.site.index_title = "Cadastros"

urlpatterns = [
    # Probes and metrics (docs/operations.md, "Saúde, métricas e logs"): platform-level.
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", metrics.metrics_view, name="metrics"),
    path("admin/", admin.site.urls),
    path("api/v1/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/v1/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/v1/", include("pev_network.api_urls")),
    path("api/v1/", include("ctr.api_urls")),
    path("api/v1/", include("fiscalization.api_urls")),
    path("api/v1/", include("generators.api_urls")),
    path("api/v1/", include("webhooks.api_urls")),
    path("ogc/", include("ogc.urls")),
    path("", include("ctr.urls")),
    path("", include("ctr.document_urls")),
    path("", include("fiscalization.urls")),
    path("", include("generators.urls")),
    path("", include("webhooks.urls")),
    path("", include("jurisdiction.urls")),
    path("", include("maps.urls")),
    path("", include("nucleo.urls")),
]

handler404 = "config.views.not_found"
