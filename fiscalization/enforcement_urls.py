"""Inspectors' pages of the enforcement procedure (art. 21-36): /fiscalizacao/processos/…

A step's page has the route and name its row of the table gives (fiscalization.enforcement.
actions); the penalties share one page, told apart by the slug."""

from django.urls import path

from . import enforcement_views as views
from .enforcement import ACTIONS

app_name = "enforcement"

_step_pages = {action.url: action for action in ACTIONS.values() if action.path}

urlpatterns = [
    path("fiscalizacao/processos/", views.case_list, name="case-list"),
    path("fiscalizacao/processos/novo/", views.case_new, name="case-new"),
    path(
        "fiscalizacao/processos/geradores/",
        views.generator_suggestions,
        name="generator-suggestions",
    ),
    path("fiscalizacao/processos/<int:pk>/", views.case_detail, name="case-detail"),
    # The authority's queue (art. 35); its count: enforcement.records_awaiting_authority.
    path(
        "fiscalizacao/autos/aguardando-autoridade/",
        views.records_awaiting,
        name="records-awaiting",
    ),
    path("fiscalizacao/notificacoes/<int:pk>/pdf/", views.notice_pdf, name="notice-pdf"),
    path("fiscalizacao/autos/<int:pk>/pdf/", views.record_pdf, name="record-pdf"),
    *(
        path(action.path, views.step_view(action), name=url.removeprefix("enforcement:"))
        for url, action in _step_pages.items()
    ),
]
