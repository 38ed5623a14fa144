"""The webhooks' pages (pt-BR paths), for transporters and facility operators alike."""

from django.urls import path

from . import views

app_name = "webhooks"

urlpatterns = [
    path("integracoes/webhooks/", views.endpoint_list, name="list"),
    path("integracoes/webhooks/<int:pk>/", views.endpoint_detail, name="detail"),
    path("integracoes/webhooks/<int:pk>/segredo/", views.endpoint_rotate, name="rotate"),
    path("integracoes/webhooks/<int:pk>/reativar/", views.endpoint_enable, name="enable"),
    path("integracoes/webhooks/<int:pk>/desativar/", views.endpoint_disable, name="disable"),
    path(
        "integracoes/webhooks/entregas/<int:pk>/reenviar/",
        views.delivery_replay,
        name="replay",
    ),
]
