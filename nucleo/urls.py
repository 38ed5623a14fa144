"""The Núcleo's pages, in the app's own namespace (`nucleo:painel` and its siblings); the root
URLconf wires them, as it wires every app."""

from django.urls import path

from . import views, worksite_views

app_name = "nucleo"

urlpatterns = [
    path("nucleo/", views.nucleo_dashboard, name="painel"),
    path("nucleo/mapa/", views.nucleo_map, name="mapa"),
    path("nucleo/exportar/", views.nucleo_exports, name="exportar"),
    path(
        "nucleo/exportar/<str:name>",
        views.nucleo_export_file,
        name="exportar-arquivo",
    ),
    # The worksites, their alerts and their volumes.
    path("nucleo/obras/", worksite_views.worksite_list, name="obras"),
    path("nucleo/obras/<int:pk>/", worksite_views.worksite_page, name="obra"),
]
