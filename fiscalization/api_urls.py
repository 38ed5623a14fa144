"""API of fiscalization. The analysis routes come before the router's, so that
`dumping-reports/hotspots/` is not taken for a report id."""

from django.urls import include, path

from .api import router
from .api_analysis import urlpatterns as analysis_urlpatterns

urlpatterns = [
    *analysis_urlpatterns,
    path("", include(router.urls)),
]
