"""The app as the benchmarks serve it under gunicorn (`bench.urls:application`): the
production URLs plus one bench-only baseline view, never part of config/urls.py.

`GET /bench/pip/?lon=…&lat=…`: one PostGIS point-in-polygon lookup (the municipality under a
point, pev_network.services.municipality_id_at), as JSON; the floor that P2 compares the CTR
issue against, in the same server, through the same middleware.
"""

from __future__ import annotations

import os

import django
from django.conf import settings
from django.contrib.gis.geos import Point
from django.core.wsgi import get_wsgi_application
from django.http import JsonResponse
from django.urls import include, path
from django.views.decorators.http import require_safe

from config.startup import load_everything_and_freeze

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup(set_prefix=False)


@require_safe
def point_in_polygon(request):
    from pev_network.services import municipality_id_at

    try:
        point = Point(float(request.GET["lon"]), float(request.GET["lat"]), srid=4326)
    except (KeyError, ValueError):
        return JsonResponse({"detail": "lon e lat"}, status=400)
    return JsonResponse({"municipality": municipality_id_at(point)})


urlpatterns = [
    path("bench/pip/", point_in_polygon, name="bench-pip"),
    path("", include("config.urls")),
]

settings.ROOT_URLCONF = __name__
application = get_wsgi_application()
load_everything_and_freeze()  # as config/wsgi.py does in production
