"""Printed CTR (PDF + QR), public verification, destination reports, fee statements."""

urlpatterns: list = []
