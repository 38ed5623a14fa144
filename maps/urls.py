from django.urls import path

from . import nucleo_views, views

app_name = "maps"

urlpatterns = [
    path("", views.home, name="home"),
    path("onde-descartar/", views.onde_descartar, name="onde-descartar"),
    path("nucleo/mapa/", nucleo_views.nucleo_map, name="nucleo-mapa"),
]
