"""Inspectors' pages of the enforcement procedure (art. 21-36): /fiscalizacao/processos/…"""

from django.urls import path

from . import enforcement_views as views

app_name = "enforcement"

urlpatterns = [
    path("fiscalizacao/processos/", views.case_list, name="case-list"),
    path("fiscalizacao/processos/novo/", views.case_new, name="case-new"),
    path(
        "fiscalizacao/processos/geradores/",
        views.generator_suggestions,
        name="generator-suggestions",
    ),
    path("fiscalizacao/processos/<int:pk>/", views.case_detail, name="case-detail"),
    path("fiscalizacao/processos/<int:pk>/notificar/", views.notice_new, name="notice-new"),
    path("fiscalizacao/processos/<int:pk>/auto/", views.record_new, name="record-new"),
    path(
        "fiscalizacao/notificacoes/<int:pk>/entrega/",
        views.notice_delivery,
        name="notice-delivery",
    ),
    path(
        "fiscalizacao/notificacoes/<int:pk>/reparacao/",
        views.notice_repaired,
        name="notice-repaired",
    ),
    path("fiscalizacao/notificacoes/<int:pk>/pdf/", views.notice_pdf, name="notice-pdf"),
    path("fiscalizacao/autos/<int:pk>/entrega/", views.record_delivery, name="record-delivery"),
    path("fiscalizacao/autos/<int:pk>/recurso/", views.appeal_new, name="appeal-new"),
    path("fiscalizacao/autos/<int:pk>/decisao/", views.appeal_decision, name="appeal-decision"),
    path("fiscalizacao/autos/<int:pk>/pagamento/", views.payment, name="payment"),
    path("fiscalizacao/autos/<int:pk>/divida-ativa/", views.divida_ativa, name="divida-ativa"),
    path("fiscalizacao/autos/<int:pk>/pdf/", views.record_pdf, name="record-pdf"),
    path(
        "fiscalizacao/autos/<int:pk>/penalidade/<slug:kind>/",
        views.penalty_new,
        name="penalty-new",
    ),
    path(
        "fiscalizacao/penalidades/<int:pk>/descumprimento/",
        views.embargo_breach,
        name="embargo-breach",
    ),
    path("fiscalizacao/penalidades/<int:pk>/custos/", views.seizure_costs, name="seizure-costs"),
    path(
        "fiscalizacao/penalidades/<int:pk>/liberacao/",
        views.seizure_release,
        name="seizure-release",
    ),
    path(
        "fiscalizacao/penalidades/<int:pk>/levantamento/",
        views.penalty_lift,
        name="penalty-lift",
    ),
]
