"""Printed CTR (PDF + QR), public verification, destination reports, the Certificado de
Destinação Final (PDF + QR, public verification), fee statements."""

from django.urls import path, re_path

from maps.converters import PREFIX

from . import document_views as views

urlpatterns = [
    path("ctrs/<str:number>/pdf/", views.ctr_pdf, name="ctr-pdf"),
    path("verificar/", views.verify_form, name="ctr-verify-form"),
    # The box at a municipality's own address (maps.municipal).
    path(PREFIX + "verificar/", views.verify_form, name="ctr-verify-form"),
    path("verificar/cdf/<str:code>/", views.cdf_verify, name="cdf-verify"),
    path("verificar/<str:number>/", views.verify, name="ctr-verify"),
    path("obras/<int:pk>/relatorio/", views.worksite_report, name="worksite-report"),
    path("obras/<int:pk>/relatorio.pdf", views.worksite_report_pdf, name="worksite-report-pdf"),
    path("obras/<int:pk>/cdf/", views.worksite_cdf, name="worksite-cdf"),
    path("obras/<int:pk>/cdf.pdf", views.worksite_cdf_pdf, name="worksite-cdf-pdf"),
    path("geradores/<int:pk>/cdf/", views.generator_cdf, name="generator-cdf"),
    path("geradores/<int:pk>/cdf.pdf", views.generator_cdf_pdf, name="generator-cdf-pdf"),
    path("taxas/", views.fee_current, name="fee-current"),
    # Any text as the month: a malformed one gets a Portuguese 400 page, not Django's 404.
    re_path(r"^taxas/(?P<period>[^/]+)\.csv$", views.fee_statement_csv, name="fee-statement-csv"),
    re_path(r"^taxas/(?P<period>[^/]+)/$", views.fee_statement, name="fee-statement"),
]
