"""The outbox's health: a readiness check (/readyz, config/health.py) and its depth and age for
/metrics (config/metrics.py). Both read the partial index of pending rows by due time (a handful
of rows when the worker keeps up); both are platform-level: counts and ages, never a
recipient, a URL or a municipality's data. Registered in WebhooksConfig.ready()."""

from __future__ import annotations

import datetime

from django.conf import settings
from django.db.models import Count, Min
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily

from config.health import Result

from .models import Delivery, DeliveryKind, DeliveryStatus


def check_outbox() -> Result:
    """The outbox moves: no pending delivery has been due for longer than
    CTR_READY_OUTBOX_STUCK_MINUTES (the worker is down or stuck). A delivery waiting for its
    next retry (backoff) is not late."""
    limit = datetime.timedelta(minutes=settings.CTR_READY_OUTBOX_STUCK_MINUTES)
    now = timezone.now()
    oldest = (
        Delivery.objects.filter(status=DeliveryStatus.PENDING, next_attempt_at__lte=now)
        .order_by("next_attempt_at")
        .values_list("next_attempt_at", flat=True)
        .first()
    )
    late = int((now - oldest).total_seconds()) if oldest else 0
    data = {"atraso_segundos": late, "limite_segundos": int(limit.total_seconds())}
    if oldest is not None and now - oldest > limit:
        return Result(False, "A fila de envios (webhooks e e-mails) está parada.", data)
    return Result(True, data=data)


def outbox_families():
    """Depth of the outbox by kind, and the age of its oldest pending row (0 when empty)."""
    depth = GaugeMetricFamily(
        "ctr_outbox_pending", "Entregas aguardando envio (webhooks e e-mails).", labels=["kind"]
    )
    age = GaugeMetricFamily(
        "ctr_outbox_oldest_pending_age_seconds",
        "Idade da entrega pendente mais antiga, em segundos (0 com a fila vazia).",
    )
    rows = (
        Delivery.objects.filter(status=DeliveryStatus.PENDING)
        .order_by()
        .values("kind")
        .annotate(n=Count("pk"), oldest=Min("created_at"))
    )
    counts = dict.fromkeys(DeliveryKind.values, 0)
    oldest = None
    for row in rows:
        counts[row["kind"]] = row["n"]
        oldest = row["oldest"] if oldest is None else min(oldest, row["oldest"])
    for kind, n in counts.items():
        depth.add_metric([kind], n)
    age.add_metric([], (timezone.now() - oldest).total_seconds() if oldest else 0)
    return [depth, age]
