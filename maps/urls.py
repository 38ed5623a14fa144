from django.templatetags.static import static
from django.urls import path
from django.views.generic import RedirectView

from . import nucleo_views, views

app_name = "maps"

urlpatterns = [
    path("", views.home, name="home"),
    # Browsers and tools that ask for /favicon.ico without reading the page's <link rel=icon>.
    path(
        "favicon.ico",
        RedirectView.as_view(url=static("maps/favicon.svg"), permanent=True),
        name="favicon",
    ),
    path("onde-descartar/", views.onde_descartar, name="onde-descartar"),
    path("nucleo/", nucleo_views.nucleo_dashboard, name="nucleo-painel"),
    path("nucleo/mapa/", nucleo_views.nucleo_map, name="nucleo-mapa"),
    path("nucleo/exportar/", nucleo_views.nucleo_exports, name="nucleo-exportar"),
    path(
        "nucleo/exportar/<str:name>",
        nucleo_views.nucleo_export_file,
        name="nucleo-exportar-arquivo",
    ),
]
