"""When the worker and the scheduler were last seen (for /readyz and the containers'
healthchecks). Platform-level: process names and times, nothing of any municipality."""

from __future__ import annotations

import datetime

from django.db.models import Count, Max
from prometheus_client.core import CounterMetricFamily

from .models import Heartbeat, JobRun

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


def runs_families():
    """Job runs by job and outcome for /metrics (config/metrics.py), read from the runs table
    at scrape time: a few dozen rows a day, never deleted, so the counts only grow."""
    runs = CounterMetricFamily(
        "ctr_job_runs",
        "Execuções das tarefas agendadas, por tarefa e situação.",
        labels=["job", "status"],
    )
    rows = JobRun.objects.order_by().values_list("job", "status").annotate(n=Count("pk"))
    for job, status, n in rows:
        runs.add_metric([job, status], n)
    yield runs
