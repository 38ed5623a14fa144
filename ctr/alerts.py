"""The alerts on open CTRs: how long each has been open since its transport began, those open
past their municipality's alert hours (OPEN_TOO_LONG), and their findings."""

from __future__ import annotations

import datetime

from django.db.models import F, QuerySet
from django.db.models.expressions import RawSQL
from django.utils import timezone

from pev_network.models import parameters_sql

from . import rules
from .models import CTR, CTRStatus
from .rules import Finding


def open_since_sql(alias: str) -> tuple[str, list]:
    """SQL for when a CTR's transport began: the later of its issue time and the start of its
    transport day (a CTR issued today for next week is not late yet)."""
    return (
        f"GREATEST({alias}.created_at, ({alias}.transport_date::timestamp AT TIME ZONE %s))",
        [timezone.get_current_timezone_name()],
    )


def with_hours_open(queryset: QuerySet, now: datetime.datetime | None = None) -> QuerySet:
    """Annotate `hours_open` (since the transport began) and `alert_hours` (the threshold of
    the municipality's set in force on each CTR's transport date)."""
    now = now or timezone.now()
    table = CTR._meta.db_table
    since_sql, since_params = open_since_sql(table)
    in_force = parameters_sql(f"{table}.municipality_id", f"{table}.transport_date")
    return queryset.annotate(
        hours_open=RawSQL(f"EXTRACT(EPOCH FROM (%s - {since_sql})) / 3600", [now, *since_params]),
        alert_hours=RawSQL(f"(SELECT mp.open_ctr_alert_hours FROM {in_force} mp)", []),
    )


def overdue(queryset: QuerySet, now: datetime.datetime | None = None) -> QuerySet:
    """Issued CTRs open longer than their municipality's alert hours (OPEN_TOO_LONG)."""
    issued = queryset.filter(status=CTRStatus.ISSUED)
    return with_hours_open(issued, now).filter(hours_open__gt=F("alert_hours"))


def open_alerts(queryset: QuerySet, now: datetime.datetime | None = None) -> list[Finding]:
    return [
        finding
        for ctr in overdue(queryset, now)
        for finding in rules.evaluate(
            rules.OpenFacts(ctr.number, float(ctr.hours_open), ctr.alert_hours),
            rules.Stage.MONITORING,
        )
    ]
