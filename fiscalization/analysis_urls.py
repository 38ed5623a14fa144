"""Pages of hotspots, suspects and roadside checks (Núcleo and inspectors)."""

from django.urls import path

from . import analysis_views

app_name = "fiscalization_analysis"

urlpatterns = [
    path("fiscalizacao/pontos-criticos/", analysis_views.hotspots_page, name="hotspots"),
    path(
        "fiscalizacao/denuncias/<int:pk>/suspeitos/",
        analysis_views.suspects_page,
        name="suspects",
    ),
    path("fiscalizacao/veiculo/", analysis_views.roadside_page, name="roadside"),
]
