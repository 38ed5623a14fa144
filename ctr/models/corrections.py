"""Corrections of a received CTR, proposed by one party and decided by the other or by the
Núcleo (ctr/field/corrections.py)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.gis.db import models
from django.db.models import Q
from django.utils import timezone

from jurisdiction.scope import scoped

from .document import CTR


class CorrectionSide(models.TextChoices):
    """Who proposes and who decides a correction: the two parties of the reception, and the
    Núcleo when they disagree."""

    TRANSPORTER = "transporter", "transportador"
    FACILITY = "facility", "área de destino"
    # Not "nucleo": that is also a username shown on pages (tests: no code shown as text).
    NUCLEO = "management", "Núcleo Permanente de Gestão"


class CorrectionStatus(models.TextChoices):
    PROPOSED = "proposed", "Proposta"
    APPROVED = "approved", "Aprovada"
    REFUSED = "refused", "Recusada"
    ESCALATED = "escalated", "Enviada ao Núcleo"
    DECIDED = "decided", "Decidida pelo Núcleo"


# Awaiting someone's decision: at most one per CTR (ctr_correction_one_open).
OPEN_CORRECTION_STATUSES = (CorrectionStatus.PROPOSED, CorrectionStatus.ESCALATED)


class CTRCorrection(models.Model):
    """A correction of a received CTR (ctr/field/corrections.py), as SIGOR's adjustments and
    Trackdéchets' revisions: proposed by the transporter or the receiver with a reason,
    approved or refused by the other, decided by the Núcleo when they disagree. `original`
    and `changes` hold the values before and the ones proposed (only the fields that change);
    the CTR's history (CTREvent) keeps them too, append-only. Applied when `applied`."""

    ctr = models.ForeignKey(
        CTR, on_delete=models.PROTECT, related_name="corrections", verbose_name="CTR"
    )
    status = models.CharField(
        "situação",
        max_length=10,
        choices=CorrectionStatus.choices,
        default=CorrectionStatus.PROPOSED,
    )
    proposed_side = models.CharField(
        "proposta por (parte)", max_length=12, choices=CorrectionSide.choices
    )
    proposed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name="proposta por",
    )
    proposed_at = models.DateTimeField("proposta em", default=timezone.now)
    reason = models.TextField("motivo")
    original = models.JSONField("valores originais")
    changes = models.JSONField("valores propostos")
    # The counterpart's answer (a refusal says why).
    answered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="respondida por",
    )
    answered_at = models.DateTimeField("respondida em", null=True, blank=True)
    answer_note = models.TextField("motivo da recusa", blank=True)
    escalated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="enviada ao Núcleo por",
    )
    escalated_at = models.DateTimeField("enviada ao Núcleo em", null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="decidida pelo Núcleo por",
    )
    decided_at = models.DateTimeField("decidida em", null=True, blank=True)
    note = models.TextField("nota do Núcleo", blank=True)
    applied = models.BooleanField("aplicada ao CTR", default=False)

    objects = scoped(via="ctr")

    class Meta:
        verbose_name = "correção do CTR"
        verbose_name_plural = "correções do CTR"
        ordering = ["proposed_at", "pk"]
        constraints = [
            # One correction awaiting a decision per CTR: two proposals at once meet here.
            models.UniqueConstraint(
                fields=["ctr"],
                condition=Q(status__in=["proposed", "escalated"]),
                name="ctr_correction_one_open",
            ),
        ]

    def __str__(self) -> str:
        return f"Correção {self.pk} do {self.ctr}"

    @property
    def is_open(self) -> bool:
        return self.status in OPEN_CORRECTION_STATUSES

    @property
    def counterpart(self) -> str:
        return (
            CorrectionSide.FACILITY
            if self.proposed_side == CorrectionSide.TRANSPORTER
            else CorrectionSide.TRANSPORTER
        )
