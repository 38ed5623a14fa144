"""The Núcleo's pages. Their names stay in the `maps` namespace (config/urls.py), where they
were before the dashboard became an app of its own: templates and redirects reverse
`maps:nucleo-painel` and its siblings."""

from django.urls import path

from . import views, worksite_views

urlpatterns = [
    path("nucleo/", views.nucleo_dashboard, name="nucleo-painel"),
    path("nucleo/mapa/", views.nucleo_map, name="nucleo-mapa"),
    path("nucleo/exportar/", views.nucleo_exports, name="nucleo-exportar"),
    path(
        "nucleo/exportar/<str:name>",
        views.nucleo_export_file,
        name="nucleo-exportar-arquivo",
    ),
    # The worksites, their alerts and their volumes (issue 15 point 7).
    path("nucleo/obras/", worksite_views.worksite_list, name="nucleo-obras"),
    path("nucleo/obras/<int:pk>/", worksite_views.worksite_page, name="nucleo-obra"),
]
