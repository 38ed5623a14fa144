"""The app as the benchmarks serve it under gunicorn (`bench.urls:application`): the
production URLs plus the bench-only views of bench/views.py (a baseline), never
part of config/urls.py."""

from __future__ import annotations

import os

import django
from django.conf import settings
from django.core.wsgi import get_wsgi_application
from django.urls import include, path

from config.middleware import serve_requests_only
from config.startup import load_everything_and_freeze

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup(set_prefix=False)

from . import views  # noqa: E402 (after django.setup)

urlpatterns = [
    path("bench/pip/", views.point_in_polygon, name="bench-pip"),
    path("", include("config.urls")),
]

settings.ROOT_URLCONF = __name__
application = get_wsgi_application()
load_everything_and_freeze()  # as config/wsgi.py does in production
serve_requests_only()
