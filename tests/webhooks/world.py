"""The webhook tests' world: build_world() plus endpoints of Alfa and of the ATT."""

from __future__ import annotations

from webhooks import services
from webhooks.models import EventType


def alfa_endpoint(world, url: str, events=(EventType.ISSUED,), **kwargs):
    return services.register(world.alfa_user, url, list(events), **kwargs)


def att_endpoint(world, url: str, events=(EventType.RECEIVED,), **kwargs):
    return services.register(world.operator, url, list(events), **kwargs)


def webhook_objects(world) -> dict:
    """The authorization matrix's webhook objects: alfa's endpoint and two of its deliveries
    already sent (one replayed by the page, one by the API)."""
    from django.utils import timezone

    from webhooks.models import Delivery, DeliveryKind, DeliveryStatus

    endpoint = alfa_endpoint(world, "https://erp.alfa.example.com/ctr")
    ctr = world.alfa.ctrs.first()
    now = timezone.now()

    def sent():
        return Delivery.objects.create(
            kind=DeliveryKind.WEBHOOK,
            event_type=EventType.ISSUED,
            endpoint=endpoint,
            ctr=ctr,
            ctr_status=ctr.status,
            occurred_at=now,
            next_attempt_at=now,
            status=DeliveryStatus.DELIVERED,
            attempts=1,
            delivered_at=now,
        ).pk

    return {"webhook": endpoint.pk, "webhook_delivery": sent(), "webhook_delivery_api": sent()}
