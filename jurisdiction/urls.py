from django.urls import path

from . import views

app_name = "jurisdiction"

urlpatterns = [
    path("municipio/", views.choose_municipality, name="choose"),
]
