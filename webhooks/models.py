"""Events out: the endpoints a transporter or a facility registers, and the
outbox of deliveries (webhooks and e-mails) written in the transaction of each event."""

from __future__ import annotations

import secrets
import uuid

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q
from django.utils import timezone

from ctr import lifecycle
from ctr.models import CTR, Transporter, membership_of
from jurisdiction.scope import ScopedQuerySet
from pev_network.models import ReceivingFacility

# Events about a subject other than a CTR (a report, a facility, …): the subject's app names
# them, as ctr.lifecycle names the CTR's, and lists them here; webhooks.outbox.enqueue writes
# them. None yet (docs/architecture.md, "Onde acrescentar").
SUBJECT_EVENTS: list[lifecycle.Event] = []


def event_types() -> list[lifecycle.Event]:
    """What an endpoint may subscribe to, as the tables stand: the CTR's actions' events, then
    the other subjects'."""
    return [*lifecycle.events(), *SUBJECT_EVENTS]


# The choices of the endpoints' events, a member per event named after it ("ctr.received" →
# RECEIVED); an event added later is accepted by the services, which read event_types().
EventType = models.TextChoices(
    "EventType",
    [(event.name.split(".", 1)[1].upper(), (event.name, event.label)) for event in event_types()],
)


def new_secret() -> str:
    # 32 random bytes: what the receiver keys its HMAC with (shown once, then only used).
    return "whsec_" + secrets.token_hex(32)


class EndpointQuerySet(ScopedQuerySet):
    def municipal_q(self, ids) -> Q:
        """The endpoints of the municipality's transporters and facilities."""
        ids = list(ids)
        return Q(transporter_id__in=Transporter.objects.in_municipalities(ids).values("pk")) | Q(
            facility__municipality_id__in=ids
        )

    def side_q(self, user) -> Q | None:
        member = membership_of(user)
        if member is None:
            return None
        if member.transporter_id:
            return Q(transporter_id=member.transporter_id)
        if member.facility_id:
            return Q(facility_id=member.facility_id)
        return None


class Endpoint(models.Model):
    """A URL of a transporter's or a facility's own system that hears the events of its CTRs.
    The secret is kept as is (not hashed): every delivery is signed with it."""

    transporter = models.ForeignKey(
        Transporter,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="webhook_endpoints",
        verbose_name="transportador",
    )
    facility = models.ForeignKey(
        ReceivingFacility,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="webhook_endpoints",
        verbose_name="área de recebimento",
    )
    url = models.URLField("endereço (URL)", max_length=500)
    description = models.CharField("descrição", max_length=120, blank=True)
    events = ArrayField(
        models.CharField(max_length=40, choices=EventType.choices), verbose_name="eventos"
    )
    secret = models.CharField("segredo", max_length=80, default=new_secret)
    active = models.BooleanField("ativo", default=True)
    # Why it stopped (a 410 Gone from the receiver, or its owner): shown on its page.
    disabled_at = models.DateTimeField("desativado em", null=True, blank=True)
    disabled_reason = models.CharField("motivo da desativação", max_length=200, blank=True)
    secret_rotated_at = models.DateTimeField("segredo trocado em", null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name="cadastrado por",
    )
    created_at = models.DateTimeField("cadastrado em", default=timezone.now)

    objects = EndpointQuerySet.as_manager()

    class Meta:
        verbose_name = "webhook"
        verbose_name_plural = "webhooks"
        ordering = ["pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(transporter__isnull=True) ^ Q(facility__isnull=True),
                name="webhook_endpoint_one_owner",
            )
        ]
        # The outbox INSERT … SELECT of each event looks endpoints up by owner: active only.
        indexes = [
            models.Index(
                fields=["transporter"], name="webhook_active_transporter", condition=Q(active=True)
            ),
            models.Index(
                fields=["facility"], name="webhook_active_facility", condition=Q(active=True)
            ),
        ]

    def __str__(self) -> str:
        return self.url

    @property
    def owner(self):
        return self.transporter or self.facility

    def event_labels(self) -> list[str]:
        labels = dict(EventType.choices)
        return [labels.get(e, e) for e in self.events]


class DeliveryKind(models.TextChoices):
    WEBHOOK = "webhook", "Webhook"
    EMAIL = "email", "E-mail"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Aguardando envio"
    DELIVERED = "delivered", "Entregue"
    FAILED = "failed", "Falhou"


class DeliveryQuerySet(ScopedQuerySet):
    def municipal_q(self, ids) -> Q:
        """A webhook's, its endpoint's municipalities; an e-mail about a CTR, the CTR's."""
        ids = list(ids)
        return Q(endpoint_id__in=Endpoint.objects.in_municipalities(ids).values("pk")) | Q(
            ctr_id__in=CTR.objects.in_municipalities(ids).values("pk")
        )


class Delivery(models.Model):
    """One message in the outbox: a webhook to one endpoint, or an e-mail to its recipients.
    Written in the transaction of the event it announces (webhooks.outbox, webhooks.emails), sent by
    `manage.py deliver_webhooks` (webhooks.delivery), retried with backoff until delivered or
    out of attempts."""

    kind = models.CharField("tipo", max_length=8, choices=DeliveryKind.choices)
    # The id the receiver de-duplicates on: the same across the retries and replays.
    event_id = models.UUIDField("id do evento", default=uuid.uuid4)
    event_type = models.CharField("evento", max_length=40)
    endpoint = models.ForeignKey(
        Endpoint,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="deliveries",
        verbose_name="webhook",
    )
    # No index: the outbox is read by status and time; a CTR's deliveries are never listed.
    ctr = models.ForeignKey(
        CTR,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="CTR",
        db_index=False,
    )
    ctr_status = models.CharField("situação do CTR no evento", max_length=10, blank=True)
    occurred_at = models.DateTimeField("evento em")
    # E-mail rows: rendered when sent, with config.mail's conventions.
    recipients = ArrayField(
        models.CharField(max_length=254), default=list, blank=True, verbose_name="destinatários"
    )
    subject = models.CharField("assunto", max_length=200, blank=True)
    template = models.CharField("modelo", max_length=120, blank=True)
    context = models.JSONField("contexto", default=dict, blank=True)

    status = models.CharField(
        "situação",
        max_length=10,
        choices=DeliveryStatus.choices,
        default=DeliveryStatus.PENDING,
    )
    attempts = models.PositiveSmallIntegerField("tentativas", default=0)
    next_attempt_at = models.DateTimeField("próxima tentativa em")
    last_attempt_at = models.DateTimeField("última tentativa em", null=True, blank=True)
    delivered_at = models.DateTimeField("entregue em", null=True, blank=True)
    created_at = models.DateTimeField("criada em", default=timezone.now)

    objects = DeliveryQuerySet.as_manager()

    class Meta:
        verbose_name = "entrega"
        verbose_name_plural = "entregas"
        ordering = ["-created_at", "-pk"]
        indexes = [
            # The worker's queue: pending rows by due time, nothing else.
            models.Index(
                fields=["next_attempt_at"],
                name="webhook_delivery_due",
                condition=Q(status="pending"),
            ),
            models.Index(fields=["endpoint", "-created_at"], name="webhook_delivery_endpoint"),
        ]

    def __str__(self) -> str:
        return f"{self.event_type} ({self.get_status_display()})"


class Attempt(models.Model):
    """One try of a delivery: what the receiver answered, or why there was no answer."""

    delivery = models.ForeignKey(
        Delivery, on_delete=models.CASCADE, related_name="attempt_log", verbose_name="entrega"
    )
    number = models.PositiveSmallIntegerField("tentativa")
    at = models.DateTimeField("em")
    duration_ms = models.PositiveIntegerField("duração (ms)")
    response_status = models.PositiveSmallIntegerField("resposta (HTTP)", null=True, blank=True)
    response_body = models.CharField("início da resposta", max_length=1000, blank=True)
    error = models.CharField("erro", max_length=300, blank=True)
    ok = models.BooleanField("entregue")

    class Meta:
        verbose_name = "tentativa de entrega"
        verbose_name_plural = "tentativas de entrega"
        ordering = ["delivery", "number"]

    def __str__(self) -> str:
        return f"tentativa {self.number}"
