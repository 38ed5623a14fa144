"""When the worker and the scheduler were last seen (for /readyz and the containers'
healthchecks). Platform-level: process names and times, nothing of any municipality."""

from __future__ import annotations

import datetime

from django.db.models import Max

from .models import Heartbeat

ROLES = ("worker", "scheduler")


def last_seen() -> dict[str, datetime.datetime | None]:
    """{"worker": the latest heartbeat of any worker process or None, "scheduler": same}."""
    seen = dict(
        Heartbeat.objects.filter(role__in=ROLES)
        .values("role")
        .annotate(last=Max("last_seen"))
        .values_list("role", "last")
    )
    return {role: seen.get(role) for role in ROLES}
