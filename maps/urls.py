from django.templatetags.static import static
from django.urls import path
from django.views.generic import RedirectView

from . import views

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
]
