"""Web pages of dumping reports: the citizens' (public) and the inspectors' (pt-BR paths)."""

from django.urls import path

from maps.converters import PREFIX

from . import intake_views as views

app_name = "intake"

urlpatterns = [
    # Citizens, no account needed.
    path("denunciar/", views.report_new, name="new"),
    # A municipality's form at its own address (maps.municipal).
    path(PREFIX + "denunciar/", views.report_new, name="new"),
    path("denunciar/proximas/", views.report_nearby, name="nearby"),
    path("denuncia/", views.report_lookup, name="lookup"),
    path("denuncia/<str:protocol>/", views.report_follow, name="follow"),
    # Núcleo and inspectors.
    path("fiscalizacao/", views.inspect_index, name="inspect"),
    path("fiscalizacao/denuncias/<int:pk>/", views.inspect_report, name="inspect-report"),
    path("fiscalizacao/denuncias/<int:pk>/situacao/", views.inspect_status, name="inspect-status"),
    path("fiscalizacao/denuncias/<int:pk>/mesclar/", views.inspect_merge, name="inspect-merge"),
    path(
        "fiscalizacao/denuncias/<int:pk>/categoria/",
        views.inspect_category,
        name="inspect-category",
    ),
    path("fiscalizacao/fotos/<int:pk>/", views.photo, name="photo"),
]
