from django.templatetags.static import static
from django.urls import path
from django.views.generic import RedirectView

from . import views
from .converters import PREFIX

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
    # A municipality's public pages at its own address (maps.municipal); the
    # same names, reversed with `ibge=`.
    path("m/", views.choose_municipality, name="choose-municipality"),
    path(PREFIX, views.home, name="home"),
    path(PREFIX + "onde-descartar/", views.onde_descartar, name="onde-descartar"),
]
