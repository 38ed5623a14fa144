from django.urls import path

from . import views

app_name = "maps"

urlpatterns = [
    path("", views.home, name="home"),
    path("onde-descartar/", views.onde_descartar, name="onde-descartar"),
]
