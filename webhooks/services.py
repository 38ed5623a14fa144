"""Endpoints and deliveries: registering, the secret, switching on and off, the manual replay.
Plain functions, one transaction each, used by the pages, the API and the admin."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Prefetch, QuerySet
from django.utils import timezone

from ctr import roles
from ctr.models import Transporter

from . import targets
from .errors import WebhookError
from .models import (
    Attempt,
    Delivery,
    DeliveryKind,
    DeliveryStatus,
    Endpoint,
    event_types,
    new_secret,
)

# Enough for a production system, a test one and a spare; more is a mistake or abuse.
MAX_ENDPOINTS_PER_OWNER = 10


def owner_of(user):
    """The transporter or the facility a user acts for (their endpoints), or None."""
    return roles.transporter_of(user) or roles.facility_of(user)


def require_owner(user):
    owner = owner_of(user)
    if owner is None:
        raise WebhookError(
            "Só transportadores e operadores de áreas de recebimento cadastram webhooks.",
            "forbidden",
            status=403,
        )
    return owner


def _owner_filter(owner) -> dict:
    return {"transporter": owner} if isinstance(owner, Transporter) else {"facility": owner}


def endpoints_of(user) -> QuerySet:
    owner = owner_of(user)
    if owner is None:
        return Endpoint.objects.none()
    return Endpoint.objects.filter(**_owner_filter(owner))


def deliveries_of(endpoint: Endpoint, limit: int = 50) -> list[Delivery]:
    """The latest deliveries of an endpoint with their attempts, newest first."""
    return list(
        endpoint.deliveries.select_related("ctr")
        .prefetch_related(Prefetch("attempt_log", queryset=Attempt.objects.order_by("number")))
        .order_by("-created_at", "-pk")[:limit]
    )


def _events(events) -> list[str]:
    # The event types as the tables stand: an action added to ctr.lifecycle is heard here.
    chosen = [e.name for e in event_types() if e.name in set(events or ())]
    if not chosen or len(chosen) != len(set(events)):
        raise WebhookError("Escolha ao menos um evento da lista.", "events", "events")
    return chosen


@transaction.atomic
def register(user, url: str, events, description: str = "") -> Endpoint:
    """A new endpoint of the user's transporter or facility; its secret is on the object
    returned (show it once)."""
    owner = require_owner(user)
    targets.check_url(url)
    chosen = _events(events)
    filters = _owner_filter(owner)
    if Endpoint.objects.filter(**filters).count() >= MAX_ENDPOINTS_PER_OWNER:
        raise WebhookError(
            f"Limite de {MAX_ENDPOINTS_PER_OWNER} webhooks por cadastro: desative ou reutilize "
            "um existente.",
            "limit",
        )
    return Endpoint.objects.create(
        **filters,
        url=url.strip(),
        events=chosen,
        description=(description or "").strip(),
        created_by=user,
    )


def _locked(endpoint: Endpoint) -> Endpoint:
    return Endpoint.objects.select_for_update().get(pk=endpoint.pk)


@transaction.atomic
def rotate_secret(endpoint: Endpoint, by) -> Endpoint:
    """A new secret, at once: deliveries from now on are signed with it (show it once)."""
    endpoint = _locked(endpoint)
    endpoint.secret = new_secret()
    endpoint.secret_rotated_at = timezone.now()
    endpoint.save(update_fields=["secret", "secret_rotated_at"])
    return endpoint


@transaction.atomic
def set_active(endpoint: Endpoint, by, active: bool) -> Endpoint:
    """Switch deliveries on or off; rows written while off wait and go out when back on."""
    endpoint = _locked(endpoint)
    endpoint.active = active
    if active:
        endpoint.disabled_at, endpoint.disabled_reason = None, ""
    else:
        endpoint.disabled_at = timezone.now()
        endpoint.disabled_reason = "Desativado pelo cadastro."
    endpoint.save(update_fields=["active", "disabled_at", "disabled_reason"])
    return endpoint


def webhook_deliveries_of(user) -> QuerySet:
    """The webhook deliveries of the user's own endpoints (the ones they may replay)."""
    return Delivery.objects.filter(
        kind=DeliveryKind.WEBHOOK, endpoint__in=endpoints_of(user)
    ).select_related("endpoint", "ctr")


@transaction.atomic
def replay(delivery: Delivery, by, now=None) -> Delivery:
    """Queue a delivery again, now, with the same event id and a fresh budget of attempts
    (its past attempts stay listed)."""
    delivery = Delivery.objects.select_for_update().get(pk=delivery.pk)
    if delivery.status == DeliveryStatus.PENDING and delivery.attempts == 0:
        raise WebhookError("Esta entrega já está na fila.", "queued", status=409)
    delivery.status = DeliveryStatus.PENDING
    delivery.attempts = 0
    delivery.next_attempt_at = now or timezone.now()
    delivery.delivered_at = None
    delivery.save(update_fields=["status", "attempts", "next_attempt_at", "delivered_at"])
    return delivery
