"""Printed CTR (PDF + QR), public verification, destination reports, fee statements."""

from django.urls import path, re_path

from . import document_views as views

urlpatterns = [
    path("ctrs/<str:number>/pdf/", views.ctr_pdf, name="ctr-pdf"),
    path("verificar/", views.verify_form, name="ctr-verify-form"),
    path("verificar/<str:number>/", views.verify, name="ctr-verify"),
    path("obras/<int:pk>/relatorio/", views.worksite_report, name="worksite-report"),
    path("obras/<int:pk>/relatorio.pdf", views.worksite_report_pdf, name="worksite-report-pdf"),
    path("taxas/", views.fee_current, name="fee-current"),
    # Any text as the month: a malformed one gets a Portuguese 400 page, not Django's 404.
    re_path(r"^taxas/(?P<period>[^/]+)\.csv$", views.fee_statement_csv, name="fee-statement-csv"),
    re_path(r"^taxas/(?P<period>[^/]+)/$", views.fee_statement, name="fee-statement"),
]
