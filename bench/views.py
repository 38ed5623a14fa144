"""The bench-only views that bench/urls.py serves beside the production URLs (never part of
config/urls.py). Here, apart from the URLs, so that a test can route them without importing
bench/urls.py, which replaces the process's ROOT_URLCONF.

`GET /bench/pip/?lon=…&lat=…`: one PostGIS point-in-polygon lookup (the municipality under a
point, pev_network.services.municipality_id_at), as JSON; the floor that P2 compares the CTR
issue against, in the same server, through the same middleware.
"""

from __future__ import annotations

from django.contrib.gis.geos import Point
from django.http import JsonResponse
from django.views.decorators.http import require_safe


@require_safe
def point_in_polygon(request):
    from pev_network.services import municipality_id_at

    try:
        point = Point(float(request.GET["lon"]), float(request.GET["lat"]), srid=4326)
    except (KeyError, ValueError):
        return JsonResponse({"detail": "lon e lat"}, status=400)
    return JsonResponse({"municipality": municipality_id_at(point)})
