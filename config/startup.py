"""What a long-running server process does once, after Django is set up."""

from __future__ import annotations

import gc

from django.urls import get_resolver


def load_everything_and_freeze() -> None:
    """Import every view now and hide what startup allocated from the garbage collector.

    Django, DRF, the GDAL bindings, folium and matplotlib leave ~250k long-lived objects;
    without this, every full collection (one each few requests) walked them all and added
    130-170 ms to an unlucky request (measured on the CTR list, docs/performance.md, P5).
    Frozen objects are never collected, and they are what they look like: module-level state
    alive as long as the worker."""
    get_resolver().url_patterns  # noqa: B018 - imports every urls.py, view and serializer
    gc.collect()
    gc.freeze()
