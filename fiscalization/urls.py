"""Web pages of fiscalization: each part in its own module."""

from django.urls import include, path

urlpatterns = [
    path("", include("fiscalization.intake_urls")),
    path("", include("fiscalization.analysis_urls")),
    path("", include("fiscalization.enforcement_urls")),
]
